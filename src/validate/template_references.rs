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

/// The one known template whose path ends in `/name`.
fn in_one_folder(name: &str, known: &[String]) -> Option<String> {
    let mut found = known.iter().filter(|path| {
        path.strip_suffix(name)
            .is_some_and(|folder| folder.ends_with('/'))
    });
    let first = found.next()?;
    found.next().is_none().then(|| first.clone())
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
    let suggestions = crate::diagnostic::Suggestions::default();
    for (id, tags) in &graph.nodes {
        let name = templates.name(*id);
        for Tag { reference, target } in tags {
            let Some(span) = templates.span_in(name, reference.range.clone()) else {
                continue;
            };
            let tag = reference.kind.keyword();
            match &reference.name {
                None => out.push(Diagnostic::new(Problem::ComputedTemplateName { tag }, span)),
                Some(missing)
                    if target.is_none()
                        && !reference.ignore_missing
                        && !templates.did_not_compile(missing) =>
                {
                    // The name of a template written with `.`, `..` or `//` in it
                    // (`partials/./p.md`): templates are named by their plain path.
                    let plain = crate::confine::lexical(missing)
                        .to_str()
                        .map(|plain| plain.replace('\\', "/"))
                        .filter(|plain| plain != missing && known.contains(plain));
                    // A file of the workspace by that name, not read as a template: what
                    // kept it out is reported at it or its folder, and no other name is meant.
                    let on_disk = plain.is_none()
                        && reference.alternatives.len() <= 1
                        && crate::load::read::resolve_inside(
                            &workspace.root,
                            &workspace.root,
                            missing,
                        )
                        .is_some_and(|path| path.is_file());
                    out.push(Diagnostic::new(
                        Problem::UnknownTemplate {
                            tag,
                            name: missing.clone(),
                            others: reference.alternatives.iter().skip(1).cloned().collect(),
                            // A name without its folder (`verify.md` for
                            // `partials/verify.md`) is the likeliest, when one template has it.
                            suggestion: plain.or_else(|| {
                                (suggestions.allowed(span) && !on_disk)
                                    .then(|| {
                                        in_one_folder(missing, &known)
                                            .or_else(|| closest(missing, &known))
                                    })
                                    .flatten()
                            }),
                            on_disk,
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
    let edges = distinct_targets(graph.edges());
    let component = components(&edges);
    let same_component = |a: &TemplateId, b: &TemplateId| matches!((component.get(a), component.get(b)), (Some(x), Some(y)) if x == y);
    let mut reported: BTreeSet<Vec<TemplateId>> = BTreeSet::new();
    let mut report = |start: TemplateId, reference: &Reference, path: Vec<TemplateId>| {
        let mut members: Vec<TemplateId> = std::iter::once(start).chain(path.clone()).collect();
        let smallest = members.iter().map(|id| templates.name(*id)).min();
        // Reported from its first member by name only, and once.
        if smallest != Some(templates.name(start)) {
            return;
        }
        members.sort();
        members.dedup();
        if !reported.insert(members) {
            return;
        }
        let Some(span) = templates.span_in(templates.name(start), reference.range.clone()) else {
            return;
        };
        let chain = std::iter::once(start)
            .chain(path)
            .chain(std::iter::once(start))
            .map(|id| templates.name(id).to_string())
            .collect();
        out.push(Diagnostic::new(Problem::TemplateCycle { chain }, span));
    };
    // Each loop through templates is searched for from each of its tags, for the tightest
    // loop through each; a component of tens of thousands of templates would take hours, so
    // the searches share a budget. The first search of each component starts from its member
    // whose name sorts first, whose loop is always reported: every component with a loop is
    // reported at least once, whatever the budget.
    let mut budget = CYCLE_SEARCH_BUDGET;
    let mut searched = BTreeSet::new();
    let mut firsts: BTreeMap<usize, TemplateId> = BTreeMap::new();
    for (id, _) in &graph.nodes {
        if let Some(number) = component.get(id) {
            firsts.entry(*number).or_insert(*id);
        }
    }
    let looped = |start: &TemplateId| {
        edges
            .get(start)
            .into_iter()
            .flatten()
            .find(|(_, first)| same_component(start, first))
    };
    for start in firsts.values() {
        if let Some((reference, first)) = looped(start) {
            searched.insert((*start, *first));
            if let Some(path) = path_back(&edges, &same_component, *first, *start, &mut budget) {
                report(*start, reference, path);
            }
        }
    }
    for (start, targets) in &edges {
        for (reference, first) in targets {
            // A tag to a template of another component never leads back.
            if !same_component(start, first) || !searched.insert((*start, *first)) {
                continue;
            }
            if budget == 0 {
                return;
            }
            if let Some(path) = path_back(&edges, &same_component, *first, *start, &mut budget) {
                report(*start, reference, path);
            }
        }
    }
}

/// How many templates the searches for loops may visit, all together.
const CYCLE_SEARCH_BUDGET: usize = 1_000_000;

/// Each template's first tag to each template it names: more tags naming the same template
/// find the same loops (a partial including another 120 000 times searched 120 000 times).
fn distinct_targets(edges: Edges<'_>) -> Edges<'_> {
    edges
        .into_iter()
        .map(|(id, targets)| {
            let mut seen = BTreeSet::new();
            let targets = targets
                .into_iter()
                .filter(|(_, target)| seen.insert(*target))
                .collect();
            (id, targets)
        })
        .collect()
}

/// The strongly connected component of each template that has a tag to another, numbered.
fn components(edges: &Edges<'_>) -> BTreeMap<TemplateId, usize> {
    let mut graph = petgraph::graphmap::DiGraphMap::<TemplateId, ()>::new();
    for (from, targets) in edges {
        graph.add_node(*from);
        for (_, to) in targets {
            graph.add_edge(*from, *to, ());
        }
    }
    petgraph::algo::kosaraju_scc(&graph)
        .into_iter()
        .enumerate()
        .flat_map(|(number, members)| members.into_iter().map(move |id| (id, number)))
        .collect()
}

/// The templates from `from` to (not including) `to`, following tags breadth first within
/// their component: the shortest way back, so the reported loop is the tightest one. Each
/// template visited spends one of `budget`; `None` when there is no way back or the budget
/// ran out.
fn path_back(
    edges: &Edges<'_>,
    same_component: &impl Fn(&TemplateId, &TemplateId) -> bool,
    from: TemplateId,
    to: TemplateId,
    budget: &mut usize,
) -> Option<Vec<TemplateId>> {
    let mut came_from: BTreeMap<TemplateId, Option<TemplateId>> = BTreeMap::from([(from, None)]);
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(current) = queue.pop_front() {
        *budget = budget.checked_sub(1)?;
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
            if same_component(next, &to) && !came_from.contains_key(next) {
                came_from.insert(*next, Some(current));
                queue.push_back(*next);
            }
        }
    }
    None
}

/// A partial that no tag names renders nowhere. When any template computes a name, that
/// name may be the partial's, so nothing is said; nor when a template did not compile, whose
/// tags (reported in its syntax error) may name it.
fn partials_are_used(workspace: &Workspace, graph: &Graph<'_>, out: &mut Diagnostics) {
    if workspace.templates.some_did_not_compile() {
        return;
    }
    let computed = graph
        .nodes
        .iter()
        .flat_map(|(_, tags)| tags)
        .any(|tag| tag.reference.name.is_none());
    if computed {
        return;
    }
    // Every name of an include's list counts as used, those after the one that renders
    // too: a list names its fallbacks, there for a workspace that lacks the first.
    let templates = &workspace.templates;
    let named: BTreeSet<TemplateId> = graph
        .nodes
        .iter()
        .flat_map(|(_, tags)| tags)
        .flat_map(|tag| {
            tag.target.into_iter().chain(
                tag.reference
                    .alternatives
                    .iter()
                    .filter_map(|name| templates.by_name(name)),
            )
        })
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
