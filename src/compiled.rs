//! The result of one compile: the prompt and its parts.

use std::sync::Arc;

use serde::Serialize;

use crate::diagnostic::Diagnostics;
use crate::model::ModelConfig;
use crate::parameter_schema::ParameterSchema;
use crate::problem::{Problem, Severity};

/// Why a compile produced no prompt.
#[derive(Debug)]
pub enum CompileError {
    /// The selection names no variant (a usage problem: nothing in the files is wrong).
    Selection(Problem),
    /// Rendering failed; the diagnostics point into the workspace's files.
    Diagnostics(Diagnostics),
    /// Loading the workspace found errors (in the diagnostics it returned): it does not
    /// compile until they are fixed.
    InvalidWorkspace,
}

/// One line for a log or an error chain; the diagnostics themselves render with
/// [`crate::report::human`].
impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::Selection(problem) => write!(f, "{problem}"),
            CompileError::Diagnostics(diagnostics) => {
                let errors: Vec<_> = diagnostics
                    .iter()
                    .filter(|d| d.severity() == Severity::Error)
                    .collect();
                let count = errors.len();
                match errors.iter().min_by_key(|d| (d.span.source, d.span.start)) {
                    Some(first) if count > 1 => {
                        write!(f, "{} (and {} more errors)", first.problem, count - 1)
                    }
                    Some(first) => write!(f, "{}", first.problem),
                    None => f.write_str("the prompt did not compile"),
                }
            }
            CompileError::InvalidWorkspace => {
                f.write_str("the workspace has errors: fix what loading reported, then compile")
            }
        }
    }
}

impl std::error::Error for CompileError {}

#[derive(Clone, Debug, Serialize)]
pub struct Compiled {
    pub family: String,
    pub variant: String,
    pub version: Option<String>,
    /// The final prompt, post-processed.
    pub prompt: String,
    pub sections: Vec<Section>,
    /// Shared with the render memo and with every other compile that documents the same
    /// tools over the same values: copying and freeing a thousand tools per compile took
    /// about two fifths of the full scale matrix's `validate`.
    pub tools: CompiledTools,
    pub model: ModelConfig,
    /// Workspace files this prompt was compiled from (the context aside), sorted.
    pub inputs: Vec<String>,
    /// For a variant with native tool calls: the provider shape of `tool_definitions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialect: Option<&'static str>,
    /// For a variant with native tool calls: the tool definitions to send with the prompt,
    /// as the provider's API takes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_definitions: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Section {
    pub id: String,
    pub slot: String,
    /// Whether the section is in the prompt, and why not.
    pub included: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The template file (or `file#field` for inline templates) it was rendered from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Where that template's text lies: file and line range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRange>,
    pub text: String,
}

/// A range of lines of a workspace file (1-based, inclusive).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceRange {
    pub file: String,
    pub first_line: usize,
    pub last_line: usize,
}

impl SourceRange {
    pub fn of(span: crate::span::Span, sources: &crate::source::Sources) -> Self {
        let file = sources.get(span.source);
        let (first_line, _) = file.line_col(span.start);
        // A range ending with a newline ends on the line before it.
        let end = if span.end > span.start && file.text[..span.end].ends_with('\n') {
            span.end - 1
        } else {
            span.end
        };
        let (last_line, _) = file.line_col(end);
        Self {
            file: file.path.to_string_lossy().into_owned(),
            first_line,
            last_line,
        }
    }

    /// The lines of a whole file's value (`span` is its root's), from its first line of
    /// content: a reader sent to where a component or tool is written wants its keys, not
    /// the `#:schema` comment or the blank lines above them.
    pub fn of_document(span: crate::span::Span, sources: &crate::source::Sources) -> Self {
        let text = &sources.get(span.source).text;
        let mut start = span.start;
        while let Some(rest) = text.get(start..span.end) {
            let line_end = rest.find('\n').map_or(rest.len(), |newline| newline + 1);
            let line = rest[..line_end].trim();
            let trivia = line.is_empty() || line.starts_with('#') || line.starts_with("//");
            if line_end == rest.len() || !trivia {
                break;
            }
            start += line_end;
        }
        Self::of(
            crate::span::Span::new(span.source, start..span.end),
            sources,
        )
    }
}

/// The tools a prompt documents, in order: a slice, shared rather than copied between the
/// compiles that document the same tools over the same values.
#[derive(Clone, Debug, Default)]
pub struct CompiledTools(Arc<[CompiledTool]>);

impl CompiledTools {
    /// Whether both are the one list, not merely equal lists (as `Arc::ptr_eq`).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl std::ops::Deref for CompiledTools {
    type Target = [CompiledTool];

    fn deref(&self) -> &[CompiledTool] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a CompiledTools {
    type Item = &'a CompiledTool;
    type IntoIter = std::slice::Iter<'a, CompiledTool>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl From<Vec<CompiledTool>> for CompiledTools {
    fn from(tools: Vec<CompiledTool>) -> Self {
        Self(tools.into())
    }
}

impl Serialize for CompiledTools {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct CompiledTool {
    pub id: String,
    pub name: String,
    /// `generic`, or the family whose spec was used.
    pub spec: String,
    /// Whether `spec` names an entry of the tool's `families` (a family may be called
    /// `generic` too), not the generic spec.
    #[serde(skip)]
    pub from_family: bool,
    /// The tool's file and the lines of the spec used.
    pub source: SourceRange,
    pub description: String,
    pub parameters: Vec<CompiledParameter>,
    /// For one tool of a `for_each` spec: the index of its item in the list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
}

/// The fields of a tool's value as templates see it (`tool` in a tool format, each item of
/// `tools`): [`CompiledTool`] serialized, with every field it may have. A test holds it to
/// what serializing gives.
pub fn tool_value_shape() -> &'static serde_json::Value {
    static SHAPE: std::sync::LazyLock<serde_json::Value> = std::sync::LazyLock::new(|| {
        serde_json::json!({
            "id": "",
            "name": "",
            "spec": "",
            "source": { "file": "", "first_line": 0, "last_line": 0 },
            "description": "",
            "parameters": [{
                "name": "",
                "required": false,
                "type": "",
                "instruction": "",
                "usage": "",
                "note": "",
                // A JSON Schema: any keyword may be below it.
                "schema": {},
            }],
            "item": 0,
        })
    });
    &SHAPE
}

#[derive(Clone, Debug, Serialize)]
pub struct CompiledParameter {
    pub name: String,
    pub required: bool,
    #[serde(rename = "type")]
    pub kind: String,
    pub instruction: String,
    pub usage: String,
    /// The parameter's note, also added to its tool's description ("" without one).
    pub note: String,
    /// Its JSON Schema beyond `type`, for native tool definitions: `items`, `properties`,
    /// `enum` and the free `schema` keywords.
    /// Shared by every tool that uses the same shared parameter.
    #[serde(skip_serializing_if = "ParameterSchema::is_empty")]
    pub schema: ParameterSchema,
}

#[cfg(test)]
mod tests {
    use super::SourceRange;
    use crate::source::Sources;
    use crate::span::Span;

    fn first_line(text: &str) -> usize {
        let mut sources = Sources::default();
        let id = sources.add("file".into(), text.to_string());
        SourceRange::of_document(Span::new(id, 0..text.len()), &sources).first_line
    }

    #[test]
    fn a_document_s_range_begins_at_its_first_line_of_content() {
        assert_eq!(first_line("#:schema ../s.json\nid = \"a\"\n"), 2);
        assert_eq!(
            first_line("#:schema ../s.json\n\n  # why\nid = \"a\"\nx = 1\n"),
            4
        );
        assert_eq!(first_line("// comment\n{\n  \"id\": \"a\"\n}\n"), 2);
        assert_eq!(first_line("id: a\n# later comment\n"), 1);
        // A file of comments alone keeps its last line rather than pointing past the end.
        assert_eq!(first_line("# one\n# two\n"), 2);
        assert_eq!(first_line(""), 1);
    }

    /// The keys of every table of `value`, each with its path (a list's items as the list).
    fn keys(value: &serde_json::Value, path: &str, out: &mut std::collections::BTreeSet<String>) {
        match value {
            serde_json::Value::Object(fields) => {
                for (key, field) in fields {
                    let path = format!("{path}.{key}");
                    keys(field, &path, out);
                    out.insert(path);
                }
            }
            serde_json::Value::Array(items) => {
                for item in items {
                    keys(item, path, out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn the_tool_value_shape_has_the_fields_a_tool_serializes_to() {
        use super::{CompiledParameter, CompiledTool, tool_value_shape};
        let parameter = CompiledParameter {
            name: "path".into(),
            required: true,
            kind: "string".into(),
            instruction: "i".into(),
            usage: "u".into(),
            note: "n".into(),
            schema: serde_json::json!({ "enum": ["a"] })
                .as_object()
                .cloned()
                .unwrap()
                .into(),
        };
        let tool = CompiledTool {
            id: "read".into(),
            name: "read".into(),
            spec: "generic".into(),
            from_family: false,
            source: SourceRange {
                file: "tools/read.toml".into(),
                first_line: 1,
                last_line: 2,
            },
            description: "d".into(),
            parameters: vec![parameter],
            item: Some(0),
        };
        let mut serialized = std::collections::BTreeSet::new();
        keys(&serde_json::to_value(&tool).unwrap(), "", &mut serialized);
        // What a parameter's schema holds is its own: only the key itself is the shape's.
        serialized.retain(|path| !path.starts_with(".parameters.schema."));
        let mut shape = std::collections::BTreeSet::new();
        keys(tool_value_shape(), "", &mut shape);
        assert_eq!(shape, serialized);
    }
}
