//! Values a run sets by name (`--set NAME=VALUE`, a request's `set`) that replace a
//! placeholder, read as the type the placeholder holds: the variant's declaration
//! (`SHOW = true`, `N = 5`), a standard placeholder's own (`YOLO` is `true` or `false`), or
//! the context's value of it; text where none says otherwise. Given as text, `false` was true
//! to every `{% if %}` and `N * 2` of `3` was `33`, with no word.

use indexmap::IndexMap;
use serde_json::Value;

use crate::compiled::CompileError;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::model::{Context, KindFrom, PlaceholderKind, StandardPlaceholder};
use crate::pointer::child_pointer;
use crate::problem::Problem;
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;

/// Each set value, read as the type of the placeholder it replaces; the error of the first
/// that does not read as one.
pub(super) fn typed(
    workspace: &Workspace,
    variant: &EffectiveVariant,
    context: &Context,
    set: &IndexMap<String, String>,
) -> Result<Vec<(String, Value)>, CompileError> {
    let mut typed = Vec::with_capacity(set.len());
    for (name, text) in set {
        let (from, replaced) = replaced(workspace, Some(variant), context, name);
        let kind = replaced
            .as_ref()
            .map_or(PlaceholderKind::Text, PlaceholderKind::of);
        let value = match kind.read(text) {
            Ok(value) => value,
            Err(reason) => {
                // Said at the declaration that gives the type, where one does.
                let span = match &from {
                    KindFrom::Variant(holder) => workspace
                        .variants
                        .get(holder.as_str())
                        .map(|entry| entry.value_span(&child_pointer("/placeholders", name))),
                    KindFrom::Standard | KindFrom::Context => None,
                };
                let problem = Problem::SetValueDoesNotFit {
                    name: name.clone(),
                    text: text.clone(),
                    expected: kind,
                    from,
                    reason,
                };
                return Err(match span {
                    Some(span) => {
                        let mut diagnostics = Diagnostics::default();
                        diagnostics.push(Diagnostic::new(problem, span));
                        CompileError::Diagnostics(diagnostics)
                    }
                    None => CompileError::Selection(problem),
                });
            }
        };
        typed.push((name.clone(), value));
    }
    Ok(typed)
}

/// The value a value set as `name` replaces, and where that comes from: the variant's
/// declaration, else a standard placeholder's value (`YOLO` is `true` or `false`), else the
/// context's placeholder; `None` for a name none of them gives. A set value is read as its
/// type, and the stable-prefix probe changes it by its type.
pub(crate) fn replaced(
    workspace: &Workspace,
    variant: Option<&EffectiveVariant>,
    context: &Context,
    name: &str,
) -> (KindFrom, Option<Value>) {
    if let Some(variant) = variant
        && let Some(value) = variant.variant.placeholders.get(name)
    {
        let holder = declaring(workspace, variant, name).to_string();
        return (KindFrom::Variant(holder), Some(value.clone()));
    }
    match StandardPlaceholder::named(name).filter(|standard| standard.name() == name) {
        Some(standard) => (
            KindFrom::Standard,
            standard.value(context, variant.map_or("", EffectiveVariant::family), None),
        ),
        None => (KindFrom::Context, context.placeholders.get(name).cloned()),
    }
}

/// The variant of the chain (the variant, then its ancestors) that declares a placeholder:
/// the nearest, whose value the merged variant holds.
fn declaring<'v>(workspace: &Workspace, variant: &'v EffectiveVariant, name: &str) -> &'v str {
    variant
        .chain
        .iter()
        .find(|id| {
            workspace
                .variants
                .get(id.as_str())
                .is_some_and(|entry| entry.value.placeholders.contains_key(name))
        })
        .map_or(variant.id(), String::as_str)
}
