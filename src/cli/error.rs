//! Why a command failed: the one error type of the command line, each kind with its wording
//! and its exit code.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::{EXIT_PROBLEMS, EXIT_USAGE};
use crate::load::MANIFEST_FILE;
use crate::path_error::{PathError, PathProblem};
use crate::problem::Problem;

#[derive(Debug)]
pub enum CliError {
    /// The problems were printed as they were found (diagnostics, stale outputs, a side of a
    /// diff that does not compile): nothing more to say.
    Reported,
    /// A path promptc refused (a problem of the workspace) or could not read or write.
    Path(PathError),
    /// A read or write failed: stdout, the current folder, the workspace as a whole.
    Io(io::Error),
    /// `PROMPTC_MEMORY_LIMIT` is not a size, or `PROMPTC_TIME_LIMIT` not a duration.
    ProcessLimit(String),
    /// `--workspace` names a folder without a manifest.
    NotAWorkspace(PathBuf),
    /// No manifest in the current folder or any above it.
    NoWorkspace(PathBuf),
    /// The selection names no variant; the families there are.
    Selection {
        problem: Problem,
        families: Vec<String>,
    },
    /// `show` names no variant.
    UnknownVariant(Problem),
    /// `explain --tool` names no tool.
    UnknownTool(String),
    /// `explain --component` names no component.
    UnknownComponent(String),
    /// `stats --family` names no family.
    UnknownFamily {
        family: String,
        families: Vec<String>,
    },
    /// `stats --context` names no context.
    UnknownContext {
        context: String,
        contexts: Vec<String>,
    },
    /// `--context` is neither a named context nor a file.
    NoContext { name: String, contexts: Vec<String> },
    /// `--context` names a folder, FIFO or device.
    ContextNotAFile(PathBuf),
    /// `--context` names a file that is not TOML, YAML or JSON.
    ContextNotData(PathBuf),
    /// `SOURCE_DATE_EPOCH` is a number outside the dates a context can hold.
    EpochOutOfRange(String),
    /// `SOURCE_DATE_EPOCH` is not a number.
    EpochNotANumber(String),
    /// `init` would overwrite these paths.
    WouldOverwrite(Vec<PathBuf>),
    /// A value that cannot be written in the format asked for.
    Unprintable(String),
    /// `--context -`: standard input is not UTF-8 text.
    StdinNotText,
    /// `promptc tools` for a variant without native tool calls.
    NotNative(String),
}

impl CliError {
    /// Problems of the workspace exit 1; usage and I/O errors exit 2.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Reported => EXIT_PROBLEMS,
            CliError::Path(error) if !matches!(error.problem, PathProblem::Io(_)) => EXIT_PROBLEMS,
            _ => EXIT_USAGE,
        }
    }

    /// What would fix it, when there is more to say than the message.
    pub fn help(&self) -> Option<String> {
        match self {
            CliError::Path(error) if !matches!(error.problem, PathProblem::Io(_)) => {
                Some(error.help())
            }
            _ => None,
        }
    }
}

impl From<PathError> for CliError {
    fn from(error: PathError) -> Self {
        CliError::Path(error)
    }
}

impl From<io::Error> for CliError {
    fn from(error: io::Error) -> Self {
        CliError::Io(error)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Reported => Ok(()),
            CliError::Path(error) => write!(f, "{error}"),
            CliError::Io(error) => write!(f, "{error}"),
            CliError::ProcessLimit(message) | CliError::Unprintable(message) => {
                write!(f, "{message}")
            }
            CliError::NotNative(variant) => write!(
                f,
                "variant `{variant}` does not use native tool calls (`native_tools = true`): its tools are documented in the prompt"
            ),
            CliError::StdinNotText => write!(
                f,
                "standard input is not UTF-8 text: `--context -` reads a context as JSON, TOML or YAML"
            ),
            CliError::NotAWorkspace(dir) => write!(f, "{} has no {MANIFEST_FILE}", dir.display()),
            CliError::NoWorkspace(start) => write!(
                f,
                "no {MANIFEST_FILE} in {} or any folder above it (run `promptc` inside a \
                 workspace, or pass one)",
                start.display()
            ),
            // A family the workspace lacks: the families there are. A family it has that lacks
            // the version, label or tag asked for: the problem's own help (a near name, else
            // the family's versions, labels or tags, or what would fix it).
            CliError::Selection { problem, families } => match problem.help() {
                Some(help) if !matches!(problem, Problem::NoVariant { .. }) => {
                    write!(f, "{problem} ({help})")
                }
                _ => write!(f, "{problem} (families: {})", families.join(", ")),
            },
            CliError::UnknownVariant(problem) => write!(f, "{problem}"),
            CliError::UnknownTool(tool) => write!(f, "no tool `{tool}` in the workspace"),
            CliError::UnknownComponent(component) => {
                write!(f, "no component `{component}` in the workspace")
            }
            CliError::UnknownFamily { family, families } => write!(
                f,
                "no variant has family `{family}` (families: {})",
                families.join(", ")
            ),
            CliError::UnknownContext { context, contexts } => write!(
                f,
                "no context `{context}` in the workspace (contexts: {})",
                contexts.join(", ")
            ),
            CliError::NoContext { name, contexts } => write!(
                f,
                "no context file or named context `{name}` (named contexts: {})",
                contexts.join(", ")
            ),
            CliError::ContextNotAFile(path) => write!(
                f,
                "{} is not a regular file: a context is read from a TOML, YAML or JSON file",
                path.display()
            ),
            CliError::ContextNotData(path) => {
                write!(f, "{} is not a TOML, YAML or JSON file", path.display())
            }
            CliError::EpochOutOfRange(value) => write!(
                f,
                "SOURCE_DATE_EPOCH `{value}` is outside 1970-01-01 to 9999-12-31"
            ),
            CliError::EpochNotANumber(value) => {
                write!(f, "SOURCE_DATE_EPOCH is not a number: `{value}`")
            }
            CliError::WouldOverwrite(existing) => {
                let shown: Vec<String> = existing
                    .iter()
                    .take(5)
                    .map(|path| path.display().to_string())
                    .collect();
                write!(
                    f,
                    "refusing to overwrite {} existing path(s), e.g. {}; nothing was written",
                    existing.len(),
                    shown.join(", ")
                )
            }
        }
    }
}
