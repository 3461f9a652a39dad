//! The arguments a filter or method of promptc's takes, by position or by name.

use minijinja::value::{ArgType, Kwargs, from_args};
use minijinja::{Error, ErrorKind, Value};

/// The arguments of a filter or method, each given by position or by its Python name, as
/// Jinja2 takes them (`truncate(20, true)` or `truncate(length=20, killwords=true)`).
pub struct Arguments<'a> {
    filter: &'a str,
    names: &'static [&'static str],
    positional: &'a [Value],
    named: Kwargs,
}

impl<'a> Arguments<'a> {
    pub fn new(
        filter: &'a str,
        names: &'static [&'static str],
        args: &'a [Value],
    ) -> Result<Self, Error> {
        let (positional, named) = from_args::<(&[Value], Kwargs)>(args)?;
        if positional.len() > names.len() {
            return Err(Error::new(
                ErrorKind::TooManyArguments,
                format!(
                    "`{filter}` takes at most {} arguments ({}), {} given",
                    names.len(),
                    names.join(", "),
                    positional.len()
                ),
            ));
        }
        Ok(Self {
            filter,
            names,
            positional,
            named,
        })
    }

    /// The argument at `index`, by position or by name; `None` when not given.
    pub fn get<T>(&'a self, index: usize) -> Result<Option<T>, Error>
    where
        T: ArgType<'a, Output = T>,
    {
        match self.by_position(index)? {
            (_, Some(value)) => T::from_value(Some(value)).map(Some),
            (name, None) => self.named.get::<Option<T>>(name),
        }
    }

    /// The argument at `index` as given, `none` too (which [`Arguments::get`] takes for an
    /// argument not given); `None` when not given.
    pub fn given(&self, index: usize) -> Result<Option<Value>, Error> {
        match self.by_position(index)? {
            (_, Some(value)) => Ok(Some(value.clone())),
            (name, None) if self.named.has(name) => self.named.get::<Value>(name).map(Some),
            (_, None) => Ok(None),
        }
    }

    /// The name of the argument at `index`, and its value when given by position; an
    /// argument given both by position and by name is refused.
    fn by_position(&self, index: usize) -> Result<(&'static str, Option<&'a Value>), Error> {
        let name = self.names.get(index).copied().unwrap_or_default();
        let positional = self.positional.get(index);
        if positional.is_some() && self.named.has(name) {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("`{}` was given `{name}` twice", self.filter),
            ));
        }
        Ok((name, positional))
    }

    /// The argument at `index`, which must be given.
    pub fn required<T>(&'a self, index: usize) -> Result<T, Error>
    where
        T: ArgType<'a, Output = T>,
    {
        self.get(index)?.ok_or_else(|| {
            let name = self.names.get(index).copied().unwrap_or_default();
            Error::new(
                ErrorKind::MissingArgument,
                format!("`{}` needs its argument `{name}`", self.filter),
            )
        })
    }

    /// Refuses a named argument the filter does not take.
    pub fn done(&self) -> Result<(), Error> {
        self.named.assert_all_used()
    }
}
