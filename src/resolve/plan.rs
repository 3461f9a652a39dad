//! What one compile contains, and why: the components and tools in order, each included or
//! left out with the reason (an override, a condition and the values it saw, a missing
//! dependency).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use minijinja::Value;

use crate::compiled::SourceRange;
use crate::diagnostic::Diagnostics;
use crate::resolve::conditions::{ConditionFuel, Conditions};
use crate::resolve::scope::Scope;
use crate::resolve::tool_spec::{ResolvedParameter, ResolvedTool, has_family_view, resolve_tool};
use crate::span::Span;
use crate::templates::TemplateId;
use crate::templates::Templates;
use crate::templates::placement::SlotReaders;
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;
use crate::workspace::order::apply_order;
use crate::workspace::template_choice::{TemplateChoice, component_template, tool_format};

/// Why something is in the prompt or not.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    Included,
    DisabledByOverride,
    ConditionFalse {
        /// Shared with the condition's other reasons.
        condition: Arc<str>,
    },
    /// The tools of its `depends_on` that are not enabled, in order.
    MissingDependency {
        tools: Arc<[String]>,
    },
    /// A component whose slot no template the compile renders reads: only the templates of
    /// these components, none of which is in the prompt (see `templates::placement`).
    SlotNotRead {
        readers: Arc<[String]>,
        /// Some of them are in the prompt, but render before it: they read its slot while
        /// it is still empty.
        before: bool,
    },
    /// A `for_each` tool whose list holds no items here: no tool is offered, so it is not
    /// among `enabled_tools`, and a parameter depending on it is left out.
    NoItems {
        list: Arc<str>,
    },
    /// A section that rendered, but whose slot no render of the prompt read in this
    /// context: the templates that read it skip it here (under a condition that is false).
    SlotSkipped,
}

/// What a section in the prompt that rendered nothing says of itself, in the JSON output and
/// in `explain`.
pub const RENDERED_NOTHING: &str = "included, but its template rendered nothing in this context";

/// The most missing tools a reason names.
const MISSING_NAMED: usize = 8;

/// The one wording of each reason, for the JSON output and for `explain`.
impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Included => f.write_str("included"),
            Reason::DisabledByOverride => f.write_str("disabled by an override"),
            // Cut when long: the explanation gives the whole condition beside it.
            Reason::ConditionFalse { condition } => write!(
                f,
                "condition `{}` is false",
                crate::problem::shortened_quote(condition)
            ),
            Reason::MissingDependency { tools } => {
                // Named up to a few: a shared parameter may depend on thousands of tools,
                // and every tool that uses it would repeat the list.
                let named = &tools[..tools.len().min(MISSING_NAMED)];
                write!(
                    f,
                    "depends on tools that are not enabled: {}",
                    named.join(", ")
                )?;
                match tools.len() - named.len() {
                    0 => Ok(()),
                    more => write!(f, " and {more} more"),
                }
            }
            Reason::SlotSkipped => f.write_str(
                "rendered, but the templates that read its slot did not write it in this context",
            ),
            Reason::NoItems { list } => write!(
                f,
                "its `for_each` list `{}` holds no items here: no tool is offered",
                crate::problem::shortened_quote(list)
            ),
            Reason::SlotNotRead {
                readers,
                before: true,
            } => write!(
                f,
                "its slot is read only by `{}`, which {} before it, while the slot is still empty",
                readers.join("`, `"),
                if readers.len() == 1 {
                    "renders"
                } else {
                    "render"
                }
            ),
            Reason::SlotNotRead { readers, .. } => match &readers[..] {
                [] => f.write_str("no template of the prompt reads its slot"),
                [only] => write!(
                    f,
                    "its slot is read only by `{only}`, which is not in the prompt"
                ),
                many => write!(
                    f,
                    "its slot is read only by `{}`, which are not in the prompt",
                    many.join("`, `")
                ),
            },
        }
    }
}

/// A component of the variant's list, with the template it renders with: every component
/// the plan holds has one.
#[derive(Clone, Debug)]
pub struct PlannedComponent {
    pub id: String,
    pub slot: String,
    pub template: TemplateId,
    /// The template's name and where its text lies, as a compiled section reports them.
    pub template_name: String,
    pub source: Option<SourceRange>,
    pub choice: TemplateChoice,
    pub reason: Reason,
}

#[derive(Clone, Debug)]
pub struct PlannedTool {
    pub tool: Arc<ResolvedTool>,
    pub reason: Reason,
    pub parameters: Vec<(Arc<ResolvedParameter>, Reason)>,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub components: Vec<PlannedComponent>,
    pub tools: Vec<PlannedTool>,
}

impl Plan {
    pub fn enabled_tools(&self) -> impl Iterator<Item = &PlannedTool> {
        self.tools.iter().filter(|t| t.reason == Reason::Included)
    }

    /// About how many bytes the plan holds, with the list of enabled tool ids the scope
    /// gets from it: a memo of plans counts them, since a variant with a thousand tools makes
    /// a plan far larger than the context it was made for. The resolved tools it shares with
    /// its variant's outline count too: a remembered plan keeps them after the outline is
    /// forgotten. (Their parameters' extra JSON Schema keywords are left out.)
    pub fn held_bytes(&self) -> usize {
        let components: usize = self
            .components
            .iter()
            .map(|c| {
                size_of::<PlannedComponent>()
                    + c.id.len()
                    + c.slot.len()
                    + c.template_name.len()
                    + c.source.as_ref().map_or(0, |source| source.file.len())
                    + c.reason.held_bytes()
            })
            .sum();
        let tools: usize = self
            .tools
            .iter()
            .map(|t| {
                let parameters: usize = t
                    .parameters
                    .iter()
                    .map(|(_, reason)| {
                        size_of::<(Arc<ResolvedParameter>, Reason)>() + reason.held_bytes()
                    })
                    .sum();
                // An enabled tool's id is in the scope too, as a template value.
                let id = if t.reason == Reason::Included {
                    t.tool.id.len() + size_of::<Value>()
                } else {
                    0
                };
                let resolved = size_of::<ResolvedTool>()
                    + t.tool.id.len()
                    + t.tool.name.len()
                    + t.tool.source.file.len()
                    + t.tool
                        .parameters
                        .iter()
                        .map(|p| size_of::<ResolvedParameter>() + p.name.len())
                        .sum::<usize>();
                size_of::<PlannedTool>() + t.reason.held_bytes() + parameters + id + resolved
            })
            .sum();
        components + tools
    }
}

impl Reason {
    /// The bytes of the texts a reason holds.
    fn held_bytes(&self) -> usize {
        match self {
            Reason::Included | Reason::DisabledByOverride | Reason::SlotSkipped => 0,
            Reason::ConditionFalse { condition } | Reason::NoItems { list: condition } => {
                condition.len()
            }
            Reason::MissingDependency { tools: names }
            | Reason::SlotNotRead { readers: names, .. } => names
                .iter()
                .map(|name| size_of::<String>() + name.len())
                .sum(),
        }
    }
}

/// Included when the condition holds; a condition that fails to evaluate is reported and
/// counts as false.
fn decide(
    (conditions, fuel): (&Conditions<'_>, &ConditionFuel),
    condition: &Arc<str>,
    values: &Value,
    span: Span,
    diagnostics: &mut Diagnostics,
) -> Reason {
    match conditions.evaluate(condition, values, span, fuel) {
        Ok(true) => return Reason::Included,
        Ok(false) => {}
        Err(diagnostic) => diagnostics.push(diagnostic),
    }
    Reason::ConditionFalse {
        condition: Arc::clone(condition),
    }
}

/// What the compile of `variant` contains: the tools (whose enabled ids join the scope as
/// `enabled_tools`), their parameters, then the components, each with the reason for it.
pub fn plan(
    conditions: (&Conditions<'_>, &ConditionFuel),
    outline: &Outline,
    scope: &mut Scope,
    diagnostics: &mut Diagnostics,
) -> Plan {
    let values = scope.values();
    let mut tools: Vec<PlannedTool> = outline
        .tools
        .iter()
        .map(|outlined| {
            let mut reason = if outlined.disabled {
                Reason::DisabledByOverride
            } else if let Some((condition, span)) = &outlined.tool.when {
                decide(conditions, condition, &values, *span, diagnostics)
            } else {
                Reason::Included
            };
            if reason == Reason::Included
                && let Some(for_each) = &outlined.tool.for_each
                && !conditions
                    .0
                    .holds_items(&for_each.list, &values, conditions.1)
            {
                reason = Reason::NoItems {
                    list: Arc::from(for_each.list.as_str()),
                };
            }
            PlannedTool {
                tool: outlined.tool.clone(),
                reason,
                parameters: Vec::new(),
            }
        })
        .collect();
    let enabled: Vec<String> = tools
        .iter()
        .filter(|t| t.reason == Reason::Included)
        .map(|t| t.tool.id.clone())
        .collect();
    scope.insert_fact(
        crate::namespace::ENABLED_TOOLS,
        Value::from(enabled.clone()),
    );
    let enabled: HashSet<String> = enabled.into_iter().collect();
    let values = scope.values();
    let mut missing = MissingTools::default();
    for planned in &mut tools {
        planned.parameters = parameters(
            conditions,
            &planned.tool,
            &enabled,
            &mut missing,
            &values,
            diagnostics,
        );
    }
    let mut components: Vec<PlannedComponent> = outline
        .components
        .iter()
        .map(|outlined| {
            let reason = if outlined.disabled {
                Reason::DisabledByOverride
            } else if let Some((condition, span)) = &outlined.when {
                decide(conditions, condition, &values, *span, diagnostics)
            } else {
                Reason::Included
            };
            PlannedComponent {
                id: outlined.id.clone(),
                slot: outlined.slot.clone(),
                template: outlined.template,
                template_name: outlined.template_name.clone(),
                source: outlined.source.clone(),
                choice: outlined.choice,
                reason,
            }
        })
        .collect();
    // A section whose slot only sections left out read renders into nothing.
    let rendered: Vec<bool> = components
        .iter()
        .map(|planned| planned.reason == Reason::Included)
        .collect();
    let placed = outline.slot_readers.placed(&rendered);
    for (index, planned) in components.iter_mut().enumerate() {
        if rendered[index] && !placed[index] {
            let readers = outline.slot_readers.readers(index);
            // Readers in the prompt that render first are the ones to name; otherwise all.
            let early: Vec<usize> = readers
                .iter()
                .copied()
                .filter(|&reader| reader < index && placed[reader])
                .collect();
            let named = if early.is_empty() { readers } else { &early };
            planned.reason = Reason::SlotNotRead {
                readers: named
                    .iter()
                    .filter_map(|&reader| outline.components.get(reader))
                    .map(|reader| reader.id.clone())
                    .collect(),
                before: !early.is_empty(),
            };
        }
    }
    Plan { components, tools }
}

/// The tools of each `depends_on` list that are not enabled, found once per plan for a list
/// that many tools share (a shared parameter's), by where the list is held: each list is
/// held by the plan's tools until the plan is made, so no other list is at its address.
#[derive(Default)]
struct MissingTools(HashMap<*const String, Arc<[String]>>);

impl MissingTools {
    fn of(&mut self, depends_on: &Arc<[String]>, enabled: &HashSet<String>) -> Arc<[String]> {
        if depends_on.is_empty() {
            return Arc::default();
        }
        Arc::clone(self.0.entry(depends_on.as_ptr()).or_insert_with(|| {
            depends_on
                .iter()
                .filter(|tool| !enabled.contains(*tool))
                .cloned()
                .collect()
        }))
    }
}

/// A tool's parameters: each needs the tools it depends on, then its condition.
fn parameters(
    conditions: (&Conditions<'_>, &ConditionFuel),
    tool: &ResolvedTool,
    enabled: &HashSet<String>,
    missing_tools: &mut MissingTools,
    values: &Value,
    diagnostics: &mut Diagnostics,
) -> Vec<(Arc<ResolvedParameter>, Reason)> {
    tool.parameters
        .iter()
        .map(|parameter| {
            let missing = missing_tools.of(&parameter.depends_on, enabled);
            let reason = if !missing.is_empty() {
                Reason::MissingDependency { tools: missing }
            } else if let Some((condition, span)) = &parameter.when {
                decide(conditions, condition, values, *span, diagnostics)
            } else {
                Reason::Included
            };
            (parameter.clone(), reason)
        })
        .collect()
}

/// What every plan of a variant shares, whatever the context: its tools in order with the
/// family's spec of each, its components in order with their templates, the overrides that
/// disable some, the conditions left to evaluate, and the files its compiles read: the
/// context decides only which of these are in.
pub struct Outline {
    tools: Vec<OutlinedTool>,
    components: Vec<OutlinedComponent>,
    inputs: Vec<String>,
    /// Which templates read each component's slot.
    slot_readers: SlotReaders,
}

struct OutlinedTool {
    tool: Arc<ResolvedTool>,
    disabled: bool,
}

struct OutlinedComponent {
    id: String,
    slot: String,
    template: TemplateId,
    template_name: String,
    source: Option<SourceRange>,
    choice: TemplateChoice,
    disabled: bool,
    when: Option<(Arc<str>, Span)>,
}

impl Outline {
    /// `generic_tools` holds the tools already resolved without a family view, which every
    /// family sees alike: each is resolved once for all the variants.
    fn of(workspace: &Workspace, variant: &EffectiveVariant, generic_tools: &GenericTools) -> Self {
        let overrides = &variant.variant.overrides;
        let tool_ids = apply_order(variant.tools(), |id| {
            overrides.tools.get(id).and_then(|o| o.order)
        });
        let family = variant.family();
        let resolve = |id: &str| -> Option<Arc<ResolvedTool>> {
            if has_family_view(workspace, id, family) {
                return resolve_tool(workspace, id, family).map(Arc::new);
            }
            let shared = generic_tools
                .lock()
                .ok()
                .and_then(|kept| kept.get(id).cloned());
            if let Some(tool) = shared {
                return Some(tool);
            }
            let tool = Arc::new(resolve_tool(workspace, id, family)?);
            if let Ok(mut shared) = generic_tools.lock() {
                shared.insert(id.to_string(), Arc::clone(&tool));
            }
            Some(tool)
        };
        let tools: Vec<OutlinedTool> = tool_ids
            .iter()
            .filter_map(|id| {
                Some(OutlinedTool {
                    tool: resolve(id)?,
                    disabled: overrides.tools.get(id).and_then(|o| o.enabled) == Some(false),
                })
            })
            .collect();
        let component_ids = variant.components_in_order();
        let components: Vec<OutlinedComponent> = component_ids
            .into_iter()
            .filter_map(|id| {
                // Only a workspace with errors lists a component it does not hold.
                let entry = workspace.components.get(&id)?;
                let (template, choice) = component_template(workspace, variant, &id)?;
                let templates = &workspace.templates;
                Some(OutlinedComponent {
                    slot: entry.value.slot(),
                    template,
                    template_name: templates.name(template).to_string(),
                    source: templates
                        .extent(template)
                        .map(|span| SourceRange::of(span, &workspace.sources)),
                    choice,
                    disabled: overrides.components.get(&id).and_then(|o| o.enabled) == Some(false),
                    when: entry
                        .value
                        .condition
                        .clone()
                        .map(|condition| (condition, entry.value_span("/when"))),
                    id,
                })
            })
            .collect();
        let inputs = read_files(workspace, variant, &tools, &components);
        let sections: Vec<(TemplateId, &str)> = components
            .iter()
            .map(|component| (component.template, component.slot.as_str()))
            .collect();
        let slot_readers = SlotReaders::new(&workspace.templates, variant.base, &sections);
        Self {
            tools,
            components,
            inputs,
            slot_readers,
        }
    }

    /// The variant's tools as resolved, in order.
    #[cfg(test)]
    pub(crate) fn resolved_tools(&self) -> Vec<Arc<ResolvedTool>> {
        self.tools
            .iter()
            .map(|outlined| Arc::clone(&outlined.tool))
            .collect()
    }

    /// Whether a template of the prompt calls `debug()` (see [`SlotReaders`]).
    pub fn writes_every_slot(&self) -> bool {
        self.slot_readers.writes_every_slot()
    }

    /// The files a compile of the variant reads, sorted: manifest, variant chain, templates
    /// (and the partials they use), components and tools.
    pub fn inputs(&self) -> &[String] {
        &self.inputs
    }
}

fn read_files(
    workspace: &Workspace,
    variant: &EffectiveVariant,
    tools: &[OutlinedTool],
    components: &[OutlinedComponent],
) -> Vec<String> {
    let mut sources = vec![workspace.manifest.source()];
    sources.extend(
        variant
            .chain
            .iter()
            .filter_map(|id| workspace.variants.get(id))
            .map(|e| e.source()),
    );
    // Tool texts are inline (their tool file is listed below) but may include partials.
    let tool_texts = tools.iter().flat_map(|outlined| {
        let tool = &outlined.tool;
        std::iter::once(tool.description).chain(tool.parameters.iter().flat_map(|parameter| {
            [parameter.instruction, parameter.usage, parameter.note]
                .into_iter()
                .flatten()
        }))
    });
    let templates: Vec<TemplateId> = [variant.base, tool_format(workspace, variant)]
        .into_iter()
        .chain(components.iter().map(|c| c.template))
        .chain(tool_texts)
        .collect();
    // The partials (and other templates) they include, import or extend, transitively.
    let used = templates
        .iter()
        .flat_map(|template| workspace.templates.used_by(*template));
    sources.extend(
        templates
            .iter()
            .chain(used)
            .filter_map(|template| workspace.templates.extent(*template))
            .map(|s| s.source),
    );
    sources.extend(
        components
            .iter()
            .filter_map(|c| workspace.components.get(&c.id))
            .map(|e| e.source()),
    );
    sources.extend(
        tools
            .iter()
            .filter_map(|t| workspace.tools.get(&t.tool.id))
            .map(|e| e.source()),
    );
    // Many texts share a file: each file's path is built once.
    sources.sort_unstable();
    sources.dedup();
    let mut paths: Vec<String> = sources
        .into_iter()
        .map(|source| &workspace.sources.get(source).path)
        .filter(|path| !Templates::is_builtin(path))
        .map(|path| path.to_string_lossy().into_owned())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Each variant's outline, made on first use and kept by a `Compiler`: the most recently
/// used [`Outlines::KEPT`] of them. An outline holds every tool of its variant resolved, about
/// half a megabyte for a thousand tools, so a matrix of many variants keeps only those it is
/// compiling (a matrix goes family by family) rather than all of them. The tools without a
/// family spec, which every variant shares, are kept for the compiler's life: at most one of
/// each of the workspace's tools.
#[derive(Default)]
pub struct Outlines {
    kept: Mutex<KeptOutlines>,
    generic_tools: GenericTools,
}

/// Tools resolved without a family view, by id. Bounded by the workspace's tools, each about
/// the size of its entry.
type GenericTools = Mutex<HashMap<String, Arc<ResolvedTool>>>;

#[derive(Default)]
struct KeptOutlines {
    /// By variant id: the outline and when it was last used.
    outlines: HashMap<String, (Arc<Outline>, u64)>,
    uses: u64,
}

impl Outlines {
    /// More than the variants of a real registry, so that a `Runtime` serving every family
    /// never makes an outline twice.
    pub const KEPT: usize = 32;

    pub fn get(&self, workspace: &Workspace, variant: &EffectiveVariant) -> Arc<Outline> {
        let kept = self.kept.lock().ok().and_then(|mut kept| {
            kept.uses += 1;
            let now = kept.uses;
            let (outline, used) = kept.outlines.get_mut(variant.id())?;
            *used = now;
            Some(outline.clone())
        });
        if let Some(outline) = kept {
            return outline;
        }
        let outline = Arc::new(Outline::of(workspace, variant, &self.generic_tools));
        if let Ok(mut kept) = self.kept.lock() {
            if kept.outlines.len() >= Self::KEPT {
                let oldest = kept
                    .outlines
                    .iter()
                    .min_by_key(|(_, (_, used))| *used)
                    .map(|(id, _)| id.clone());
                if let Some(oldest) = oldest {
                    kept.outlines.remove(&oldest);
                }
            }
            let now = kept.uses;
            kept.outlines
                .insert(variant.id().to_string(), (outline.clone(), now));
        }
        outline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `depends_on` list that many parameters share is looked through once per plan, and
    /// every parameter's reason holds the one list of tools it misses.
    #[test]
    fn a_shared_depends_on_list_is_looked_through_once() {
        let depends_on: Arc<[String]> = (0..20).map(|i| format!("t{i}")).collect();
        let own: Arc<[String]> = Arc::from(vec!["t0".to_string(), "t3".to_string()]);
        let enabled: HashSet<String> = ["t0", "t1", "t2"].map(String::from).into();
        let mut missing = MissingTools::default();
        let first = missing.of(&depends_on, &enabled);
        let again = missing.of(&Arc::clone(&depends_on), &enabled);
        assert_eq!(first.len(), 17);
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(&*missing.of(&own, &enabled), &["t3".to_string()][..]);
        assert!(missing.of(&Arc::default(), &enabled).is_empty());

        // Its wording names the first few and counts the others.
        let reason = Reason::MissingDependency { tools: first };
        assert_eq!(
            reason.to_string(),
            "depends on tools that are not enabled: t3, t4, t5, t6, t7, t8, t9, t10 and 9 more"
        );
        let few = Reason::MissingDependency {
            tools: missing.of(&own, &enabled),
        };
        assert_eq!(few.to_string(), "depends on tools that are not enabled: t3");
    }
}
