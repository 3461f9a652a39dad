//! A parsed data file: its value as JSON (what the schema and serde see) plus the source
//! position of every key and value, addressed by JSON pointer. This is what lets a schema
//! error or a dangling reference point at the exact key in TOML or YAML.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::problem::{LabelKind, Problem};
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

    /// Whether `path`'s extension is a data file's in another case (`.TOML`, `.Yml`): a file
    /// its author meant as data, which is not read as it.
    pub fn of_another_case(path: &Path) -> bool {
        Format::of(path).is_none()
            && path
                .extension()
                .and_then(|extension| extension.to_str())
                .is_some_and(|extension| {
                    Format::of(&path.with_extension(extension.to_ascii_lowercase())).is_some()
                })
    }
}

/// Why a text is no document: the problem, where it is, and for a key that repeats one
/// before it, where that first one is.
#[derive(Debug, PartialEq)]
pub(super) struct Unreadable {
    pub problem: Problem,
    pub at: Range<usize>,
    pub first: Option<Range<usize>>,
}

impl From<(Problem, Range<usize>)> for Unreadable {
    fn from((problem, at): (Problem, Range<usize>)) -> Self {
        Self {
            problem,
            at,
            first: None,
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
    /// See [`Document::values`].
    values: usize,
}

/// The most values (keys with their values, items, tables) promptc keeps of the workspace's
/// data files together, and so of one file. Read, a value takes hundreds of bytes of memory
/// (its value, its place, its path): 3.9 MB of `[[],[],…]` in one context took 800 MB, and
/// twenty such files, within the workspace's byte limit, ran the process out of memory.
pub const MAX_VALUES: usize = 1_000_000;

/// Scalars, brackets and braces (see [`toml_tokens`]) counted for each TOML value: each takes
/// at most three (a key, and a number with a fraction), so a text of more than this many per
/// value it may hold holds more values, and is not read: what the reader would build from it
/// stays bounded.
const TOML_TOKENS_PER_VALUE: usize = 4;

/// The most tokens of any kind (line ends, spaces and comments too) a TOML text may hold to be
/// read: its reader holds each, about 60 bytes with its events. A token is at least a byte, so
/// every file within the default file limit is read.
const TOML_ALL_TOKENS_READ: usize = crate::model::limits::MAX_DATA_FILE_BYTES as usize + 1;

/// The keys, scalars, brackets and braces of a TOML text, as its lexer reads them (strings
/// whole, so that what they hold counts for nothing), and all its tokens (line ends, spaces
/// and comments too, which the reader holds as well), counted before the reader builds them.
fn toml_tokens(text: &str) -> (usize, usize) {
    use toml_parser::lexer::TokenKind;
    let mut values = 0;
    let mut all = 0;
    for token in toml_parser::Source::new(text).lex() {
        all += 1;
        values += usize::from(matches!(
            token.kind(),
            TokenKind::LeftSquareBracket
                | TokenKind::LeftCurlyBracket
                | TokenKind::Atom
                | TokenKind::BasicString
                | TokenKind::LiteralString
                | TokenKind::MlBasicString
                | TokenKind::MlLiteralString
        ));
    }
    (values, all)
}

/// The values of a JSON text as [`values_of`] counts them once it is read, counted from its
/// marks outside strings before serde_json builds them: the whole value, one more for each
/// comma (an item or key past the first) and one for the first item of each list or object
/// that has one. (Counting each bracket and each comma as a value counted an empty `[]` or
/// `{}` among items twice: a text of many was refused before its real count.)
fn json_values(text: &str) -> usize {
    let mut count = 1;
    let mut in_string = false;
    let mut escaped = false;
    // Just after a `[` or `{`, until the next mark says whether it holds anything.
    let mut opened = false;
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if opened && !byte.is_ascii_whitespace() {
            opened = false;
            if byte != b']' && byte != b'}' {
                count += 1;
            }
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => opened = true,
            b',' => count += 1,
            _ => {}
        }
    }
    count
}

/// The values of a document: every list, table and scalar, a key with its value counted once.
fn values_of(value: &Value) -> usize {
    let mut count = 0;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        count += 1;
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// The most marks [`Document::counted_past`] counts for one value: a JSON value is at most its
/// bracket and a comma; a TOML one at most a key of 80 parts and its scalar, brackets or
/// braces, each mark a quarter of a value there.
const MARKS_PER_VALUE: usize =
    (super::toml_document::MAX_KEY_PARTS + 4).div_ceil(TOML_TOKENS_PER_VALUE);

/// The file at `source` holds more values than the workspace's files may still add: more
/// than the limit by itself (`alone`), or together with the files read before it.
fn too_many_values(source: SourceId, alone: bool) -> Diagnostic {
    Diagnostic::new(
        Problem::TooManyValues {
            limit: MAX_VALUES,
            together: !alone,
        },
        Span::file_start(source),
    )
}

impl Document {
    pub fn parse(source: SourceId, file: &SourceFile, format: Format) -> Result<Self, Diagnostic> {
        Self::parse_within(source, file, format, MAX_VALUES)
    }

    /// [`Document::parse`], the file refused once it holds more than `room` values: what the
    /// files read before it leave of [`MAX_VALUES`]. A file past it is refused as cheaply as
    /// one past the limit alone (a text counted before it is read, a YAML reader stopped
    /// there): 1,600 contexts of 28,000 values each were each read whole, then refused, and
    /// `validate` ran past a minute.
    pub fn parse_within(
        source: SourceId,
        file: &SourceFile,
        format: Format,
        room: usize,
    ) -> Result<Self, Diagnostic> {
        let room = room.min(MAX_VALUES);
        // The readers recurse once per level of nesting.
        crate::cores::with_stack_room(|| Self::parse_here(source, file, format, room))
    }

    /// Whether the text of a document already read (`values` of them), counted as a text is
    /// before it is read, holds more than `room` values: `Some(alone)`, alone when more than
    /// the limit by itself. A file read ahead on another thread is held to the same count as
    /// one the load reads itself, so that which thread read it changes nothing; a document
    /// whose values are far within `room` is not counted again.
    pub fn counted_past(text: &str, format: Format, values: usize, room: usize) -> Option<bool> {
        if values.saturating_mul(MARKS_PER_VALUE) <= room {
            return None;
        }
        let at_least = match format {
            Format::Toml => toml_tokens(text).0 / TOML_TOKENS_PER_VALUE,
            Format::Json => json_values(text),
            Format::Yaml => 0,
        };
        (at_least > room).then_some(at_least > MAX_VALUES)
    }

    fn parse_here(
        source: SourceId,
        file: &SourceFile,
        format: Format,
        room: usize,
    ) -> Result<Self, Diagnostic> {
        if file.text.trim().is_empty() {
            return Err(Diagnostic::new(
                Problem::EmptyFile { inline: false },
                Span::file_start(source),
            ));
        }
        // The readers build every value before promptc counts them: a text that holds more
        // than promptc keeps is not read at all. YAML's reader stops at a bound of its own,
        // well below it.
        // How many values the text holds at least, where its marks tell before it is read.
        let at_least = match format {
            Format::Toml => {
                let (values, all) = toml_tokens(&file.text);
                // The reader holds every token (about 60 bytes each, with its events): 64 MB
                // of blank lines or comments, under a raised file limit, took 2.5 GB and
                // ended the process on a failed allocation.
                if all > TOML_ALL_TOKENS_READ {
                    return Err(Diagnostic::new(
                        Problem::TooManyTokens {
                            limit: TOML_ALL_TOKENS_READ,
                        },
                        Span::file_start(source),
                    ));
                }
                values / TOML_TOKENS_PER_VALUE
            }
            Format::Json => json_values(&file.text),
            Format::Yaml => 0,
        };
        if at_least > room {
            return Err(too_many_values(source, at_least > MAX_VALUES));
        }
        let mut locations = Locations::new();
        let value = match format {
            Format::Toml => {
                super::toml_document::parse(&file.text, &mut locations).map_err(Unreadable::from)
            }
            Format::Yaml => super::yaml_document::parse(file, &mut locations, room),
            // JSON is YAML 1.2: once serde_json accepts it, the YAML reader gives positions.
            Format::Json => match parse_json(file) {
                Ok(value) => match super::yaml_document::places_of_json(file, &mut locations) {
                    Ok(placed) => Ok(placed),
                    // A whole number past 64 bits, which serde_json made a float of as well.
                    Err(
                        unreadable @ Unreadable {
                            problem: Problem::UnsupportedNumber { .. },
                            ..
                        },
                    ) => Err(unreadable),
                    // Past what the YAML reader takes (a key of more than 1024 characters,
                    // values nested past its depth): placed by a reader of JSON's own.
                    Err(_) => {
                        locations.clear();
                        super::json_places::place(&file.text, &mut locations);
                        Ok(value)
                    }
                },
                // serde_json stops after the second key, with no word of the first: the YAML
                // reader places both, and its sentence fits JSON as well.
                Err((Problem::JsonSyntax { message }, at))
                    if message.starts_with("duplicate key") =>
                {
                    match super::yaml_document::places_of_json(file, &mut locations) {
                        Err(Unreadable {
                            problem: Problem::YamlSyntax { message },
                            at,
                            first: first @ Some(_),
                        }) => Err(Unreadable {
                            problem: Problem::JsonSyntax { message },
                            at,
                            first,
                        }),
                        _ => Err(Unreadable::from((Problem::JsonSyntax { message }, at))),
                    }
                }
                Err(error) => Err(Unreadable::from(error)),
            },
        }
        .map_err(|unreadable| {
            let diagnostic = Diagnostic::new(unreadable.problem, Span::new(source, unreadable.at));
            match unreadable.first {
                Some(first) => diagnostic.label(Span::new(source, first), LabelKind::FirstSetHere),
                None => diagnostic,
            }
        })?;
        if locations.overflowed() {
            return Err(Diagnostic::new(
                Problem::KeysTooLong {
                    limit: MAX_POINTER_BYTES,
                },
                Span::file_start(source),
            ));
        }
        // Counted in the value: a JSON text's places are left out where the YAML reader that
        // finds them stops at its own bound.
        let values = values_of(&value);
        if values > room {
            return Err(too_many_values(source, values > MAX_VALUES));
        }
        Ok(Self {
            source,
            value,
            locations: locations.into_map(),
            values,
        })
    }

    /// The values the document holds: every list, table and scalar, a key with its value
    /// counted once, the document itself too.
    pub fn values(&self) -> usize {
        self.values
    }

    /// A document of a value that was not read from a file (one the command line made): no
    /// place of it is known.
    pub fn unplaced(value: Value) -> Self {
        Self {
            source: SourceId::UNSET,
            values: values_of(&value),
            value,
            locations: HashMap::new(),
        }
    }

    /// A document with no content, standing for a file that could not be read or parsed
    /// (reported already): its spans all point at the file's start.
    pub fn empty(source: SourceId) -> Self {
        Self {
            source,
            value: Value::Object(serde_json::Map::new()),
            locations: HashMap::new(),
            values: 1,
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
    crate::unique_json::from_str(&file.text).map_err(|error| {
        // Column 0 is the line break that ends the line before: a string or an object
        // that the line left open.
        let mut offset = match error.column() {
            0 => file.line_offset(error.line()).saturating_sub(1),
            column => file.line_offset(error.line()) + column - 1,
        };
        let message = error.to_string();
        // serde_json stops at the `}` or `]` after a trailing comma: the comma is what to
        // remove, and may stand lines above.
        if message.starts_with("trailing comma") {
            let before = file.text.get(..offset).unwrap_or_default();
            if let Some(comma) = before.trim_end().strip_suffix(',') {
                offset = comma.len();
            }
        }
        // serde_json places a number too large for a float at the digit where it gave up
        // (the last, or one of a long exponent's): the whole number is what to change.
        if message.starts_with("number out of range") {
            let in_number = |b: &u8| matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-');
            let bytes = file.text.as_bytes();
            let at = offset.min(bytes.len());
            let start = bytes[..at]
                .iter()
                .rposition(|b| !in_number(b))
                .map_or(0, |before| before + 1);
            let end = bytes[at..]
                .iter()
                .position(|b| !in_number(b))
                .map_or(bytes.len(), |after| at + after);
            let text = file.text.get(start..end).unwrap_or_default().to_string();
            return (Problem::UnsupportedNumber { text }, start..end);
        }
        // The place is shown with the quoted line; serde_json's text ends with it too.
        let place = format!(" at line {} column {}", error.line(), error.column());
        let mut message = message.strip_suffix(&place).unwrap_or(&message).to_string();
        // Most often a string left open runs into its line's end; another control
        // character is named, for its own help.
        if message.starts_with("control character")
            && let Some(control) = file.text.get(offset..).and_then(|rest| rest.chars().next())
            && control != '\n'
            && control != '\r'
        {
            message = format!(
                "control character U+{:04X} found while parsing a string",
                u32::from(control)
            );
        }
        (Problem::JsonSyntax { message }, offset..offset)
    })
}

/// Where each key and value of a file lies, by JSON pointer, as a reader finds them. The
/// pointers' text is bounded: each spells out every key a value is nested in, so a file of
/// long keys nested deep around a long list (150 KB) made gigabytes of them. Past
/// [`MAX_POINTER_BYTES`] nothing more is kept, and the file is refused.
#[derive(Debug, Default)]
pub(super) struct Locations {
    by_pointer: HashMap<String, Location>,
    pointer_bytes: usize,
    overflowed: bool,
}

/// The most bytes the pointers of one file's places may take together: a file of a million
/// values (the most one may hold) whose pointers average 128 bytes.
pub const MAX_POINTER_BYTES: usize = 128 << 20;

impl Locations {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, pointer: String, location: Location) {
        if self.overflowed {
            return;
        }
        self.pointer_bytes = self.pointer_bytes.saturating_add(pointer.len());
        if self.pointer_bytes > MAX_POINTER_BYTES {
            self.overflowed = true;
            self.by_pointer = HashMap::new();
            return;
        }
        self.by_pointer.insert(pointer, location);
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Whether the pointers passed [`MAX_POINTER_BYTES`]: the places are not kept.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    #[cfg(test)]
    pub fn contains_key(&self, pointer: &str) -> bool {
        self.by_pointer.contains_key(pointer)
    }

    pub fn into_map(self) -> HashMap<String, Location> {
        self.by_pointer
    }
}

#[cfg(test)]
impl std::ops::Index<&str> for Locations {
    type Output = Location;

    fn index(&self, pointer: &str) -> &Location {
        &self.by_pointer[pointer]
    }
}

impl IntoIterator for Locations {
    type Item = (String, Location);
    type IntoIter = std::collections::hash_map::IntoIter<String, Location>;

    fn into_iter(self) -> Self::IntoIter {
        self.by_pointer.into_iter()
    }
}

/// Converts a float to JSON, refusing NaN and infinities which JSON cannot hold.
pub(super) fn json_float(value: f64, text: &str) -> Result<Value, Problem> {
    serde_json::Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| Problem::UnsupportedNumber { text: text.into() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Long keys nested deep around a long list: each item's place spells out every key, and
    /// a file of 150 KB made gigabytes of them. Refused in each format, quickly.
    #[test]
    fn long_keys_nested_deep_around_a_long_list_are_refused() {
        // 50 levels of 1,003-byte keys: each item's place is 50 KB, and 20,000 items 1 GB.
        let keys: Vec<String> = (0..50)
            .map(|level| format!("{level:03}{}", "k".repeat(1000)))
            .collect();
        let items = vec!["1"; 20_000].join(", ");
        let opening: String = keys.iter().map(|key| format!("{{\"{key}\": ")).collect();
        let json = format!("{opening}{{\"list\": [{items}]}}{}", "}".repeat(keys.len()));
        let toml = format!("[{}]\nlist = [{items}]\n", keys.join("."));
        // YAML reads the JSON text as its own flow style.
        let yaml = json.clone();
        for (format, text) in [
            (Format::Json, json),
            (Format::Toml, toml),
            (Format::Yaml, yaml),
        ] {
            let file = SourceFile::new(std::path::PathBuf::from("deep"), text);
            let Err(refused) = Document::parse(SourceId::UNSET, &file, format) else {
                panic!("{format:?} was read");
            };
            assert!(
                matches!(refused.problem, Problem::KeysTooLong { .. }),
                "{format:?}: {:?}",
                refused.problem
            );
        }
        // A file of ordinary keys is read, its places kept.
        let file = SourceFile::new(
            std::path::PathBuf::from("flat"),
            format!("list = [{items}]\n"),
        );
        let read = Document::parse(SourceId::UNSET, &file, Format::Toml).unwrap();
        assert!(read.writes("/list/19999"));
    }

    /// JSON values of every kind, empty lists and objects among them, nested a few deep.
    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            // Texts with the marks the count looks for, and escapes.
            "[a-z ,\\[\\]{}\"\\\\]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z,\\[{\"]{0,4}", inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    #[test]
    fn empty_lists_among_items_count_once() {
        for (text, values) in [
            ("[[], [], {}]", 4),
            ("{\"a\": [], \"b\": {}}", 3),
            ("[ ]", 1),
            ("[\n  1\n]", 2),
            ("\"[,{\"", 1),
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(values_of(&value), values, "{text}");
            assert_eq!(json_values(text), values, "{text}");
        }
    }

    proptest! {
        // The count before reading is the count once read, compact or pretty.
        #[test]
        fn a_json_text_is_counted_before_it_is_read_as_after(value in json()) {
            let read = values_of(&value);
            prop_assert_eq!(json_values(&serde_json::to_string(&value).unwrap()), read);
            prop_assert_eq!(json_values(&serde_json::to_string_pretty(&value).unwrap()), read);
        }
    }
}
