//! A byte range in one source file.

use std::ops::Range;

use crate::source::SourceId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub source: SourceId,
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(source: SourceId, range: Range<usize>) -> Self {
        Self {
            source,
            start: range.start,
            end: range.end.max(range.start),
        }
    }

    /// The start of a file: where problems with a whole file are reported.
    pub fn file_start(source: SourceId) -> Self {
        Self::new(source, 0..0)
    }

    pub fn range(self) -> Range<usize> {
        self.start..self.end
    }
}

/// Where each byte of a string value's text lies in the file, when the file writes it with
/// escapes (`\"`, `\n`, `\u00e9`, a TOML line continuation, YAML's `''`): `raw` is the value
/// as written, quotes included, and `decoded` its text. The result has an entry per byte of
/// `decoded`: the range in `raw` of the character (or escape) it is part of; `None` when the two
/// cannot be walked together, and the caller keeps the whole value. A YAML string quoted over
/// several lines folds: each line break, with the blanks around it, stands for what it folds to.
/// [`raw_range`] maps a range of `decoded` with it.
pub fn raw_offsets(raw: &str, decoded: &str) -> Option<Vec<std::ops::Range<usize>>> {
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
        // A line break in a string quoted with one quote mark (which TOML keeps on one line)
        // is YAML's: it folds, with the blanks around it, into a space, or into a line break
        // per empty line after it.
        if opening.len() == 1
            && matches!(c, ' ' | '\t' | '\n' | '\r')
            && let Some((taken, empty_lines)) = yaml_fold(rest)
        {
            let (fills, times) = if empty_lines == 0 {
                (' ', 1)
            } else {
                ('\n', empty_lines)
            };
            for _ in 0..times {
                if next != Some(fills) {
                    return None;
                }
                offsets.push(at..at + taken);
                next = wanted.next();
            }
            at += taken;
            continue;
        }
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
                    // YAML's own escapes (TOML has none of these).
                    'a' => ('\u{7}', 2),
                    'v' => ('\u{b}', 2),
                    'N' => ('\u{85}', 2),
                    '_' => ('\u{a0}', 2),
                    'L' => ('\u{2028}', 2),
                    'P' => ('\u{2029}', 2),
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

/// [`raw_offsets`] for a value at `range` of a file's `text`: through its quotes and escapes,
/// or, for a YAML block scalar (`|`, `>`) or a plain scalar over several lines, whose span
/// starts at its first line's text, through its lines (see [`block_offsets`]).
pub fn value_offsets(
    text: &str,
    range: std::ops::Range<usize>,
    decoded: &str,
) -> Option<Vec<std::ops::Range<usize>>> {
    let raw = text.get(range.clone())?;
    if let Some(offsets) = raw_offsets(raw, decoded) {
        return Some(offsets);
    }
    if raw.starts_with(['"', '\'']) {
        return None;
    }
    let line_start = text.get(..range.start)?.rfind('\n').map_or(0, |at| at + 1);
    block_offsets(raw, range.start - line_start, decoded)
}

/// `range` of `decoded`, the text of the value written at `value`, as a span of its file,
/// found through the value's quotes and escapes; `None` where it cannot be placed.
pub fn within_value(
    sources: &crate::source::Sources,
    value: Span,
    decoded: &str,
    range: Range<usize>,
) -> Option<Span> {
    if range.end > decoded.len() || !sources.holds(value.source) {
        return None;
    }
    let file = &sources.get(value.source).text;
    let raw = locate_in_file(file, value.range(), decoded, range)?;
    Some(Span::new(
        value.source,
        value.start + raw.start..value.start + raw.end,
    ))
}

/// Where `range` of a value's text `decoded` lies in the value at `value` of the file's
/// `text`: found as it is, or through its escapes or lines (see [`value_offsets`]).
pub fn locate_in_file(
    text: &str,
    value: std::ops::Range<usize>,
    decoded: &str,
    range: std::ops::Range<usize>,
) -> Option<std::ops::Range<usize>> {
    let raw = text.get(value.clone())?;
    // The text as written, after its quotes (or a block's indicator): a text whose escapes
    // put its decoded form elsewhere in the value (`"\\q"` holds `\q` from its second
    // character) is mapped through its escapes instead.
    let verbatim = raw.find(decoded).filter(|&offset| {
        raw[..offset].chars().all(|c| {
            matches!(
                c,
                '"' | '\'' | '|' | '>' | '-' | '+' | ' ' | '\t' | '\r' | '\n'
            )
        })
    });
    match verbatim {
        Some(offset) => Some(offset + range.start..offset + range.end),
        None => raw_range(&value_offsets(text, value, decoded)?, range),
    }
}

/// [`raw_offsets`] for text written over lines indented by `indent` columns (the first line's
/// indentation already passed): a YAML literal block keeps its line breaks, a folded block or
/// a plain scalar turns a break into a space or drops it (before a blank line, at the end),
/// and each line's indentation stands for nothing. `None` when the two cannot be walked
/// together.
fn block_offsets(raw: &str, indent: usize, decoded: &str) -> Option<Vec<std::ops::Range<usize>>> {
    let bytes = raw.as_bytes();
    let mut offsets = Vec::with_capacity(decoded.len());
    let mut at = 0;
    // Past a line break: the line's indentation, and on a plain scalar's continuation line
    // any further blanks, unless the text wants them.
    let skip_indentation = |mut at: usize, wanted: Option<char>| {
        let mut skipped = 0;
        while skipped < indent && bytes.get(at) == Some(&b' ') {
            at += 1;
            skipped += 1;
        }
        if wanted != Some(' ') && wanted != Some('\t') {
            while matches!(bytes.get(at), Some(b' ' | b'\t')) {
                at += 1;
            }
        }
        at
    };
    let mut wanted = decoded.chars().peekable();
    // Blank lines that open a block scalar come before its span, which starts at its first
    // line of text: each stands at that start.
    while wanted.peek() == Some(&'\n') && !raw.starts_with(['\n', '\r']) {
        offsets.push(0..0);
        wanted.next();
    }
    while let Some(&expected) = wanted.peek() {
        let c = raw.get(at..)?.chars().next()?;
        let is_break = c == '\n' || (c == '\r' && bytes.get(at + 1) == Some(&b'\n'));
        let taken = if c == '\r' && is_break {
            2
        } else {
            c.len_utf8()
        };
        if c == expected || (is_break && (expected == '\n' || expected == ' ')) {
            for _ in 0..expected.len_utf8() {
                offsets.push(at..at + taken);
            }
            wanted.next();
            at += taken;
        } else if is_break {
            // A break folded away (before a blank line, or a chomped end).
            at += taken;
        } else {
            return None;
        }
        if is_break {
            at = skip_indentation(at, wanted.peek().copied());
        }
    }
    Some(offsets)
}

/// Whether the text after a `\` ends its line with blanks alone: a line continuation.
/// A YAML fold at the start of `rest` (blanks, a line break, then any lines holding only
/// blanks, and the blanks that start the next line): the raw bytes it takes and how many
/// empty lines it holds. `None` when the blanks there are not followed by a line break.
fn yaml_fold(rest: &str) -> Option<(usize, usize)> {
    let blanks = |from: usize| {
        rest[from..]
            .find(|c| c != ' ' && c != '\t')
            .map_or(rest.len(), |n| from + n)
    };
    let line_break = |at: usize| {
        if rest[at..].starts_with("\r\n") {
            Some(2)
        } else if rest[at..].starts_with('\n') {
            Some(1)
        } else {
            None
        }
    };
    let mut at = blanks(0);
    at += line_break(at)?;
    let mut empty_lines = 0;
    loop {
        let text = blanks(at);
        match line_break(text) {
            Some(taken) => {
                empty_lines += 1;
                at = text + taken;
            }
            None => return Some((text, empty_lines)),
        }
    }
}

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
pub fn raw_range(
    offsets: &[std::ops::Range<usize>],
    range: std::ops::Range<usize>,
) -> Option<std::ops::Range<usize>> {
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

#[cfg(test)]
mod tests {
    use super::{locate_in_file, raw_offsets, raw_range};

    // A text whose decoded form also stands in the value after an escape (`"\\q"` decodes
    // to `\q`, written again from the value's second backslash) is placed through its
    // escapes: the place of `\q` is both backslashes and the `q`, not the last two.
    #[test]
    fn a_decoded_text_found_after_an_escape_is_placed_through_it() {
        let file = "pattern = \"\\\\q\"\n";
        let start = file.find('"').unwrap();
        let end = file.rfind('"').unwrap() + 1;
        let raw = locate_in_file(file, start..end, "\\q", 0..2).unwrap();
        assert_eq!(&file[start + raw.start..start + raw.end], "\\\\q");
    }

    // A YAML block scalar's text is found through its lines: the span starts at the first
    // line's text, each line's indentation stands for nothing, and a folded break is a space.
    #[test]
    fn block_scalars_are_walked_line_by_line() {
        // The text `decoded` holds at `part`, found in the value from `from` to `to`.
        let found = |file: &str, from: &str, to: &str, decoded: &str, part: &str| {
            let start = file.find(from).unwrap();
            let end = file[start..].find(to).map_or(file.len(), |at| start + at);
            let at = decoded.find(part).unwrap();
            let raw = locate_in_file(file, start..end, decoded, at..at + part.len())?;
            Some((start + raw.start, start + raw.end))
        };
        let file = "id: rules\ntemplate: |\n  line one\n  line two\n    {% endfi %}\nnext: 1\n";
        let decoded = "line one\nline two\n  {% endfi %}\n";
        let (start, end) = found(file, "line one", "next", decoded, "endfi").unwrap();
        assert_eq!(&file[start..end], "endfi");

        let file = "when: >-\r\n  mode == \"act\" and\r\n  browser.enabeld\r\ntemplate: x\r\n";
        let decoded = "mode == \"act\" and browser.enabeld";
        let (start, end) = found(file, "mode", "template", decoded, "enabeld").unwrap();
        assert_eq!(&file[start..end], "enabeld");
        assert_eq!(file[..start].matches('\n').count(), 2);

        // A blank line in a folded block is a line break; a plain scalar's continuation
        // lines may be indented further.
        let file = "text: >\n  one\n\n  two\nplain: first\n      second\n";
        let (start, end) = found(file, "one", "plain", "one\ntwo\n", "two").unwrap();
        assert_eq!(&file[start..end], "two");
        let (start, end) = found(file, "first", "\u{0}", "first second", "second").unwrap();
        assert_eq!(&file[start..end], "second");
        // Blank lines that open a block stand before its span.
        let opened = "template: |\n\n  aa {{ x y }}\n";
        let (start, end) = found(opened, "aa", "\u{0}", "\naa {{ x y }}\n", "y }}").unwrap();
        assert_eq!(&opened[start..end], "y }}");
        // Text the lines do not hold is not placed.
        assert_eq!(found(file, "first", "\u{0}", "first third", "third"), None);
    }

    // A YAML string quoted over several lines folds its line breaks (with the blanks around
    // them) into spaces, or line breaks for empty lines: each word of the text the YAML reader
    // decodes is still found where the file writes it.
    #[test]
    fn raw_offsets_walk_yaml_folds() {
        let cases = [
            "\"Line one of the\n  feedback text, folded\n  and {{ name }} there.\"",
            "\"trailing blanks  \t\n    then text\"",
            "\"an empty line\n\n  then two\n   \n\n  done\"",
            "'single ''quoted''\r\n  over\r\n\r\n  lines'",
            "\"escapes \\a\\v\\N\\_\\L\\P kept\n  and folds\"",
            "\"\n  starts with a break\n\"",
        ];
        for raw in cases {
            let decoded: String = serde_saphyr::from_str(raw).unwrap();
            let offsets = raw_offsets(raw, &decoded)
                .unwrap_or_else(|| panic!("{raw:?} as {decoded:?} not walked"));
            assert_eq!(offsets.len(), decoded.len(), "{raw:?}");
            let mut from = 0;
            for word in decoded.split(|c: char| c.is_whitespace() || c.is_control()) {
                let at = from + decoded[from..].find(word).unwrap();
                from = at + word.len();
                // (A doubled quote mark is found as written, both marks.)
                if word.is_empty() || !word.is_ascii() || word.contains('\'') {
                    continue;
                }
                let range = raw_range(&offsets, at..at + word.len()).unwrap();
                assert_eq!(&raw[range], word, "{raw:?}");
            }
        }
        // A fold stands for a space or line breaks, nothing else.
        assert_eq!(raw_offsets("\"a\n  b\"", "a  b"), None);
        assert_eq!(raw_offsets("\"a\n\n  b\"", "a b"), None);
    }

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
