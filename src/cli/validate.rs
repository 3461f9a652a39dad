use std::path::PathBuf;

use clap::Args;

use super::{CliError, DiagnosticFormat, Message, Printer, source_date_epoch, workspace_root};
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

pub fn run(args: ValidateArgs, printer: &Printer) -> Result<(), CliError> {
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
            printer.result(&report::json(&sorted, &loaded.workspace.sources))?;
        }
        DiagnosticFormat::Human => {
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
