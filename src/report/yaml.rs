//! A value as a YAML document, as promptc reads YAML back: block mappings and sequences, a
//! text of several lines as a literal block (`|`), and any text that would read as something
//! else (a number, `true`, `null`, a key of YAML's own syntax) in double quotes, written as
//! JSON writes a string, which YAML reads the same.

use serde_json::Value;

/// `value` as a YAML document; an empty mapping is `{}`.
pub fn yaml_document(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => mapping(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => sequence(&mut out, items, 0),
        value => {
            out.push_str(&inline(value));
            out.push('\n');
        }
    }
    out
}

/// The entries of a mapping, each on its own line at `indent`.
fn mapping(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    for (key, value) in map {
        out.push_str(&" ".repeat(indent));
        out.push_str(&text(key));
        out.push(':');
        nested(out, value, indent);
    }
}

/// The items of a sequence, each on its own line at `indent`: a mapping's or a sequence's
/// first line follows its `- `.
fn sequence(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        let mut inner = String::new();
        match item {
            Value::Object(map) if !map.is_empty() => mapping(&mut inner, map, indent + 2),
            Value::Array(items) if !items.is_empty() => sequence(&mut inner, items, indent + 2),
            _ => {
                nested(out, item, indent);
                continue;
            }
        }
        out.push(' ');
        out.push_str(inner.get(indent + 2..).unwrap_or(&inner));
    }
}

/// What follows a key's `:` or an item's `-` (`indent` being theirs): a scalar on the same
/// line, a literal block, or a mapping or sequence on the lines below.
fn nested(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            mapping(out, map, indent + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            sequence(out, items, indent + 2);
        }
        Value::String(lines) if as_block(lines) => block(out, lines, indent + 2),
        value => {
            out.push(' ');
            out.push_str(&inline(value));
            out.push('\n');
        }
    }
}

/// A scalar, or an empty mapping or sequence, as written on one line.
fn inline(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => text(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// A text as written on one line: plain when YAML reads it back as that text, else quoted.
fn text(text: &str) -> String {
    if plain(text) {
        text.to_string()
    } else {
        quoted(text)
    }
}

/// A text in double quotes, every character YAML cannot hold as written (a control
/// character, a break of its own, a byte order mark) escaped.
fn quoted(text: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if escaped(c) && u32::from(c) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c if escaped(c) => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Characters YAML does not hold as written: control characters, those it reads as line
/// breaks, a byte order mark, and the two non-characters outside its printable set.
fn escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
}

/// Whether a text reads back as itself unquoted: a word of letters, digits and `_ - . /`
/// (spaces between), starting with a letter or `_`, that is not a null or a boolean (YAML
/// 1.1's `yes`, `no`, `on` and `off` included, for the readers that still take them). Anything
/// else is quoted: keeping to these characters keeps clear of YAML's indicators and of the
/// numbers, dates and special floats it resolves.
fn plain(text: &str) -> bool {
    let starts_well = text
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    starts_well
        && !text.ends_with(' ')
        && !text.contains("  ")
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ' '))
        && !["null", "true", "false", "yes", "no", "on", "off", "y", "n"]
            .iter()
            .any(|word| text.eq_ignore_ascii_case(word))
}

/// Whether a text is written as a literal block: it has several lines, and none that a block
/// would change (a carriage return or other control character, a line of spaces alone, a
/// first line that starts with a space, which would be read as the block's indentation).
fn as_block(text: &str) -> bool {
    let first = text.lines().find(|line| !line.is_empty());
    text.contains('\n')
        && first.is_some_and(|line| !line.starts_with([' ', '\t']))
        && text.chars().all(|c| c == '\n' || c == '\t' || !escaped(c))
        && text
            .lines()
            .all(|line| line.is_empty() || !line.trim_start_matches([' ', '\t']).is_empty())
}

/// A literal block of `lines` at `indent`: `|-` without a final line break, `|` with one,
/// `|+` with more (kept).
fn block(out: &mut String, lines: &str, indent: usize) {
    let body = lines.trim_end_matches('\n');
    let breaks = lines.len() - body.len();
    out.push_str(match breaks {
        0 => " |-\n",
        1 => " |\n",
        _ => " |+\n",
    });
    for line in body.split('\n') {
        if !line.is_empty() {
            out.push_str(&" ".repeat(indent));
            out.push_str(line);
        }
        out.push('\n');
    }
    for _ in 1..breaks {
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::document::{Document, Format};
    use crate::source::{SourceFile, SourceId};
    use proptest::prelude::*;
    use serde_json::json;

    fn read(text: &str) -> Value {
        let file = SourceFile::new("test.yaml".into(), text.into());
        Document::parse(SourceId::UNSET, &file, Format::Yaml)
            .unwrap_or_else(|diagnostic| panic!("{text}\n{diagnostic:?}"))
            .value
    }

    #[test]
    fn reads_back_as_written() {
        let value = json!({
            "id": "coder",
            "version": "1.0.0",
            "template": "You are {{ AGENT_NAME }}.\n\n  - indented\n\ttab\n",
            "no_break": "a\nb",
            "breaks": "a\n\n\n",
            "spaced": " starts with a space\nsecond",
            "words": ["true", "null", "1", "0x1", "-", "a: b", "# no", "", "yes", "~", "<<"],
            "numbers": [1, -2, 2.5, 18446744073709551615u64],
            "nested": [[1, 2], {"a": {"b": []}, "c": {}}, [], {}, null, true],
            "keys": {"1": 1, "<<": 2, "a b": 3, "": 4, "line\nbreak": 5},
            "spaces": "   \n  x",
            "mark": "a\u{2028}b\rc"
        });
        let text = yaml_document(&value);
        assert_eq!(read(&text), value, "{text}");
        assert!(text.contains("template: |\n  You are"), "{text}");
        assert!(text.contains("no_break: |-\n"), "{text}");
        assert!(text.contains("id: coder\n"), "{text}");
    }

    proptest! {
        #[test]
        fn any_text_reads_back(texts in proptest::collection::vec(any::<String>(), 1..4)) {
            let value = json!({ "texts": texts, "keyed": { texts[0].clone(): texts.clone() } });
            let text = yaml_document(&value);
            prop_assert_eq!(read(&text), value, "{}", text);
        }

        #[test]
        fn text_of_lines_reads_back(lines in proptest::collection::vec("[ a-z\t#:-]{0,6}", 1..6)) {
            let value = json!({ "t": lines.join("\n"), "l": [lines.join("\n")] });
            let text = yaml_document(&value);
            prop_assert_eq!(read(&text), value, "{}", text);
        }
    }
}
