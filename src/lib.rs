//! promptc: a declarative prompt compiler.
//!
//! The stages follow the data: [`load`] reads and parses files keeping source spans,
//! [`validate`] checks them and builds a [`Workspace`], [`resolve`] decides what one compile
//! contains, [`render`] runs the templates, and [`emit`] post-processes and writes outputs.
//!
//! The command line (`cli`, with its memory ceiling) is behind the default `cli` feature:
//! with `default-features = false` the library builds without clap.

pub mod analysis;
#[cfg(feature = "cli")]
pub mod cli;
pub mod compile;
pub mod compiled;
pub mod confine;
pub mod diagnostic;
pub mod emit;
pub mod follow;
pub mod init;
pub mod load;
pub mod loader;
#[cfg(feature = "cli")]
pub mod memory_limit;
pub mod model;
pub mod namespace;
pub mod path_error;
pub mod pointer;
pub mod problem;
pub mod render;
pub mod report;
pub mod resolve;
pub mod review;
pub mod schema;
pub mod source;
pub mod span;
pub mod templates;
pub mod tokens;
pub mod validate;
pub mod workspace;

pub use compile::Compiler;
pub use loader::{Loaded, load_workspace};
pub use workspace::Workspace;
