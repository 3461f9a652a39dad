//! promptc: a declarative prompt compiler.
//!
//! The stages follow the data: [`load`] reads and parses files keeping source spans,
//! [`validate`] checks them and builds a [`Workspace`], [`resolve`] decides what one compile
//! contains, [`render`] runs the templates, and [`emit`] post-processes and writes outputs.

pub mod cli;
pub mod compile;
pub mod compiled;
pub mod confine;
pub mod diagnostic;
pub mod emit;
pub mod entry;
pub mod explain;
pub mod follow;
pub mod init;
pub mod load;
pub mod memory_limit;
pub mod model;
pub mod namespace;
pub mod path_error;
pub mod problem;
pub mod render;
pub mod report;
pub mod request;
pub mod resolve;
pub mod revision;
pub mod schema;
pub mod source;
pub mod span;
pub mod templates;
pub mod tokens;
pub mod validate;
pub mod workspace;

pub use compile::Compiler;
pub use workspace::{Loaded, Workspace};

/// Loads and validates the workspace rooted at `root` (the folder holding `promptc.toml`).
/// Only I/O failures are errors; problems in the files are diagnostics, and a workspace with
/// errors does not compile.
pub fn load_workspace(root: &std::path::Path) -> std::io::Result<Loaded> {
    validate::load_workspace(root)
}
