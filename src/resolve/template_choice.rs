//! Which compiled template a variant uses for its base, its tool format and each component.

use crate::load::document::child_pointer;
use crate::resolve::effective_variant::EffectiveVariant;
use crate::validate::BUILTIN_TOOL_FORMAT;
use crate::workspace::Workspace;

/// Why a component renders with the template it does (for `explain` and JSON output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplateChoice {
    /// The variant (or an ancestor) overrides the component's template.
    Override,
    /// The component has its own template for this family.
    Family,
    /// The component's own template.
    Default,
}

pub fn base_template<'w>(workspace: &'w Workspace, variant: &EffectiveVariant) -> Option<&'w str> {
    let source = *variant.template_origins.get("template")?;
    workspace.templates.lookup_pair(source, "")
}

pub fn tool_format<'w>(workspace: &'w Workspace, variant: &EffectiveVariant) -> &'w str {
    variant
        .template_origins
        .get("tool_format")
        .and_then(|source| {
            workspace
                .templates
                .lookup(*source, "/tool_format")
                .or_else(|| workspace.templates.lookup(*source, "/tool_format_file"))
        })
        .unwrap_or(BUILTIN_TOOL_FORMAT)
}

pub fn component_template<'w>(
    workspace: &'w Workspace,
    variant: &EffectiveVariant,
    component: &str,
) -> Option<(&'w str, TemplateChoice)> {
    if let Some(source) = variant
        .template_origins
        .get(&format!("overrides/{component}"))
        && let Some(name) = workspace
            .templates
            .lookup_pair(*source, &child_pointer("/overrides/components", component))
    {
        return Some((name, TemplateChoice::Override));
    }
    let entry = workspace.components.get(component)?;
    if entry.value.families.contains_key(variant.family()) {
        let prefix = child_pointer("/families", variant.family());
        if let Some(name) = workspace.templates.lookup_pair(entry.source(), &prefix) {
            return Some((name, TemplateChoice::Family));
        }
    }
    workspace
        .templates
        .lookup_pair(entry.source(), "")
        .map(|name| (name, TemplateChoice::Default))
}
