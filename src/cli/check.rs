use std::path::PathBuf;

use clap::Args;

use super::{CliError, Message, Printer, load_valid, report_failures, source_date_epoch};
use crate::emit::matrix::{self, Mismatch};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The workspace (default: the nearest folder with promptc.toml).
    pub dir: Option<PathBuf>,
}

pub fn run(args: CheckArgs, printer: &Printer) -> Result<(), CliError> {
    let workspace = load_valid(args.dir.as_deref(), printer)?;
    let run = matrix::compile_all(
        &crate::compile::Compiler::new(&workspace),
        source_date_epoch()?,
    );
    let clean = run.is_clean();
    let outputs = run.outputs;
    printer.diagnostics(run.over_budget, &workspace.sources);
    let any_failed = report_failures(&workspace, run.failed, printer) || !clean;
    let mismatches = matrix::check(&workspace, &outputs)?;
    for mismatch in &mismatches {
        printer.message(Message::Mismatch(mismatch));
        if let Mismatch::Stale { diff, .. } = mismatch {
            printer.result(diff)?;
        }
    }
    if mismatches.is_empty() && !any_failed {
        let files: usize = outputs
            .iter()
            .map(|(entry, compiled)| matrix::files(entry, compiled).len())
            .sum();
        printer.message(Message::UpToDate(files));
        return Ok(());
    }
    if !mismatches.is_empty() {
        let count =
            |kind: fn(&matrix::Mismatch) -> bool| mismatches.iter().filter(|m| kind(m)).count();
        printer.message(Message::OutputsDiffer {
            stale: count(|m| matches!(m, matrix::Mismatch::Stale { .. })),
            missing: count(|m| matches!(m, matrix::Mismatch::Missing { .. })),
            other: count(|m| {
                matches!(
                    m,
                    matrix::Mismatch::Unexpected { .. } | matrix::Mismatch::Stray { .. }
                )
            }),
        });
    }
    Err(CliError::Reported)
}
