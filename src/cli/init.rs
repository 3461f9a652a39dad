use std::path::PathBuf;

use clap::Args;

use super::{EXIT_OK, UsageError};
use crate::init::{InitError, init};

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The folder of the new workspace (created if missing).
    pub dir: PathBuf,
}

pub fn run(args: InitArgs) -> Result<u8, UsageError> {
    match init(&args.dir) {
        Ok(written) => {
            eprintln!(
                "wrote {} files of the default library into {}",
                written.len(),
                args.dir.display()
            );
            eprintln!(
                "next: cd {} && promptc validate && promptc build --family next-gen",
                args.dir.display()
            );
            Ok(EXIT_OK)
        }
        Err(InitError::WouldOverwrite(existing)) => {
            let shown: Vec<String> = existing
                .iter()
                .take(5)
                .map(|p| p.display().to_string())
                .collect();
            Err(UsageError(format!(
                "refusing to overwrite {} existing path(s), e.g. {}; nothing was written",
                existing.len(),
                shown.join(", ")
            )))
        }
        Err(InitError::Refused(error)) => super::path_failed(error),
    }
}
