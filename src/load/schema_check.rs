//! JSON Schema validation of every data file, with each error mapped back to the key or value
//! it is about.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, ValidationError, Validator};
use serde_json::Value;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::Document;
use crate::model::{ID_PATTERN, NAME_PATTERN, OUTPUT_PATTERN, PostprocessRule};
use crate::namespace::closest;
use crate::pointer::child_pointer;
use crate::problem::{Form, InvalidValue, Kind, Problem};
use crate::schema::validation_schema;
use crate::span::Span;

/// One compiled validator per kind of file, each built once per process, when first needed.
pub struct SchemaValidators {
    /// By `Kind::ALL`'s order. `None` in a cell only if promptc's own schema failed to
    /// compile, a bug the test suite catches; files of that kind then go unchecked.
    validators: [OnceLock<Option<(Value, Validator)>>; Kind::ALL.len()],
}

impl SchemaValidators {
    /// The validators of the process. Compiling the schemas costs more than checking a small
    /// workspace against them (about 4 ms for the five), so each is built on first use, and
    /// [`SchemaValidators::build_ahead`] builds them while the files are being read.
    pub fn shared() -> &'static Self {
        static SHARED: SchemaValidators = SchemaValidators {
            validators: [const { OnceLock::new() }; Kind::ALL.len()],
        };
        &SHARED
    }

    /// Builds, on another thread, the validators a workspace load needs: the load reads and
    /// parses the files meanwhile. A load that reaches a kind while it is being built waits
    /// for it; one not begun yet (or every kind, when no thread can be started) it builds
    /// itself. A clean load checks its files in the reverse of this thread's order, so that
    /// the two build the last kinds at once rather than one after the other.
    /// Only the first call starts a thread: the command line calls this once its arguments
    /// are parsed, and the load calls it again.
    pub fn build_ahead() {
        static STARTED: AtomicBool = AtomicBool::new(false);
        let validators = Self::shared();
        if STARTED.swap(true, Ordering::Relaxed)
            || validators
                .validators
                .iter()
                .all(|cell| cell.get().is_some())
        {
            return;
        }
        let _ = std::thread::Builder::new()
            .name("schemas".into())
            .spawn(move || {
                for kind in Kind::ALL {
                    validators.get(kind);
                }
            });
    }

    fn get(&self, kind: Kind) -> Option<&(Value, Validator)> {
        let index = Kind::ALL.iter().position(|&k| k == kind)?;
        self.validators[index].get_or_init(|| build(kind)).as_ref()
    }

    /// Whether a document conforms, with nothing to report: what [`Self::check`] accepts
    /// without a diagnostic, at the cost of a plain validation. Nothing is vouched for of a
    /// kind whose validator failed to build.
    pub fn conforms(&self, kind: Kind, document: &Document) -> bool {
        self.get(kind).is_some_and(|(_, validator)| {
            validator.is_valid(&document.value)
                && misplaced_integral_floats(validator, &document.value).is_empty()
        })
    }

    /// Validates a document; returns whether it conforms.
    pub fn check(&self, kind: Kind, document: &Document, diagnostics: &mut Diagnostics) -> bool {
        let Some((schema, validator)) = self.get(kind) else {
            return true;
        };
        let errors: Vec<ValidationError<'_>> = validator.iter_errors(&document.value).collect();
        // A misspelt required key is one problem, not two: the unknown key suggests the
        // field, so "missing field" is not said as well.
        let misspelt: Vec<(String, String)> = errors
            .iter()
            .filter_map(|error| match error.kind() {
                ValidationErrorKind::AdditionalProperties { unexpected } => {
                    let expected = expected_keys(schema, error.schema_path().as_str());
                    let pointer = error.instance_path().as_str().to_string();
                    Some(
                        unexpected
                            .iter()
                            .filter_map(|key| closest(key, &expected))
                            .map(|field| (pointer.clone(), field))
                            .collect::<Vec<_>>(),
                    )
                }
                _ => None,
            })
            .flatten()
            .collect();
        for error in &errors {
            if let ValidationErrorKind::Required { property } = error.kind() {
                let at = (
                    error.instance_path().as_str().to_string(),
                    property.as_str().unwrap_or_default().to_string(),
                );
                if misspelt.contains(&at) {
                    continue;
                }
            }
            report(error, schema, document, diagnostics);
        }
        errors.is_empty() && integral_floats_fit(validator, document, diagnostics)
    }
}

fn build(kind: Kind) -> Option<(Value, Validator)> {
    let schema = validation_schema(kind);
    // The schemas are generated from our own types: failing to compile one is a bug in
    // promptc, caught by the test suite, not something a user can cause.
    let validator = validator_for(&schema)?;
    Some((schema, validator))
}

fn validator_for(schema: &Value) -> Option<Validator> {
    jsonschema::options()
        .with_draft(Draft::Draft7)
        // For `format = "date"`: real calendar dates.
        .should_validate_formats(true)
        .with_keyword("pattern", |_, pattern, _| {
            let pattern = pattern
                .as_str()
                .ok_or_else(|| ValidationError::custom("a pattern is a string"))?;
            let regex = PATTERNS
                .get(pattern, || build_pattern(pattern))
                .map_err(ValidationError::custom)?;
            Ok(Box::new(PatternKeyword {
                pattern: pattern.to_string(),
                regex,
            }))
        })
        .offline()
        .build(schema)
        .ok()
}

/// `pattern`, checked with a regex of promptc's own making rather than jsonschema's. The
/// schemas' patterns are plain character classes; jsonschema builds each with the regex
/// crate's full configuration, a full DFA and a literal prefilter beside the lazy one, and
/// builds it again for every schema that holds it: thirteen builds of five patterns, about a
/// third of the time the five validators took to build, on the thread that builds them while
/// the load reads the files (and competes with it for a core). Here each is built once per
/// process, its lazy DFA alone (see [`build_pattern`]).
struct PatternKeyword {
    pattern: String,
    regex: regex_automata::meta::Regex,
}

impl<'i> jsonschema::Keyword<'i> for PatternKeyword {
    /// A mismatch is reported with the pattern as its message: [`report`] reads it back to
    /// say what form the value should have.
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if self.is_valid(instance) {
            Ok(())
        } else {
            Err(ValidationError::custom(self.pattern.clone()))
        }
    }

    /// As JSON Schema's `pattern`: found anywhere in a string (the schemas anchor theirs),
    /// and any other value passes.
    fn is_valid(&self, instance: &'i Value) -> bool {
        instance
            .as_str()
            .is_none_or(|text| self.regex.is_match(text))
    }
}

/// The schemas' patterns, each built once per process.
static PATTERNS: crate::built::Built<regex_automata::meta::Regex> = crate::built::Built::new();

/// A schema's pattern, built as `matching` builds a model-id pattern (its lazy DFA alone).
fn build_pattern(pattern: &str) -> Result<regex_automata::meta::Regex, String> {
    // JSON Schema's patterns are ECMA-262's, which read `\d`, `\w` and `\b` as ASCII where the
    // regex crate reads them as Unicode (jsonschema translates them first). The schemas escape
    // only punctuation, which both read alike; a pattern that escapes anything else is refused
    // rather than checked with another meaning, and the test suite, which builds every
    // schema's validator, says so.
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\'
            && !chars
                .next()
                .is_some_and(|escaped| escaped.is_ascii_punctuation())
        {
            return Err(format!(
                "pattern `{pattern}` escapes more than punctuation, which ECMA-262 and the regex crate read differently"
            ));
        }
    }
    crate::templates::model_id::build_regex(pattern)
}

/// The pattern a value failed to match: [`PatternKeyword`]'s error, whose message is the
/// pattern (every validator is built with it in place of jsonschema's own `pattern`).
fn failed_pattern(kind: &ValidationErrorKind) -> Option<&str> {
    match kind {
        ValidationErrorKind::Custom { keyword, message } if keyword == "pattern" => Some(message),
        _ => None,
    }
}

/// The pattern or format a value failed: what [`form_of`] names.
fn wanted_form(kind: &ValidationErrorKind) -> Option<&str> {
    match kind {
        ValidationErrorKind::Format { format } => Some(format),
        kind => failed_pattern(kind),
    }
}

/// Whether a value holds a float with no fraction (`3.0`) anywhere.
fn has_integral_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64() && n.as_f64().is_some_and(|f| f.fract() == 0.0),
        Value::Array(items) => items.iter().any(has_integral_float),
        Value::Object(fields) => fields.values().any(has_integral_float),
        _ => false,
    }
}

/// JSON Schema counts `3.0` as an integer, but a float cannot become a count: without this
/// check `fuel = 100000.0` passed the schema and then failed to convert, with a message
/// pointing at the whole file. Every float with no fraction is replaced by 0.5 (in
/// one copy of the document, validated once); a type error where one stood means an
/// integer was expected there.
fn integral_floats_fit(
    validator: &Validator,
    document: &Document,
    diagnostics: &mut Diagnostics,
) -> bool {
    let misplaced = misplaced_integral_floats(validator, &document.value);
    for pointer in &misplaced {
        diagnostics.push(Diagnostic::new(
            Problem::WrongType {
                expected: "an integer".into(),
                found: "a number with a decimal point".into(),
            },
            document.value_span(pointer),
        ));
    }
    misplaced.is_empty()
}

/// Where a float with no fraction stands for an integer (see [`integral_floats_fit`]).
fn misplaced_integral_floats(validator: &Validator, value: &Value) -> Vec<String> {
    fn shift(value: &mut Value, pointer: &str, found: &mut Vec<String>) {
        match value {
            Value::Number(n) if n.is_f64() => {
                // 0.5 rather than f + 0.5, which is f again for large floats.
                if n.as_f64().is_some_and(|f| f.fract() == 0.0)
                    && let Some(shifted) = serde_json::Number::from_f64(0.5)
                {
                    *n = shifted;
                    found.push(pointer.to_string());
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    shift(item, &format!("{pointer}/{index}"), found);
                }
            }
            Value::Object(fields) => {
                for (key, item) in fields.iter_mut() {
                    shift(item, &child_pointer(pointer, key), found);
                }
            }
            _ => {}
        }
    }
    // Most documents hold no such float: they are not copied.
    if !has_integral_float(value) {
        return Vec::new();
    }
    let mut probe = value.clone();
    let mut shifted = Vec::new();
    shift(&mut probe, "", &mut shifted);
    if shifted.is_empty() {
        return Vec::new();
    }
    let shifted: std::collections::HashSet<String> = shifted.into_iter().collect();
    validator
        .iter_errors(&probe)
        .filter(|error| {
            matches!(error.kind(), ValidationErrorKind::Type { .. })
                && shifted.contains(error.instance_path().as_str())
        })
        .map(|error| error.instance_path().as_str().to_string())
        .collect()
}

fn report(error: &ValidationError<'_>, schema: &Value, doc: &Document, out: &mut Diagnostics) {
    let pointer = error.instance_path().as_str().to_string();
    let at = doc.value_span(&pointer);
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let expected = expected_keys(schema, error.schema_path().as_str());
            for key in unexpected {
                out.push(Diagnostic::new(
                    Problem::UnknownKey {
                        key: key.clone(),
                        suggestion: closest(key, &expected),
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
            at,
        )),
        ValidationErrorKind::Enum { options } => {
            let allowed: Vec<String> = options
                .as_array()
                .map(|values| values.iter().map(plain).collect())
                .unwrap_or_default();
            let suggestion = error
                .instance()
                .as_str()
                .and_then(|value| closest(value, &allowed));
            out.push(Diagnostic::new(
                Problem::InvalidValue(InvalidValue::NotOneOf {
                    value: quoted(error.instance()),
                    allowed,
                    suggestion,
                }),
                at,
            ));
        }
        kind @ (ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit }
        | ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit }) => {
            let minimum = matches!(
                kind,
                ValidationErrorKind::Minimum { .. } | ValidationErrorKind::ExclusiveMinimum { .. }
            );
            out.push(Diagnostic::new(
                Problem::InvalidValue(InvalidValue::OutOfRange {
                    value: quoted(error.instance()),
                    minimum,
                    limit: plain(limit),
                }),
                at,
            ));
        }
        // Names and patterns ask for at least one character; an empty one reads as empty.
        kind if (matches!(kind, ValidationErrorKind::MinLength { .. })
            || failed_pattern(kind).is_some())
            && error.instance().as_str() == Some("") =>
        {
            out.push(Diagnostic::new(
                Problem::InvalidValue(InvalidValue::Empty),
                at,
            ));
        }
        kind if wanted_form(kind).is_some() => {
            out.push(Diagnostic::new(
                Problem::InvalidValue(InvalidValue::BadForm {
                    value: quoted(error.instance()),
                    key: false,
                    expected: form_of(wanted_form(kind).unwrap_or_default()),
                }),
                at,
            ));
        }
        ValidationErrorKind::PropertyNames { error: inner } => {
            // The inner error is about the key itself, a string.
            let key = inner.instance().as_str().unwrap_or_default().to_string();
            let expected = match failed_pattern(inner.kind()) {
                Some(pattern) => form_of(pattern),
                None => Form::Described(inner.to_string()),
            };
            out.push(Diagnostic::new(
                Problem::InvalidValue(InvalidValue::BadForm {
                    value: format!("`{key}`"),
                    key: true,
                    expected,
                }),
                doc.key_span(&child_pointer(&pointer, &key)),
            ));
        }
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            one_of(error, context, schema, doc, out);
        }
        _ => out.push(Diagnostic::new(
            Problem::InvalidValue(InvalidValue::Schema {
                message: error.to_string(),
            }),
            at,
        )),
    }
}

/// A value that matches none of a choice's branches. The choices promptc's schemas make are
/// of two shapes: constants (an encoding: `"o200k"` or `"cl100k"`) and tables tagged by a
/// `rule` (post-processing rules). Either way the message names what is allowed.
fn one_of(
    error: &ValidationError<'_>,
    branches: &[Vec<ValidationError<'static>>],
    schema: &Value,
    doc: &Document,
    out: &mut Diagnostics,
) {
    let pointer = error.instance_path().as_str().to_string();
    let instance = error.instance();
    let constants = |at: &str| -> Vec<String> {
        branches
            .iter()
            .flatten()
            .filter(|e| e.instance_path().as_str() == at)
            .filter_map(|e| match e.kind() {
                ValidationErrorKind::Constant { expected_value } => Some(plain(expected_value)),
                _ => None,
            })
            .collect()
    };
    let not_one_of = |value: &str, allowed: Vec<String>| {
        Problem::InvalidValue(InvalidValue::NotOneOf {
            value: format!("`{value}`"),
            suggestion: closest(value, &allowed),
            allowed,
        })
    };
    let Some(fields) = instance.as_object() else {
        let allowed = constants(&pointer);
        let problem = match instance.as_str() {
            Some(value) if !allowed.is_empty() => not_one_of(value, allowed),
            _ => {
                let expected = branches
                    .iter()
                    .flatten()
                    .find_map(|e| match e.kind() {
                        ValidationErrorKind::Type { kind } => Some(type_names(kind)),
                        _ => None,
                    })
                    .unwrap_or_else(|| "a table".into());
                Problem::WrongType {
                    expected,
                    found: json_type(instance).into(),
                }
            }
        };
        out.push(Diagnostic::new(problem, doc.value_span(&pointer)));
        return;
    };
    let Some(rule) = fields.get("rule") else {
        out.push(Diagnostic::new(
            Problem::MissingField {
                field: "rule".into(),
            },
            doc.key_span(&pointer),
        ));
        return;
    };
    // The branch whose tag matched: its errors are the ones to report. Only an error at the
    // `rule` itself says a branch is not this rule's; a bad value deeper in the table (a
    // guard's `side`) is an error of the matched branch.
    let rule_pointer = child_pointer(&pointer, "rule");
    let matched = branches.iter().find(|branch| {
        !branch
            .iter()
            .any(|e| e.instance_path().as_str() == rule_pointer)
    });
    match (matched, rule.as_str()) {
        (Some(branch), _) if !branch.is_empty() => {
            for inner in branch {
                report(inner, schema, doc, out);
            }
        }
        (_, Some(rule)) => out.push(Diagnostic::new(
            not_one_of(rule, PostprocessRule::NAMES.map(String::from).to_vec()),
            doc.value_span(&rule_pointer),
        )),
        (_, None) => out.push(Diagnostic::new(
            Problem::WrongType {
                expected: "a string".into(),
                found: json_type(rule).into(),
            },
            doc.value_span(&rule_pointer),
        )),
    }
}

/// A value as a message shows it: strings in backticks without JSON quotes, other values as
/// written.
fn quoted(value: &Value) -> String {
    format!("`{}`", plain(value))
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The form a pattern or format asks for. The patterns are the ones promptc's own types
/// declare; any other is shown as it is.
fn form_of(pattern: &str) -> Form {
    match pattern {
        ID_PATTERN => Form::Id,
        NAME_PATTERN => Form::Name,
        OUTPUT_PATTERN => Form::OutputPath,
        "date" => Form::Date,
        other => Form::Matching(other.to_string()),
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

pub(crate) fn article(name: &str) -> String {
    match name {
        // TOML calls objects tables, and YAML users read the same word in every message.
        "object" => "a table".into(),
        "array" | "integer" => format!("an {name}"),
        _ => format!("a {name}"),
    }
}

pub(crate) fn json_type(value: &Value) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `pattern` in a schema, in the order met.
    fn patterns_in(node: &Value, into: &mut Vec<String>) {
        match node {
            Value::Object(fields) => {
                if let Some(Value::String(pattern)) = fields.get("pattern")
                    && !into.contains(pattern)
                {
                    into.push(pattern.clone());
                }
                fields.values().for_each(|value| patterns_in(value, into));
            }
            Value::Array(items) => items.iter().for_each(|item| patterns_in(item, into)),
            _ => {}
        }
    }

    /// The schemas' patterns accept and refuse what jsonschema's own `pattern` keyword does,
    /// on names of every form the patterns tell apart and on text around their edges
    /// (non-ASCII letters, a final line break, an empty string, a value that is not text).
    #[test]
    fn the_schemas_patterns_are_checked_as_jsonschema_checks_them() {
        let mut patterns = Vec::new();
        for kind in Kind::ALL {
            patterns_in(&validation_schema(kind), &mut patterns);
        }
        assert!(patterns.len() >= 5, "{patterns:?}");
        let names = "generic next-gen gpt_5 o3 v1.2 a+b x@1.0 gpt@4.1+beta prompts/next-gen.md \
                     a/b/c.md a/b.txt ../x.md /abs.md _x 9lives -dash .dot café ß İd 名前 \
                     emoji😀 UPPER_case9 ٣ x٣";
        let edges = [
            "with space",
            "tab\there",
            "line\n",
            "",
            " ",
            "a\u{0}b",
            "a\u{2028}b",
        ];
        let samples: Vec<&str> = names.split_whitespace().chain(edges).collect();
        for pattern in &patterns {
            let schema = serde_json::json!({ "pattern": pattern });
            let ours = validator_for(&schema).unwrap_or_else(|| panic!("{pattern}"));
            let theirs = jsonschema::options()
                .with_draft(Draft::Draft7)
                .with_pattern_options(jsonschema::PatternOptions::regex())
                .build(&schema)
                .unwrap_or_else(|error| panic!("{pattern}: {error}"));
            for &sample in &samples {
                let value = Value::from(sample);
                assert_eq!(
                    ours.is_valid(&value),
                    theirs.is_valid(&value),
                    "{pattern} on {sample:?}"
                );
                let errors: Vec<_> = ours.iter_errors(&value).collect();
                assert_eq!(errors.is_empty(), ours.is_valid(&value), "{pattern}");
                for error in &errors {
                    assert_eq!(failed_pattern(error.kind()), Some(pattern.as_str()));
                    assert_eq!(error.instance().as_str(), Some(sample));
                }
            }
            assert!(ours.is_valid(&Value::from(3)) && ours.is_valid(&Value::Null));
        }
        // A pattern that escapes a class, which the two engines read differently, is refused.
        for pattern in [r"^\d+$", r"^\w$", r"\bx"] {
            assert!(build_pattern(pattern).is_err(), "{pattern}");
        }
        assert!(build_pattern(r"^a\.md\-\/\\$").is_ok());
    }
}
