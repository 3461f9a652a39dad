//! What templates may cost. minijinja's fuel counts instructions, not bytes: one `join` or
//! `indent` can allocate gigabytes in one instruction. The filters that build text in
//! proportion to an argument are replaced by versions that check the size first, and every
//! value a template writes (`{{ … }}`, also inside `{% set %}…{% endset %}`) counts against the
//! render's byte limit.

use std::fmt::{self, Write};

use minijinja::value::{Kwargs, Rest, StringInput, ValueKind, ValueOrKwargs};
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

/// How deeply a value may nest to be written out (`{{ … }}`, `tojson`, `pretty_json`):
/// writing one is recursive. A namespace refuses a value nested deeper than this (the patch
/// to minijinja in `vendor/minijinja`), and data files cannot nest this deep either (their
/// parsers stop at 128), but a template can still wrap such a value in a few more lists.
pub const MAX_NESTING: usize = 128;

/// The most list and map items [`nesting_within_limit`] looks at. A value can hold the same
/// list many times, and each list is measured once, but a value of tens of millions of
/// distinct items is refused rather than walked: no prompt writes one out.
const MAX_WALKED: usize = 10_000_000;

/// Whether `value` nests no deeper than [`MAX_NESTING`], found without recursion (which is
/// the point). Each list and map is measured once, by its address: `[x, x]` doubled forty
/// times is forty lists, but a trillion paths from the top, which walking them as a tree
/// took hours to count.
pub fn nesting_within_limit(value: &Value) -> bool {
    walk_within_limit(value, |_| true)
}

/// [`nesting_within_limit`], calling `leaf` on each item below `value` that is not a list or
/// map (once per list or map that holds it); `leaf` returning false ends the walk, false.
fn walk_within_limit(value: &Value, mut leaf: impl FnMut(&Value) -> bool) -> bool {
    if !is_container(value) {
        return true;
    }
    // The lists and maps being measured, outermost first: each with its items and how far
    // through them the walk is, and the height found so far (1: no list or map inside).
    struct Open {
        address: Option<usize>,
        items: Vec<Value>,
        next: usize,
        height: usize,
    }
    let mut heights: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut walked = 0usize;
    let mut open = vec![Open {
        address: address(value),
        items: items(value),
        next: 0,
        height: 1,
    }];
    while let Some(top) = open.last_mut() {
        walked += 1;
        if walked > MAX_WALKED {
            return false;
        }
        let Some(item) = top.items.get(top.next).cloned() else {
            let done = open.pop().map_or(1, |done| {
                if let Some(address) = done.address {
                    heights.insert(address, done.height);
                }
                done.height
            });
            if let Some(parent) = open.last_mut() {
                parent.height = parent.height.max(done + 1);
                if parent.height > MAX_NESTING {
                    return false;
                }
            }
            continue;
        };
        top.next += 1;
        if !is_container(&item) {
            if !leaf(&item) {
                return false;
            }
            continue;
        }
        let known = address(&item).and_then(|address| heights.get(&address).copied());
        match known {
            Some(height) => {
                top.height = top.height.max(height + 1);
                if top.height > MAX_NESTING {
                    return false;
                }
            }
            None if open.len() >= MAX_NESTING => return false,
            None => open.push(Open {
                address: address(&item),
                items: items(&item),
                next: 0,
                height: 1,
            }),
        }
    }
    true
}

/// A value that holds others. A lazy sequence (what `reverse` and other filters give) counts:
/// it is written out by walking it like a list, and it can hold one nested past the limit.
fn is_container(value: &Value) -> bool {
    matches!(
        value.kind(),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
    )
}

/// A list's or map's items (a map's keys and values: both are written).
fn items(value: &Value) -> Vec<Value> {
    let Ok(iter) = value.try_iter() else {
        return Vec::new();
    };
    if value.kind() == ValueKind::Map {
        iter.flat_map(|key| {
            let item = value.get_item(&key).unwrap_or_default();
            [key, item]
        })
        .collect()
    } else {
        iter.collect()
    }
}

/// Where a list or map built by a template lies in memory, which stays put while the value
/// is held: its identity. Other objects (ranges, namespaces, promptc's own) have none here.
fn address(value: &Value) -> Option<usize> {
    if let Some(list) = value.downcast_object_ref::<Vec<Value>>() {
        return Some(std::ptr::from_ref(list) as usize);
    }
    value
        .downcast_object_ref::<indexmap::IndexMap<Value, Value>>()
        .map(|map| std::ptr::from_ref(map) as usize)
}

/// Whether `value` nests within [`MAX_NESTING`] (as [`nesting_within_limit`]), and the first
/// number in it that text cannot show (infinity, not a number), found in the same walk: JSON
/// has none, and `{{ 1e308 * 10 }}` was written as `null`, as was a list holding it.
fn writable(value: &Value) -> (bool, Option<f64>) {
    let not_finite = |value: &Value| {
        (value.kind() == ValueKind::Number)
            .then(|| f64::try_from(value.clone()).ok())
            .flatten()
            .filter(|number| !number.is_finite())
    };
    let mut found = not_finite(value);
    let within = walk_within_limit(value, |item| {
        found = found.or_else(|| not_finite(item));
        found.is_none()
    });
    (within, found)
}

/// The error for a value that is or holds a number text cannot show.
fn not_finite(number: f64) -> Error {
    let shown = if number.is_nan() {
        "NaN (not a number)".to_string()
    } else {
        format!("{number} (past the largest number a float holds)")
    };
    Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "the value written is or holds {shown}, which a prompt cannot show: \
             check the arithmetic that made it"
        ),
    )
}

/// The error for a value nested deeper than [`MAX_NESTING`].
pub fn too_deep(what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("{what} nests lists or maps more than {MAX_NESTING} deep"),
    )
}

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

/// The length of `value` as JSON indented by `width` (compact when 0), counted without
/// building it; with `escaped`, the HTML characters `tojson` escapes count at the six bytes
/// of their escapes. Past `limit`, `limit + 1`; a value that is not JSON at all counts 0, so
/// that the filter itself says why.
pub fn json_len(value: &Value, width: usize, escaped: bool, limit: u64) -> usize {
    let mut counter = JsonCounter {
        written: 0,
        limit: usize::try_from(limit).unwrap_or(usize::MAX),
        escaped,
    };
    let indent = " ".repeat(width);
    let written = if width == 0 {
        serde_json::to_writer(&mut counter, value)
    } else {
        let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut counter, formatter);
        serde::Serialize::serialize(value, &mut serializer)
    };
    match written {
        Ok(()) => counter.written,
        Err(_) if counter.written > counter.limit => counter.written,
        Err(_) => 0,
    }
}

/// Counts JSON bytes as `tojson` would write them, and stops past a limit.
struct JsonCounter {
    written: usize,
    limit: usize,
    escaped: bool,
}

impl std::io::Write for JsonCounter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let escaped = if self.escaped {
            bytes
                .iter()
                .filter(|b| matches!(b, b'<' | b'>' | b'&' | b'\''))
                .count()
        } else {
            0
        };
        self.written += bytes.len() + 5 * escaped;
        if self.written > self.limit {
            return Err(std::io::Error::other("over the limit"));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The length of a value's text, counted without building it; `None` past `limit`.
fn display_len(value: &Value, limit: u64) -> Option<u64> {
    if let Some(s) = value.as_str() {
        return Some(s.len() as u64).filter(|len| *len <= limit);
    }
    // Writing it out is recursive: one nested too deep is not measured, and not written.
    if !nesting_within_limit(value) {
        return None;
    }
    let mut counter = Counter {
        inner: None,
        written: 0,
        limit,
    };
    write!(counter, "{value}").ok().map(|()| counter.written)
}

/// `value`'s text, as minijinja makes a string argument of it, refused past `limit` bytes
/// before it is built.
pub fn bounded_string(value: &Value, limit: u64) -> Result<String, Error> {
    text_fits(value, limit, "the text of the value")?;
    Ok(value.to_string())
}

/// The text of a value a filter is given, as Jinja2 makes a string of any value (a number's
/// digits), measured before it is built; an undefined value is refused, as minijinja refuses
/// one for its own string filters (`tool.descripton | indent(2)` names the misspelt path).
pub fn filtered_text(value: &Value, limit: u64) -> Result<String, Error> {
    minijinja::UndefinedBehavior::Strict.assert_value_not_undefined(value)?;
    match value.as_str() {
        Some(text) => Ok(text.to_owned()),
        None => bounded_string(value, limit),
    }
}

/// Whether `value`'s text (`what`, to the error) nests and measures within the limits.
fn text_fits(value: &Value, limit: u64, what: &str) -> Result<(), Error> {
    if !nesting_within_limit(value) {
        return Err(too_deep("the value"));
    }
    check(
        display_len(value, limit).map_or(usize::MAX, |n| n as usize),
        limit,
        what,
    )
}

/// What `{{ value }}` writes: a string as it is, anything else as compact JSON, as a
/// JavaScript template would (`JSON.stringify`), rather than Python's spelling.
/// `room` is how many bytes may still be written.
fn write_value(out: &mut dyn Write, value: &Value, room: u64) -> fmt::Result {
    if let Some(text) = value.as_str() {
        return out.write_str(text);
    }
    // An object that is no list or map (a `model_version`) writes its own text: as JSON it
    // was that text in quotes.
    if value.kind() == minijinja::value::ValueKind::Plain {
        return write!(out, "{value}");
    }
    // Built aside (within the room left), so that a value found not to be JSON halfway (a
    // map with a list for a key) leaves nothing of its JSON behind its own text.
    let mut json_text = String::new();
    let mut bounded = Counter {
        inner: Some(&mut json_text),
        written: 0,
        limit: room,
    };
    let mut json = JsonOut { out: &mut bounded };
    match serde_json::to_writer(&mut json, value) {
        Ok(()) => out.write_str(&json_text),
        // Not serializable (a function, a macro): its own text. Told from a write over the
        // limit by the error's kind, not by serializing the value again whole: a value that
        // went over the limit can be a tree of a trillion nodes.
        Err(error) if !error.is_io() => write!(out, "{value}"),
        Err(_) => Err(fmt::Error),
    }
}

/// JSON text written into a `fmt::Write` (serde_json writes whole UTF-8 pieces).
struct JsonOut<'a> {
    out: &'a mut dyn Write,
}

impl std::io::Write for JsonOut<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = std::str::from_utf8(buf).map_err(std::io::Error::other)?;
        self.out.write_str(text).map_err(std::io::Error::other)?;
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
    // The text minijinja builds itself, from a value for a string argument (`lower`, `trim`,
    // `startingwith`…) or with `~`, and `+` or `*` on strings, is measured first (a patch to
    // minijinja, see vendor/minijinja/PROMPTC.md).
    env.set_text_limit(usize::try_from(limit).unwrap_or(usize::MAX), |limit| {
        over(limit as u64, "the text this template builds")
    });
    // Nothing is escaped (see `new_environment`); strings are written as they are, any other
    // value as JSON (`true`, `null`, `{"enabled":false}`), counting as it goes.
    env.set_formatter(move |out, state, value| {
        // Under strict undefined, only the silent undefined of an `if` without `else`
        // (`{{ ", " if not loop.last }}`) is written: as minijinja writes it, as nothing.
        if value.is_undefined() {
            return Ok(());
        }
        if value.as_str().is_none() {
            match writable(value) {
                (_, Some(number)) => return Err(not_finite(number)),
                (false, None) => return Err(too_deep("the value written")),
                (true, None) => {}
            }
        }
        let before = state.get_or_insert_extension(Written(0)).0;
        let mut counter = Counter {
            inner: Some(out),
            written: before,
            limit,
        };
        let result = write_value(&mut counter, value, limit.saturating_sub(before));
        let written = counter.written;
        state.get_or_insert_extension(Written(0)).0 = written;
        result.map_err(|_| over(limit, "the text this template writes"))
    });
    // The template's own text written into a capture (a `set` block, a `filter` block, a
    // macro or `caller` body being called) counts with what its `{{ … }}` write: the text
    // written to the output is counted by the writer, but a capture's string was measured by
    // nothing, and a loop repeating a few kilobytes in a macro took gigabytes.
    env.set_captured_text_counter(move |state, len| {
        let written = state.get_or_insert_extension(Written(0));
        written.0 = written.0.saturating_add(len as u64);
        if written.0 > limit {
            return Err(over(limit, "the text this template writes"));
        }
        Ok(())
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
        // Text is never escaped in promptc (see `environment`), so minijinja's replace, which
        // needs the state only to ask that, is plain `str::replace`.
        move |value: StringInput<'_>,
              from: StringInput<'_>,
              to: StringInput<'_>,
              count: Option<i64>,
              kwargs: Kwargs| {
            // Jinja2's fourth argument: replace only the first `count` (all when negative).
            let count = match count {
                Some(count) => Some(count),
                None => kwargs.get::<Option<i64>>("count")?,
            };
            kwargs.assert_all_used()?;
            let count = count.and_then(|count| usize::try_from(count).ok());
            let (text, from_s, to_s) = (value.as_str(), from.as_str(), to.as_str());
            if to_s.len() > from_s.len() {
                let matches = text.matches(from_s).count();
                let made = count.map_or(matches, |count| count.min(matches)) as u64;
                let grown = made.saturating_mul((to_s.len() - from_s.len()) as u64);
                if (text.len() as u64).saturating_add(grown) > limit {
                    return Err(over(limit, "the replaced text"));
                }
            }
            Ok(Value::from(match count {
                Some(count) => text.replacen(from_s, to_s, count),
                None => text.replace(from_s, to_s),
            }))
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
            // Each argument is written whole into the text: one of a trillion nodes would be
            // built before the text is measured.
            let mut arguments: u64 = 0;
            for argument in args.iter() {
                // Keyword arguments are no text of the result.
                let argument: &Value = argument;
                if argument.is_kwargs() {
                    continue;
                }
                arguments =
                    arguments.saturating_add(display_len(argument, limit).unwrap_or(u64::MAX));
            }
            check(
                usize::try_from(arguments).unwrap_or(usize::MAX),
                limit,
                "the formatted text",
            )?;
            let value = minijinja::filters::format(state, format, args)?;
            check(
                display_len(&value, limit).map_or(usize::MAX, |n| n as usize),
                limit,
                "the formatted text",
            )?;
            Ok(value)
        },
    );
    env.add_filter("string", move |state: &State, value: &Value| {
        text_fits(value, limit, "the string")?;
        minijinja::filters::string(state, value)
    });
    // `debug()` writes its arguments' debug form, or without any the whole context's, with
    // no size check of its own either.
    env.add_function("debug", move |state: &State, args: Rest<Value>| {
        let mut counter = Counter {
            inner: None,
            written: 0,
            limit,
        };
        if args.is_empty() {
            // The names the template sees, in name order, each with its value: minijinja's
            // own form prints the environment's templates in the order of a hash map, which
            // differs from run to run.
            let mut names: Vec<_> = state.known_variables().into_iter().collect();
            names.sort();
            let mut text = String::new();
            let mut counter = Counter {
                inner: Some(&mut text),
                written: 0,
                limit,
            };
            for name in names {
                let Some(value) = state.lookup(&name) else {
                    continue;
                };
                if !nesting_within_limit(&value) {
                    return Err(too_deep("the context"));
                }
                if writeln!(counter, "{name}: {value:#?}").is_err() {
                    return Err(over(limit, "the printed context"));
                }
            }
            return Ok(text);
        } else {
            for arg in args.iter() {
                if !nesting_within_limit(arg) {
                    return Err(too_deep("the value"));
                }
                if write!(counter, "{arg:#?}").is_err() {
                    return Err(over(limit, "the printed value"));
                }
            }
        }
        Ok(minijinja::functions::debug(state, args))
    });
    // `pprint` writes a value's debug form, which has no size check of its own.
    env.add_filter("pprint", move |value: &Value| {
        if !nesting_within_limit(value) {
            return Err(too_deep("the value"));
        }
        let mut counter = Counter {
            inner: None,
            written: 0,
            limit,
        };
        if write!(counter, "{value:#?}").is_err() {
            return Err(over(limit, "the printed value"));
        }
        Ok(minijinja::filters::pprint(value))
    });
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
            if !nesting_within_limit(value) {
                return Err(too_deep("the value"));
            }
            // Measured before it is built: with an indent, the text grows with the square of
            // the nesting, gigabytes from a value of a few kilobytes.
            let width = width.as_ref().and_then(Value::as_usize).unwrap_or(0);
            check(json_len(value, width, true, limit), limit, "the JSON text")?;
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

    /// A list nested in itself `depth` times, then `tail`.
    // A lazy sequence (`reverse`) around a deep list was taken for a plain value, and writing
    // it out overflowed the stack.
    #[test]
    fn a_lazy_sequence_is_looked_into() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        let error = env
            .render_str("{{ [ns.x]|reverse }}", nested(300))
            .unwrap_err();
        assert!(error.to_string().contains("more than 128 deep"), "{error}");
        let shallow = env
            .render_str("{{ [[1, 2], [3]]|reverse }}", context! {})
            .unwrap();
        assert_eq!(shallow, "[[3],[1,2]]");
    }

    // `[x, x]` doubled sixty times is sixty lists and 2^60 paths: measured once per list.
    #[test]
    fn a_list_held_many_times_is_measured_once() {
        let mut shared = Value::from(1);
        for _ in 0..60 {
            shared = Value::from(vec![shared.clone(), shared]);
        }
        assert!(nesting_within_limit(&shared));
        let mut deep = shared;
        for _ in 0..MAX_NESTING {
            deep = Value::from(vec![deep.clone(), deep]);
        }
        assert!(!nesting_within_limit(&deep));
        // At the limit exactly, and one past it, through maps too.
        let mut at_limit = Value::from(0);
        for level in 0..MAX_NESTING {
            at_limit = if level % 2 == 0 {
                Value::from(vec![at_limit])
            } else {
                Value::from(std::collections::BTreeMap::from([(
                    "k".to_string(),
                    at_limit,
                )]))
            };
        }
        assert!(nesting_within_limit(&at_limit));
        assert!(!nesting_within_limit(&Value::from(vec![at_limit])));
    }

    /// A context whose `ns.x` is a list nested in itself `depth` times. A namespace refuses
    /// to hold one past the limit, so it comes from outside the template here.
    fn nested(depth: usize) -> Value {
        let mut x = Value::from(Vec::<Value>::new());
        for _ in 0..depth {
            x = Value::from(vec![x]);
        }
        context! { ns => context! { x } }
    }

    // Writing out a list nested in itself 100 000 times overflowed the stack and ended the
    // process; now each way of writing one out refuses it, and a value within the limit is
    // written as before.
    #[test]
    fn a_value_nested_past_the_limit_is_refused_not_written() {
        let env = new_environment(None, crate::model::limits::DEFAULT_RENDER_BYTES);
        for tail in [
            "{{ ns.x }}",
            "{{ ns.x|tojson }}",
            "{{ ns.x|tojson(indent=2) }}",
            "{{ ns.x|pretty_json }}",
            "{{ ns.x|string }}",
        ] {
            let error = env.render_str(tail, nested(1000)).unwrap_err();
            assert!(
                error
                    .to_string()
                    .contains("nests lists or maps more than 128 deep"),
                "{tail}: {error}"
            );
        }
        // 127 lists inside the outermost: 128 deep, written.
        let text = env.render_str("{{ ns.x }}", nested(127)).unwrap();
        assert_eq!(text, format!("{}{}", "[".repeat(128), "]".repeat(128)));
        assert!(env.render_str("{{ ns.x }}", nested(128)).is_err());
    }

    // `tojson(indent=…)` built its whole text before measuring it: a text growing with the
    // square of the nesting, gigabytes from a small value.
    #[test]
    fn indented_json_is_measured_before_it_is_built() {
        let env = new_environment(None, 100_000);
        let error = env
            .render_str("{{ ns.x|tojson(indent=256)|length }}", nested(100))
            .unwrap_err();
        assert!(too_large(&error).is_some(), "{error}");
        // Escaped characters count at the length of their escapes.
        let value = Value::from("<&>'");
        assert_eq!(
            json_len(&value, 0, true, 1000),
            "\"\\u003c\\u0026\\u003e\\u0027\"".len()
        );
        let exact = env
            .render_str("{{ v|tojson }}", context! { v => value })
            .unwrap();
        assert_eq!(exact.len(), json_len(&Value::from("<&>'"), 0, true, 1000));
        // `pretty_json` escapes nothing: `<` counts one byte there.
        assert_eq!(json_len(&Value::from("<<"), 2, false, 1000), 4);
        // A value that is not JSON is not called too large: the filter says what it is.
        let error = env.render_str("{{ {none: 1}|tojson }}", ()).unwrap_err();
        assert!(too_large(&error).is_none(), "{error}");
    }

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
        // Not JSON halfway (a list as a map's key): its own text alone, no JSON before it.
        assert_eq!(render("{{ [1, {[1, 2]: 3}] }}"), "[1, {[1, 2]: 3}]");
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
