//! Why a command failed: the one error type of the command line, each kind with its wording
//! and its exit code.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::new::MAX_NEW_ID_BYTES;
use super::{EXIT_PROBLEMS, EXIT_USAGE};
use crate::load::MANIFEST_FILE;
use crate::namespace::near_or;
use crate::path_error::{PathError, PathProblem};
use crate::problem::{Problem, RefKind};

#[derive(Debug)]
pub enum CliError {
    /// The problems were printed as they were found (diagnostics, stale outputs, a side of a
    /// diff that does not compile): nothing more to say.
    Reported,
    /// A path promptc refused (a problem of the workspace) or could not read or write.
    Path(PathError),
    /// [`CliError::Path`] while a build wrote its outputs: none was written, which is said
    /// after the error that is why.
    NothingWritten(PathError),
    /// A path or stream the command line names (`init`'s folder, a `--context` file,
    /// standard input), refused for what it is: the request is wrong, a usage error whatever
    /// the refusal, as a `--context` that names a device is.
    Argument(PathError),
    /// A read or write failed: the current folder, the workspace as a whole.
    Io(io::Error),
    /// Writing the command's result to standard output failed (a full disk behind a
    /// redirection): said as such, since the error names no file.
    Stdout(io::Error),
    /// `PROMPTC_MEMORY_LIMIT` is not a size, or `PROMPTC_TIME_LIMIT` not a duration.
    ProcessLimit(String),
    /// `--workspace` names a folder without a manifest.
    NotAWorkspace(PathBuf),
    /// No manifest in the current folder or any above it.
    NoWorkspace(PathBuf),
    /// A rules folder the command line names (`--rules`, `--global-rules`) is missing or is
    /// not a folder: the request is wrong, as with a missing `--mcp` file.
    RulesFolder(crate::problem::RulesProblem),
    /// `init`: the folder lies inside the workspace at `enclosing`.
    InsideWorkspace { dir: PathBuf, enclosing: PathBuf },
    /// The selection names no variant; the variant ids there are, for an unknown variant id,
    /// else the families.
    Selection {
        problem: Problem,
        known: Vec<String>,
    },
    /// `explain --tool` names no tool; the tools there are.
    UnknownTool { tool: String, tools: Vec<String> },
    /// `explain --component` names no component; the components there are.
    UnknownComponent {
        component: String,
        components: Vec<String>,
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
    /// `--mcp` names a folder, FIFO or device.
    McpSettingsNotAFile(PathBuf),
    /// `--context` names a file that is not TOML, YAML or JSON.
    ContextNotData(PathBuf),
    /// `context --out` names a file whose extension says another language than `--format`:
    /// read back, it would be read as what its extension says.
    OutFormat { path: PathBuf, format: &'static str },
    /// `context --out` names a file whose extension is a data file's in another case
    /// (`x.TOML`): promptc would not read it back as a context.
    OutExtensionCase(PathBuf),
    /// `context --out` into the workspace's contexts folder under a name no context may have,
    /// or another context's (in another format), or with no data extension: every later
    /// command would refuse the workspace, or not read the file.
    OutContextName { path: PathBuf, why: OutNameProblem },
    /// `context --out` over a file that is there, with no context named (no `--context`, no
    /// `default_context`): the empty context would replace the file.
    OutEmptyContext(PathBuf),
    /// A `--set` value that does not fit the context field it names.
    SetValue(String),
    /// `init` would overwrite these paths.
    WouldOverwrite(Vec<PathBuf>),
    /// `new`: the workspace has a file of this kind with the id already (`by`: its path).
    IdTaken {
        what: &'static str,
        id: String,
        by: String,
    },
    /// `new`: the workspace has an id of the kind that differs from the one given only by case.
    IdTakenByCase {
        what: &'static str,
        id: String,
        other: String,
        by: String,
    },
    /// `new component`: another component has the slot the new one would have.
    SlotTaken {
        id: String,
        slot: String,
        by: String,
    },
    /// `new`: the id given cannot be one of the kind asked for.
    NotAnId { id: String, problem: IdProblem },
    /// `new`: the manifest's folder setting for the kind names no folder the load reads
    /// (the workspace root, or one outside it).
    NotADataFolder {
        setting: &'static str,
        folder: String,
    },
    /// A value that cannot be written in the format asked for.
    Unprintable(String),
    /// A value of a variant or context that TOML has no way to write: where, and what it is.
    NotToml { place: String, what: &'static str },
    /// `--context -`: standard input is not UTF-8 text.
    StdinNotText,
    /// `promptc tools` for a variant without native tool calls.
    NotNative(String),
    /// `schema`: the manifest, whose `[context_fields]` the context schema holds, cannot be
    /// read or does not parse (why).
    ManifestUnreadable(String),
}

/// Why `context --out` may not write a file of the workspace's contexts folder.
#[derive(Debug)]
pub enum OutNameProblem {
    /// Its name is no context's (`-bad.toml`).
    NotAName,
    /// Another file holds a context of that name (its path, as shown).
    Taken(String),
    /// It has no data extension.
    NotData,
    /// Windows cannot create a file of its name (`con.json`, `aux.toml`).
    NotPortable,
}

/// Why `new` refuses an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdProblem {
    /// Characters no id has.
    Characters,
    /// A tool's id is the name a model calls it by, which starts with a letter or `_`.
    NotCallable,
    /// No file can be named after it.
    TooLong,
    /// A device's name on Windows (`nul`, `con`), or one ending with a dot (which Windows
    /// drops): a clone there cannot hold a file named so.
    WindowsDevice,
}

impl CliError {
    /// Problems of the workspace exit 1; usage and I/O errors exit 2: a path of the
    /// workspace promptc refuses is a problem of the workspace, a path the command line names
    /// a usage error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Reported | CliError::ManifestUnreadable(_) => EXIT_PROBLEMS,
            CliError::Path(error) | CliError::NothingWritten(error)
                if !matches!(error.problem, PathProblem::Io(_)) =>
            {
                EXIT_PROBLEMS
            }
            _ => EXIT_USAGE,
        }
    }

    /// Its code, as a diagnostic's: what `--format json` names it by.
    pub fn code(&self) -> &'static str {
        match self {
            CliError::Reported => "reported",
            CliError::Path(error) | CliError::Argument(error) | CliError::NothingWritten(error)
                if matches!(error.problem, PathProblem::Io(_)) =>
            {
                "io-error"
            }
            CliError::Path(_) | CliError::Argument(_) | CliError::NothingWritten(_) => {
                "path-refused"
            }
            CliError::Io(_) | CliError::Stdout(_) => "io-error",
            CliError::ProcessLimit(_) => "process-limit",
            CliError::NotAWorkspace(_) => "not-a-workspace",
            CliError::NoWorkspace(_) => "no-workspace",
            CliError::InsideWorkspace { .. } => "inside-workspace",
            CliError::RulesFolder(problem) => problem.code(),
            CliError::Selection { problem, .. } => problem.code(),
            CliError::UnknownTool { .. } => "unknown-tool",
            CliError::UnknownComponent { .. } => "unknown-component",
            CliError::UnknownContext { .. } | CliError::NoContext { .. } => "unknown-context",
            CliError::ContextNotAFile(_) => "context-not-a-file",
            CliError::McpSettingsNotAFile(_) => "mcp-settings-not-a-file",
            CliError::ContextNotData(_) => "context-not-data",
            CliError::OutFormat { .. } | CliError::OutExtensionCase(_) => "out-format",
            CliError::OutContextName { .. } => "out-context-name",
            CliError::OutEmptyContext(_) => "out-empty-context",
            CliError::SetValue(_) => "invalid-set",
            CliError::WouldOverwrite(_) => "would-overwrite",
            CliError::IdTaken { .. } | CliError::IdTakenByCase { .. } => "duplicate-id",
            CliError::SlotTaken { .. } => "duplicate-slot",
            CliError::NotAnId { .. } => "invalid-id",
            CliError::NotADataFolder { .. } => "invalid-value",
            CliError::Unprintable(_) | CliError::NotToml { .. } => "unprintable",
            CliError::StdinNotText => "stdin-not-text",
            CliError::NotNative(_) => "not-native",
            CliError::ManifestUnreadable(_) => "manifest-unreadable",
        }
    }

    /// What would fix it, when there is more to say than the message.
    pub fn help(&self) -> Option<String> {
        match self {
            CliError::Path(error) | CliError::Argument(error) | CliError::NothingWritten(error)
                if !matches!(error.problem, PathProblem::Io(_)) =>
            {
                Some(error.help())
            }
            CliError::RulesFolder(problem) => problem.help(),
            CliError::OutContextName { why, .. } => Some(match why {
                OutNameProblem::NotAName => "name the file with an ASCII letter or digit first, then those, `_`, `.` and `-` (a context's name is its file name without the extension)".to_string(),
                OutNameProblem::Taken(other) => format!("write the context over `{other}`, or choose another name"),
                OutNameProblem::NotData => "give it the extension of its format: `.toml`, `.yaml` or `.json`".to_string(),
                OutNameProblem::NotPortable => "choose another name (`con`, `prn`, `aux`, `nul`, `com1`-`com9` and `lpt1`-`lpt9` are devices on Windows, whatever the extension)".to_string(),
            }),
            CliError::OutExtensionCase(path) => Some(format!(
                "name it `{}`",
                path.with_extension(
                    path.extension()
                        .map(|extension| extension.to_string_lossy().to_lowercase())
                        .unwrap_or_default()
                )
                .display()
            )),
            CliError::McpSettingsNotAFile(path) if path.is_dir() => Some(
                "name the settings file itself (such as `.cursor/mcp.json`), not its folder".into(),
            ),
            CliError::McpSettingsNotAFile(_) => Some(
                "name a regular JSON file (such as `.cursor/mcp.json`): a FIFO, socket or device is not read".into(),
            ),
            CliError::NotAnId { problem, .. } => Some(match problem {
                IdProblem::Characters => {
                    "use letters, digits, `_`, `.` and `-`, starting with a letter or digit".into()
                }
                IdProblem::NotCallable => {
                    "start it with a letter or `_` (or give the tool a `name` of that form after writing it)".into()
                }
                IdProblem::TooLong => {
                    format!("use an id of at most {MAX_NEW_ID_BYTES} characters")
                }
                IdProblem::WindowsDevice => {
                    "choose another id, not ending with a dot (`con`, `prn`, `aux`, `nul`, `com1`-`com9` and `lpt1`-`lpt9` are devices there)".into()
                }
            }),
            CliError::NotADataFolder { .. } => Some(
                "set it to a folder below the workspace root in promptc.toml, or leave it out for its default"
                    .into(),
            ),
            CliError::ManifestUnreadable(_) => Some(
                "fix promptc.toml first (`promptc validate` shows where), then write the schemas"
                    .into(),
            ),
            CliError::Path(error) | CliError::Argument(error) | CliError::NothingWritten(error)
                if matches!(&error.problem, PathProblem::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied) =>
            {
                Some(format!(
                    "give the user running promptc the right to read and write {} and its folder",
                    error.path.display()
                ))
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
            CliError::Path(error) | CliError::Argument(error) | CliError::NothingWritten(error) => {
                write!(f, "{error}")
            }
            CliError::Io(error) => write!(f, "{error}"),
            CliError::Stdout(error) => write!(f, "cannot write to standard output: {error}"),
            CliError::ProcessLimit(message) | CliError::Unprintable(message) => {
                write!(f, "{message}")
            }
            CliError::NotAnId { id, problem } => match problem {
                IdProblem::Characters => write!(f, "`{id}` is not an id"),
                IdProblem::NotCallable => write!(
                    f,
                    "`{id}` is not a name a model can call a tool by, which a tool's id is unless it has a `name`"
                ),
                IdProblem::TooLong => write!(
                    f,
                    "an id of {} characters is too long to name a file after",
                    id.len()
                ),
                IdProblem::WindowsDevice if id.ends_with('.') => write!(
                    f,
                    "`{id}` ends with a dot, which Windows drops from a file's name: a clone of the repository there cannot hold the output named after it"
                ),
                IdProblem::WindowsDevice => write!(
                    f,
                    "`{id}` is a device's name on Windows, where a clone of the repository cannot hold a file named after it"
                ),
            },
            CliError::NotADataFolder { setting, folder } => write!(
                f,
                "`{setting}` ({folder:?}) names no folder promptc reads files from: the workspace root, or a folder outside it"
            ),
            CliError::NotToml { place, what } => write!(
                f,
                "`{place}` is {what}, which TOML cannot write: ask for `--format json`"
            ),
            CliError::ManifestUnreadable(why) => write!(
                f,
                "the schemas cannot be made: promptc.toml {why}, and the context schema holds its `[context_fields]`"
            ),
            CliError::NotNative(variant) => write!(
                f,
                "variant `{variant}` does not use native tool calls (`native_tools = true`): its tools are documented in the prompt"
            ),
            CliError::StdinNotText => write!(
                f,
                "standard input is not UTF-8 text: `--context -` reads a context as JSON, TOML or YAML"
            ),
            CliError::NotAWorkspace(dir) => write!(f, "{} has no {MANIFEST_FILE}", dir.display()),
            CliError::RulesFolder(problem) => write!(f, "{problem}"),
            CliError::InsideWorkspace { dir, enclosing } => write!(
                f,
                "refusing to write a workspace into {}: it lies inside the workspace at {}, \
                 which would read the new files as its own; nothing was written (run `promptc \
                 init` in a folder outside it)",
                dir.display(),
                enclosing.display()
            ),
            CliError::NoWorkspace(start) => write!(
                f,
                "no {MANIFEST_FILE} in {} or any folder above it (run `promptc` inside a \
                 workspace, or pass one with `-C DIR`; `promptc init` writes one)",
                start.display()
            ),
            // A family the workspace lacks: a near name, else the families there are. A family
            // it has that lacks the version, label or tag asked for: the problem's own help (a
            // near name, else the family's versions, labels or tags, or what would fix it).
            CliError::Selection { problem, known } => match (problem, problem.help()) {
                (Problem::NoVariant { family }, _) => {
                    write!(f, "{problem} ({})", near_or(family, known, "families"))
                }
                (_, Some(help)) => write!(f, "{problem} ({help})"),
                (
                    Problem::UnknownReference {
                        kind: RefKind::Variant,
                        ..
                    },
                    None,
                ) => write!(f, "{problem} (variants: {})", known.join(", ")),
                (_, None) => write!(f, "{problem} (families: {})", known.join(", ")),
            },
            CliError::UnknownTool { tool, tools } => write!(
                f,
                "no tool `{tool}` in the workspace ({})",
                near_or(tool, tools, "tools")
            ),
            CliError::UnknownComponent {
                component,
                components,
            } => write!(
                f,
                "no component `{component}` in the workspace ({})",
                near_or(component, components, "components")
            ),
            CliError::UnknownContext { context, contexts } => write!(
                f,
                "no context `{context}` in the workspace ({})",
                near_or(context, contexts, "contexts")
            ),
            CliError::NoContext { name, contexts } => write!(
                f,
                "no context file or named context `{name}` ({})",
                near_or(name, contexts, "named contexts")
            ),
            CliError::ContextNotAFile(path) => write!(
                f,
                "{} is not a regular file: a context is read from a TOML, YAML or JSON file",
                path.display()
            ),
            CliError::McpSettingsNotAFile(path) => write!(
                f,
                "{} is not a regular file: MCP settings are read from a JSON file (`mcpServers`, as agents write it)",
                path.display()
            ),
            CliError::ContextNotData(path) => {
                write!(f, "{} is not a TOML, YAML or JSON file", path.display())
            }
            CliError::OutEmptyContext(path) => write!(
                f,
                "no context named (no `--context`, and promptc.toml sets no `default_context`): \
                 the empty context would replace {}; name the context to save with `--context`",
                path.display()
            ),
            CliError::OutFormat { path, format } => write!(
                f,
                "{} would be read as its extension says, not as the {format} `--format` asks for: \
                 give the file a `.{format}` name, or leave `--format` out",
                path.display()
            ),
            CliError::OutContextName { path, why } => match why {
                OutNameProblem::NotAName => write!(
                    f,
                    "{} cannot name a context: every later command would refuse the workspace (bad-context-name)",
                    path.display()
                ),
                OutNameProblem::Taken(other) => write!(
                    f,
                    "{} would be a second context of its name, beside {other}: every later command would refuse the workspace",
                    path.display()
                ),
                OutNameProblem::NotData => write!(
                    f,
                    "{} would not be read back as a context: it has no data file's extension",
                    path.display()
                ),
                OutNameProblem::NotPortable => write!(
                    f,
                    "{} is a name Windows cannot create (a device's name, `con`, `aux`, `nul`, …): every later command would refuse the workspace",
                    path.display()
                ),
            },
            CliError::OutExtensionCase(path) => write!(
                f,
                "{} would not be read back as a context: promptc reads data files whose extension is in lower case",
                path.display()
            ),
            CliError::SetValue(message) => write!(f, "{message}"),
            CliError::IdTaken { what, id, by } => write!(
                f,
                "the workspace has a {what} `{id}` already ({by}): choose another id, or edit that file; nothing was written"
            ),
            CliError::IdTakenByCase {
                what,
                id,
                other,
                by,
            } => write!(
                f,
                "the workspace has a {what} `{other}` already ({by}), whose id differs from `{id}` only by case: where case is ignored the two are one file, and promptc refuses them; choose another id, or edit that file; nothing was written"
            ),
            CliError::SlotTaken { id, slot, by } => write!(
                f,
                "a component `{id}` would fill the slot `{slot}`, which {by} fills already: choose another id; nothing was written"
            ),
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
