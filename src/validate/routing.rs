//! Versions, labels and routing rules: each family's versions are distinct, labels and
//! `family@version` references name versions that exist, a family has one `match`, and
//! `routing.order` and the `match` conditions agree.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::entry::Entry;
use crate::model::{Label, Variant};
use crate::pointer::child_pointer;
use crate::problem::{LabelKind, Problem, RoutingProblem};
use crate::span::Span;
use crate::workspace::catalog::{Catalog, version_of};
use crate::workspace::inheritance::{chain, merged_spec};
use crate::workspace::{VariantDef, Workspace};

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    // Variants whose chain is broken were reported; what they inherit is unknown.
    let mut merged: Vec<(&Entry<VariantDef>, Variant)> = workspace
        .variants
        .iter()
        .filter(|(id, _)| workspace.ancestry_is_sound(id))
        .filter_map(|(id, entry)| Some((entry, merged_spec(&workspace.variants, id)?)))
        .collect();
    // Ancestors before their children, so a child that repeats its parent's version or
    // changes its label is the one reported.
    merged.sort_by_key(|(entry, _)| chain(&workspace.variants, &entry.value.id).len());
    let catalog = Catalog::new(merged.iter().map(|(_, variant)| variant));
    versions_are_distinct(&merged, out);
    labels_name_versions(&catalog, &merged, out);
    one_match_per_family(workspace, out);
    if workspace.valid_manifest().is_some() {
        routing_order(workspace, out);
        references_name_versions(workspace, &catalog, out);
    }
}

/// Where a variant's inherited value is blamed: its own field when it sets one, else its id.
fn own_or_id(entry: &Entry<VariantDef>, pointer: &str, own: bool) -> Span {
    if own {
        entry.value_span(pointer)
    } else {
        entry.value_span("/id")
    }
}

fn versions_are_distinct(merged: &[(&Entry<VariantDef>, Variant)], out: &mut Diagnostics) {
    // By canonical version: `2.01` and `2.1` compare equal, so they are one version.
    let mut seen: BTreeMap<(&str, String), (&Entry<VariantDef>, &Variant)> = BTreeMap::new();
    for (entry, variant) in merged {
        let key = (
            variant.family_or_id(),
            crate::model::version::canonical(version_of(variant)),
        );
        match seen.get(&key) {
            Some((first, first_variant)) => out.push(
                Diagnostic::new(
                    Problem::Routing(RoutingProblem::DuplicateVersion {
                        family: key.0.to_string(),
                        version: variant.version.clone(),
                        other: first.value.id.clone(),
                        other_version: first_variant.version.clone(),
                    }),
                    own_or_id(entry, "/version", entry.value.version.is_some()),
                )
                .label(
                    own_or_id(first, "/version", first.value.version.is_some()),
                    LabelKind::FirstVariantOfFamily,
                ),
            ),
            None => {
                seen.insert(key, (entry, variant));
            }
        }
    }
}

fn labels_name_versions(
    catalog: &Catalog<'_>,
    merged: &[(&Entry<VariantDef>, Variant)],
    out: &mut Diagnostics,
) {
    for (entry, variant) in merged {
        let family = variant.family_or_id();
        // A label's own value is checked where it is written; an inherited one where it
        // came from.
        for (name, label) in entry.value.labels.iter().flatten() {
            let span = entry.value_span(&child_pointer("/labels", name));
            match label {
                Label::Dropped(true) => out.error(
                    Problem::Routing(RoutingProblem::LabelWithoutVersion {
                        label: name.clone(),
                    }),
                    span,
                ),
                Label::Dropped(false) => {}
                Label::Version(wanted) => {
                    if let Err(problem) = catalog.version(family, wanted) {
                        out.error(problem, span);
                    }
                }
            }
        }
        let own_label = |name: &str| {
            entry
                .value
                .labels
                .as_ref()
                .is_some_and(|labels| labels.contains_key(name))
        };
        for (name, version) in variant.label_versions() {
            // An inherited label is checked against this variant's family, at its `extends`:
            // it came from a variant that may serve another family.
            if !own_label(name)
                && catalog.version(family, version).is_err()
                && let Some(parent) = entry.value.extends.as_ref()
            {
                out.error(
                    Problem::Routing(RoutingProblem::InheritedLabelVersion {
                        family: family.to_string(),
                        label: name.to_string(),
                        version: version.to_string(),
                        parent: parent.clone(),
                        known: catalog.versions(family),
                    }),
                    own_or_id(entry, "/extends", true),
                );
                continue;
            }
            let Some(first) = catalog.label(family, name) else {
                continue;
            };
            if first != version {
                let owner = catalog
                    .members(family)
                    .iter()
                    .find(|member| member.label_versions().any(|(n, _)| n == name))
                    .map_or(String::new(), |member| member.id.clone());
                let own = entry
                    .value
                    .labels
                    .as_ref()
                    .is_some_and(|labels| labels.contains_key(name));
                out.error(
                    Problem::Routing(RoutingProblem::LabelConflict {
                        family: family.to_string(),
                        label: name.to_string(),
                        version: version.to_string(),
                        other: owner,
                        other_version: first.to_string(),
                    }),
                    own_or_id(entry, &child_pointer("/labels", name), own),
                );
            }
        }
    }
}

/// Every variant of a family that sets `match` sets the same one.
fn one_match_per_family(workspace: &Workspace, out: &mut Diagnostics) {
    let mut first: BTreeMap<&str, &Entry<VariantDef>> = BTreeMap::new();
    for entry in workspace.variants.values() {
        let Some(condition) = &entry.value.route_match else {
            continue;
        };
        let family = entry.value.family_or_id();
        match first.get(family) {
            Some(earlier) if earlier.value.route_match.as_ref() != Some(condition) => out.push(
                Diagnostic::new(
                    Problem::Routing(RoutingProblem::MatchConflict {
                        family: family.to_string(),
                        other: earlier.value.id.clone(),
                    }),
                    entry.value_span("/match"),
                )
                .label(earlier.value_span("/match"), LabelKind::FirstDefinedHere),
            ),
            Some(_) => {}
            None => {
                first.insert(family, entry);
            }
        }
    }
}

/// `routing.order` lists each family with a `match` once, and only those.
fn routing_order(workspace: &Workspace, out: &mut Diagnostics) {
    let manifest = &workspace.manifest;
    let order = &manifest.value.routing.order;
    let has_match = |family: &str| {
        workspace
            .variants
            .values()
            .any(|entry| entry.value.family_or_id() == family && entry.value.route_match.is_some())
    };
    let families = workspace.families();
    for (index, family) in order.iter().enumerate() {
        let span = manifest.value_span(&format!("/routing/order/{index}"));
        let family_problem = |problem| Problem::Routing(problem);
        if let Some(first) = order[..index].iter().position(|earlier| earlier == family) {
            out.push(
                Diagnostic::new(
                    family_problem(RoutingProblem::RoutedTwice {
                        family: family.clone(),
                    }),
                    span,
                )
                .label(
                    manifest.value_span(&format!("/routing/order/{first}")),
                    LabelKind::FirstListedHere,
                ),
            );
        } else if families.contains(family)
            && !has_match(family)
            // A variant file of this family that failed validation may be the one with the
            // `match`: its own error is the root cause, said already.
            && !workspace.invalid.may_be_of_family(family)
        {
            out.error(
                family_problem(RoutingProblem::RoutedWithoutMatch {
                    family: family.clone(),
                }),
                span,
            );
        }
    }
    // An unknown name in the order (reported with the family meant) is taken for that family:
    // the family is not said again to be missing. And a family is said once, at its first
    // variant with a `match`, however many of its variants set one.
    let meant: BTreeSet<String> = order
        .iter()
        .filter(|listed| !families.contains(*listed))
        .filter_map(|listed| crate::namespace::closest(listed, &families))
        .collect();
    let mut said: BTreeSet<&str> = BTreeSet::new();
    for entry in workspace.variants.values() {
        let family = entry.value.family_or_id();
        if entry.value.route_match.is_some()
            && !order.iter().any(|listed| listed == family)
            && !meant.contains(family)
            && said.insert(family)
        {
            out.error(
                Problem::Routing(RoutingProblem::MatchNotRouted {
                    family: family.to_string(),
                }),
                entry.value_span("/match"),
            );
        }
    }
}

/// Build entries' `family@version` and `routing.label` name what exists.
fn references_name_versions(workspace: &Workspace, catalog: &Catalog<'_>, out: &mut Diagnostics) {
    let manifest = &workspace.manifest;
    for (index, entry) in manifest.value.build.entries.iter().flatten().enumerate() {
        let Some((family, wanted)) = entry.variant.split_once('@') else {
            continue;
        };
        // An unknown family is reported with the other references.
        if catalog.members(family).is_empty() {
            continue;
        }
        if let Err(problem) = catalog.version(family, wanted) {
            out.error(
                problem,
                manifest.value_span(&format!("/build/entries/{index}/variant")),
            );
        }
    }
    // The labels of a variant that did not load, or whose ancestry is broken, are unknown
    // (the catalog leaves it out): the problem was reported where it is.
    let labels_known = !workspace.invalid.variant_invalid
        && workspace
            .variants
            .keys()
            .all(|id| workspace.ancestry_is_sound(id));
    if let Some(label) = manifest
        .value
        .routing
        .label
        .as_ref()
        .filter(|_| labels_known)
    {
        let labels = catalog.all_labels();
        if !labels.contains(label) {
            out.error(
                Problem::Routing(RoutingProblem::UnknownLabel {
                    label: label.clone(),
                    family: None,
                    suggestion: crate::namespace::closest(label, &labels),
                    known: labels.clone(),
                }),
                manifest.value_span("/routing/label"),
            );
        }
    }
}
