//! `extends` inheritance: the variant a family actually compiles with.
//!
//! Merge rules (also in the README): single values and lists set by the child replace the
//! parent's; `add_components` / `add_tools` append to the lists; `placeholders`, `labels`, `model` and `overrides` merge key by key with the child
//! winning; one override merges field by field; a `template`/`template_file` pair counts as
//! one value, so a child's `template_file` replaces a parent's inline `template`.

use std::collections::HashMap;

use indexmap::IndexMap;

use crate::entry::Entry;
use crate::model::{ModelConfig, Variant};
use crate::source::SourceId;

#[derive(Clone, Debug)]
pub struct EffectiveVariant {
    /// The merged variant: `extends` is cleared and `family` is always set.
    pub variant: Variant,
    /// Ids from this variant up to its root ancestor.
    pub chain: Vec<String>,
    /// Which file set each template-bearing field, so the compiled template can be found:
    /// `"template"`, `"tool_format"`, and `"overrides/<component>"`.
    pub template_origins: HashMap<String, SourceId>,
}

impl EffectiveVariant {
    pub fn id(&self) -> &str {
        &self.variant.id
    }

    pub fn family(&self) -> &str {
        self.variant.family.as_deref().unwrap_or(&self.variant.id)
    }

    pub fn components(&self) -> &[String] {
        self.variant.components.as_deref().unwrap_or_default()
    }

    pub fn tools(&self) -> &[String] {
        self.variant.tools.as_deref().unwrap_or_default()
    }
}

/// The ancestry of `id`, child first. Stops at a cycle or an unknown parent (both reported by
/// validation).
pub fn chain(variants: &IndexMap<String, Entry<Variant>>, id: &str) -> Vec<String> {
    let mut chain = vec![id.to_string()];
    let mut current = variants.get(id);
    while let Some(parent) = current.and_then(|entry| entry.value.extends.as_deref()) {
        if chain.iter().any(|seen| seen == parent) || !variants.contains_key(parent) {
            break;
        }
        chain.push(parent.to_string());
        current = variants.get(parent);
    }
    chain
}

pub fn effective(
    variants: &IndexMap<String, Entry<Variant>>,
    id: &str,
) -> Option<EffectiveVariant> {
    let chain = chain(variants, id);
    let mut merged = Variant::default();
    let mut origins = HashMap::new();
    for ancestor in chain.iter().rev() {
        let entry = variants.get(ancestor)?;
        merge(&mut merged, &entry.value, entry.source(), &mut origins);
    }
    let own = &variants.get(id)?.value;
    merged.id = own.id.clone();
    merged.extends = None;
    merged.family = Some(own.family.clone().unwrap_or_else(|| own.id.clone()));
    Some(EffectiveVariant {
        variant: merged,
        chain,
        template_origins: origins,
    })
}

fn merge(
    into: &mut Variant,
    child: &Variant,
    source: SourceId,
    origins: &mut HashMap<String, SourceId>,
) {
    fn replace<T: Clone>(into: &mut Option<T>, child: &Option<T>) {
        if child.is_some() {
            into.clone_from(child);
        }
    }
    replace(&mut into.version, &child.version);
    replace(&mut into.max_prompt_tokens, &child.max_prompt_tokens);
    replace(&mut into.description, &child.description);
    replace(&mut into.tags, &child.tags);
    replace(&mut into.components, &child.components);
    replace(&mut into.tools, &child.tools);
    append(&mut into.components, &child.add_components);
    append(&mut into.tools, &child.add_tools);
    if child.template.is_some() || child.template_file.is_some() {
        into.template.clone_from(&child.template);
        into.template_file.clone_from(&child.template_file);
        origins.insert("template".into(), source);
    }
    if child.tool_format.is_some() || child.tool_format_file.is_some() {
        into.tool_format.clone_from(&child.tool_format);
        into.tool_format_file.clone_from(&child.tool_format_file);
        origins.insert("tool_format".into(), source);
    }
    if let Some(labels) = &child.labels {
        let merged = into.labels.get_or_insert_with(IndexMap::new);
        for (key, value) in labels {
            merged.insert(key.clone(), *value);
        }
    }
    for (key, value) in &child.placeholders {
        into.placeholders.insert(key.clone(), value.clone());
    }
    merge_model(&mut into.model, &child.model);
    for (id, change) in &child.overrides.components {
        let target = into.overrides.components.entry(id.clone()).or_default();
        replace(&mut target.enabled, &change.enabled);
        replace(&mut target.order, &change.order);
        if change.template.is_some() || change.template_file.is_some() {
            target.template.clone_from(&change.template);
            target.template_file.clone_from(&change.template_file);
            origins.insert(format!("overrides/{id}"), source);
        }
    }
    for (id, change) in &child.overrides.tools {
        let target = into.overrides.tools.entry(id.clone()).or_default();
        replace(&mut target.enabled, &change.enabled);
        replace(&mut target.order, &change.order);
    }
}

/// Appends ids not already in the list.
fn append(into: &mut Option<Vec<String>>, added: &Option<Vec<String>>) {
    let Some(added) = added else {
        return;
    };
    let list = into.get_or_insert_with(Vec::new);
    for id in added {
        if !list.contains(id) {
            list.push(id.clone());
        }
    }
}

fn merge_model(into: &mut ModelConfig, child: &ModelConfig) {
    if child.temperature.is_some() {
        into.temperature = child.temperature;
    }
    if child.top_p.is_some() {
        into.top_p = child.top_p;
    }
    if child.max_tokens.is_some() {
        into.max_tokens = child.max_tokens;
    }
}
