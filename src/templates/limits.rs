//! What templates may cost. minijinja's fuel counts instructions, not bytes: one `join` or
//! `indent` can allocate gigabytes in one instruction. The filters that build text in
//! proportion to an argument are replaced by versions that check the size first, and every
//! value a template writes (`{{ … }}`, also inside `{% set %}…{% endset %}`) counts against the
//! render's byte limit.

use std::fmt::{self, Write};

use minijinja::value::{Kwargs, Rest, StringInput, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind, State, Value};

/// The most items (`batch`, `slice`) a filter may make up, like minijinja's own `range`.
pub const MAX_ITEMS: usize = 100_000;

/// The error a size check raises, found again in the error's sources so the diagnostic can
/// say which limit was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    pub limit: u64,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "over the limit of {} bytes", self.limit)
    }
}

impl std::error::Error for TooLarge {}

/// The size check that failed somewhere in an error's chain, if one did.
pub fn too_large(error: &minijinja::Error) -> Option<&TooLarge> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(found) = current.downcast_ref::<TooLarge>() {
            return Some(found);
        }
        source = current.source();
    }
    None
}

fn over(limit: u64, what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("{what} would be over the limit of {limit} bytes"),
    )
    .with_source(TooLarge { limit })
}

pub fn check(size: usize, limit: u64, what: &str) -> Result<(), Error> {
    if size as u64 > limit {
        Err(over(limit, what))
    } else {
        Ok(())
    }
}

/// Counts what is written, and refuses to go past a limit.
struct Counter<'a> {
    inner: Option<&'a mut dyn Write>,
    written: u64,
    limit: u64,
}

impl Write for Counter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.written += s.len() as u64;
        if self.written > self.limit {
            return Err(fmt::Error);
        }
        match &mut self.inner {
            Some(inner) => inner.write_str(s),
            None => Ok(()),
        }
    }
}

/// The length of a value's text, counted without building it; `None` past `limit`.
fn display_len(value: &Value, limit: u64) -> Option<u64> {
    if let Some(s) = value.as_str() {
        return Some(s.len() as u64).filter(|len| *len <= limit);
    }
    let mut counter = Counter {
        inner: None,
        written: 0,
        limit,
    };
    write!(counter, "{value}").ok().map(|()| counter.written)
}

/// What `{{ value }}` writes: a string as it is, anything else as compact JSON, as a
/// JavaScript template would (`JSON.stringify`), rather than Python's spelling.
fn write_value(out: &mut dyn Write, value: &Value) -> fmt::Result {
    if let Some(text) = value.as_str() {
        return out.write_str(text);
    }
    let mut json = JsonOut(out);
    match serde_json::to_writer(&mut json, value) {
        Ok(()) => Ok(()),
        // Not serializable (a function, a macro): its own text.
        Err(_) if json_failed_before_writing(value) => write!(out, "{value}"),
        Err(_) => Err(fmt::Error),
    }
}

/// Whether a value cannot be JSON at all (so nothing was written before the error).
fn json_failed_before_writing(value: &Value) -> bool {
    serde_json::to_value(value).is_err()
}

/// JSON text written into a `fmt::Write` (serde_json writes whole UTF-8 pieces).
struct JsonOut<'a>(&'a mut dyn Write);

impl std::io::Write for JsonOut<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = std::str::from_utf8(buf).map_err(std::io::Error::other)?;
        self.0.write_str(text).map_err(std::io::Error::other)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes written by `{{ … }}` so far in one render, kept in the render's state.
struct Written(u64);

/// Installs the size checks on an environment.
pub fn install(env: &mut Environment<'static>, limit: u64) {
    // Nothing is escaped (see `new_environment`); strings are written as they are, any other
    // value as JSON (`true`, `null`, `{"enabled":false}`), counting as it goes.
    env.set_formatter(move |out, state, value| {
        let before = state.get_or_insert_extension(Written(0)).0;
        let mut counter = Counter {
            inner: Some(out),
            written: before,
            limit,
        };
        let result = write_value(&mut counter, value);
        let written = counter.written;
        state.get_or_insert_extension(Written(0)).0 = written;
        result.map_err(|_| over(limit, "the text this template writes"))
    });
    env.add_filter(
        "join",
        move |state: &mut State,
              value: &Value,
              joiner: Option<StringInput<'_>>,
              attribute: Option<&str>,
              kwargs: Kwargs| {
            let separator = match &joiner {
                Some(joiner) => joiner.as_str().len() as u64,
                None => kwargs
                    .get::<Option<&str>>("d")?
                    .map_or(0, |d| d.len() as u64),
            };
            // Items are taken once (an iterable may be good for one pass only) and measured before
            // anything is built. With an attribute, each item's whole text stands in for it: an
            // upper bound.
            let items = match value.as_str() {
                Some(_) => value.clone(),
                None => match value.try_iter() {
                    Ok(items) => Value::from(items.collect::<Vec<_>>()),
                    Err(_) => value.clone(),
                },
            };
            let mut total: u64 = 0;
            if let Ok(iter) = items.try_iter() {
                for (index, item) in iter.enumerate() {
                    if index > 0 {
                        total = total.saturating_add(separator);
                    }
                    let len = display_len(&item, limit).unwrap_or(u64::MAX);
                    total = total.saturating_add(len);
                    if total > limit {
                        return Err(over(limit, "the joined text"));
                    }
                }
            }
            minijinja::filters::join(state, &items, joiner, attribute, kwargs)
        },
    );
    env.add_filter(
        "replace",
        move |state: &mut State,
              value: StringInput<'_>,
              from: StringInput<'_>,
              to: StringInput<'_>| {
            let (text, from_s, to_s) = (value.as_str(), from.as_str(), to.as_str());
            if to_s.len() > from_s.len() {
                let matches = text.matches(from_s).count() as u64;
                let grown = matches.saturating_mul((to_s.len() - from_s.len()) as u64);
                if (text.len() as u64).saturating_add(grown) > limit {
                    return Err(over(limit, "the replaced text"));
                }
            }
            minijinja::filters::replace(state, value, from, to)
        },
    );
    env.add_filter(
        "format",
        move |state: &mut State, format: &Value, args: Rest<ValueOrKwargs>| {
            // A width or precision is a number in the format string: `%99999999s`.
            if let Some(spec) = format.as_str() {
                let widest = spec
                    .split(|c: char| !c.is_ascii_digit())
                    .filter_map(|digits| {
                        digits
                            .parse::<u64>()
                            .ok()
                            .or((!digits.is_empty()).then_some(u64::MAX))
                    })
                    .max()
                    .unwrap_or(0);
                if widest > limit {
                    return Err(over(limit, "the formatted text"));
                }
            }
            let value = minijinja::filters::format(state, format, args)?;
            check(
                display_len(&value, limit).map_or(usize::MAX, |n| n as usize),
                limit,
                "the formatted text",
            )?;
            Ok(value)
        },
    );
    env.add_filter(
        "batch",
        |state: &State, value: Value, count: usize, fill: Option<Value>| {
            if count > MAX_ITEMS {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("batch size {count} is above the limit of {MAX_ITEMS}"),
                ));
            }
            minijinja::filters::batch(state, value, count, fill)
        },
    );
    env.add_filter(
        "slice",
        |state: &State, value: Value, count: usize, fill: Option<Value>| {
            if count > MAX_ITEMS {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("slice count {count} is above the limit of {MAX_ITEMS}"),
                ));
            }
            minijinja::filters::slice(state, value, count, fill)
        },
    );
    env.add_filter(
        "tojson",
        move |value: &Value, indent: Option<Value>, kwargs: Kwargs| {
            let width = match &indent {
                Some(indent) => Some(indent.clone()),
                None => kwargs.get::<Option<Value>>("indent")?,
            };
            if let Some(width) = width.as_ref().and_then(Value::as_usize)
                && width > super::environment::MAX_INDENT
            {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "indent width {width} is above the limit of {}",
                        super::environment::MAX_INDENT
                    ),
                ));
            }
            let json = minijinja::filters::tojson(value, indent, kwargs)?;
            check(
                display_len(&json, limit).map_or(usize::MAX, |n| n as usize),
                limit,
                "the JSON text",
            )?;
            Ok(json)
        },
    );
}

#[cfg(test)]
mod tests {
    use minijinja::context;

    use super::*;
    use crate::templates::environment::new_environment;

    /// What a prompt for any ecosystem expects: JSON for every value that is not a string,
    /// never Python's `True`, `None` or `{'a': 1}`.
    #[test]
    fn values_print_as_json_and_strings_as_themselves() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        let render = |t: &str| {
            env.render_str(
                t,
                context! { browser => context! { enabled => false, viewport => "900x600" } },
            )
            .unwrap()
        };
        assert_eq!(
            render("{{ browser }}"),
            r#"{"enabled":false,"viewport":"900x600"}"#
        );
        assert_eq!(
            render("{{ true }} {{ none }} {{ 3 }} {{ 1.5 }}"),
            "true null 3 1.5"
        );
        assert_eq!(
            render("{{ ['a', 1] }} {{ 'plain \"text\"' }}"),
            r#"["a",1] plain "text""#
        );
    }

    #[test]
    fn checked_filters_give_the_same_results_as_minijinjas() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        let once = Value::make_one_shot_iterator([1, 2].into_iter().map(Value::from));
        let render = |t: &str| {
            env.render_str(
                t,
                context! { users => vec![context! { name => "a" }, context! { name => "b" }], once => once.clone() },
            )
            .unwrap()
        };
        assert_eq!(render("{{ [1, 2, 3]|join(', ') }}"), "1, 2, 3");
        assert_eq!(render("{{ 'abc'|join('-') }}"), "a-b-c");
        assert_eq!(render("{{ [1, 2]|join(d='+') }}"), "1+2");
        assert_eq!(render("{{ users|join(', ', attribute='name') }}"), "a, b");
        assert_eq!(render("{{ {'a': 1, 'b': 2}|join(',') }}"), "a,b");
        assert_eq!(render("{{ once|join(',') }}"), "1,2");
        assert_eq!(render("{{ 'aXbX'|replace('X', '--') }}"), "a--b--");
        assert_eq!(render("{{ '%s=%d'|format('x', 3) }}"), "x=3");
        // Lists print as JSON (see `write_value`).
        assert_eq!(render("{{ [1, 2, 3]|batch(2, 0)|list }}"), "[[1,2],[3,0]]");
        assert_eq!(render("{{ [1, 2, 3]|slice(2)|list }}"), "[[1,2],[3]]");
        assert_eq!(render("{{ [1]|tojson }}"), "[1]");
    }

    #[test]
    fn text_written_counts_across_expressions() {
        let env = new_environment(None, 10);
        assert_eq!(
            env.render_str("{{ 'abcde' }}{{ 'abcde' }}", ()).unwrap(),
            "abcdeabcde"
        );
        let error = env
            .render_str("{{ 'abcde' }}{{ 'abcde' }}{{ 'x' }}", ())
            .unwrap_err();
        assert_eq!(too_large(&error), Some(&TooLarge { limit: 10 }));
    }
}
