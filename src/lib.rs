//! promptc: a declarative prompt compiler. An agent's system prompt is kept as data (variants
//! per model family, components, tool specs, in TOML or YAML), validated with every problem
//! located at file:line:col, and compiled for a family and a runtime context.
//!
//! This is the library the command line and the language bindings use:
//!
//! ```
//! use promptc::{Compiler, Request, Selection};
//!
//! // The workspace shipped with promptc, at the root of its repository.
//! let loaded = promptc::load_workspace(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))?;
//! assert!(!loaded.diagnostics.has_errors());
//! let workspace = loaded.workspace;
//!
//! // One compiler per workspace: it keeps what every compile shares.
//! let compiler = Compiler::new(&workspace);
//! let context = workspace.context("basic").cloned().unwrap_or_default();
//! let request = Request::new(Selection::family("next-gen"), context);
//! let compiled = compiler.compile(&request)?;
//! assert!(compiled.prompt.contains("read_file"));
//!
//! // Or let the workspace's routing rules pick the family for the model in hand.
//! let mut for_model = workspace.context("basic").cloned().unwrap_or_default();
//! for_model.model.id = "gpt-4.1".into();
//! let choice = compiler.choose(&Request::new(Selection::route(), for_model))?;
//! assert_eq!(choice.family, "gpt");
//!
//! // Why each component and tool is in or out.
//! let explanation = promptc::explain(&compiler, &request)?;
//! assert_eq!(explanation.family, "next-gen");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Inside, the stages follow the data: `load` reads files into specs keeping source spans,
//! the `workspace` holds them with their compiled templates, `validate` checks the whole,
//! `resolve` decides what one compile contains, `render` runs the templates, `compile` ties
//! them together, and `emit` writes the build matrix. Only what is re-exported here (and the
//! `model`, `problem` and `report` modules) is the API.
//!
//! The command line (`cli`) is behind the default `cli` feature: with
//! `default-features = false` the library builds without clap.

// Without the command line, the parts only it uses (writing outputs, reviewing revisions)
// are compiled but not called.
#![cfg_attr(not(feature = "cli"), allow(dead_code))]

mod ahead;
mod analysis;
mod bounded_memo;
mod built;
/// The `promptc` command line, for the binary; not part of the library API.
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod compile;
mod compiled;
mod confine;
mod cores;
mod deadline;
mod diagnostic;
mod emit;
mod follow;
mod init;
mod load;
mod loader;
mod looked_at;
pub mod model;
mod namespace;
mod parameter_schema;
mod path_error;
mod pointer;
pub mod problem;
#[cfg(feature = "cli")]
mod process_limits;
mod processor;
mod render;
pub mod report;
mod resolve;
mod review;
mod runtime;
pub mod schema;
mod scratch;
mod source;
mod span;
mod templates;
mod tokens;
mod unique_json;
mod validate;
mod workspace;

pub use analysis::stable_prefix::StablePrefix;
pub use analysis::stats::{PromptStats, prompt_stats};
pub use compile::explain::{ConditionReport, Explanation, Item, explain};
pub use compile::{
    Choice, Compiler, FamilyListing, FamilyRouting, Request, Route, RouteRule, SelectBy, Selection,
    VariantListing,
};
pub use compiled::{
    CompileError, Compiled, CompiledParameter, CompiledTool, CompiledTools, Section, SourceRange,
};
pub use diagnostic::{Diagnostic, Diagnostics, Label};
pub use emit::matrix::{
    MatrixEntry, MatrixRun, compile_all as compile_matrix, diagnostics as matrix_diagnostics,
};
pub use init::{InitError, init};
pub use load::rules::{RuleDecision, RulesReport, RulesRequest};
pub use load::specs::check_document;
pub use loader::{
    Loaded, apply_mcp_settings, assemble_rules, load_context_file, load_context_text,
    load_workspace,
};
pub use parameter_schema::ParameterSchema;
pub use path_error::{PathError, PathProblem};
pub use report::diagnostics::{DiagnosticRecord, RecordLabel, RecordLocation};
pub use resolve::date::SourceDateEpoch;
pub use runtime::{
    AgentRequest, Failure, NOT_DATA_MARK, NotData, OverBudget, Part, REQUEST_DEPTH, Response,
    Runtime, SharedCompiled, Step, TOO_DEEP,
};
pub use source::{SourceFile, SourceId, Sources};
pub use span::Span;
pub use tokens::Encoding;
pub use workspace::Workspace;

/// Internals the fuzz targets drive directly. Not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::templates::Templates;
    pub use crate::templates::meant::{known, meant};
}
