//! Template values written out as bytes with their kinds, so that two values are written the
//! same only when they render the same everywhere: the keys under which renders and
//! conditions are remembered (kept in a `BoundedMemo`).

use indexmap::IndexMap;
use minijinja::Value;
use minijinja::value::ValueKind;

/// Nesting deeper than this is not written out.
const MAX_DEPTH: usize = 32;

/// Closes a sequence or a map: no value's kind is written as this byte.
const END: u8 = 0xff;

/// Writes `value` after what `out` holds; `None` for a value that cannot be written (an
/// iterator, an object with behaviour of its own), one nested too deep, or when `out` grows
/// past `limit` bytes.
pub fn write_value(value: &Value, limit: usize, out: &mut Vec<u8>) -> Option<()> {
    write_nested(value, 0, limit, out)
}

fn write_nested(value: &Value, depth: usize, limit: usize, out: &mut Vec<u8>) -> Option<()> {
    if depth > MAX_DEPTH || out.len() > limit {
        return None;
    }
    match value.kind() {
        ValueKind::Undefined => out.push(0),
        ValueKind::None => out.push(1),
        ValueKind::Bool => out.extend([2, u8::from(value.is_true())]),
        ValueKind::Number => {
            out.push(if value.is_integer() { 3 } else { 4 });
            write_bytes(value.to_string().as_bytes(), out);
        }
        ValueKind::String => {
            // A string marked safe escapes differently (`|escape` leaves it as it is).
            out.push(if value.is_safe() { 6 } else { 5 });
            write_bytes(value.as_str()?.as_bytes(), out);
        }
        ValueKind::Bytes => {
            out.push(7);
            write_bytes(value.as_bytes()?, out);
        }
        ValueKind::Seq => {
            out.push(8);
            // Lists and maps built by promptc and by serde are read in place; others through
            // the object's own iteration.
            if let Some(items) = value.downcast_object_ref::<Vec<Value>>() {
                for item in items {
                    write_nested(item, depth + 1, limit, out)?;
                }
            } else if let Some(items) = value.downcast_object_ref::<Vec<String>>() {
                // A list of names (`enabled_tools`): each item is a string no one marked safe.
                for item in items {
                    out.push(5);
                    write_bytes(item.as_bytes(), out);
                }
            } else {
                for item in value.try_iter().ok()? {
                    write_nested(&item, depth + 1, limit, out)?;
                }
            }
            out.push(END);
        }
        ValueKind::Map => {
            out.push(9);
            if let Some(map) = value.downcast_object_ref::<IndexMap<Value, Value>>() {
                for (key, item) in map {
                    write_nested(key, depth + 1, limit, out)?;
                    write_nested(item, depth + 1, limit, out)?;
                }
            } else {
                let pairs = value.as_object()?.try_iter_pairs()?;
                for (key, item) in pairs {
                    write_nested(&key, depth + 1, limit, out)?;
                    write_nested(&item, depth + 1, limit, out)?;
                }
            }
            out.push(END);
        }
        // Iterators, objects with behaviour of their own, errors, and kinds to come.
        _ => return None,
    }
    (out.len() <= limit).then_some(())
}

/// A length, then the bytes.
pub fn write_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.extend((bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 4096;

    /// A map that keeps its keys in order, as the values of a compile do.
    fn map(pairs: &[(&str, i32)]) -> Value {
        let map: IndexMap<Value, Value> = pairs
            .iter()
            .map(|(key, value)| (Value::from(*key), Value::from(*value)))
            .collect();
        Value::from(map)
    }

    fn written(value: &Value) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        write_value(value, LIMIT, &mut out)?;
        Some(out)
    }

    #[test]
    fn values_that_render_differently_are_written_differently() {
        let pairs = [
            (Value::from(1), Value::from(1.0)),
            (Value::from(1), Value::from("1")),
            (Value::from(true), Value::from(1)),
            (Value::from(()), Value::UNDEFINED),
            (Value::from("a"), Value::from_safe_string("a".into())),
            (
                Value::from(vec![Value::from("ab")]),
                Value::from(vec![Value::from("a"), Value::from("b")]),
            ),
            (map(&[("a", 1), ("b", 2)]), map(&[("b", 2), ("a", 1)])),
            (
                map(&[("a", 1)]),
                Value::from(vec![vec![Value::from("a"), Value::from(1)]]),
            ),
        ];
        for (one, other) in pairs {
            assert_ne!(written(&one), written(&other), "{one:?} and {other:?}");
        }
        assert_eq!(
            written(&map(&[("a", 1), ("b", 2)])),
            written(&map(&[("a", 1), ("b", 2)]))
        );
        // A list is written by what it holds, however it is stored.
        assert_eq!(
            written(&Value::from(vec!["a".to_string(), "b".to_string()])),
            written(&Value::from(vec![Value::from("a"), Value::from("b")]))
        );
    }

    #[test]
    fn iterators_and_deep_or_large_values_are_not_written() {
        assert_eq!(written(&Value::make_one_shot_iterator(0..3)), None);
        let mut deep = Value::from(1);
        for _ in 0..=MAX_DEPTH + 1 {
            deep = Value::from(vec![deep]);
        }
        assert_eq!(written(&deep), None);
        assert_eq!(written(&Value::from("x".repeat(LIMIT + 1))), None);
    }
}
