//! TOML → JSON value with spans, through toml's span-preserving `DeTable`.

use std::ops::Range;

use serde_json::{Map, Value};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::document::{Location, Locations, json_float};
use crate::pointer::child_pointer;
use crate::problem::{Problem, TomlHint};

pub(super) fn parse(
    text: &str,
    locations: &mut Locations,
) -> Result<Value, (Problem, Range<usize>)> {
    let table = DeTable::parse(text).map_err(|error| {
        if error.span().is_none()
            && let Some((parts, range)) = too_deep_key(text)
        {
            return (Problem::toml_key_too_deep(parts, MAX_KEY_PARTS), range);
        }
        if let Some(range) = yaml_shaped(text) {
            return (Problem::toml_looks_like_yaml(), range);
        }
        let (message, range) = first_mistake(text, &error);
        if message == "duplicate key"
            && let Some(first) = first_definition(text, &range)
        {
            let problem = match first {
                First::Key { key, line } => Problem::toml_duplicate(&key, line, false),
                First::Table { key, line } => Problem::toml_duplicate(&key, line, true),
                First::ArrayOfTables { key, line } => Problem::toml_table_for_array(&key, line),
            };
            return (problem, range);
        }
        let hint = hint(text, &message, &range);
        (Problem::TomlSyntax { message, hint }, range)
    })?;
    locations.insert(
        String::new(),
        Location {
            key: None,
            value: 0..text.len(),
        },
    );
    convert_table(table.get_ref(), "", locations)
}

/// The error to report and where: the reader's first, unless a string left open on an earlier
/// line explains it. A `"…"` string that runs past its line is told where the next line is
/// read as a key (`y"` of `"x⏎y"`), and that is not where the mistake is.
fn first_mistake(text: &str, error: &toml::de::Error) -> (String, Range<usize>) {
    let range = error.span().unwrap_or(0..0);
    let message = error.message().trim().to_string();
    let (_, all) = DeTable::parse_recoverable(text);
    all.into_iter()
        .filter_map(|other| {
            let span = other.span()?;
            let open = other.message().starts_with("invalid basic string")
                || other.message().starts_with("invalid literal string");
            (open && span.start < range.start).then(|| (other.message().trim().to_string(), span))
        })
        .min_by_key(|(_, span)| span.start)
        .unwrap_or((message, range))
}

/// The mistake a syntax error's message fits, told from the line it is on, when the message
/// alone fits several.
fn hint(text: &str, message: &str, range: &Range<usize>) -> Option<TomlHint> {
    let start = range.start.min(text.len());
    let line_start = text.get(..start)?.rfind('\n').map_or(0, |at| at + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |at| start + at);
    let before = &text[line_start..start];
    let rest = text[start..line_end].trim_end_matches('\r');
    if message.starts_with("key with no value") {
        let rest = rest.trim_start();
        if before.trim_end().ends_with(':') || rest.starts_with(':') {
            return Some(TomlHint::ColonForEquals);
        }
        // A key of words: `my key = 1` is refused after `my`.
        if let Some((words, _)) = rest.split_once('=')
            && !words.trim().is_empty()
            && !words.contains(['"', '\'', '[', ']'])
            && !before.contains(['"', '\'', '['])
        {
            let key = format!("{} {}", before.trim(), words.trim());
            return Some(TomlHint::KeyWithSpaces { key });
        }
        return (!before.trim().is_empty() && !before.contains(['"', '\'']))
            .then_some(TomlHint::NoEquals);
    }
    // A control character (other than a tab) inside a string: the string may well be closed.
    if message.starts_with("invalid basic string")
        || message.starts_with("invalid literal string")
        || message.starts_with("invalid multi-line")
    {
        let control = rest
            .chars()
            .next()
            .filter(|c| c.is_control() && *c != '\t' && *c != '\n' && *c != '\r');
        if let Some(control) = control {
            return Some(TomlHint::ControlCharacter {
                code: u32::from(control),
            });
        }
    }
    if message.starts_with("string values must be quoted") {
        let value = text.get(range.clone())?.trim();
        return Some(if value.is_empty() {
            TomlHint::NoValue
        } else {
            TomlHint::UnquotedString { text: value.into() }
        });
    }
    if message.starts_with("unexpected key or value")
        && before.trim_end().ends_with('"')
        && rest.contains('"')
    {
        return Some(TomlHint::QuoteInsideString);
    }
    // `list = ["a", "b"` and the next line's key: the comma is asked for at that key.
    if message.starts_with("missing comma between array elements")
        && before.trim().is_empty()
        && rest
            .split_once('=')
            .is_some_and(|(key, _)| !key.trim().is_empty() && !key.contains(['"', '\'', '[', '{']))
    {
        return Some(TomlHint::ArrayNotClosed);
    }
    None
}

/// Where a text that TOML does not read shows it is YAML: its first line that is not blank
/// or a comment is a document start (`---`), a list item (`- a`), or a key followed by a
/// colon (`id: intro`, `tools:`), which TOML never reads. The colon's range.
fn yaml_shaped(text: &str) -> Option<Range<usize>> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if trimmed == "---" || trimmed.starts_with("- ") {
            let at = start + line.find(trimmed.chars().next()?)?;
            return Some(at..at + 1);
        }
        let key_end = trimmed
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(trimmed.len());
        let after = &trimmed[key_end..];
        if key_end == 0 || !(after == ":" || after.starts_with(": ")) {
            return None;
        }
        let at = start + line.find(':')?;
        return Some(at..at + 1);
    }
    None
}

/// The key a duplicate-key error points at, and the 1-based line where the same table set it
/// first, and whether it is a table's header: the same `[header]` line before it, or the same
/// key before it within its table.
fn first_definition(text: &str, duplicate: &Range<usize>) -> Option<First> {
    let key = text.get(duplicate.clone())?.trim();
    if key.is_empty() {
        return None;
    }
    // A key is the same whether written bare or quoted (`"description"`).
    let key = unquoted(key);
    let line_start = text
        .get(..duplicate.start)?
        .rfind('\n')
        .map_or(0, |at| at + 1);
    let line_end = text[duplicate.start..]
        .find('\n')
        .map_or(text.len(), |at| duplicate.start + at);
    let this_line = text[line_start..line_end].trim();
    // Only a key of its own line, or a whole header, is looked for: a key inside an inline
    // table, the last part of a dotted key, or text inside a multi-line string could match a
    // different line that is no duplicate.
    let dotted = !this_line.starts_with('[') && text[..duplicate.start].trim_end().ends_with('.');
    if this_line.contains('{')
        || dotted
        || text[..line_start].contains("\"\"\"")
        || text[..line_start].contains("\'\'\'")
    {
        return None;
    }
    let before: Vec<&str> = text[..line_start].lines().collect();
    let header = this_line.starts_with('[');
    if header {
        // A header is named whole (`overrides.components.rules`, not `rules`).
        let named = dotted_name(this_line.trim_matches(['[', ']']));
        let table_start = |index: usize| {
            before[..index]
                .iter()
                .rposition(|line| line.trim_start().starts_with('['))
        };
        return before.iter().enumerate().find_map(|(index, line)| {
            let line = line.trim();
            let written = line.trim_matches(['[', ']']);
            if line.starts_with("[[")
                && dotted_name(written) == named
                && !this_line.starts_with("[[")
            {
                return Some(First::ArrayOfTables {
                    key: named.clone(),
                    line: index + 1,
                });
            }
            if line.starts_with('[') && dotted_name(written) == named {
                return Some(First::Table {
                    key: named.clone(),
                    line: index + 1,
                });
            }
            // A dotted key of the top level (`families.xs.template = …`) makes the table
            // too.
            let (assigned, _) = line.split_once('=')?;
            let assigned = dotted_name(assigned);
            (table_start(index).is_none()
                && assigned
                    .strip_prefix(named.as_str())
                    .is_some_and(|rest| rest.starts_with('.')))
            .then(|| First::Table {
                key: named.clone(),
                line: index + 1,
            })
        });
    }
    // Within the table the duplicate is in: from its header (or the top) down.
    let table_start = before
        .iter()
        .rposition(|line| line.trim_start().starts_with('['))
        .map_or(0, |at| at + 1);
    before[table_start..]
        .iter()
        .position(|line| {
            line.split_once('=')
                .is_some_and(|(assigned, _)| unquoted(assigned.trim()) == key)
        })
        .map(|at| First::Key {
            key: key.to_string(),
            line: table_start + at + 1,
        })
}

/// Where a key or table a TOML file gives twice was first given.
enum First {
    /// The key itself, on `line`.
    Key { key: String, line: usize },
    /// The table, opened by a header or made by a dotted key on `line`.
    Table { key: String, line: usize },
    /// An array of tables (`[[key]]`) on `line`, which `[key]` cannot open as a table.
    ArrayOfTables { key: String, line: usize },
}

/// A key's name without its quotes: `"a"` and `'a'` are the key `a`.
fn unquoted(key: &str) -> &str {
    ['"', '\'']
        .iter()
        .find_map(|&quote| key.strip_prefix(quote)?.strip_suffix(quote))
        .filter(|inner| !inner.contains(['"', '\'', '\\']))
        .unwrap_or(key)
}

/// A dotted key or header as its parts name it: each part unquoted, spaces around the dots
/// left out (`families . "xs"` is `families.xs`). A part holding a dot stays quoted.
fn dotted_name(written: &str) -> String {
    written
        .split('.')
        .map(|part| unquoted(part.trim()))
        .collect::<Vec<_>>()
        .join(".")
}

/// The most parts a dotted key may have: the toml crate refuses a key whose parts before the
/// last reach its nesting limit of 80, and says so without a place.
pub(crate) const MAX_KEY_PARTS: usize = 80;

/// The first dotted key (of a key-value pair or a table header) with more than
/// [`MAX_KEY_PARTS`] parts, with its count and where it is written, found from the parser's
/// events, so that dots inside quoted keys and values are not counted.
fn too_deep_key(text: &str) -> Option<(usize, Range<usize>)> {
    use toml_parser::parser::EventKind;
    let tokens = toml_parser::Source::new(text).lex().into_vec();
    let mut events: Vec<toml_parser::parser::Event> = Vec::new();
    toml_parser::parser::parse_document(&tokens, &mut events, &mut ());
    let mut key: Option<(usize, Range<usize>)> = None;
    for event in &events {
        let span = event.span();
        match (event.kind(), &mut key) {
            (EventKind::SimpleKey, Some((parts, range))) => {
                *parts += 1;
                range.end = span.end();
            }
            (EventKind::SimpleKey, None) => key = Some((1, span.start()..span.end())),
            (EventKind::KeySep | EventKind::Whitespace, _) => {}
            _ => {
                if let Some(found) = key.take().filter(|(parts, _)| *parts > MAX_KEY_PARTS) {
                    return Some(found);
                }
            }
        }
    }
    key.filter(|(parts, _)| *parts > MAX_KEY_PARTS)
}

fn convert_table(
    table: &DeTable<'_>,
    pointer: &str,
    locations: &mut Locations,
) -> Result<Value, (Problem, Range<usize>)> {
    let mut map = Map::new();
    for (key, value) in table {
        let child = child_pointer(pointer, key.get_ref());
        let converted = convert(value, &child, locations)?;
        // Each value's pointer is made once, and given to the map of places.
        locations.insert(
            child,
            Location {
                key: Some(key.span()),
                value: value.span(),
            },
        );
        map.insert(key.get_ref().to_string(), converted);
    }
    Ok(Value::Object(map))
}

fn convert(
    value: &Spanned<DeValue<'_>>,
    pointer: &str,
    locations: &mut Locations,
) -> Result<Value, (Problem, Range<usize>)> {
    let unsupported = |text: &str| {
        (
            Problem::UnsupportedNumber { text: text.into() },
            value.span(),
        )
    };
    Ok(match value.get_ref() {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Integer(i) => {
            // The reader hands the digits without their `0x`, `0o` or `0b`.
            let prefix = match i.radix() {
                16 => "0x",
                8 => "0o",
                2 => "0b",
                _ => "",
            };
            let parsed = i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
                .map_err(|_| unsupported(&format!("{prefix}{}", i.as_str())))?;
            Value::from(parsed)
        }
        DeValue::Float(f) => {
            let parsed: f64 = f
                .as_str()
                .replace('_', "")
                .parse()
                .map_err(|_| unsupported(f.as_str()))?;
            json_float(parsed, f.as_str()).map_err(|p| (p, value.span()))?
        }
        DeValue::Boolean(b) => Value::Bool(*b),
        // Dates travel as their TOML text, so the schema can check them as strings.
        DeValue::Datetime(d) => Value::String(d.to_string()),
        DeValue::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let child = child_pointer(pointer, &index.to_string());
                out.push(convert(item, &child, locations)?);
                locations.insert(
                    child,
                    Location {
                        key: None,
                        value: item.span(),
                    },
                );
            }
            Value::Array(out)
        }
        DeValue::Table(table) => convert_table(table, pointer, locations)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key set twice names the line that set it first, when that line can be told for
    /// sure; inside an inline table, after a dotted key or a multi-line string, the plain
    /// message stays.
    #[test]
    fn a_duplicate_names_its_first_line_only_when_it_is_sure() {
        let message = |text: &str| match parse(text, &mut Locations::new()) {
            Err((Problem::TomlSyntax { message, .. }, _)) => message,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            message("x = 1\ny = 2\nx = 3\n"),
            "duplicate key `x`: it is set already on line 1; keep one"
        );
        assert_eq!(
            message("[a.b]\nx = 1\n[c]\nx = 1\n[a.b]\ny = 2\n"),
            "duplicate table `a.b`: it is opened already on line 1; write its keys there"
        );
        // A key quoted on one line and bare on the other is the same key.
        for text in ["a = 1\n\"a\" = 2\n", "'a' = 1\na = 2\n"] {
            assert_eq!(
                message(text),
                "duplicate key `a`: it is set already on line 1; keep one",
                "{text}"
            );
        }
        // A table made by a dotted key, then opened by a header.
        assert_eq!(
            message("id = 1\nfamilies.xs.x = \"a\"\n[families.xs]\ny = 2\n"),
            "duplicate table `families.xs`: it is opened already on line 2; write its keys there"
        );
        // A header for an array of tables' key: `[[key]]` adds an item.
        assert_eq!(
            message("[[parameters]]\nname = \"x\"\n[parameters]\nname = \"y\"\n"),
            "`[parameters]` opens a table, and `parameters` is already an array of tables (`[[parameters]]` on line 1): write `[[parameters]]` to add an item to it"
        );
        for text in [
            "id = \"x\"\nmeta = { id = 1, id = 2 }\n",
            "name = \"x\"\nmeta.name = \"a\"\nmeta.name = \"b\"\n",
            "name = \"x\"\nmeta . name = \"a\"\nmeta . name = \"b\"\n",
            "t = \"\"\"\nx = 1\n\"\"\"\nx = 1\nx = 2\n",
        ] {
            assert_eq!(message(text), "duplicate key", "{text}");
        }
    }

    #[test]
    fn records_key_and_value_spans() {
        let text = "id = \"a\"\n[over.x]\nenabled = false\nlist = [1, 0x10]\n";
        let mut locations = Locations::new();
        let value = parse(text, &mut locations).unwrap();
        assert_eq!(value["over"]["x"]["list"][1], 16);
        let enabled = &locations["/over/x/enabled"];
        assert_eq!(&text[enabled.key.clone().unwrap()], "enabled");
        assert_eq!(&text[enabled.value.clone()], "false");
        assert_eq!(&text[locations["/over/x/list/1"].value.clone()], "0x10");
    }

    #[test]
    fn dates_become_strings() {
        let mut locations = Locations::new();
        let value = parse("date = 2026-11-01\n", &mut locations).unwrap();
        assert_eq!(value["date"], "2026-11-01");
    }

    #[test]
    fn a_key_too_deep_is_located_at_the_key() {
        let deep = vec!["k"; MAX_KEY_PARTS + 1].join(".");
        let quoted = format!("\"{}\"", vec!["q"; 200].join("."));
        for text in [
            format!("id = \"a\"\n{quoted} = \"x.y\"\n{deep} = 1\n"),
            format!("id = \"a\"\n[{deep}]\nx = 1\n"),
        ] {
            let mut locations = Locations::new();
            let (problem, range) = parse(&text, &mut locations).unwrap_err();
            assert_eq!(&text[range], deep, "{problem:?}");
            assert!(problem.to_string().contains("81 parts"), "{problem}");
        }
        // At the limit it is read.
        let text = format!("{} = 1\n", vec!["k"; MAX_KEY_PARTS].join("."));
        assert!(parse(&text, &mut Locations::new()).is_ok());
    }

    #[test]
    fn syntax_error_has_a_span() {
        let mut locations = Locations::new();
        let (problem, range) = parse("a = \n", &mut locations).unwrap_err();
        assert!(matches!(problem, Problem::TomlSyntax { .. }));
        assert!(range.start <= 4);
    }
}
