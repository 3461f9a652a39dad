use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, Message, Printer, load_valid, report_failures, source_date_epoch};
use crate::emit::matrix;
use crate::init::{InitError, init};

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The folder of the new workspace (created if missing; default: the current one).
    pub dir: Option<PathBuf>,
}

/// Writes the library, then builds its outputs, so that `check` passes right away.
pub fn run(args: InitArgs, workspace: Option<&Path>, printer: &Printer) -> Result<(), CliError> {
    // `-C DIR init` names the folder too; the positional folder wins.
    let dir = args
        .dir
        .or_else(|| workspace.map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    match init(&dir) {
        Ok(written) => {
            let workspace = load_valid(Some(&dir), printer)?;
            let run = matrix::compile_all(
                &crate::compile::Compiler::new(workspace),
                source_date_epoch(printer),
            );
            if report_failures(workspace, run.failed, printer) {
                return Err(CliError::Reported);
            }
            let built = matrix::write_all(workspace, &run.outputs)?;
            printer.message(Message::Initialised {
                files: written.len(),
                outputs: built.written.len() + built.unchanged.len(),
                dir: &dir,
            });
            printer.message(Message::NextAfterInit(&dir));
            Ok(())
        }
        Err(InitError::WouldOverwrite(existing)) => Err(CliError::WouldOverwrite(existing)),
        // The folder named, or one below it, cannot take the library: the request is wrong,
        // as it is for a folder that holds the library's files already.
        Err(InitError::Refused(error)) => Err(CliError::Argument(error)),
        Err(InitError::InsideWorkspace { dir, enclosing }) => {
            Err(CliError::InsideWorkspace { dir, enclosing })
        }
    }
}
