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
use crate::templates::text_filters::split_lines;

/// The methods of text.
pub const TEXT_METHODS: &[&str] = &[
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
pub const TABLE_METHODS: &[&str] = &["get", "items", "keys", "values"];

/// The methods of a list.
pub const LIST_METHODS: &[&str] = &["count", "index"];

/// Installs the methods, the text they build bounded by `limit` bytes.
pub fn install(env: &mut minijinja::Environment<'static>, limit: u64) {
    env.set_unknown_method_callback(move |state, value, method, args| {
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

/// The error for a method of other values than `value` (`.split()` of a list): which values
/// have it, and what this one is.
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
        return None;
    }
    let this = match value.kind() {
        ValueKind::String => "text".to_owned(),
        ValueKind::Map => "a table".to_owned(),
        ValueKind::Seq => "a list".to_owned(),
        ValueKind::Bool => "a boolean".to_owned(),
        ValueKind::None => "none".to_owned(),
        kind => format!("a {kind}"),
    };
    Some(invalid(&format!(
        "`.{method}()` is a method of {}, and this value is {this}",
        having.join(" and of ")
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
            let mut chars = text.chars();
            let mut out = String::with_capacity(text.len());
            if let Some(first) = chars.next() {
                push_title_case(first, &mut out);
            }
            out.push_str(&chars.as_str().to_lowercase());
            Value::from(out)
        }
        "title" => {
            Arguments::new(&name, none, args)?.done()?;
            Value::from(title(text))
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
            Value::from_iter(split_lines(text).into_iter().map(Value::from))
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
            let grown = new.len().saturating_sub(old.len()).saturating_mul(count);
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
            // At least one cased character, and none of the other case.
            let (wanted, other) = match method {
                "isupper" => (
                    char::is_uppercase as fn(char) -> bool,
                    char::is_lowercase as fn(char) -> bool,
                ),
                _ => (
                    char::is_lowercase as fn(char) -> bool,
                    char::is_uppercase as fn(char) -> bool,
                ),
            };
            Value::from(text.chars().any(wanted) && !text.chars().any(other))
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
    for c in text.chars() {
        let cased = c.is_uppercase() || c.is_lowercase();
        if after_cased {
            out.extend(c.to_lowercase());
        } else {
            push_title_case(c, &mut out);
        }
        after_cased = cased;
    }
    out
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
