//! Variants, components, tools and the manifest as the workspace holds them: the file's
//! spec together with the ids of its compiled templates. A template that is missing or does
//! not compile was reported and has no id; the spec stays, so its other fields are still
//! checked. Such a workspace is invalid and never compiled: the compile stage's plan holds a
//! template for everything it includes.
//!
//! Each definition dereferences to its spec, so rules read `component.when` directly; the
//! fields added here have names of their own so that they never hide a spec's field.

use std::ops::Deref;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::model::{Component, Manifest, ToolSpec, Variant};
use crate::templates::TemplateId;
use crate::workspace::ParameterParts;

#[derive(Debug)]
pub struct ComponentDef {
    pub spec: Component,
    /// Its own template: `template`, `template_file`, or the `.md` file beside it.
    pub template: Option<TemplateId>,
    /// Templates of the families that have their own, by family.
    pub family_templates: IndexMap<String, TemplateId>,
    /// It gives no template of its own, only its families' (so `template` is `None` by
    /// design, not because one failed).
    pub without_default: bool,
    /// Its `when`, shared by every variant's plan that lists it.
    pub condition: Option<Arc<str>>,
}

#[derive(Debug)]
pub struct VariantDef {
    pub spec: Variant,
    pub templates: VariantTemplates,
}

/// The templates one variant file sets. Inheritance merges them like the spec's fields.
#[derive(Clone, Debug, Default)]
pub struct VariantTemplates {
    /// `template` / `template_file`.
    pub base: Option<TemplateId>,
    /// `tool_format` / `tool_format_file`.
    pub tool_format: Option<TemplateId>,
    /// Component templates replaced by `overrides.components.<id>.template(_file)`.
    pub overrides: IndexMap<String, TemplateId>,
}

#[derive(Debug)]
pub struct ToolDef {
    pub spec: ToolSpec,
    /// The generic spec's texts.
    pub texts: ToolTexts,
    /// Each family spec's texts, by family.
    pub family_texts: IndexMap<String, FamilyTexts>,
}

/// The text templates of a tool's generic spec.
#[derive(Clone, Debug)]
pub struct ToolTexts {
    /// The name as a template: only for a `for_each` tool, whose name comes from its item.
    pub name: Option<TemplateId>,
    pub description: Option<TemplateId>,
    /// Its `when`, shared by every resolution of the tool.
    pub when: Option<Arc<str>>,
    /// One per parameter, in order.
    pub parameters: Vec<ParameterParts>,
}

/// The text templates a family spec of a tool replaces.
#[derive(Clone, Debug, Default)]
pub struct FamilyTexts {
    /// The name as a template, for a `for_each` tool whose family sets `name`.
    pub name: Option<TemplateId>,
    pub description: Option<TemplateId>,
    /// The family's `when`, shared by every resolution of the tool for the family.
    pub when: Option<Arc<str>>,
    /// Set when the family replaces the parameter list: one per parameter, in order.
    pub parameters: Option<Vec<ParameterParts>>,
}

/// The text templates of one parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParameterTexts {
    pub instruction: Option<TemplateId>,
    pub usage: Option<TemplateId>,
    pub note: Option<TemplateId>,
}

#[derive(Debug, Default)]
pub struct ManifestDef {
    pub spec: Manifest,
    /// The shared parameters as the tools that use them share them, by name.
    pub shared_parameters: IndexMap<String, ParameterParts>,
}

macro_rules! deref_to_spec {
    ($($definition:ty => $spec:ty),* $(,)?) => {$(
        impl Deref for $definition {
            type Target = $spec;

            fn deref(&self) -> &$spec {
                &self.spec
            }
        }
    )*};
}

deref_to_spec! {
    ComponentDef => Component,
    VariantDef => Variant,
    ToolDef => ToolSpec,
    ManifestDef => Manifest,
}
