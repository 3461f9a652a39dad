use std::path::PathBuf;

use clap::Args;

use super::build::source_date_epoch;
use super::{DiagnosticFormat, EXIT_OK, EXIT_PROBLEMS, Output, UsageError, emit, workspace_root};
use crate::emit::matrix;
use crate::report;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The workspace (default: the nearest folder with promptc.toml).
    pub dir: Option<PathBuf>,
    /// `human` (rustc-style) or `json`.
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Human)]
    pub format: DiagnosticFormat,
}

pub fn run(args: ValidateArgs, output: &Output) -> Result<u8, UsageError> {
    let root = workspace_root(args.dir.as_deref())?;
    let mut loaded = crate::loader::load_workspace(&root)?;
    // A workspace whose files are sound is compiled too: every matrix entry must render,
    // stay within its budget, and keep volatile values out of its cacheable prefix.
    if !loaded.diagnostics.has_errors() {
        let found = matrix::diagnostics(&loaded.workspace, source_date_epoch()?);
        loaded.diagnostics.extend(found);
    }
    let has_errors = loaded.diagnostics.has_errors();
    match args.format {
        DiagnosticFormat::Json => {
            let sorted = loaded.diagnostics.sorted();
            emit(&report::json(&sorted, &loaded.workspace.sources))?;
        }
        DiagnosticFormat::Human => {
            let clean = loaded.diagnostics.is_empty();
            output.diagnostics(loaded.diagnostics, &loaded.workspace.sources);
            if clean {
                eprintln!("ok: {} is valid", root.display());
            }
        }
    }
    Ok(if has_errors { EXIT_PROBLEMS } else { EXIT_OK })
}
