use std::path::PathBuf;

use clap::Args;

use super::{CliError, Message, Printer};
use crate::init::{InitError, init};

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The folder of the new workspace (created if missing).
    pub dir: PathBuf,
}

pub fn run(args: InitArgs, printer: &Printer) -> Result<(), CliError> {
    match init(&args.dir) {
        Ok(written) => {
            printer.message(Message::Initialised {
                files: written.len(),
                dir: &args.dir,
            });
            Ok(())
        }
        Err(InitError::WouldOverwrite(existing)) => Err(CliError::WouldOverwrite(existing)),
        Err(InitError::Refused(error)) => Err(error.into()),
    }
}
