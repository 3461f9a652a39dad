use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, DiagnosticFormat, Message, Printer, source_date_epoch, workspace_root};
use crate::emit::matrix;
use crate::report;
use crate::report::diagnostics::DiagnosticRecord;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// `text` (rustc-style), `json`, or `github` (annotations in a GitHub Actions run).
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Text)]
    pub format: DiagnosticFormat,
}

pub fn run(
    args: ValidateArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let root = workspace_root(workspace_dir)?;
    let mut loaded = crate::loader::load_workspace(&root)?;
    // A workspace whose files are sound is compiled too: every matrix entry must render,
    // stay within its budget, and keep volatile values out of its cacheable prefix.
    if !loaded.diagnostics.has_errors() {
        let found = matrix::diagnostics(&loaded.workspace, source_date_epoch(printer));
        loaded.diagnostics.extend(found);
    } else {
        // The fields templates read are checked from their text alone, which the other errors
        // leave as sound: said with them, rather than one run after they are fixed.
        let found = crate::validate::context_paths(&loaded.workspace);
        loaded.diagnostics.extend(found);
    }
    let has_errors = loaded.diagnostics.has_errors();
    // The context schema holds the manifest's `[context_fields]`: with the manifest in error,
    // what they are is not known, and a schema would look stale that is not (`promptc
    // schema` refuses to write one then).
    let manifest = loaded
        .workspace
        .sources
        .find(Path::new(crate::load::MANIFEST_FILE));
    let manifest_in_error = manifest
        .is_some_and(|manifest| loaded.diagnostics.errors_by_file().contains_key(&manifest));
    let stale = if manifest_in_error {
        Vec::new()
    } else {
        stale_schemas(&loaded.workspace)
    };
    // What a program reads (JSON, annotations) says the schemas are stale too, as a warning
    // of each file, where people read it as a message.
    let stale_records: Vec<DiagnosticRecord> = stale
        .iter()
        .map(|path| {
            DiagnosticRecord::about_file(
                "stale-schema",
                path.to_string_lossy().replace('\\', "/"),
                Message::StaleSchema(path).to_string(),
            )
        })
        .collect();
    match args.format {
        DiagnosticFormat::Json => {
            let sorted = loaded.diagnostics.sorted();
            printer.result(&report::diagnostics::json_with(
                &sorted,
                &loaded.workspace.sources,
                &stale_records,
            ))?;
        }
        DiagnosticFormat::Github => {
            let sorted = loaded.diagnostics.sorted();
            let base = annotation_base(&root);
            printer.result(&report::github(
                &sorted,
                &loaded.workspace.sources,
                &base,
                &stale_records,
            ))?;
        }
        DiagnosticFormat::Text => {
            for path in &stale {
                printer.message(Message::StaleSchema(path));
            }
            let clean = loaded.diagnostics.is_empty();
            printer.diagnostics(loaded.diagnostics, &loaded.workspace.sources);
            if clean {
                printer.message(Message::Valid(&root));
            }
        }
    }
    if has_errors {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}

/// The workspace's schema files that differ from what `promptc schema` writes now (after a
/// change of `[context_fields]`, or a new promptc): said, since editors check files against
/// them. A folder without them is a workspace that does not use them, and is not told; one
/// that is there but cannot be read as a schema (a FIFO, a link out of the workspace) is not
/// what `promptc schema` writes either, and is told, where it passed for current.
fn stale_schemas(workspace: &crate::workspace::Workspace) -> Vec<PathBuf> {
    let settings = workspace.settings();
    let dir = workspace.root.join(&settings.paths.schema);
    crate::problem::Kind::ALL
        .into_iter()
        .filter_map(|kind| {
            let path = dir.join(crate::schema::file_name(kind));
            let stale = match crate::schema::is_current(
                &path,
                Some(&workspace.root),
                kind,
                &settings.context_fields,
            ) {
                Ok(current) => !current,
                Err(error) => !crate::schema::is_missing(&error),
            };
            stale.then(|| {
                path.strip_prefix(&workspace.root)
                    .map_or_else(|_| path.clone(), Path::to_path_buf)
            })
        })
        .collect()
}

/// The workspace's folder as GitHub resolves an annotation's `file`: relative to the
/// repository's root (`GITHUB_WORKSPACE`, where the checkout is; else the nearest folder at or
/// above the workspace holding `.git`), whatever folder the step runs in: an annotation on
/// `components/role.md` run from `prompts/` lands on no file of the pull request. Outside a
/// repository, relative to the current folder.
fn annotation_base(root: &Path) -> PathBuf {
    let Ok(real) = root.canonicalize() else {
        return relative_to_current_dir(root);
    };
    let checkout = std::env::var_os("GITHUB_WORKSPACE")
        .and_then(|folder| Path::new(&folder).canonicalize().ok())
        .filter(|folder| real.starts_with(folder));
    let repository = checkout.or_else(|| {
        real.ancestors()
            .find(|folder| folder.join(".git").symlink_metadata().is_ok())
            .map(Path::to_path_buf)
    });
    match repository {
        Some(repository) => real
            .strip_prefix(&repository)
            .map_or_else(|_| relative_to_current_dir(root), Path::to_path_buf),
        None => relative_to_current_dir(root),
    }
}

/// The workspace's folder as seen from the current one; the folder itself when it is
/// elsewhere.
fn relative_to_current_dir(root: &Path) -> PathBuf {
    let Ok(cwd) = std::env::current_dir().and_then(|cwd| cwd.canonicalize()) else {
        return root.to_path_buf();
    };
    match root.canonicalize() {
        Ok(real) => real
            .strip_prefix(&cwd)
            .map(Path::to_path_buf)
            .unwrap_or(real),
        Err(_) => root.to_path_buf(),
    }
}
