//! The type of value a placeholder holds, as its declaration writes it (`SHOW = true`,
//! `N = 5`), so that a value set by name on the command line or in a request (always text)
//! is read as that type: a text `false` is true to every `{% if %}`, and `N * 2` of a text
//! `3` is `33`.

use serde_json::Value;

/// Where a placeholder's type comes from, for the message that refuses a value set for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KindFrom {
    /// The variant (by id) that declares it.
    Variant(String),
    /// A standard placeholder's own type.
    Standard,
    /// The context's value of it.
    Context,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaceholderKind {
    Text,
    Boolean,
    Integer,
    Number,
    List,
    Table,
}

impl PlaceholderKind {
    /// The kind of a declared value; a null is read as text.
    pub fn of(value: &Value) -> Self {
        match value {
            Value::Bool(_) => Self::Boolean,
            Value::Number(number) if number.is_f64() => Self::Number,
            Value::Number(_) => Self::Integer,
            Value::Array(_) => Self::List,
            Value::Object(_) => Self::Table,
            Value::String(_) | Value::Null => Self::Text,
        }
    }

    /// `text` read as a value of this kind, or why it is none: a list or table is written as
    /// JSON (which TOML's inline arrays of strings and numbers also are), each object giving
    /// a key once, and JSON that does not read says where it stops (`None` for a reading of
    /// another kind).
    pub fn read(self, text: &str) -> Result<Value, Option<String>> {
        let trimmed = text.trim();
        let value = match self {
            Self::Text => Some(Value::from(text)),
            Self::Boolean => match trimmed {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            Self::Integer => trimmed.parse::<i64>().ok().map(Value::from),
            Self::Number => serde_json::from_str::<serde_json::Number>(trimmed)
                .ok()
                .map(Value::Number),
            Self::List | Self::Table => {
                let value = crate::unique_json::from_str(trimmed)
                    .map_err(|error| Some(format!("as JSON, {error}")))?;
                let fits = if self == Self::List {
                    value.is_array()
                } else {
                    value.is_object()
                };
                fits.then_some(value)
            }
        };
        value.ok_or(None)
    }

    /// What a value of this kind is, for a message.
    pub fn what(self) -> &'static str {
        match self {
            Self::Text => "a text",
            Self::Boolean => "`true` or `false`",
            Self::Integer => "a whole number",
            Self::Number => "a number",
            Self::List => "a list",
            Self::Table => "a table",
        }
    }

    /// How to write a value of this kind, for a help.
    pub fn example(self) -> &'static str {
        match self {
            Self::Text => "any text",
            Self::Boolean => "`true` or `false`",
            Self::Integer => "a whole number, such as `3`",
            Self::Number => "a number, such as `0.5`",
            Self::List => "a list written as JSON, such as `[\"a\", \"b\"]`",
            Self::Table => "a table written as JSON, such as `{\"key\": \"value\"}`",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_set_text_is_read_as_the_declared_kind() {
        let kind = |value: Value| PlaceholderKind::of(&value);
        assert_eq!(kind(json!(true)).read(" false ").ok(), Some(json!(false)));
        assert_eq!(kind(json!(true)).read("no").ok(), None);
        assert_eq!(kind(json!(5)).read("3").ok(), Some(json!(3)));
        assert_eq!(kind(json!(5)).read("3.5").ok(), None);
        assert_eq!(kind(json!(0.5)).read("3").ok(), Some(json!(3)));
        assert_eq!(kind(json!(0.5)).read("1e2").ok(), Some(json!(100.0)));
        assert_eq!(
            kind(json!(["a"])).read(r#"["x", 1]"#).ok(),
            Some(json!(["x", 1]))
        );
        assert_eq!(kind(json!(["a"])).read(r#"{"x": 1}"#).ok(), None);
        assert_eq!(
            kind(json!({"a": 1})).read(r#"{"x": 1}"#).ok(),
            Some(json!({"x": 1}))
        );
        assert_eq!(kind(json!({"a": 1})).read("x").ok(), None);
        // Text keeps its spaces: it is the placeholder's value as written.
        assert_eq!(kind(json!("a")).read(" x ").ok(), Some(json!(" x ")));
        assert_eq!(kind(Value::Null).read("x").ok(), Some(json!("x")));
        // JSON that does not read, or gives a key twice (serde_json kept the last), says why;
        // JSON of another kind has nothing to add.
        let why = |value: Value, text: &str| kind(value).read(text).unwrap_err();
        assert_eq!(
            why(json!({"a": 1}), r#"{"x": 1, "x": 2}"#).as_deref(),
            Some("as JSON, duplicate key `x`: an object gives each key once at line 1 column 12")
        );
        assert!(
            why(json!(["a"]), r#"["x","#)
                .unwrap()
                .starts_with("as JSON, EOF while parsing")
        );
        assert_eq!(why(json!(["a"]), r#"{"x": 1}"#), None);
    }
}
