//! The Python methods Jinja2 templates call on text, tables and lists (`cwd.split("/")`,
//! `os.startswith("mac")`, `extra.get("ticket", "none")`, `table.items()`), which minijinja's
//! values do not have: each does what Python's does, so that a template ported from Jinja2
//! renders as it did. A method not here stays an unknown-method error, whose help names the
//! filter or test that does its work.
//!
//! Where a filter does the same work, the method is that filter, so that it keeps the filter's
//! limits and fuel (`split`, `join`, `replace`, `center`).

use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, State, Value};

use crate::templates::arguments::Arguments;
use crate::templates::limits;
use crate::templates::text_filters::is_line_end;

/// The methods of text.
const TEXT_METHODS: &[&str] = &[
    "capitalize",
    "center",
    "count",
    "endswith",
    "find",
    "index",
    "isalnum",
    "isalpha",
    "isdecimal",
    "isdigit",
    "islower",
    "isnumeric",
    "isspace",
    "isupper",
    "join",
    "lower",
    "lstrip",
    "removeprefix",
    "removesuffix",
    "replace",
    "rfind",
    "rindex",
    "rstrip",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "title",
    "upper",
];

/// The methods of a table.
const TABLE_METHODS: &[&str] = &["get", "items", "keys", "values"];

/// The methods of a list.
const LIST_METHODS: &[&str] = &["count", "index"];

/// Installs the methods, the text they build bounded by `limit` bytes.
pub fn install(env: &mut minijinja::Environment<'static>, limit: u64) {
    env.set_unknown_method_callback(move |state, value, method, args| {
        // An undefined value keeps minijinja's error, which names the expression that made it;
        // a macro or function stored under the name (an imported template's macro `h.title()`)
        // is called, as minijinja calls it when no method answers.
        if value.is_undefined() || holds_callable(value, method) {
            return Err(Error::from(ErrorKind::UnknownMethod));
        }
        let result = if let Some(text) = value.as_str() {
            text_method(state, value, text, method, args, limit)
        } else {
            match value.kind() {
                ValueKind::Map => table_method(state, value, method, args),
                ValueKind::Seq => list_method(value, method, args),
                _ => Err(Error::from(ErrorKind::UnknownMethod)),
            }
        };
        match result {
            Err(error) if error.kind() == ErrorKind::UnknownMethod => {
                Err(wrong_kind(value, method).unwrap_or(error))
            }
            result => result,
        }
    });
}

/// Whether `value` holds a macro or function under `name`: data (a context's tables) holds no
/// such object, an imported template's module does. A function is an object of no other kind;
/// a macro is a table of its `name`, `arguments` and whether it takes a `caller` (minijinja
/// keeps its type to itself).
fn holds_callable(value: &Value, name: &str) -> bool {
    let Some(stored) = value
        .as_object()
        .and_then(|object| object.get_value(&Value::from(name)))
    else {
        return false;
    };
    let attribute = |key: &str| stored.get_attr(key).map(|value| value.kind()).ok();
    stored.kind() == ValueKind::Plain
        || (stored.kind() == ValueKind::Map
            && attribute("caller") == Some(ValueKind::Bool)
            && attribute("arguments") == Some(ValueKind::Seq)
            && attribute("name") == Some(ValueKind::String))
}

/// The error for a method `value` does not have, where something near it says what was
/// meant: a method of other values (`.split()` of a list: which values have it, and what this
/// one is), a table's key called as a method (`m.heading()`), or a method of this value's
/// kind one typo away (`.uper()`). `None` leaves minijinja's error, whose help lists the
/// methods there are.
fn wrong_kind(value: &Value, method: &str) -> Option<Error> {
    let having: Vec<&str> = [
        ("text", TEXT_METHODS),
        ("a table", TABLE_METHODS),
        ("a list", LIST_METHODS),
    ]
    .into_iter()
    .filter(|(_, methods)| methods.contains(&method))
    .map(|(kind, _)| kind)
    .collect();
    if having.is_empty() {
        return near_miss(value, method);
    }
    let this = match value.kind() {
        ValueKind::String => "text",
        ValueKind::Map => "a table",
        ValueKind::Seq => "a list",
        ValueKind::Bool => "a boolean",
        ValueKind::Number => "a number",
        ValueKind::None => "none",
        ValueKind::Bytes => "bytes",
        ValueKind::Iterable => "an iterable",
        _ => "another kind of value",
    };
    Some(invalid(&format!(
        "`.{method}()` is a method of {}, and this value is {this}",
        having.join(" and of ")
    )))
}

/// The most keys of a table looked at for one near the name of a method called on it.
const KEYS_LOOKED_AT: usize = 1_000;

/// [`wrong_kind`]'s error for a method no kind of value has.
fn near_miss(value: &Value, method: &str) -> Option<Error> {
    if value.kind() == ValueKind::Map {
        let keys: Vec<String> = value
            .try_iter()
            .ok()?
            .take(KEYS_LOOKED_AT)
            .filter_map(|key| key.as_str().map(str::to_owned))
            .collect();
        // (A key holding a macro or function was called before this.)
        if keys.iter().any(|key| key == method) {
            return Some(invalid(&format!(
                "`{method}` is a key of this table, not a method: read its value without \
                 `()`, as `.{method}`"
            )));
        }
        let methods: Vec<String> = TABLE_METHODS
            .iter()
            .map(|name| (*name).to_owned())
            .collect();
        let near = crate::namespace::closest(method, keys.iter().chain(&methods))?;
        if holds_callable(value, &near) {
            // An imported template's macro: the unknown method's help names it.
            return None;
        }
        return Some(invalid(&if TABLE_METHODS.contains(&near.as_str()) {
            format!("a table has no method `.{method}()`: did you mean `.{near}()`?")
        } else {
            format!(
                "a table has no method `.{method}()`: did you mean its key `{near}`, read as \
                 `.{near}` (without `()`)?"
            )
        }));
    }
    let (kind, methods) = match value.kind() {
        ValueKind::String => ("text", TEXT_METHODS),
        ValueKind::Seq => ("a list", LIST_METHODS),
        _ => return None,
    };
    let names: Vec<String> = methods.iter().map(|name| (*name).to_owned()).collect();
    let near = crate::namespace::closest(method, &names)?;
    Some(invalid(&format!(
        "{kind} has no method `.{method}()`: did you mean `.{near}()`?"
    )))
}

/// Python's whitespace (`str.isspace`, `strip`, `split`): Unicode's, and the four separators
/// below the space.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn text_method(
    state: &mut State,
    value: &Value,
    text: &str,
    method: &str,
    args: &[Value],
    limit: u64,
) -> Result<Value, Error> {
    let name = format!(".{method}()");
    let none: &[&str] = &[];
    let result = match method {
        "upper" | "lower" => {
            Arguments::new(&name, none, args)?.done()?;
            return state.apply_filter(method, std::slice::from_ref(value));
        }
        "capitalize" => {
            Arguments::new(&name, none, args)?.done()?;
            // The rest in lower case as the whole text lowers it, so that a final sigma is
            // told by what comes before it too (`ΑΣ` is `Ας`).
            let mut out = String::with_capacity(text.len());
            if let Some(first) = text.chars().next() {
                push_title_case(first, &mut out);
                let lower = text.to_lowercase();
                let first_lower: usize = first.to_lowercase().map(char::len_utf8).sum();
                out.push_str(lower.get(first_lower..).unwrap_or_default());
            }
            limits::check(out.len(), limit, "the capitalized text")?;
            Value::from(out)
        }
        "title" => {
            Arguments::new(&name, none, args)?.done()?;
            let titled = title(text);
            limits::check(titled.len(), limit, "the title-cased text")?;
            Value::from(titled)
        }
        "strip" | "lstrip" | "rstrip" => {
            let args = Arguments::new(&name, &["chars"], args)?;
            let chars = args.get::<Option<String>>(0)?.flatten();
            args.done()?;
            let strip = |c: char| match &chars {
                Some(chars) => chars.contains(c),
                None => is_python_space(c),
            };
            Value::from(match method {
                "strip" => text.trim_matches(strip),
                "lstrip" => text.trim_start_matches(strip),
                _ => text.trim_end_matches(strip),
            })
        }
        "split" => {
            let args = Arguments::new(&name, &["sep", "maxsplit"], args)?;
            let sep = args.get::<Option<String>>(0)?.flatten();
            let maxsplit = args.get::<i64>(1)?.unwrap_or(-1);
            args.done()?;
            if sep.as_deref() == Some("") {
                return Err(invalid("`.split()` was given an empty separator"));
            }
            let Some(sep) = sep else {
                return split_whitespace(state, value, text, maxsplit);
            };
            return state.apply_filter(
                "split",
                &[value.clone(), Value::from(sep), Value::from(maxsplit)],
            );
        }
        "splitlines" => {
            Arguments::new(&name, none, args)?.done()?;
            // The `lines` filter's lines, which pay fuel each, of the text with Python's other
            // line endings made `\n` (the filter breaks at `\n` and `\r\n` alone).
            let ends_elsewhere = |c: char| is_line_end(c) && c != '\n' && c != '\r';
            let lone_return = text
                .match_indices('\r')
                .any(|(at, _)| text.as_bytes().get(at + 1) != Some(&b'\n'));
            if !lone_return && !text.contains(ends_elsewhere) {
                return state.apply_filter("lines", std::slice::from_ref(value));
            }
            let mut unified = String::with_capacity(text.len());
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '\r' && chars.peek() != Some(&'\n') || ends_elsewhere(c) {
                    unified.push('\n');
                } else {
                    unified.push(c);
                }
            }
            return state.apply_filter("lines", &[Value::from(unified)]);
        }
        "startswith" | "endswith" => {
            let args = Arguments::new(&name, &["prefix"], args)?;
            let affixes = args.required::<Value>(0)?;
            args.done()?;
            let matches = |affix: &str| match method {
                "startswith" => text.starts_with(affix),
                _ => text.ends_with(affix),
            };
            Value::from(match affixes.as_str() {
                Some(affix) => matches(affix),
                None => {
                    let mut any = false;
                    for affix in affixes.try_iter()? {
                        let affix = affix.as_str().ok_or_else(|| {
                            invalid(&format!("`{name}` takes text or a list of texts"))
                        })?;
                        any |= matches(affix);
                    }
                    any
                }
            })
        }
        "replace" => {
            let args = Arguments::new(&name, &["old", "new", "count"], args)?;
            let old = args.required::<String>(0)?;
            let new = args.required::<String>(1)?;
            let count = args.get::<i64>(2)?.unwrap_or(-1);
            args.done()?;
            let Ok(count) = usize::try_from(count) else {
                return state.apply_filter(
                    "replace",
                    &[value.clone(), Value::from(old), Value::from(new)],
                );
            };
            // Only the replacements made grow the text (an empty `old` matches between
            // every two characters, and at both ends).
            let made = count.min(text.matches(old.as_str()).count());
            let grown = new.len().saturating_sub(old.len()).saturating_mul(made);
            limits::check(text.len().saturating_add(grown), limit, "the replaced text")?;
            Value::from(text.replacen(&old, &new, count))
        }
        "find" | "rfind" | "index" | "rindex" => {
            let args = Arguments::new(&name, &["sub"], args)?;
            let sub = args.required::<String>(0)?;
            args.done()?;
            let found = match method {
                "find" | "index" => text.find(&sub),
                _ => text.rfind(&sub),
            };
            match (found, method) {
                (Some(at), _) => Value::from(text[..at].chars().count()),
                (None, "find" | "rfind") => Value::from(-1),
                (None, _) => return Err(invalid(&format!("`{name}`: substring not found"))),
            }
        }
        "count" => {
            let args = Arguments::new(&name, &["sub"], args)?;
            let sub = args.required::<String>(0)?;
            args.done()?;
            Value::from(text.matches(sub.as_str()).count())
        }
        "join" => {
            let args = Arguments::new(&name, &["iterable"], args)?;
            let items = args.required::<Value>(0)?;
            args.done()?;
            return state.apply_filter("join", &[items, value.clone()]);
        }
        "center" => {
            let args = Arguments::new(&name, &["width"], args)?;
            let width = args.required::<Value>(0)?;
            args.done()?;
            return state.apply_filter("center", &[value.clone(), width]);
        }
        "removeprefix" | "removesuffix" => {
            let args = Arguments::new(&name, &["affix"], args)?;
            let affix = args.required::<String>(0)?;
            args.done()?;
            Value::from(match method {
                "removeprefix" => text.strip_prefix(affix.as_str()).unwrap_or(text),
                _ => text.strip_suffix(affix.as_str()).unwrap_or(text),
            })
        }
        "isalnum" | "isalpha" | "isdecimal" | "isdigit" | "isnumeric" | "isspace" => {
            Arguments::new(&name, none, args)?.done()?;
            let each: fn(char) -> bool = match method {
                "isalnum" => char::is_alphanumeric,
                "isalpha" => char::is_alphabetic,
                "isspace" => is_python_space,
                // Python tells decimal digits, digits and numerals apart; Rust's character
                // properties do not, and all three hold for the same ASCII digits.
                _ => char::is_numeric,
            };
            Value::from(!text.is_empty() && text.chars().all(each))
        }
        "isupper" | "islower" => {
            Arguments::new(&name, none, args)?.done()?;
            // At least one cased character, and every cased one of the case asked (a letter
            // in title case, `ǅ`, is of neither).
            let wanted: fn(char) -> bool = match method {
                "isupper" => char::is_uppercase,
                _ => char::is_lowercase,
            };
            Value::from(text.chars().any(wanted) && text.chars().all(|c| !is_cased(c) || wanted(c)))
        }
        _ => return Err(Error::from(ErrorKind::UnknownMethod)),
    };
    Ok(result)
}

/// Python's `str.split(None, maxsplit)`: the words between runs of whitespace, and after
/// `maxsplit` of them (when not negative) the rest of the text from the next word on, as it is.
/// The words are the `split` filter's, which pays fuel for each, of the text with Python's
/// four separators below the space made spaces (the filter's whitespace is Unicode's alone).
fn split_whitespace(
    state: &mut State,
    value: &Value,
    text: &str,
    maxsplit: i64,
) -> Result<Value, Error> {
    let separated = ('\u{1c}'..='\u{1f}').any(|c| text.contains(c));
    let words = if separated {
        let spaced = text.replace(|c| ('\u{1c}'..='\u{1f}').contains(&c), " ");
        state.apply_filter("split", &[Value::from(spaced)])?
    } else {
        state.apply_filter("split", std::slice::from_ref(value))?
    };
    let Ok(maxsplit) = usize::try_from(maxsplit) else {
        return Ok(words);
    };
    let mut words: Vec<Value> = words.try_iter()?.collect();
    if words.len() <= maxsplit {
        return Ok(Value::from(words));
    }
    // Where the word after the first `maxsplit` starts.
    let mut rest = text;
    for _ in 0..maxsplit {
        rest = rest.trim_start_matches(is_python_space);
        rest = rest.trim_start_matches(|c: char| !is_python_space(c));
    }
    words.truncate(maxsplit);
    words.push(Value::from(rest.trim_start_matches(is_python_space)));
    Ok(Value::from(words))
}

/// `c` in title case, as Python's `capitalize` and `title` write it: its upper case but for
/// the letters whose title case differs (`ß` is `Ss`, `ǆ` is `ǅ`, `ﬁ` is `Fi`).
fn push_title_case(c: char, out: &mut String) {
    let title = match c {
        'ß' => "Ss",
        'Ǆ' | 'ǅ' | 'ǆ' => "ǅ",
        'Ǉ' | 'ǈ' | 'ǉ' => "ǈ",
        'Ǌ' | 'ǋ' | 'ǌ' => "ǋ",
        'Ǳ' | 'ǲ' | 'ǳ' => "ǲ",
        'ﬀ' => "Ff",
        'ﬁ' => "Fi",
        'ﬂ' => "Fl",
        'ﬃ' => "Ffi",
        'ﬄ' => "Ffl",
        'ﬅ' | 'ﬆ' => "St",
        'և' => "Եւ",
        'ﬓ' => "Մն",
        'ﬔ' => "Մե",
        'ﬕ' => "Մի",
        'ﬖ' => "Վն",
        'ﬗ' => "Մխ",
        // Georgian's letters are their own title case; their upper case is another script.
        '\u{10d0}'..='\u{10fa}' | '\u{10fd}'..='\u{10ff}' => {
            out.push(c);
            return;
        }
        // Greek letters with the iota below: their title case keeps it below the capital.
        '\u{1f80}'..='\u{1f87}' | '\u{1f90}'..='\u{1f97}' | '\u{1fa0}'..='\u{1fa7}' => {
            out.extend(char::from_u32(c as u32 + 8));
            return;
        }
        // Already in title case (Rust's upper case spells the iota out).
        '\u{1f88}'..='\u{1f8f}'
        | '\u{1f98}'..='\u{1f9f}'
        | '\u{1fa8}'..='\u{1faf}'
        | 'ᾼ'
        | 'ῌ'
        | 'ῼ' => {
            out.push(c);
            return;
        }
        'ᾳ' => "ᾼ",
        'ῃ' => "ῌ",
        'ῳ' => "ῼ",
        _ => {
            out.extend(c.to_uppercase());
            return;
        }
    };
    out.push_str(title);
}

/// Python's `str.title()`: a cased character after an uncased one is upper case, the others
/// lower case (`they're` is `They'Re`, as in Python; the `title` filter keeps `They're`).
fn title(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut after_cased = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let cased = is_cased(c);
        if !after_cased {
            push_title_case(c, &mut out);
        } else if c == 'Σ' {
            // A sigma that ends a word is the final one: no cased letter follows, past the
            // characters case ignores (`.`, `'`, marks).
            let ends = chars
                .clone()
                .find(|next| !is_case_ignorable(*next))
                .is_none_or(|next| !is_cased(next));
            out.push(if ends { 'ς' } else { 'σ' });
        } else {
            out.extend(c.to_lowercase());
        }
        after_cased = cased;
    }
    out
}

/// Characters Unicode's case rules look past (`Case_Ignorable`): the marks, and the
/// punctuation that joins the parts of a word or number.
fn is_case_ignorable(c: char) -> bool {
    matches!(
        c,
        '\'' | '.'
            | ':'
            | '^'
            | '`'
            | '\u{ad}'
            | '\u{b7}'
            | '\u{2018}'
            | '\u{2019}'
            | '\u{2024}'
            | '\u{2027}'
    ) || unicode_normalization::char::is_combining_mark(c)
}

/// Whether a letter has case: upper, lower, or title case (`ǅ`, which Rust calls neither).
fn is_cased(c: char) -> bool {
    c.is_uppercase() || c.is_lowercase() || c.to_lowercase().ne(c.to_uppercase())
}

fn table_method(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    let name = format!(".{method}()");
    let none: &[&str] = &[];
    match method {
        "get" => {
            let args = Arguments::new(&name, &["key", "default"], args)?;
            let key = args.required::<Value>(0)?;
            let default = args.get::<Value>(1)?.unwrap_or(Value::from(()));
            args.done()?;
            let found = value.get_item(&key)?;
            Ok(if found.is_undefined() { default } else { found })
        }
        "items" => {
            Arguments::new(&name, none, args)?.done()?;
            state.apply_filter("items", std::slice::from_ref(value))
        }
        "keys" => {
            Arguments::new(&name, none, args)?.done()?;
            Ok(Value::from_iter(value.try_iter()?))
        }
        "values" => {
            Arguments::new(&name, none, args)?.done()?;
            let keys: Vec<Value> = value.try_iter()?.collect();
            let values: Result<Vec<Value>, Error> =
                keys.iter().map(|key| value.get_item(key)).collect();
            Ok(Value::from(values?))
        }
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}

fn list_method(value: &Value, method: &str, args: &[Value]) -> Result<Value, Error> {
    let name = format!(".{method}()");
    match method {
        "count" | "index" => {
            let args = Arguments::new(&name, &["value"], args)?;
            let wanted = args.required::<Value>(0)?;
            args.done()?;
            let mut items = value.try_iter()?;
            if method == "count" {
                return Ok(Value::from(items.filter(|item| *item == wanted).count()));
            }
            match items.position(|item| item == wanted) {
                Some(at) => Ok(Value::from(at)),
                None => Err(invalid(&format!("`.index()`: {wanted} is not in the list"))),
            }
        }
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}

fn invalid(message: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &str) -> Result<String, Error> {
        let env = crate::templates::environment::new_environment(None, 1000);
        env.render_str(
            template,
            minijinja::context! {
                cwd => "/home/dev/project  ",
                extra => minijinja::context! { team => "core", size => 3 },
                tags => vec!["a", "b", "a"],
            },
        )
    }

    /// Each against what Python gives (20,000 random texts and arguments also agreed, method
    /// by method, when this was written).
    #[test]
    fn text_methods_do_what_python_s_do() {
        for (template, python) in [
            ("{{ cwd.split('/') }}", r#"["","home","dev","project  "]"#),
            ("{{ cwd.split() }}", r#"["/home/dev/project"]"#),
            ("{{ ' a b  c  '.split(None, 1) }}", r#"["a","b  c  "]"#),
            ("{{ 'a,b,c'.split(',', maxsplit=1) }}", r#"["a","b,c"]"#),
            (
                "{{ cwd.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '  a '.lstrip() }}|",
                "/home/dev/project|a|a |",
            ),
            (
                "{{ cwd.startswith('/home') }} {{ cwd.endswith(['x', '  ']) }}",
                "true true",
            ),
            (
                r#"{{ "they're ßig".title() }} {{ 'ßAB'.capitalize() }}"#,
                "They'Re Ssig Ssab",
            ),
            (
                "{{ 'aaa'.replace('a', 'b', 2) }} {{ 'abc'.replace('', '-') }}",
                "bba -a-b-c-",
            ),
            (
                "{{ 'é/x/y'.find('x') }} {{ 'é/x/y'.rfind('/') }} {{ 'x'.find('z') }}",
                "2 3 -1",
            ),
            (
                "{{ 'a-b-c'.count('-') }} {{ ', '.join(['a', 'b']) }}",
                "2 a, b",
            ),
            ("{{ 'one\r\ntwo\n'.splitlines() }}", r#"["one","two"]"#),
            (
                "{{ 'v1.2'.removeprefix('v') }} {{ 'a.md'.removesuffix('.md') }}",
                "1.2 a",
            ),
            (
                "{{ '42'.isdigit() }} {{ ''.isdigit() }} {{ 'AB1'.isupper() }} {{ ' \t'.isspace() }}",
                "true false true true",
            ),
            ("{{ 'mid'.center(7) }}|", "  mid  |"),
        ] {
            assert_eq!(render(template).ok().as_deref(), Some(python), "{template}");
        }
    }

    #[test]
    fn table_and_list_methods_do_what_python_s_do() {
        for (template, python) in [
            (
                "{{ extra.get('team') }} {{ extra.get('ticket') }} {{ extra.get('ticket', 'none') }}",
                "core null none",
            ),
            (
                "{{ extra.keys() }} {{ extra.values() }}",
                r#"["team","size"] ["core",3]"#,
            ),
            (
                "{% for k, v in extra.items() %}{{ k }}={{ v }};{% endfor %}",
                "team=core;size=3;",
            ),
            ("{{ tags.count('a') }} {{ tags.index('b') }}", "2 1"),
        ] {
            assert_eq!(render(template).ok().as_deref(), Some(python), "{template}");
        }
    }

    #[test]
    fn a_wrong_call_is_an_error_that_says_what_is_wrong() {
        for (template, says) in [
            (
                "{{ tags.split(',') }}",
                "`.split()` is a method of text, and this value is a list",
            ),
            (
                "{{ extra.count('a') }}",
                "`.count()` is a method of text and of a list, and this value is a table",
            ),
            ("{{ 'a'.split('') }}", "empty separator"),
            ("{{ 'a'.index('z') }}", "substring not found"),
            ("{{ tags.index('z') }}", "is not in the list"),
            (
                "{{ 'a'.replace('a') }}",
                "`.replace()` needs its argument `new`",
            ),
            (
                "{{ 'a'.strip(' ', 'x') }}",
                "`.strip()` takes at most 1 arguments (chars), 2 given",
            ),
        ] {
            let error = render(template).unwrap_err();
            assert!(error.to_string().contains(says), "{template}: {error}");
        }
        // A method no value has is still minijinja's unknown method, whose help names the filter.
        let unknown = render("{{ 'a'.format(1) }}").unwrap_err();
        assert_eq!(unknown.kind(), ErrorKind::UnknownMethod, "{unknown}");
    }

    /// A method the value does not have, near what it does have: the error names that.
    #[test]
    fn a_method_near_a_key_or_a_method_is_named() {
        for (template, says) in [
            (
                "{{ extra.team() }}",
                "`team` is a key of this table, not a method: read its value without `()`, as \
                 `.team`",
            ),
            (
                "{{ extra.taem() }}",
                "a table has no method `.taem()`: did you mean its key `team`, read as `.team` \
                 (without `()`)?",
            ),
            (
                "{{ extra.itmes() }}",
                "a table has no method `.itmes()`: did you mean `.items()`?",
            ),
            (
                "{{ cwd.uper() }}",
                "text has no method `.uper()`: did you mean `.upper()`?",
            ),
            (
                "{{ tags.cont('a') }}",
                "a list has no method `.cont()`: did you mean `.count()`?",
            ),
        ] {
            let error = render(template).unwrap_err();
            assert!(error.to_string().contains(says), "{template}: {error}");
        }
        // Nothing near: minijinja's unknown method, whose help lists the methods there are.
        for template in [
            "{{ extra.zzzqqq() }}",
            "{{ cwd.zzzqqq() }}",
            "{{ 3.uper() }}",
        ] {
            let unknown = render(template).unwrap_err();
            assert_eq!(unknown.kind(), ErrorKind::UnknownMethod, "{unknown}");
        }
    }

    /// Cases where Unicode's rules are Python's, not Rust's char functions'.
    #[test]
    fn case_follows_python_for_sigma_georgian_and_title_case_letters() {
        for (template, python) in [
            (
                "{{ 'ΟΔΟΣ ΣΑΣ'.title() }} {{ 'ΑΣ'.capitalize() }}",
                "Οδος Σας Ας",
            ),
            ("{{ 'σΣ.σ'.title() }}", "Σσ.Σ"),
            (
                "{{ 'გამარჯობა'.capitalize() }} {{ 'ᾳa'.title() }}",
                "გამარჯობა ᾼa",
            ),
            (
                "{{ 'ǅa'.isupper() }} {{ 'ǅa'.islower() }} {{ 'ǅa'.title() }}",
                "false false ǅa",
            ),
        ] {
            assert_eq!(render(template).ok().as_deref(), Some(python), "{template}");
        }
    }

    /// A macro of an imported template named like a method (`h.title(…)`, `h.items()`) is the
    /// macro: the methods are for data.
    #[test]
    fn an_imported_macro_named_like_a_method_is_called() {
        let mut env = crate::templates::environment::new_environment(None, 1000);
        env.add_template(
            "h.md",
            "{% macro title(x) %}T:{{ x }}{% endmacro %}{% macro items() %}I{% endmacro %}",
        )
        .unwrap();
        let out = env
            .render_str(
                "{% import 'h.md' as h %}{{ h.title('x') }} {{ h.items() }}",
                (),
            )
            .unwrap();
        assert_eq!(out, "T:x I");
    }

    /// A method of an undefined value keeps minijinja's error, which names the expression.
    #[test]
    fn a_method_of_an_undefined_value_is_an_undefined_error() {
        let error = render("{{ extra.tickt.upper() }}").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::UnknownMethod, "{error}");
        assert!(error.to_string().contains("undefined"), "{error}");
        let number = render("{{ (5).split() }}").unwrap_err();
        assert!(
            number
                .to_string()
                .contains("`.split()` is a method of text, and this value is a number"),
            "{number}"
        );
    }

    #[test]
    fn splitlines_and_replace_pay_for_what_they_make_and_no_more() {
        // Each line costs fuel, as the `lines` filter's do.
        let env = crate::templates::environment::new_environment(Some(2_000), 1 << 20);
        let lines = env
            .render_str("{{ ('a\x0b' * 5000).splitlines() | length }}", ())
            .unwrap_err();
        assert_eq!(lines.kind(), ErrorKind::OutOfFuel, "{lines}");
        assert_eq!(
            render("{{ 'a\rb\r\nc\u{2028}d\n'.splitlines() }}")
                .ok()
                .as_deref(),
            Some(r#"["a","b","c","d"]"#)
        );
        // A count past the matches grows the text by the matches alone.
        assert_eq!(
            render("{{ 'abc'.replace('a', 'xx', 100000000) }}")
                .ok()
                .as_deref(),
            Some("xxbc")
        );
    }

    #[test]
    fn the_text_a_method_builds_is_bounded_by_the_render_limit() {
        let grown =
            render("{{ ('a' * 100).replace('a', 'bbbbbbbbbbbbbbbbbbbb', 99) }}").unwrap_err();
        assert!(limits::too_large(&grown).is_some(), "{grown}");
        let all = render("{{ ('a' * 100).replace('a', 'bbbbbbbbbbbbbbbbbbbb') }}").unwrap_err();
        assert!(limits::too_large(&all).is_some(), "{all}");
        let joined = render("{{ ('x' * 600).join(['a', 'b', 'c']) }}").unwrap_err();
        assert!(limits::too_large(&joined).is_some(), "{joined}");
    }
}
