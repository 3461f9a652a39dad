//! Jinja2's `joiner` and `cycler`, which minijinja lacks: a registry ported from Jinja2 writes
//! a separator between items with `{% set comma = joiner(", ") %}…{{ comma() }}`, and
//! alternates texts with `cycler(…).next()`. Each behaves as Jinja2's does, so a ported prompt
//! keeps its bytes. Their state lives in the object a render makes, so one render never sees
//! another's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use minijinja::value::{Object, ObjectRepr, Rest, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind, State, Value};

use crate::templates::arguments::Arguments;

pub fn install(env: &mut Environment<'static>) {
    env.add_function("joiner", |args: Rest<ValueOrKwargs>| {
        let args = args.into_values();
        let args = Arguments::new("joiner", &["sep"], &args)?;
        let separator = args.get::<Value>(0)?.unwrap_or_else(|| Value::from(", "));
        args.done()?;
        Ok::<_, Error>(Value::from_object(Joiner {
            separator,
            used: AtomicBool::new(false),
        }))
    });
    env.add_function("cycler", |items: Rest<Value>| {
        if items.is_empty() {
            return Err(Error::new(
                ErrorKind::MissingArgument,
                "cycler() needs at least one item to cycle through",
            ));
        }
        Ok(Value::from_object(Cycler {
            items: items.0,
            at: AtomicUsize::new(0),
        }))
    });
}

/// Jinja2's joiner: called, it gives nothing the first time and its separator every time
/// after.
#[derive(Debug)]
struct Joiner {
    separator: Value,
    used: AtomicBool,
}

impl Object for Joiner {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    /// Written as what it is, not as the Rust type that holds it (which a release may change:
    /// the same inputs would compile to other bytes).
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<joiner>")
    }

    fn call(self: &Arc<Self>, _: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        if !args.is_empty() {
            return Err(Error::new(
                ErrorKind::TooManyArguments,
                "a joiner is called without arguments: `comma()`",
            ));
        }
        Ok(if self.used.swap(true, Ordering::Relaxed) {
            self.separator.clone()
        } else {
            Value::from("")
        })
    }
}

/// Jinja2's cycler: `next()` gives its current item and moves to the next, round to the first
/// after the last; `current` is the item `next()` gives next; `reset()` goes back to the first.
#[derive(Debug)]
struct Cycler {
    items: Vec<Value>,
    at: AtomicUsize,
}

impl Cycler {
    fn current(&self) -> Value {
        let at = self.at.load(Ordering::Relaxed);
        self.items.get(at).cloned().unwrap_or_default()
    }
}

impl Object for Cycler {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    /// As a joiner's (see [`Joiner`]'s `render`).
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<cycler>")
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        (key.as_str() == Some("current")).then(|| self.current())
    }

    fn call_method(
        self: &Arc<Self>,
        _: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        if !matches!(method, "next" | "reset") {
            return Err(Error::from(ErrorKind::UnknownMethod));
        }
        if !args.is_empty() {
            return Err(Error::new(
                ErrorKind::TooManyArguments,
                format!("a cycler's `{method}()` takes no arguments"),
            ));
        }
        if method == "reset" {
            self.at.store(0, Ordering::Relaxed);
            return Ok(Value::from(()));
        }
        let item = self.current();
        let len = self.items.len().max(1);
        let _ = self
            .at
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |at| {
                Some((at + 1) % len)
            });
        Ok(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &str) -> Result<String, Error> {
        let mut env = Environment::new();
        install(&mut env);
        env.render_str(template, ())
    }

    // Each expected text is what Jinja2 3.1 renders for the same template.
    #[test]
    fn a_joiner_writes_its_separator_between_items() {
        let template =
            "{% set comma = joiner() %}{% for x in [1, 2, 3] %}{{ comma() }}{{ x }}{% endfor %}";
        assert_eq!(render(template).unwrap(), "1, 2, 3");
        let template =
            "{% set pipe = joiner(sep=' | ') %}{% for x in 'ab' %}{{ pipe() }}{{ x }}{% endfor %}";
        assert_eq!(render(template).unwrap(), "a | b");
        // Each joiner keeps its own state, as does each render.
        let template = "{% set a = joiner('-') %}{% set b = joiner('+') %}{{ a() }}{{ b() }}{{ a() }}{{ b() }}";
        assert_eq!(render(template).unwrap(), "-+");
        assert!(render("{% set a = joiner() %}{{ a(1) }}").is_err());
        assert!(render("{{ joiner(', ', 'x') }}").is_err());
    }

    #[test]
    fn a_cycler_gives_its_items_in_turn() {
        let template = "{% set row = cycler('odd', 'even') %}{% for x in range(5) %}{{ row.next() }} {% endfor %}";
        assert_eq!(render(template).unwrap(), "odd even odd even odd ");
        let template = "{% set c = cycler(1, 2, 3) %}{{ c.next() }}{{ c.current }}{{ c.next() }}{% set _ = c.reset() %}{{ c.current }}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.next() }}";
        assert_eq!(render(template).unwrap(), "12211231");
        assert!(render("{{ cycler() }}").is_err());
        assert!(render("{% set c = cycler(1) %}{{ c.next(2) }}").is_err());
    }

    // Written (by mistake: a call left out) as what they are, in words no Rust type name or
    // compiler release changes: `{{ range }}` wrote `minijinja::functions::builtins::range`,
    // a closure's Rust path, or a struct's fields.
    #[test]
    fn a_function_joiner_or_cycler_written_is_the_same_text_in_every_release() {
        assert_eq!(
            render("{{ range }} {{ joiner }} {{ cycler(1) }} {{ joiner() }}").unwrap(),
            "<function> <function> <cycler> <joiner>"
        );
        assert_eq!(
            render("{{ [range] }} {{ range | string }} {{ cycler(1) | string }}").unwrap(),
            "[<function>] <function> <cycler>"
        );
        let debugged = render("{{ debug() }}").unwrap();
        assert!(!debugged.contains("::"), "{debugged}");
    }
}
