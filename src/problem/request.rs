//! Problems of a request made at run time (the library's `Runtime`, the Node and Python
//! packages) that lie in no file: the caller's arguments, or a folder that cannot be loaded.

use std::fmt;

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
        }
    }
}
