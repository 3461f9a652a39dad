//! Renders remembered by what they read. A template's output depends only on its text and on
//! the values of the names it reads ([`Templates::reads`]): the tool format for a tool whose
//! texts do not change with the context, a section over the same placeholders. So a render
//! that meets the same values as an earlier one of the same [`Compiler`](crate::Compiler)
//! takes that one's text and the fuel it spent, and the compile goes on as if it had rendered.
//!
//! The key is the values themselves, written out with their kinds (an integer and a float that
//! compare equal render differently), not a hash of them: two keys are the same only when
//! every byte is. Values that cannot be written out this way (iterators, objects with
//! behaviour of their own) and large ones are not remembered; nor are failed renders.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use minijinja::Value;
use minijinja::value::ValueKind;
use rustc_hash::FxBuildHasher;

use crate::compiled::{CompiledParameter, CompiledTool, SourceRange};
use crate::templates::{TemplateId, Templates};

/// Values larger than this, written out, are not worth the copy: a template that reads that
/// much (the base template, over every section) mostly copies it, which is about what writing
/// the key costs. Such a template renders, then and from then on.
const MAX_KEY_BYTES: usize = 4 * 1024;
/// Tool values kept at most; the tools of a registry are far fewer.
const MAX_TOOL_VALUES: usize = 4096;
/// Nesting deeper than this is not written out.
const MAX_DEPTH: usize = 32;
/// Past this many bytes of keys and texts, what is remembered is dropped and the memo starts
/// again, so a long run (a matrix of thousands of outputs) holds a bounded amount.
const MAX_HELD_BYTES: usize = 32 * 1024 * 1024;

/// What a `Compiler`'s renders remember, shared by its threads.
#[derive(Default)]
pub struct RenderMemo {
    /// The names each template reads; `None` when they cannot be known from its text.
    reads: Mutex<HashMap<TemplateId, Option<Names>, FxBuildHasher>>,
    renders: Mutex<Renders>,
    /// Each tool as a template value, by the tool written out (`write_tool`).
    tool_values: Mutex<HashMap<Box<[u8]>, Value, FxBuildHasher>>,
}

/// The names a template reads, sorted.
type Names = Arc<[String]>;

#[derive(Default)]
struct Renders {
    by_key: HashMap<Key, Remembered, FxBuildHasher>,
    held_bytes: usize,
}

/// A template and the values of the names it reads, written out.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    template: TemplateId,
    values: Box<[u8]>,
}

/// A render's text and the fuel it spent.
#[derive(Clone, Debug)]
pub struct Remembered {
    pub text: Arc<str>,
    pub fuel: u64,
}

impl RenderMemo {
    /// The key of rendering `template` over `values`; `None` when such a render is not
    /// remembered. `given` is a name whose value the caller has written out already (a tool,
    /// from its fields, which is cheaper than walking it as a template value).
    pub fn key(
        &self,
        templates: &Templates,
        template: TemplateId,
        values: &Value,
        given: Option<(&str, &[u8])>,
    ) -> Option<Key> {
        let reads = self.reads_of(templates, template)?;
        let mut out = Vec::with_capacity(512);
        let mut given_read = None;
        for name in reads.iter() {
            if let Some((given_name, bytes)) = given
                && given_name == name
            {
                given_read = Some(bytes);
                continue;
            }
            let written = values
                .get_attr(name)
                .ok()
                .and_then(|value| write_value(&value, 0, &mut out));
            if written.is_none() {
                if out.len() > MAX_KEY_BYTES {
                    self.forget(template);
                }
                return None;
            }
        }
        if let Some(bytes) = given_read {
            out.push(GIVEN);
            write_bytes(bytes, &mut out);
        }
        Some(Key {
            template,
            values: out.into_boxed_slice(),
        })
    }

    pub fn get(&self, key: &Key) -> Option<Remembered> {
        self.renders.lock().ok()?.by_key.get(key).cloned()
    }

    pub fn insert(&self, key: Key, text: &str, fuel: u64) {
        let Ok(mut renders) = self.renders.lock() else {
            return;
        };
        let bytes = key.values.len() + text.len();
        if renders.held_bytes + bytes > MAX_HELD_BYTES {
            renders.by_key.clear();
            renders.held_bytes = 0;
        }
        if bytes > MAX_HELD_BYTES {
            return;
        }
        let remembered = Remembered {
            text: Arc::from(text),
            fuel,
        };
        if renders.by_key.insert(key, remembered).is_none() {
            renders.held_bytes += bytes;
        }
    }

    /// The template value of the tool written out as `written`, made by `make` the first time.
    pub fn tool_value(&self, written: &[u8], make: impl FnOnce() -> Value) -> Value {
        if let Some(value) = self
            .tool_values
            .lock()
            .ok()
            .and_then(|values| values.get(written).cloned())
        {
            return value;
        }
        let value = make();
        if let Ok(mut values) = self.tool_values.lock() {
            // Bounded as the renders are: past the limit, start again.
            if values.len() >= MAX_TOOL_VALUES {
                values.clear();
            }
            values.insert(written.into(), value.clone());
        }
        value
    }

    /// From now on, `template` renders every time.
    fn forget(&self, template: TemplateId) {
        if let Ok(mut reads) = self.reads.lock() {
            reads.insert(template, None);
        }
    }

    fn reads_of(&self, templates: &Templates, template: TemplateId) -> Option<Names> {
        let mut reads = self.reads.lock().ok()?;
        reads
            .entry(template)
            .or_insert_with(|| templates.reads(template).map(Arc::from))
            .clone()
    }
}

/// Writes `value` with its kind so that two values are written the same only when they render
/// the same everywhere; `None` for a value that cannot be, or is too large or deep.
fn write_value(value: &Value, depth: usize, out: &mut Vec<u8>) -> Option<()> {
    if depth > MAX_DEPTH || out.len() > MAX_KEY_BYTES {
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
                    write_value(item, depth + 1, out)?;
                }
            } else if let Some(items) = value.downcast_object_ref::<Vec<String>>() {
                // A list of names (`enabled_tools`): each item is a string no one marked safe.
                for item in items {
                    out.push(5);
                    write_bytes(item.as_bytes(), out);
                }
            } else {
                for item in value.try_iter().ok()? {
                    write_value(&item, depth + 1, out)?;
                }
            }
            out.push(END);
        }
        ValueKind::Map => {
            out.push(9);
            if let Some(map) = value.downcast_object_ref::<IndexMap<Value, Value>>() {
                for (key, item) in map {
                    write_value(key, depth + 1, out)?;
                    write_value(item, depth + 1, out)?;
                }
            } else {
                let pairs = value.as_object()?.try_iter_pairs()?;
                for (key, item) in pairs {
                    write_value(&key, depth + 1, out)?;
                    write_value(&item, depth + 1, out)?;
                }
            }
            out.push(END);
        }
        // Iterators, objects with behaviour of their own, errors, and kinds to come.
        _ => return None,
    }
    (out.len() <= MAX_KEY_BYTES).then_some(())
}

/// Closes a sequence or a map: no value's kind is written as this byte.
const END: u8 = 0xff;
/// Opens the value of a name the caller wrote out: no value's kind is written as this byte.
const GIVEN: u8 = 0xfe;

/// A tool as the tool format sees it (`tool`), written out from its fields: every field is
/// named, so a field added to the types is a compile error here until it is written too.
pub fn write_tool(tool: &CompiledTool, out: &mut Vec<u8>) {
    let CompiledTool {
        id,
        name,
        spec,
        source:
            SourceRange {
                file,
                first_line,
                last_line,
            },
        description,
        parameters,
        item,
    } = tool;
    for text in [id, name, spec, file, description] {
        write_bytes(text.as_bytes(), out);
    }
    for number in [first_line, last_line] {
        out.extend((*number as u64).to_le_bytes());
    }
    match item {
        None => out.push(0),
        Some(index) => {
            out.push(1);
            out.extend((*index as u64).to_le_bytes());
        }
    }
    out.extend((parameters.len() as u64).to_le_bytes());
    for parameter in parameters {
        let CompiledParameter {
            name,
            required,
            kind,
            instruction,
            usage,
            note,
            schema,
        } = parameter;
        for text in [name, kind, instruction, usage, note] {
            write_bytes(text.as_bytes(), out);
        }
        out.push(u8::from(*required));
        let schema = serde_json::to_string(schema).unwrap_or_default();
        write_bytes(schema.as_bytes(), out);
    }
}

fn write_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.extend((bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map that keeps its keys in order, as the values of a compile do.
    fn map(pairs: &[(&str, i32)]) -> Value {
        let map: indexmap::IndexMap<Value, Value> = pairs
            .iter()
            .map(|(key, value)| (Value::from(*key), Value::from(*value)))
            .collect();
        Value::from(map)
    }

    fn written(value: &Value) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        write_value(value, 0, &mut out)?;
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
        assert_eq!(written(&Value::from("x".repeat(MAX_KEY_BYTES + 1))), None);
    }
}
