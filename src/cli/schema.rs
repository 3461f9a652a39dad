use std::path::PathBuf;

use clap::Args;

use super::{EXIT_OK, EXIT_PROBLEMS, UsageError};
use crate::emit::write::write_atomic;
use crate::load::find_root;
use crate::model::Manifest;
use crate::problem::Kind;
use crate::schema::{file_name, render, stale_files};

#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// Exit 1, writing nothing, when the schema files are missing or out of date.
    #[arg(long)]
    pub check: bool,
    /// Folder of the schema files (default: the workspace's `paths.schema`, or ./schema
    /// outside a workspace).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: SchemaArgs) -> Result<u8, UsageError> {
    let dir = match args.out {
        Some(dir) => dir,
        None => default_dir()?,
    };
    if args.check {
        let stale = stale_files(&dir)?;
        for path in &stale {
            eprintln!(
                "stale: {} differs from the generated schema (run `promptc schema`)",
                path.display()
            );
        }
        return Ok(if stale.is_empty() {
            EXIT_OK
        } else {
            EXIT_PROBLEMS
        });
    }
    for kind in Kind::ALL {
        let path = dir.join(file_name(kind));
        write_atomic(&path, render(kind).as_bytes())?;
        eprintln!("wrote {}", path.display());
    }
    Ok(EXIT_OK)
}

/// The workspace's schema folder. Only `paths.schema` is read from the manifest, so a
/// manifest with other problems still finds its schemas.
fn default_dir() -> Result<PathBuf, UsageError> {
    let cwd = std::env::current_dir()?;
    let Some(root) = find_root(&cwd) else {
        return Ok(cwd.join("schema"));
    };
    let manifest = std::fs::read_to_string(root.join(crate::load::MANIFEST_FILE))
        .ok()
        .and_then(|text| toml::from_str::<Manifest>(&text).ok())
        .unwrap_or_default();
    Ok(root.join(manifest.paths.schema))
}
