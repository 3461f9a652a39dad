use std::path::Path;

use clap::Args;

use super::{CliError, Printer, load_valid};
use crate::compile::Selection;

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Print the variant after inheritance and overrides are applied (what `show` always
    /// prints; kept for scripts that pass it).
    #[arg(long)]
    pub effective: bool,
    /// The variant: its id, or `family@version`.
    pub variant: String,
    /// `toml`, `yaml` or `json` (default: the workspace's own, `yaml` where its variants,
    /// components and tools are all YAML, else `toml`).
    #[arg(long, value_enum)]
    pub format: Option<super::DataFormat>,
}

pub fn run(
    args: ShowArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    let compiler = crate::compile::Compiler::new(workspace);
    let request =
        crate::compile::Request::new(Selection::variant(args.variant), Default::default());
    let effective = match compiler.select(&request.selection, &request.context) {
        Ok((effective, _)) => effective,
        Err(error) => return Err(super::compile_failed(workspace, error, printer)),
    };
    let mut value = serde_json::to_value(&effective.variant)
        .map_err(|error| CliError::Unprintable(error.to_string()))?;
    // After inheritance a label set to `false` is not there: it is how a child drops one.
    if let Some(labels) = value
        .get_mut("labels")
        .and_then(|labels| labels.as_object_mut())
    {
        labels.retain(|_, version| version != &serde_json::Value::Bool(false));
        if labels.is_empty()
            && let Some(fields) = value.as_object_mut()
        {
            fields.remove("labels");
        }
    }
    let text = match super::DataFormat::or_workspace(args.format, workspace) {
        super::DataFormat::Json => return printer.result(&crate::report::json_document(&value)),
        super::DataFormat::Toml => toml_text(value)?,
        super::DataFormat::Yaml => {
            drop_unset(&mut value);
            crate::report::yaml::yaml_document(&value)
        }
    };
    printer.result(&format!(
        "# variant `{}` after inheritance ({})\n\n{text}",
        effective.id(),
        effective.chain.join(" <- ")
    ))
}

/// A variant as TOML: its unset optional fields are left out (see [`drop_unset`]); a value
/// TOML has no way to write (a null the user wrote, an integer above TOML's largest, both
/// possible in YAML or JSON) is named, with `--format json` to ask for.
pub fn toml_text(mut value: serde_json::Value) -> Result<String, CliError> {
    drop_unset(&mut value);
    toml_written(&value)
}

/// `value` as TOML, its nulls kept to be refused by name (see [`toml_text`]).
pub fn toml_written(value: &serde_json::Value) -> Result<String, CliError> {
    if let Some((pointer, what)) = not_toml(value, String::new(), Nesting::default()) {
        return Err(CliError::NotToml {
            place: pointer.trim_start_matches('/').replace('/', "."),
            what,
        });
    }
    toml::to_string(value).map_err(|error| CliError::Unprintable(error.to_string()))
}

/// Where a value is written in TOML: under how many table keys (a header's parts), and inside
/// how many arrays and inline tables, which TOML's reader counts against a nesting limit of
/// its own (80, as promptc's header keys).
#[derive(Clone, Copy, Default)]
struct Nesting {
    keys: usize,
    /// Arrays and inline tables around the value; `None` outside any, where a table is written
    /// under a header and an array of tables as `[[…]]` headers.
    inline: Option<usize>,
}

impl Nesting {
    /// The nesting of an item inside an inline array or table opened here.
    fn opened(self) -> Self {
        Self {
            inline: Some(self.inline.map_or(1, |depth| depth + 1)),
            ..self
        }
    }
}

/// The first value TOML cannot write so that promptc reads it back, by its pointer, and what
/// it is: a null, an integer past 64 bits, a table under more keys than a TOML key of promptc's
/// may have parts (written under a header promptc refuses to read), or a value nested inside
/// more arrays and inline tables than TOML's reader reads (a list of lists 120 deep, which a
/// JSON context may hold).
fn not_toml(
    value: &serde_json::Value,
    pointer: String,
    at: Nesting,
) -> Option<(String, &'static str)> {
    let too_deep = |inner: Nesting| {
        inner
            .inline
            .is_some_and(|depth| depth > crate::load::MAX_KEY_PARTS)
    };
    const TOO_DEEP: &str =
        "a list or inline table inside 80 others, more than promptc reads back from TOML";
    match value {
        serde_json::Value::Null => Some((pointer, "null")),
        serde_json::Value::Number(number) if number.is_u64() && number.as_i64().is_none() => {
            Some((pointer, "an integer above 9223372036854775807"))
        }
        serde_json::Value::Object(_)
            if at.inline.is_none() && at.keys > crate::load::MAX_KEY_PARTS =>
        {
            Some((
                pointer,
                "a table nested more than 80 deep, under a key longer than promptc reads back",
            ))
        }
        serde_json::Value::Array(items) => {
            // An array of tables outside any inline value is written as `[[…]]` headers;
            // any other array is written inline, as are the tables inside it.
            let of_tables = at.inline.is_none()
                && !items.is_empty()
                && items.iter().all(serde_json::Value::is_object);
            let inner = if of_tables { at } else { at.opened() };
            if too_deep(inner) {
                return Some((pointer, TOO_DEEP));
            }
            items
                .iter()
                .enumerate()
                .find_map(|(index, item)| not_toml(item, format!("{pointer}/{index}"), inner))
        }
        serde_json::Value::Object(map) => {
            let inner = match at.inline {
                Some(_) => at.opened(),
                None => Nesting {
                    keys: at.keys + 1,
                    ..at
                },
            };
            if too_deep(inner) {
                return Some((pointer, TOO_DEEP));
            }
            map.iter().find_map(|(key, item)| {
                not_toml(item, crate::pointer::child_pointer(&pointer, key), inner)
            })
        }
        _ => None,
    }
}

/// The unset optional fields of a variant (null in its JSON) are left out; a null the user
/// wrote as a value (a placeholder or a `model.extra` setting set to YAML `~`) is kept: YAML
/// and JSON write it, TOML refuses it by name.
fn drop_unset(value: &mut serde_json::Value) {
    drop_unset_at(value, "");
}

/// The tables of values the user writes, whose nulls are their own.
const USER_VALUES: [&str; 2] = ["/placeholders", "/model/extra"];

fn drop_unset_at(value: &mut serde_json::Value, pointer: &str) {
    if USER_VALUES.contains(&pointer) {
        return;
    }
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            for (key, item) in map.iter_mut() {
                drop_unset_at(item, &crate::pointer::child_pointer(pointer, key));
            }
        }
        // A list's items are no fields: nulls in it are the user's.
        serde_json::Value::Array(_) => {}
        _ => {}
    }
}
