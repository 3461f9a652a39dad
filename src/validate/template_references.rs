//! Templates that name other templates (`{% include %}`, `{% import %}`, `{% from %}`,
//! `{% extends %}`): every name must exist, no template may come back to itself, a computed
//! name is flagged because nothing can follow it, and a partial that nothing names is
//! probably left over.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::namespace::closest;
use crate::problem::Problem;
use crate::templates::TemplateId;
use crate::templates::references::Reference;
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let graph = Graph::new(workspace);
    names_exist(workspace, &graph, out);
    no_cycles(workspace, &graph, out);
    partials_are_used(workspace, &graph, out);
}

/// Each template's tags, by template name order, with what each constant name resolves to.
struct Graph<'w> {
    /// Templates in name order, each with its tags.
    nodes: Vec<(TemplateId, Vec<Tag<'w>>)>,
}

/// One tag and the template its name resolves to, if any.
#[derive(Clone, Copy)]
struct Tag<'w> {
    reference: &'w Reference,
    target: Option<TemplateId>,
}

/// Each template's tags that resolve, with their targets.
type Edges<'w> = BTreeMap<TemplateId, Vec<(&'w Reference, TemplateId)>>;

impl<'w> Graph<'w> {
    fn new(workspace: &'w Workspace) -> Self {
        let templates = &workspace.templates;
        let mut ids: Vec<TemplateId> = templates.ids().collect();
        ids.sort_by_key(|id| templates.name(*id));
        let nodes = ids
            .into_iter()
            .map(|id| {
                let references = templates
                    .references(id)
                    .iter()
                    .map(|reference| Tag {
                        reference,
                        target: reference.name.as_deref().and_then(|n| templates.by_name(n)),
                    })
                    .collect();
                (id, references)
            })
            .collect();
        Self { nodes }
    }

    fn edges(&self) -> Edges<'w> {
        self.nodes
            .iter()
            .map(|(id, tags)| {
                let targets = tags
                    .iter()
                    .filter_map(|tag| Some((tag.reference, tag.target?)))
                    .collect();
                (*id, targets)
            })
            .collect()
    }
}

/// A constant name must name a registered template (unless `ignore missing` says it may
/// not); a computed one is a warning, since nothing downstream can follow it.
fn names_exist(workspace: &Workspace, graph: &Graph<'_>, out: &mut Diagnostics) {
    let templates = &workspace.templates;
    let known: Vec<String> = templates
        .names()
        .filter(|name| !name.contains('#') && !name.starts_with("<built-in>"))
        .map(str::to_string)
        .collect();
    for (id, tags) in &graph.nodes {
        let name = templates.name(*id);
        for Tag { reference, target } in tags {
            let Some(span) = templates.span_in(name, reference.range.clone()) else {
                continue;
            };
            let tag = reference.kind.keyword();
            match &reference.name {
                None => out.push(Diagnostic::new(Problem::ComputedTemplateName { tag }, span)),
                Some(missing) if target.is_none() && !reference.ignore_missing => {
                    out.push(Diagnostic::new(
                        Problem::UnknownTemplate {
                            tag,
                            name: missing.clone(),
                            suggestion: closest(missing, &known),
                        },
                        span,
                    ));
                }
                Some(_) => {}
            }
        }
    }
}

/// A template that reaches itself through its tags would recurse until minijinja's
/// recursion limit: reported once per cycle, at the tag of the member whose name sorts
/// first, with the whole loop.
fn no_cycles(workspace: &Workspace, graph: &Graph<'_>, out: &mut Diagnostics) {
    let templates = &workspace.templates;
    let edges = graph.edges();
    let mut reported: BTreeSet<Vec<TemplateId>> = BTreeSet::new();
    for (start, targets) in &edges {
        for (reference, first) in targets {
            let Some(path) = path_back(&edges, *first, *start) else {
                continue;
            };
            let mut members: Vec<TemplateId> =
                std::iter::once(*start).chain(path.clone()).collect();
            let smallest = members.iter().map(|id| templates.name(*id)).min();
            // Reported from its first member by name only, and once.
            if smallest != Some(templates.name(*start)) {
                continue;
            }
            members.sort();
            members.dedup();
            if !reported.insert(members) {
                continue;
            }
            let Some(span) = templates.span_in(templates.name(*start), reference.range.clone())
            else {
                continue;
            };
            let chain = std::iter::once(*start)
                .chain(path)
                .chain(std::iter::once(*start))
                .map(|id| templates.name(id).to_string())
                .collect();
            out.push(Diagnostic::new(Problem::TemplateCycle { chain }, span));
        }
    }
}

/// The templates from `from` to (not including) `to`, following tags breadth first: the
/// shortest way back, so the reported loop is the tightest one.
fn path_back(edges: &Edges<'_>, from: TemplateId, to: TemplateId) -> Option<Vec<TemplateId>> {
    let mut came_from: BTreeMap<TemplateId, Option<TemplateId>> = BTreeMap::from([(from, None)]);
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(current) = queue.pop_front() {
        if current == to {
            let mut path = Vec::new();
            let mut at = came_from.get(&current).copied().flatten();
            while let Some(step) = at {
                path.push(step);
                at = came_from.get(&step).copied().flatten();
            }
            path.reverse();
            return Some(path);
        }
        for (_, next) in edges.get(&current).into_iter().flatten() {
            if !came_from.contains_key(next) {
                came_from.insert(*next, Some(current));
                queue.push_back(*next);
            }
        }
    }
    None
}

/// A partial that no tag names renders nowhere. When any template computes a name, that
/// name may be the partial's, so nothing is said.
fn partials_are_used(workspace: &Workspace, graph: &Graph<'_>, out: &mut Diagnostics) {
    let computed = graph
        .nodes
        .iter()
        .flat_map(|(_, tags)| tags)
        .any(|tag| tag.reference.name.is_none());
    if computed {
        return;
    }
    let named: BTreeSet<TemplateId> = graph
        .nodes
        .iter()
        .flat_map(|(_, tags)| tags.iter().filter_map(|tag| tag.target))
        .collect();
    for partial in &workspace.partials {
        if named.contains(partial) {
            continue;
        }
        let Some(span) = workspace.templates.span_of(*partial) else {
            continue;
        };
        out.push(Diagnostic::new(
            Problem::UnusedPartial {
                name: workspace.templates.name(*partial).to_string(),
            },
            span,
        ));
    }
}
