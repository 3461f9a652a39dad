//! JSON Schemas generated from the model types: written to `schema/` for editors, and built
//! into promptc from there to validate every data file.

use std::io;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use indexmap::IndexMap;

use crate::model::{Component, Context, ContextField, Manifest, ToolSpec, Variant};
use crate::path_error::{PathError, PathProblem};
use crate::problem::Kind;

/// The draft-07 schema of one kind of file. Draft-07 is what taplo and the YAML language
/// server understand.
pub fn schema_for(kind: Kind) -> Value {
    fn generate<T: JsonSchema>() -> Value {
        let mut schema = SchemaSettings::draft07()
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value();
        without_null(&mut schema);
        with_integer_bounds(&mut schema);
        standard_formats_only(&mut schema);
        schema
    }
    match kind {
        Kind::Manifest => generate::<Manifest>(),
        Kind::Variant => generate::<Variant>(),
        Kind::Component => generate::<Component>(),
        Kind::Tool => generate::<ToolSpec>(),
        Kind::Context => generate::<Context>(),
    }
}

/// The schema that validates files of a kind: the committed `schema/` file, which is
/// [`schema_for`]'s output as `promptc schema` writes it (a test fails when it is stale), read
/// rather than generated again: generating the five takes schemars about a millisecond of
/// every load.
pub fn validation_schema(kind: Kind) -> Value {
    let shipped = match kind {
        Kind::Manifest => include_str!("../schema/manifest.schema.json"),
        Kind::Variant => include_str!("../schema/variant.schema.json"),
        Kind::Component => include_str!("../schema/component.schema.json"),
        Kind::Tool => include_str!("../schema/tool.schema.json"),
        Kind::Context => include_str!("../schema/context.schema.json"),
    };
    serde_json::from_str(shipped).unwrap_or_else(|_| schema_for(kind))
}

/// Removes `null` from the types schemars gives optional fields (`Option<T>` becomes
/// `["T", "null"]` or `anyOf: [T, null]`). TOML has no null, so a schema that offers it makes
/// editors suggest a value no TOML file can hold and messages say "expected null or a
/// boolean"; an optional field is left out instead, in YAML too (`key: ~` is an error that
/// says so). Free-form values (`placeholders`, `extra`) accept anything and are untouched.
fn without_null(node: &mut Value) {
    match node {
        Value::Array(items) => items.iter_mut().for_each(without_null),
        Value::Object(fields) => {
            fields.values_mut().for_each(without_null);
            if fields.get("default") == Some(&Value::Null) {
                fields.shift_remove("default");
            }
            if let Some(Value::Array(types)) = fields.get_mut("type") {
                types.retain(|t| t != "null");
                if let [single] = types.as_slice() {
                    let single = single.clone();
                    fields.insert("type".into(), single);
                }
            }
            let null = serde_json::json!({ "type": "null" });
            let Some(Value::Array(choices)) = fields.get_mut("anyOf") else {
                return;
            };
            if !choices.contains(&null) {
                return;
            }
            choices.retain(|choice| *choice != null);
            if let [single] = choices.as_slice() {
                let single = single.clone();
                fields.shift_remove("anyOf");
                if fields.is_empty() {
                    *node = single;
                } else {
                    // Draft-07 ignores the siblings of a `$ref`: keep the description beside
                    // an `allOf` of the one remaining choice.
                    fields.insert("allOf".into(), Value::Array(vec![single]));
                }
            }
        }
        _ => {}
    }
}

/// The `format` values draft-07 defines: schemars' own (`uint32`, `double`, …) make strict
/// validators such as ajv reject the whole schema. Their meaning is kept as bounds (see
/// [`with_integer_bounds`]); the names go.
pub const STANDARD_FORMATS: [&str; 17] = [
    "date-time",
    "date",
    "time",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

fn standard_formats_only(node: &mut Value) {
    match node {
        Value::Array(items) => items.iter_mut().for_each(standard_formats_only),
        Value::Object(fields) => {
            fields.values_mut().for_each(standard_formats_only);
            let standard = fields
                .get("format")
                .and_then(Value::as_str)
                .is_none_or(|format| STANDARD_FORMATS.contains(&format));
            if !standard {
                // An unsigned integer's lower bound is what its format said.
                if fields
                    .get("format")
                    .and_then(Value::as_str)
                    .is_some_and(|format| format.starts_with("uint"))
                {
                    fields.entry("minimum").or_insert_with(|| Value::from(0));
                }
                fields.shift_remove("format");
            }
        }
        _ => {}
    }
}

/// Gives small unsigned integers (`format: uint32`, which validators ignore) their maximum,
/// so a value that does not fit is a located schema error rather than a failed conversion.
fn with_integer_bounds(node: &mut Value) {
    match node {
        Value::Array(items) => items.iter_mut().for_each(with_integer_bounds),
        Value::Object(fields) => {
            fields.values_mut().for_each(with_integer_bounds);
            let maximum = match fields.get("format").and_then(Value::as_str) {
                Some("uint8") => u64::from(u8::MAX),
                Some("uint16") => u64::from(u16::MAX),
                Some("uint32") => u64::from(u32::MAX),
                _ => return,
            };
            fields
                .entry("maximum")
                .or_insert_with(|| Value::from(maximum));
        }
        _ => {}
    }
}

pub fn file_name(kind: Kind) -> String {
    format!("{}.schema.json", kind.name())
}

/// The exact bytes `promptc schema` writes for a kind; the context schema lists the
/// workspace's declared `extra` keys, so editors complete them.
pub fn render(kind: Kind, declared: &IndexMap<String, ContextField>) -> String {
    let mut schema = schema_for(kind);
    if kind == Kind::Context && !declared.is_empty() {
        declare_extra(&mut schema, declared);
    }
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// `extra` as a table of the declared keys, each with its type, default and description.
fn declare_extra(schema: &mut Value, declared: &IndexMap<String, ContextField>) {
    let Some(extra) = schema.pointer_mut("/properties/extra") else {
        return;
    };
    let properties: serde_json::Map<String, Value> = declared
        .iter()
        .map(|(key, field)| {
            let mut property = serde_json::json!({
                "type": field.kind.name(),
                "default": field.default_value(),
            });
            if let Some(description) = &field.description {
                property["description"] = Value::from(description.as_str());
            }
            (key.clone(), property)
        })
        .collect();
    *extra = serde_json::json!({
        "description": "The workspace's own fields, as `[context_fields]` in promptc.toml declares them.",
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
}

/// Schema files in `dir` that are missing or differ from the generated ones. With a workspace
/// `root`, the files are workspace content and read only from inside it.
pub fn stale_files(
    dir: &Path,
    root: Option<&Path>,
    declared: &IndexMap<String, ContextField>,
) -> Result<Vec<PathBuf>, PathError> {
    let mut stale = Vec::new();
    for kind in Kind::ALL {
        let path = dir.join(file_name(kind));
        match is_current(&path, root, kind, declared) {
            Ok(true) => {}
            Ok(false) => stale.push(path),
            Err(error) if is_missing(&error) => stale.push(path),
            Err(error) => return Err(error),
        }
    }
    Ok(stale)
}

/// Whether the schema file of `kind` at `path` holds what `promptc schema` writes; an error
/// where it cannot be read (missing, a link out of `root`, a special file, too large).
pub fn is_current(
    path: &Path,
    root: Option<&Path>,
    kind: Kind,
    declared: &IndexMap<String, ContextField>,
) -> Result<bool, PathError> {
    let limit = crate::model::limits::MAX_DATA_FILE_BYTES;
    let bytes = match root {
        Some(root) => crate::confine::read_content(root, path, limit),
        None => crate::confine::read_named(path, limit),
    }?;
    Ok(bytes == render(kind, declared).as_bytes())
}

/// Whether `error` says that the file is not there.
pub fn is_missing(error: &PathError) -> bool {
    matches!(&error.problem, PathProblem::Io(error) if error.kind() == io::ErrorKind::NotFound)
}

/// The context's schema (as [`validation_schema`] reads it), parsed once per process.
pub fn context_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| validation_schema(Kind::Context))
}

/// `node` with a reference to a definition (`$ref`, or an `allOf` of one) followed, within
/// `root`'s definitions.
pub fn resolved<'s>(root: &'s Value, node: &'s Value) -> &'s Value {
    let mut node = node;
    // A definition refers to another at most a few times; the bound keeps a schema that
    // refers to itself from looping.
    for _ in 0..8 {
        let reference = node.get("$ref").and_then(Value::as_str).or_else(|| {
            let all = node.get("allOf")?.as_array()?;
            match all.as_slice() {
                [only] => only.get("$ref")?.as_str(),
                _ => None,
            }
        });
        let Some(target) = reference
            .and_then(|reference| reference.strip_prefix("#/definitions/"))
            .and_then(|name| root.get("definitions")?.get(name))
        else {
            return node;
        };
        node = target;
    }
    node
}

/// The fields of the table a path into the context goes into (`browser` for
/// `browser.nope`), when no field is `near` it: what an unknown field's help lists.
pub fn fields_if_none_near(path: &str, near: &Option<String>) -> Vec<String> {
    if near.is_some() {
        return Vec::new();
    }
    path.rsplit_once('.')
        .and_then(|(parent, _)| context_fields_at(parent))
        .unwrap_or_default()
}

/// The fields of the table a dotted path names in a context (`browser`: `enabled`,
/// `viewport`; a list's items stand for the list), when it is a table with fields of its own.
pub fn context_fields_at(path: &str) -> Option<Vec<String>> {
    let root = context_schema();
    let mut node = resolved(root, context_schema_at(path).ok()?);
    while let Some(items) = node.get("items") {
        node = resolved(root, items);
    }
    let fields: Vec<String> = node
        .get("properties")?
        .as_object()?
        .keys()
        .cloned()
        .collect();
    (!fields.is_empty()).then_some(fields)
}

/// The schema of what a dotted path names in a context (`model.id`; a list's items stand
/// for the list, so `mcp_servers.name` is each server's name). The first segment that names
/// nothing where it is written, with the near name, when the path leads nowhere; a table of
/// the user's own keys (`extra`) takes any key below it.
pub fn context_schema_at(path: &str) -> Result<&'static Value, (String, Option<String>)> {
    let root = context_schema();
    let mut node = root;
    let mut walked = String::new();
    for segment in path.split('.') {
        node = resolved(root, node);
        while let Some(items) = node.get("items") {
            node = resolved(root, items);
        }
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(segment);
        match node.get("properties").and_then(Value::as_object) {
            Some(properties) if properties.contains_key(segment) => node = &properties[segment],
            Some(properties) if node.get("additionalProperties") != Some(&Value::Bool(true)) => {
                let parent = walked.rsplit_once('.').map(|(parent, _)| parent);
                let suggestion = crate::namespace::closest(segment, properties.keys())
                    .map(|near| parent.map_or(near.clone(), |parent| format!("{parent}.{near}")));
                return Err((walked, suggestion));
            }
            _ => match node.get("additionalProperties") {
                Some(Value::Object(_)) => {
                    node = &node["additionalProperties"];
                }
                Some(Value::Bool(true)) => return Ok(&EMPTY_SCHEMA),
                // A plain value (text, a number) has nothing below it; a schema of several
                // shapes (`rules`: a text or a list) is not followed.
                None if node.get("type").is_none_or(|kind| kind == "object") => {
                    return Ok(&EMPTY_SCHEMA);
                }
                _ => {
                    let parent = walked
                        .rsplit_once('.')
                        .map(|(parent, _)| parent.to_string());
                    return Err((walked, parent));
                }
            },
        }
    }
    Ok(resolved(root, node))
}

/// The schema of a value anything may be.
static EMPTY_SCHEMA: Value = Value::Null;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_validated_against_the_schemas_generated_from_the_types() {
        for kind in Kind::ALL {
            assert!(
                validation_schema(kind) == schema_for(kind),
                "schema/{} is stale: run `cargo run -- schema`",
                file_name(kind)
            );
        }
    }
}
