//! A tool parameter's JSON Schema keywords beyond `type`, shared rather than copied.
//!
//! A shared parameter (`[parameters.X]` in promptc.toml) is used by any number of tools, in
//! every family and context: an `enum` of thousands of values used by a thousand tools would
//! otherwise be copied into each tool of each compile, and into each tool's template value.
//! Here each keyword's value is held once, with its JSON text and its template value, and a
//! schema is a list of keywords that tools share.

use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

/// The keywords in order (`enum`, `items`, `properties`, then the free `schema` keywords),
/// each value shared with every other schema that holds it.
#[derive(Clone, Default)]
pub struct ParameterSchema(Arc<Keywords>);

#[derive(Default)]
struct Keywords {
    entries: Vec<(String, Keyword)>,
    /// The schema's length written as compact JSON.
    written_len: usize,
    /// About the memory one copy of the schema as a JSON value takes.
    held_len: usize,
    /// About the length of the schema written pretty-printed where outputs write it.
    pretty_len: usize,
    /// The schema as a template value, made the first time a template meets it.
    template_value: OnceLock<minijinja::Value>,
}

/// One keyword's value, held once however many schemas hold it.
#[derive(Clone)]
pub struct Keyword(Arc<KeywordValue>);

struct KeywordValue {
    value: Value,
    /// `value` written as compact JSON, for the keys compiles are remembered by.
    written: Box<str>,
    /// `held_bytes` of `value`.
    held: usize,
    /// `value` pretty-printed: its length, and its line breaks (each indented further
    /// where the value is written).
    pretty: usize,
    pretty_lines: usize,
    template_value: OnceLock<minijinja::Value>,
}

impl Keyword {
    pub fn new(value: Value) -> Self {
        let written = serde_json::to_string(&value).unwrap_or_default().into();
        let mut pretty = Counter::default();
        let formatter = serde_json::ser::PrettyFormatter::new();
        // Writing to a counter does not fail.
        let _ = value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut pretty,
            formatter,
        ));
        Self(Arc::new(KeywordValue {
            pretty: pretty.bytes,
            pretty_lines: pretty.lines,
            held: held_bytes(&value),
            value,
            written,
            template_value: OnceLock::new(),
        }))
    }

    pub fn value(&self) -> &Value {
        &self.0.value
    }

    fn template_value(&self) -> minijinja::Value {
        self.0
            .template_value
            .get_or_init(|| minijinja::Value::from(minijinja::value::Serde(&self.0.value)))
            .clone()
    }
}

impl ParameterSchema {
    /// A schema of these keywords, in this order; a key given twice keeps its first value.
    pub fn new(entries: impl IntoIterator<Item = (String, Keyword)>) -> Self {
        // A map, not a scan of the keys kept: a free `schema` may hold a hundred thousand.
        let mut unique: IndexMap<String, Keyword> = IndexMap::new();
        for (key, keyword) in entries {
            unique.entry(key).or_insert(keyword);
        }
        let kept: Vec<(String, Keyword)> = unique.into_iter().collect();
        // `{`, `}`, a comma between entries, and each `"key":value`.
        let written_len = 2
            + kept.len().saturating_sub(1)
            + kept
                .iter()
                .map(|(key, keyword)| json_string_len(key) + 1 + keyword.0.written.len())
                .sum::<usize>();
        let held_len = size_of::<Value>()
            + kept
                .iter()
                .map(|(key, keyword)| ENTRY_BYTES + key.len() + keyword.0.held)
                .sum::<usize>();
        // Each entry on a line of its own, its lines indented to the depth outputs write it at.
        let pretty_len = 2 + kept
            .iter()
            .map(|(key, keyword)| {
                let value = &keyword.0;
                let indent = 2 * (WRITTEN_DEPTH + 1);
                indent + json_string_len(key) + 4 + value.pretty + value.pretty_lines * indent
            })
            .sum::<usize>();
        Self(Arc::new(Keywords {
            entries: kept,
            written_len,
            held_len,
            pretty_len,
            template_value: OnceLock::new(),
        }))
    }

    pub fn is_empty(&self) -> bool {
        self.0.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.entries.len()
    }

    /// The value of a keyword.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.keyword(key).map(Keyword::value)
    }

    /// A keyword, to share with another schema.
    pub fn keyword(&self, key: &str) -> Option<&Keyword> {
        self.0
            .entries
            .iter()
            .find_map(|(k, keyword)| (k == key).then_some(keyword))
    }

    /// The keywords and their values, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0
            .entries
            .iter()
            .map(|(key, keyword)| (key.as_str(), keyword.value()))
    }

    /// The keywords as a JSON object of their own (a copy).
    pub fn to_map(&self) -> Map<String, Value> {
        self.iter()
            .map(|(key, value)| (key.to_string(), value.clone()))
            .collect()
    }

    /// The length of the schema written as compact JSON.
    pub fn written_len(&self) -> usize {
        self.0.written_len
    }

    /// What one more copy of the schema costs a compile, in bytes: held as a JSON value (in
    /// native tool definitions) or written out pretty-printed (the definitions files, the
    /// JSON output), whichever is more. Pretty-printing indents each line by its depth, so a
    /// deeply nested schema writes many times its compact length.
    pub fn copy_cost(&self) -> usize {
        self.0
            .written_len
            .max(self.0.held_len)
            .max(self.0.pretty_len)
    }

    /// Writes the schema as compact JSON (what `serde_json::to_string` writes) into `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.reserve(self.0.written_len);
        out.push(b'{');
        for (index, (key, keyword)) in self.0.entries.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            // A `String` always serializes.
            let _ = serde_json::to_writer(&mut *out, key);
            out.push(b':');
            out.extend_from_slice(keyword.0.written.as_bytes());
        }
        out.push(b'}');
    }

    /// Whether two schemas hold the same keywords with the same values, in the same order.
    pub fn same_as(&self, other: &ParameterSchema) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.len() == other.len()
                && self
                    .0
                    .entries
                    .iter()
                    .zip(&other.0.entries)
                    .all(|((key_a, a), (key_b, b))| {
                        key_a == key_b && (Arc::ptr_eq(&a.0, &b.0) || a.0.written == b.0.written)
                    }))
    }

    fn template_value(&self) -> minijinja::Value {
        self.0
            .template_value
            .get_or_init(|| {
                minijinja::Value::from(minijinja::value::Serde(TemplateEntries(&self.0.entries)))
            })
            .clone()
    }
}

/// The keywords with their template values, which minijinja's serializer takes as they are:
/// the map it makes is the one it would make of the JSON object, its values shared.
struct TemplateEntries<'a>(&'a [(String, Keyword)]);

impl Serialize for TemplateEntries<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, keyword) in self.0 {
            map.serialize_entry(key, &keyword.template_value())?;
        }
        map.end()
    }
}

impl From<Map<String, Value>> for ParameterSchema {
    fn from(map: Map<String, Value>) -> Self {
        Self::new(
            map.into_iter()
                .map(|(key, value)| (key, Keyword::new(value))),
        )
    }
}

/// Written as the JSON object of its keywords. A template sees the value made once for the
/// schema (minijinja passes a value through its own serializer as it is), not a copy.
impl Serialize for ParameterSchema {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if minijinja::value::serializing_for_value() {
            return self.template_value().serialize(serializer);
        }
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl std::fmt::Debug for Keyword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value().fmt(f)
    }
}

impl std::fmt::Debug for ParameterSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl PartialEq for ParameterSchema {
    fn eq(&self, other: &Self) -> bool {
        self.same_as(other)
    }
}

/// How deep outputs write a parameter's schema's keywords: a native tool definition holds
/// them in `[{"function": {"parameters": {"properties": {"<name>": {…}}}}}]`, six levels
/// down, and Gemini's one level further; counted with a level to spare.
const WRITTEN_DEPTH: usize = 8;

/// What an object's entry takes beside its key's text and its value: the key's `String`,
/// and the index map's hash and slot.
const ENTRY_BYTES: usize = size_of::<String>() + 16;

/// About the bytes a JSON value holds in memory: each value's own size, the text of its
/// strings and keys, and each object entry's overhead.
pub fn held_bytes(value: &Value) -> usize {
    size_of::<Value>()
        + match value {
            Value::String(text) => text.len(),
            Value::Array(items) => items.iter().map(held_bytes).sum(),
            Value::Object(fields) => fields
                .iter()
                .map(|(key, value)| ENTRY_BYTES + key.len() + held_bytes(value))
                .sum(),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
}

/// The length of `text` written as a JSON string, quotes and escapes included.
fn json_string_len(text: &str) -> usize {
    let mut counter = Counter::default();
    // Writing to a counter does not fail.
    let _ = serde_json::to_writer(&mut counter, text);
    counter.bytes
}

/// Counts the bytes written to it, and refuses to take more once past `limit` (a writer of a
/// value of gigabytes stops there).
pub struct CappedCounter {
    bytes: u64,
    limit: u64,
}

impl CappedCounter {
    pub fn new(limit: u64) -> Self {
        Self { bytes: 0, limit }
    }

    /// The bytes written: past the limit, at least one more than it.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl std::io::Write for CappedCounter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.bytes = self.bytes.saturating_add(data.len() as u64);
        if self.bytes > self.limit {
            return Err(std::io::Error::other("past the limit"));
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Counts what is written to it: bytes, and line breaks.
#[derive(Default)]
struct Counter {
    bytes: usize,
    lines: usize,
}

impl std::io::Write for Counter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.bytes += data.len();
        self.lines += data.iter().filter(|&&byte| byte == b'\n').count();
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn to_value(value: impl Serialize) -> minijinja::Value {
        minijinja::Value::from(minijinja::value::Serde(value))
    }

    fn schema(value: Value) -> ParameterSchema {
        match value {
            Value::Object(map) => ParameterSchema::from(map),
            _ => ParameterSchema::default(),
        }
    }

    /// What the compiled tools, the native definitions and the memo keys are written from
    /// is what serde_json writes for the same object, and its length is known without
    /// writing it.
    #[test]
    fn a_schema_writes_and_measures_as_serde_json_does() {
        for value in [
            json!({}),
            json!({ "enum": ["a", "b\"c", "é\n"] }),
            json!({ "items": { "type": "string" }, "properties": {}, "x\u{1}y": [1, 2.5, null] }),
        ] {
            let expected = serde_json::to_string(&value).expect("json");
            let schema = schema(value);
            let mut written = Vec::new();
            schema.write_json(&mut written);
            assert_eq!(String::from_utf8(written).expect("utf-8"), expected);
            assert_eq!(schema.written_len(), expected.len());
            assert_eq!(serde_json::to_string(&schema).expect("json"), expected);
        }
    }

    /// A copy of a schema costs at least what a native definition writes of it, however
    /// deeply nested: a 44 KB workspace of schemas nested 78 deep wrote 301 MB.
    #[test]
    fn a_copy_costs_what_outputs_write_of_it() {
        let mut nested = json!("leaf");
        for _ in 0..40 {
            nested = json!({ "a": [nested, 1] });
        }
        for value in [
            json!({ "enum": ["a", "b"] }),
            json!({ "items": nested, "x": "y" }),
        ] {
            let schema = schema(value.clone());
            let definition = |inner: Value| {
                let wrapped =
                    json!([{ "function": { "parameters": { "properties": { "p": inner } } } }]);
                serde_json::to_string_pretty(&wrapped).expect("json").len()
            };
            let written = definition(value) - definition(json!({}));
            assert!(
                schema.copy_cost() >= written,
                "{} < {written}",
                schema.copy_cost()
            );
            assert!(
                schema.copy_cost() < 2 * written + 300,
                "{} ≫ {written}",
                schema.copy_cost()
            );
        }
    }

    /// A template sees the schema as it would see the JSON object converted by minijinja:
    /// the same keys in the same order, the same values.
    #[test]
    fn a_template_sees_the_schema_as_the_json_object() {
        let value = json!({ "enum": ["b", "a"], "minimum": 3, "properties": { "z": {}, "a": {} } });
        let direct = to_value(&value);
        let shared = to_value(schema(value));
        let env = minijinja::Environment::new();
        let render = |v: &minijinja::Value| {
            env.render_str(
                "{{ s }}|{% for k, v in s|items %}{{ k }}={{ v }};{% endfor %}|{{ s.properties|list }}",
                minijinja::context! { s => v.clone() },
            )
            .expect("render")
        };
        assert_eq!(render(&shared), render(&direct));
        assert_eq!(shared, direct);
    }

    /// Schemas made from the same keywords hold one copy of each value, and a tool's template
    /// value holds the schema's, not a copy: the same object each time.
    #[test]
    fn schemas_share_their_keywords_and_template_values() {
        let shared = schema(json!({ "enum": ["a", "b"] }));
        let keyword = shared.keyword("enum").expect("enum").clone();
        let other = ParameterSchema::new([
            ("items".to_string(), Keyword::new(json!({}))),
            ("enum".to_string(), keyword),
        ]);
        assert!(std::ptr::eq(
            shared.get("enum").expect("enum"),
            other.get("enum").expect("enum")
        ));
        type Held = indexmap::IndexMap<minijinja::Value, minijinja::Value>;
        let held = |list: minijinja::Value| -> *const Held {
            let first = list.get_item_by_index(0).expect("an item");
            let map = first.as_object().and_then(|o| o.downcast_ref::<Held>());
            std::ptr::from_ref(map.expect("a map"))
        };
        let a = held(to_value(vec![shared.clone()]));
        let b = held(to_value(vec![shared.clone()]));
        assert_eq!(a, b, "each conversion made a map of its own");
    }
}
