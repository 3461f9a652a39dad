use std::path::PathBuf;

use clap::Args;

use super::build::{report_failures, source_date_epoch};
use super::{EXIT_OK, EXIT_PROBLEMS, Output, UsageError, emit, load_valid, path_failed};
use crate::emit::matrix::{self, Mismatch};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The workspace (default: the nearest folder with promptc.toml).
    pub dir: Option<PathBuf>,
}

pub fn run(args: CheckArgs, output: &Output) -> Result<u8, UsageError> {
    let workspace = match load_valid(args.dir.as_deref(), output)? {
        Ok(workspace) => workspace,
        Err(code) => return Ok(code),
    };
    let run = matrix::compile_all(
        &crate::compile::Compiler::new(&workspace),
        source_date_epoch()?,
    );
    let clean = run.is_clean();
    let outputs = run.outputs;
    output.diagnostics(run.over_budget, &workspace.sources);
    let any_failed = report_failures(&workspace, run.failed, output)? || !clean;
    let mismatches = match matrix::check(&workspace, &outputs) {
        Ok(mismatches) => mismatches,
        Err(error) => return path_failed(error),
    };
    for mismatch in &mismatches {
        match mismatch {
            Mismatch::Stale { path, diff } => {
                eprintln!("stale: {path}");
                emit(diff)?;
            }
            Mismatch::Missing { path } => eprintln!("missing: {path}"),
            Mismatch::Unexpected { path, owned: true } => {
                eprintln!("unexpected: {path} (no longer in the build matrix)");
            }
            Mismatch::Stray { path } => {
                eprintln!(
                    "stray: {path} is a temporary file left by an interrupted build: `promptc build --all` removes it"
                );
            }
            Mismatch::Unexpected { path, owned: false } => {
                eprintln!(
                    "unexpected: {path} is not an output of the build matrix, and promptc did not write it: move or delete it"
                );
            }
        }
    }
    if mismatches.is_empty() && !any_failed {
        eprintln!("ok: {} outputs are up to date", outputs.len());
        return Ok(EXIT_OK);
    }
    if !mismatches.is_empty() {
        eprintln!(
            "error: {} of the committed outputs differ; run `promptc build --all`",
            mismatches.len()
        );
    }
    Ok(EXIT_PROBLEMS)
}
