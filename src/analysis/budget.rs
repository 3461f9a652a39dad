//! Token budgets: a compiled prompt over its variant's `max_prompt_tokens` (or the manifest's
//! default) is an error naming the family, context, total and the three largest sections.

use crate::compiled::Compiled;
use crate::diagnostic::Diagnostic;
use crate::problem::Problem;
use crate::span::Span;
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;

/// The budget of a variant and where it is set: the nearest variant in the `extends` chain
/// that sets one, else the manifest.
pub fn budget_of(workspace: &Workspace, variant: &EffectiveVariant) -> Option<(usize, Span)> {
    let own = variant
        .chain
        .iter()
        .filter_map(|id| workspace.variants.get(id))
        .find_map(|entry| {
            entry
                .value
                .max_prompt_tokens
                .map(|budget| (budget, entry.value_span("/max_prompt_tokens")))
        });
    own.or_else(|| {
        let manifest = &workspace.manifest;
        let budget = manifest.value.tokens.max_prompt_tokens?;
        Some((budget, manifest.value_span("/tokens/max_prompt_tokens")))
    })
}

/// The error for a prompt over its budget, if it is.
pub fn check_budget(
    workspace: &Workspace,
    variant: &EffectiveVariant,
    compiled: &Compiled,
    context: &str,
) -> Option<Diagnostic> {
    let (budget, span) = budget_of(workspace, variant)?;
    let encoding = workspace.settings().tokens.encoding_for(&compiled.family);
    let tokens = encoding.count(&compiled.prompt);
    if tokens <= budget {
        return None;
    }
    let mut sections: Vec<(String, usize)> = compiled
        .sections
        .iter()
        .filter(|s| !s.text.is_empty())
        .map(|s| (s.id.clone(), encoding.count(&s.text)))
        .collect();
    sections.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sections.truncate(3);
    Some(Diagnostic::new(
        Problem::OverBudget {
            family: compiled.family.clone(),
            context: context.to_string(),
            tokens,
            budget,
            encoding: encoding.name(),
            largest: sections,
        },
        span,
    ))
}
