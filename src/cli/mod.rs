//! The command line: argument definitions and the commands, each a thin client of the
//! library. Output goes through [`Output`], so exit codes and colour are decided in one place.

mod build;
mod check;
mod diff;
mod explain;
mod init;
mod schema;
mod show;
mod stats;
mod validate;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::diagnostic::Diagnostics;
use crate::load::find_root;
use crate::path_error::{PathError, PathProblem};
use crate::report;
use crate::source::Sources;
use crate::workspace::Workspace;

/// Exit codes: fixed, documented in the README.
pub const EXIT_OK: u8 = 0;
pub const EXIT_PROBLEMS: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

#[derive(Parser, Debug)]
#[command(name = "promptc", version, about = "A declarative prompt compiler", long_about = None)]
pub struct Cli {
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compile the prompt for one family (or variant) and context.
    Build(build::BuildArgs),
    /// Compare the committed outputs of the build matrix with a fresh compile; writes nothing.
    Check(check::CheckArgs),
    /// Compare the compiled prompts of two git revisions (the head defaults to the working tree).
    Diff(diff::DiffArgs),
    /// Why each component, tool and parameter is in the prompt or not.
    Explain(explain::ExplainArgs),
    /// Print a variant as compiled: `show --effective VARIANT`.
    Show(show::ShowArgs),
    /// Write the shipped default library into a new workspace.
    Init(init::InitArgs),
    /// Token and character counts of the compiled prompts (o200k).
    Stats(stats::StatsArgs),
    /// Check every file of the workspace and report all problems.
    Validate(validate::ValidateArgs),
    /// Write the JSON Schemas of the file formats, or check that they are current.
    Schema(schema::SchemaArgs),
}

/// A failure that is not about the workspace's content: bad arguments, unreadable files.
#[derive(Debug)]
pub struct UsageError(pub String);

impl<E: std::fmt::Display> From<E> for UsageError {
    fn from(error: E) -> Self {
        UsageError(error.to_string())
    }
}

pub fn run(cli: Cli) -> ExitCode {
    let output = Output {
        color: match cli.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        },
    };
    let result = match cli.command {
        Command::Build(args) => build::run(args, &output),
        Command::Check(args) => check::run(args, &output),
        Command::Diff(args) => diff::run(args),
        Command::Explain(args) => explain::run(args, &output),
        Command::Show(args) => show::run(args, &output),
        Command::Init(args) => init::run(args),
        Command::Stats(args) => stats::run(args, &output),
        Command::Validate(args) => validate::run(args, &output),
        Command::Schema(args) => schema::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(UsageError(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

pub struct Output {
    pub color: bool,
}

/// Writes a command's result to stdout. A closed pipe (`promptc build | head`) is a reader
/// that has seen enough, not an error.
pub fn emit(text: &str) -> Result<(), UsageError> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(error.into()),
        _ => Ok(()),
    }
}

impl Output {
    /// Prints diagnostics to stderr, rustc-style.
    pub fn diagnostics(&self, diagnostics: Diagnostics, sources: &Sources) {
        let sorted = diagnostics.sorted();
        if sorted.is_empty() {
            return;
        }
        let text = report::human(&sorted, sources, self.color);
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
}

/// Loads the workspace and prints its diagnostics. `Err(exit code)` when it has errors: every
/// command but `validate` stops there.
pub fn load_valid(
    dir: Option<&Path>,
    output: &Output,
) -> Result<Result<Workspace, u8>, UsageError> {
    let root = workspace_root(dir)?;
    let loaded = crate::loader::load_workspace(&root)?;
    let has_errors = loaded.diagnostics.has_errors();
    output.diagnostics(loaded.diagnostics, &loaded.workspace.sources);
    Ok(if has_errors {
        Err(EXIT_PROBLEMS)
    } else {
        Ok(loaded.workspace)
    })
}

/// The workspace root: the given folder, or the nearest one above the current directory that
/// holds `promptc.toml`.
pub fn workspace_root(given: Option<&Path>) -> Result<PathBuf, UsageError> {
    let start = match given {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()?,
    };
    if given.is_some() {
        if start.join(crate::load::MANIFEST_FILE).is_file() {
            return Ok(start);
        }
        return Err(UsageError(format!(
            "{} has no {}",
            start.display(),
            crate::load::MANIFEST_FILE
        )));
    }
    find_root(&start).ok_or_else(|| {
        UsageError(format!(
            "no {} in {} or any folder above it (run `promptc` inside a workspace, or pass one)",
            crate::load::MANIFEST_FILE,
            start.display()
        ))
    })
}

/// Reports a path promptc refused or could not use. A refusal (a link out of the workspace, a
/// folder or FIFO where a file belongs, a file over its size limit) is a problem of the
/// workspace; a failing read or write is an I/O error.
pub fn path_failed(error: PathError) -> Result<u8, UsageError> {
    if let PathProblem::Io(_) = error.problem {
        return Err(UsageError(error.to_string()));
    }
    eprintln!("error: {error}\n  = help: {}", error.help());
    Ok(EXIT_PROBLEMS)
}

/// Output format of a command's diagnostics.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiagnosticFormat {
    Human,
    Json,
}
