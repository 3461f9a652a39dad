//! Token budgets: a compiled prompt over its variant's `max_prompt_tokens` (or the manifest's
//! default) is an error naming the family, the contexts over budget with their totals, and
//! the largest top-level sections of the worst one. One error per family and budget, however
//! many contexts exceed it.
//!
//! A variant with native tool calls sends its tool definitions with every request, and they
//! take room in the context window as the prompt does: its budget counts both, the
//! definitions as the request carries them ([`definitions_sent`]), and the error says how
//! much of each total is prompt and how much definitions.

use crate::compiled::{Compiled, Section};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::problem::{BudgetCount, Problem};
use crate::span::Span;
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;

/// How many sections an over-budget error names.
const LARGEST: usize = 3;

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

/// A compile's tool definitions as a request carries them: the JSON of the dialect the
/// compile used, written compactly (as an HTTP client sends it, not as the pretty-printed
/// `.tools.json` file); `None` for a variant without native tool calls. What a provider
/// counts of them may differ by a few tokens per tool (each wraps them in its own format), as
/// the counts of families not in `tokens.exact` do: an estimate of the room they take.
pub fn definitions_sent(compiled: &Compiled) -> Option<String> {
    compiled
        .tool_definitions
        .as_ref()
        .and_then(|definitions| serde_json::to_string(definitions).ok())
}

/// What checking a prompt's budget needs: nothing (no budget, or a bound on its count within
/// it), a count already known, or a count not known yet, which loads the encoding's tables.
/// For a native variant, the count is of the prompt and its tool definitions together.
pub enum Needs {
    Nothing,
    Known(usize),
    Count(crate::tokens::Encoding),
}

pub fn needs(workspace: &Workspace, variant: &EffectiveVariant, compiled: &Compiled) -> Needs {
    let Some((budget, _)) = budget_of(workspace, variant) else {
        return Needs::Nothing;
    };
    let definitions = definitions_sent(compiled);
    let definitions = definitions.as_deref().unwrap_or("");
    // A token is at least one byte: a prompt (with its definitions) no longer than the
    // budget in bytes is within it, and nothing needs counting.
    if compiled.prompt.len().saturating_add(definitions.len()) <= budget {
        return Needs::Nothing;
    }
    let encoding = workspace.settings().tokens.encoding_for(&compiled.family);
    // Nor is one whose count is bounded within it without the tables: the definitions'
    // bound, and the prompt's within what that leaves.
    let definitions_bound = if definitions.is_empty() {
        0
    } else {
        encoding.at_most(definitions)
    };
    if let Some(room) = budget.checked_sub(definitions_bound)
        && encoding.within(&compiled.prompt, room)
    {
        return Needs::Nothing;
    }
    let known_definitions = if definitions.is_empty() {
        Some(0)
    } else {
        encoding.known_count(definitions)
    };
    match (encoding.known_count(&compiled.prompt), known_definitions) {
        (Some(prompt), Some(definitions)) => Needs::Known(prompt.saturating_add(definitions)),
        _ => Needs::Count(encoding),
    }
}

/// One compiled prompt over its budget.
#[derive(Clone, Debug)]
pub struct OverBudget {
    family: String,
    context: String,
    /// The prompt's tokens with its tool definitions'.
    tokens: usize,
    /// For a native variant: the prompt's tokens and its tool definitions'.
    parts: Option<(usize, usize)>,
    budget: usize,
    encoding: &'static str,
    exact: bool,
    largest: Vec<(String, usize)>,
    span: Span,
}

/// Whether a prompt (with its tool definitions) is over its budget, and by how much.
pub fn check_budget(
    workspace: &Workspace,
    variant: &EffectiveVariant,
    compiled: &Compiled,
    context: &str,
) -> Option<OverBudget> {
    let tokens = match needs(workspace, variant, compiled) {
        Needs::Nothing => return None,
        Needs::Known(tokens) => tokens,
        // Past the cap, the count is not known: `over_budget` tells it as over the cap.
        Needs::Count(encoding) => {
            let cap = budget_of(workspace, variant).map_or(usize::MAX, |(budget, _)| cap(budget));
            counted_within(encoding, compiled, cap).map_or(usize::MAX, |(prompt, definitions)| {
                prompt.saturating_add(definitions)
            })
        }
    };
    over_budget(workspace, variant, compiled, context, tokens)
}

/// The tokens of the prompt and of its tool definitions (0 without), if together they are
/// at most `limit`.
fn counted_within(
    encoding: crate::tokens::Encoding,
    compiled: &Compiled,
    limit: usize,
) -> Option<(usize, usize)> {
    let prompt = encoding.count_within(&compiled.prompt, limit)?;
    let definitions = match definitions_sent(compiled) {
        Some(definitions) => encoding.count_within(&definitions, limit.saturating_sub(prompt))?,
        None => 0,
    };
    Some((prompt, definitions))
}

/// How far over its budget a prompt's count is told: past this, it is "over" it. Counting
/// reads the prompt only until the count passes it, so that a prompt of megabytes over a
/// budget of thousands is not counted to its end (a third of a second each, in every
/// compile of a matrix).
pub fn cap(budget: usize) -> usize {
    budget.saturating_mul(2).saturating_add(1000)
}

/// [`check_budget`] with the prompt's count in hand.
pub fn over_budget(
    workspace: &Workspace,
    variant: &EffectiveVariant,
    compiled: &Compiled,
    context: &str,
    tokens: usize,
) -> Option<OverBudget> {
    let (budget, span) = budget_of(workspace, variant)?;
    let settings = &workspace.settings().tokens;
    let encoding = settings.encoding_for(&compiled.family);
    if tokens <= budget {
        return None;
    }
    let cap = cap(budget);
    // A count known from before (the cache file, an earlier count in the process) may be
    // past the cap: told, and sorted, as one counted now is, so the report is the same
    // whatever was counted before.
    let tokens = tokens.min(cap.saturating_add(1));
    // A native variant's total is told as its prompt and its definitions, each counted up to
    // the cap (each is known by now, or as cheap to count as the total was).
    let parts = definitions_sent(compiled).map(|definitions| {
        let part = |text: &str| {
            encoding
                .count_within(text, cap)
                .unwrap_or(cap.saturating_add(1))
        };
        (part(&compiled.prompt), part(&definitions))
    });
    let mut largest: Vec<(String, usize)> = top_level(workspace, &compiled.sections)
        .map(|section| {
            let tokens = encoding
                .count_within(&section.text, cap)
                .unwrap_or(cap.saturating_add(1));
            (section.id.clone(), tokens)
        })
        .collect();
    largest.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    largest.truncate(LARGEST);
    Some(OverBudget {
        family: compiled.family.clone(),
        context: context.to_string(),
        tokens,
        parts,
        budget,
        encoding: encoding.name(),
        exact: settings.is_exact(&compiled.family),
        largest,
        span,
    })
}

/// The sections that are in the prompt in their own right, not inside another section (a
/// section whose template reads its slot), so that their counts add up to at most the total.
fn top_level<'c>(
    workspace: &Workspace,
    sections: &'c [Section],
) -> impl Iterator<Item = &'c Section> {
    let inside = containers(workspace, sections);
    sections
        .iter()
        .filter(|section| section.included && !section.text.is_empty())
        .filter(move |section| !inside.contains_key(section.id.as_str()))
}

/// For each section shown inside another (its slot read by that one's template), the id of
/// the one that shows it.
pub fn containers<'c>(
    workspace: &Workspace,
    sections: &'c [Section],
) -> std::collections::HashMap<&'c str, &'c str> {
    let templates = &workspace.templates;
    let reads = |section: &Section| -> Vec<String> {
        let Some(name) = &section.template else {
            return Vec::new();
        };
        // What it includes or imports reads for it too.
        templates
            .ids()
            .find(|id| templates.name(*id) == name)
            .map(|id| {
                std::iter::once(id)
                    .chain(templates.used_by(id).iter().copied())
                    .flat_map(|template| templates.variables(template).iter().cloned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let included: Vec<&Section> = sections
        .iter()
        .filter(|section| section.included && !section.text.is_empty())
        .collect();
    let mut inside = std::collections::HashMap::new();
    for container in &included {
        for slot in reads(container) {
            if let Some(shown) = included
                .iter()
                .find(|section| section.slot == slot && section.id != container.id)
            {
                inside
                    .entry(shown.id.as_str())
                    .or_insert(container.id.as_str());
            }
        }
    }
    inside
}

/// One error per family and budget: the contexts over it, worst first, and the largest
/// sections of the worst.
pub fn report(mut over: Vec<OverBudget>) -> Diagnostics {
    over.sort_by(|a, b| {
        (a.span.source, a.span.start, &a.family)
            .cmp(&(b.span.source, b.span.start, &b.family))
            .then(b.tokens.cmp(&a.tokens))
            .then_with(|| a.context.cmp(&b.context))
    });
    let mut diagnostics = Diagnostics::default();
    let mut rest = over.as_slice();
    while let Some(worst) = rest.first() {
        let count = rest
            .iter()
            .take_while(|o| o.span == worst.span && o.family == worst.family)
            .count();
        let (group, after) = rest.split_at(count);
        diagnostics.push(Diagnostic::new(
            Problem::OverBudget {
                family: worst.family.clone(),
                budget: worst.budget,
                cap: cap(worst.budget),
                encoding: worst.encoding,
                exact: worst.exact,
                contexts: group
                    .iter()
                    .map(|o| BudgetCount {
                        context: o.context.clone(),
                        tokens: o.tokens,
                        parts: o.parts,
                    })
                    .collect(),
                largest: worst.largest.clone(),
            },
            worst.span,
        ));
        rest = after;
    }
    diagnostics
}
