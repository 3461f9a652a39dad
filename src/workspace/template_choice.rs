//! Which compiled template a variant uses for its tool format and each component.

use crate::templates::TemplateId;
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;

/// Why a component renders with the template it does (for `explain` and JSON output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateChoice {
    /// The variant (or an ancestor) overrides the component's template.
    Override,
    /// The component has its own template for this family.
    Family,
    /// The component's own template.
    Default,
}

impl std::fmt::Display for TemplateChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TemplateChoice::Override => "overridden by the variant",
            TemplateChoice::Family => "the component's template for this family",
            TemplateChoice::Default => "the component's own template",
        })
    }
}

/// The variant's tool format, or the built-in one.
pub fn tool_format(workspace: &Workspace, variant: &EffectiveVariant) -> TemplateId {
    variant
        .templates
        .tool_format
        .unwrap_or_else(|| workspace.templates.builtin_tool_format())
}

/// The template a component renders with for this variant; `None` for a component the
/// workspace does not hold or whose template does not compile (both reported).
pub fn component_template(
    workspace: &Workspace,
    variant: &EffectiveVariant,
    component: &str,
) -> Option<(TemplateId, TemplateChoice)> {
    if let Some(template) = variant.templates.overrides.get(component) {
        return Some((*template, TemplateChoice::Override));
    }
    let definition = &workspace.components.get(component)?.value;
    match definition.family_templates.get(variant.family()) {
        Some(template) => Some((*template, TemplateChoice::Family)),
        None => Some((definition.template?, TemplateChoice::Default)),
    }
}
