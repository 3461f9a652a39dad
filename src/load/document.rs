//! A parsed data file: its value as JSON (what the schema and serde see) plus the source
//! position of every key and value, addressed by JSON pointer. This is what lets a schema
//! error or a dangling reference point at the exact key in TOML or YAML.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::problem::Problem;
use crate::source::{SourceFile, SourceId};
use crate::span::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Toml,
    Yaml,
    Json,
}

impl Format {
    /// The data format of a path, by extension; `None` for files that are not data files
    /// (templates, notes).
    pub fn of(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()? {
            "toml" => Some(Format::Toml),
            "yaml" | "yml" => Some(Format::Yaml),
            "json" => Some(Format::Json),
            _ => None,
        }
    }
}

/// Where one node of a document sits in the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Location {
    /// The key that introduced the node, for map entries.
    pub key: Option<Range<usize>>,
    pub value: Range<usize>,
}

#[derive(Clone, Debug)]
pub struct Document {
    pub source: SourceId,
    pub value: Value,
    locations: HashMap<String, Location>,
}

impl Document {
    pub fn parse(source: SourceId, file: &SourceFile, format: Format) -> Result<Self, Diagnostic> {
        if file.text.trim().is_empty() {
            return Err(Diagnostic::new(
                Problem::EmptyFile,
                Span::file_start(source),
            ));
        }
        let mut locations = HashMap::new();
        let value = match format {
            Format::Toml => super::toml_document::parse(&file.text, &mut locations),
            Format::Yaml => super::yaml_document::parse(file, &mut locations),
            // JSON is YAML 1.2: once serde_json accepts it, the YAML reader gives positions.
            Format::Json => parse_json(file)
                .map(|value| super::yaml_document::parse(file, &mut locations).unwrap_or(value)),
        }
        .map_err(|(problem, range)| Diagnostic::new(problem, Span::new(source, range)))?;
        Ok(Self {
            source,
            value,
            locations,
        })
    }

    /// A document with no content, standing for a file that could not be read or parsed
    /// (reported already): its spans all point at the file's start.
    pub fn empty(source: SourceId) -> Self {
        Self {
            source,
            value: Value::Object(serde_json::Map::new()),
            locations: HashMap::new(),
        }
    }

    /// The span of the value at `pointer`, or of its nearest located ancestor.
    pub fn value_span(&self, pointer: &str) -> Span {
        let location = self.nearest(pointer);
        Span::new(self.source, location.map_or(0..0, |l| l.value.clone()))
    }

    /// Whether the file writes the node at `pointer` (a default it leaves out is not).
    pub fn writes(&self, pointer: &str) -> bool {
        self.locations.contains_key(pointer)
    }

    /// The span of the key that introduced the node at `pointer` (its value for list items),
    /// or of its nearest located ancestor.
    pub fn key_span(&self, pointer: &str) -> Span {
        let location = self.nearest(pointer);
        let range = location.map_or(0..0, |l| l.key.clone().unwrap_or_else(|| l.value.clone()));
        Span::new(self.source, range)
    }

    fn nearest(&self, pointer: &str) -> Option<&Location> {
        let mut pointer = pointer;
        loop {
            if let Some(location) = self.locations.get(pointer) {
                return Some(location);
            }
            if pointer.is_empty() {
                return None;
            }
            pointer = pointer.rfind('/').map_or("", |slash| &pointer[..slash]);
        }
    }
}

/// Syntax errors of JSON are serde_json's, at their line and column.
fn parse_json(file: &SourceFile) -> Result<Value, (Problem, Range<usize>)> {
    serde_json::from_str(&file.text).map_err(|error| {
        let offset = file.line_offset(error.line()) + error.column().saturating_sub(1);
        (
            Problem::ContextSyntax {
                message: error.to_string(),
            },
            offset..offset,
        )
    })
}

pub(super) type Locations = HashMap<String, Location>;

/// Converts a float to JSON, refusing NaN and infinities which JSON cannot hold.
pub(super) fn json_float(value: f64, text: &str) -> Result<Value, Problem> {
    serde_json::Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| Problem::UnsupportedNumber { text: text.into() })
}
