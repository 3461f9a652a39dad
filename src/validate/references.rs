//! References between files: ids that must exist, `extends` and `based_on` cycles, families,
//! overrides of things a variant does not use, shared parameters and `depends_on`.
//!
//! Each rule is one function; the lists below run them, file by file.

use std::collections::{BTreeSet, HashMap, HashSet};

use indexmap::IndexMap;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::follow::{LongChain, follow, judge_long_chain, on_cycles};
use crate::load::entry::Entry;
use crate::model::{Parameter, Paths, PostprocessRule, Variant};
use crate::namespace::{closest, folded};
use crate::pointer::child_pointer;
use crate::problem::{
    CycleLink, Form, InvalidValue, LabelKind, NoteKind, Problem, RefKind, Severity,
};
use crate::span::Span;
use crate::workspace::inheritance::merged_spec;
use crate::workspace::{ComponentDef, ManifestDef, ToolDef, VariantDef, Workspace};

/// What every rule reads: the workspace and the families its variants declare.
struct Known<'w> {
    workspace: &'w Workspace,
    families: BTreeSet<String>,
    /// Variants on an `extends` cycle, each with the cycle's smallest id.
    variant_cycles: std::collections::HashMap<&'w str, &'w str>,
    /// The variants folder lies outside the workspace and was not read (reported at its
    /// setting): no family can be known missing.
    variants_unread: bool,
    /// The same of the components, tools and contexts folders: no id of theirs can be known
    /// missing.
    components_unread: bool,
    tools_unread: bool,
    contexts_unread: bool,
    /// Which unknown names get a near one looked for.
    suggestions: crate::diagnostic::Suggestions,
}

/// Whether a folder setting names no folder promptc reads, as its check at the setting
/// reports (see [`paths_stay_inside`]): outside the workspace, the root itself, or not a path
/// of one.
fn folder_unread(root: &std::path::Path, path: &str) -> bool {
    path.contains('\0')
        || is_windows_form(path)
        || crate::load::read::data_folder(root, path).is_none()
}

/// A Windows form (`src\\parts`, `C:\\x`, `C:x`) names, on another system, a folder no one
/// meant: promptc's paths are written with `/` on every system.
fn is_windows_form(path: &str) -> bool {
    path.contains('\\')
        || path.as_bytes().get(1) == Some(&b':')
            && path.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
}

type Rule = fn(&Known<'_>, &mut Diagnostics);
type EntryRule<T> = fn(&Known<'_>, &Entry<T>, &mut Diagnostics);

/// The rules about the workspace as a whole, in the order they run.
const RULES: &[Rule] = &[
    variants,
    slots_are_unique,
    component_families_exist,
    definitions_are_used,
    tools,
    manifest,
];

const VARIANT_RULES: &[EntryRule<VariantDef>] = &[parent_exists_without_cycle, listed_ids, merged];

const TOOL_RULES: &[EntryRule<ToolDef>] = &[
    names_are_callable,
    parameter_names_are_unique,
    parameters,
    tool_families_exist,
    family_bases_exist_without_cycle,
];

/// Rules about what the manifest declares; skipped when it is invalid (reported).
const MANIFEST_RULES: &[EntryRule<ManifestDef>] = &[
    // A folder outside the workspace first: what it holds was not read, and the rest follows.
    paths_stay_inside,
    outputs_within_limit,
    fallback_family_exists,
    build_families_exist,
    families_are_built,
    build_entries,
    routing_names_exist,
    contexts_exist,
    shared_parameters,
    token_families_exist,
    output_folder_is_apart,
    output_names_fit,
    output_names_differ_beyond_case,
    source_names_portable,
    regexes_compile,
];

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let known = Known {
        workspace,
        families: workspace.families().into_iter().collect(),
        variant_cycles: on_cycles(workspace.variants.keys().map(String::as_str), |id| {
            workspace.variants.get(id)?.value.extends.as_deref()
        }),
        variants_unread: folder_unread(&workspace.root, &workspace.settings().paths.variants),
        components_unread: folder_unread(&workspace.root, &workspace.settings().paths.components),
        tools_unread: folder_unread(&workspace.root, &workspace.settings().paths.tools),
        contexts_unread: folder_unread(&workspace.root, &workspace.settings().paths.contexts),
        suggestions: crate::diagnostic::Suggestions::default(),
    };
    for rule in RULES {
        rule(&known, out);
    }
}

fn run<T>(known: &Known<'_>, rules: &[EntryRule<T>], entry: &Entry<T>, out: &mut Diagnostics) {
    for rule in rules {
        rule(known, entry, out);
    }
}

fn variants(known: &Known<'_>, out: &mut Diagnostics) {
    for entry in known.workspace.variants.values() {
        run(known, VARIANT_RULES, entry, out);
    }
}

fn tools(known: &Known<'_>, out: &mut Diagnostics) {
    for entry in known.workspace.tools.values() {
        run(known, TOOL_RULES, entry, out);
    }
}

fn manifest(known: &Known<'_>, out: &mut Diagnostics) {
    if let Some(manifest) = known.workspace.valid_manifest() {
        run(known, MANIFEST_RULES, manifest, out);
    }
}

impl Known<'_> {
    /// An unknown family, unless a variant (valid or not) declares it.
    fn family(&self, family: &str, span: Span, out: &mut Diagnostics) {
        if !self.variants_unread && !self.workspace.knows_family(&self.families, family) {
            out.error(
                Problem::UnknownReference {
                    kind: RefKind::Family,
                    name: family.to_string(),
                    suggestion: self
                        .suggestions
                        .allowed(span)
                        .then(|| closest(family, &self.families))
                        .flatten(),
                },
                span,
            );
        }
    }

    /// Unknown families among the keys of a file's `families` table.
    fn families_keyed<'a, T>(
        &self,
        entry: &Entry<T>,
        families: impl IntoIterator<Item = &'a String>,
        out: &mut Diagnostics,
    ) {
        for family in families {
            let span = entry.key_span(&child_pointer("/families", family));
            self.family(family, span, out);
        }
    }

    /// An unknown context, unless a context file that failed validation has its name.
    fn context(&self, context: &str, span: Span, out: &mut Diagnostics) {
        let contexts = &self.workspace.contexts;
        if !self.contexts_unread
            && !contexts.contains_key(context)
            && !self.workspace.invalid.contains(RefKind::Context, context)
        {
            out.error(
                Problem::UnknownReference {
                    kind: RefKind::Context,
                    name: context.to_string(),
                    suggestion: self
                        .suggestions
                        .allowed(span)
                        .then(|| closest(context, contexts.keys()))
                        .flatten(),
                },
                span,
            );
        }
    }

    /// An unknown component or tool id.
    fn id(&self, kind: RefKind, id: &str, span: Span, out: &mut Diagnostics) {
        let unread = match kind {
            RefKind::Component => self.components_unread,
            _ => self.tools_unread,
        };
        if unread {
            return;
        }
        if !is_known(self.workspace, kind, id) {
            let suggestion = self
                .suggestions
                .allowed(span)
                .then(|| suggest(self.workspace, kind, id))
                .flatten();
            out.error(
                Problem::UnknownReference {
                    kind,
                    name: id.to_string(),
                    suggestion,
                },
                span,
            );
        }
    }
}

// Variants.

/// `extends` names a variant, and following it does not come back.
fn parent_exists_without_cycle(
    known: &Known<'_>,
    entry: &Entry<VariantDef>,
    out: &mut Diagnostics,
) {
    let workspace = known.workspace;
    let variant = &entry.value;
    let Some(parent) = &variant.extends else {
        return;
    };
    if workspace.invalid.contains(RefKind::Variant, parent) {
        // reported at the parent
    } else if !workspace.variants.contains_key(parent) {
        out.error(
            Problem::UnknownReference {
                kind: RefKind::Variant,
                name: parent.clone(),
                suggestion: closest(parent, workspace.variants.keys()),
            },
            entry.value_span("/extends"),
        );
    } else {
        let parent_of = |id| workspace.variants.get(id)?.value.extends.as_deref();
        let ancestry = follow(&variant.id, parent_of);
        if ancestry.too_long {
            long_chain(
                judge_long_chain(&variant.id, &known.variant_cycles, parent_of),
                CycleLink::Extends,
                entry.value_span("/extends"),
                out,
            );
        }
        if let Some(chain) = ancestry.cycle_to_report() {
            out.error(
                Problem::Cycle {
                    link: CycleLink::Extends,
                    chain,
                },
                entry.value_span("/extends"),
            );
        }
    }
}

/// The component and tool lists name existing ids, each once.
fn listed_ids(known: &Known<'_>, entry: &Entry<VariantDef>, out: &mut Diagnostics) {
    let variant = &entry.value;
    let mut lists = [
        ("components", &variant.components, RefKind::Component),
        (
            "add_components",
            &variant.add_components,
            RefKind::Component,
        ),
        ("tools", &variant.tools, RefKind::Tool),
        ("add_tools", &variant.add_tools, RefKind::Tool),
    ];
    // In the order the file writes them: the unknown ids given a near one are the first
    // of the file, as those told are.
    lists.sort_by_key(|(field, _, _)| entry.value_span(&format!("/{field}")).start);
    for (field, list, kind) in lists {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (index, id) in list.iter().flatten().enumerate() {
            let span = entry.value_span(&format!("/{field}/{index}"));
            if let Some(first) = seen.insert(id, index) {
                out.push(
                    Diagnostic::new(
                        Problem::DuplicateId {
                            kind,
                            name: id.clone(),
                        },
                        span,
                    )
                    .label(
                        entry.value_span(&format!("/{field}/{first}")),
                        LabelKind::FirstListedHere,
                    ),
                );
            }
            known.id(kind, id, span, out);
        }
    }
}

/// A component or tool that no variant lists is in no build: usually a list that was not
/// updated when it was renamed, or one left behind. Every variant file's own lists are read,
/// whatever its ancestry, so a broken `extends` blames nothing here; with a variant that did
/// not load, or a variants folder not read, what is listed is not known, and nothing is said.
fn definitions_are_used(known: &Known<'_>, out: &mut Diagnostics) {
    let workspace = known.workspace;
    if workspace.invalid.variant_invalid || known.variants_unread {
        return;
    }
    let mut components: HashSet<&str> = HashSet::new();
    let mut tools: HashSet<&str> = HashSet::new();
    for entry in workspace.variants.values() {
        let variant = &entry.value;
        for list in [&variant.components, &variant.add_components] {
            components.extend(list.iter().flatten().map(String::as_str));
        }
        for list in [&variant.tools, &variant.add_tools] {
            tools.extend(list.iter().flatten().map(String::as_str));
        }
    }
    // A list naming an id no file defines (an error of its own, with the near id) most
    // likely meant one of those left unlisted: that error says it.
    if components
        .iter()
        .all(|id| workspace.components.contains_key(*id))
    {
        unused(
            &workspace.components,
            &components,
            |id| Problem::UnusedComponent { id },
            out,
        );
    }
    if tools.iter().all(|id| workspace.tools.contains_key(*id)) {
        unused(
            &workspace.tools,
            &tools,
            |id| Problem::UnusedTool { id },
            out,
        );
    }
}

/// A warning at each definition whose id is not `listed`.
fn unused<T>(
    defined: &IndexMap<String, Entry<T>>,
    listed: &HashSet<&str>,
    problem: impl Fn(String) -> Problem,
    out: &mut Diagnostics,
) {
    for (id, entry) in defined {
        if !listed.contains(id.as_str()) {
            out.push(Diagnostic::new(
                problem(id.clone()),
                entry.value_span("/id"),
            ));
        }
    }
}

/// What the merged variant must have is only known when its whole chain is.
fn merged(known: &Known<'_>, entry: &Entry<VariantDef>, out: &mut Diagnostics) {
    let workspace = known.workspace;
    if !workspace.ancestry_is_sound(&entry.value.id) {
        return;
    }
    // Whatever its templates: a chain without a base template is what is reported here.
    let Some(merged) = merged_spec(&workspace.variants, &entry.value.id) else {
        return;
    };
    template_is_given(entry, &merged, out);
    overrides_are_used(known, entry, &merged, out);
    added_ids_are_new(workspace, entry, out);
    orders_fit_the_list(entry, &merged, out);
}

/// An override's `order` past the end of the list it places an item in puts the item last:
/// said, since the position written is not the one it takes (a miscount, or a list that
/// shrank).
fn orders_fit_the_list(entry: &Entry<VariantDef>, merged: &Variant, out: &mut Diagnostics) {
    let variant = &entry.value;
    let lists = [
        (
            "components",
            RefKind::Component,
            merged.components.as_deref().unwrap_or_default(),
            variant
                .overrides
                .components
                .iter()
                .map(|(id, o)| (id, o.order))
                .collect::<Vec<_>>(),
        ),
        (
            "tools",
            RefKind::Tool,
            merged.tools.as_deref().unwrap_or_default(),
            variant
                .overrides
                .tools
                .iter()
                .map(|(id, o)| (id, o.order))
                .collect(),
        ),
    ];
    for (field, kind, list, orders) in lists {
        for (id, order) in orders {
            let Some(order) = order else {
                continue;
            };
            if order > list.len() && list.contains(id) {
                out.push(Diagnostic::new(
                    Problem::OrderPastTheEnd {
                        kind,
                        name: id.clone(),
                        order,
                        len: list.len(),
                    },
                    entry.value_span(&format!(
                        "{}/order",
                        child_pointer(&format!("/overrides/{field}"), id)
                    )),
                ));
            }
        }
    }
}

/// `add_components` and `add_tools` append what the list does not hold yet: an id it already
/// holds (from the variant's own `components`/`tools`, or inherited) stays where it is, so
/// adding it again does nothing and was most likely meant as a move or a different id.
fn added_ids_are_new(workspace: &Workspace, entry: &Entry<VariantDef>, out: &mut Diagnostics) {
    let variant = &entry.value;
    let parent = variant
        .extends
        .as_deref()
        .and_then(|parent| merged_spec(&workspace.variants, parent));
    let lists = [
        (
            "add_components",
            RefKind::Component,
            &variant.add_components,
            &variant.components,
            parent.as_ref().and_then(|p| p.components.as_ref()),
        ),
        (
            "add_tools",
            RefKind::Tool,
            &variant.add_tools,
            &variant.tools,
            parent.as_ref().and_then(|p| p.tools.as_ref()),
        ),
    ];
    for (field, kind, added, own, inherited) in lists {
        // The list `add_*` appends to: the variant's own when it sets one, else its parent's.
        let (base, holder) = match (own, inherited) {
            (Some(own), _) => (own, variant.id.as_str()),
            (None, Some(inherited)) => (inherited, variant.extends.as_deref().unwrap_or_default()),
            (None, None) => continue,
        };
        for (index, id) in added.iter().flatten().enumerate() {
            if base.contains(id) {
                out.push(Diagnostic::new(
                    Problem::AlreadyListed {
                        kind,
                        name: id.clone(),
                        field,
                        holder: holder.to_string(),
                        own: own.is_some(),
                    },
                    entry.value_span(&format!("/{field}/{index}")),
                ));
            }
        }
    }
}

/// The variant or one of its ancestors gives a base template.
fn template_is_given(entry: &Entry<VariantDef>, merged: &Variant, out: &mut Diagnostics) {
    if merged.template.is_none() && merged.template_file.is_none() {
        out.error(
            Problem::MissingTemplate {
                expected_file: None,
                near: None,
            },
            entry.value_span("/id"),
        );
    }
}

/// Each override names an existing id the merged variant lists.
fn overrides_are_used(
    known: &Known<'_>,
    entry: &Entry<VariantDef>,
    merged: &Variant,
    out: &mut Diagnostics,
) {
    let workspace = known.workspace;
    let variant = &entry.value;
    let overridden: [(&str, RefKind, Vec<&String>, &[String]); 2] = [
        (
            "components",
            RefKind::Component,
            variant.overrides.components.keys().collect(),
            merged.components.as_deref().unwrap_or_default(),
        ),
        (
            "tools",
            RefKind::Tool,
            variant.overrides.tools.keys().collect(),
            merged.tools.as_deref().unwrap_or_default(),
        ),
    ];
    for (field, kind, ids, used) in overridden {
        // A folder setting refused at the setting reads no ids: none can be known missing.
        let unread = match kind {
            RefKind::Component => known.components_unread,
            _ => known.tools_unread,
        };
        if unread {
            continue;
        }
        // A list with an unknown id (reported where it is listed, maybe a misspelling of the
        // overridden one) cannot tell whether an override is used.
        let complete = used.iter().all(|id| is_known(workspace, kind, id));
        let used: HashSet<&String> = used.iter().collect();
        for id in ids {
            let span = entry.key_span(&child_pointer(&format!("/overrides/{field}"), id));
            if !is_known(workspace, kind, id) {
                out.error(
                    Problem::UnknownReference {
                        kind,
                        name: id.clone(),
                        suggestion: known
                            .suggestions
                            .allowed(span)
                            .then(|| suggest(workspace, kind, id))
                            .flatten(),
                    },
                    span,
                );
            } else if complete && !used.contains(id) && !workspace.invalid.contains(kind, id) {
                out.error(
                    Problem::UnusedOverride {
                        kind,
                        name: id.clone(),
                        variant: variant.id.clone(),
                    },
                    span,
                );
            }
        }
    }
}

/// Whether a component or tool id exists (or was declared by a file that failed its own
/// validation).
fn is_known(workspace: &Workspace, kind: RefKind, id: &str) -> bool {
    workspace.invalid.contains(kind, id)
        || match kind {
            RefKind::Component => workspace.components.contains_key(id),
            _ => workspace.tools.contains_key(id),
        }
}

/// The id an unknown component or tool id most likely meant: a file named after the id that
/// declares another id is the likeliest cause, else the closest known id, if any. It compares
/// with every known one: asked only of the unknown ids that are told.
fn suggest(workspace: &Workspace, kind: RefKind, id: &str) -> Option<String> {
    match kind {
        RefKind::Component => declared_by_file(&workspace.components, id)
            .or_else(|| closest(id, workspace.components.keys())),
        _ => declared_by_file(&workspace.tools, id).or_else(|| closest(id, workspace.tools.keys())),
    }
}

/// The id declared by the file named `<name>.toml` (or `.yaml`), when it is another one.
fn declared_by_file<T>(entries: &IndexMap<String, Entry<T>>, name: &str) -> Option<String> {
    entries
        .iter()
        .find(|(_, entry)| entry.path.file_stem().is_some_and(|stem| stem == name))
        .map(|(id, _)| id.clone())
}

// Components.

/// Two components filling one slot would each hide the other.
fn slots_are_unique(known: &Known<'_>, out: &mut Diagnostics) {
    let mut slots: HashMap<String, &Entry<ComponentDef>> = HashMap::new();
    for entry in known.workspace.components.values() {
        let slot = entry.value.slot();
        if let Some(first) = slots.get(&slot) {
            out.push(
                Diagnostic::new(
                    Problem::DuplicateSlot {
                        slot: slot.clone(),
                        component: entry.value.id.clone(),
                        other: first.value.id.clone(),
                    },
                    entry.value_span("/id"),
                )
                .label(first.value_span("/id"), LabelKind::FillsTheSlot),
            );
        } else {
            slots.insert(slot, entry);
        }
    }
}

/// A component's per-family templates are for families variants declare.
fn component_families_exist(known: &Known<'_>, out: &mut Diagnostics) {
    for entry in known.workspace.components.values() {
        known.families_keyed(entry, entry.value.families.keys(), out);
    }
}

// Tools.

/// A tool's name, written (`name`, a family's `name`) or taken from its id, is one a model can
/// call: it is the tag of the tool's calls in the prompt and the name in native definitions.
/// A `for_each` tool's name is a template, judged once rendered (by the compile).
fn names_are_callable(_: &Known<'_>, entry: &Entry<ToolDef>, out: &mut Diagnostics) {
    let spec = &entry.value.spec;
    if spec.for_each.is_some() {
        return;
    }
    let mut names = vec![match &spec.name {
        Some(name) => (name.as_str(), "/name".to_string()),
        None => (spec.id.as_str(), "/id".to_string()),
    }];
    for (family, family_spec) in &spec.families {
        if let Some(name) = &family_spec.name {
            names.push((
                name,
                child_pointer(&child_pointer("/families", family), "name"),
            ));
        }
    }
    for (name, pointer) in names {
        if !crate::model::is_callable_name(name) {
            out.error(
                Problem::BadToolName {
                    name: name.to_string(),
                },
                entry.value_span(&pointer),
            );
        }
    }
}

/// Two parameters of one list with the same name would be documented twice.
fn parameter_names_are_unique(known: &Known<'_>, entry: &Entry<ToolDef>, out: &mut Diagnostics) {
    for (pointer, parameters) in entry.value.parameter_lists() {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (index, parameter) in parameters.iter().enumerate() {
            let Some(name) = parameter_name(known.workspace, parameter) else {
                continue;
            };
            // At the `name` that repeats, where the parameter writes one (else the parameter:
            // a shared one it uses); it was placed at the `[[parameters]]` header.
            let at = |index: usize| {
                let name = format!("{pointer}/{index}/name");
                if entry.document.writes(&name) {
                    entry.value_span(&name)
                } else {
                    entry.value_span(&format!("{pointer}/{index}"))
                }
            };
            if let Some(first) = seen.insert(name.clone(), index) {
                out.push(
                    Diagnostic::new(
                        Problem::DuplicateId {
                            kind: RefKind::Parameter,
                            name,
                        },
                        at(index),
                    )
                    .label(at(first), LabelKind::FirstDefinedHere),
                );
            }
        }
    }
}

/// The name a parameter is documented under: its own, or that of the shared one it uses.
fn parameter_name(workspace: &Workspace, parameter: &Parameter) -> Option<String> {
    parameter.name.clone().or_else(|| {
        let shared = parameter.use_shared.as_ref()?;
        let definition = workspace.settings().parameters.get(shared)?;
        Some(definition.name.clone().unwrap_or_else(|| shared.clone()))
    })
}

/// Each parameter uses a shared one that exists, or has what a parameter needs; its
/// `depends_on` names tools.
fn parameters(known: &Known<'_>, entry: &Entry<ToolDef>, out: &mut Diagnostics) {
    for (list_pointer, parameters) in entry.value.parameter_lists() {
        for (index, parameter) in parameters.iter().enumerate() {
            let pointer = format!("{list_pointer}/{index}");
            parameter_is_complete(known.workspace, entry, &pointer, parameter, out);
            dependencies_exist(known, entry, &pointer, parameter, out);
            schema_keys_of_no_field(entry, &pointer, parameter, out);
            nested_schema_types(entry, &pointer, parameter, out);
        }
    }
}

/// The JSON Schema types a `type` keyword may name.
const SCHEMA_TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "array", "object", "null",
];

/// Each `type` of the schemas nested in a parameter (its `items`, its `properties`' schemas,
/// and those its `schema` keys hold: `additionalProperties`, `anyOf`, …) names JSON Schema
/// types: a misspelt one (`type = "strng"` in a property) was sent as it is in the native
/// tool definitions, which a provider refuses, while the parameter's own `type` is checked by
/// its schema.
fn nested_schema_types<T>(
    entry: &Entry<T>,
    pointer: &str,
    parameter: &Parameter,
    out: &mut Diagnostics,
) {
    if let Some(items) = &parameter.items {
        schema_types_in(entry, &format!("{pointer}/items"), items, 0, out);
    }
    for (name, property) in parameter.properties.iter().flatten() {
        let at = child_pointer(&format!("{pointer}/properties"), name);
        schema_types_in(entry, &at, property, 0, out);
    }
    for (key, value) in parameter.schema.iter().flatten() {
        let at = child_pointer(&format!("{pointer}/schema"), key);
        subschemas_of(entry, &at, key, value, 0, out);
    }
}

/// [`nested_schema_types`] for the schema `schema` at `pointer`, `depth` schemas deep.
fn schema_types_in<T>(
    entry: &Entry<T>,
    pointer: &str,
    schema: &serde_json::Value,
    depth: usize,
    out: &mut Diagnostics,
) {
    // Data files nest a few hundred levels at most; a schema is walked no deeper than that.
    const MAX_DEPTH: usize = 256;
    let Some(schema) = schema.as_object().filter(|_| depth < MAX_DEPTH) else {
        return;
    };
    let named = |name: &serde_json::Value, at: String, out: &mut Diagnostics| {
        let Some(name) = name.as_str() else {
            return;
        };
        if SCHEMA_TYPES.contains(&name) {
            return;
        }
        let allowed: Vec<String> = SCHEMA_TYPES.iter().map(|t| (*t).to_string()).collect();
        out.error(
            Problem::InvalidValue(InvalidValue::NotOneOf {
                value: format!("`{name}`"),
                suggestion: closest(name, &allowed),
                allowed,
            }),
            entry.value_span(&at),
        );
    };
    match schema.get("type") {
        Some(serde_json::Value::Array(names)) => {
            for (index, name) in names.iter().enumerate() {
                named(name, format!("{pointer}/type/{index}"), out);
            }
        }
        Some(name) => named(name, format!("{pointer}/type"), out),
        None => {}
    }
    for (key, value) in schema {
        let at = child_pointer(pointer, key);
        subschemas_of(entry, &at, key, value, depth, out);
    }
}

/// The schemas a keyword's `value` holds (at `pointer`), walked for their types.
fn subschemas_of<T>(
    entry: &Entry<T>,
    pointer: &str,
    keyword: &str,
    value: &serde_json::Value,
    depth: usize,
    out: &mut Diagnostics,
) {
    match keyword {
        "items"
        | "additionalProperties"
        | "additionalItems"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contains"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties" => match value {
            serde_json::Value::Array(schemas) => {
                for (index, schema) in schemas.iter().enumerate() {
                    let at = format!("{pointer}/{index}");
                    schema_types_in(entry, &at, schema, depth + 1, out);
                }
            }
            schema => schema_types_in(entry, pointer, schema, depth + 1, out),
        },
        "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
            for (index, schema) in value.as_array().into_iter().flatten().enumerate() {
                schema_types_in(entry, &format!("{pointer}/{index}"), schema, depth + 1, out);
            }
        }
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
            for (name, schema) in value.as_object().into_iter().flatten() {
                let at = child_pointer(pointer, name);
                schema_types_in(entry, &at, schema, depth + 1, out);
            }
        }
        _ => {}
    }
}

fn parameter_is_complete(
    workspace: &Workspace,
    entry: &Entry<ToolDef>,
    pointer: &str,
    parameter: &Parameter,
    out: &mut Diagnostics,
) {
    let shared_parameters = &workspace.settings().parameters;
    match &parameter.use_shared {
        Some(shared) => {
            if !shared_parameters.contains_key(shared) && !workspace.invalid.manifest_invalid {
                out.error(
                    Problem::UnknownReference {
                        kind: RefKind::SharedParameter,
                        name: shared.clone(),
                        suggestion: closest(shared, shared_parameters.keys()),
                    },
                    entry.value_span(&format!("{pointer}/use")),
                );
            }
        }
        None => {
            for (field, present) in [
                ("name", parameter.name.is_some()),
                ("instruction", parameter.instruction.is_some()),
            ] {
                if !present {
                    out.push(
                        Diagnostic::new(
                            Problem::MissingField {
                                field: field.into(),
                            },
                            entry.value_span(pointer),
                        )
                        .note(NoteKind::ParameterNeedsNameAndInstruction),
                    );
                }
            }
        }
    }
}

/// A parameter's free `schema` table sets none of the keywords its own fields write: the
/// native definitions take the table's over the field's, while the prompt shows the field.
fn schema_keys_of_no_field<T>(
    entry: &Entry<T>,
    pointer: &str,
    parameter: &Parameter,
    out: &mut Diagnostics,
) {
    const OWNED: [(&str, &str); 5] = [
        ("type", "type"),
        ("description", "instruction"),
        ("items", "items"),
        ("properties", "properties"),
        ("enum", "enum"),
    ];
    for key in parameter.schema.iter().flat_map(|schema| schema.keys()) {
        if let Some((_, field)) = OWNED.iter().find(|(owned, _)| owned == key) {
            out.error(
                Problem::SchemaKeyOfAField {
                    key: key.clone(),
                    field,
                },
                entry.key_span(&child_pointer(&format!("{pointer}/schema"), key)),
            );
        }
    }
}

fn dependencies_exist<T>(
    known: &Known<'_>,
    entry: &Entry<T>,
    pointer: &str,
    parameter: &Parameter,
    out: &mut Diagnostics,
) {
    for (index, tool) in parameter.depends_on.iter().flatten().enumerate() {
        let span = entry.value_span(&format!("{pointer}/depends_on/{index}"));
        let before = out.len();
        known.id(RefKind::Tool, tool, span, out);
        // Parameters depend on tools: a parameter's name here is the likely mistake.
        for unknown in out.since_mut(before) {
            unknown.notes.push(NoteKind::DependsOnNamesTools);
        }
    }
}

/// A tool's family specs are for families variants declare.
fn tool_families_exist(known: &Known<'_>, entry: &Entry<ToolDef>, out: &mut Diagnostics) {
    known.families_keyed(entry, entry.value.families.keys(), out);
}

/// `based_on` names another family spec of the tool, and following it does not come back.
fn family_bases_exist_without_cycle(_: &Known<'_>, entry: &Entry<ToolDef>, out: &mut Diagnostics) {
    let families = &entry.value.families;
    let base_of = |name| families.get(name)?.based_on.as_deref();
    let cycles = on_cycles(families.keys().map(String::as_str), base_of);
    for (family, spec) in families {
        let Some(base) = &spec.based_on else {
            continue;
        };
        let span = entry.value_span(&format!("{}/based_on", child_pointer("/families", family)));
        if !families.contains_key(base) {
            out.error(
                Problem::UnknownReference {
                    kind: RefKind::FamilySpec,
                    name: base.clone(),
                    suggestion: closest(base, families.keys()),
                },
                span,
            );
            continue;
        }
        let bases = follow(family, base_of);
        if bases.too_long {
            long_chain(
                judge_long_chain(family, &cycles, base_of),
                CycleLink::BasedOn,
                span,
                out,
            );
        }
        if let Some(chain) = bases.cycle_to_report() {
            out.error(
                Problem::Cycle {
                    link: CycleLink::BasedOn,
                    chain,
                },
                span,
            );
        }
    }
}

/// Reports a chain cut at its limit as [`judge_long_chain`] judged it.
fn long_chain(judged: LongChain, link: CycleLink, span: Span, out: &mut Diagnostics) {
    match judged {
        LongChain::Quiet => {}
        LongChain::TooLong => out.error(Problem::ChainTooLong { link }, span),
        LongChain::Cycle(chain) => out.error(Problem::Cycle { link, chain }, span),
    }
}

// The manifest.

fn fallback_family_exists(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    // A workspace without variants too: it validated, and every build failed.
    let span = manifest.value_span("/fallback_family");
    known.family(&manifest.value.fallback_family, span, out);
}

fn build_families_exist(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    for (index, family) in manifest.value.build.families.iter().flatten().enumerate() {
        let span = manifest.value_span(&format!("/build/families/{index}"));
        known.family(family, span, out);
    }
}

/// Every family is compiled by some output of the build matrix, when `build.families` (or
/// `build.entries` alone) chooses which: a family added later (`promptc new variant`) was
/// left out of `validate`, `check` and `build --all` without a word, and its errors were seen
/// only when an agent compiled it. A family that only others extend is compiled through them.
/// A warning at the family's first variant.
fn families_are_built(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let workspace = known.workspace;
    let build = &manifest.value.build;
    let product = build.entries.is_none() || build.families.is_some() || build.contexts.is_some();
    if product && build.families.is_none() {
        return;
    }
    let family_of = |name: &str| -> String {
        match workspace.variants.get(name) {
            Some(entry) => entry.value.family_or_id().to_string(),
            None => name.split('@').next().unwrap_or(name).to_string(),
        }
    };
    let mut built: HashSet<String> = build
        .entries
        .iter()
        .flatten()
        .map(|entry| family_of(&entry.variant))
        .collect();
    if product {
        built.extend(build.families.iter().flatten().cloned());
    }
    // What a built variant extends is compiled through it (a loop of `extends` is reported
    // apart: the walk stops after as many steps as there are variants).
    let mut through: HashSet<&str> = HashSet::new();
    for entry in workspace.variants.values() {
        if !built.contains(entry.value.family_or_id()) {
            continue;
        }
        let mut parent = entry.value.extends.as_deref();
        for _ in 0..workspace.variants.len() {
            let Some(id) = parent.filter(|id| through.insert(id)) else {
                break;
            };
            parent = workspace
                .variants
                .get(id)
                .and_then(|entry| entry.value.extends.as_deref());
        }
    }
    let mut told: HashSet<&str> = HashSet::new();
    for (id, entry) in &workspace.variants {
        let family = entry.value.family_or_id();
        if built.contains(family) || through.contains(id.as_str()) || !told.insert(family) {
            continue;
        }
        let at = match entry.value.family {
            Some(_) => entry.value_span("/family"),
            None => entry.value_span("/id"),
        };
        out.push(Diagnostic::new(
            Problem::FamilyNeverBuilt {
                family: family.to_string(),
            },
            at,
        ));
    }
}

/// The build matrix writes no more outputs than `limits.outputs`: families and contexts
/// multiply, and a few hundred small files of each made a matrix whose outputs alone took
/// `build --all` past a minute. An error at `[build]` (or the manifest's start), so that no
/// command compiles the matrix.
fn outputs_within_limit(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let build = &manifest.value.build;
    let (families, contexts) =
        if build.entries.is_none() || build.families.is_some() || build.contexts.is_some() {
            let (families, contexts) = known.workspace.build_product();
            (families.len(), contexts.len())
        } else {
            (0, 0)
        };
    let entries = build.entries.as_ref().map_or(0, Vec::len);
    let outputs = families.saturating_mul(contexts).saturating_add(entries);
    let limit = known.workspace.settings().limits.outputs;
    if outputs <= limit {
        return;
    }
    let at = if manifest.document.writes("/build") {
        manifest.key_span("/build")
    } else {
        Span::file_start(manifest.document.source)
    };
    out.error(
        Problem::TooManyOutputs {
            outputs,
            families,
            contexts,
            entries,
            limit,
        },
        at,
    );
}

/// Each build entry names a variant (or a family) and a context, and writes its own output:
/// none that the families × contexts product writes too, when `families` or `contexts` is set
/// beside the list (which then adds to the product rather than replacing it).
fn build_entries(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let build = &manifest.value.build;
    let Some(entries) = &build.entries else {
        return;
    };
    // Folded: two that differ only by case are one file where case is ignored.
    // Each with whether the families × contexts product writes it (when the entries add to it).
    let mut outputs: HashMap<String, (String, bool)> = HashMap::new();
    if build.families.is_some() || build.contexts.is_some() {
        let (families, contexts) = known.workspace.build_product();
        // A product past `limits.outputs` is an error of its own (`outputs_within_limit`);
        // its outputs are not listed here, one by one.
        if families.len().saturating_mul(contexts.len()) > known.workspace.settings().limits.outputs
        {
            return;
        }
        for family in &families {
            for context in &contexts {
                let output = format!("{family}/{context}.md");
                outputs.insert(folded(&output), (output, true));
            }
        }
    }
    for (index, entry) in entries.iter().enumerate() {
        let pointer = format!("/build/entries/{index}");
        let variants = &known.workspace.variants;
        // `family@version`: the family must exist; its version is checked with the others.
        if let Some((family, _)) = entry.variant.split_once('@') {
            known.family(
                family,
                manifest.value_span(&format!("{pointer}/variant")),
                out,
            );
        }
        let known_variant = entry.variant.contains('@')
            || variants.contains_key(&entry.variant)
            || known
                .workspace
                .invalid
                .contains(RefKind::Variant, &entry.variant)
            || known
                .workspace
                .knows_family(&known.families, &entry.variant);
        if !known_variant {
            out.error(
                Problem::UnknownReference {
                    kind: RefKind::Variant,
                    name: entry.variant.clone(),
                    suggestion: known
                        .suggestions
                        .allowed(manifest.value_span(&format!("{pointer}/variant")))
                        .then(|| closest(&entry.variant, variants.keys().chain(&known.families)))
                        .flatten(),
                },
                manifest.value_span(&format!("{pointer}/variant")),
            );
        }
        known.context(
            &entry.context,
            manifest.value_span(&format!("{pointer}/context")),
            out,
        );
        let family = known.workspace.family_of(&entry.variant);
        let output = entry
            .output
            .clone()
            .unwrap_or_else(|| format!("{family}/{}.md", entry.context));
        let at = if entry.output.is_some() {
            "/output"
        } else {
            ""
        };
        match outputs.get(&folded(&output)) {
            Some((first, by_product)) if *first == output => out.error(
                Problem::InvalidValue(InvalidValue::OutputTaken {
                    by_product: *by_product,
                    path: output,
                }),
                manifest.value_span(&format!("{pointer}{at}")),
            ),
            Some((first, _)) => out.error(
                Problem::InvalidValue(InvalidValue::DiffersOnlyByCase {
                    name: output,
                    other: first.clone(),
                }),
                manifest.value_span(&format!("{pointer}{at}")),
            ),
            None => {
                outputs.insert(folded(&output), (output, false));
            }
        }
    }
}

/// Families (output folders) and contexts (output files) whose names differ only by case
/// would write one file on a file system that ignores case (macOS's and Windows' by default):
/// the output would depend on which was written last, and removing a stale one could remove
/// the other. The second of each pair the matrix writes is an error. (Build entries' own
/// outputs are compared the same way by [`build_entries`].)
fn output_names_differ_beyond_case(
    known: &Known<'_>,
    manifest: &Entry<ManifestDef>,
    out: &mut Diagnostics,
) {
    let workspace = known.workspace;
    let build = &manifest.value.build;
    // Only names the product writes together: `build.entries` alone names its outputs itself.
    if build.entries.is_some() && build.families.is_none() && build.contexts.is_none() {
        return;
    }
    let built = |listed: &Option<Vec<String>>, name: &str| {
        listed
            .as_ref()
            .is_none_or(|names| names.iter().any(|listed| listed == name))
    };
    let families = workspace.variants.values().filter_map(|entry| {
        let family = entry.value.family_or_id();
        let at = match entry.value.family {
            Some(_) => entry.value_span("/family"),
            None => entry.value_span("/id"),
        };
        built(&build.families, family).then_some((family, at))
    });
    second_by_case(families, out);
    let contexts = workspace.contexts.iter().filter_map(|(name, entry)| {
        let at = Span::file_start(entry.document.source);
        built(&build.contexts, name).then_some((name.as_str(), at))
    });
    second_by_case(contexts, out);
}

/// Each name that differs from an earlier one only by case (or its accents' encoding, see
/// [`folded`]), an error where it is given (a name given again as it is, as a family by each
/// of its variants, is the same name).
fn second_by_case<'a>(names: impl Iterator<Item = (&'a str, Span)>, out: &mut Diagnostics) {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for (name, at) in names {
        match seen.get(&folded(name)) {
            Some(first) if *first != name => out.error(
                Problem::InvalidValue(InvalidValue::DiffersOnlyByCase {
                    name: name.to_string(),
                    other: first.to_string(),
                }),
                at,
            ),
            Some(_) => {}
            None => {
                seen.insert(folded(name), name);
            }
        }
    }
}

/// The longest file or folder name most file systems take, in bytes.
const NAME_MAX: usize = 255;
/// The longest output file name's stem: beside `name.md`, a native variant writes
/// `name.tools.json`.
const STEM_MAX: usize = NAME_MAX - ".tools.json".len();

/// Names Windows keeps for devices: no file or folder has one, whatever its extension.
const DEVICE_NAMES: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Whether Windows cannot create a file or folder named `name`: a device's name (`nul`,
/// `con.md`), one holding a character it keeps (`<>:"|?*\`, a control character) or, for a
/// whole name (`stem_only` false), one ending with a dot or a space, which it drops (`x.` is
/// `x` there). An output file's stem is followed by `.md`: `a.` makes `a..md`.
pub fn not_portable(name: &str, stem_only: bool) -> bool {
    // `.` and `..` are no names; a path holding one is refused by its form.
    if matches!(name, "." | "..") {
        return false;
    }
    is_windows_device(name)
        || name.contains(['<', '>', ':', '"', '|', '?', '*', '\\'])
        || name.chars().any(char::is_control)
        || (!stem_only && name.ends_with(['.', ' ']))
}

/// Whether a file named `name` is one of Windows's devices whatever its extension (`nul`,
/// `con.md`, `Aux.toml`).
pub fn is_windows_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    DEVICE_NAMES
        .iter()
        .any(|device| stem.eq_ignore_ascii_case(device))
}

/// Every file of the workspace that was read can be held by a clone on Windows or macOS:
/// no part of its path is a name Windows cannot create (`components/aux.toml` was read and
/// built here, and a clone there failed or lacked it), and no two differ only by case
/// (`agent_role.md` and `Agent_Role.md` are one file there, so the prompt depended on which
/// was checked out last). Each problem is an error at the file.
fn source_names_portable(known: &Known<'_>, _: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let mut by_fold: HashMap<String, String> = HashMap::new();
    // In the order of their paths: the second of a pair is told, whichever was read first.
    let mut files: Vec<_> = known.workspace.sources.with_ids().collect();
    files.sort_by(|(_, a), (_, b)| a.path.cmp(&b.path));
    for (id, file) in files {
        let path = &file.path;
        // Files the caller named outside the workspace, standard input and the built-in
        // templates (`<built-in>/…`) are not cloned.
        if path.is_absolute()
            || path.starts_with("<")
            || path.to_string_lossy().starts_with('<')
            || !path
                .components()
                .all(|part| matches!(part, std::path::Component::Normal(_)))
        {
            continue;
        }
        let shown = path.to_string_lossy().replace('\\', "/");
        // A control character in a file's name is not counted here (outputs' names are
        // held to it): such a file still loads, and its name is shown by its picture
        // wherever it is quoted. The rest of the name is: a control character beside a `:`
        // (`c\u{1}:d.md`) hid the `:` from the check.
        let unportable = path.components().any(|part| {
            let name = part.as_os_str().to_string_lossy();
            let without_controls: String = name.chars().filter(|c| !c.is_control()).collect();
            not_portable(&without_controls, false)
        });
        let other = match by_fold.get(&folded(&shown)) {
            Some(first) if *first != shown => Some(first.clone()),
            Some(_) => continue,
            None => {
                by_fold.insert(folded(&shown), shown.clone());
                None
            }
        };
        // A context's file is named after it: its name, an output's, was told of already
        // (as one Windows cannot create, or one no context may have).
        let told = out.iter().any(|diagnostic| {
            diagnostic.span == Span::file_start(id) && diagnostic.severity() == Severity::Error
        });
        if (unportable || other.is_some()) && !told {
            out.error(
                Problem::InvalidValue(InvalidValue::FileNotPortable { path: shown, other }),
                Span::file_start(id),
            );
        }
    }
}

/// Every name that becomes part of an output's path fits a file system and is neither a
/// device's name nor ends with a dot or space on Windows: `build.out`'s folders, each build
/// entry's `output`, each family (a folder) and each context (a file). A build refused a longer one only when it
/// came to write it, with no place in the files to fix; Windows refused a device's name at
/// checkout, where every other system had written the file.
fn output_names_fit(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    // The first problem of a folder's name, or of a file's stem (`stem`): too long, or not
    // one Windows can create.
    let problem = |name: &str, stem: bool| {
        let limit = if stem { STEM_MAX } else { NAME_MAX };
        if name.len() > limit {
            Some(Problem::InvalidValue(InvalidValue::NameTooLong {
                name: name.to_string(),
                limit,
            }))
        } else if not_portable(name, stem) {
            Some(Problem::InvalidValue(InvalidValue::NotPortable {
                name: name.to_string(),
            }))
        } else {
            None
        }
    };
    let build = &manifest.value.build;
    if let Some(found) = build.out.split('/').find_map(|part| problem(part, false)) {
        out.error(found, manifest.value_span("/build/out"));
    }
    for (index, entry) in build.entries.iter().flatten().enumerate() {
        let Some(output) = &entry.output else {
            continue;
        };
        let mut parts = output.rsplit('/');
        let file = parts.next().unwrap_or_default();
        let stem = file.strip_suffix(".md").unwrap_or(file);
        let found = parts
            .find_map(|part| problem(part, false))
            .or_else(|| problem(stem, true));
        if let Some(found) = found {
            out.error(
                found,
                manifest.value_span(&format!("/build/entries/{index}/output")),
            );
        }
    }
    let workspace = known.workspace;
    for entry in workspace.variants.values() {
        let family = entry.value.family.as_deref().unwrap_or(&entry.value.id);
        if let Some(found) = problem(family, false) {
            let pointer = if entry.value.family.is_some() {
                "/family"
            } else {
                "/id"
            };
            out.error(found, entry.value_span(pointer));
        }
    }
    for (name, entry) in &workspace.contexts {
        if let Some(found) = problem(name, true) {
            out.error(found, crate::span::Span::file_start(entry.source()));
        }
    }
}

/// The families `routing.order` lists and the families and contexts of its expectations.
fn routing_names_exist(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let routing = &manifest.value.routing;
    for (index, family) in routing.order.iter().enumerate() {
        known.family(
            family,
            manifest.value_span(&format!("/routing/order/{index}")),
            out,
        );
    }
    for (index, expected) in routing.expect.iter().enumerate() {
        let pointer = format!("/routing/expect/{index}");
        known.family(
            &expected.family,
            manifest.value_span(&format!("{pointer}/family")),
            out,
        );
        if let Some(context) = &expected.context {
            known.context(
                context,
                manifest.value_span(&format!("{pointer}/context")),
                out,
            );
        }
    }
}

fn contexts_exist(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let value = &manifest.value;
    if let Some(context) = &value.default_context {
        known.context(context, manifest.value_span("/default_context"), out);
    }
    for (index, context) in value.build.contexts.iter().flatten().enumerate() {
        let span = manifest.value_span(&format!("/build/contexts/{index}"));
        known.context(context, span, out);
    }
}

/// A shared parameter's `depends_on` names tools, and it does not `use` another.
fn shared_parameters(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    for (name, parameter) in &manifest.value.parameters {
        let pointer = child_pointer("/parameters", name);
        dependencies_exist(known, manifest, &pointer, parameter, out);
        schema_keys_of_no_field(manifest, &pointer, parameter, out);
        nested_schema_types(manifest, &pointer, parameter, out);
        if parameter.use_shared.is_some() {
            out.error(
                Problem::InvalidValue(InvalidValue::SharedParameterUses),
                manifest.key_span(&format!("{pointer}/use")),
            );
        }
    }
}

fn token_families_exist(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let tokens = &manifest.value.tokens;
    for family in tokens.families.keys() {
        let span = manifest.key_span(&child_pointer("/tokens/families", family));
        known.family(family, span, out);
    }
    for (index, family) in tokens.exact.iter().enumerate() {
        let span = manifest.value_span(&format!("/tokens/exact/{index}"));
        known.family(family, span, out);
    }
}

/// The folders of the workspace's sources, by setting.
fn source_folders(paths: &Paths) -> [(&'static str, &String); 6] {
    [
        ("paths.variants", &paths.variants),
        ("paths.components", &paths.components),
        ("paths.tools", &paths.tools),
        ("paths.partials", &paths.partials),
        ("paths.contexts", &paths.contexts),
        ("paths.schema", &paths.schema),
    ]
}

fn paths_stay_inside(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let value = &manifest.value;
    let root = &known.workspace.root;
    let folders = source_folders(&value.paths).into_iter();
    for (setting, path) in folders.chain([("build.out", &value.build.out)]) {
        let pointer = format!("/{}", setting.replace('.', "/"));
        // The folders promptc writes in are taken as written, name by name (see
        // `confine::resolve_output`): a `..` that stays inside, accepted here, was refused
        // by the build as a path outside the workspace, with no place in the files.
        let written = matches!(setting, "build.out" | "paths.schema");
        let up = std::path::Path::new(path)
            .components()
            .any(|part| part == std::path::Component::ParentDir);
        let not_plain = || {
            Problem::InvalidValue(InvalidValue::BadForm {
                value: format!("{path:?}"),
                key: false,
                expected: if written {
                    Form::WrittenFolder
                } else {
                    Form::Folder
                },
            })
        };
        // A default the manifest does not write has no place in it: the diagnostic points at
        // its start rather than spanning the whole file.
        let written_here = manifest.document.writes(&pointer);
        let problem = if path.contains('\0') || is_windows_form(path) {
            not_plain()
        } else if let Some(relative) = crate::load::read::relative_form(root, root, path) {
            Problem::AbsolutePath {
                path: path.clone(),
                relative,
            }
        } else if crate::load::read::resolve_inside(root, root, path).is_none() {
            Problem::PathEscapesWorkspace {
                path: path.clone(),
                default_of: (!written_here).then(|| setting.to_string()),
                through_link: crate::confine::inside_as_written(path),
            }
        } else if written && up {
            not_plain()
        } else if !written && crate::load::read::data_folder(root, path).is_none() {
            // `build.out` is told of with the folders it must keep apart from; the schema
            // folder is written, never read as data, and may be the root.
            Problem::InvalidValue(InvalidValue::FolderIsRoot {
                setting: setting.to_string(),
            })
        } else if crate::confine::in_git_folder(root, path) {
            Problem::PathInGitFolder {
                setting: setting.to_string(),
                path: path.clone(),
            }
        } else if written && {
            crate::looked_at::name(&root.join(path));
            root.join(path).is_file()
        } {
            Problem::InvalidValue(InvalidValue::FileWhereFolderBelongs { path: path.clone() })
        } else if let Some(problem) = (!written && written_here)
            .then(|| no_such_folder(root, path))
            .flatten()
        {
            problem
        } else {
            continue;
        };
        let span = if written_here {
            manifest.value_span(&pointer)
        } else {
            crate::span::Span::new(manifest.document.source, 0..0)
        };
        out.error(problem, span);
    }
}

/// A folder the manifest names to read from that is a file, or that is not there while a
/// folder beside it has a near name (`component` for `components`): its files would count as
/// none, and every reference to what it holds would be reported instead of it. A folder that
/// is simply not there yet is empty (git keeps no empty folder: a fresh clone lacks one).
fn no_such_folder(root: &std::path::Path, path: &str) -> Option<Problem> {
    let at = root.join(path);
    crate::looked_at::name(&at);
    if at.is_dir() {
        return None;
    }
    let is_file = at.exists();
    let suggestion = crate::load::read::folder_near(root, path);
    (is_file || suggestion.is_some()).then(|| {
        Problem::InvalidValue(InvalidValue::NoSuchFolder {
            path: path.to_string(),
            is_file,
            suggestion,
        })
    })
}

/// `build.out` is a folder of its own: a build writes and deletes files there.
fn output_folder_is_apart(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let value = &manifest.value;
    let root = &known.workspace.root;
    let out_dir = value.build.out.trim_matches('/');
    let outside = |path: &str| crate::load::read::resolve_inside(root, root, path).is_none();
    let mut overlaps = false;
    for (setting, folder) in source_folders(&value.paths) {
        // A folder outside the workspace is refused at its setting; it overlaps nothing here.
        // Nor does a folder read as data that is the root, refused at its setting too.
        if outside(&value.build.out)
            || outside(folder)
            || (setting != "paths.schema" && crate::load::read::data_folder(root, folder).is_none())
        {
            continue;
        }
        let (outputs, sources) = (
            crate::confine::lexical(out_dir),
            crate::confine::lexical(folder),
        );
        let overlap =
            |a: &std::path::Path, b: &std::path::Path| a.starts_with(b) || b.starts_with(a);
        // As written, and as the folders really lie: a link in the workspace (`here` → `.`)
        // can make `here/partials` the partials folder itself.
        let (real_outputs, real_sources) = (
            crate::confine::real_folder(root, &outputs),
            crate::confine::real_folder(root, &sources),
        );
        if !outputs.as_os_str().is_empty()
            && (overlap(&outputs, &sources) || overlap(&real_outputs, &real_sources))
        {
            // At `build.out` where the file writes it, else at the folder's setting (one of
            // the two is written: both defaults lie apart); a setting left to its default has
            // no place, and the whole manifest was underlined.
            let folder_setting = format!("/{}", setting.replace('.', "/"));
            let at = ["/build/out", folder_setting.as_str()]
                .into_iter()
                .find(|pointer| manifest.document.writes(pointer))
                .map_or_else(
                    || Span::file_start(manifest.document.source),
                    |pointer| manifest.value_span(pointer),
                );
            overlaps = true;
            out.error(
                Problem::OutputOverlapsSources {
                    out: out_dir.to_string(),
                    setting: setting.to_string(),
                    folder: folder.clone(),
                },
                at,
            );
        }
    }
    if crate::confine::lexical(out_dir).as_os_str().is_empty() {
        out.error(
            Problem::InvalidValue(InvalidValue::FolderIsRoot {
                setting: "build.out".into(),
            }),
            manifest.value_span("/build/out"),
        );
    }
    // An output folder outside the workspace, or its root, is refused at its setting (above
    // and where paths are checked): it overlaps nothing here.
    if outside(&value.build.out) || crate::confine::lexical(out_dir).as_os_str().is_empty() {
        return;
    }
    outputs_apart_from_rules(known, manifest, out_dir, out);
    // Where the outputs overlap a data folder, that is said once, above, not per file.
    no_source_in_the_output_folder(known, out_dir, !overlaps, out);
}

/// No file the workspace read lies in the output folder, or is a link to a file there: a
/// template that is one renders its own last output into the next (which then grows on every
/// build, and `check` never passes), a partial that is one runs a context's text, written into
/// an output, as template code, and the build refuses to write over a file the workspace
/// reads. Said at the file, which is what to move or replace (unless `files_lying_there` is
/// false: then the folder checks above have said it of the whole folder); the rules reader
/// says it of the rules it skips.
fn no_source_in_the_output_folder(
    known: &Known<'_>,
    out_dir: &str,
    files_lying_there: bool,
    out: &mut Diagnostics,
) {
    let workspace = known.workspace;
    let outputs = crate::confine::lexical(out_dir);
    if outputs.as_os_str().is_empty() {
        return;
    }
    let real_outputs = crate::confine::real_folder(&workspace.root, &outputs);
    // The files of a `rules_from` folder in the output folder are said once, at the
    // `rules_from` value (above).
    let rules_in_outputs: Vec<std::path::PathBuf> = workspace
        .contexts
        .values()
        .flat_map(|context| &context.value.rules_from)
        .map(|folder| crate::confine::lexical(folder))
        .filter(|folder| folder.starts_with(&outputs))
        .collect();
    let linked: std::collections::HashMap<crate::source::SourceId, &std::path::Path> =
        workspace.sources.linked().collect();
    let refused: Vec<(crate::source::SourceId, crate::path_error::PathProblem)> = workspace
        .sources
        .with_ids()
        .filter_map(|(id, file)| {
            if let Some(real) = linked
                .get(&id)
                .filter(|real| real.starts_with(&real_outputs))
            {
                let target = crate::confine::shown(&workspace.root, real);
                return Some((id, crate::path_error::PathProblem::LinkToOutput { target }));
            }
            // A file lying in the output folder itself (a `template_file` naming an output
            // through `..`), as written or as the folders really lie (`build.out` a link to
            // the folder): the build would refuse to write over it, with no place to show.
            let lexical = crate::confine::lexical(&file.path.to_string_lossy());
            let real = workspace.root.join(&lexical);
            let a_rules_file = rules_in_outputs.iter().any(|rules| {
                lexical
                    .strip_prefix(rules)
                    .is_ok_and(crate::load::rules::is_rules_location)
            });
            (files_lying_there
                && (lexical.starts_with(&outputs) || real.starts_with(&real_outputs))
                && !a_rules_file)
                .then_some((id, crate::path_error::PathProblem::InOutput))
        })
        .collect();
    for (id, problem) in refused {
        let file = workspace.sources.get(id);
        let error = crate::path_error::PathError::new(&file.path, problem);
        out.error(
            Problem::PathRefused {
                path: file.path.display().to_string(),
                reason: error.problem.to_string(),
                help: error.help(),
            },
            Span::file_start(id),
        );
    }
}

/// The output folder does not lie where a workspace context reads rules files: the next
/// build would read the outputs back as rules, and they would change on every build. (Entries
/// write below it, in folders whose names cannot start with a dot as `.clinerules` does.)
fn outputs_apart_from_rules(
    known: &Known<'_>,
    manifest: &Entry<ManifestDef>,
    out_dir: &str,
    out: &mut Diagnostics,
) {
    let root = &known.workspace.root;
    let outputs = crate::confine::lexical(out_dir);
    // As written, and as the folders really lie: a link (`out = "lnk"`, `lnk` → a folder's
    // `.clinerules`) can put the outputs where rules are read.
    let real_outputs = crate::confine::real_folder(root, &outputs);
    let read_as_rules = |outputs: &std::path::Path, rules: &std::path::Path| {
        outputs.strip_prefix(rules).is_ok_and(|below| {
            !below.as_os_str().is_empty() && crate::load::rules::is_rules_location(below)
        })
    };
    for (name, context) in &known.workspace.contexts {
        // The other way round: rules read from the output folder, or below it. Said at the
        // `rules_from` value, by the context that writes it.
        if crate::load::rules::writes_rules_from(context) {
            for (index, folder) in context.value.rules_from.iter().enumerate() {
                let rules = crate::confine::lexical(folder);
                if rules.starts_with(&outputs)
                    || crate::confine::real_folder(root, &rules).starts_with(&real_outputs)
                {
                    out.error(
                        Problem::RulesReadFromOutputs {
                            output: out_dir.to_string(),
                            context: name.clone(),
                            folder: folder.clone(),
                        },
                        context.value_span(&crate::pointer::child_pointer(
                            "/rules_from",
                            &index.to_string(),
                        )),
                    );
                }
            }
        }
        for folder in &context.value.rules_from {
            let rules = crate::confine::lexical(folder);
            if read_as_rules(&outputs, &rules)
                || read_as_rules(&real_outputs, &crate::confine::real_folder(root, &rules))
            {
                out.error(
                    Problem::OutputsReadAsRules {
                        output: out_dir.to_string(),
                        context: name.clone(),
                        folder: folder.clone(),
                    },
                    manifest.value_span("/build/out"),
                );
                return;
            }
        }
    }
}

/// Where in `pattern` (written at `value`) its syntax fails, as the parser places it (an
/// unclosed group at its `(`, a bad escape at the escape): the whole value when the pattern
/// parses and fails later (past a size limit), or when the place cannot be found in the file.
fn syntax_error_at(
    sources: &crate::source::Sources,
    value: crate::span::Span,
    pattern: &str,
) -> crate::span::Span {
    let place = || {
        let error = regex_syntax::ast::parse::Parser::new()
            .parse(pattern)
            .err()?;
        let span = error.span();
        let start = span.start.offset;
        let end = span.end.offset.max(start + 1).min(pattern.len());
        pattern.get(start..end)?;
        crate::span::within_value(sources, value, pattern, start..end)
    };
    place().unwrap_or(value)
}

fn regexes_compile(known: &Known<'_>, manifest: &Entry<ManifestDef>, out: &mut Diagnostics) {
    let regexes: Vec<(usize, &str, &str)> = manifest
        .value
        .postprocess
        .iter()
        .flatten()
        .enumerate()
        .filter_map(|(index, rule)| match rule {
            PostprocessRule::Regex {
                pattern, replace, ..
            } => Some((index, pattern.as_str(), replace.as_str())),
            _ => None,
        })
        .collect();
    let built = crate::built::postprocess_regexes(regexes.iter().map(|(_, pattern, _)| *pattern));
    for ((index, pattern, replace), built) in regexes.iter().zip(built) {
        match built {
            Err(error) => out.error(
                Problem::InvalidRegex { message: error },
                syntax_error_at(
                    &known.workspace.sources,
                    manifest.value_span(&format!("/postprocess/{index}/pattern")),
                    pattern,
                ),
            ),
            Ok(regex) => {
                let span = manifest.value_span(&format!("/postprocess/{index}/replace"));
                // Placed at the `$` that starts the reference, within the replacement.
                let at = |range: std::ops::Range<usize>| {
                    crate::span::within_value(&known.workspace.sources, span, replace, range)
                        .unwrap_or(span)
                };
                if let Some((problem, range)) = unknown_group(&regex, replace) {
                    out.error(problem, at(range));
                }
                if let Some((problem, range)) = literal_dollar(&regex, replace) {
                    out.error(problem, at(range));
                }
            }
        }
    }
}

/// The first `$` of a replacement that starts no group reference, as the replacement is
/// expanded: not `$$`, not `$` before a letter, digit or `_`, not `${…}` closed. The engine
/// writes it as it is, where `$é` (a group name of other letters, which needs the braces) or
/// a `${` left open meant a group.
fn literal_dollar(
    regex: &regex_automata::meta::Regex,
    replace: &str,
) -> Option<(Problem, std::ops::Range<usize>)> {
    let mut rest = replace;
    while let Some(at) = rest.find('$') {
        let dollar = replace.len() - rest.len() + at;
        let after = &rest[at + 1..];
        let mut chars = after.chars();
        let starts_reference = match chars.next() {
            Some('$') => {
                rest = chars.as_str();
                continue;
            }
            Some('{') => chars.as_str().contains('}'),
            Some(c) => c.is_ascii_alphanumeric() || c == '_',
            None => false,
        };
        if starts_reference {
            rest = after;
            continue;
        }
        let name: String = after
            .trim_start_matches('{')
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let group = regex
            .group_info()
            .pattern_names(regex_automata::PatternID::ZERO)
            .flatten()
            .find(|group| *group == name)
            .map(str::to_string);
        return Some((
            Problem::LiteralDollar {
                after: after.chars().take(8).collect(),
                group,
            },
            dollar..dollar + 1,
        ));
    }
    None
}

/// The first group a replacement reads that its pattern does not have, as the replacement is
/// expanded (`$1`, `$name`, `${name}`; the longest run of letters, digits and `_` is a name,
/// so `$1_bot` reads a group named `1_bot`): such a group expands to nothing, and the text it
/// stood for was lost without a word.
fn unknown_group(
    regex: &regex_automata::meta::Regex,
    replace: &str,
) -> Option<(Problem, std::ops::Range<usize>)> {
    let info = regex.group_info();
    let groups = info.group_len(regex_automata::PatternID::ZERO);
    let unknown: std::cell::RefCell<Option<String>> = std::cell::RefCell::new(None);
    let note = |group: String| {
        unknown.borrow_mut().get_or_insert(group);
    };
    let mut expanded = String::new();
    regex_automata::util::interpolate::string(
        replace,
        |index, _| {
            if index >= groups {
                note(index.to_string());
            }
        },
        |name| {
            let index = info.to_index(regex_automata::PatternID::ZERO, name);
            if index.is_none() {
                note(name.to_string());
            }
            index
        },
        &mut expanded,
    );
    let group = unknown.into_inner()?;
    let names: Vec<String> = info
        .pattern_names(regex_automata::PatternID::ZERO)
        .flatten()
        .map(str::to_string)
        .collect();
    let suggestion = closest(&group, &names);
    // The engine reads a name of digits as a number: `$03` is group 3.
    let number = |name: &str| {
        name.bytes()
            .all(|byte| byte.is_ascii_digit())
            .then(|| name.parse::<usize>().ok())
            .flatten()
    };
    let range = group_references(replace)
        .find(|(_, name)| *name == group || number(name).is_some_and(|n| Some(n) == number(&group)))
        .map_or(0..replace.len(), |(range, _)| range);
    Some((
        Problem::UnknownGroup {
            group,
            groups,
            names,
            suggestion,
        },
        range,
    ))
}

/// The group references of a replacement, in order, each with its range (from its `$`) and
/// the name or number it reads, as the engine reads them: `$$` is a dollar sign, `${…}` reads
/// what the braces hold, and `$` before letters, digits and `_` reads all of them.
fn group_references(replace: &str) -> impl Iterator<Item = (std::ops::Range<usize>, &str)> {
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let dollar = from + replace.get(from..)?.find('$')?;
            let after = &replace[dollar + 1..];
            if after.starts_with('$') {
                from = dollar + 2;
                continue;
            }
            if let Some(braced) = after.strip_prefix('{')
                && let Some(close) = braced.find('}')
            {
                from = dollar + 2 + close + 1;
                return Some((dollar..from, &braced[..close]));
            }
            let name_len = after
                .bytes()
                .take_while(|byte| byte.is_ascii_alphanumeric() || *byte == b'_')
                .count();
            from = dollar + 1 + name_len;
            if name_len > 0 {
                return Some((dollar..from, &after[..name_len]));
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(pattern: &str) -> regex_automata::meta::Regex {
        crate::built::postprocess_regexes([pattern])
            .pop()
            .and_then(Result::ok)
            .expect("the pattern builds")
    }

    #[test]
    fn a_replacement_s_references_are_read_as_the_engine_reads_them() {
        let references: Vec<_> = group_references("$$1 ${a b}x $1_bot $ $é ${open").collect();
        assert_eq!(references, [(4..10, "a b"), (12..18, "1_bot")]);
    }

    #[test]
    fn an_unknown_group_is_placed_at_its_first_reference() {
        let regex = built("(?P<word>a)(b)");
        // `$3` twice: the first is placed; `$$3` is a dollar sign and a 3.
        let (_, range) = unknown_group(&regex, "$$3 ${word} $3 $3").expect("group 3 is unknown");
        assert_eq!(range, 12..14);
        let (_, range) = unknown_group(&regex, "$1 ${wrod}").expect("wrod is unknown");
        assert_eq!(range, 3..10);
        // A number written with a leading zero is the same group.
        let (_, range) = unknown_group(&regex, "x $03").expect("group 3 is unknown");
        assert_eq!(range, 2..5);
        let (_, range) = unknown_group(&regex, "ok ${03} $1").expect("group 3 is unknown");
        assert_eq!(range, 3..8);
        assert!(unknown_group(&regex, "$0 $2 ${word} $$9").is_none());
    }
}
