//! The other templates a template names: `{% include %}`, `{% import %}`, `{% from … import %}`
//! and `{% extends %}` tags, found by scanning its source. minijinja keeps its parser private
//! (behind an unstable feature), so this is a small lexer of its own: it skips comments,
//! `{{ … }}` expressions, string literals and `{% raw %}` blocks, and reads only the tags, so a
//! tag written inside a comment or a string is not taken for one. It runs on templates that
//! compiled, so their syntax is known to be sound.

use std::ops::Range;

/// How a template uses another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceKind {
    Include,
    Import,
    Extends,
}

impl ReferenceKind {
    /// The tag's keyword, for messages.
    pub fn keyword(self) -> &'static str {
        match self {
            ReferenceKind::Include => "include",
            ReferenceKind::Import => "import",
            ReferenceKind::Extends => "extends",
        }
    }
}

/// One tag naming another template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    pub kind: ReferenceKind,
    /// The name, when the tag gives it as one string literal; `None` when it is computed
    /// (`{% include some_var %}`), which cannot be followed. For a list of literal names,
    /// the one a render takes: the first that is a template (see [`Reference::alternatives`]).
    pub name: Option<String>,
    /// `{% include ["a.md", "b.md"] %}`: the literal names of the list, in order (empty for
    /// any other tag). A render includes the first of them that exists.
    pub alternatives: Vec<String>,
    /// Byte range of the name (or of the expression that computes it) in the template.
    pub range: Range<usize>,
    /// `{% include … ignore missing %}`: a name that does not exist renders nothing.
    pub ignore_missing: bool,
}

/// Whether `source` has a `{% for %}` tag: a template it includes can read `loop`.
pub fn has_loop(source: &str) -> bool {
    let mut found = false;
    tags(source, |keyword, _, _, _| found |= keyword == "for");
    found
}

/// Whether `source` has a tag that sets a name to a value (`for`, `set`, `with`): only then
/// can a name it reads stand for an item of a list.
pub fn binds_names(source: &str) -> bool {
    let mut found = false;
    tags(source, |keyword, _, _, _| {
        found |= matches!(keyword, "for" | "set" | "with");
    });
    found
}

/// Every tag of `source` that names another template, in order.
pub fn scan(source: &str) -> Vec<Reference> {
    let mut references = Vec::new();
    tags(source, |keyword, inner, rest_at, offset| {
        references.extend(tag(keyword, inner, rest_at, offset));
    });
    references
}

/// The names each `{% from … import a, b as c %}` tag of `source` takes from the template it
/// imports (`a`, `b`). A render looks each up in that template's exports and, where it does
/// not export one, in the importing render's own names: so a name the partial lacks reads the
/// context's value of that name, which what the template reads must count.
pub fn names_imported_from(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    tags(source, |keyword, inner, rest_at, _| {
        if keyword != "from" {
            return;
        }
        // The word `import` after the template's name, whatever space is around it (a line
        // break, when the names go on the next line); not inside the name's literal.
        let Some(list) = inner.get(rest_at..).and_then(|rest| {
            let bytes = rest.as_bytes();
            let lead = rest.len() - rest.trim_start().len();
            let from = match bytes.get(lead) {
                Some(quote @ (b'"' | b'\'')) => string_end(bytes, lead, *quote),
                _ => lead,
            };
            let mut words = rest.get(from..)?.split_inclusive(char::is_whitespace);
            let mut at = from;
            loop {
                let word = words.next()?;
                if word.trim_end() == "import" && word.len() > "import".len() {
                    return rest.get(at + word.len()..);
                }
                at += word.len();
            }
        }) else {
            return;
        };
        let list = list.trim().trim_end_matches(['-', '+']);
        let list = list
            .strip_suffix("with context")
            .or_else(|| list.strip_suffix("without context"))
            .unwrap_or(list);
        for item in list.split(',') {
            let Some(name) = item.split_whitespace().next() else {
                continue;
            };
            let name = name.trim_start_matches('(').trim_end_matches(')');
            if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                names.push(name.to_string());
            }
        }
    });
    names
}

/// The alias of each `{% import … as alias %}` tag of `source` that is not a name (`m`, or
/// a dotted `m.x`, then optionally `with context` or `without context`), as a byte range.
/// minijinja's parser takes any expression there and its code generator then panics (`as 1`,
/// `as m|list`, `as true`): such a tag must be refused before the template is handed to it.
/// Unlike [`scan`], this runs on text not yet compiled.
pub fn bad_import_aliases(source: &str) -> Vec<Range<usize>> {
    let mut bad = Vec::new();
    tags(source, |keyword, inner, rest_at, offset| {
        if keyword != "import" {
            return;
        }
        let Some(after_as) = last_as(inner, rest_at) else {
            // No alias at all: minijinja refuses the tag itself.
            return;
        };
        let rest = inner[after_as..].trim_end_matches(['-', '+']);
        let mut words: Vec<&str> = rest.split_whitespace().collect();
        if let [.., marker, "context"] = words.as_slice()
            && (*marker == "with" || *marker == "without")
        {
            words.truncate(words.len() - 2);
        }
        let is_name = |part: &str| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !["true", "false", "none", "True", "False", "None"].contains(&part)
        };
        if let [alias] = words.as_slice()
            && alias.split('.').all(is_name)
        {
            return;
        }
        let lead = rest.len() - rest.trim_start().len();
        let start = offset + after_as + lead;
        let length = rest.trim().len().max(1);
        bad.push(start..start + length);
    });
    bad
}

/// Where the text after the tag's last `as` word starts, string literals skipped.
fn last_as(inner: &str, from: usize) -> Option<usize> {
    let bytes = inner.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b >= 0x80;
    let mut at = from;
    let mut found = None;
    while at < bytes.len() {
        match bytes[at] {
            quote @ (b'"' | b'\'') => at = string_end(bytes, at, quote),
            b'a' if bytes.get(at + 1) == Some(&b's')
                && at > 0
                && !is_word(bytes[at - 1])
                && bytes.get(at + 2).is_none_or(|b| !is_word(*b)) =>
            {
                found = Some(at + 2);
                at += 2;
            }
            _ => at += 1,
        }
    }
    found
}

/// Calls `visit` with each tag of `source` (`{% … %}`, not in a comment or a raw block): its
/// first word, its text inside the delimiters, where the rest of it starts in that text, and
/// the text's offset in the source.
fn tags(source: &str, visit: impl FnMut(&str, &str, usize, usize)) {
    walk(source, visit, |_| {});
}

/// The parts of `source` that hold no code, sorted: its comments (`{# … #}`) and the text of
/// its raw blocks. A name written there (`{# write {{ INTRO }} here #}`) is no use of it.
pub fn quiet_ranges(source: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    walk(source, |_, _, _, _| {}, |range| ranges.push(range));
    ranges
}

/// Walks `source` once: each tag outside comments and raw blocks goes to `tag` (as
/// [`tags`] gives it), and each comment and raw block's text to `quiet`, in order.
fn walk(
    source: &str,
    mut tag: impl FnMut(&str, &str, usize, usize),
    mut quiet: impl FnMut(Range<usize>),
) {
    let bytes = source.as_bytes();
    let mut at = 0;
    // Where the text of the raw block being read starts.
    let mut raw_from = None;
    while let Some(open) = find(source, at, "{") {
        let Some(&next) = bytes.get(open + 1) else {
            break;
        };
        match next {
            b'#' if raw_from.is_none() => {
                at = find(source, open + 2, "#}").map_or(source.len(), |end| end + 2);
                quiet(open..at);
            }
            b'{' if raw_from.is_none() => at = skip_code(source, open + 2, "}}"),
            b'%' => {
                let end = skip_code(source, open + 2, "%}");
                let inner = source.get(open + 2..end.saturating_sub(2)).unwrap_or("");
                let (keyword, rest_at) = keyword(inner);
                match (raw_from, keyword) {
                    (Some(from), "endraw") => {
                        quiet(from..open);
                        raw_from = None;
                    }
                    (Some(_), _) => {}
                    (None, "raw") => raw_from = Some(end),
                    (None, _) => tag(keyword, inner, rest_at, open + 2),
                }
                at = end;
            }
            _ => at = open + 1,
        }
    }
    if let Some(from) = raw_from {
        quiet(from..source.len());
    }
}

/// The parts of `source` inside a block tag (`{% if %}`, `{% for %}`, `{% block %}`,
/// `{% macro %}`, a `{% set name %}` capture, …, to its end tag), outermost only, sorted, and
/// whether the template extends another (its text outside blocks then renders nothing): what
/// a template writes outside them, it writes whenever it renders.
pub fn block_ranges(source: &str) -> (Vec<Range<usize>>, bool) {
    const BLOCKS: [&str; 8] = [
        "if",
        "for",
        "block",
        "macro",
        "call",
        "filter",
        "with",
        "autoescape",
    ];
    let mut ranges = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut extends = false;
    tags(source, |keyword, inner, rest_at, offset| {
        let capture = keyword == "set" && !inner.get(rest_at..).unwrap_or("").contains('=');
        if BLOCKS.contains(&keyword) || capture {
            open.push(offset);
        } else if keyword.starts_with("end") && keyword != "endraw" {
            if let Some(start) = open.pop()
                && open.is_empty()
            {
                ranges.push(start..offset);
            }
        } else if keyword == "extends" {
            extends = true;
        }
    });
    if let Some(&start) = open.first() {
        ranges.push(start..source.len());
    }
    (ranges, extends)
}

/// Whether `at` lies in one of `quiet` ([`quiet_ranges`]).
pub fn is_quiet(quiet: &[Range<usize>], at: usize) -> bool {
    let next = quiet.partition_point(|range| range.end <= at);
    quiet.get(next).is_some_and(|range| range.start <= at)
}

/// The byte offset of `needle` at or after `from`.
fn find(source: &str, from: usize, needle: &str) -> Option<usize> {
    memchr::memmem::find(source.as_bytes().get(from..)?, needle.as_bytes()).map(|at| from + at)
}

/// The offset just past the `close` that ends the code starting at `from`, string literals
/// skipped; the end of the source when it is not closed.
fn skip_code(source: &str, from: usize, close: &str) -> usize {
    let bytes = source.as_bytes();
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            quote @ (b'"' | b'\'') => at = string_end(bytes, at, quote),
            _ if source.get(at..).is_some_and(|rest| rest.starts_with(close)) => {
                return at + close.len();
            }
            _ => at += 1,
        }
    }
    source.len()
}

/// The offset just past the string literal opening at `start`.
fn string_end(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut at = start + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b if b == quote => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The tag's first word and where the rest starts, whitespace control (`-`, `+`) skipped.
fn keyword(inner: &str) -> (&str, usize) {
    let trimmed = inner.trim_start_matches(['-', '+']).trim_start();
    let start = inner.len() - trimmed.len();
    let length = trimmed
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(trimmed.len());
    (&trimmed[..length], start + length)
}

/// The reference a tag makes, if it is one: the name expression follows the keyword
/// (`include`, `import`, `extends`, and `from`, whose name comes before its `import`).
fn tag(keyword: &str, inner: &str, rest_at: usize, offset: usize) -> Option<Reference> {
    let kind = match keyword {
        "include" => ReferenceKind::Include,
        "import" | "from" => ReferenceKind::Import,
        "extends" => ReferenceKind::Extends,
        _ => return None,
    };
    let rest = inner.get(rest_at..)?;
    let rest = rest.trim_end_matches(['-', '+']);
    let lead = rest.len() - rest.trim_start().len();
    let start = rest_at + lead;
    let expression = rest.trim();
    // Where the name expression ends: `import "x" as m`, `from "x" import a`, `include "x"
    // ignore missing`, `with context`; otherwise the whole rest.
    let bytes = inner.as_bytes();
    let mut alternatives = Vec::new();
    let (name, end) = match bytes.get(start) {
        Some(quote @ (b'"' | b'\'')) => {
            let end = string_end(bytes, start, *quote);
            // A literal followed by an operator (`"a" ~ b`) is computed, not a name.
            let name = if ends_name(inner.get(end..).unwrap_or("")) {
                literal_at(inner, start, end)
            } else {
                None
            };
            match name {
                Some(name) => (Some(name), end),
                None => (None, start + expression_length(inner.get(start..)?)),
            }
        }
        Some(b'[' | b'(') if kind == ReferenceKind::Include => match literal_list(inner, start) {
            Some((names, end)) => {
                alternatives = names;
                (None, end)
            }
            None => (None, start + expression_length(inner.get(start..)?)),
        },
        _ => (None, start + expression_length(inner.get(start..)?)),
    };
    Some(Reference {
        kind,
        name,
        alternatives,
        range: offset + start..offset + end.max(start),
        ignore_missing: kind == ReferenceKind::Include
            && expression
                .split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .any(|pair| pair == ["ignore", "missing"]),
    })
}

/// Whether what follows an expression in a tag leaves it a name: the tag's end, with its
/// whitespace control (`-%}`, `+%}`, so a `-` or `+` alone: one with more after it is
/// arithmetic), or a word of the tag, before a space or a line break.
fn ends_name(after: &str) -> bool {
    let after = after.trim_start();
    matches!(after, "" | "-" | "+")
        || after
            .split_whitespace()
            .next()
            .is_some_and(|word| ["as", "import", "ignore", "with", "without"].contains(&word))
}

/// The text of the string literal at `start..end` of `inner`, quotes included in the range
/// (an escape read through minijinja); `None` where minijinja refuses it.
fn literal_at(inner: &str, start: usize, end: usize) -> Option<String> {
    let literal = inner.get(start + 1..end.saturating_sub(1))?;
    if literal.contains('\\') {
        unescaped(inner.get(start..end)?)
    } else {
        Some(literal.to_string())
    }
}

/// A list (`[…]` or `(…)`) of string literals opening at `start` of `inner`, and nothing
/// else in the name's place: its names, and where it ends. `None` for anything computed
/// (a name in it, an empty list, a list followed by an operator).
fn literal_list(inner: &str, start: usize) -> Option<(Vec<String>, usize)> {
    let bytes = inner.as_bytes();
    let close = match bytes.get(start)? {
        b'[' => b']',
        b'(' => b')',
        _ => return None,
    };
    let skip_space = |mut at: usize| {
        while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        at
    };
    let mut names = Vec::new();
    let mut at = skip_space(start + 1);
    loop {
        match bytes.get(at)? {
            quote @ (b'"' | b'\'') => {
                let end = string_end(bytes, at, *quote);
                names.push(literal_at(inner, at, end)?);
                at = skip_space(end);
                match bytes.get(at)? {
                    b',' => at = skip_space(at + 1),
                    b if *b == close => break,
                    _ => return None,
                }
            }
            // A trailing comma: `["a", "b",]`.
            b if *b == close && !names.is_empty() => break,
            _ => return None,
        }
    }
    // `("a")` is one name in parentheses rather than a tuple: a list of one, all the same.
    let end = at + 1;
    ends_name(inner.get(end..)?).then_some((names, end))
}

/// The text of a string literal with escapes (`"a\\b"`, quotes included), as minijinja reads
/// it: still a name, which a lookup of its raw text missed and a warning called computed.
/// `None` for an escape minijinja refuses (the template's own error).
fn unescaped(literal: &str) -> Option<String> {
    let env = minijinja::Environment::empty();
    let value = env.compile_expression(literal).ok()?.eval(()).ok()?;
    value.as_str().map(str::to_string)
}

/// How much of a computed name expression to underline: up to ` as `, ` import `,
/// ` ignore missing` or ` with(out) context`, trailing space left out.
fn expression_length(expression: &str) -> usize {
    let cut = [" as ", " import ", " ignore ", " with ", " without "]
        .iter()
        .filter_map(|word| expression.find(word))
        .min()
        .unwrap_or(expression.len());
    expression[..cut].trim_end().len()
}

#[cfg(test)]
mod tests {

    #[test]
    fn block_ranges_are_the_outermost_blocks_and_a_layout_is_told() {
        let source = "a{% if x %}b{% for i in l %}c{% endfor %}{% else %}d{% endif %}e\
                      {% set s = 1 %}f{% set c %}g{% endset %}{# {% if %} #}h{% raw %}{% if %}{% endraw %}i";
        let (ranges, extends) = block_ranges(source);
        let texts: Vec<&str> = ranges.iter().map(|range| &source[range.clone()]).collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts[0].starts_with(" if x %}b") && texts[0].contains("{% else %}d"));
        assert!(texts[1].starts_with(" set c %}g"));
        assert!(!extends);
        let (ranges, extends) = block_ranges("{% extends \"l\" %}{% block b %}x{% endblock %}");
        assert_eq!(ranges.len(), 1);
        assert!(extends);
    }
    use super::*;

    #[test]
    fn the_names_a_from_import_looks_up_are_found() {
        assert_eq!(
            names_imported_from(
                "{% from 'm.md' import a, b as c %}{% from \"n\" import (d) with context -%}{% import 'x' as y %}"
            ),
            ["a", "b", "d"]
        );
        assert!(
            names_imported_from("{{ from }} {% raw %}{% from 'm' import z %}{% endraw %}")
                .is_empty()
        );
        // The names on the lines after `import`, or after a tab; a name's literal holding
        // the word is no tag's word.
        assert_eq!(
            names_imported_from(
                "{%- from \"partials/lib.md\" import\n    note, os -%}{% from 'x'\timport\ty %}\
                 {% from 'a import b.md' import c %}"
            ),
            ["note", "os", "y", "c"]
        );
    }

    fn names(source: &str) -> Vec<(ReferenceKind, Option<String>, &str)> {
        scan(source)
            .into_iter()
            .map(|r| (r.kind, r.name, &source[r.range]))
            .collect()
    }

    #[test]
    fn finds_each_tag_form_with_its_name_range() {
        use ReferenceKind::*;
        let source = "{% extends \"partials/base.md\" %}\n\
             {%- include 'partials/a.md' -%}\n\
             {% import \"partials/m.md\" as m %}\n\
             {% from 'partials/m.md' import one, two %}\n\
             {% include \"partials/opt.md\" ignore missing %}";
        assert_eq!(
            names(source),
            vec![
                (
                    Extends,
                    Some("partials/base.md".into()),
                    "\"partials/base.md\""
                ),
                (Include, Some("partials/a.md".into()), "'partials/a.md'"),
                (Import, Some("partials/m.md".into()), "\"partials/m.md\""),
                (Import, Some("partials/m.md".into()), "'partials/m.md'"),
                (
                    Include,
                    Some("partials/opt.md".into()),
                    "\"partials/opt.md\""
                ),
            ]
        );
        assert!(scan(source)[4].ignore_missing);
        assert!(!scan(source)[1].ignore_missing);
        // `+` or `-` with more after it is arithmetic, not the tag's whitespace control; a
        // line break after the name is as good as a space.
        let computed = "{% include 'partials/' + 'y.md' %}{% include 'a' - 1 +%}";
        assert!(
            scan(computed).iter().all(|r| r.name.is_none()),
            "{:?}",
            scan(computed)
        );
        let named = "{% include 'a' +%}{% from 'm.md' import\n  one %}{% import 'm.md'\nas m %}";
        assert_eq!(
            scan(named)
                .iter()
                .map(|r| r.name.as_deref())
                .collect::<Vec<_>>(),
            [Some("a"), Some("m.md"), Some("m.md")]
        );
    }

    #[test]
    fn an_import_alias_that_is_not_a_name_is_found_where_it_stands() {
        let bad = |source: &str| {
            bad_import_aliases(source)
                .into_iter()
                .map(|range| source[range].to_string())
                .collect::<Vec<_>>()
        };
        // What minijinja's code generator panicked on.
        for (source, alias) in [
            ("{% import 'a' as 1 %}", "1"),
            ("{% import 'a' as true %}", "true"),
            ("{% import 'a' as None %}", "None"),
            ("{% import 'a' as\n1 %}", "1"),
            ("{% import 'a' as\t1 %}", "1"),
            ("{% import n\nas 1 %}", "1"),
            ("{% import 'a' as (m) %}", "(m)"),
            ("{% import 'a' as m|list %}", "m|list"),
            ("{% import 'a' as m - z %}", "m - z"),
            ("{%- import \"a\" as m[0] -%}", "m[0]"),
            ("x {% import name ~ '.md' as 99999999 %}", "99999999"),
        ] {
            assert_eq!(bad(source), [alias], "{source}");
        }
        // Names, dotted names, other tags, and tags that are not tags.
        for source in [
            "{% import 'a' as m %}",
            "{%- import \"a as 1\" as m_2 -%}",
            "{% import 'a' as m.x %}",
            "{% import 'a' as m with context %}",
            "{% import 'a' as m without context %}",
            "{% import 'a'\nas\tm %}",
            "{% from 'a' import b as c %}",
            "{# {% import 'a' as 1 %} #}",
            "{{ \"{% import 'a' as 1 %}\" }}",
            "{% raw %}{% import 'a' as 1 %}{% endraw %}",
        ] {
            assert_eq!(bad(source), Vec::<String>::new(), "{source}");
        }
    }

    #[test]
    fn computed_names_are_not_followed() {
        let source = "{% include which %}{% include 'p/' ~ name %}{% include ['a', b] %}\
             {% include ['a'] + more %}{% include [] %}{% import ['a'] as m %}";
        let found = names(source);
        assert_eq!(
            found,
            vec![
                (ReferenceKind::Include, None, "which"),
                (ReferenceKind::Include, None, "'p/' ~ name"),
                (ReferenceKind::Include, None, "['a', b]"),
                (ReferenceKind::Include, None, "['a'] + more"),
                (ReferenceKind::Include, None, "[]"),
                (ReferenceKind::Import, None, "['a']"),
            ]
        );
        assert!(scan(source).iter().all(|r| r.alternatives.is_empty()));
    }

    /// An include of a list of literal names renders the first that exists: the names are
    /// read, in order, for the templates to resolve; the tag's name is left to that.
    #[test]
    fn an_include_of_a_list_of_literal_names_reads_them_all() {
        fn alternatives(source: &str) -> Vec<(Option<String>, Vec<String>, &str)> {
            scan(source)
                .into_iter()
                .map(|r| (r.name, r.alternatives, &source[r.range]))
                .collect()
        }
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(
            alternatives(
                "{% include ['a.md', \"p/\\u0041.md\"] %}{%- include ( 'x' ,\n'y', ) ignore missing -%}\
                 {% include (\"one\") with context %}"
            ),
            vec![
                (
                    None,
                    list(&["a.md", "p/A.md"]),
                    "['a.md', \"p/\\u0041.md\"]"
                ),
                (None, list(&["x", "y"]), "( 'x' ,\n'y', )"),
                (None, list(&["one"]), "(\"one\")"),
            ]
        );
        assert!(scan("{% include ('x', 'y') ignore missing %}")[0].ignore_missing);
    }

    #[test]
    fn a_literal_name_with_escapes_is_read_as_minijinja_reads_it() {
        let source = r#"{% include "p/\u0041.md" %}{% include 'a\\b.md' %}{% include 'c\'d' %}"#;
        assert_eq!(
            names(source),
            vec![
                (
                    ReferenceKind::Include,
                    Some("p/A.md".into()),
                    r#""p/\u0041.md""#
                ),
                (ReferenceKind::Include, Some(r"a\b.md".into()), r"'a\\b.md'"),
                (ReferenceKind::Include, Some("c'd".into()), r"'c\'d'"),
            ]
        );
        // An escape minijinja does not know is kept as written; one it refuses leaves the
        // name unread, as a computed one.
        assert_eq!(names(r"{% include 'a\q' %}")[0].1.as_deref(), Some(r"a\q"));
        assert_eq!(names(r"{% include 'a\u00' %}")[0].1, None);
    }

    #[test]
    fn comments_and_raw_blocks_are_quiet() {
        let source = "{# {{ A }} #}{{ B }}{% raw %} C {% endraw %}{{ '{#' }} D {#- E -#}{% raw %}F";
        let quiet = quiet_ranges(source);
        let at = |word: &str| source.find(word).unwrap();
        for word in ["A", "C", "E", "F"] {
            assert!(is_quiet(&quiet, at(word)), "{word}");
        }
        for word in ["B", "D", "raw", "endraw"] {
            assert!(!is_quiet(&quiet, at(word)), "{word}");
        }
    }

    #[test]
    fn comments_strings_and_raw_blocks_hold_no_tags() {
        let source = "{# {% include 'a' %} #}{{ \"{% include 'b' %}\" }}\
             {% raw %}{% include 'c' %}{% endraw %}{% set x = '%}' %}{% include 'd' %}";
        assert_eq!(
            names(source),
            vec![(ReferenceKind::Include, Some("d".into()), "'d'")]
        );
    }

    #[test]
    fn unterminated_input_does_not_panic() {
        for source in [
            "{%",
            "{% include",
            "{% include '",
            "{{ '",
            "{#",
            "{",
            "{% raw %}",
        ] {
            let _ = scan(source);
        }
    }
}
