//! JSON read with no key repeated in any object. serde_json keeps the last of a key given
//! twice, so a file (or a `--set` value) could show a reader one value and give promptc
//! another; TOML and YAML refuse it, and so does every JSON promptc reads.

use serde_json::Value;

/// `text`, one JSON value and nothing after it but blank space, whose objects give each key
/// once.
pub fn from_str(text: &str) -> serde_json::Result<Value> {
    use serde::de::DeserializeSeed as _;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = UniqueKeys.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// A JSON value read with no key repeated in any object.
pub struct UniqueKeys;

impl<'de> serde::de::DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut list = Vec::new();
        while let Some(item) = items.next_element_seed(UniqueKeys)? {
            list.push(item);
        }
        Ok(Value::Array(list))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        let mut map = serde_json::Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate key `{key}`: an object gives each key once"
                )));
            }
            let value = entries.next_value_seed(UniqueKeys)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_refused_at_any_depth() {
        let error = from_str(r#"[{"a": {"b": 1, "b": 2}}]"#).unwrap_err();
        assert!(
            error.to_string().starts_with("duplicate key `b`"),
            "{error}"
        );
        assert_eq!(
            from_str(r#" {"a": 1, "b": [1, {"a": 2}]} "#).unwrap(),
            serde_json::json!({"a": 1, "b": [1, {"a": 2}]})
        );
        assert!(from_str("[1] 2").is_err());
    }
}
