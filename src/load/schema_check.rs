//! JSON Schema validation of every data file, with each error mapped back to the key or value
//! it is about.

use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ErrorIterator, ValidationError};
use serde_json::Value;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::Document;
use crate::model::{ID_PATTERN, NAME_PATTERN, OUTPUT_PATTERN, PostprocessRule};
use crate::namespace::closest;
use crate::pointer::child_pointer;
use crate::problem::{Form, InvalidValue, Kind, Problem};
use crate::schema::validation_schema;
use crate::span::Span;

// The validators are generated from the committed schemas when promptc is built, rather than
// compiled from them at run time: building the five took about 3 ms of every load (a third of
// it checking promptc's own schemas against the draft's meta-schema), on a thread the load
// waited for. The schemas are `promptc schema`'s output, which a test keeps in step with the
// types; build.rs gives them to jsonschema's `validator` macro with their patterns checked by
// [`PatternKeyword`], and a change to one rebuilds its validator.
include!(concat!(env!("OUT_DIR"), "/schema_validators.rs"));

/// The keyword that stands for `pattern` in the generated validators (see build.rs).
const PATTERN_KEYWORD: &str = "x-promptc-pattern";

/// `pattern`, checked with a regex of promptc's own making rather than jsonschema's. The
/// schemas' patterns are plain character classes; jsonschema builds each with fancy-regex
/// over the regex crate's full configuration, and builds it again for every schema that holds
/// it: about 0.8 ms of every load, on the threads that check the files. Here each is built
/// once per process, its lazy DFA alone (see [`build_pattern`]), and [`build_patterns_ahead`]
/// builds them while the files are read.
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

/// The generated validators' factory of [`PatternKeyword`]s, called once for each place a
/// pattern stands, the first time a file reaches it. It fails only for a pattern
/// [`build_pattern`] refuses, which no committed schema holds (a test builds every one of
/// [`SCHEMA_PATTERNS`]); a generated validator whose factory failed would panic.
fn pattern_keyword<'a>(
    _: &'a serde_json::Map<String, Value>,
    pattern: &'a Value,
    _: jsonschema::paths::Location,
) -> Result<Box<dyn for<'i> jsonschema::Keyword<'i>>, ValidationError<'a>> {
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
}

/// The schemas' patterns, each built once per process.
static PATTERNS: crate::built::Built<regex_automata::meta::Regex> = crate::built::Built::new();

/// Builds the schemas' patterns on another thread: the command line starts this as soon as
/// it knows it will read a workspace, and the files are read meanwhile, on the core that
/// checks them once they are. It asks for the processor's features first (see
/// [`crate::processor`]).
pub fn build_patterns_ahead() {
    crate::ahead::run(|| {
        crate::processor::detect_features();
        for pattern in SCHEMA_PATTERNS {
            let _ = PATTERNS.get(pattern, || build_pattern(pattern));
        }
    });
}

/// A schema's pattern, built as `matching` builds a model-id pattern (its lazy DFA alone).
fn build_pattern(pattern: &str) -> Result<regex_automata::meta::Regex, String> {
    // JSON Schema's patterns are ECMA-262's, which read `\d`, `\w` and `\b` as ASCII where the
    // regex crate reads them as Unicode (jsonschema translates them first). The schemas escape
    // only punctuation, which both read alike; a pattern that escapes anything else is refused
    // rather than checked with another meaning, and the test suite, which builds every one
    // of `SCHEMA_PATTERNS`, says so.
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

/// A kind's generated validator.
#[derive(Clone, Copy)]
struct Validator {
    is_valid: fn(&Value) -> bool,
    iter_errors: for<'i> fn(&'i Value) -> ErrorIterator<'i>,
}

impl Validator {
    fn of(kind: Kind) -> Self {
        macro_rules! generated {
            ($schema:ident) => {
                Self {
                    is_valid: $schema::is_valid,
                    iter_errors: $schema::iter_errors,
                }
            };
        }
        match kind {
            Kind::Manifest => generated!(ManifestSchema),
            Kind::Variant => generated!(VariantSchema),
            Kind::Component => generated!(ComponentSchema),
            Kind::Tool => generated!(ToolSchema),
            Kind::Context => generated!(ContextSchema),
        }
    }

    fn is_valid(self, value: &Value) -> bool {
        (self.is_valid)(value)
    }

    fn iter_errors(self, value: &Value) -> ErrorIterator<'_> {
        (self.iter_errors)(value)
    }
}

/// The schema validation of the process: each kind's validator, and the schemas themselves,
/// which errors are explained from (the keys a table allows).
pub struct SchemaValidators {
    /// By `Kind::ALL`'s order, parsed when a file of that kind first has an error to report.
    schemas: [OnceLock<Value>; Kind::ALL.len()],
}

impl SchemaValidators {
    /// The validators of the process.
    pub fn shared() -> &'static Self {
        static SHARED: SchemaValidators = SchemaValidators {
            schemas: [const { OnceLock::new() }; Kind::ALL.len()],
        };
        &SHARED
    }

    /// The schema files of `kind` are checked against, read once per process.
    pub fn schema(&self, kind: Kind) -> &Value {
        let index = Kind::ALL.iter().position(|&k| k == kind).unwrap_or(0);
        self.schemas[index].get_or_init(|| validation_schema(kind))
    }

    /// Whether a document conforms, with nothing to report: what [`Self::check`] accepts
    /// without a diagnostic, at the cost of a plain validation.
    pub fn conforms(&self, kind: Kind, document: &Document) -> bool {
        let validator = Validator::of(kind);
        validator.is_valid(&document.value)
            && misplaced_integral_floats(validator, &document.value).is_empty()
    }

    /// Validates a document; returns whether it conforms.
    pub fn check(&self, kind: Kind, document: &Document, diagnostics: &mut Diagnostics) -> bool {
        let validator = Validator::of(kind);
        let errors: Vec<ValidationError<'_>> = validator.iter_errors(&document.value).collect();
        if errors.is_empty() {
            return integral_floats_fit(validator, document, diagnostics);
        }
        let schema = self.schema(kind);
        // A misspelt required key is one problem, not two: the unknown key suggests the
        // field, so "missing field" is not said as well.
        let any_required = errors
            .iter()
            .any(|error| matches!(error.kind(), ValidationErrorKind::Required { .. }));
        let misspelt: Vec<(String, String)> = errors
            .iter()
            .filter(|_| any_required)
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
        false
    }
}

impl SchemaValidators {
    /// The problems the schema of `kind` finds in `value` at `pointer` or under it, worded as
    /// for a file but with no place: what a value given on the command line (`--set`) breaks.
    pub fn problems_at(&self, kind: Kind, value: &Value, pointer: &str) -> Vec<Problem> {
        let validator = Validator::of(kind);
        let document = Document::unplaced(value.clone());
        let under = format!("{pointer}/");
        let mut found = Diagnostics::default();
        for error in validator.iter_errors(value) {
            let at = error.instance_path().as_str();
            if at == pointer || at.starts_with(&under) {
                report(&error, self.schema(kind), &document, &mut found);
            }
        }
        found
            .iter()
            .map(|diagnostic| diagnostic.problem.clone())
            .collect()
    }
}

/// The schema of an MCP listing file (`{"servers": {"<name>": {status, tools, …}}}`): each
/// server is the context's `McpServer`, whose definitions it takes from the context's schema.
fn mcp_listing_schema() -> Value {
    let context = validation_schema(Kind::Context);
    let mut definitions = context.get("definitions").cloned().unwrap_or(Value::Null);
    // A listed server gives what it offers; its name, command and `disabled` are the
    // settings' (a listing's own were taken and then replaced without a word).
    if let Some(definitions) = definitions.as_object_mut() {
        let mut listed = definitions.get("McpServer").cloned().unwrap_or(Value::Null);
        if let Some(properties) = listed.get_mut("properties").and_then(Value::as_object_mut) {
            properties.retain(|key, _| LISTED_SERVER_KEYS.contains(&key.as_str()));
        }
        definitions.insert("ListedServer".into(), listed);
    }
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "servers": {
                "type": "object",
                "additionalProperties": { "$ref": "#/definitions/ListedServer" },
            },
        },
        "definitions": definitions,
    })
}

/// What a listing says of a server: what it offers, its status, and the id tool names are
/// qualified with.
const LISTED_SERVER_KEYS: [&str; 6] = [
    "uid",
    "status",
    "tools",
    "resources",
    "resource_templates",
    "prompts",
];

impl SchemaValidators {
    /// Validates an MCP listing file (see `load::mcp_settings`) as a context's servers are,
    /// each problem at its place in the file, unknown keys with the near one; returns whether
    /// it conforms. Built on first use: few runs read a listing.
    pub fn check_mcp_listing(&self, document: &Document, diagnostics: &mut Diagnostics) -> bool {
        static LISTING: OnceLock<Option<(Value, jsonschema::Validator)>> = OnceLock::new();
        let Some((schema, validator)) = LISTING.get_or_init(|| {
            let schema = mcp_listing_schema();
            let validator = jsonschema::options()
                .with_keyword(PATTERN_KEYWORD, pattern_keyword)
                .build(&schema)
                .ok()?;
            Some((schema, validator))
        }) else {
            return true;
        };
        let mut conforms = true;
        for error in validator.iter_errors(&document.value) {
            conforms = false;
            report(&error, schema, document, diagnostics);
        }
        conforms
    }
}

/// The pattern a value failed to match: [`PatternKeyword`]'s error, whose message is the
/// pattern.
fn failed_pattern(kind: &ValidationErrorKind) -> Option<&str> {
    match kind {
        ValidationErrorKind::Custom { keyword, message } if keyword == PATTERN_KEYWORD => {
            Some(message)
        }
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
    validator: Validator,
    document: &Document,
    diagnostics: &mut Diagnostics,
) -> bool {
    let misplaced = misplaced_integral_floats(validator, &document.value);
    for pointer in &misplaced {
        diagnostics.push(Diagnostic::new(
            Problem::WrongType {
                expected: "an integer".into(),
                found: "a number written as a float".into(),
                instead: None,
            },
            document.value_span(pointer),
        ));
    }
    misplaced.is_empty()
}

/// Where a float with no fraction stands for an integer (see [`integral_floats_fit`]).
fn misplaced_integral_floats(validator: Validator, value: &Value) -> Vec<String> {
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
    // A key of the table at `pointer` that its `propertyNames` refuses: the generated
    // validators report the key's own error, where the run-time one wraps it.
    if error.schema_path().as_str().contains("/propertyNames/") {
        bad_key(error, &pointer, doc, out);
        return;
    }
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let expected: std::sync::Arc<[String]> =
                expected_keys(schema, error.schema_path().as_str()).into();
            for (index, key) in unexpected.iter().enumerate() {
                // Past what a file's report shows, the key is only counted: a suggestion for
                // each of a few hundred thousand took seconds.
                let told = index < crate::diagnostic::MAX_PROBLEMS_PER_FILE;
                let suggestion = told.then(|| closest(key, expected.iter())).flatten();
                let belongs_in = told
                    .then(|| {
                        table_with_key(schema, key, &pointer, |at| doc.writes(at)).or_else(|| {
                            suggestion
                                .is_none()
                                .then(|| free_table(schema, &pointer, key))
                                .flatten()
                                .map(|table| (table, false))
                        })
                    })
                    .flatten();
                let set_there = belongs_in.as_ref().is_some_and(|(_, set)| *set);
                out.push(Diagnostic::new(
                    Problem::UnknownKey {
                        key: key.clone(),
                        suggestion,
                        expected: expected.clone(),
                        belongs_in: belongs_in.map(|(table, _)| table),
                        set_there,
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
        ValidationErrorKind::Type { kind } => {
            // A condition (`when`, `match`, a predicate) is text a TOML or YAML file quotes:
            // `when = false` is a boolean, and the help says how to write it as a condition.
            let last = pointer.rsplit('/').next().unwrap_or_default();
            let condition = matches!(last, "when" | "match")
                || pointer
                    .strip_prefix("/predicates/")
                    .is_some_and(|name| !name.contains('/'));
            let expected = type_names(kind);
            let expected = if condition && expected == "a string" {
                crate::problem::CONDITION_TYPE.to_string()
            } else if pointer == "/date" && expected == "a string" {
                // A context's date: quoting `20260203` would still be no date.
                crate::problem::DATE_TYPE.to_string()
            } else {
                expected
            };
            out.push(Diagnostic::new(
                Problem::WrongType {
                    instead: written_instead(
                        &expected,
                        error.instance(),
                        items_are_text(schema, error.schema_path().as_str()),
                    ),
                    expected,
                    found: json_type(error.instance()).into(),
                },
                at,
            ));
        }
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
        kind @ (ValidationErrorKind::MaxItems { limit }
        | ValidationErrorKind::MinItems { limit }
        | ValidationErrorKind::MaxLength { limit }
        | ValidationErrorKind::MinLength { limit }
        | ValidationErrorKind::MaxProperties { limit }
        | ValidationErrorKind::MinProperties { limit }) => {
            let (most, of) = match kind {
                ValidationErrorKind::MaxItems { .. } => (true, "items"),
                ValidationErrorKind::MinItems { .. } => (false, "items"),
                ValidationErrorKind::MaxLength { .. } => (true, "characters"),
                ValidationErrorKind::MinLength { .. } => (false, "characters"),
                ValidationErrorKind::MaxProperties { .. } => (true, "keys"),
                _ => (false, "keys"),
            };
            out.push(Diagnostic::new(
                Problem::InvalidValue(InvalidValue::Count {
                    most,
                    limit: *limit,
                    of,
                }),
                at,
            ));
        }
        ValidationErrorKind::PropertyNames { error: inner } => bad_key(inner, &pointer, doc, out),
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

/// A key, of the table at `pointer`, of the wrong form: `error` is about the key itself.
fn bad_key(error: &ValidationError<'_>, pointer: &str, doc: &Document, out: &mut Diagnostics) {
    let key = error.instance().as_str().unwrap_or_default().to_string();
    let expected = match failed_pattern(error.kind()) {
        Some(pattern) => form_of(pattern),
        None => Form::Described(error.to_string()),
    };
    out.push(Diagnostic::new(
        Problem::InvalidValue(InvalidValue::BadForm {
            value: format!("`{key}`"),
            key: true,
            expected,
        }),
        doc.key_span(&child_pointer(pointer, &key)),
    ));
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
    // The one branch whose type the value has (`rules` as a list, not as a text): its errors,
    // deeper in the value, are what is wrong, where the other branches' say only that the
    // type is not theirs.
    let of_its_type: Vec<&Vec<ValidationError<'static>>> = branches
        .iter()
        .filter(|branch| {
            !branch.iter().any(|e| {
                e.instance_path().as_str() == pointer
                    && matches!(
                        e.kind(),
                        ValidationErrorKind::Type { .. } | ValidationErrorKind::Constant { .. }
                    )
            })
        })
        .collect();
    if let [branch] = of_its_type.as_slice()
        && !branch.is_empty()
    {
        for inner in branch.iter() {
            report(inner, schema, doc, out);
        }
        return;
    }
    // No branch takes a value of this type, and every branch says which it takes: those are
    // the types expected (`rules = {}`: text or a list). A branch that names no type (a
    // constant, a table tagged by its `rule`) leaves it to the cases below.
    let expected_types: Option<Vec<String>> = branches
        .iter()
        .map(|branch| {
            branch.iter().find_map(|e| match e.kind() {
                ValidationErrorKind::Type { kind } if e.instance_path().as_str() == pointer => {
                    Some(type_names(kind))
                }
                _ => None,
            })
        })
        .collect();
    if of_its_type.is_empty()
        && let Some(mut expected) = expected_types
        && !expected.is_empty()
    {
        expected.dedup();
        out.push(Diagnostic::new(
            Problem::WrongType {
                expected: expected.join(" or "),
                found: json_type(instance).into(),
                instead: None,
            },
            doc.value_span(&pointer),
        ));
        return;
    }
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
                // The generated validators leave out a branch's type error where its
                // constant implies it: the constants' types are the ones expected.
                let expected = branches
                    .iter()
                    .flatten()
                    .find_map(|e| match e.kind() {
                        ValidationErrorKind::Type { kind } => Some(type_names(kind)),
                        _ => None,
                    })
                    .unwrap_or_else(|| {
                        let mut types: Vec<&str> = Vec::new();
                        for e in branches.iter().flatten() {
                            if let ValidationErrorKind::Constant { expected_value } = e.kind()
                                && !types.contains(&json_type(expected_value))
                            {
                                types.push(json_type(expected_value));
                            }
                        }
                        if types.is_empty() {
                            "a table".into()
                        } else {
                            types.join(" or ")
                        }
                    });
                Problem::WrongType {
                    expected,
                    found: json_type(instance).into(),
                    instead: None,
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
                instead: None,
            },
            doc.value_span(&rule_pointer),
        )),
    }
}

/// `found`, of the wrong type, as its field would take it, where that is plain: a number or
/// boolean written in quotes without them, one text where a list is expected as a list of
/// it. Written in JSON's form, which TOML and YAML read alike.
fn written_instead(expected: &str, found: &Value, items_are_text: bool) -> Option<String> {
    // A condition written as a boolean or a number is the same words in quotes.
    if expected == crate::problem::CONDITION_TYPE {
        return (found.is_boolean() || found.is_number()).then(|| format!("\"{found}\""));
    }
    let text = found.as_str()?;
    let trimmed = text.trim();
    match expected {
        "an integer" => trimmed.parse::<i64>().ok().map(|n| n.to_string()),
        // JSON's form of a number, which TOML and YAML read too (not `.1`, `5.` or `007`).
        "a number" => serde_json::from_str::<serde_json::Number>(trimmed)
            .ok()
            .map(|_| trimmed.to_string()),
        "a boolean" => match trimmed {
            "true" | "false" => Some(trimmed.to_string()),
            _ => None,
        },
        "an array" if items_are_text && !text.is_empty() && text.len() <= 200 => {
            serde_json::to_string(text)
                .ok()
                .map(|item| format!("[{item}]"))
        }
        _ => None,
    }
}

/// Whether the schema holding the keyword at `schema_path` (a `type` that failed) takes a
/// list of strings: one text is then written as a list of it.
fn items_are_text(schema: &Value, schema_path: &str) -> bool {
    fn resolve<'s>(schema: &'s Value, node: &'s Value) -> Option<&'s Value> {
        match node.get("$ref").and_then(Value::as_str) {
            Some(reference) => schema.pointer(reference.strip_prefix('#')?),
            None => Some(node),
        }
    }
    let segments: Vec<&str> = schema_path.split('/').skip(1).collect();
    let mut node = schema;
    for segment in &segments[..segments.len().saturating_sub(1)] {
        let next = if *segment == "$ref" {
            resolve(schema, node)
        } else {
            node.get(*segment).or_else(|| {
                segment
                    .parse::<usize>()
                    .ok()
                    .and_then(|index| node.get(index))
            })
        };
        match next {
            Some(next) => node = next,
            None => return false,
        }
    }
    node.get("items")
        .and_then(|items| resolve(schema, items))
        .and_then(|items| items.get("type"))
        .and_then(Value::as_str)
        == Some("string")
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

/// How deep [`table_with_key`] looks for a table: the files' tables nest a few levels.
const TABLE_DEPTH: usize = 4;

/// The one table of `schema`, other than the one at `pointer` (a document's JSON pointer),
/// that has `key` among its `properties`, as a dotted path ("" for the top level), and whether
/// the file writes `key` there already (`written` answers for a pointer): the shallowest,
/// looking through references and alternatives but not arrays of tables (which of their
/// tables?) nor maps of names (the tables under `overrides.tools` have no fixed name to move a
/// key to). A table that does not have the key yet is the one to move it to; one that has it
/// is named only when no other is (the key was written twice, once in the wrong table). Two
/// such tables as shallow (`enabled` is a key of `browser` and of `focus_chain`) are not
/// guessed between.
fn table_with_key(
    schema: &Value,
    key: &str,
    pointer: &str,
    written: impl Fn(&str) -> bool,
) -> Option<(String, bool)> {
    let here: Vec<&str> = pointer
        .split('/')
        .skip(1)
        .filter(|part| part.parse::<usize>().is_err())
        .collect();
    let mut level: Vec<(&Value, Vec<&str>)> = vec![(schema, Vec::new())];
    for _ in 0..=TABLE_DEPTH {
        let mut next = Vec::new();
        let mut found: Vec<String> = Vec::new();
        let mut set: Vec<String> = Vec::new();
        while let Some((node, path)) = level.pop() {
            let node = referenced(schema, node);
            for alternative in ["anyOf", "oneOf", "allOf"] {
                for member in node
                    .get(alternative)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    level.push((member, path.clone()));
                }
            }
            let Some(properties) = node.get("properties").and_then(Value::as_object) else {
                continue;
            };
            if properties.contains_key(key) && path != here {
                let table = path.join(".");
                let mut at: String = path.iter().map(|part| format!("/{part}")).collect();
                at.push('/');
                at.push_str(key);
                let tables = if written(&at) { &mut set } else { &mut found };
                if !tables.contains(&table) {
                    tables.push(table);
                }
            }
            for (name, child) in properties {
                let mut child_path = path.clone();
                child_path.push(name.as_str());
                next.push((child, child_path));
            }
        }
        match (found.len(), set.len()) {
            (0, 0) => {}
            (1, _) => return found.pop().map(|table| (table, false)),
            (0, 1) => return set.pop().map(|table| (table, true)),
            _ => return None,
        }
        level = next;
    }
    None
}

/// The table of the file's top level that takes keys of the user's own, where a key that is
/// no field here and near none belongs: a context's `extra` (while the workspace declares none
/// of its keys), for a top-level key written beside the context's fields; a variant's
/// `placeholders`, for a key written in capitals as placeholders are (`PERSONA = "terse"`
/// after a `[model]` header, which TOML puts in that table).
fn free_table(schema: &Value, pointer: &str, key: &str) -> Option<String> {
    let properties = schema.get("properties")?;
    let extra = crate::namespace::EXTRA;
    if let Some(node) = properties.get(extra).map(|node| referenced(schema, node))
        && pointer.is_empty()
        && node.get("additionalProperties") == Some(&Value::Bool(true))
        && node.get("properties").is_none()
    {
        return Some(extra.to_string());
    }
    let in_capitals = key.chars().any(|c| c.is_ascii_uppercase())
        && key
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    (in_capitals && pointer != "/placeholders" && properties.get("placeholders").is_some())
        .then(|| "placeholders".to_string())
}

/// What a schema node's `$ref` leads to (a few links, never a loop), or the node itself.
fn referenced<'s>(schema: &'s Value, mut node: &'s Value) -> &'s Value {
    for _ in 0..TABLE_DEPTH {
        match node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| schema.pointer(p))
        {
            Some(target) => node = target,
            None => break,
        }
    }
    node
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
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::*;
    use crate::load::document::Format;
    use crate::source::Sources;

    /// The kind of a data file of the repository (the shipped library, the examples and the
    /// test fixtures), by the folder it is in.
    fn kind_of(path: &Path) -> Option<Kind> {
        if path.file_name()? == "promptc.toml" {
            return Some(Kind::Manifest);
        }
        match path.parent()?.file_name()?.to_str()? {
            "variants" => Some(Kind::Variant),
            "components" => Some(Kind::Component),
            "tools" => Some(Kind::Tool),
            "contexts" => Some(Kind::Context),
            _ => None,
        }
    }

    /// Every data file of the repository that parses, as its kind and value.
    fn corpus() -> Vec<(Kind, Value)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut found = Vec::new();
        let mut sources = Sources::default();
        for folder in [
            "promptc.toml",
            "variants",
            "components",
            "tools",
            "examples",
            "tests",
        ] {
            for entry in walkdir::WalkDir::new(root.join(folder)).sort_by_file_name() {
                let Ok(entry) = entry else { continue };
                let path = entry.path();
                let (Some(kind), Some(format)) = (kind_of(path), Format::of(path)) else {
                    continue;
                };
                let Ok(text) = std::fs::read_to_string(path) else {
                    continue;
                };
                let id = sources.add(path.to_path_buf(), text);
                if let Ok(document) = Document::parse(id, sources.get(id), format) {
                    found.push((kind, document.value));
                }
            }
        }
        found
    }

    /// A value with one change at each place: each value replaced by one of another type or
    /// an out-of-range one, each key removed, an unknown key added to each table.
    fn mutations(value: &Value) -> Vec<Value> {
        fn places(node: &Value, pointer: String, into: &mut Vec<String>) {
            into.push(pointer.clone());
            match node {
                Value::Object(fields) => {
                    for (key, child) in fields {
                        places(child, child_pointer(&pointer, key), into);
                    }
                }
                Value::Array(items) => {
                    for (index, child) in items.iter().enumerate() {
                        places(child, format!("{pointer}/{index}"), into);
                    }
                }
                _ => {}
            }
        }
        let mut pointers = Vec::new();
        places(value, String::new(), &mut pointers);
        let replacements = [
            Value::from(-3),
            Value::from(2.0),
            Value::from(""),
            Value::from("Not A Name!"),
            Value::from("2026-13-45"),
            Value::from(true),
            serde_json::json!([]),
            serde_json::json!({ "nmae": 1 }),
        ];
        let mut mutated = Vec::new();
        for pointer in &pointers {
            for replacement in &replacements {
                let mut copy = value.clone();
                if let Some(slot) = copy.pointer_mut(pointer) {
                    *slot = replacement.clone();
                    mutated.push(copy);
                }
            }
            let mut copy = value.clone();
            if let Some(Value::Object(fields)) = copy.pointer_mut(pointer) {
                fields.insert("unknwon".into(), Value::from(1));
                mutated.push(copy.clone());
            }
            if let Some((parent, key)) = pointer.rsplit_once('/') {
                let mut copy = value.clone();
                if let Some(Value::Object(fields)) = copy.pointer_mut(parent) {
                    fields.shift_remove(&key.replace("~1", "/").replace("~0", "~"));
                    mutated.push(copy);
                }
            }
        }
        mutated
    }

    /// Errors as they are reported, in a form that two validators can be compared in. The
    /// run-time validator reports a type error beside an `enum` or `const` one of the same
    /// schema, which the generated ones leave out as implied, and wraps the error of a key
    /// that `propertyNames` refuses, which the generated ones report as it is: both are
    /// written here as the generated ones give them. A pattern's error is written as
    /// jsonschema's own `pattern` gives it.
    fn described(errors: &[ValidationError<'_>]) -> BTreeSet<String> {
        let parent = |path: &str| path.rsplit_once('/').map(|(p, _)| p.to_string());
        let implied_type = |error: &ValidationError<'_>| {
            matches!(error.kind(), ValidationErrorKind::Type { .. })
                && errors.iter().any(|other| {
                    matches!(
                        other.kind(),
                        ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. }
                    ) && other.instance_path() == error.instance_path()
                        && parent(other.schema_path().as_str())
                            == parent(error.schema_path().as_str())
                })
        };
        errors
            .iter()
            .filter(|error| !implied_type(error))
            .map(|error| {
                let at = format!(
                    "at {} by {} on {}",
                    error.instance_path().as_str(),
                    as_written(error.schema_path().as_str()),
                    error.instance()
                );
                match error.kind() {
                    ValidationErrorKind::PropertyNames { error: inner } => format!(
                        "{} at {} by {} on {}",
                        kind_of_error(inner.kind()),
                        error.instance_path().as_str(),
                        as_written(error.schema_path().as_str()),
                        inner.instance()
                    ),
                    ValidationErrorKind::OneOfNotValid { context }
                    | ValidationErrorKind::AnyOf { context } => {
                        let branches: Vec<BTreeSet<String>> =
                            context.iter().map(|branch| described(branch)).collect();
                        format!("one of {branches:?} {at}")
                    }
                    kind => format!("{} {at}", kind_of_error(kind)),
                }
            })
            .collect()
    }

    /// A schema path with [`PATTERN_KEYWORD`] written as the schema writes it.
    fn as_written(path: &str) -> String {
        path.replace(PATTERN_KEYWORD, "pattern")
    }

    /// An error's kind, with [`PatternKeyword`]'s error written as jsonschema's own.
    fn kind_of_error(kind: &ValidationErrorKind) -> String {
        match failed_pattern(kind) {
            Some(pattern) => format!(
                "{:?}",
                ValidationErrorKind::Pattern {
                    pattern: pattern.to_string()
                }
            ),
            None => format!("{kind:?}"),
        }
    }

    /// Every pattern of the schemas is built, and accepts and refuses what jsonschema's own
    /// `pattern` keyword does, on names of every form the patterns tell apart and on text
    /// around their edges (non-ASCII letters, a final line break, an empty string).
    #[test]
    fn the_schemas_patterns_are_checked_as_jsonschema_checks_them() {
        assert!(SCHEMA_PATTERNS.len() >= 5, "{SCHEMA_PATTERNS:?}");
        for pattern in [ID_PATTERN, NAME_PATTERN, OUTPUT_PATTERN] {
            assert!(SCHEMA_PATTERNS.contains(&pattern), "{pattern}");
        }
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
        for pattern in SCHEMA_PATTERNS {
            let ours = build_pattern(pattern).unwrap_or_else(|error| panic!("{error}"));
            let theirs = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft7)
                .build(&serde_json::json!({ "pattern": pattern }))
                .unwrap_or_else(|error| panic!("{pattern}: {error}"));
            for &sample in &samples {
                assert_eq!(
                    ours.is_match(sample),
                    theirs.is_valid(&Value::from(sample)),
                    "{pattern} on {sample:?}"
                );
            }
        }
        // A pattern that escapes a class, which the two engines read differently, is refused.
        for pattern in [r"^\d+$", r"^\w$", r"\bx"] {
            assert!(build_pattern(pattern).is_err(), "{pattern}");
        }
        assert!(build_pattern(r"^a\.md\-\/\\$").is_ok());
    }

    /// The validators generated when promptc is built accept and refuse what jsonschema's
    /// run-time validator of the same schema does, with the same errors at the same places:
    /// on every data file of the repository and on each of them changed in every place.
    #[test]
    fn the_generated_validators_judge_as_the_schemas_do() {
        let corpus = corpus();
        for kind in Kind::ALL {
            assert!(
                corpus.iter().filter(|(k, _)| *k == kind).count() >= 2,
                "{kind:?}"
            );
        }
        let runtime: Vec<jsonschema::Validator> = Kind::ALL
            .iter()
            .map(|&kind| {
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft7)
                    .should_validate_formats(true)
                    .build(&validation_schema(kind))
                    .unwrap_or_else(|error| panic!("{kind:?}: {error}"))
            })
            .collect();
        let mut refused = 0;
        for (kind, value) in &corpus {
            let index = Kind::ALL.iter().position(|k| k == kind).unwrap_or_default();
            let (generated, runtime) = (Validator::of(*kind), &runtime[index]);
            for value in std::iter::once(value.clone()).chain(mutations(value)) {
                let valid = runtime.is_valid(&value);
                assert_eq!(generated.is_valid(&value), valid, "{kind:?} {value}");
                let generated: Vec<_> = generated.iter_errors(&value).collect();
                let runtime: Vec<_> = runtime.iter_errors(&value).collect();
                assert_eq!(
                    described(&generated),
                    described(&runtime),
                    "{kind:?} {value}"
                );
                refused += usize::from(!valid);
            }
        }
        // The mutations are refused often enough for the errors to have been compared.
        assert!(refused > 1000, "{refused}");
    }
}
