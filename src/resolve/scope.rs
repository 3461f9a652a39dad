//! The values templates and conditions of one compile see, as layers looked up in order:
//! runtime placeholders, section outputs, compile facts (`enabled_tools`, `tools`, `TOOLS`),
//! predicates, then the base layer (standard placeholders over variant placeholders, plus
//! the context's fields, `family` and `variant`).
//!
//! Layers are looked up in turn, never merged, so adding a section output or rendering one more
//! tool costs the same however many components and tools there are.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock, RwLock};

use indexmap::IndexMap;
use minijinja::Value;
use minijinja::value::{Enumerator, Object, Serde};

use crate::model::{Context, ContextField, StandardPlaceholder};
use crate::namespace::{CONNECTED_MCP_SERVERS, EXTRA, FAMILY, VARIANT};
use crate::workspace::inheritance::EffectiveVariant;

pub struct Scope {
    runtime: Layer,
    sections: Arc<Sections>,
    facts: Layer,
    predicates: Layer,
    base: Layer,
}

/// A layer of names: shared by the scope and the values handed out, copied only when the
/// scope changes a layer a handed-out value still holds.
type Layer = Arc<BTreeMap<String, Value>>;

/// The scope's layers as one map for templates and conditions: a name is looked up in
/// runtime placeholders, section outputs, facts, predicates, then the base layer, and the
/// first layer that holds it gives its value. What `merge_maps` gives, with each layer's map
/// read directly (most names are found in the last of five layers).
#[derive(Debug)]
struct Layers {
    runtime: Layer,
    sections: Arc<Sections>,
    facts: Layer,
    predicates: Layer,
    base: Layer,
}

impl Layers {
    fn lookup(&self, name: &str) -> Option<Value> {
        let found = |layer: &Layer| layer.get(name).filter(|v| !v.is_undefined()).cloned();
        found(&self.runtime)
            .map(|value| self.as_predicate(name, value))
            .or_else(|| self.sections.get(name))
            .or_else(|| found(&self.facts))
            .or_else(|| found(&self.predicates))
            .or_else(|| found(&self.base))
    }
}

impl Layers {
    /// A runtime value (`--set`) given to a predicate's name: `true` and `false` are the
    /// booleans the predicate would be, where as text `false` read as true.
    fn as_predicate(&self, name: &str, value: Value) -> Value {
        if !self.predicates.contains_key(name) {
            return value;
        }
        match value.as_str() {
            Some("true") => Value::from(true),
            Some("false") => Value::from(false),
            _ => value,
        }
    }
}

impl Object for Layers {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.lookup(key.as_str()?)
    }

    // Every name a template or a render's key reads is looked up by its text: without a
    // value made of it first.
    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        self.lookup(key)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let mut names: BTreeSet<String> = BTreeSet::new();
        for layer in [&self.runtime, &self.facts, &self.predicates, &self.base] {
            names.extend(layer.keys().cloned());
        }
        names.extend(self.sections.names());
        Enumerator::Values(names.into_iter().map(Value::from).collect())
    }
}

/// The slots of filled sections that a compile's renders read, in order: a section is in
/// the prompt only where a render that is in it reads its slot, which a condition of the
/// template may not do in every context (`{% if plan_mode %}{{ OBJECTIVE_SECTION }}{% endif
/// %}`). Noted only while a render runs ([`SlotReads::start`]), so that what looks the names
/// up for other ends (the render memo's key) is not taken for a read.
#[derive(Debug, Default)]
pub struct SlotReads {
    recording: std::sync::atomic::AtomicBool,
    slots: std::sync::Mutex<Vec<String>>,
}

impl SlotReads {
    fn note(&self, slot: &str) {
        if self.recording.load(std::sync::atomic::Ordering::Relaxed)
            && let Ok(mut slots) = self.slots.lock()
        {
            slots.push(slot.to_string());
        }
    }

    /// Notes the reads of the render about to run; returns where they will start.
    pub fn start(&self) -> usize {
        self.recording
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.slots.lock().map_or(0, |slots| slots.len())
    }

    /// Stops noting; the slots read since `start`, once each, in the order first read.
    pub fn stop(&self, start: usize) -> Vec<String> {
        self.recording
            .store(false, std::sync::atomic::Ordering::Relaxed);
        let Ok(slots) = self.slots.lock() else {
            return Vec::new();
        };
        let mut read: Vec<String> = Vec::new();
        for slot in slots.get(start..).unwrap_or_default() {
            if !read.contains(slot) {
                read.push(slot.clone());
            }
        }
        read
    }

    /// Notes what a remembered render read, for a render taken from the memo.
    pub fn replay(&self, slots: &[String]) {
        if let Ok(mut noted) = self.slots.lock() {
            noted.extend(slots.iter().cloned());
        }
    }

    /// Everything noted since the last take.
    pub fn take(&self) -> Vec<String> {
        self.slots
            .lock()
            .map(|mut slots| std::mem::take(&mut *slots))
            .unwrap_or_default()
    }
}

/// Section outputs, filled in as components render; once the compile's renders of sections
/// begin, every other slot of the workspace reads as "".
#[derive(Debug, Default)]
struct Sections {
    filled: RwLock<BTreeMap<String, Value>>,
    unfilled: OnceLock<Arc<BTreeMap<String, Value>>>,
    /// Where the slots of filled sections that renders read are noted (see [`SlotReads`]).
    reads: OnceLock<Arc<SlotReads>>,
}

impl Sections {
    fn get(&self, name: &str) -> Option<Value> {
        // Once every slot reads as "", a name that is not a slot is not looked for among
        // the filled ones (only slots are filled), without taking their lock.
        if let Some(unfilled) = self.unfilled.get()
            && !unfilled.contains_key(name)
        {
            return None;
        }
        if let Some(value) = self.filled.read().ok()?.get(name) {
            if let Some(reads) = self.reads.get()
                && value.as_str().is_some_and(|text| !text.is_empty())
            {
                reads.note(name);
            }
            return Some(value.clone()).filter(|v| !v.is_undefined());
        }
        self.unfilled.get()?.get(name).cloned()
    }

    fn names(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        if let Ok(filled) = self.filled.read() {
            names.extend(filled.keys().cloned());
        }
        if let Some(unfilled) = self.unfilled.get() {
            names.extend(unfilled.keys().cloned());
        }
        names
    }
}

impl Scope {
    /// The scope of a variant's compile for a context, on the context's layer (see
    /// [`context_layer`]), which a compiler makes once for every variant compiled for the
    /// same context and date.
    pub fn on_context_layer(
        variant: &EffectiveVariant,
        context_layer: BTreeMap<String, Value>,
        context: &Context,
        date: Option<&str>,
        set: &[(String, serde_json::Value)],
    ) -> Self {
        let base = base_layer(variant, context_layer, context, date);
        Self::on(base, context, set)
    }

    /// The scope a routing `match` sees: the context's fields (and its placeholders), no
    /// variant, since none is chosen yet.
    pub fn for_routing(context: &Context, declared: &IndexMap<String, ContextField>) -> Self {
        let base = context_layer(context, declared, context.date.as_deref());
        Self::on(base, context, &[])
    }

    fn on(
        base: BTreeMap<String, Value>,
        context: &Context,
        set: &[(String, serde_json::Value)],
    ) -> Self {
        let mut runtime = BTreeMap::new();
        for (name, value) in context
            .placeholders
            .iter()
            .chain(set.iter().map(|(n, v)| (n, v)))
        {
            runtime.insert(name.clone(), Value::from(Serde(value)));
        }
        Self {
            runtime: Arc::new(runtime),
            sections: Arc::new(Sections::default()),
            facts: Layer::default(),
            predicates: Layer::default(),
            base: Arc::new(base),
        }
    }

    /// Everything visible now, as one map (see [`Layers`]). Section outputs added later are
    /// seen by the value; facts and predicates added later are not.
    pub fn values(&self) -> Value {
        Value::from_object(Layers {
            runtime: Arc::clone(&self.runtime),
            sections: Arc::clone(&self.sections),
            facts: Arc::clone(&self.facts),
            predicates: Arc::clone(&self.predicates),
            base: Arc::clone(&self.base),
        })
    }

    /// The same scope without its section outputs: what a compile that starts from this one
    /// fills in is its own.
    pub fn fresh(&self) -> Self {
        Self {
            runtime: Arc::clone(&self.runtime),
            sections: Arc::new(Sections::default()),
            facts: Arc::clone(&self.facts),
            predicates: Arc::clone(&self.predicates),
            base: Arc::clone(&self.base),
        }
    }

    pub fn insert_predicate(&mut self, name: &str, value: bool) {
        Arc::make_mut(&mut self.predicates).insert(name.to_string(), Value::from(value));
    }

    pub fn insert_fact(&mut self, name: &str, value: Value) {
        Arc::make_mut(&mut self.facts).insert(name.to_string(), value);
    }

    pub fn insert_section(&self, slot: &str, text: impl Into<Value>) {
        // A section's lookup passes over the filled ones for a name that is not a slot.
        debug_assert!(
            self.sections
                .unfilled
                .get()
                .is_none_or(|unfilled| unfilled.contains_key(slot)),
            "{slot} is not a slot"
        );
        if let Ok(mut sections) = self.sections.filled.write() {
            sections.insert(slot.to_string(), text.into());
        }
    }

    /// From now on, the slots of filled sections that renders read are noted in `reads`.
    pub fn note_slot_reads(&self, reads: &Arc<SlotReads>) {
        let _ = self.sections.reads.set(Arc::clone(reads));
    }

    /// From now on, every slot in `empty` that no section filled reads as its value there
    /// (""): a section may read the slot of one that renders after it, or of none.
    pub fn fill_sections_from(&self, empty: &Arc<BTreeMap<String, Value>>) {
        let _ = self.sections.unfilled.set(Arc::clone(empty));
    }
}

/// The context's fields (with the declared `extra` keys it leaves out at their defaults),
/// and the date.
pub fn context_layer(
    context: &Context,
    declared: &IndexMap<String, ContextField>,
    date: Option<&str>,
) -> BTreeMap<String, Value> {
    let mut base = BTreeMap::new();
    // Straight into template values: no JSON document in between.
    let fields = Value::from(Serde(context));
    let pairs = fields
        .as_object()
        .and_then(|object| object.try_iter_pairs());
    for (name, value) in pairs.into_iter().flatten() {
        let Some(name) = name.as_str() else {
            continue;
        };
        let value = if name == EXTRA && !declared.is_empty() {
            with_defaults(&context.extra, declared)
        } else {
            value
        };
        base.insert(name.to_string(), value);
    }
    if let Some(date) = date {
        base.insert("date".into(), Value::from(date));
    }
    let connected: Vec<&crate::model::McpServer> = context
        .mcp_servers
        .iter()
        .filter(|server| server.counts())
        .collect();
    base.insert(CONNECTED_MCP_SERVERS.into(), Value::from(Serde(connected)));
    base
}

/// The context's `extra` keys, then each declared key it leaves out, at its default.
fn with_defaults(
    extra: &IndexMap<String, serde_json::Value>,
    declared: &IndexMap<String, ContextField>,
) -> Value {
    let given = extra
        .iter()
        .map(|(key, value)| (Value::from(key.as_str()), Value::from(Serde(value))));
    let defaults = declared
        .iter()
        .filter(|(key, _)| !extra.contains_key(*key))
        .map(|(key, field)| {
            (
                Value::from(key.as_str()),
                Value::from(Serde(field.default_value())),
            )
        });
    Value::from(given.chain(defaults).collect::<IndexMap<Value, Value>>())
}

/// The context's layer, and what the variant adds to it.
fn base_layer(
    variant: &EffectiveVariant,
    context_layer: BTreeMap<String, Value>,
    context: &Context,
    date: Option<&str>,
) -> BTreeMap<String, Value> {
    let mut base = context_layer;
    base.insert(FAMILY.into(), Value::from(variant.family()));
    let v = &variant.variant;
    let mut info = BTreeMap::new();
    info.insert("id", Value::from(v.id.as_str()));
    info.insert("family", Value::from(variant.family()));
    info.insert(
        "version",
        v.version.as_deref().map_or(Value::from(()), Value::from),
    );
    info.insert(
        "tags",
        Value::from(Serde(v.tags.clone().unwrap_or_default())),
    );
    // A mapping of label to version, as the file writes it (`"beta" in variant.labels`,
    // `variant.labels.stable`): collected as pairs, it was a list of them.
    info.insert(
        "labels",
        Value::from(
            v.label_versions()
                .map(|(name, version)| (Value::from(name), Value::from(version)))
                .collect::<IndexMap<Value, Value>>(),
        ),
    );
    base.insert(VARIANT.into(), Value::from(info));
    for (name, value) in &v.placeholders {
        base.insert(name.clone(), Value::from(Serde(value)));
    }
    for placeholder in StandardPlaceholder::ALL {
        match placeholder.value(context, variant.family(), date) {
            Some(value) => {
                base.insert(placeholder.name().into(), Value::from(Serde(value)));
            }
            None => {
                base.remove(placeholder.name());
            }
        }
    }
    base
}
