use std::path::{Path, PathBuf};

use clap::Args;
use serde::Deserialize;

use super::{CliError, Message, Printer};
use crate::confine::{read_content, resolve_output, resolve_output_dir};
use crate::emit::write::Staged;
use crate::load::MANIFEST_FILE;
use crate::load::find_root;
use crate::model::limits::MAX_DATA_FILE_BYTES;
use crate::model::{ContextField, Paths};
use crate::path_error::{PathError, PathProblem};
use crate::problem::Kind;
use crate::schema::{file_name, render, stale_files};
use indexmap::IndexMap;

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

pub fn run(args: SchemaArgs, workspace: Option<&Path>, printer: &Printer) -> Result<(), CliError> {
    // A folder named on the command line is the caller's; the manifest's is confined to the
    // workspace.
    let (dir, root) = match args.out {
        Some(dir) => {
            // The caller's, unless it lies in the workspace: then not through a link out.
            let root = match workspace {
                Some(_) => super::workspace_root(workspace).ok(),
                None => find_root(&std::env::current_dir()?),
            };
            if let Some(root) = root.and_then(|root| root.canonicalize().ok()) {
                crate::confine::caller_path_stays(&root, &dir).map_err(CliError::Argument)?;
            }
            (dir, None)
        }
        None => default_dir(workspace, printer)?,
    };
    let declared = match root.as_deref() {
        Some(root) => declared_fields(root).map_err(CliError::ManifestUnreadable)?,
        None => IndexMap::new(),
    };
    if args.check {
        let stale = stale_files(&dir, root.as_deref(), &declared)?;
        for path in &stale {
            // A file not there is said so: "differs" read as one whose contents are wrong.
            printer.message(if path.symlink_metadata().is_err() {
                Message::MissingSchema(path)
            } else {
                Message::StaleSchema(path)
            });
        }
        return if stale.is_empty() {
            Ok(())
        } else {
            Err(CliError::Reported)
        };
    }
    // All or nothing, and in the workspace never through a link or over a folder.
    let mut staged = Staged::default();
    let mut written = Vec::new();
    for kind in Kind::ALL {
        let name = file_name(kind);
        let path = dir.join(&name);
        let real = match &root {
            Some(root) => {
                let base = dir.strip_prefix(root).unwrap_or(&dir);
                resolve_output(root, base, Path::new(&name))?
            }
            None if path.is_dir() => {
                return Err(PathError::new(path, PathProblem::IsFolder).into());
            }
            None => path.clone(),
        };
        staged
            .add_named(&real, &path, render(kind, &declared).as_bytes())
            .map_err(|error| named_by(&root, error))?;
        written.push(path);
    }
    staged.commit().map_err(|error| named_by(&root, error))?;
    for path in written {
        printer.message(Message::Wrote(&path.display()));
    }
    Ok(())
}

/// A write's error: in a folder the command line named (`--out`, no workspace root), a bad
/// argument whatever stopped it, as `build --out` says it; in the workspace's own, a path of
/// the workspace.
fn named_by(root: &Option<PathBuf>, error: PathError) -> CliError {
    match root {
        None => CliError::Argument(error),
        Some(_) => error.into(),
    }
}

/// The one setting of the manifest `schema` needs. Other keys, known or not, are for
/// `validate` to judge: a manifest with problems still finds its schemas.
#[derive(Default, Deserialize)]
struct SchemaSetting {
    #[serde(default)]
    paths: SchemaFolder,
}

#[derive(Default, Deserialize)]
struct SchemaFolder {
    schema: Option<String>,
}

/// The context fields the manifest declares, for the context schema; why not, when the
/// manifest cannot be read, is not TOML, or its `[context_fields]` do not parse. A schema
/// written without them would drop every declared field from the context schema that editors
/// check contexts with (`validate` reports where the manifest goes wrong).
fn declared_fields(root: &Path) -> Result<IndexMap<String, ContextField>, String> {
    let bytes = read_content(root, &root.join(MANIFEST_FILE), MAX_DATA_FILE_BYTES)
        .map_err(|error| format!("cannot be read ({})", error.problem))?;
    let text = String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_string())?;
    let table =
        toml::from_str::<toml::Table>(&text).map_err(|_| "is not valid TOML".to_string())?;
    match table.get("context_fields") {
        None => Ok(IndexMap::new()),
        Some(fields) => fields
            .clone()
            .try_into()
            .map_err(|_| "declares `[context_fields]` that do not parse".to_string()),
    }
}

/// The workspace's schema folder (its real path) and the workspace root, or `./schema` outside
/// a workspace (when none is named with `-C`).
fn default_dir(
    workspace: Option<&Path>,
    printer: &Printer,
) -> Result<(PathBuf, Option<PathBuf>), CliError> {
    let root = match workspace {
        Some(_) => super::workspace_root(workspace)?,
        None => {
            let cwd = std::env::current_dir()?;
            let Some(root) = find_root(&cwd) else {
                return Ok((cwd.join("schema"), None));
            };
            root
        }
    };
    let root = root.canonicalize()?;
    let written = read_content(&root, &root.join(MANIFEST_FILE), MAX_DATA_FILE_BYTES)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| toml::from_str::<SchemaSetting>(&text).ok())
        .unwrap_or_default()
        .paths
        .schema;
    let folder = written.clone().unwrap_or_else(|| Paths::default().schema);
    let dir = match resolve_output_dir(&root, Path::new(&folder)) {
        Ok(dir) => dir,
        Err(error) => {
            // A folder the manifest names is reported where it is written, by the workspace's
            // own checks (`validate` reports the same): the folder's path alone named no
            // file. The default folder is written nowhere: the path says what is wrong.
            if written.is_some()
                && let Ok(loaded) = crate::loader::load_workspace(&root)
                && loaded.diagnostics.has_errors()
            {
                printer.diagnostics(loaded.diagnostics, &loaded.workspace.sources);
                return Err(CliError::Reported);
            }
            return Err(error.into());
        }
    };
    Ok((dir, Some(root)))
}
