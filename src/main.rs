use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    promptc::cli::run(promptc::cli::Cli::parse())
}
