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
    /// `variant` with another field that chooses the variant (`family`, `label`, `tag`): the
    /// compile would follow one and leave the other out without a word (the command line
    /// refuses the same flags together).
    VariantNotAlone { other: &'static str },
}

impl RequestProblem {
    pub fn code(&self) -> &'static str {
        match self {
            RequestProblem::NotAWorkspace { .. } => "not-a-workspace",
            RequestProblem::Unreadable { .. } => "workspace-unreadable",
            RequestProblem::InvalidRequest { .. } => "invalid-request",
            RequestProblem::UnknownContext { .. } => "unknown-context",
            RequestProblem::ContextNotTable { .. } => "context-not-table",
            RequestProblem::UnknownDialect { .. } => "unknown-dialect",
            RequestProblem::DialectUnused { .. } => "dialect-unused",
            RequestProblem::VariantNotAlone { .. } => "conflicting-request-fields",
        }
    }

    pub fn severity(&self) -> Severity {
        match self {
            RequestProblem::DialectUnused { .. } => Severity::Warning,
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
            RequestProblem::InvalidRequest { message } => write!(f, "invalid request: {message}"),
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
        }
    }
}
