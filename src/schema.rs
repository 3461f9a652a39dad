//! JSON Schemas generated from the model types: written to `schema/` for editors and used
//! in memory to validate every data file.

use std::io;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::model::{Component, Context, Manifest, ToolSpec, Variant};
use crate::problem::Kind;

/// The draft-07 schema of one kind of file. Draft-07 is what taplo and the YAML language
/// server understand.
pub fn schema_for(kind: Kind) -> Value {
    fn generate<T: JsonSchema>() -> Value {
        SchemaSettings::draft07()
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value()
    }
    match kind {
        Kind::Manifest => generate::<Manifest>(),
        Kind::Variant => generate::<Variant>(),
        Kind::Component => generate::<Component>(),
        Kind::Tool => generate::<ToolSpec>(),
        Kind::Context => generate::<Context>(),
    }
}

pub fn file_name(kind: Kind) -> String {
    format!("{}.schema.json", kind.name())
}

/// The exact bytes `promptc schema` writes for a kind.
pub fn render(kind: Kind) -> String {
    let mut text = serde_json::to_string_pretty(&schema_for(kind)).unwrap_or_default();
    text.push('\n');
    text
}

/// Schema files in `dir` that are missing or differ from the generated ones.
pub fn stale_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut stale = Vec::new();
    for kind in Kind::ALL {
        let path = dir.join(file_name(kind));
        match std::fs::read_to_string(&path) {
            Ok(text) if text == render(kind) => {}
            Ok(_) => stale.push(path),
            Err(error) if error.kind() == io::ErrorKind::NotFound => stale.push(path),
            Err(error) => return Err(error),
        }
    }
    Ok(stale)
}
