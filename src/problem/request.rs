//! Problems of a request made at run time (the library's `Runtime`, the Node and Python
//! packages) that lie in no file: the caller's arguments, or a folder that cannot be loaded.

use std::fmt;

use super::Severity;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestProblem {
    /// The folder holds no `promptc.toml`.
    NotAWorkspace { dir: String },
    /// Reading the workspace failed below the level of one file (a folder that vanished).
    Unreadable { path: String, reason: String },
    /// The request's own shape: an unknown key, a value of the wrong type.
    InvalidRequest { message: String },
    /// `context` names a context the workspace does not have.
    UnknownContext { name: String, known: Vec<String> },
    /// `context` is neither a table of fields nor the name of a context.
    ContextNotTable { found: &'static str },
    /// `dialect` is not one promptc emits.
    UnknownDialect {
        name: String,
        known: Vec<&'static str>,
    },
    /// `dialect` given for a variant without native tool calls: its tools are written in the
    /// prompt, and the dialect changes nothing. A warning, as `promptc build --dialect` says it.
    DialectUnused { dialect: String, variant: String },
    /// Lists and tables nested as deep as a request may not, or holding themselves.
    NestedTooDeep { at: String, limit: usize },
    /// A value of a kind that is no data (a BigInt, a function, a Python set).
    NotDataKind { at: String, kind: String },
    /// A number JSON cannot carry as written (NaN, an infinity, an integer past 64 bits).
    NotDataNumber { at: String, number: String },
    /// A table key that is not a string.
    NotDataKey { at: String, kind: String },
    /// `context.rules_from` that is not a list of folders.
    RulesFromNotFolders { reason: String },
    /// A `set` value that does not fit the context field it names.
    SetValueDoesNotFit { message: String },
    /// `variant` with another field that chooses the variant (`family`, `label`, `tag`): the
    /// compile would follow one and leave the other out without a word (the command line
    /// refuses the same flags together).
    VariantNotAlone { other: &'static str },
    /// A `set` value under a name no template or condition reads: it changes nothing (a
    /// mistyped `AGENT_NAM`). A warning, as the command line's `--set` says it.
    SetNameUnread {
        name: String,
        suggestion: Option<String>,
    },
}

impl RequestProblem {
    pub fn code(&self) -> &'static str {
        match self {
            RequestProblem::NotAWorkspace { .. } => "not-a-workspace",
            RequestProblem::Unreadable { .. } => "workspace-unreadable",
            RequestProblem::InvalidRequest { .. }
            | RequestProblem::NestedTooDeep { .. }
            | RequestProblem::NotDataKind { .. }
            | RequestProblem::NotDataNumber { .. }
            | RequestProblem::NotDataKey { .. }
            | RequestProblem::RulesFromNotFolders { .. }
            | RequestProblem::SetValueDoesNotFit { .. } => "invalid-request",
            RequestProblem::UnknownContext { .. } => "unknown-context",
            RequestProblem::ContextNotTable { .. } => "context-not-table",
            RequestProblem::UnknownDialect { .. } => "unknown-dialect",
            RequestProblem::DialectUnused { .. } => "dialect-unused",
            RequestProblem::VariantNotAlone { .. } => "conflicting-request-fields",
            RequestProblem::SetNameUnread { .. } => "set-name-unread",
        }
    }

    pub fn severity(&self) -> Severity {
        match self {
            RequestProblem::DialectUnused { .. } | RequestProblem::SetNameUnread { .. } => {
                Severity::Warning
            }
            _ => Severity::Error,
        }
    }

    pub fn help(&self) -> Option<String> {
        Some(match self {
            RequestProblem::NotAWorkspace { .. } => {
                "pass the folder that holds promptc.toml (`promptc init` creates one)".into()
            }
            RequestProblem::Unreadable { .. } => {
                "check that the folder exists and can be read, then load it again".into()
            }
            RequestProblem::InvalidRequest { .. } => {
                "a request has `model`, `context`, `family`, `variant`, `label`, `tag`, `dialect` and `set`, all optional".into()
            }
            RequestProblem::NestedTooDeep { at, limit } => format!(
                "a request nests fewer than {limit} levels: flatten or shorten {} (a tool's `input_schema` so deep is no schema a model can use), or leave it out; a value that holds itself cannot be sent",
                place(at)
            ),
            RequestProblem::NotDataKind { .. }
            | RequestProblem::NotDataNumber { .. }
            | RequestProblem::NotDataKey { .. } => {
                "a request holds data only: strings, finite numbers (whole ones within 64 bits), booleans, null, lists, and tables with string keys; write the value as one of those (a BigInt as a number or a string)".into()
            }
            RequestProblem::RulesFromNotFolders { .. } => {
                "give `rules_from` as a list of folders, each a path as a string".into()
            }
            RequestProblem::SetValueDoesNotFit { .. } => {
                "write the value as the field's type, as the message says, or leave it out of `set`".into()
            }
            RequestProblem::UnknownContext { known, .. } if known.is_empty() => {
                "the workspace has no named contexts: pass the context's fields as a table".into()
            }
            RequestProblem::UnknownContext { known, .. } => {
                format!("name one of: {}, or pass the context's fields as a table", known.join(", "))
            }
            RequestProblem::ContextNotTable { .. } => {
                "pass a table of context fields (`{ cwd, mode, mcp_servers, … }`) or a context's name".into()
            }
            RequestProblem::UnknownDialect { known, .. } => {
                format!("use one of: {}", known.join(", "))
            }
            RequestProblem::DialectUnused { .. } => {
                "leave `dialect` out for this variant, or set `native_tools = true` in it to send its tools as definitions".into()
            }
            RequestProblem::VariantNotAlone { .. } => {
                "`variant` names one variant (an id or `family@version`): give it alone, or give `family` with `label` or `tag` to choose within a family".into()
            }
            RequestProblem::SetNameUnread {
                suggestion: Some(near),
                ..
            } => format!("did you mean `{near}`?"),
            RequestProblem::SetNameUnread { .. } => {
                "leave it out of `set`, or read it in a template".into()
            }
        })
    }
}

impl fmt::Display for RequestProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestProblem::NotAWorkspace { dir } => {
                write!(
                    f,
                    "`{dir}` is not a promptc workspace: it has no promptc.toml"
                )
            }
            RequestProblem::Unreadable { path, reason } => {
                write!(f, "cannot read `{path}`: {reason}")
            }
            RequestProblem::InvalidRequest { message }
            | RequestProblem::SetValueDoesNotFit { message } => {
                write!(f, "invalid request: {message}")
            }
            RequestProblem::NestedTooDeep { at, limit } => write!(
                f,
                "invalid request: {} nests lists and tables {limit} levels deep (the request counted as one), or holds itself",
                place(at)
            ),
            RequestProblem::NotDataKind { at, kind } => write!(
                f,
                "invalid request: {} is a value of kind `{kind}`, which is not data a request can carry",
                place(at)
            ),
            RequestProblem::NotDataNumber { at, number } => write!(
                f,
                "invalid request: {} is `{number}`, a number a request cannot carry as written",
                place(at)
            ),
            RequestProblem::NotDataKey { at, kind } => write!(
                f,
                "invalid request: {} has a key of kind `{kind}`; a table's keys are strings",
                place(at)
            ),
            RequestProblem::RulesFromNotFolders { reason } => write!(
                f,
                "invalid request: `context.rules_from` must be a list of folders: {reason}"
            ),
            RequestProblem::UnknownContext { name, .. } => {
                write!(f, "the workspace has no context named `{name}`")
            }
            RequestProblem::ContextNotTable { found } => {
                write!(
                    f,
                    "`context` must be a table of fields or a context's name, found {found}"
                )
            }
            RequestProblem::UnknownDialect { name, .. } => {
                write!(f, "unknown tool-definition dialect `{name}`")
            }
            RequestProblem::DialectUnused { dialect, variant } => write!(
                f,
                "`dialect` `{dialect}` changes nothing: variant `{variant}` does not use native tool calls (`native_tools = true`), so its tools are written in the prompt"
            ),
            RequestProblem::VariantNotAlone { other } => write!(
                f,
                "`variant` and `{other}` cannot both be given: the compile would follow one and leave the other out"
            ),
            RequestProblem::SetNameUnread { name, .. } => write!(
                f,
                "`set.{name}` changes nothing: no template or condition reads `{name}`"
            ),
        }
    }
}

/// Where in a request a value is: its path (`set.LIMIT`), or the request itself.
fn place(at: &str) -> String {
    if at.is_empty() {
        "the request".into()
    } else {
        format!("`{at}`")
    }
}
