use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    if let Err(message) = promptc::memory_limit::apply() {
        eprintln!("error: {message}");
        return ExitCode::from(promptc::cli::EXIT_USAGE);
    }
    promptc::cli::run(promptc::cli::Cli::parse())
}
