//! Results that share what is the same between compiles.
//!
//! An agent asks for the same variant and context again and again. A language binding that
//! holds results until its host's garbage collector lets go of them (Node's finalizers run
//! only when the event loop turns) would otherwise keep a full copy per result, and each
//! compile would fault in fresh memory. With [`Runtime::compile_shared`], a result holds the
//! parts of its variant's last compile wherever its own are the same, and what it made itself
//! is freed at once. A part's number lets a binding keep the value it made from the part in
//! its own language, and make it only once.
//!
//! [`Runtime::compile_shared`]: super::Runtime::compile_shared

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

use crate::compiled::{Compiled, CompiledParameter, CompiledTool, CompiledTools, Section};
use crate::model::ModelConfig;
use crate::parameter_schema::held_bytes;

/// A part of a compiled prompt and its number: the same for every result that shares it,
/// never given to another part in this process.
#[derive(Debug)]
pub struct Part<T> {
    number: u64,
    value: T,
}

/// The number of the next part made in this process.
static NEXT_PART: AtomicU64 = AtomicU64::new(1);

impl<T> Part<T> {
    fn new(value: T) -> Part<T> {
        Part {
            number: NEXT_PART.fetch_add(1, Ordering::Relaxed),
            value,
        }
    }

    pub fn number(&self) -> u64 {
        self.number
    }

    pub fn value(&self) -> &T {
        &self.value
    }
}

/// A [`Compiled`] whose large parts may be shared with other results.
#[derive(Debug)]
pub struct SharedCompiled {
    pub family: String,
    pub variant: String,
    pub version: Option<String>,
    pub prompt: Arc<Part<String>>,
    pub sections: Arc<Part<Vec<Section>>>,
    pub tools: Arc<Part<CompiledTools>>,
    pub model: ModelConfig,
    pub inputs: Arc<Part<Vec<String>>>,
    pub dialect: Option<&'static str>,
    pub tool_definitions: Option<Arc<Part<Value>>>,
    /// About the bytes of the parts this compile made itself rather than shared: what holding
    /// this result costs beyond the parts known before it.
    pub fresh_bytes: usize,
}

/// Per variant, the parts of its last compile. One entry per variant of the workspace.
#[derive(Debug, Default)]
pub(super) struct SharedParts {
    last: Mutex<HashMap<String, LastParts>>,
}

#[derive(Debug, Default)]
struct LastParts {
    prompt: Option<Arc<Part<String>>>,
    sections: Option<Arc<Part<Vec<Section>>>>,
    tools: Option<Arc<Part<CompiledTools>>>,
    inputs: Option<Arc<Part<Vec<String>>>>,
    tool_definitions: Option<Arc<Part<Value>>>,
}

impl SharedParts {
    pub(super) fn share(&self, compiled: Compiled) -> SharedCompiled {
        let Compiled {
            family,
            variant,
            version,
            prompt,
            sections,
            tools,
            model,
            inputs,
            dialect,
            tool_definitions,
        } = compiled;
        let mut all = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let last = all.entry(variant.clone()).or_default();
        let prompt = share(&mut last.prompt, prompt, |a, b| a == b, String::len);
        let sections = share(
            &mut last.sections,
            sections,
            |a, b| same_list(a, b, same_section),
            |sections| sections.iter().map(|s| 64 + s.text.len()).sum(),
        );
        let tools = share(
            &mut last.tools,
            tools,
            |a, b| CompiledTools::ptr_eq(a, b) || same_list(a, b, same_tool),
            |tools| {
                tools
                    .iter()
                    .map(|tool| tool.description.len() + 256 * tool.parameters.len())
                    .sum()
            },
        );
        let inputs = share(
            &mut last.inputs,
            inputs,
            |a, b| a == b,
            |inputs| inputs.iter().map(|input| 32 + input.len()).sum(),
        );
        let tool_definitions = tool_definitions.map(|definitions| {
            share(
                &mut last.tool_definitions,
                definitions,
                same_json,
                held_bytes,
            )
        });
        drop(all);
        let fresh_bytes = prompt.1
            + sections.1
            + tools.1
            + inputs.1
            + tool_definitions.as_ref().map_or(0, |(_, bytes)| *bytes);
        SharedCompiled {
            family,
            variant,
            version,
            prompt: prompt.0,
            sections: sections.0,
            tools: tools.0,
            model,
            inputs: inputs.0,
            dialect,
            tool_definitions: tool_definitions.map(|(part, _)| part),
            fresh_bytes,
        }
    }
}

/// The last part when `made` is the same, else `made`, now the last; with the bytes of `made`
/// when it was not known.
fn share<T>(
    last: &mut Option<Arc<Part<T>>>,
    made: T,
    same: impl Fn(&T, &T) -> bool,
    bytes: impl Fn(&T) -> usize,
) -> (Arc<Part<T>>, usize) {
    if let Some(known) = last.as_ref().filter(|known| same(&known.value, &made)) {
        return (known.clone(), 0);
    }
    let bytes = bytes(&made);
    let made = Arc::new(Part::new(made));
    *last = Some(made.clone());
    (made, bytes)
}

fn same_list<T>(a: &[T], b: &[T], same: impl Fn(&T, &T) -> bool) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
}

// The comparisons below name every field, so that a field added to a type does not compile
// until it is compared; and they compare JSON as it is written (`==` on maps ignores the
// order of keys, and on numbers holds for 0.0 and -0.0).

fn same_section(a: &Section, b: &Section) -> bool {
    let Section {
        id,
        slot,
        included,
        reason,
        template,
        source,
        text,
    } = a;
    *id == b.id
        && *slot == b.slot
        && *included == b.included
        && *reason == b.reason
        && *template == b.template
        && *source == b.source
        && *text == b.text
}

fn same_tool(a: &CompiledTool, b: &CompiledTool) -> bool {
    let CompiledTool {
        id,
        name,
        spec,
        from_family,
        source,
        description,
        parameters,
        item,
    } = a;
    *id == b.id
        && *name == b.name
        && *spec == b.spec
        && *from_family == b.from_family
        && *source == b.source
        && *description == b.description
        && *item == b.item
        && same_list(parameters, &b.parameters, same_parameter)
}

fn same_parameter(a: &CompiledParameter, b: &CompiledParameter) -> bool {
    let CompiledParameter {
        name,
        required,
        kind,
        instruction,
        usage,
        note,
        schema,
    } = a;
    *name == b.name
        && *required == b.required
        && *kind == b.kind
        && *instruction == b.instruction
        && *usage == b.usage
        && *note == b.note
        && schema.same_as(&b.schema)
}

fn same_map(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same_json(va, vb))
}

/// Whether two JSON values are written the same.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => same_map(a, b),
        (Value::Array(a), Value::Array(b)) => same_list(a, b, same_json),
        (Value::Number(a), Value::Number(b)) => {
            a == b && a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits)
        }
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_the_same_only_as_written() {
        assert!(same_json(
            &json!({"a": 1, "b": [0.5]}),
            &json!({"a": 1, "b": [0.5]})
        ));
        assert!(!same_json(
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1})
        ));
        assert!(!same_json(&json!(0.0), &json!(-0.0)));
        assert!(!same_json(&json!(1), &json!(1.0)));
        assert!(!same_json(&json!([1, 2]), &json!([1, 2, 3])));
    }
}
