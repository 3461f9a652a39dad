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
    if let Some((pointer, what)) = not_toml(value, String::new(), 0) {
        return Err(CliError::NotToml {
            place: pointer.trim_start_matches('/').replace('/', "."),
            what,
        });
    }
    toml::to_string(value).map_err(|error| CliError::Unprintable(error.to_string()))
}

/// The first value TOML cannot write, by its pointer, and what it is. `keys` counts the
/// table keys on the way to `value` (a list's items add none): a table under more keys than
/// a TOML key of promptc's may have parts is written under a header promptc refuses to read.
fn not_toml(
    value: &serde_json::Value,
    pointer: String,
    keys: usize,
) -> Option<(String, &'static str)> {
    match value {
        serde_json::Value::Null => Some((pointer, "null")),
        serde_json::Value::Number(number) if number.is_u64() && number.as_i64().is_none() => {
            Some((pointer, "an integer above 9223372036854775807"))
        }
        serde_json::Value::Object(_) if keys > crate::load::MAX_KEY_PARTS => Some((
            pointer,
            "a table nested more than 80 deep, under a key longer than promptc reads back",
        )),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(index, item)| not_toml(item, format!("{pointer}/{index}"), keys)),
        serde_json::Value::Object(map) => map.iter().find_map(|(key, item)| {
            not_toml(item, crate::pointer::child_pointer(&pointer, key), keys + 1)
        }),
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
