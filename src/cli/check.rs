use std::path::Path;

use clap::Args;

use super::{
    CliError, Message, Printer, kept_compiler, load_valid, report_failures, source_date_epoch,
};
use crate::emit::matrix::{self, Mismatch};
use crate::workspace::Workspace;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// `text` (a line per file that differs, with its diff) or `json` (on stdout).
    #[arg(long, value_enum, default_value_t = super::OutputFormat::Text)]
    pub format: super::OutputFormat,
}

pub fn run(
    args: CheckArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace: &Workspace = load_valid(workspace_dir, printer)?;
    // No build renames outputs while they are compared.
    let _lock = super::outputs_lock::lock_outputs(&workspace.root, false, printer);
    // Each output is compared as it compiles, then dropped.
    let mut checker = matrix::MatrixChecker::new(workspace);
    let entries = matrix::entries(workspace);
    if entries.is_empty() {
        printer.message(Message::CheckedNothing(super::build::empty_matrix(
            workspace,
        )));
    }
    let mut progress = super::progress::Progress::new(entries.len(), printer.is_quiet());
    let run = matrix::compile_each(
        kept_compiler(workspace),
        entries,
        source_date_epoch(printer),
        |entry, compiled| {
            progress.step(&entry.path);
            checker.add(&entry, compiled)
        },
    );
    drop(progress);
    let run = run?;
    let clean = run.is_clean();
    for (entry, _) in &run.failed {
        checker.not_compiled(entry);
    }
    let not_compiled = run.failed.len();
    printer.diagnostics(run.over_budget, &workspace.sources);
    let any_failed = report_failures(workspace, run.failed, printer) || !clean;
    let files = checker.files();
    let mismatches = checker.finish()?;
    if args.format == super::OutputFormat::Json {
        let files: Vec<serde_json::Value> = mismatches.iter().map(as_json).collect();
        printer.result(&crate::report::json_document(&serde_json::json!({
            "up_to_date": mismatches.is_empty() && !any_failed,
            "compiled": !any_failed,
            "files": files,
            // What kept entries from compiling, as `validate --format json` gives them.
            "diagnostics": printer.json_records(),
        })))?;
        return if mismatches.is_empty() && !any_failed {
            Ok(())
        } else {
            Err(CliError::Reported)
        };
    }
    // A file of the output folder that should not be there is a line each, up to a bound:
    // a pull request's 300,000 files there printed as many lines.
    let mut unexpected = 0usize;
    for mismatch in &mismatches {
        if matches!(
            mismatch,
            Mismatch::Unexpected { .. } | Mismatch::Stray { .. }
        ) {
            unexpected += 1;
            if unexpected > MAX_UNEXPECTED_NAMED {
                continue;
            }
        }
        printer.message(Message::Mismatch(mismatch));
        if let Mismatch::Stale { diff, .. } = mismatch {
            printer.report(diff)?;
        }
    }
    if unexpected > MAX_UNEXPECTED_NAMED {
        printer.message(Message::MoreUnexpected {
            more: unexpected - MAX_UNEXPECTED_NAMED,
            named: MAX_UNEXPECTED_NAMED,
        });
    }
    if mismatches.is_empty() && !any_failed {
        printer.message(Message::UpToDate(files));
        return Ok(());
    }
    if !mismatches.is_empty() {
        let count =
            |kind: fn(&matrix::Mismatch) -> bool| mismatches.iter().filter(|m| kind(m)).count();
        printer.message(Message::OutputsDiffer {
            stale: count(|m| matches!(m, matrix::Mismatch::Stale { .. })),
            missing: count(|m| matches!(m, matrix::Mismatch::Missing { .. })),
            unexpected: count(|m| matches!(m, matrix::Mismatch::Unexpected { owned: true, .. })),
            stray: count(|m| matches!(m, matrix::Mismatch::Stray { .. })),
            foreign: count(|m| matches!(m, matrix::Mismatch::Unexpected { owned: false, .. })),
            not_compiled,
        });
    }
    Err(CliError::Reported)
}

/// The most files that should not be in the output folder (unexpected or stray) that `check`
/// names one by one in its text; the closing line counts them all, and the JSON lists them.
const MAX_UNEXPECTED_NAMED: usize = 100;

/// One file that differs, for `check --format json`.
fn as_json(mismatch: &Mismatch) -> serde_json::Value {
    match mismatch {
        Mismatch::Stale { path, diff } => {
            serde_json::json!({ "status": "stale", "path": path, "diff": diff })
        }
        Mismatch::Missing { path } => serde_json::json!({ "status": "missing", "path": path }),
        Mismatch::Unexpected { path, owned } => {
            serde_json::json!({ "status": "unexpected", "path": path, "owned": owned })
        }
        Mismatch::Stray { path } => serde_json::json!({ "status": "stray", "path": path }),
    }
}
