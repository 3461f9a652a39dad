//! JSON Schemas generated from the model types: written to `schema/` for editors and used
//! in memory to validate every data file.

use std::io;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::model::{Component, Context, Manifest, ToolSpec, Variant};
use crate::path_error::{PathError, PathProblem};
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

/// Schema files in `dir` that are missing or differ from the generated ones. With a workspace
/// `root`, the files are workspace content and read only from inside it.
pub fn stale_files(dir: &Path, root: Option<&Path>) -> Result<Vec<PathBuf>, PathError> {
    let mut stale = Vec::new();
    for kind in Kind::ALL {
        let path = dir.join(file_name(kind));
        let limit = crate::confine::MAX_DATA_FILE_BYTES;
        let read = match root {
            Some(root) => crate::confine::read_content(root, &path, limit),
            None => crate::confine::read_named(&path, limit),
        };
        match read {
            Ok(bytes) if bytes == render(kind).as_bytes() => {}
            Ok(_) => stale.push(path),
            Err(PathError {
                problem: PathProblem::Io(error),
                ..
            }) if error.kind() == io::ErrorKind::NotFound => stale.push(path),
            Err(error) => return Err(error),
        }
    }
    Ok(stale)
}
