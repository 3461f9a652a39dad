//! The minijinja environment every template and condition runs in.

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, Rest, ValueKind, ValueOrKwargs};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, UndefinedBehavior, Value};

use crate::model::limits::{DEFAULT_FUEL, MAX_FUEL};
use crate::templates::arguments::Arguments;
use crate::templates::{jinja_globals, limits, model_id, python_methods, text_filters};

/// The syntax templates are read with: the white space around block tags as `whitespace`
/// says, and the final newline of a template file kept, as templates are used byte for byte.
pub fn syntax(whitespace: &crate::model::TemplateSettings) -> Option<SyntaxConfig> {
    SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .trim_blocks(whitespace.trim_blocks)
        .lstrip_blocks(whitespace.lstrip_blocks)
        .build()
        .ok()
}

/// `fuel` is the budget of one compile (each render may spend at most all of it); `render_bytes`
/// bounds the text one render writes and any one string a filter builds.
pub fn new_environment(fuel: Option<u64>, render_bytes: u64) -> Environment<'static> {
    let mut env = Environment::new();
    // A misspelt name must fail, not render as "".
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // An undefined value remembers the expression that made it, so a render error names it
    // ("`extra.teem` is undefined") and help can suggest the near name. minijinja does this
    // only in debug builds unless asked: a release binary said "undefined value" alone.
    env.set_debug(true);
    // Prompts are not HTML: nothing is escaped, whatever a template is named.
    env.set_auto_escape_callback(|_| AutoEscape::None);
    if let Some(syntax) = syntax(&crate::model::TemplateSettings::default()) {
        env.set_syntax(syntax);
    }
    env.set_fuel(Some(fuel.unwrap_or(DEFAULT_FUEL).clamp(1, MAX_FUEL)));
    // minijinja counts 10 for an include and 4 more than the caller for a macro call: 200
    // lets a chain of 19 includes or a macro recursing about 30 deep render (64 stopped at 6
    // includes), with the stack of a debug build's 2 MiB thread to spare.
    env.set_recursion_limit(200);
    env.add_filter("pretty_json", move |value: &Value| {
        defined(value)?;
        if !limits::nesting_within_limit(value) {
            return Err(limits::too_deep("the value"));
        }
        // Measured before it is built (`pretty_json` escapes nothing: an upper bound).
        limits::check(
            limits::json_len(value, 2, false, render_bytes),
            render_bytes,
            "the JSON text",
        )?;
        pretty_json(value)
    });
    env.add_filter(
        "indent",
        move |value: &Value,
              width: Option<Value>,
              first: Option<bool>,
              blank: Option<bool>,
              kwargs: Kwargs| {
            // Taken as a value, not a string: minijinja would write a value of a trillion
            // nodes out whole to pass it in; it is measured first.
            let text = limits::filtered_text(value, render_bytes)?;
            indent(text, width, first, blank, kwargs, render_bytes)
        },
    );
    // Jinja2 takes `dictsort`'s arguments by position too: `dictsort(true)`,
    // `dictsort(false, 'value')`. minijinja takes them by name alone.
    env.add_filter("dictsort", |value: &Value, args: Rest<ValueOrKwargs>| {
        const NAMES: &[&str] = &["case_sensitive", "by", "reverse"];
        let args = args.into_values();
        let args = Arguments::new("dictsort", NAMES, &args)?;
        let mut arguments = Vec::new();
        for (index, name) in NAMES.iter().enumerate() {
            let Some(given) = args.get::<Value>(index)? else {
                continue;
            };
            let given = if *name == "by" {
                if !matches!(given.as_str(), Some("key" | "value")) {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        format!("dictsort sorts by 'key' or 'value', not {given}"),
                    ));
                }
                given
            } else {
                // Jinja2 takes any value for a truth value (`dictsort(1)`), by its truth.
                Value::from(given.is_true())
            };
            arguments.push(((*name).to_string(), given));
        }
        args.done()?;
        minijinja::filters::dictsort(value, arguments.into_iter().collect())
    });
    model_id::install(&mut env);
    text_filters::install(&mut env, render_bytes);
    jinja_globals::install(&mut env);
    python_methods::install(&mut env, render_bytes);
    limits::install(&mut env, render_bytes);
    env
}

/// A filter's input refused when undefined, as minijinja refuses one for a string argument
/// under the environment's strict behaviour (set above): a misspelt attribute
/// (`tool.descripton | indent(2)`) is an error naming it, not empty text. The silent
/// undefined of an `if` without `else` passes, as there.
fn defined(value: &Value) -> Result<(), Error> {
    UndefinedBehavior::Strict.assert_value_not_undefined(value)
}

/// The widest indentation a template may ask for. minijinja's own `indent` allocates whatever
/// width it is given, which the fuel limit does not cover.
pub const MAX_INDENT: usize = 256;

/// minijinja's `indent` (same arguments: `width`, `first`, `blank`), with the width capped.
fn indent(
    value: String,
    width: Option<Value>,
    first: Option<bool>,
    blank: Option<bool>,
    kwargs: Kwargs,
    limit: u64,
) -> Result<String, Error> {
    let width = match width {
        Some(width) => Some(width),
        None => kwargs.get::<Option<Value>>("width")?,
    };
    // Jinja2's width is a number of spaces or the text to indent with (`indent('> ')`).
    let padding = match &width {
        None => " ".repeat(4),
        Some(text) if text.kind() == ValueKind::String => text.as_str().unwrap_or("").to_owned(),
        // Python's `" " * -1` is no text: a width below zero indents with nothing.
        Some(number) if number.as_i64().is_some_and(|width| width < 0) => String::new(),
        Some(number) => match number.as_usize() {
            Some(width) if width <= MAX_INDENT => " ".repeat(width),
            Some(width) => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("indent width {width} is above the limit of {MAX_INDENT}"),
                ));
            }
            None => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "indent takes a number of spaces or the text to indent with, not {}",
                        number.kind()
                    ),
                ));
            }
        },
    };
    let first = match first {
        Some(first) => first,
        None => kwargs.get::<Option<bool>>("first")?.unwrap_or(false),
    };
    let blank = match blank {
        Some(blank) => blank,
        None => kwargs.get::<Option<bool>>("blank")?.unwrap_or(false),
    };
    kwargs.assert_all_used()?;
    if padding.len() > MAX_INDENT {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "an indent of {} bytes is above the limit of {MAX_INDENT}",
                padding.len()
            ),
        ));
    }
    let width = padding.len();
    // As minijinja's: one line ending taken off the end, `\n` or `\r\n` (or a lone `\r`).
    let text = value.strip_suffix('\n').unwrap_or(&value);
    let text = text.strip_suffix('\r').unwrap_or(text);
    let lines = text.matches('\n').count() + 1;
    limits::check(
        text.len().saturating_add(lines.saturating_mul(width)),
        limit,
        "the indented text",
    )?;
    let mut out = String::with_capacity(text.len() + width * 8);
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let blank_line = line.is_empty() || line == "\r";
        if (index > 0 || first) && (!blank_line || blank) {
            out.push_str(&padding);
        }
        out.push_str(line);
    }
    Ok(out)
}

/// Two-space indented JSON, keys in their original order, no HTML escaping (unlike `tojson`).
fn pretty_json(value: &Value) -> Result<String, Error> {
    serde_json::to_string_pretty(value).map_err(|error| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("cannot format as JSON: {error}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments as Jinja2 3.1 takes them, and what it renders (taken from Jinja2 itself).
    #[test]
    fn filters_take_the_arguments_jinja2_takes() {
        let env = new_environment(None, 1 << 20);
        let cases = [
            ("{{ 'aaa' | replace('a', 'b', 2) }}", "bba"),
            ("{{ 'aaa' | replace('a', 'b', count=-1) }}", "bbb"),
            ("{{ 'abc' | replace('', '-', 2) }}", "-a-bc"),
            ("{{ 'aaa' | replace('a', 'b', 0) }}", "aaa"),
            ("{{ 'aaa' | replace('a', 'b') }}", "bbb"),
            (
                "{% for k, v in {'b': 1, 'A': 2, 'a': 3} | dictsort(true) %}{{ k }}{{ v }} {% endfor %}",
                "A2 a3 b1 ",
            ),
            (
                "{% for k, v in {'b': 1, 'A': 2, 'a': 3} | dictsort(false, 'value', true) %}{{ k }}{{ v }} {% endfor %}",
                "a3 A2 b1 ",
            ),
            (
                "{% for k, v in {'b': 1, 'a': 2} | dictsort(reverse=true) %}{{ k }}{% endfor %}",
                "ba",
            ),
            ("{{ 'a\nb' | indent('> ') }}", "a\n> b"),
            ("{{ 'a\nb' | indent(width='--', first=true) }}", "--a\n--b"),
            ("{{ 'a\nb' | indent(2) }}", "a\n  b"),
            ("{{ 'a\nb' | indent(-1) }}", "a\nb"),
            (
                "{% for k, v in {'b': 1, 'A': 2} | dictsort(1, 'key', 0) %}{{ k }}{% endfor %}",
                "Ab",
            ),
            (
                "{% for c in 'ab' %}{{ loop.length }}{{ loop.revindex }}{% endfor %}",
                "2221",
            ),
        ];
        for (template, jinja2) in cases {
            let rendered = env.render_str(template, ()).map_err(|e| e.to_string());
            assert_eq!(rendered.as_deref(), Ok(jinja2), "{template}");
        }
        for (template, error) in [
            (
                "{{ {'a': 1} | dictsort(true, case_sensitive=true) }}",
                "twice",
            ),
            ("{{ {'a': 1} | dictsort(by='size') }}", "'key' or 'value'"),
            ("{{ 'a' | indent(3.5) }}", "number of spaces or the text"),
            ("{{ 'a' | indent(300) }}", "above the limit"),
            ("{{ 'a' | replace('a', 'b', 1, colour=1) }}", "colour"),
        ] {
            let failed = env.render_str(template, ()).unwrap_err().to_string();
            assert!(failed.contains(error), "{template}: {failed}");
        }
    }

    #[test]
    fn pretty_json_keeps_order_and_does_not_escape() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        let value: serde_json::Value =
            serde_json::from_str(r#"{"z": "<a & b>", "a": [1, 2]}"#).unwrap();
        let out = env
            .render_str(
                "{{ v | pretty_json }}",
                minijinja::context! { v => Value::from(minijinja::value::Serde(&value)) },
            )
            .unwrap();
        assert_eq!(
            out,
            "{\n  \"z\": \"<a & b>\",\n  \"a\": [\n    1,\n    2\n  ]\n}"
        );
    }

    #[test]
    fn undefined_names_are_errors_and_newlines_are_kept() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        assert!(env.render_str("{{ missing }}", ()).is_err());
        assert_eq!(env.render_str("a\n", ()).unwrap(), "a\n");
    }

    /// In every build, release included (`cargo test --release`): help names the value and
    /// suggests the near name from this detail.
    #[test]
    fn an_undefined_value_s_error_names_the_expression_that_made_it() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        let error = env
            .render_str(
                "{% if extra.teem %}x{% endif %}",
                minijinja::context! { extra => minijinja::context! { team => "a" } },
            )
            .unwrap_err();
        assert_eq!(error.detail(), Some("`extra.teem` is undefined"));
    }

    #[test]
    fn indent_works_like_minijinjas_and_refuses_huge_widths() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        let render = |t: &str| env.render_str(t, minijinja::context! { v => "a\n\nb\n" });
        assert_eq!(render("{{ v | indent(2) }}").unwrap(), "a\n\n  b");
        assert_eq!(render("{{ v | indent(2, true) }}").unwrap(), "  a\n\n  b");
        assert_eq!(
            render("{{ v | indent(2, true, true) }}").unwrap(),
            "  a\n  \n  b"
        );
        assert_eq!(
            render("{{ v | indent(width=1, first=true) }}").unwrap(),
            " a\n\n b"
        );
        assert!(render("{{ v | indent(999999999999) }}").is_err());
        let crlf = |t: &str| env.render_str(t, minijinja::context! { v => "x\r\ny\r\n" });
        assert_eq!(crlf("{{ v | indent(2) }}").unwrap(), "x\r\n  y");
    }

    /// minijinja's `if` without `else` gives a silent undefined, which writes nothing; any
    /// other undefined value given to `indent` or `pretty_json` is an error naming it, as
    /// minijinja's filters that take text make it.
    /// A slice with a negative step takes what Python's (and Jinja's) takes, from text, a
    /// list, a tuple and an iterable alike: a sequence of no items gave index 0, which
    /// panicked, and a `stop` of 0 was taken as none.
    #[test]
    fn a_slice_with_a_negative_step_takes_what_python_takes() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        let python = |items: &str, slice: &str| -> String {
            let chars: Vec<char> = items.chars().collect();
            let len = chars.len() as i64;
            let parts: Vec<Option<i64>> = slice
                .split(':')
                .map(|part| part.trim().parse().ok())
                .collect();
            let step = parts[2].unwrap_or(1);
            let bound = |index: i64| {
                if index < 0 {
                    (len + index).max(-1)
                } else {
                    index.min(len - 1)
                }
            };
            let (mut at, stop) = (parts[0].map_or(len - 1, bound), parts[1].map_or(-1, bound));
            let mut out = String::new();
            while at > stop {
                out.push(chars[at as usize]);
                at += step;
            }
            out
        };
        for items in ["", "a", "abc", "abcdef"] {
            for slice in [
                "::-1",
                "::-2",
                ":0:-1",
                "1::-1",
                "-1::-1",
                ":-5:-1",
                "5:1:-2",
                "0:2:-1",
                "-10::-1",
                "2:-10:-1",
                "::-9223372036854775807",
            ] {
                let expected = python(items, slice);
                let text = env
                    .render_str(&format!("{{{{ '{items}'[{slice}] }}}}"), ())
                    .unwrap();
                assert_eq!(text, expected, "'{items}'[{slice}]");
                let list = env
                    .render_str(
                        &format!("{{{{ '{items}' | list | reverse | reverse | list | join('') }}}}|{{{{ ('{items}' | list)[{slice}] | join('') }}}}"),
                        (),
                    )
                    .unwrap();
                assert_eq!(
                    list,
                    format!("{items}|{expected}"),
                    "list '{items}'[{slice}]"
                );
                let iterable = env
                    .render_str(
                        &format!("{{{{ ('{items}' | list | reverse)[{slice}] | join('') }}}}"),
                        (),
                    )
                    .unwrap();
                let reversed: String = items.chars().rev().collect();
                assert_eq!(
                    iterable,
                    python(&reversed, slice),
                    "iterable '{items}'[{slice}]"
                );
            }
        }
        assert!(
            env.render_str("{{ 'abc'[::-9223372036854775808] }}", ())
                .is_ok()
        );
    }

    #[test]
    fn only_the_silent_undefined_of_an_if_without_else_is_empty_text() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        let render = |t: &str| {
            env.render_str(
                t,
                minijinja::context! { t => minijinja::context! { description => "d" } },
            )
        };
        assert_eq!(
            render("{% for x in ['a', 'b'] %}{{ x }}{{ ', ' if not loop.last }}{% endfor %}")
                .unwrap(),
            "a, b"
        );
        assert_eq!(render("{% set u = 'x' if false %}[{{ u }}]").unwrap(), "[]");
        assert_eq!(render("[{{ ('x' if false) | indent(2) }}]").unwrap(), "[]");
        for filter in ["indent(2)", "pretty_json"] {
            let error = render(&format!("{{{{ t.descripton | {filter} }}}}")).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::UndefinedError, "{filter}");
            assert_eq!(
                error.detail(),
                Some("`t.descripton` is undefined"),
                "{filter}"
            );
        }
        assert_eq!(render("{{ none }}").unwrap(), "null");
    }

    #[test]
    fn fuel_stops_runaway_loops() {
        let env = new_environment(Some(1_000), crate::model::limits::DEFAULT_RENDER_BYTES);
        let error = env
            .render_str("{% for i in range(100000) %}{{ i }}{% endfor %}", ())
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::OutOfFuel);
    }
}
