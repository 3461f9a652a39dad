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

/// Where each byte of a string value's text lies in the file, when the file writes it with
/// escapes (`\"`, `\n`, `\u00e9`, a TOML line continuation, YAML's `''`): `raw` is the value
/// as written, quotes included, and `decoded` its text. The result has an entry per byte of
/// `decoded`: the range in `raw` of the character (or escape) it is part of; `None` when the two
/// cannot be walked together (a folded YAML scalar, say), and the caller keeps the whole value.
/// [`raw_range`] maps a range of `decoded` with it.
pub fn raw_offsets(raw: &str, decoded: &str) -> Option<Vec<Range<usize>>> {
    let opening = ["\"\"\"", "'''", "\"", "'"]
        .into_iter()
        .find(|quote| raw.starts_with(quote))?;
    let single_quoted = opening == "'";
    let mut at = opening.len();
    // A multi-line string's first line break, right after its quotes, is not part of it.
    if opening.len() == 3 {
        if raw[at..].starts_with("\r\n") {
            at += 2;
        } else if raw[at..].starts_with('\n') {
            at += 1;
        }
    }
    let mut offsets = Vec::with_capacity(decoded.len() + 1);
    let mut wanted = decoded.chars();
    let mut next = wanted.next();
    while let Some(expected) = next {
        let rest = raw.get(at..)?;
        let mut chars = rest.chars();
        let c = chars.next()?;
        // The raw text one character stands for, and how many raw bytes it takes.
        let (stands_for, taken) = match c {
            '\\' if !single_quoted && opening != "'''" => {
                let escape = chars.next()?;
                let hex = |digits: usize| {
                    let code = u32::from_str_radix(rest.get(2..2 + digits)?, 16).ok()?;
                    Some((char::from_u32(code)?, 2 + digits))
                };
                match escape {
                    'n' => ('\n', 2),
                    't' => ('\t', 2),
                    'r' => ('\r', 2),
                    'b' => ('\u{8}', 2),
                    'f' => ('\u{c}', 2),
                    'e' => ('\u{1b}', 2),
                    '0' => ('\0', 2),
                    'u' => hex(4)?,
                    'U' => hex(8)?,
                    'x' => hex(2)?,
                    ' ' | '\t' | '\n' | '\r' if continues_a_line(&rest[1..]) => {
                        // A line continuation (blanks may stand between it and the break):
                        // the break and the blanks around it stand for nothing.
                        let skipped = rest[1..]
                            .find(|c: char| !c.is_whitespace())
                            .map_or(rest.len(), |n| n + 1);
                        at += skipped;
                        continue;
                    }
                    other => (other, 1 + other.len_utf8()),
                }
            }
            '\'' if single_quoted && rest.starts_with("''") => ('\'', 2),
            other => (other, other.len_utf8()),
        };
        if stands_for != expected {
            return None;
        }
        for _ in 0..expected.len_utf8() {
            offsets.push(at..at + taken);
        }
        at += taken;
        next = wanted.next();
    }
    Some(offsets)
}

/// Whether the text after a `\` ends its line with blanks alone: a line continuation.
fn continues_a_line(after: &str) -> bool {
    let line = after.split('\n').next().unwrap_or(after);
    after.contains('\n')
        && line
            .trim_end_matches('\r')
            .chars()
            .all(|c| c == ' ' || c == '\t')
}

/// The range in the raw value of `range` of its decoded text, by [`raw_offsets`]: from the
/// first character's start to the last one's end (an empty range at the start of the
/// character it comes before, or at the end).
pub fn raw_range(offsets: &[Range<usize>], range: Range<usize>) -> Option<Range<usize>> {
    let start = match offsets.get(range.start) {
        Some(first) => first.start,
        None if range.start == offsets.len() => offsets.last().map_or(0, |last| last.end),
        None => return None,
    };
    let end = match range.end.checked_sub(1) {
        Some(last) if range.end > range.start => offsets.get(last)?.end,
        _ => start,
    };
    Some(start..end.max(start))
}

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
    /// A document of a value that was not read from a file (one the command line made): no
    /// place of it is known.
    pub fn unplaced(value: Value) -> Self {
        Self {
            source: SourceId::UNSET,
            value,
            locations: HashMap::new(),
        }
    }

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

/// Syntax errors of JSON are serde_json's, at their line and column. A key an object repeats
/// is one too: serde_json keeps the last, so a file could show a reviewer one value and give
/// promptc another (TOML and YAML refuse it as well).
fn parse_json(file: &SourceFile) -> Result<Value, (Problem, Range<usize>)> {
    use serde::de::DeserializeSeed as _;
    let mut deserializer = serde_json::Deserializer::from_str(&file.text);
    UniqueKeys
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|error| {
            let offset = file.line_offset(error.line()) + error.column().saturating_sub(1);
            (
                Problem::JsonSyntax {
                    message: error.to_string(),
                },
                offset..offset,
            )
        })
}

/// A JSON value read with no key repeated in any object.
struct UniqueKeys;

impl<'de> serde::de::DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut list = Vec::new();
        while let Some(item) = items.next_element_seed(UniqueKeys)? {
            list.push(item);
        }
        Ok(Value::Array(list))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        let mut map = serde_json::Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate key `{key}`: an object gives each key once"
                )));
            }
            let value = entries.next_value_seed(UniqueKeys)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

pub(super) type Locations = HashMap<String, Location>;

/// Converts a float to JSON, refusing NaN and infinities which JSON cannot hold.
pub(super) fn json_float(value: f64, text: &str) -> Result<Value, Problem> {
    serde_json::Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| Problem::UnsupportedNumber { text: text.into() })
}

#[cfg(test)]
mod tests {
    use super::{raw_offsets, raw_range};

    // Each decoded byte is found where the file writes it, through escapes.
    #[test]
    fn raw_offsets_walk_escapes() {
        let raw = r#""mode == \"plan\" and \u00e9x""#;
        let decoded = "mode == \"plan\" and \u{e9}x";
        let offsets = raw_offsets(raw, decoded).unwrap();
        assert_eq!(offsets.len(), decoded.len());
        let found = |range: std::ops::Range<usize>| &raw[raw_range(&offsets, range).unwrap()];
        let plan = decoded.find("plan").unwrap();
        assert_eq!(found(plan..plan + 4), "plan");
        assert_eq!(found(plan - 1..plan + 5), r#"\"plan\""#);
        let x = decoded.find('x').unwrap();
        assert_eq!(found(x..x + 1), "x");
        assert_eq!(found(x - 2..x), r"\u00e9");
        // YAML's doubled quote.
        let raw = "'it''s b'";
        let offsets = raw_offsets(raw, "it's b").unwrap();
        assert_eq!(&raw[raw_range(&offsets, 5..6).unwrap()], "b");
        // A TOML line continuation, blanks before its break or not: the name before it ends
        // at its own last character.
        for raw in ["\"\"\"\nab\\\n   cd\"\"\"", "\"\"\"\nab\\  \r\n   cd\"\"\""] {
            let offsets = raw_offsets(raw, "abcd").unwrap();
            assert_eq!(&raw[raw_range(&offsets, 0..2).unwrap()], "ab", "{raw:?}");
            assert_eq!(&raw[raw_range(&offsets, 2..4).unwrap()], "cd", "{raw:?}");
        }
        // Text that is not the value's.
        assert_eq!(raw_offsets("\"a\\nb\"", "ab"), None);
    }
}
