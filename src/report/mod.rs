//! Every rendering of a result as text, one file per report: diagnostics (rustc-style and
//! JSON), the prompt diff of two revisions, explain, and stats. The computations live with
//! their stages and hand their results here; how a result reads is decided only here.

pub mod diagnostics;
pub mod diff;
pub mod explain;
pub mod routing;
pub mod rules;
pub mod stats;
pub mod visible;
pub mod yaml;

pub use diagnostics::{github, human, json};

use serde::Serialize;

/// A value as an indented JSON document ending in a newline, as every `--format json` prints.
pub fn json_document<T: Serialize + ?Sized>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
