//! What would fix a syntax error of a data file: the reader's own message says what it met,
//! seldom what the writer meant.

/// A TOML mistake told from the text around a syntax error, where the reader's message alone
/// fits several (`key with no value` is a missing `=`, a `:` for it, or a key with spaces).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TomlHint {
    /// `key = some text`: a string written without quotes.
    UnquotedString { text: String },
    /// `key =` and nothing after it.
    NoValue,
    /// `my key = 1`: a bare key holds no spaces.
    KeyWithSpaces { key: String },
    /// `key: value`, as in YAML or JSON.
    ColonForEquals,
    /// `key "value"`.
    NoEquals,
    /// `"say "hi""`: a quote inside a basic string ends it.
    QuoteInsideString,
    /// An array not closed before the next key: `list = ["a", "b"` then `key = …`.
    ArrayNotClosed,
    /// A control character (U+0000-U+001F or U+007F, a tab apart) written as itself inside a
    /// string, which TOML refuses.
    ControlCharacter { code: u32 },
}

impl TomlHint {
    fn help(&self) -> String {
        match self {
            TomlHint::UnquotedString { text } if text.contains('"') => {
                format!("a string is quoted: write `'{text}'`")
            }
            TomlHint::UnquotedString { text } => {
                format!("a string is quoted: write `\"{text}\"`")
            }
            TomlHint::NoValue => {
                "give the key a value after `=` (`\"\"` for empty text), or remove the line".into()
            }
            TomlHint::KeyWithSpaces { key } => format!(
                "a bare key holds only letters, digits, `_` and `-`: quote it (`\"{key}\" = …`), or join its words with `_`"
            ),
            TomlHint::ColonForEquals => {
                "TOML sets a key with `=`, not `:`: write `key = value`".into()
            }
            TomlHint::NoEquals => "write `=` between the key and its value: `key = value`".into(),
            TomlHint::QuoteInsideString => {
                "a `\"` inside a `\"…\"` string ends it: write it as `\\\"`, or put the text in a literal string (`'…'`), which may hold `\"`".into()
            }
            TomlHint::ControlCharacter { code } => format!(
                "a TOML string holds no control character written as itself: remove it, or write it as an escape in a `\"…\"` string (`\\u{code:04X}`)"
            ),
            TomlHint::ArrayNotClosed => {
                "close the array with `]` after its last item; items on several lines are separated by `,`".into()
            }
        }
    }
}

/// Help for a TOML syntax error: the hint told from its text, else what its message names.
pub(super) fn toml_help(message: &str, hint: Option<&TomlHint>) -> Option<String> {
    if let Some(hint) = hint {
        return Some(hint.help());
    }
    let help = if message.starts_with("missing escaped value") {
        // A regex or a Windows path written in a basic string: `"\d"` is an escape TOML
        // does not have.
        "a backslash in a TOML basic string (`\"…\"`) starts an escape: write a regex or a path in a literal string (`'\\d+'`), or double each backslash (`\"\\\\d+\"`)"
    } else if message.starts_with("invalid basic string") {
        "a `\"…\"` string ends on the line it starts: add the closing `\"`, or write text of several lines between `\"\"\"` and `\"\"\"`"
    } else if message.starts_with("invalid literal string") {
        "a `'…'` string ends on the line it starts: add the closing `'`, or write text of several lines between `'''` and `'''`"
    } else if message.starts_with("invalid multi-line basic string") {
        "close the multi-line string with `\"\"\"`"
    } else if message.starts_with("invalid multi-line literal string") {
        "close the multi-line string with `'''`"
    } else if message.starts_with("unclosed array table") {
        "close the header with `]]`: `[[name]]`"
    } else if message.starts_with("unclosed table") {
        "close the table's header with `]`: `[name]`"
    } else if message.starts_with("unclosed inline table") {
        "close the inline table with `}`"
    } else if message.starts_with("unclosed array") {
        "close the array with `]` after its last item"
    } else if message.starts_with("missing comma between array elements") {
        "separate the array's items with `,`"
    } else if message.starts_with("extra comma") {
        "remove the extra `,`"
    } else if message.starts_with("invalid boolean") {
        "a boolean is `true` or `false`, in lower case; quote it if it is text"
    } else if message.starts_with("invalid unquoted key") {
        "a bare key holds only ASCII letters, digits, `_` and `-`: quote any other key (`\"key\" = …`)"
    } else if message.starts_with("unexpected key or value") {
        "a line holds one `key = value`: put each on its own line, quote a value that has spaces, and leave out a `,` after it"
    } else if message == "duplicate key" {
        "a key is set once in its table, and a `[table]` is opened once: keep one"
    } else if message.contains("max recursion depth met") {
        "TOML is read nested at most 80 arrays and tables deep: flatten the value (no real setting nests so deep)"
    } else {
        return None;
    };
    Some(help.into())
}

/// Help for a YAML syntax error, from what its message names.
pub(super) fn yaml_help(message: &str) -> Option<String> {
    let help = if message.starts_with("a tab indents") {
        "replace the tab with spaces, as many as the lines around it are indented by"
    } else if message.contains("tabs disallowed")
        || message.contains("tab cannot be used as indentation")
    {
        "indent with spaces: YAML does not allow tabs in indentation"
    } else if message.contains("found unknown escape character") {
        // A regex or a Windows path in a double-quoted value: `"\d"` is no YAML escape.
        "a backslash in a `\"…\"` value starts an escape: write a regex or a path in single quotes (`'\\d+'`) or as a block scalar (`key: |`), or double each backslash"
    } else if message.contains("illegal placement of ':'") {
        "a `[` or `{` on a line above is not closed: close it where its items end; or quote a value that holds `: `"
    } else if message.contains("multiline quoted scalar") || message.contains("unclosed quote") {
        "a quoted value runs on to its closing quote: close it where the value ends; for text of several lines, write a block scalar (`key: |`, the text indented below)"
    } else if message.contains("mapping values are not allowed") {
        "quote a value that holds `: ` (`key: \"a: b\"`); a key indented deeper than the key above it has no place: line it up with its siblings"
    } else if message.starts_with("unclosed bracket") {
        "close the bracket, or quote the value if it is text that starts with `[` or `{`"
    } else if message.starts_with("a condition is an expression, not a template") {
        "write the expression without the braces (`when: not yolo`, `when: mode == 'plan'`): a condition is read as one already"
    } else if message.starts_with("a key is a name") {
        "a value that starts with `{` or `[` is a mapping or a list: quote a template (`key: \"{{ name }}\"`), or write it as a block scalar (`key: |`)"
    } else if message.starts_with("unexpected character: `%") {
        "a value that starts with `{` is a YAML mapping, and `{%` none: quote a template (`key: \"{% if … %}…\"`), or write it as a block scalar (`key: |`)"
    } else if message.starts_with("unexpected character: `@")
        || message.starts_with("unexpected character: ``")
    {
        "quote the value: a plain YAML value cannot start with `@` or `` ` ``"
    } else if let Some(code) = message
        .strip_prefix("unexpected character: `\\u{")
        .and_then(|rest| rest.split_once('}'))
        .and_then(|(hex, _)| u32::from_str_radix(hex, 16).ok())
    {
        return Some(format!(
            "YAML holds no control character written as itself: remove it, or write it as an escape in a `\"…\"` string (`\\u{code:04X}`)"
        ));
    } else if message.starts_with("alias references unknown anchor")
        || message.contains("while scanning an anchor or alias")
    {
        "`*` starts an alias of an anchor (`&name`): quote a value that starts with `*`"
    } else if message.contains("did not find expected key") {
        "a mapping's keys line up at one indentation, and each line of a block scalar (`key: |`) is indented at least as deep as its first; a list item (`- …`) belongs under a key (`tools:`)"
    } else if message.starts_with("a list item's `-` stands") {
        "line the `-` up with the `-` of the items above (as many spaces before it as theirs), and its keys with theirs"
    } else if message.contains("did not find expected '-' indicator") {
        // A key met among a list's items, less indented than their keys.
        "a line at the indentation of a list's `- ` starts a new item: indent a key of the item above as deep as its other keys (after its `- `), or begin the line with `- `"
    } else if message.contains("trailing content after") {
        "a quoted value ends at its closing quote: quote all of it (`'\"a\" b'`), or nothing"
    } else if message.contains("simple key expected ':'") {
        "write a space after a key's `:` (`key: value`), and indent a block scalar's text below its key"
    } else if message.contains("comments must be separated") {
        "put a space before `#` that starts a comment, or quote a value that holds `#`"
    } else if message.contains("too large or too deeply nested") {
        "flatten what nests deepest (no real setting or schema nests so deep), or split the file"
    } else if message.starts_with("recursion limit exceeded") {
        "YAML is read nested fewer than 256 lists and mappings deep: flatten the value (no real context or tool schema nests so deep)"
    } else {
        return None;
    };
    Some(help.into())
}

/// Help for a JSON syntax error, from what serde_json's message names.
pub(super) fn json_help(message: &str) -> Option<String> {
    let help = if message.starts_with("a `,` with no value") {
        "remove the `,`"
    } else if message.starts_with("a `/*` comment is not closed") {
        "write `*/` where the comment ends"
    } else if message.starts_with("a `/` that starts no comment") {
        "remove the `/`, or write `//` to start a comment"
    } else if message.starts_with("trailing comma") {
        "remove the `,` after the last item: JSON allows none"
    } else if message.starts_with("key must be a string") {
        "a JSON key is written in double quotes (`\"date\": …`); JSON has no comments and no single-quoted strings"
    } else if message.starts_with("expected `,` or") {
        "separate items with `,`, and write text values in double quotes (`\"2026-11-01\"`)"
    } else if message.starts_with("expected `:`") {
        "write `:` between a key and its value"
    } else if message.starts_with("expected value") {
        "a value is a string in double quotes, a number, `true`, `false`, `null`, an array or an object"
    } else if message.starts_with("EOF while parsing") {
        "close every `{`, `[` and `\"` the file opens"
    } else if let Some(code) = message.strip_prefix("control character U+") {
        let code = code.get(..4).unwrap_or(code);
        return Some(format!(
            "a JSON string holds no control character written as itself: remove it, or write it as an escape (`\\u{code}`; a tab is `\\t`)"
        ));
    } else if message.starts_with("control character") {
        "a string ends on its line: add the closing `\"`, and write a line break inside it as `\\n`"
    } else if message.starts_with("invalid escape") {
        "a backslash starts an escape: double it (`\\\\`) to write one"
    } else if message.contains("hex escape")
        || message.contains("surrogate")
        || message.starts_with("invalid unicode code point")
    {
        "a `\\u` escape is four hex digits, and one of `\\uD800`-`\\uDBFF` is half a character, followed by a second of `\\uDC00`-`\\uDFFF` (`\\uD83D\\uDE00`): write the character itself, or complete the escape"
    } else if message.starts_with("recursion limit exceeded") {
        "JSON is read nested fewer than 128 arrays and objects deep: flatten the value (no real context or tool schema nests so deep)"
    } else {
        return None;
    };
    Some(help.into())
}

/// The help for a number promptc cannot hold, by how it is written: a whole number past 64
/// bits, or a decimal that is infinite or not a number.
pub(super) fn unsupported_number_help(text: &str) -> String {
    let digits = text.trim_start_matches(['-', '+']).replace('_', "");
    let lower = digits.to_ascii_lowercase();
    let whole = !digits.is_empty()
        && (digits.bytes().all(|b| b.is_ascii_digit())
            || ["0x", "0o", "0b"]
                .iter()
                .any(|radix| lower.starts_with(radix)));
    if whole {
        "use a whole number from -9223372036854775808 to 9223372036854775807 (a signed 64-bit \
         integer), a decimal where the setting takes one (`1e23`), or quote it as text"
            .into()
    } else if lower.contains("inf") || lower.contains("nan") {
        "JSON, and so promptc, has no infinity or NaN: write a finite number, or quote it as text"
            .into()
    } else {
        "write a number a float holds (at most about 1.8e308 either side of zero), or quote it \
         as text"
            .into()
    }
}
