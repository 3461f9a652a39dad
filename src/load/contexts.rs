//! Context inheritance: a context file may `extends` another by name and set only what
//! differs. Documents merge before they become typed contexts, so "not set" and "set to the
//! default" stay apart: tables merge key by key (nested ones too), lists and single values
//! replace.

use indexmap::IndexMap;
use serde_json::Value;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::follow::{LongChain, follow, judge_long_chain, on_cycles};
use crate::load::entry::Entry;
use crate::model::Context;
use crate::namespace::closest;
use crate::problem::{CycleLink, InvalidValue, Problem, RefKind};
use crate::span::Span;

const EXTENDS: &str = "extends";

/// The contexts of a workspace, each merged with its ancestors. A context whose chain loops,
/// names an unknown context, or reaches an invalid one is left out (reported where the chain
/// breaks); its name is returned with the invalid ones.
///
/// Each entry's value is its document's, taken out of it (see `Loader::checked_document`) and
/// given back to the typed context's document: a context file of a few megabytes (thousands
/// of MCP tools) is held once as a document, not once per step.
pub fn resolve_all(
    raw: IndexMap<String, Entry<Value>>,
    invalid: &dyn Fn(&str) -> bool,
    limit: u64,
    diagnostics: &mut Diagnostics,
) -> (IndexMap<String, Entry<Context>>, Vec<String>) {
    // What the merged contexts hold together. Each holds its own copy of what it inherits:
    // without a bound, four hundred files of one line, each extending a context of 4 MB,
    // made 1.6 GB of contexts from 4 MB of files, and a chain of 64 links, each adding a
    // little, held every prefix of the chain.
    let mut held: u64 = 0;
    let mut reported_size = false;
    // By the position of each context's file in `raw`.
    let mut typed: Vec<Option<Context>> = Vec::with_capacity(raw.len());
    let mut broken = Vec::new();
    // Each context's merged document, kept for the contexts that extend it: a long chain
    // costs one merge per context, not one per link of every chain. Only a context that
    // another extends is kept.
    let mut merged_by_name: std::collections::HashMap<&str, Value> =
        std::collections::HashMap::new();
    let parent_of = |context| raw.get(context)?.value.get(EXTENDS)?.as_str();
    let extended: std::collections::HashSet<&str> = raw
        .keys()
        .filter_map(|name| parent_of(name.as_str()))
        .collect();
    let cycles = on_cycles(raw.keys().map(String::as_str), parent_of);
    for (name, entry) in &raw {
        typed.push(None);
        let chain = follow(name, parent_of);
        let extends_span = entry.value_span("/extends");
        if chain.too_long {
            let link = CycleLink::Extends;
            match judge_long_chain(name, &cycles, parent_of) {
                LongChain::Quiet => {}
                LongChain::TooLong => {
                    diagnostics.error(Problem::ChainTooLong { link }, extends_span)
                }
                LongChain::Cycle(chain) => {
                    diagnostics.error(Problem::Cycle { link, chain }, extends_span);
                }
            }
            broken.push(name.clone());
            continue;
        }
        if chain.cycle.is_some() {
            if let Some(cycle) = chain.cycle_to_report() {
                diagnostics.error(
                    Problem::Cycle {
                        link: CycleLink::Extends,
                        chain: cycle,
                    },
                    extends_span,
                );
            }
            broken.push(name.clone());
            continue;
        }
        let last = chain.last();
        if !raw.contains_key(last) {
            // Only the context whose own `extends` names the missing one reports it; a
            // context that failed its own checks was reported already.
            if chain.links.len() == 2 && !invalid(last) {
                diagnostics.error(
                    Problem::UnknownReference {
                        kind: RefKind::Context,
                        name: last.to_string(),
                        suggestion: closest(last, raw.keys()),
                    },
                    extends_span,
                );
            }
            broken.push(name.clone());
            continue;
        }
        // From the nearest ancestor already merged (or the defaults) down to this context.
        let start = chain
            .links
            .iter()
            .position(|link| merged_by_name.contains_key(link))
            .unwrap_or(chain.links.len());
        let mut merged = chain
            .links
            .get(start)
            .and_then(|link| merged_by_name.get(link).cloned())
            .unwrap_or_else(default_document);
        for link in chain.links[..start].iter().rev() {
            if let Some(document) = raw.get(*link) {
                merge(&mut merged, &document.value);
                if extended.contains(link) {
                    merged_by_name.insert(link, merged.clone());
                }
            }
        }
        held = held.saturating_add(value_bytes(&merged));
        if held > limit {
            if !reported_size {
                reported_size = true;
                let span = if entry.value.get(EXTENDS).is_some() {
                    extends_span
                } else {
                    crate::span::Span::file_start(entry.source())
                };
                diagnostics.error(
                    Problem::InheritsTooMuch {
                        kind: RefKind::Context,
                        limit,
                    },
                    span,
                );
            }
            broken.push(name.clone());
            continue;
        }
        match typed_context(entry, merged) {
            Ok(context) => {
                if let Some(slot) = typed.last_mut() {
                    *slot = Some(context);
                }
            }
            Err(diagnostic) => {
                diagnostics.push(diagnostic);
                broken.push(name.clone());
            }
        }
    }
    drop(merged_by_name);
    // In the files' order, each with its own document.
    let contexts = raw
        .into_iter()
        .zip(typed)
        .filter_map(|((name, entry), context)| Some((name, with_document(entry, context?))))
        .collect();
    (contexts, broken)
}

/// `entry`, then each context it extends, nearest first, by each file's own `extends` (the
/// merged context does not keep it). Chains were checked when the contexts loaded (a loop is
/// left out); the bound only keeps a context built by hand from walking forever.
pub fn chain<'c>(
    entry: &'c Entry<Context>,
    contexts: &'c IndexMap<String, Entry<Context>>,
) -> impl Iterator<Item = &'c Entry<Context>> {
    std::iter::successors(Some(entry), |entry| {
        entry
            .document
            .value
            .get(EXTENDS)
            .and_then(Value::as_str)
            .and_then(|name| contexts.get(name))
    })
    .take(contexts.len() + 1)
}

/// About the memory `value` takes: each value's slot, and the text of its strings and keys
/// with their headers. Walked with a list of its own rather than by recursion: a context
/// nests as deep as its parser allows.
pub(crate) fn value_bytes(value: &Value) -> u64 {
    const SLOT: u64 = std::mem::size_of::<Value>() as u64;
    const TEXT: u64 = std::mem::size_of::<String>() as u64;
    let mut bytes: u64 = 0;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        bytes = bytes.saturating_add(SLOT);
        match value {
            Value::String(text) => bytes = bytes.saturating_add(TEXT + text.len() as u64),
            Value::Array(items) => pending.extend(items),
            Value::Object(entries) => {
                for (key, value) in entries {
                    bytes = bytes.saturating_add(TEXT + key.len() as u64);
                    pending.push(value);
                }
            }
            _ => {}
        }
    }
    bytes
}

/// The typed context of `entry`, with the entry's value given back to its document.
fn with_document(entry: Entry<Value>, context: Context) -> Entry<Context> {
    let Entry {
        value,
        mut document,
        path,
    } = entry;
    document.value = value;
    Entry {
        value: context,
        document,
        path,
    }
}

/// A context the caller gives (a file, standard input), merged with the workspace context
/// it `extends`.
pub fn resolve_one(
    entry: Entry<Value>,
    bases: &IndexMap<String, Entry<Context>>,
    diagnostics: &mut Diagnostics,
) -> Option<Entry<Context>> {
    let mut merged = default_document();
    if let Some(base) = entry.value.get(EXTENDS).and_then(Value::as_str) {
        let Some(base) = bases.get(base) else {
            diagnostics.error(
                Problem::UnknownReference {
                    kind: RefKind::Context,
                    name: base.to_string(),
                    suggestion: closest(base, bases.keys()),
                },
                entry.value_span("/extends"),
            );
            return None;
        };
        merged = serde_json::to_value(&base.value).unwrap_or(merged);
    }
    merge(&mut merged, &entry.value);
    match typed_context(&entry, merged) {
        Ok(context) => Some(with_document(entry, context)),
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            None
        }
    }
}

/// Every field of a context, at its default.
fn default_document() -> Value {
    serde_json::to_value(Context::default()).unwrap_or(Value::Null)
}

/// `over` on top of `base`: tables merge key by key, anything else replaces. `extends` is
/// the file's own link, not a value.
pub fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                if key == EXTENDS && base.get(EXTENDS).is_none() {
                    continue;
                }
                match base.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge(existing, value);
                    }
                    _ => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, over) => *base = over.clone(),
    }
}

fn typed_context(entry: &Entry<Value>, merged: Value) -> Result<Context, Diagnostic> {
    match serde_json::from_value::<Context>(merged) {
        Ok(mut context) => {
            context.extends = None;
            Ok(context)
        }
        // Each file passed its schema: a merge that still does not fit is told at the file.
        Err(error) => Err(Diagnostic::new(
            Problem::InvalidValue(InvalidValue::Model {
                message: error.to_string(),
            }),
            Span::file_start(entry.source()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_merge_deeply_and_lists_replace() {
        let mut base = serde_json::json!({
            "browser": { "enabled": true, "viewport": { "width": 900, "height": 600 } },
            "mcp_servers": [{ "name": "a" }],
            "cwd": "/a",
        });
        let over = serde_json::json!({
            "extends": "basic",
            "browser": { "viewport": { "width": 1280 } },
            "mcp_servers": [],
        });
        merge(&mut base, &over);
        assert_eq!(
            base,
            serde_json::json!({
                "browser": { "enabled": true, "viewport": { "width": 1280, "height": 600 } },
                "mcp_servers": [],
                "cwd": "/a",
            })
        );
    }
}
