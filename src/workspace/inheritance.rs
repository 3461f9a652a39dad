//! `extends` inheritance: the variant a family actually compiles with.
//!
//! Merge rules (also in the README): single values and lists set by the child replace the
//! parent's; `add_components` / `add_tools` append to the lists; `placeholders`, `labels`, `model` and `overrides` merge key by key with the child
//! winning (a label set to `false` is dropped); `family` and `match` are never inherited, nor
//! is `description` from another family; one override merges field by field; a `template`/`template_file` pair counts as
//! one value, so a child's `template_file` replaces a parent's inline `template`.

use std::path::{Component, Path};

use indexmap::IndexMap;

use crate::follow::follow;
use crate::load::entry::Entry;
use crate::model::{ModelConfig, Variant};
use crate::templates::TemplateId;
use crate::workspace::{VariantDef, VariantTemplates};

#[derive(Clone, Debug)]
pub struct EffectiveVariant {
    /// The merged variant: `extends` is cleared and `family` is always set.
    pub variant: Variant,
    /// Ids from this variant up to its root ancestor.
    pub chain: Vec<String>,
    /// The base template, set by this variant or the nearest ancestor that sets one.
    pub base: TemplateId,
    /// The merged templates: the tool format and component overrides.
    pub templates: VariantTemplates,
}

impl EffectiveVariant {
    pub fn id(&self) -> &str {
        &self.variant.id
    }

    pub fn family(&self) -> &str {
        self.variant.family_or_id()
    }

    pub fn components(&self) -> &[String] {
        self.variant.components.as_deref().unwrap_or_default()
    }

    /// The components in the order their sections render: the list, with each `order`
    /// override applied. A component's template sees the sections rendered before its own.
    pub fn components_in_order(&self) -> Vec<String> {
        let overrides = &self.variant.overrides.components;
        super::order::apply_order(self.components(), |id| {
            overrides.get(id).and_then(|o| o.order)
        })
    }

    pub fn tools(&self) -> &[String] {
        self.variant.tools.as_deref().unwrap_or_default()
    }
}

/// The ancestry of `id`, child first. Stops at a cycle or an unknown parent (both reported by
/// validation).
pub fn chain(variants: &IndexMap<String, Entry<VariantDef>>, id: &str) -> Vec<String> {
    let known_parent = |variant: &str| {
        let parent = variants.get(variant)?.value.extends.as_deref()?;
        variants.contains_key(parent).then_some(parent)
    };
    follow(id, known_parent)
        .links
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The variant's fields after inheritance, whatever its templates: what validation checks
/// (that a base template is given, that overrides name listed ids). `None` for an unknown id.
pub fn merged_spec(variants: &IndexMap<String, Entry<VariantDef>>, id: &str) -> Option<Variant> {
    let mut merged = Variant::default();
    let own_dir = variants.get(id)?.dir();
    for ancestor in chain(variants, id).iter().rev() {
        let entry = variants.get(ancestor)?;
        if entry.dir() == own_dir {
            merge(&mut merged, &entry.value.spec);
        } else {
            merge(
                &mut merged,
                &files_rebased(&entry.value.spec, entry.dir(), own_dir),
            );
        }
    }
    let own = &variants.get(id)?.value;
    merged.id = own.id.clone();
    merged.extends = None;
    merged.family = Some(own.family_or_id().to_string());
    // Like `family`, a family's `match` is the variant's own, not inherited.
    merged.route_match.clone_from(&own.route_match);
    // A description says what a family's variants are for: that of another family (`gpt`
    // extending `generic`, "for unknown models") is not this one's.
    let family = own.family_or_id();
    merged.description = chain(variants, id).iter().find_map(|ancestor| {
        let variant = &variants.get(ancestor)?.value;
        (variant.family_or_id() == family)
            .then(|| variant.spec.description.clone())
            .flatten()
    });
    Some(merged)
}

/// The variant after inheritance, ready to compile; `None` when it is unknown or no variant
/// of its chain gives a base template that compiles (reported by validation, from
/// [`merged_spec`]).
pub fn effective(
    variants: &IndexMap<String, Entry<VariantDef>>,
    id: &str,
) -> Option<EffectiveVariant> {
    let chain = chain(variants, id);
    let mut templates = VariantTemplates::default();
    for ancestor in chain.iter().rev() {
        let definition = &variants.get(ancestor)?.value;
        merge_templates(&mut templates, &definition.spec, &definition.templates);
    }
    Some(EffectiveVariant {
        variant: merged_spec(variants, id)?,
        chain,
        base: templates.base?,
        templates,
    })
}

/// `spec` with the files it names (each relative to its own folder, `from`) named from `to`:
/// an inherited `template_file` then names the same file in the merged variant, which `show`
/// prints as the child's.
fn files_rebased(spec: &Variant, from: &Path, to: &Path) -> Variant {
    let mut spec = spec.clone();
    let rebase = |file: &mut Option<String>| {
        if let Some(path) = file {
            *path = rebased(path, from, to);
        }
    };
    rebase(&mut spec.template_file);
    rebase(&mut spec.tool_format_file);
    for change in spec.overrides.components.values_mut() {
        rebase(&mut change.template_file);
    }
    spec
}

/// `path`, relative to `from`, as a path relative to `to` (both folders of the workspace),
/// with `/` between its parts as data files write them.
fn rebased(path: &str, from: &Path, to: &Path) -> String {
    let target = lexical_parts(&from.join(path));
    let to = lexical_parts(to);
    let shared = target.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); to.len() - shared];
    parts.extend(
        target[shared..]
            .iter()
            .map(|part| part.to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// The parts of a path with `.` dropped and each `..` taking back the part before it.
fn lexical_parts(path: &Path) -> Vec<std::ffi::OsString> {
    let mut parts = Vec::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                parts.pop();
            }
            Component::CurDir => {}
            other => parts.push(other.as_os_str().to_os_string()),
        }
    }
    parts
}

fn replace<T: Clone>(into: &mut Option<T>, child: &Option<T>) {
    if child.is_some() {
        into.clone_from(child);
    }
}

fn merge(into: &mut Variant, child: &Variant) {
    replace(&mut into.version, &child.version);
    replace(&mut into.max_prompt_tokens, &child.max_prompt_tokens);
    replace(&mut into.native_tools, &child.native_tools);
    replace(&mut into.description, &child.description);
    replace(&mut into.tags, &child.tags);
    replace(&mut into.components, &child.components);
    replace(&mut into.tools, &child.tools);
    append(&mut into.components, &child.add_components);
    append(&mut into.tools, &child.add_tools);
    if child.template.is_some() || child.template_file.is_some() {
        into.template.clone_from(&child.template);
        into.template_file.clone_from(&child.template_file);
    }
    if child.tool_format.is_some() || child.tool_format_file.is_some() {
        into.tool_format.clone_from(&child.tool_format);
        into.tool_format_file.clone_from(&child.tool_format_file);
    }
    if let Some(labels) = &child.labels {
        let merged = into.labels.get_or_insert_with(IndexMap::new);
        for (key, value) in labels {
            merged.insert(key.clone(), value.clone());
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
        }
    }
    for (id, change) in &child.overrides.tools {
        let target = into.overrides.tools.entry(id.clone()).or_default();
        replace(&mut target.enabled, &change.enabled);
        replace(&mut target.order, &change.order);
    }
}

/// The compiled templates follow the fields that name them: a child that sets a field
/// replaces the parent's template, even when its own was reported and has no id.
fn merge_templates(into: &mut VariantTemplates, child: &Variant, own: &VariantTemplates) {
    if child.template.is_some() || child.template_file.is_some() {
        into.base = own.base;
    }
    if child.tool_format.is_some() || child.tool_format_file.is_some() {
        into.tool_format = own.tool_format;
    }
    for (id, change) in &child.overrides.components {
        if change.template.is_some() || change.template_file.is_some() {
            match own.overrides.get(id) {
                Some(template) => into.overrides.insert(id.clone(), *template),
                None => into.overrides.shift_remove(id),
            };
        }
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
    for (key, value) in &child.extra {
        into.extra.insert(key.clone(), value.clone());
    }
}
