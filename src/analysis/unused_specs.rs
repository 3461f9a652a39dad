//! Parts of tool and component files that no variant can use: a family's entry that no
//! variant of the family takes (it does not list the tool or component), and a parameter
//! whose `depends_on` names a tool that no variant offering it lists beside it. Both look
//! like they do something, and nothing says otherwise: the prompt simply lacks them.
//!
//! Asked by `validate` of a workspace without errors, whose lists are all known.

use std::collections::{BTreeSet, HashMap};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::pointer::child_pointer;
use crate::problem::{Problem, RefKind};
use crate::resolve::tool_spec::{family_chain, resolve_tool};
use crate::workspace::Workspace;
use crate::workspace::inheritance::{EffectiveVariant, effective};

pub fn check(workspace: &Workspace) -> Diagnostics {
    let variants: Vec<EffectiveVariant> = workspace
        .variants
        .keys()
        .filter(|id| workspace.ancestry_is_sound(id))
        .filter_map(|id| effective(&workspace.variants, id))
        .collect();
    let mut out = Diagnostics::default();
    // A variant whose ancestry is unsound was reported, and its lists are not known.
    if variants.len() != workspace.variants.len() {
        return out;
    }
    let families: BTreeSet<&str> = variants.iter().map(EffectiveVariant::family).collect();
    // The variants listing each tool, found in one pass over the lists rather than by a
    // search of every list for every tool (a thousand of each at scale).
    let mut listing: HashMap<&str, Vec<&EffectiveVariant>> = HashMap::new();
    for variant in &variants {
        for tool in variant.tools() {
            let variants = listing.entry(tool.as_str()).or_default();
            // A list naming a tool twice is an error of its own; the variant counts once.
            if !variants
                .last()
                .is_some_and(|last| std::ptr::eq(*last, variant))
            {
                variants.push(variant);
            }
        }
    }
    let listing = |id: &str| listing.get(id).map_or(&[][..], Vec::as_slice);
    tool_family_entries(workspace, &listing, &families, &mut out);
    component_family_entries(workspace, &variants, &families, &mut out);
    dependent_parameters(workspace, &listing, &mut out);
    out
}

/// A tool's `[families.F]` entry is taken by the variants of F that list the tool, and by
/// those of any family whose entry is `based_on` it.
fn tool_family_entries<'v>(
    workspace: &Workspace,
    listing: &impl Fn(&str) -> &'v [&'v EffectiveVariant],
    families: &BTreeSet<&str>,
    out: &mut Diagnostics,
) {
    for (id, entry) in &workspace.tools {
        let spec = &entry.value.spec;
        if spec.families.is_empty() {
            continue;
        }
        let taken: BTreeSet<&str> = listing(id)
            .iter()
            .flat_map(|variant| family_chain(spec, variant.family()))
            .collect();
        for family in spec.families.keys() {
            // A family no variant declares is an error of its own.
            if families.contains(family.as_str()) && !taken.contains(family.as_str()) {
                out.push(Diagnostic::new(
                    Problem::FamilyEntryUnused {
                        kind: RefKind::Tool,
                        id: id.clone(),
                        family: family.clone(),
                    },
                    entry.key_span(&child_pointer("/families", family)),
                ));
            }
        }
    }
}

/// A component's `[families.F]` template is taken by the variants of F that list the
/// component without overriding its template.
fn component_family_entries(
    workspace: &Workspace,
    variants: &[EffectiveVariant],
    families: &BTreeSet<&str>,
    out: &mut Diagnostics,
) {
    for (id, entry) in &workspace.components {
        for family in entry.value.families.keys() {
            let taken = variants.iter().any(|variant| {
                variant.family() == family
                    && variant.components().contains(id)
                    && !variant.templates.overrides.contains_key(id)
            });
            if families.contains(family.as_str()) && !taken {
                out.push(Diagnostic::new(
                    Problem::FamilyEntryUnused {
                        kind: RefKind::Component,
                        id: id.clone(),
                        family: family.clone(),
                    },
                    entry.key_span(&child_pointer("/families", family)),
                ));
            }
        }
    }
}

/// What the variants offering one parameter list beside its tool.
struct Offered {
    tool: String,
    parameter: String,
    /// Shared with the resolved parameter (a shared parameter's list is held once).
    depends_on: std::sync::Arc<[String]>,
    /// For each tool of `depends_on`, whether some variant offering the parameter lists it.
    listed: Vec<bool>,
    /// Some variant lists every tool it depends on.
    shown: bool,
}

/// A parameter is shown where every tool of its `depends_on` is enabled: with none of the
/// variants that offer it listing them all, it is in no prompt.
fn dependent_parameters<'v>(
    workspace: &Workspace,
    listing: &impl Fn(&str) -> &'v [&'v EffectiveVariant],
    out: &mut Diagnostics,
) {
    let mut offered: Vec<(crate::span::Span, Offered)> = Vec::new();
    let mut index: HashMap<crate::span::Span, usize> = HashMap::new();
    // Each variant's tools as a set, made once: a list searched (or copied) for every tool
    // using a shared parameter took a workspace of 6,000 tools past 5 GB.
    let mut tool_sets: HashMap<&str, std::collections::HashSet<&str>> = HashMap::new();
    for (id, entry) in &workspace.tools {
        // Only a tool with a parameter that may depend on others is resolved: a parameter
        // of its own with `depends_on`, or a shared one, whose definition may have it.
        let may_depend = entry.value.spec.parameter_lists().any(|(_, list)| {
            list.iter().any(|p| {
                p.use_shared.is_some() || p.depends_on.as_ref().is_some_and(|d| !d.is_empty())
            })
        });
        if !may_depend {
            continue;
        }
        // The variants listing the tool, by the family entries their view of it applies:
        // every family without an entry of its own sees the generic spec, resolved once.
        let spec = &entry.value.spec;
        let mut by_view: Vec<(Vec<&str>, &str, Vec<&EffectiveVariant>)> = Vec::new();
        for &variant in listing(id) {
            let view = family_chain(spec, variant.family());
            match by_view.iter_mut().find(|(seen, _, _)| *seen == view) {
                Some((_, _, listing)) => listing.push(variant),
                None => by_view.push((view, variant.family(), vec![variant])),
            }
        }
        for (_, family, listing) in by_view {
            let Some(tool) = resolve_tool(workspace, id, family) else {
                continue;
            };
            for parameter in tool.parameters.iter().filter(|p| !p.depends_on.is_empty()) {
                let at = *index.entry(parameter.span).or_insert_with(|| {
                    offered.push((
                        parameter.span,
                        Offered {
                            tool: id.clone(),
                            parameter: parameter.name.clone(),
                            depends_on: parameter.depends_on.clone(),
                            listed: vec![false; parameter.depends_on.len()],
                            shown: false,
                        },
                    ));
                    offered.len() - 1
                });
                let state = &mut offered[at].1;
                for variant in &listing {
                    let tools = tool_sets
                        .entry(variant.id())
                        .or_insert_with(|| variant.tools().iter().map(String::as_str).collect());
                    let mut all = true;
                    for (needed, listed) in parameter.depends_on.iter().zip(&mut state.listed) {
                        if tools.contains(needed.as_str()) {
                            *listed = true;
                        } else {
                            all = false;
                        }
                    }
                    state.shown |= all;
                }
            }
        }
    }
    for (entry, state) in offered.into_iter().filter(|(_, state)| !state.shown) {
        // At its `depends_on`, where the parameter's own entry writes it (a shared
        // parameter's is in the manifest: then at the entry that uses it).
        let span = workspace
            .tools
            .get(&state.tool)
            .and_then(|tool| {
                tool.value
                    .spec
                    .parameter_lists()
                    .find_map(|(pointer, list)| {
                        list.iter().enumerate().find_map(|(index, parameter)| {
                            let at = format!("{pointer}/{index}");
                            (tool.value_span(&at) == entry && parameter.depends_on.is_some())
                                .then(|| tool.value_span(&format!("{at}/depends_on")))
                        })
                    })
            })
            .unwrap_or(entry);
        let missing: Vec<String> = state
            .depends_on
            .iter()
            .zip(&state.listed)
            .filter(|(_, listed)| !**listed)
            .map(|(needed, _)| needed.clone())
            .collect();
        out.push(Diagnostic::new(
            Problem::ParameterNeverShown {
                tool: state.tool,
                parameter: state.parameter,
                together: missing.is_empty(),
                missing: if missing.is_empty() {
                    state.depends_on.to_vec()
                } else {
                    missing
                },
            },
            span,
        ));
    }
}
