//! JSON Schema validation of every data file, with each error mapped back to the key or value
//! it is about.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, ValidationError, Validator};
use serde_json::Value;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::{Document, child_pointer};
use crate::model::PostprocessRule;
use crate::problem::{Kind, Problem};
use crate::schema::schema_for;
use crate::span::Span;

/// One compiled validator per kind of file, built once per run.
pub struct SchemaValidators {
    validators: Vec<(Kind, Value, Validator)>,
}

impl SchemaValidators {
    pub fn new() -> Self {
        let validators = Kind::ALL
            .into_iter()
            .filter_map(|kind| {
                let schema = schema_for(kind);
                // The schemas are generated from our own types: failing to compile one is a
                // bug in promptc, caught by the test suite, not something a user can cause.
                let validator = jsonschema::options()
                    .with_draft(Draft::Draft7)
                    .offline()
                    .build(&schema)
                    .ok()?;
                Some((kind, schema, validator))
            })
            .collect();
        Self { validators }
    }

    /// Validates a document; returns whether it conforms.
    pub fn check(&self, kind: Kind, document: &Document, diagnostics: &mut Diagnostics) -> bool {
        let Some((_, schema, validator)) = self.validators.iter().find(|(k, ..)| *k == kind) else {
            return true;
        };
        let mut valid = true;
        for error in validator.iter_errors(&document.value) {
            valid = false;
            report(&error, schema, document, diagnostics);
        }
        valid
    }
}

impl Default for SchemaValidators {
    fn default() -> Self {
        Self::new()
    }
}

fn report(error: &ValidationError<'_>, schema: &Value, doc: &Document, out: &mut Diagnostics) {
    let pointer = error.instance_path().as_str().to_string();
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let expected = expected_keys(schema, error.schema_path().as_str());
            for key in unexpected {
                out.push(Diagnostic::new(
                    Problem::UnknownKey {
                        key: key.clone(),
                        expected: expected.clone(),
                    },
                    doc.key_span(&child_pointer(&pointer, key)),
                ));
            }
        }
        ValidationErrorKind::Required { property } => {
            let field = property.as_str().unwrap_or_default().to_string();
            let span = if pointer.is_empty() {
                Span::file_start(doc.source)
            } else {
                doc.key_span(&pointer)
            };
            out.push(Diagnostic::new(Problem::MissingField { field }, span));
        }
        ValidationErrorKind::Type { kind } => out.push(Diagnostic::new(
            Problem::WrongType {
                expected: type_names(kind),
                found: json_type(error.instance()).into(),
            },
            doc.value_span(&pointer),
        )),
        ValidationErrorKind::Enum { options } => {
            let choices: Vec<String> = options
                .as_array()
                .map(|values| values.iter().map(Value::to_string).collect())
                .unwrap_or_default();
            out.push(Diagnostic::new(
                Problem::InvalidValue {
                    message: format!("{} is not one of {}", error.instance(), choices.join(", ")),
                },
                doc.value_span(&pointer),
            ));
        }
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            // A tagged choice (a post-processing rule): report the errors of the branch whose
            // tag matched, or say the tag is unknown.
            let matched = context.iter().find(|branch| {
                !branch.iter().any(|e| {
                    matches!(e.kind(), ValidationErrorKind::Constant { .. })
                        || matches!(e.kind(), ValidationErrorKind::Enum { .. })
                })
            });
            match matched {
                Some(branch) if !branch.is_empty() => {
                    for inner in branch {
                        report(inner, schema, doc, out);
                    }
                }
                _ => {
                    let rule = error.instance().get("rule").and_then(Value::as_str);
                    let message = match rule {
                        Some(rule) => format!(
                            "unknown rule `{rule}`; the rules are {}",
                            PostprocessRule::NAMES.join(", ")
                        ),
                        None => format!("{} matches none of the allowed forms", error.instance()),
                    };
                    let at = if rule.is_some() {
                        child_pointer(&pointer, "rule")
                    } else {
                        pointer.clone()
                    };
                    out.push(Diagnostic::new(
                        Problem::InvalidValue { message },
                        doc.value_span(&at),
                    ));
                }
            }
        }
        _ => out.push(Diagnostic::new(
            Problem::InvalidValue {
                message: error.to_string(),
            },
            doc.value_span(&pointer),
        )),
    }
}

/// The property names allowed where an `additionalProperties` error was raised, found by
/// walking the schema path (following local `$ref`s) to the object schema.
fn expected_keys(schema: &Value, schema_path: &str) -> Vec<String> {
    let mut node = schema;
    let segments: Vec<&str> = schema_path.split('/').skip(1).collect();
    let parent = segments.len().saturating_sub(1);
    for segment in &segments[..parent] {
        node = if *segment == "$ref" {
            match node
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
                .and_then(|p| schema.pointer(p))
            {
                Some(target) => target,
                None => return Vec::new(),
            }
        } else {
            match node.get(*segment).or_else(|| {
                segment
                    .parse::<usize>()
                    .ok()
                    .and_then(|index| node.get(index))
            }) {
                Some(next) => next,
                None => return Vec::new(),
            }
        };
    }
    node.get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

fn type_names(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => article(&t.to_string()),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|t| article(&t.to_string()))
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

fn article(name: &str) -> String {
    match name {
        "null" => "null".into(),
        "array" | "integer" | "object" => format!("an {name}"),
        _ => format!("a {name}"),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}
