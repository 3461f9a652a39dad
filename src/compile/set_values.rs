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
        let declared = variant.variant.placeholders.get(name);
        let (kind, from) = match (declared, StandardPlaceholder::named(name)) {
            (Some(value), _) => (
                PlaceholderKind::of(value),
                KindFrom::Variant(declaring(workspace, variant, name).to_string()),
            ),
            (None, Some(standard)) if standard.name() == name => {
                (standard.kind(), KindFrom::Standard)
            }
            _ => (
                context
                    .placeholders
                    .get(name)
                    .map_or(PlaceholderKind::Text, PlaceholderKind::of),
                KindFrom::Context,
            ),
        };
        let Some(value) = kind.read(text) else {
            let problem = Problem::SetValueDoesNotFit {
                name: name.clone(),
                text: text.clone(),
                expected: kind,
                from,
            };
            return Err(match declared {
                // Said at the declaration that gives the type.
                Some(_) => {
                    let holder = declaring(workspace, variant, name);
                    let span = workspace
                        .variants
                        .get(holder)
                        .map(|entry| entry.value_span(&child_pointer("/placeholders", name)));
                    match span {
                        Some(span) => {
                            let mut diagnostics = Diagnostics::default();
                            diagnostics.push(Diagnostic::new(problem, span));
                            CompileError::Diagnostics(diagnostics)
                        }
                        None => CompileError::Selection(problem),
                    }
                }
                None => CompileError::Selection(problem),
            });
        };
        typed.push((name.clone(), value));
    }
    Ok(typed)
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
