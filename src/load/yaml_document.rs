//! YAML → JSON value with spans. serde-saphyr attaches a location to every `Spanned<T>` it
//! deserializes, so a small recursive node type collects the position of every key and value.
//!
//! Keys are judged here rather than by the reader, so that each rule holds everywhere and a
//! second key can name the first: a key is the value YAML resolves it to, written as text
//! (the name a JSON object, and so the schema and the templates, knows it by). `1`, `0x1`,
//! `01` and `"1"` are all the key `1`, and a mapping that gives two of them gives one key
//! twice. `<<` (plain, or tagged `!!merge`) is the merge key of YAML's merge-key type
//! (yaml.org/type/merge.html): its mapping's keys, or those of each mapping of its list
//! (earlier ones first), join the mapping unless it sets them itself. It too is a key, which a
//! mapping gives once.

use std::collections::HashMap;
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use super::document::{Location, Locations, Unreadable, json_float};
use crate::pointer::child_pointer;
use crate::problem::Problem;
use crate::source::SourceFile;

enum Node {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<Node>, Spanned<Node>)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::UInt(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<Node>>()? {
            let value = map.next_value::<Spanned<Node>>()?;
            entries.push((key, value));
        }
        Ok(Node::Map(entries))
    }
}

fn range(location: &serde_saphyr::Location, file: &SourceFile) -> Range<usize> {
    let text = &file.text;
    let span = location.span();
    let start = span
        .byte_offset()
        .and_then(|offset| usize::try_from(offset).ok())
        .unwrap_or_else(|| {
            // Errors carry only a line and a character column.
            let number = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            file.offset_of(number(location.line()), number(location.column()))
        })
        .min(text.len());
    let len = span
        .byte_len()
        .and_then(|len| usize::try_from(len).ok())
        .unwrap_or(0);
    start..(start + len).min(text.len())
}

/// The values aliases (`*name`, and `<<: *name` merges) may add to a file, per byte of it.
/// Without a bound of its own size, a few hundred bytes of anchors that each repeat the one
/// before ten times stood for a million values (the parser's own limit), held as nodes, JSON
/// values and locations: about 130 MB and seconds of work for each such file, which a
/// workspace may hold by the dozen. Bounded by the file's size, a file's aliases cost at
/// most a few times what the same values written out would.
const ALIAS_VALUES_PER_BYTE: usize = 2;

/// What aliases may add to any file, however small: a short file that names a list twice
/// stays valid.
const MIN_ALIAS_VALUES: usize = 64;

/// serde-saphyr's options for a YAML text of `len` bytes: its defaults (one document), with
/// the values aliases may add bounded by the text's size.
fn options(len: usize) -> serde_saphyr::Options {
    let mut aliases = serde_saphyr::options::AliasLimits::default();
    aliases.max_total_replayed_events = len
        .saturating_mul(ALIAS_VALUES_PER_BYTE)
        .clamp(MIN_ALIAS_VALUES, aliases.max_total_replayed_events);
    let mut options = serde_saphyr::Options::default();
    options.alias_limits = aliases;
    // YAML 1.2's booleans only: `no`, `yes`, `on` and `off` are text, as in TOML and JSON (a
    // placeholder `AGENT_NAME: no` is the name "no", not false).
    options.strict_booleans = true;
    // A `!!binary` value is read as the text written, not decoded from base64: promptc's
    // values are all text a reviewer reads, and a condition or a prompt's text written in
    // base64 would be one thing in the file and another in the prompt.
    options.ignore_binary_tag_for_string = true;
    // A tag of the application's own (`!secret`, `!include`) or one of YAML's that changes
    // what a collection is (`!!set`, `!!omap`) would be dropped without a word, or read as
    // something other than what is written: refused where it stands.
    options.reject_unsupported_tags = true;
    options
}

/// A parser error's message in the user's terms: its first line, without the position (the
/// diagnostic shows it), the reader's limits explained, and without advice about the
/// parser's own options, which a user cannot set.
fn message(error: &serde_saphyr::Error) -> String {
    let message = first_line(&error.to_string());
    if let Some((kept, _)) = message.split_once(". If you just use !!binary") {
        return kept.to_string();
    }
    message
}

/// The options a document is read with: [`options`], with every key and every merge key
/// handed on as written, for [`convert`] to judge.
fn document_options(len: usize, max_nodes: usize) -> serde_saphyr::Options {
    let mut options = options(len);
    let mut budget = options.budget.clone().unwrap_or_default();
    if max_nodes < budget.max_nodes {
        budget.max_nodes = max_nodes;
        options.budget = Some(budget);
    }
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
    options.merge_keys = serde_saphyr::MergeKeyPolicy::AsOrdinary;
    options
}

/// A YAML text's value, read as a file's is, its places left out: a rules file's frontmatter,
/// written after `blank` bytes of blank lines that keep its offsets and lines the file's, and
/// whose aliases may repeat as much as its own size allows.
pub(super) fn value(blank: usize, text: &str) -> Result<Value, Unreadable> {
    let file = SourceFile::new(std::path::PathBuf::new(), text.to_string());
    read(
        &file,
        &mut Locations::new(),
        text.len().saturating_sub(blank),
        usize::MAX,
    )
}

/// A YAML file's value and places, refused as `too-many-values` once it holds more than
/// `room` values (those the workspace's files may still add): the reader stops there rather
/// than building every value first.
pub(super) fn parse(
    file: &SourceFile,
    locations: &mut Locations,
    room: usize,
) -> Result<Value, Unreadable> {
    // A value is at most two of the reader's nodes (a key and its value): past this many
    // nodes, the file holds more values than `room`.
    let max_nodes = room.saturating_mul(2).saturating_add(2);
    read(file, locations, file.text.len(), max_nodes)
}

/// The places of a JSON text's keys and values (JSON is YAML), which serde_json has read: a
/// carriage return alone is blank space there, and the places stay where the file's lines
/// put them.
pub(super) fn places_of_json(
    file: &SourceFile,
    locations: &mut Locations,
) -> Result<Value, Unreadable> {
    read_any_endings(file, locations, file.text.len(), usize::MAX)
}

/// [`parse`], the aliases bounded by `size` bytes.
fn read(
    file: &SourceFile,
    locations: &mut Locations,
    size: usize,
    max_nodes: usize,
) -> Result<Value, Unreadable> {
    let text = &file.text;
    // The reader breaks lines at a carriage return alone (old Mac line endings), where every
    // other reader of the file, and its positions, break them at a line feed: a problem on
    // its fifth line was placed on its first. Refused, as TOML refuses it.
    if let Some(at) = memchr::memchr_iter(b'\r', text.as_bytes())
        .find(|&at| text.as_bytes().get(at + 1) != Some(&b'\n'))
    {
        let message = LONE_CARRIAGE_RETURN.into();
        return Err(Unreadable::from((
            Problem::YamlSyntax { message },
            at..at + 1,
        )));
    }
    read_any_endings(file, locations, size, max_nodes)
}

/// [`read`], whatever the text's line endings.
fn read_any_endings(
    file: &SourceFile,
    locations: &mut Locations,
    size: usize,
    max_nodes: usize,
) -> Result<Value, Unreadable> {
    let text = &file.text;
    let options = document_options(size, max_nodes);
    let lowered = options
        .budget
        .as_ref()
        .is_some_and(|budget| budget.max_nodes == max_nodes);
    let root: Spanned<Node> = serde_saphyr::from_str_with_options(text, options)
        .map_err(|error| {
            if lowered && error.to_string().contains("budget breached: Nodes") {
                let problem = Problem::TooManyValues {
                    limit: super::document::MAX_VALUES,
                    together: true,
                };
                return Unreadable::from((problem, 0..0));
            }
            let at = error.location().map_or(0..0, |l| range(&l, file));
            if let Some((message, at)) = refused_tag(&error, text, &at) {
                return Unreadable::from((Problem::YamlSyntax { message }, at));
            }
            if let Some(number) = non_finite(&error) {
                // The reader places the number's first character: the whole number is what
                // to change.
                let end = text
                    .get(at.start..)
                    .filter(|rest| rest.starts_with(number.as_str()))
                    .map_or(at.start, |_| at.start + number.len());
                let problem = Problem::UnsupportedNumber { text: number };
                return Unreadable::from((problem, at.start..end));
            }
            let message = message(&error);
            if let Some((message, dash)) = misaligned_item(text, at.start, &message) {
                return Unreadable::from((Problem::YamlSyntax { message }, dash..dash + 1));
            }
            if let Some(tab) = indenting_tab(text, at.start, &message) {
                let message = TAB_INDENT.into();
                return Unreadable::from((Problem::YamlSyntax { message }, tab..tab + 1));
            }
            // The reader stops in the second document; the separator that began it is what to
            // remove.
            if message == MULTIPLE_DOCUMENTS
                && let Some((marker, at)) = separator_before(text, at.start)
            {
                let message = if marker == END_MARKER {
                    "a file holds one YAML document: `...` ends it, and more follows: remove the `...` line".into()
                } else {
                    message
                };
                return Unreadable::from((Problem::YamlSyntax { message }, at));
            }
            // A quoted value left open runs on to the lines below, where the reader stops: the
            // quote that opened it is what to close.
            let at = if message.contains("quoted scalar") || message.contains("unclosed quote") {
                opening_quote_before(text, at.start).unwrap_or(at.start)
            } else {
                at.start
            };
            Unreadable::from((Problem::YamlSyntax { message }, at..at))
        })?;
    locations.insert(
        String::new(),
        Location {
            key: None,
            value: 0..text.len(),
        },
    );
    // A file of comments alone (a draft, everything commented out) holds no document: an
    // empty table, as the same file in TOML is, not a null the schema refuses.
    if matches!(root.value, Node::Null) && holds_no_document(text) {
        return Ok(Value::Object(Map::new()));
    }
    convert(&root, "", file, locations)
}

/// A list item whose `-` stands deeper than the items above it (`   - name: b` below
/// `  - name: a`): the reader stops there, saying it found no `-`, and the help to begin the
/// line with `- ` fitted a line that does. The message says where the items above stand, and
/// the `-` is placed.
fn misaligned_item(text: &str, offset: usize, message: &str) -> Option<(String, usize)> {
    if !message.contains("did not find expected '-' indicator") {
        return None;
    }
    let line_start = text.get(..offset)?.rfind('\n').map_or(0, |at| at + 1);
    let line = text.get(line_start..)?.split('\n').next()?;
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    if !(rest.starts_with("- ") || rest.trim_end() == "-") {
        return None;
    }
    // The nearest item above, less indented: the list this line was meant to continue.
    let above = text[..line_start]
        .lines()
        .rev()
        .map(|line| {
            (
                line.len() - line.trim_start_matches(' ').len(),
                line.trim_start(),
            )
        })
        .filter(|(_, rest)| !rest.is_empty() && !rest.starts_with('#'))
        .find(|&(at, rest)| at < indent && (rest.starts_with("- ") || rest == "-"))?
        .0;
    let spaces = |n: usize| {
        if n == 1 {
            "1 space".to_string()
        } else {
            format!("{n} spaces")
        }
    };
    Some((
        format!(
            "a list item's `-` stands {} in, where the items above stand {} in: the items of one list line up",
            spaces(indent),
            spaces(above)
        ),
        line_start + indent,
    ))
}

/// The last quote before `offset` that opens a value: after a key's `: `, a list's `- `, or at
/// the start of a line's text.
fn opening_quote_before(text: &str, offset: usize) -> Option<usize> {
    let before = text.get(..offset)?;
    before
        .rmatch_indices(['"', '\''])
        .map(|(at, _)| at)
        .find(|&at| {
            let line_before = before[..at].rsplit('\n').next().unwrap_or_default();
            let lead = line_before.trim_end();
            lead.is_empty() || lead.ends_with(':') || lead.ends_with('-')
        })
}

/// Whether a YAML text is comments, blank lines and document markers only.
fn holds_no_document(text: &str) -> bool {
    text.lines().all(|line| {
        let line = line.trim();
        line.is_empty() || line.starts_with('#') || line == "---" || line == "..."
    })
}

const NULL_KEY: &str = "a key cannot be null (`null`, `~` or nothing before the `:`): write a name, in quotes if it is `null`";

const MULTIPLE_DOCUMENTS: &str = "a file holds one YAML document: remove the `---` separators";

/// The document end marker, after which a second document may begin without a `---`.
const END_MARKER: &str = "...";

/// The last `---` or `...` line that starts before `offset`: the marker, and its range.
fn separator_before(text: &str, offset: usize) -> Option<(&'static str, Range<usize>)> {
    let before = text.get(..offset)?;
    let mut start = before.len();
    loop {
        let line_start = before[..start].rfind('\n').map_or(0, |at| at + 1);
        for marker in ["---", END_MARKER] {
            if before[line_start..].starts_with(marker) {
                return Some((marker, line_start..line_start + 3));
            }
        }
        if line_start == 0 {
            return None;
        }
        start = line_start - 1;
    }
}

/// serde-saphyr's message without what our renderer shows itself: its `error: line N column
/// M:` prefix and the snippet after the first line.
fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or(message).trim();
    let line = line.strip_prefix("error:").unwrap_or(line).trim_start();
    let without_position = line
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(": "))
        .filter(|(position, _)| position.contains("column"))
        .map_or(line, |(_, message)| message)
        .trim();
    // The reader's limits and its API, in the user's terms.
    if without_position.starts_with("budget breached") {
        "the document is too large or too deeply nested".into()
    } else if let Some((_, limit)) = without_position
        .strip_prefix("alias replay limit exceeded")
        .and_then(|rest| rest.rsplit_once("> "))
    {
        format!(
            "aliases (`*name`) repeat more values than the YAML's size allows (at most \
             {limit}, {ALIAS_VALUES_PER_BYTE} per byte): repeat fewer, or write the values out"
        )
    } else if without_position.starts_with("multiple YAML documents") {
        MULTIPLE_DOCUMENTS.into()
    } else if without_position.starts_with("recursive references require") {
        // An alias inside the node its anchor names: a value that holds itself.
        "an alias (`*name`) stands inside the value its anchor (`&name`) names, which would hold itself without end: anchor a value apart from where its alias is used".into()
    } else if without_position.starts_with("cannot deserialize null into string") {
        // A key left empty, `~` or `null`: the reader's words name its own types.
        NULL_KEY.into()
    } else {
        without_position.to_string()
    }
}

const BINARY_VALUE: &str = "a `!!binary` value: promptc reads text as it is written, and text in base64 is not what a reviewer reads: write the text itself, without the tag";

/// What a text value tagged otherwise than `!!str` is told: promptc reads text as written.
fn unread_tag(tag: &str) -> String {
    format!(
        "the tag `{tag}` is not one promptc reads: a value is read as it is written, so drop \
         the tag"
    )
}

/// The range of the tag that stands before the value at `offset` (on its line, or before a
/// block scalar's header or a line break), if one does: `!!binary` (read as written, not
/// decoded, see [`options`], and refused: its text is base64, which nothing in a workspace
/// means), or any other but `!!str`, which would be dropped without a word.
fn tag_before(text: &str, offset: usize) -> Option<Range<usize>> {
    let before = text.get(..offset)?.trim_end();
    // A block scalar's header: `|` or `>`, then its chomping and indentation indicators.
    let header = before.trim_end_matches(|c: char| c == '-' || c == '+' || c.is_ascii_digit());
    // A block scalar's `>` stands apart; the `>` that ends a verbatim tag does not.
    let trimmed = match header.strip_suffix(['|', '>']) {
        Some(tagged) if tagged.is_empty() || tagged.ends_with(char::is_whitespace) => {
            tagged.trim_end()
        }
        _ => before,
    };
    let end = trimmed.len();
    // A verbatim tag (`!<tag:yaml.org,2002:binary>`) may hold a comma.
    let verbatim = trimmed
        .ends_with('>')
        .then(|| trimmed.rfind("!<"))
        .flatten();
    let start = verbatim.unwrap_or_else(|| {
        trimmed
            .rfind(|c: char| c.is_whitespace() || matches!(c, '[' | '{' | ','))
            .map_or(0, |at| at + 1)
    });
    let tag = trimmed.get(start..)?;
    // A `!` in a comment above a value on the next line is no tag.
    let line = trimmed.get(..start)?.rsplit('\n').next().unwrap_or("");
    if line.contains('#') {
        return None;
    }
    // An anchor may stand between the tag and the value (`!tag &name value`).
    if tag.starts_with('&') && !tag.contains('!') {
        return tag_before(text, start);
    }
    tag.starts_with('!').then_some(start..end)
}

/// A tag the reader refuses (see [`options`]), or one it cannot read as text (`!!timestamp`,
/// which promptc would not read as a date), told in promptc's words at the tag itself: the
/// reader places the error at the value the tag stands before.
fn refused_tag(
    error: &serde_saphyr::Error,
    text: &str,
    at: &Range<usize>,
) -> Option<(String, Range<usize>)> {
    use serde_saphyr::Error;
    let mut inner = error;
    while let Error::WithSnippet { error, .. } | Error::AliasError { error, .. } = inner {
        inner = error;
    }
    let tag = tag_before(text, at.start);
    let name = match inner {
        Error::UnsupportedTag { tag: name, .. } => {
            tag.clone().and_then(|tag| text.get(tag)).unwrap_or(name)
        }
        Error::TaggedScalarCannotDeserializeIntoString { .. } => text.get(tag.clone()?)?,
        _ => return None,
    };
    Some((unread_tag(name), tag.unwrap_or_else(|| at.clone())))
}

const TAB_INDENT: &str = "a tab indents this line: YAML indents with spaces only";

const LONE_CARRIAGE_RETURN: &str =
    "a carriage return not followed by a line feed: save the file with LF or CRLF line endings";

/// Messages of the reader that a tab in a line's indentation may cause, though they name
/// what it met instead (a key not found, a block scalar that cannot start).
const TAB_SYMPTOMS: &[&str] = &[
    "tab",
    "did not find expected key",
    "mapping values are not allowed",
    "expected <block end>",
];

/// How many lines after the reader's place a tab that caused its error may stand: it stops at
/// the value before a tabbed line, or at the header of a block scalar whose text the tab
/// indents.
const TAB_LINES_AFTER: usize = 2;

/// The offset of a tab in the indentation of the line at `offset`, or of one of the next
/// lines, when the reader's `message` is one a tab there causes: the reader places such an
/// error at what it was reading (the key above, a block scalar's `|`) and names what it met,
/// so the tab, which is the mistake, was left to be found.
fn indenting_tab(text: &str, offset: usize, message: &str) -> Option<usize> {
    let names_tab = message.contains("tab");
    if !TAB_SYMPTOMS.iter().any(|symptom| message.contains(symptom)) {
        return None;
    }
    let line_start = text.get(..offset)?.rfind('\n').map_or(0, |at| at + 1);
    // The error's own line, then (for a message that names a tab) the lines after it.
    let lines = if names_tab { 1 + TAB_LINES_AFTER } else { 1 };
    let mut start = line_start;
    for line in text.get(line_start..)?.split_inclusive('\n').take(lines) {
        // A message that names no tab is moved only to a tab that begins its line: a tab
        // after spaces may be text (a plain value's next line), and the reader's own words
        // then say what is wrong.
        let indent = if names_tab {
            line.len() - line.trim_start_matches([' ', '\t']).len()
        } else {
            line.len() - line.trim_start_matches('\t').len()
        };
        if let Some(tab) = line.get(..indent).and_then(|indent| indent.find('\t')) {
            return Some(start + tab);
        }
        start += line.len();
    }
    None
}

/// Whether a tag keeps text text.
fn is_text_tag(tag: &str) -> bool {
    matches!(tag, "!!str" | "!<tag:yaml.org,2002:str>")
}

/// What a scalar that is not text is, in the user's words; `None` for text and collections.
fn scalar_kind(node: &Node) -> Option<&'static str> {
    match node {
        Node::Null => Some("null"),
        Node::Bool(_) => Some("a boolean"),
        Node::Int(_) | Node::UInt(_) | Node::Float(_) => Some("a number"),
        _ => None,
    }
}

/// A quoted scalar read as something other than text: only a tag (`!!bool "true"`) makes
/// one, and the value then is not what it reads as. It was refused later as a wrong type,
/// with the help to write the value in quotes, which it was.
fn refuse_quoted_but_tagged(
    node: &Spanned<Node>,
    file: &SourceFile,
    kind: &str,
) -> Result<(), Unreadable> {
    let at = range(&node.referenced, file);
    let written = file.text.get(at.clone()).unwrap_or("");
    // The span may start at the tag or at the value after it.
    let value = match written.strip_prefix('!') {
        Some(tagged) => tagged
            .split_once(char::is_whitespace)
            .map_or("", |(_, value)| value.trim_start()),
        None => written,
    };
    if value.starts_with(['"', '\'']) {
        return Err(Unreadable::from((
            Problem::YamlSyntax {
                message: format!(
                    "a tag makes this quoted text {kind}: promptc reads a value as it is \
                     written, so drop the tag to keep the text, or write the value without \
                     quotes or tag"
                ),
            },
            at,
        )));
    }
    Ok(())
}

fn convert(
    node: &Spanned<Node>,
    pointer: &str,
    file: &SourceFile,
    locations: &mut Locations,
) -> Result<Value, Unreadable> {
    if let Some(kind) = scalar_kind(&node.value) {
        refuse_quoted_but_tagged(node, file, kind)?;
    }
    if let Some(text) = number_outside_core_schema(node, file) {
        return Ok(Value::String(text));
    }
    Ok(match &node.value {
        Node::Null => Value::Null,
        Node::Bool(b) => Value::Bool(*b),
        Node::Int(i) => Value::from(*i),
        // YAML and JSON hold whole numbers up to 2^64 - 1 exactly; TOML's reader stops at
        // 2^63 - 1, and `show`/`context` name such a value as one TOML cannot write.
        Node::UInt(u) => Value::from(*u),
        Node::Float(f) => {
            let at = range(&node.referenced, file);
            let written = file.text.get(at.clone()).unwrap_or_default().trim();
            // A whole number past 64 bits, which the reader made a float of, losing its last
            // digits: refused, as TOML's reader refuses it (`!!float` asks for the float).
            if is_decimal_integer(written) && !is_tagged(file, &at) {
                // Leading zeros (`01`, `-007`), which YAML 1.2 reads as the decimal number and
                // the reader as a float: the whole number it is.
                let digits = written.strip_prefix('+').unwrap_or(written);
                if let Ok(whole) = digits.parse::<i64>() {
                    return Ok(Value::from(whole));
                }
                if let Ok(whole) = digits.parse::<u64>() {
                    return Ok(Value::from(whole));
                }
                let problem = Problem::UnsupportedNumber {
                    text: written.into(),
                };
                return Err(Unreadable::from((problem, at)));
            }
            json_float(*f, &f.to_string()).map_err(|p| Unreadable::from((p, at)))?
        }
        Node::Str(s) => {
            let at = range(&node.referenced, file);
            // The reader's span starts after the tag, or (for some tags) at it.
            let tag_at = || {
                let written = file.text.get(at.clone())?;
                let length = written.find(char::is_whitespace).unwrap_or(written.len());
                written
                    .starts_with('!')
                    .then_some(at.start..at.start + length)
            };
            if let Some(tag) = tag_before(&file.text, at.start).or_else(tag_at) {
                let name = file.text.get(tag.clone()).unwrap_or_default();
                let message = match name {
                    "!!binary" | "!<tag:yaml.org,2002:binary>" => BINARY_VALUE.into(),
                    name if is_text_tag(name) => String::new(),
                    name => unread_tag(name),
                };
                if !message.is_empty() {
                    return Err(Unreadable::from((Problem::YamlSyntax { message }, tag)));
                }
            }
            Value::String(s.clone())
        }
        Node::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let child = child_pointer(pointer, &index.to_string());
                out.push(convert(item, &child, file, locations)?);
                locations.insert(
                    child,
                    Location {
                        key: None,
                        value: range(&item.referenced, file),
                    },
                );
            }
            Value::Array(out)
        }
        Node::Map(entries) => {
            let mut map = Map::new();
            // Where each key was first given, and what it was written as: a second key of
            // the same name is refused there, with a label at the first.
            let mut first: HashMap<String, Range<usize>> = HashMap::new();
            let mut merge: Option<(Range<usize>, &Spanned<Node>)> = None;
            for (key, value) in entries {
                let at = range(&key.referenced, file);
                if is_merge_key(key, &at, file) {
                    if let Some((earlier, _)) = &merge {
                        let line = file.line_col(earlier.start).0;
                        return Err(Unreadable {
                            problem: Problem::yaml_second_merge(line),
                            at,
                            first: Some(earlier.clone()),
                        });
                    }
                    merge = Some((at, value));
                    continue;
                }
                let name = key_name(key, &at, file)?;
                if let Some(earlier) = first.get(&name) {
                    return Err(duplicate_key(&name, earlier, at, file));
                }
                let child = child_pointer(pointer, &name);
                let converted = convert(value, &child, file, locations)?;
                // Each value's pointer is made once, and given to the map of places.
                locations.insert(
                    child,
                    Location {
                        key: Some(at.clone()),
                        value: range(&value.referenced, file),
                    },
                );
                map.insert(name.clone(), converted);
                first.insert(name, at);
            }
            if let Some((_, value)) = merge {
                merge_into(&mut map, value, pointer, file, locations)?;
            }
            Value::Object(map)
        }
    })
}

/// Whether a key is YAML's merge key: `<<` written plain, or tagged `!!merge` (a quoted
/// `"<<"` is an ordinary key). The reader hands both on as the text `<<`; the file tells them
/// apart.
fn is_merge_key(key: &Spanned<Node>, at: &Range<usize>, file: &SourceFile) -> bool {
    matches!(&key.value, Node::Str(text) if text == MERGE_KEY)
        && file.text.get(at.clone()).is_some_and(|written| {
            let written = written.trim();
            written == MERGE_KEY || written.starts_with("!!merge")
        })
}

const MERGE_KEY: &str = "<<";

/// The name a key is read as: the value YAML resolves it to, as text. A null, a list or a
/// mapping names nothing a JSON object can hold. A key of decimal digits with leading zeros
/// (`01`) is an integer, as YAML 1.2's core schema has it (the reader takes it for a float
/// lest it be read as YAML 1.1's octal), so that it is the key `1` whatever the zeros.
fn key_name(
    key: &Spanned<Node>,
    at: &Range<usize>,
    file: &SourceFile,
) -> Result<String, Unreadable> {
    let refused = |message: &str| {
        Unreadable::from((
            Problem::YamlSyntax {
                message: message.into(),
            },
            at.clone(),
        ))
    };
    if let Some(text) = number_outside_core_schema(key, file) {
        return Ok(text);
    }
    Ok(match &key.value {
        Node::Str(text) => text.clone(),
        Node::Bool(b) => b.to_string(),
        Node::Int(i) => i.to_string(),
        Node::UInt(u) => u.to_string(),
        Node::Float(f) => match file.text.get(at.clone()).and_then(core_integer) {
            Some(integer) => integer.to_string(),
            // As JSON writes the number; YAML's own words for those it cannot.
            None => match serde_json::Number::from_f64(*f) {
                Some(number) => number.to_string(),
                None if f.is_nan() => ".nan".into(),
                None if f.is_sign_negative() => "-.inf".into(),
                None => ".inf".into(),
            },
        },
        Node::Null => return Err(refused(NULL_KEY)),
        // `when: {{ not yolo }}`: the braces read as a mapping whose key is a mapping. A
        // condition is an expression, and quoting the template (the help for other keys) only
        // made a condition that does not compile.
        Node::Map(_) if braces_after_condition_key(file, at) => {
            return Err(refused(CONDITION_IN_BRACES));
        }
        Node::Seq(_) | Node::Map(_) => {
            return Err(refused(
                "a key is a name (text, a number or a boolean), not a list or a mapping",
            ));
        }
    })
}

/// The message for a condition written as a template in braces, which [`yaml_help`] knows.
///
/// [`yaml_help`]: crate::problem
pub const CONDITION_IN_BRACES: &str =
    "a condition is an expression, not a template: its `{{ … }}` reads as a YAML mapping";

/// Whether the mapping key at `at` is the inner `{` of `{{` written right after a
/// condition's key (`when:`, `match:`), as its line has it.
fn braces_after_condition_key(file: &SourceFile, at: &Range<usize>) -> bool {
    let Some(before) = file.text.get(..at.start) else {
        return false;
    };
    let line = before.rsplit('\n').next().unwrap_or(before);
    let Some(key) = line.trim_end().strip_suffix('{').map(str::trim_end) else {
        return false;
    };
    let key = key.trim_start().trim_start_matches("- ").trim_start();
    matches!(key, "when:" | "match:")
}

/// Whether the scalar at `at` has a tag (`!!float 1`), before its span or at its start.
fn is_tagged(file: &SourceFile, at: &Range<usize>) -> bool {
    file.text
        .get(..at.start)
        .and_then(|before| before.trim_end().rsplit(char::is_whitespace).next())
        .is_some_and(|word| word.starts_with('!'))
        || file
            .text
            .get(at.clone())
            .is_some_and(|written| written.trim_start().starts_with('!'))
}

/// The text of an untagged scalar the reader took for a number that YAML 1.2's core schema
/// reads as text: `1_000`, `0b101`, `-0x1F`, `1_2_3` (the reader also knows YAML 1.1's
/// spellings). The README promises YAML 1.2, and a placeholder written `1_2_3` is the text
/// `1_2_3`, not 123 in the prompt; the YAML language server reads it so too.
fn number_outside_core_schema(node: &Spanned<Node>, file: &SourceFile) -> Option<String> {
    if !matches!(node.value, Node::Int(_) | Node::UInt(_) | Node::Float(_)) {
        return None;
    }
    // Where the scalar is written: an alias (`*n`) stands for its anchor's scalar.
    let at = range(&node.defined, file);
    let written = file.text.get(at.clone())?.trim();
    if written.is_empty() || is_core_number(written) || is_tagged(file, &at) {
        return None;
    }
    Some(written.to_string())
}

/// Whether a plain scalar is a number in YAML 1.2's core schema (yaml.org/spec/1.2.2,
/// 10.3.2): `[-+]?[0-9]+`, `0o[0-7]+`, `0x[0-9a-fA-F]+`,
/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, `[-+]?\.inf` and `.nan` (in three
/// casings).
fn is_core_number(written: &str) -> bool {
    let digits =
        |text: &str, radix: u32| !text.is_empty() && text.chars().all(|c| c.is_digit(radix));
    if let Some(octal) = written.strip_prefix("0o") {
        return digits(octal, 8);
    }
    if let Some(hex) = written.strip_prefix("0x") {
        return digits(hex, 16);
    }
    if [".nan", ".NaN", ".NAN"].contains(&written) {
        return true;
    }
    let unsigned = written.strip_prefix(['-', '+']).unwrap_or(written);
    if [".inf", ".Inf", ".INF"].contains(&unsigned) {
        return true;
    }
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (unsigned, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => digits(fraction, 10),
        Some((whole, fraction)) => {
            digits(whole, 10) && (fraction.is_empty() || digits(fraction, 10))
        }
        None => digits(mantissa, 10),
    };
    let exponent_ok = exponent
        .is_none_or(|exponent| digits(exponent.strip_prefix(['-', '+']).unwrap_or(exponent), 10));
    mantissa_ok && exponent_ok
}

/// The integer a plain scalar of decimal digits (and a sign) is in YAML 1.2's core schema.
fn core_integer(written: &str) -> Option<i128> {
    is_decimal_integer(written)
        .then(|| written.trim().parse().ok())
        .flatten()
}

/// Whether a plain scalar is written as a whole number: decimal digits after an optional sign.
fn is_decimal_integer(written: &str) -> bool {
    let digits = written.trim().trim_start_matches(['-', '+']);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The number the reader refused as infinite (`1e400`), as written.
fn non_finite(error: &serde_saphyr::Error) -> Option<String> {
    let message = first_line(&error.to_string());
    let number = message
        .strip_prefix("non-finite float `")?
        .split_once('`')?
        .0;
    Some(number.to_string())
}

/// The problem of a key that reads as a key the mapping has at `earlier`: at the second, with
/// the first's line, and how each was written when they differ (`1` and `0x1`).
fn duplicate_key(
    name: &str,
    earlier: &Range<usize>,
    at: Range<usize>,
    file: &SourceFile,
) -> Unreadable {
    let line = file.line_col(earlier.start).0;
    let written = |range: &Range<usize>| file.text.get(range.clone()).unwrap_or(name).trim();
    let first_written = (written(earlier) != written(&at)).then(|| written(earlier));
    Unreadable {
        problem: Problem::yaml_duplicate_key(name, line, first_written),
        at,
        first: Some(earlier.clone()),
    }
}

/// Adds to `map` the entries of a merge key's value that it does not set itself: those of a
/// mapping, or of each mapping of a list, an earlier mapping's before a later one's (YAML's
/// merge-key type), with their places.
fn merge_into(
    map: &mut Map<String, Value>,
    value: &Spanned<Node>,
    pointer: &str,
    file: &SourceFile,
    locations: &mut Locations,
) -> Result<(), Unreadable> {
    let mappings: Vec<&Spanned<Node>> = match &value.value {
        Node::Map(_) => vec![value],
        Node::Seq(items) => items.iter().collect(),
        _ => Vec::new(),
    };
    if mappings.is_empty() || !mappings.iter().all(|m| matches!(m.value, Node::Map(_))) {
        return Err(Unreadable::from((
            Problem::YamlSyntax {
                message: "`<<` merges a mapping, or a list of mappings, into the mapping it is in: give it a mapping (`<<: *name`) or a list of them (`<<: [*first, *second]`)".into(),
            },
            range(&value.referenced, file),
        )));
    }
    for mapping in mappings {
        let mut places = Locations::new();
        let Value::Object(entries) = convert(mapping, pointer, file, &mut places)? else {
            continue;
        };
        let mut merged = HashSet::new();
        for (name, entry) in entries {
            if !map.contains_key(&name) {
                merged.insert(child_pointer(pointer, &name));
                map.insert(name, entry);
            }
        }
        // The places of the entries merged, and of everything inside them.
        for (at, place) in places {
            let Some(rest) = at
                .strip_prefix(pointer)
                .and_then(|rest| rest.strip_prefix('/'))
            else {
                continue;
            };
            let entry = rest.split('/').next().unwrap_or(rest);
            if merged.contains(&format!("{pointer}/{entry}")) {
                locations.insert(at, place);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, locations: &mut Locations) -> Result<Value, (Problem, Range<usize>)> {
        super::parse(
            &SourceFile::new("test.yaml".into(), text.into()),
            locations,
            super::super::document::MAX_VALUES,
        )
        .map_err(|unreadable| (unreadable.problem, unreadable.at))
    }

    /// The refusal of a text, its message, and the texts it points at and labels.
    fn refused(text: &str) -> (String, String, Option<String>) {
        let unreadable = super::parse(
            &SourceFile::new("test.yaml".into(), text.into()),
            &mut Locations::new(),
            super::super::document::MAX_VALUES,
        )
        .unwrap_err();
        let Problem::YamlSyntax { message } = unreadable.problem else {
            panic!("{:?}", unreadable.problem)
        };
        let first = unreadable.first.map(|first| text[first].to_string());
        (message, text[unreadable.at].to_string(), first)
    }

    #[test]
    fn a_carriage_return_alone_is_refused_where_it_is() {
        let (message, at, _) = refused("id: a\rdescription: b\r");
        assert_eq!(message, LONE_CARRIAGE_RETURN);
        assert_eq!(at, "\r");
        let mut locations = Locations::new();
        let value = parse("id: a\r\ndescription: b\r\n", &mut locations).unwrap();
        assert_eq!(value["description"], "b");
    }

    #[test]
    fn records_key_and_value_spans() {
        let text = "id: a\nover:\n  x:\n    enabled: false\nlist: [1, 2.5, héllo]\n";
        let mut locations = Locations::new();
        let value = parse(text, &mut locations).unwrap();
        assert_eq!(value["list"][1], 2.5);
        assert_eq!(value["list"][2], "héllo");
        let enabled = &locations["/over/x/enabled"];
        assert_eq!(&text[enabled.key.clone().unwrap()], "enabled");
        assert_eq!(&text[enabled.value.clone()], "false");
        assert_eq!(&text[locations["/list/2"].value.clone()], "héllo");
    }

    /// YAML 1.2's core schema: numbers in its spellings only; the others (YAML 1.1's, the
    /// reader's) are the text written, in values and keys alike; a tag asks for the number.
    #[test]
    fn numbers_are_read_as_yaml_1_2_core_schema_reads_them() {
        let text = "a: 1_000\nb: 1_2_3\nc: 0b101\nd: 1_000.5\ne: -0x1F\nf: 0x1F\ng: 0o17\n\
                    h: 017\ni: 1e5\nj: .5\ns: &n 1_5\nt: *n\nu: &m 15\nv: *m\nl: [1_0, 2]\n1_0: key\nm: 1.\nn: +12\n\
                    o: 1.5e-3\np: !!int 0b11\nq: 0X1F\nr: 0o19\n0x10: hex key\n";
        let mut locations = Locations::new();
        let value = parse(text, &mut locations).unwrap();
        let text_of = |key: &str| value[key].as_str().map(str::to_string);
        for (key, written) in [
            ("a", "1_000"),
            ("b", "1_2_3"),
            ("c", "0b101"),
            ("d", "1_000.5"),
            ("e", "-0x1F"),
            ("q", "0X1F"),
            ("r", "0o19"),
            ("1_0", "key"),
            ("16", "hex key"),
            ("s", "1_5"),
            ("t", "1_5"),
        ] {
            assert_eq!(text_of(key).as_deref(), Some(written), "{key}: {value}");
        }
        assert_eq!(value["l"], serde_json::json!(["1_0", 2]));
        for (key, number) in [
            ("f", 31.0),
            ("g", 15.0),
            ("h", 17.0),
            ("i", 1e5),
            ("j", 0.5),
            ("m", 1.0),
            ("n", 12.0),
            ("o", 1.5e-3),
            ("p", 3.0),
            ("u", 15.0),
            ("v", 15.0),
        ] {
            assert_eq!(value[key].as_f64(), Some(number), "{key}: {value}");
        }
    }

    #[test]
    fn duplicate_keys_are_syntax_errors() {
        let mut locations = Locations::new();
        let (problem, _) = parse("a: 1\na: 2\n", &mut locations).unwrap_err();
        assert!(matches!(problem, Problem::YamlSyntax { .. }), "{problem:?}");
    }

    // `1` and `"1"` are one key once read: the second replaced the first without a word.
    // `0x1` and `1`, `01` and `1` were judged by the reader, which wrote neither line.
    #[test]
    fn keys_that_read_the_same_are_duplicates_at_the_second_with_the_first_labelled() {
        assert_eq!(
            refused("a: 1\nb: 2\na: 3\n"),
            (
                "duplicate key `a`: it is set already on line 1; keep one".into(),
                "a".into(),
                Some("a".into())
            )
        );
        for (first, second) in [("\"1\"", "1"), ("0x1", "1"), ("01", "1"), ("1", "0o1")] {
            let text = format!("extra:\n  {first}: a\n  {second}: b\n");
            let (message, at, labelled) = refused(&text);
            assert_eq!(
                message,
                format!(
                    "duplicate key `1`: `{first}` on line 2 reads as the same key (a key is the value it is read as); keep one"
                ),
                "{text}"
            );
            assert_eq!((at.as_str(), labelled.as_deref()), (second, Some(first)));
        }
        let mut locations = Locations::new();
        // One key, as YAML reads it: the name is its value's.
        let value = parse("extra:\n  0x1: a\n  2: b\n", &mut locations).unwrap();
        assert_eq!(value["extra"], serde_json::json!({"1": "a", "2": "b"}));
        assert!(parse("extra:\n  \"1\": a\n  \"01\": b\n", &mut locations).is_ok());
    }

    // A second `<<` was merged by the reader without a word; the merge key type (yaml.org/
    // type/merge.html) takes a list of mappings for several, and a mapping's keys are unique.
    #[test]
    fn a_second_merge_key_is_a_duplicate() {
        let text = "a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: *a\n  <<: *b\n";
        let (message, at, first) = refused(text);
        assert!(
            message.starts_with("duplicate key `<<`: line 4 merges into this mapping already"),
            "{message}"
        );
        assert_eq!((at.as_str(), first.as_deref()), ("<<", Some("<<")));
        assert_eq!(refused(text).1, "<<");
        let unreadable = super::parse(
            &SourceFile::new("test.yaml".into(), text.into()),
            &mut Locations::new(),
            super::super::document::MAX_VALUES,
        )
        .unwrap_err();
        assert_eq!(
            (unreadable.at.start, unreadable.first.map(|f| f.start)),
            (text.rfind("<<").unwrap(), Some(text.find("<<").unwrap()))
        );
    }

    // The merge key type's own example: the mapping's keys first, then each merged mapping's
    // in order, an earlier one's winning.
    #[test]
    fn merge_keys_merge_as_the_merge_key_type_says() {
        let text = "\
list:
  - &CENTER { x: 1, y: 2 }
  - &LEFT { x: 0, y: 2 }
  - &BIG { r: 10 }
  - &SMALL { r: 1 }
  - x: 1
    y: 2
    r: 10
    label: center/big
  - << : *CENTER
    r: 10
    label: center/big
  - << : [ *CENTER, *BIG ]
    label: center/big
  - << : [ *BIG, *LEFT, *SMALL ]
    x: 1
    label: center/big
";
        let mut locations = Locations::new();
        let value = parse(text, &mut locations).unwrap();
        for index in 5..8 {
            assert_eq!(value["list"][4], value["list"][index], "{index}");
        }
        // Merged entries have places.
        assert!(locations.contains_key("/list/7/r"), "{locations:?}");
        // A quoted `"<<"` is an ordinary key.
        let value = parse("extra: {\"<<\": 1}\n", &mut locations).unwrap();
        assert_eq!(value["extra"]["<<"], 1);
        let (message, at, _) = refused("extra:\n  <<: [1]\n");
        assert!(message.starts_with("`<<` merges a mapping"), "{message}");
        // At the list's start.
        assert_eq!(at, "[");
    }

    // An alias inside the mapping its anchor names was told in the parser's words ("recursive
    // references require weak recursion types"), and a number past a float's range so too.
    #[test]
    fn a_value_holding_itself_and_an_infinite_number_are_told_in_the_user_s_terms() {
        let mut locations = Locations::new();
        let (problem, _) = parse("extra: &e\n  c: 1\n  d: *e\n", &mut locations).unwrap_err();
        let Problem::YamlSyntax { message } = problem else {
            panic!("{problem:?}")
        };
        assert!(
            message.starts_with("an alias (`*name`) stands inside"),
            "{message}"
        );
        // A number past a float's range is refused as TOML's and JSON's readers refuse it,
        // tagged or not, the plain one underlined whole; so is a whole number past 64 bits,
        // which the reader would round to a float.
        for (text, number) in [
            ("description: !!float 1e400\n", "1e400"),
            ("budget: -2e999\n", "-2e999"),
            ("id: 99999999999999999999999\n", "99999999999999999999999"),
        ] {
            let (problem, at) = parse(text, &mut locations).unwrap_err();
            assert!(
                matches!(&problem, Problem::UnsupportedNumber { text } if text == number),
                "{problem:?}"
            );
            if !text.contains("!!") {
                assert_eq!(&text[at], number);
            }
        }
        // A float asked for by its tag is one.
        let value = parse("n: !!float 99999999999999999999\n", &mut locations).unwrap();
        assert_eq!(value["n"], serde_json::json!(1e20));
    }

    /// YAML 1.2 reads a whole number with leading zeros as that decimal number (`017` is 17,
    /// not octal); the reader made a float of it, which was refused as past 64 bits.
    #[test]
    fn a_whole_number_with_leading_zeros_is_that_number() {
        let mut locations = Locations::new();
        let value = parse(
            "a: 01\nb: 007\nc: -01\nd: 08\ne: +017\nf: 018446744073709551615\n",
            &mut locations,
        )
        .unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": 1, "b": 7, "c": -1, "d": 8, "e": 17, "f": 18446744073709551615u64})
        );
        let (problem, _) = parse("g: 0018446744073709551616\n", &mut locations).unwrap_err();
        assert!(
            matches!(&problem, Problem::UnsupportedNumber { .. }),
            "{problem:?}"
        );
    }

    // A second document after `...` was said to follow a `---` the file does not have, at the
    // second document's first line.
    #[test]
    fn text_after_an_end_marker_is_placed_at_the_marker() {
        let mut locations = Locations::new();
        let text = "a: 1\n...\nb: 2\n";
        let (problem, at) = parse(text, &mut locations).unwrap_err();
        assert_eq!(
            problem,
            Problem::YamlSyntax {
                message: "a file holds one YAML document: `...` ends it, and more follows: remove the `...` line".into()
            }
        );
        assert_eq!(at, 5..8);
    }

    // A null key was told in the reader's own words ("use Option<String>").
    #[test]
    fn a_null_key_is_said_in_the_users_terms() {
        let mut locations = Locations::new();
        for text in ["extra: {null: c}\n", "extra:\n  ~: c\n"] {
            let (problem, _) = parse(text, &mut locations).unwrap_err();
            let Problem::YamlSyntax { message } = problem else {
                panic!("{problem:?}")
            };
            assert!(
                message.starts_with("a key cannot be null"),
                "{text}: {message}"
            );
        }
    }

    #[test]
    fn limits_are_explained_in_plain_words() {
        let mut locations = Locations::new();
        let (problem, at) = parse("a: 1\n---\nb: 2\n", &mut locations).unwrap_err();
        assert_eq!(
            problem,
            Problem::YamlSyntax {
                message: "a file holds one YAML document: remove the `---` separators".into()
            }
        );
        // At the separator that began the second document, not in that document.
        assert_eq!(at, 5..8);
        // A binary value, which the reader would decode, is refused at its tag, in words
        // that name no option of the parser's.
        let (problem, at) = parse("a: !!binary //79\n", &mut locations).unwrap_err();
        let Problem::YamlSyntax { message } = problem else {
            panic!("{problem:?}")
        };
        assert!(message.starts_with("a `!!binary` value"), "{message}");
        assert_eq!(at, 3..11);
        assert!(!message.contains("Options"), "{message}");
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let (problem, _) = parse(&deep, &mut locations).unwrap_err();
        assert_eq!(
            problem,
            Problem::YamlSyntax {
                message: "the document is too large or too deeply nested".into()
            }
        );
    }

    #[test]
    fn a_quoted_value_a_tag_makes_other_than_text_is_refused() {
        let mut locations = Locations::new();
        for (text, kind) in [
            ("when: !!bool \"true\"\n", "a boolean"),
            ("n: !!int '3'\n", "a number"),
            ("- !!null \"\"\n", "null"),
        ] {
            let (problem, at) = parse(text, &mut locations).unwrap_err();
            let Problem::YamlSyntax { message } = problem else {
                panic!("{problem:?}")
            };
            assert!(
                message.starts_with(&format!("a tag makes this quoted text {kind}")),
                "{text}: {message}"
            );
            assert!(text[at].contains(['"', '\'']), "{text}");
        }
        // A tag promptc does not read is refused at the tag, not dropped without a word.
        let text = "id: !custom todo\nb: [x, !other y]\n";
        let (problem, at) = parse(text, &mut locations).unwrap_err();
        assert_eq!(&text[at], "!custom");
        let Problem::YamlSyntax { message } = problem else {
            panic!("{problem:?}")
        };
        assert!(
            message.contains("the tag `!custom` is not one promptc reads"),
            "{message}"
        );
        let (_, at) = parse("b: [x, !other y]\n", &mut locations).unwrap_err();
        assert_eq!(at, 7..13);
        let text = "a: !<tag:example.com,2000:x> v\n";
        let (_, at) = parse(text, &mut locations).unwrap_err();
        assert_eq!(&text[at], "!<tag:example.com,2000:x>");
        // A `!` in a comment is no tag.
        let value = parse("a: # see !this\n  text\n", &mut locations).unwrap();
        assert_eq!(value, serde_json::json!({"a": "text"}));
        // A tag that keeps text text, or one on a plain value of its own type, is read.
        let value = parse(
            "a: !!str \"true\"\nb: !!int 3\nc: \"true\"\n",
            &mut locations,
        )
        .unwrap();
        assert_eq!(value, serde_json::json!({"a": "true", "b": 3, "c": "true"}));
    }

    #[test]
    fn a_tag_on_a_list_a_mapping_or_a_key_is_refused_at_the_tag() {
        let mut locations = Locations::new();
        for (text, tag) in [
            // A set would be read as a mapping of nulls, an ordered map as a list.
            ("a: !!set {x, y}\n", "!!set"),
            ("a: !!omap\n  - x: 1\n", "!!omap"),
            ("a: !!pairs [x: 1]\n", "!!pairs"),
            // An application's own tag on a collection or a key, dropped before.
            ("a: !custom\n  - x\n", "!custom"),
            ("a: !custom {x: 1}\n", "!custom"),
            ("!custom a: 1\n", "!custom"),
            ("- !include other.yaml\n", "!include"),
            // An anchor between the tag and its value.
            ("a: !custom &name [x]\nb: *name\n", "!custom"),
            ("a: !flag &name true\n", "!flag"),
            // A date, which promptc would not read as one.
            ("a: !!timestamp 2001-12-14\n", "!!timestamp"),
        ] {
            let (problem, at) = parse(text, &mut locations).unwrap_err();
            assert_eq!(&text[at], tag, "{text}");
            let Problem::YamlSyntax { message } = problem else {
                panic!("{problem:?}")
            };
            assert!(
                message.contains(&format!("the tag `{tag}` is not one promptc reads")),
                "{text}: {message}"
            );
        }
        // YAML's own tags for a value of their kind, and the merge key's, are read.
        let value = parse(
            "base: &base {x: 1}\na: !!map {y: 2}\nb: !!seq [z]\nc:\n  !!merge <<: *base\n",
            &mut locations,
        )
        .unwrap();
        assert_eq!(
            value,
            serde_json::json!({"base": {"x": 1}, "a": {"y": 2}, "b": ["z"], "c": {"x": 1}})
        );
    }

    #[test]
    fn aliases_repeat_at_most_twice_the_bytes_of_the_text() {
        let mut locations = Locations::new();
        // Short: what the smallest texts may repeat.
        let value = parse("a: &a [x, z]\nb: *a\nc: *a\n", &mut locations).unwrap();
        assert_eq!(value["c"], serde_json::json!(["x", "z"]));
        // Each anchor names the one before four times: 4^n strings from a few bytes per n.
        let nested = |levels: usize| {
            let mut text = String::from("a0: &a0 [x, x, x, x]\n");
            for level in 1..levels {
                let before = level - 1;
                text.push_str(&format!(
                    "a{level}: &a{level} [*a{before}, *a{before}, *a{before}, *a{before}]\n"
                ));
            }
            text
        };
        // 4 + 16 + 64 strings repeated, and the lists holding them: within 2 per byte.
        assert!(parse(&nested(3), &mut locations).is_ok());
        let text = nested(6);
        let (problem, at) = parse(&text, &mut locations).unwrap_err();
        let Problem::YamlSyntax { message } = problem else {
            panic!("{problem:?}")
        };
        let limit = 2 * text.len();
        assert_eq!(
            message,
            format!(
                "aliases (`*name`) repeat more values than the YAML's size allows (at most \
                 {limit}, 2 per byte): repeat fewer, or write the values out"
            )
        );
        // At an alias of the line whose repeats pass the bound, not at the file's start.
        assert!(text[at.start..].starts_with("*a"), "{at:?}");
        assert!(options(10 << 20).alias_limits.max_total_replayed_events <= 1_000_000);
    }

    #[test]
    fn syntax_error_points_at_its_line() {
        let text = "a: 1\nb: [1, 2\n";
        let mut locations = Locations::new();
        let (problem, range) = parse(text, &mut locations).unwrap_err();
        assert!(matches!(problem, Problem::YamlSyntax { .. }), "{problem:?}");
        assert!(range.start >= 5, "{range:?}");
    }

    #[test]
    fn a_tab_in_a_line_s_indentation_is_placed_at_the_tab() {
        let mut locations = Locations::new();
        for (text, line) in [
            // A block scalar's text: the reader stops at its `|`.
            ("id: x\ndescription: |\n\tList files.\n", 3),
            ("id: x\ndescription: |\n  List files.\n\tmore\n", 4),
            // A key or a list item: the reader stops at the value above, or names a key.
            ("id: x\n\tdescription: y\n", 2),
            ("id: x\nparameters:\n\t- name: a\n", 3),
        ] {
            let (problem, at) = parse(text, &mut locations).unwrap_err();
            assert_eq!(&text[at.clone()], "\t", "{text:?}");
            let line_of = text[..at.start].matches('\n').count() + 1;
            assert_eq!(line_of, line, "{text:?}");
            assert_eq!(
                problem,
                Problem::YamlSyntax {
                    message: TAB_INDENT.into()
                },
                "{text:?}"
            );
        }
        // A tab after spaces, in a plain value's next line, is text: an error there (`: `
        // in the value) keeps the reader's words and place.
        let text = "id: todo\ndescription: abc\n  \tdef: x\n";
        let (problem, _) = parse(text, &mut locations).unwrap_err();
        assert_ne!(
            problem,
            Problem::YamlSyntax {
                message: TAB_INDENT.into()
            }
        );
        // A tab inside a block scalar's text, past its indentation, is text.
        let value = parse("a: |\n  x\ty\n  \tz\n", &mut locations).unwrap();
        assert_eq!(value, serde_json::json!({"a": "x\ty\n\tz\n"}));
    }
}
