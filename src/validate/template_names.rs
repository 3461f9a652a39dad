//! Names in templates: every name a template reads must be defined by something, and every
//! listed component should have a slot somewhere.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::model::default_slot;
use crate::namespace::{ENABLED_TOOLS, EXTRA, Namespace, TOOL, TOOLS_DATA, TOOLS_TEXT, closest};
use crate::problem::{Problem, RefKind};
use crate::span::Span;
use crate::templates::TemplateId;
use crate::templates::placement::SlotReaders;
use crate::workspace::Workspace;
use crate::workspace::inheritance::{EffectiveVariant, effective};
use crate::workspace::template_choice::{component_template, tool_format};

/// What the rules share: the variants after inheritance and the names templates may read.
struct Scope<'w> {
    workspace: &'w Workspace,
    variants: Vec<EffectiveVariant>,
    /// Names every template sees: context fields, predicates, slots, compile facts.
    shared: Namespace,
    /// `shared` plus every variant's placeholders: what a component or tool text may read.
    any_variant: Namespace,
}

/// The names a template may read in some variant: a runtime value (`--set`) under any other
/// name is read by none, since a template that read it would not validate.
pub fn readable_names(workspace: &Workspace) -> Namespace {
    Scope::new(workspace).any_variant
}

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let scope = Scope::new(workspace);
    let guarded = Guarded::new(&scope);
    shared_templates(&scope, &guarded, out);
    // An invalid or unknown component, or a template that did not compile: what the sections
    // read cannot be told, and neither check is made.
    let sections: Vec<Option<VariantSections>> = scope
        .sound_variants()
        .map(|variant| VariantSections::of(workspace, variant))
        .collect();
    // The components each variant lists whose slot none of its templates reads: a variant
    // whose parent leaves the same ones out has the parent's finding, said at the parent.
    let unslotted: HashMap<&str, BTreeSet<&str>> = scope
        .sound_variants()
        .zip(&sections)
        .filter_map(|(variant, sections)| {
            let sections = sections.as_ref()?;
            let components = variant.components();
            let ids = unslotted(variant, sections).map(|index| components[index].as_str());
            Some((variant.id(), ids.collect()))
        })
        .collect();
    for (variant, sections) in scope.sound_variants().zip(&sections) {
        base_template(&scope, variant, &guarded, out);
        family_templates_exist(&scope, variant, out);
        if let Some(sections) = sections {
            let parents = variant
                .chain
                .get(1)
                .and_then(|parent| unslotted.get(parent.as_str()));
            unslotted_components(&scope, variant, sections, parents, out);
            unwritten_tools(&scope, variant, sections, out);
        }
    }
    sections_read_where_empty(&scope, out);
    sections_written_twice(&scope, out);
    sections_read_by_tools(&scope, out);
    tools_tested_exist(workspace, out);
    volatile_names_known(&scope, out);
}

/// Each tool id a template asks `enabled_tools` about is one of the workspace's: after a
/// tool is renamed, a test of its old id is false in every prompt without a word.
fn tools_tested_exist(workspace: &Workspace, out: &mut Diagnostics) {
    if workspace.tools.is_empty() {
        return;
    }
    let ids: Vec<String> = workspace.tools.keys().cloned().collect();
    let mut templates: Vec<TemplateId> = workspace
        .templates
        .ids()
        .filter(|template| {
            workspace
                .templates
                .variables(*template)
                .iter()
                .any(|name| name == ENABLED_TOOLS)
        })
        .collect();
    templates.sort_by_key(|id| workspace.templates.name(*id));
    for template in templates {
        for (name, span) in workspace
            .templates
            .literals_tested_in(template, ENABLED_TOOLS)
        {
            // A tool whose file failed to load was reported there: its id is no typo.
            if !ids.contains(&name) && !workspace.invalid.contains(RefKind::Tool, &name) {
                out.push(Diagnostic::new(
                    Problem::ToolNeverEnabled {
                        suggestion: closest(&name, &ids),
                        name,
                    },
                    span,
                ));
            }
        }
    }
}

/// A tool's texts and the tool formats render before every section (the sections may show
/// the tools, not the other way round): a slot they read is always "" there.
fn sections_read_by_tools(scope: &Scope<'_>, out: &mut Diagnostics) {
    let workspace = scope.workspace;
    let slots: BTreeSet<String> = workspace
        .components
        .values()
        .map(|entry| entry.value.slot())
        .collect();
    if slots.is_empty() {
        return;
    }
    // Each template that renders as a tool's text, with the tool; a tool format with none.
    let mut readers: BTreeMap<TemplateId, Option<&str>> = BTreeMap::new();
    let parameter_texts = |parts: &crate::workspace::ParameterParts| {
        [parts.texts.instruction, parts.texts.usage, parts.texts.note]
    };
    for (id, entry) in &workspace.tools {
        let texts = &entry.value.texts;
        let family_texts = entry.value.family_texts.values();
        let own = [texts.name, texts.description]
            .into_iter()
            .chain(texts.parameters.iter().flat_map(parameter_texts))
            .chain(family_texts.flat_map(|family| {
                [family.name, family.description]
                    .into_iter()
                    .chain(family.parameters.iter().flatten().flat_map(parameter_texts))
            }));
        for template in own.flatten() {
            readers.entry(template).or_insert(Some(id.as_str()));
        }
    }
    if let Some(manifest) = workspace.valid_manifest() {
        for parts in manifest.value.shared_parameters.values() {
            for template in parameter_texts(parts).into_iter().flatten() {
                readers.entry(template).or_insert(None);
            }
        }
    }
    for variant in &scope.variants {
        readers
            .entry(tool_format(workspace, variant))
            .or_insert(None);
    }
    let mut told: BTreeSet<(TemplateId, &str)> = BTreeSet::new();
    for (top, tool) in readers {
        for template in workspace.templates.with_used(top) {
            for name in workspace.templates.variables(template) {
                if !slots.contains(name) || !told.insert((template, name.as_str())) {
                    continue;
                }
                let Some(span) = workspace.templates.find_name(template, name) else {
                    continue;
                };
                out.push(Diagnostic::new(
                    Problem::SectionReadByTools {
                        slot: name.clone(),
                        tool: tool.map(str::to_string),
                    },
                    span,
                ));
            }
        }
    }
}

/// Each name `tokens.volatile` lists is one a template may read: the stable-prefix probe
/// changes the values of those names, and a name that nothing defines (a typo of `CWD`) is
/// never changed, so the prefix it should end looks stable.
fn volatile_names_known(scope: &Scope<'_>, out: &mut Diagnostics) {
    let manifest = &scope.workspace.manifest;
    for (index, name) in scope
        .workspace
        .settings()
        .tokens
        .volatile
        .iter()
        .enumerate()
    {
        // A path into the context (`extra.team`, `model.id`) names the values under it.
        let (unknown, suggestion) = if name.contains('.') {
            // Into a list too (`mcp_servers.name`: each server's), which the names a
            // template may read do not follow.
            // Past a declared `extra` key that holds no table or list, nothing is there.
            let past_a_value = || {
                let mut segments = name.split('.');
                let (Some(crate::namespace::EXTRA), Some(key), Some(_)) =
                    (segments.next(), segments.next(), segments.next())
                else {
                    return Ok(());
                };
                match scope.workspace.settings().context_fields.get(key) {
                    Some(field)
                        if !matches!(
                            field.kind,
                            crate::model::ParameterType::Array
                                | crate::model::ParameterType::Object
                        ) =>
                    {
                        Err((name.clone(), Some(format!("extra.{key}"))))
                    }
                    _ => Ok(()),
                }
            };
            match scope
                .any_variant
                .check_path(name)
                .and_then(|()| crate::schema::context_schema_at(name).map(|_| ()))
                .and_then(|()| past_a_value())
            {
                Ok(()) => continue,
                Err(unknown) => unknown,
            }
        } else if scope.any_variant.contains(name) {
            continue;
        } else {
            let near = closest(name, scope.any_variant.names());
            let mut work = CONTAINING_WORK;
            let near = prefer_whole_name(name, near, scope.any_variant.names(), &mut work);
            (name.clone(), near)
        };
        // A path into the context (`browser.nope`) names a field it does not have, said as
        // such: a placeholder's help (define it in `placeholders`) does not fit it.
        let into_context = unknown.contains('.')
            && unknown
                .split('.')
                .next()
                .is_some_and(|first| crate::namespace::context_fields().contains(first));
        let problem = if into_context {
            Problem::UnknownContextField {
                fields: crate::schema::fields_if_none_near(&unknown, &suggestion),
                path: unknown,
                suggestion,
                reader: crate::problem::PathReader::VolatileList,
            }
        } else {
            Problem::UndefinedPlaceholder {
                suggestion,
                name: unknown,
                declared_unread: None,
            }
        };
        out.push(Diagnostic::new(
            problem,
            manifest.value_span(&format!("/tokens/volatile/{index}")),
        ));
    }
}

impl<'w> Scope<'w> {
    fn new(workspace: &'w Workspace) -> Self {
        let mut shared = Namespace::new(workspace.settings().predicates.keys().map(String::as_str));
        shared.declare_extra(workspace.settings().context_fields.keys());
        let slots = workspace
            .components
            .values()
            .map(|entry| entry.value.slot());
        for slot in slots.chain(workspace.invalid.slots.iter().cloned()) {
            shared.insert(slot);
        }
        for name in [ENABLED_TOOLS, TOOLS_DATA, TOOLS_TEXT] {
            shared.insert(name);
        }
        if workspace.invalid.manifest_invalid {
            shared.open();
        }
        // Component and tool texts are shared by variants: any variant's placeholder may feed
        // them (rendering catches the rest).
        let mut any_variant = shared.clone();
        if workspace.invalid.variant_invalid {
            any_variant.open();
        }
        for entry in workspace.variants.values() {
            for name in entry.value.placeholders.keys() {
                any_variant.insert(name.clone());
            }
        }
        Self {
            workspace,
            variants: workspace
                .variants
                .keys()
                .filter_map(|id| effective(&workspace.variants, id))
                .collect(),
            shared,
            any_variant,
        }
    }

    /// Variants whose `extends` chain is whole: one that is broken is not merged correctly,
    /// and its base template and slots would be blamed for what its missing ancestors define.
    fn sound_variants(&self) -> impl Iterator<Item = &EffectiveVariant> {
        self.variants
            .iter()
            .filter(|variant| self.workspace.ancestry_is_sound(variant.id()))
    }
}

/// Every template but the base templates (checked per variant, with that variant's
/// placeholders): component and tool texts against any variant's names, tool formats with
/// `tool` as well.
fn shared_templates(scope: &Scope<'_>, guarded: &Guarded<'_>, out: &mut Diagnostics) {
    let workspace = scope.workspace;
    let bases: BTreeSet<TemplateId> = scope.variants.iter().map(|v| v.base).collect();
    let mut tool_formats: BTreeSet<TemplateId> = scope
        .variants
        .iter()
        .map(|v| tool_format(workspace, v))
        .collect();
    tool_formats.insert(workspace.templates.builtin_tool_format());
    let mut with_tool = scope.any_variant.clone();
    with_tool.insert(TOOL);

    // What a tool format includes, imports or extends renders with `tool` too.
    let reached_from_tool_formats: BTreeSet<TemplateId> = tool_formats
        .iter()
        .flat_map(|format| workspace.templates.used_by(*format).iter().copied())
        .collect();
    tool_formats.extend(reached_from_tool_formats);
    let includers = includers(workspace);

    let mut templates: Vec<TemplateId> = workspace
        .templates
        .ids()
        .filter(|id| !bases.contains(id))
        .collect();
    templates.sort_by_key(|id| workspace.templates.name(*id));
    let items = for_each_templates(workspace);
    let partials: BTreeSet<TemplateId> = workspace.partials.iter().copied().collect();
    // A template whose name a render computes may be any partial: then none is left out.
    let computes_a_name = workspace.templates.ids().any(|template| {
        workspace
            .templates
            .references(template)
            .iter()
            .any(|reference| reference.name.is_none())
    });
    for template in templates {
        // A partial no template names (`unused-partial`) has no includer to take names from:
        // what it reads is checked once one includes it. Said undefined now, a name its
        // includer sets was blamed on the partial (a misspelt include left it unused), with
        // the wrong fix.
        if !computes_a_name && partials.contains(&template) && !includers.contains_key(&template) {
            continue;
        }
        // Most templates see exactly the names any variant gives: copied only for those that
        // see more, since a workspace has hundreds of templates and the names are many.
        let mut namespace = if tool_formats.contains(&template) {
            Cow::Borrowed(&with_tool)
        } else if let Some(item) = items.get(&template) {
            let mut names = scope.any_variant.clone();
            names.insert(*item);
            Cow::Owned(names)
        } else {
            Cow::Borrowed(&scope.any_variant)
        };
        // An included template sees the variables of the template that includes it (a loop
        // variable and its `loop`, a `{% set %}`), and of those that include that one: a
        // name one of them mentions is taken as defined there.
        // Found only for a template that reads a name the namespace lacks: a chain of
        // thousands of partials is followed from those alone.
        let mut above: Option<Vec<TemplateId>> = None;
        for variable in workspace.templates.variables(template) {
            if namespace.contains(variable) {
                continue;
            }
            let above = above.get_or_insert_with(|| includers_above(&includers, template));
            let defined_above = above.iter().any(|&includer| {
                workspace.templates.mentions(includer, variable)
                    || (variable == "loop" && workspace.templates.loops(includer))
            });
            if defined_above {
                namespace.to_mut().insert(variable.clone());
            }
        }
        undefined(workspace, template, (&namespace, guarded), out);
    }
}

/// The texts of `for_each` tools, with the name their item has there.
fn for_each_templates(workspace: &Workspace) -> std::collections::BTreeMap<TemplateId, &str> {
    let mut items = std::collections::BTreeMap::new();
    for entry in workspace.tools.values() {
        let tool = &entry.value;
        if tool.for_each.is_none() {
            continue;
        }
        let parameters = |list: &[crate::workspace::ParameterParts]| {
            list.iter()
                .map(|parts| parts.texts)
                .flat_map(|texts| [texts.instruction, texts.usage, texts.note])
                .collect::<Vec<_>>()
        };
        let mut texts = vec![tool.texts.name, tool.texts.description];
        texts.extend(parameters(&tool.texts.parameters));
        for family in tool.family_texts.values() {
            texts.extend([family.name, family.description]);
            texts.extend(parameters(family.parameters.as_deref().unwrap_or_default()));
        }
        for template in texts.into_iter().flatten() {
            items.insert(template, tool.item_name());
        }
    }
    items
}

/// The templates that include `template`, those that include them, and so on, once each.
fn includers_above(
    includers: &std::collections::BTreeMap<TemplateId, Vec<TemplateId>>,
    template: TemplateId,
) -> Vec<TemplateId> {
    let mut above: Vec<TemplateId> = Vec::new();
    let mut seen = std::collections::HashSet::from([template]);
    let mut next = vec![template];
    while let Some(current) = next.pop() {
        if above.len() >= crate::templates::Templates::TEMPLATES_CREDITED {
            break;
        }
        for &includer in includers.get(&current).into_iter().flatten() {
            if seen.insert(includer) {
                above.push(includer);
                next.push(includer);
            }
        }
    }
    above
}

/// For each template that some template includes (or extends: a parent renders with its
/// child's variables; or imports: minijinja runs an import in a frame above the importer's,
/// where its macros find the importer's names), the templates that do so.
fn includers(workspace: &Workspace) -> std::collections::BTreeMap<TemplateId, Vec<TemplateId>> {
    let templates = &workspace.templates;
    let mut includers: std::collections::BTreeMap<TemplateId, Vec<TemplateId>> =
        std::collections::BTreeMap::new();
    for template in templates.ids() {
        for reference in templates.references(template) {
            if let Some(target) = reference.name.as_deref().and_then(|n| templates.by_name(n)) {
                includers.entry(target).or_default().push(template);
            }
        }
    }
    includers
}

fn base_template(
    scope: &Scope<'_>,
    variant: &EffectiveVariant,
    guarded: &Guarded<'_>,
    out: &mut Diagnostics,
) {
    let workspace = scope.workspace;
    let mut namespace = scope.shared.clone();
    for name in variant.variant.placeholders.keys() {
        namespace.insert(name.clone());
    }
    // A listed component that does not exist is reported in the list; its slot in the
    // base template is not a second problem.
    for component in variant.components() {
        if !workspace.components.contains_key(component) {
            namespace.insert(default_slot(component));
        }
    }
    undefined(workspace, variant.base, (&namespace, guarded), out);
}

/// A listed component without a default template needs one for the variant's family (its
/// own, or the variant's override).
fn family_templates_exist(scope: &Scope<'_>, variant: &EffectiveVariant, out: &mut Diagnostics) {
    let workspace = scope.workspace;
    for component in variant.components() {
        let Some(entry) = workspace.components.get(component) else {
            continue;
        };
        // A family entry whose template is broken was reported where it is broken.
        let family_entry = entry.value.families.contains_key(variant.family());
        if !entry.value.without_default
            || family_entry
            || component_template(workspace, variant, component).is_some()
        {
            continue;
        }
        let Some((_, span)) = listed_at(workspace, variant, component) else {
            continue;
        };
        out.push(Diagnostic::new(
            Problem::NoFamilyTemplate {
                component: component.clone(),
                family: variant.family().to_string(),
            },
            span,
        ));
    }
}

/// A variant's sections as validation sees them: each component's template and slot, which
/// ones the variant switches on, and which of those reach its prompt (see
/// [`SlotReaders`]). `None` for an invalid or unknown component (reported already), or a
/// template that did not compile (one it includes may be it): what they read cannot be told.
struct VariantSections {
    templates: Vec<TemplateId>,
    slots: Vec<String>,
    enabled: Vec<bool>,
    placed: Vec<bool>,
    readers: SlotReaders,
}

impl VariantSections {
    fn of(workspace: &Workspace, variant: &EffectiveVariant) -> Option<Self> {
        if workspace.templates.some_did_not_compile() {
            return None;
        }
        let (templates, slots): (Vec<TemplateId>, Vec<String>) = variant
            .components()
            .iter()
            .map(|id| {
                let (template, _) = component_template(workspace, variant, id)?;
                Some((template, workspace.components.get(id)?.value.slot()))
            })
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .unzip();
        // A component the variant switches off never renders: no slot is needed for it, and
        // what its template reads reaches nothing.
        let overrides = &variant.variant.overrides.components;
        let enabled: Vec<bool> = variant
            .components()
            .iter()
            .map(|id| overrides.get(id).and_then(|o| o.enabled) != Some(false))
            .collect();
        let sections: Vec<(TemplateId, &str)> = templates
            .iter()
            .zip(&slots)
            .map(|(template, slot)| (*template, slot.as_str()))
            .collect();
        let readers = SlotReaders::new(&workspace.templates, variant.base, &sections);
        let placed = readers.placed_in_any_order(&enabled);
        Some(Self {
            templates,
            slots,
            enabled,
            placed,
            readers,
        })
    }

    /// The templates of the sections that reach the prompt.
    fn placed_templates(&self) -> impl Iterator<Item = TemplateId> + '_ {
        self.templates
            .iter()
            .zip(&self.placed)
            .filter(|(_, placed)| **placed)
            .map(|(template, _)| *template)
    }
}

/// The indexes of the components `variant` lists, switched on, whose slot no template of the
/// prompt reads.
fn unslotted<'v>(
    variant: &'v EffectiveVariant,
    sections: &'v VariantSections,
) -> impl Iterator<Item = usize> + 'v {
    (0..variant.components().len())
        .filter(|&index| sections.enabled[index] && !sections.placed[index])
}

/// The defined names nearest to the names the prompt's templates (the base template, the
/// sections that reach the prompt) read and nothing defines: `{{ OBJECTIV_SECTION }}` is an
/// error at the misspelt name, whose help names the slot, and telling each variant that lists
/// the component that its slot is not read says the same again, once per variant. Only the
/// first hundred such names are looked at, as a file's suggestions are.
fn misspelt_in_prompt(
    scope: &Scope<'_>,
    variant: &EffectiveVariant,
    sections: &VariantSections,
) -> BTreeSet<String> {
    let templates = &scope.workspace.templates;
    // The names read where nothing set them (not those a template only asks about, nor those
    // an include sets), as the check of names defined nowhere takes them.
    std::iter::once(variant.base)
        .chain(sections.placed_templates())
        .flat_map(|template| templates.unset_variables(template))
        .filter(|name| !scope.any_variant.contains(name))
        .take(crate::diagnostic::MAX_PROBLEMS_PER_FILE)
        .filter_map(|name| closest(name, scope.any_variant.names()))
        .collect()
}

/// A listed component whose slot no template of the prompt reads (the base template, or that
/// of a section that reaches the prompt, through what they include, import or extend).
/// `parents`: the components the variant's parent leaves out so, if it is sound.
fn unslotted_components(
    scope: &Scope<'_>,
    variant: &EffectiveVariant,
    sections: &VariantSections,
    parents: Option<&BTreeSet<&str>>,
    out: &mut Diagnostics,
) {
    let workspace = scope.workspace;
    let mut misspelt = None;
    for index in unslotted(variant, sections) {
        let component = &variant.components()[index];
        if parents.is_some_and(|parents| parents.contains(component.as_str())) {
            continue;
        }
        let Some((listed_by, listed)) = listed_at(workspace, variant, component) else {
            continue;
        };
        let misspelt = misspelt.get_or_insert_with(|| misspelt_in_prompt(scope, variant, sections));
        if misspelt.contains(&sections.slots[index]) {
            continue;
        }
        // Listed by a variant it inherits from: what this one changed (a template, an
        // override) is what drops the slot, so the finding is this variant's.
        let span = match workspace.variants.get(variant.id()) {
            Some(own) if listed_by != variant.id() => own.value_span("/id"),
            _ => listed,
        };
        out.push(Diagnostic::new(
            Problem::UnslottedComponent {
                component: component.clone(),
                slot: sections.slots[index].clone(),
                variant: variant.id().to_string(),
                read_only_by: sections
                    .readers
                    .readers(index)
                    .iter()
                    .filter_map(|&reader| variant.components().get(reader).cloned())
                    .collect(),
            },
            span,
        ));
    }
}

/// A variant's tools reach the model as native definitions, or written into the prompt by a
/// template that reads `TOOLS` or `tools` (or names them from `enabled_tools`, which a test
/// `"x" in enabled_tools` does not): with neither,
/// the tools it lists were left out without a word.
fn unwritten_tools(
    scope: &Scope<'_>,
    variant: &EffectiveVariant,
    sections: &VariantSections,
    out: &mut Diagnostics,
) {
    let workspace = scope.workspace;
    if variant.variant.native_tools == Some(true) || variant.tools().is_empty() {
        return;
    }
    // A component switched off renders nowhere, nor does one whose slot only such components
    // read: what they read does not reach the prompt.
    let placed = std::iter::once(variant.base).chain(sections.placed_templates());
    if may_write_tools(workspace, placed) {
        return;
    }
    // At this variant's list when it writes one; else at its id, when what it changes
    // (its templates, components, overrides) is what leaves the tools out; a variant that
    // changes none of that has its parent's finding, said at the parent.
    let Some(own) = workspace.variants.get(variant.id()) else {
        return;
    };
    let writes = |field: &str| own.document.writes(&format!("/{field}"));
    let span = if let Some(field) = ["tools", "add_tools"].into_iter().find(|f| writes(f)) {
        own.value_span(&format!("/{field}"))
    } else if [
        "template",
        "template_file",
        "components",
        "add_components",
        "overrides",
        "native_tools",
    ]
    .into_iter()
    .any(writes)
    {
        own.value_span("/id")
    } else {
        return;
    };
    out.push(Diagnostic::new(
        Problem::ToolsNeverWritten {
            variant: variant.id().to_string(),
            count: variant.tools().len(),
        },
        span,
    ));
}

/// Whether the renders of `templates` (with the partials they use) may write the variant's
/// tools into the prompt: one reads `TOOLS` or `tools`, names them from `enabled_tools` (a
/// test `"x" in enabled_tools` or a count `enabled_tools | length` does not), or names a
/// template only the render computes.
pub(crate) fn may_write_tools(
    workspace: &Workspace,
    templates: impl IntoIterator<Item = TemplateId>,
) -> bool {
    let reached: Vec<TemplateId> = templates
        .into_iter()
        .flat_map(|template| workspace.templates.with_used(template))
        .collect();
    // A name computed at render time (`{% include "tools_" ~ family %}`) may be a template
    // that writes them: nothing is said.
    let computes_a_name = reached.iter().any(|template| {
        workspace
            .templates
            .references(*template)
            .iter()
            .any(|reference| reference.name.is_none())
    });
    // `enabled_tools` writes the tools by name when its items are read (`{% for %}`, `join`);
    // a template that only asks `"x" in enabled_tools` or `enabled_tools | length` writes
    // none of them.
    let reads_tools = reached.iter().any(|&template| {
        workspace
            .templates
            .variables(template)
            .iter()
            .any(|name| match name.as_str() {
                TOOLS_TEXT | TOOLS_DATA => true,
                ENABLED_TOOLS => !workspace.templates.reads_no_item(template, ENABLED_TOOLS),
                _ => false,
            })
    });
    reads_tools || computes_a_name
}

/// Sections a component's template reads where they are empty whatever the context: that of
/// a component rendering after it, and that of a component no variant it renders in lists.
/// A base template is not asked: it renders after every section, and a slot there for a
/// component the variant does not list is how a variant (a smaller one inheriting its parent's
/// base template) leaves a section out. Each place is said once, with the first variant it was
/// found in.
fn sections_read_where_empty(scope: &Scope<'_>, out: &mut Diagnostics) {
    let workspace = scope.workspace;
    let component_of: HashMap<String, &str> = workspace
        .components
        .iter()
        .map(|(id, entry)| (entry.value.slot(), id.as_str()))
        .collect();
    // By the template that reads it and the slot: whether any variant it renders in lists
    // the slot's component.
    let mut listed_where_read: BTreeMap<(TemplateId, &str), bool> = BTreeMap::new();
    // The reader (in the first variant it was found in) and every variant where it is so.
    let mut read_too_early: BTreeMap<(TemplateId, &str), (&str, String, Vec<String>)> =
        BTreeMap::new();
    // Which component's template reads which one's section, in each variant that lists both
    // and renders the reader.
    let mut reads: BTreeSet<(String, String, &str)> = BTreeSet::new();
    for variant in scope.sound_variants() {
        let order = variant.components_in_order();
        let position: HashMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(index, id)| (id.as_str(), index))
            .collect();
        // A component the variant switches off renders nothing, so it reads nothing too early.
        let switched_off = |id: &str| {
            variant
                .variant
                .overrides
                .components
                .get(id)
                .and_then(|o| o.enabled)
                == Some(false)
        };
        // Each component sees the sections rendered before its own.
        let readers = order.iter().enumerate().filter_map(|(index, id)| {
            component_template(workspace, variant, id).map(|(template, _)| (index, id, template))
        });
        for (at, reader, top) in readers {
            for template in workspace.templates.with_used(top) {
                for name in workspace.templates.variables(template) {
                    let Some(&component) = component_of.get(name) else {
                        continue;
                    };
                    if component == reader.as_str() {
                        continue;
                    }
                    let listed = position.get(component).copied();
                    *listed_where_read.entry((template, component)).or_default() |=
                        listed.is_some();
                    if listed.is_some() && !switched_off(reader) {
                        reads.insert((variant.id().to_string(), reader.clone(), component));
                    }
                    if let Some(listed) = listed
                        && listed > at
                        && !switched_off(reader)
                    {
                        let (_, _, variants) = read_too_early
                            .entry((template, component))
                            .or_insert_with(|| (component, reader.clone(), Vec::new()));
                        if !variants.iter().any(|v| v == variant.id()) {
                            variants.push(variant.id().to_string());
                        }
                    }
                }
            }
        }
    }
    let slot_of = |component: &str| {
        workspace
            .components
            .get(component)
            .map_or_else(String::new, |entry| entry.value.slot())
    };
    // A section is never rendered only if no variant lists it: a variant left out (its chain
    // is broken, or its base template does not compile) may, and a template that does not
    // compile may read the section too.
    let every_variant_known = scope.sound_variants().count() == workspace.variants.len()
        && !workspace.templates.some_did_not_compile();
    for ((template, component), listed) in listed_where_read {
        let slot = slot_of(component);
        let span = workspace.templates.find_name(template, &slot);
        if listed {
            if let (Some((component, reader, variants)), Some(span)) =
                (read_too_early.get(&(template, component)), span)
            {
                out.push(Diagnostic::new(
                    Problem::SectionReadBeforeItRenders {
                        slot,
                        component: (*component).to_string(),
                        reader: reader.clone(),
                        variants: variants.clone(),
                        // The variants where the other reads it back: there, no order fits.
                        mutual_in: variants
                            .iter()
                            .filter(|variant| {
                                reads.contains(&(
                                    (*variant).clone(),
                                    (*component).to_string(),
                                    reader.as_str(),
                                ))
                            })
                            .cloned()
                            .collect(),
                    },
                    span,
                ));
            }
        } else if let Some(span) = span
            && every_variant_known
        {
            out.push(Diagnostic::new(
                Problem::SectionNeverRendered {
                    slot,
                    component: component.to_string(),
                },
                span,
            ));
        }
    }
}

/// Sections a prompt holds twice: a listed component's slot written whole
/// (`{{ RULES_SECTION }}`) by two of the templates a variant renders, its base template and
/// its components' (with what each includes), as when a section is moved into another and
/// its place in the base template is kept. Said at the second template's write, once for
/// each pair of templates, with the variants where both render.
fn sections_written_twice(scope: &Scope<'_>, out: &mut Diagnostics) {
    let workspace = scope.workspace;
    let mut found: BTreeMap<(String, TemplateId, TemplateId), Vec<String>> = BTreeMap::new();
    for variant in scope.sound_variants() {
        // A component the variant switches off renders nothing, and its slot is empty.
        let order = variant.components_in_order();
        let rendered: Vec<&String> = order
            .iter()
            .filter(|id| {
                variant
                    .variant
                    .overrides
                    .components
                    .get(id.as_str())
                    .and_then(|o| o.enabled)
                    != Some(false)
            })
            .collect();
        // Each template rendered, with when: a component's (and what it includes) at its
        // place in the order, the base template after them all. A slot a template writes
        // before its section renders is empty there (`section-read-before-it-renders`).
        let mut templates: Vec<(TemplateId, usize)> = Vec::new();
        let tops = rendered
            .iter()
            .enumerate()
            .filter_map(|(at, id)| {
                component_template(workspace, variant, id).map(|(template, _)| (template, at))
            })
            .chain(std::iter::once((variant.base, usize::MAX)));
        for (top, at) in tops {
            for template in workspace.templates.with_used(top) {
                match templates.iter_mut().find(|(known, _)| *known == template) {
                    Some((_, when)) => *when = (*when).max(at),
                    None => templates.push((template, at)),
                }
            }
        }
        // In the order of the prompt's text: the base template's writes first.
        templates.sort_by_key(|&(_, at)| std::cmp::Reverse(at == usize::MAX));
        for (place, id) in rendered.iter().enumerate() {
            let Some(entry) = workspace.components.get(id.as_str()) else {
                continue;
            };
            let slot = entry.value.slot();
            let mut writers = templates
                .iter()
                .filter(|&&(_, at)| at > place)
                .map(|&(template, _)| template)
                .filter(|&template| {
                    workspace.templates.variables(template).contains(&slot)
                        && workspace.templates.writes_name(template, &slot).is_some()
                });
            if let (Some(first), Some(second)) = (writers.next(), writers.next()) {
                let variants = found.entry((slot, first, second)).or_default();
                if !variants.iter().any(|v| v == variant.id()) {
                    variants.push(variant.id().to_string());
                }
            }
        }
    }
    for ((slot, first, second), variants) in found {
        let (Some(span), Some(first)) = (
            workspace.templates.writes_name(second, &slot),
            workspace.templates.span_of(first),
        ) else {
            continue;
        };
        let first = workspace
            .sources
            .get(first.source)
            .path
            .display()
            .to_string();
        out.push(Diagnostic::new(
            Problem::SectionWrittenTwice {
                slot,
                first,
                variants,
            },
            span,
        ));
    }
}

/// The list entry that brought a component into a variant: in the nearest variant of the
/// chain that lists or adds it.
fn listed_at<'w>(
    workspace: &'w Workspace,
    variant: &EffectiveVariant,
    component: &str,
) -> Option<(&'w str, Span)> {
    variant
        .chain
        .iter()
        .filter_map(|id| workspace.variants.get_key_value(id))
        .find_map(|(id, v)| {
            [
                ("components", &v.value.components),
                ("add_components", &v.value.add_components),
            ]
            .into_iter()
            .find_map(|(field, list)| {
                let index = list.as_ref()?.iter().position(|c| c == component)?;
                Some((id.as_str(), v.value_span(&format!("/{field}/{index}"))))
            })
        })
}

/// What the check of names templates only ask about (`x is defined`, `x | default(…)`) needs
/// across templates, made once: every template's sets, found when a template first has a
/// candidate, and how many were told.
struct Guarded<'s> {
    any_variant: &'s Namespace,
    workspace: &'s Workspace,
    set_anywhere: std::cell::OnceCell<BTreeSet<&'s str>>,
    told: std::cell::Cell<usize>,
}

impl<'s> Guarded<'s> {
    fn new(scope: &'s Scope<'_>) -> Self {
        Self {
            any_variant: &scope.any_variant,
            workspace: scope.workspace,
            set_anywhere: std::cell::OnceCell::new(),
            told: std::cell::Cell::new(0),
        }
    }
}

/// The names `template` only asks about that no file of the workspace defines (not in the
/// names it sees, `namespace`, nor any variant's placeholders, nor a template's `set`), each
/// one edit from a name it sees: `{{ AGENT_NAEM | default("Forge") }}` renders its fallback
/// in every prompt, where a name read outright is an error. A name further from every
/// defined one (`SUPPORTS_IMAGES` beside `SUPPORTS_BROWSER`), or differing only in case, may
/// be left undefined on purpose, for a request to set, and is not told.
fn guarded_misspelt(
    workspace: &Workspace,
    template: TemplateId,
    (namespace, functions, guarded): (&Namespace, &[String], &Guarded<'_>),
    out: &mut Diagnostics,
) {
    // As many as a file's report shows: past them, looking for more costs time for nothing.
    if guarded.told.get() >= crate::diagnostic::MAX_PROBLEMS_PER_FILE {
        return;
    }
    let templates = &workspace.templates;
    let candidates: Vec<&str> = templates
        .guarded_variables(template)
        .iter()
        .map(String::as_str)
        // Names of a few letters are too near everything, and comparing names of thousands
        // costs the square of their lengths.
        .filter(|name| {
            (4..=256).contains(&name.chars().count())
                && !namespace.contains(name)
                && !guarded.any_variant.contains(name)
                && !functions.iter().any(|f| f == name)
        })
        .collect();
    if candidates.is_empty() {
        return;
    }
    let set_anywhere = guarded
        .set_anywhere
        .get_or_init(|| guarded.workspace.templates.names_set_anywhere());
    let near: Vec<(&str, String)> = candidates
        .into_iter()
        .filter(|name| !set_anywhere.contains(*name))
        .filter_map(|name| Some((name, one_edit_from(name, namespace.names())?)))
        .collect();
    if near.is_empty() {
        return;
    }
    let names: Vec<&str> = near.iter().map(|(name, _)| *name).collect();
    let places = templates.find_names(template, &names);
    let mut found: Vec<(Span, Problem)> = near
        .into_iter()
        .filter_map(|(name, suggestion)| {
            let span = places
                .get(name)
                .copied()
                .or_else(|| templates.span_of(template))?;
            Some((
                span,
                Problem::GuardedNameDefinedNowhere {
                    name: name.to_string(),
                    suggestion,
                },
            ))
        })
        .collect();
    found.sort_by_key(|(span, _)| span.start);
    for (span, problem) in found {
        out.push(Diagnostic::new(problem, span));
        guarded.told.set(guarded.told.get() + 1);
    }
}

/// The first of `known` one edit (a letter added, dropped, changed, or two swapped) from
/// `name`, and not merely `name` in another case.
fn one_edit_from<'k>(name: &str, known: impl Iterator<Item = &'k String>) -> Option<String> {
    known
        .filter(|known| !known.eq_ignore_ascii_case(name))
        .filter(|known| known.len().abs_diff(name.len()) <= 1)
        .find(|known| strsim::damerau_levenshtein(name, known) == 1)
        .cloned()
}

fn undefined(
    workspace: &Workspace,
    template: TemplateId,
    (namespace, guarded): (&Namespace, &Guarded<'_>),
    out: &mut Diagnostics,
) {
    undeclared_extra(workspace, template, namespace, out);
    // The templates' functions (`range`, `namespace`, …) are names a template may have
    // meant too.
    let functions: Vec<String> = workspace
        .templates
        .env()
        .globals()
        .map(|(name, _)| name.to_owned())
        .collect();
    let unknown: Vec<&str> = workspace
        .templates
        .unset_variables(template)
        .into_iter()
        .filter(|variable| {
            !namespace.contains(variable) && !functions.iter().any(|f| f == variable)
        })
        .collect();
    guarded_misspelt(workspace, template, (namespace, &functions, guarded), out);
    if unknown.is_empty() {
        return;
    }
    let places = workspace.templates.unset_places(template, &unknown);
    let mut found: Vec<(&str, Span)> = unknown
        .iter()
        .filter_map(|variable| {
            let span = places
                .get(variable)
                .copied()
                .or_else(|| workspace.templates.span_of(template))?;
            Some((*variable, span))
        })
        .collect();
    // In the order of the file: past what a file's report shows, a name is only counted, and
    // a suggestion for each of a few hundred thousand took seconds.
    found.sort_by_key(|(_, span)| span.start);
    // The paths read below each name, found once for the template when one is needed.
    let mut below: Option<BTreeMap<String, Vec<String>>> = None;
    let mut read_anywhere = None;
    let mut containing_work = CONTAINING_WORK;
    for (index, (variable, span)) in found.into_iter().enumerate() {
        let suggestion = (index < crate::diagnostic::MAX_PROBLEMS_PER_FILE)
            .then(|| {
                let near = closest(variable, namespace.names().chain(&functions));
                prefer_whole_name(variable, near, namespace.names(), &mut containing_work)
                    .or_else(|| {
                        let below = below.get_or_insert_with(|| paths_below(workspace, template));
                        path_below(below.get(variable)?, namespace)
                    })
                    .or_else(|| containing(variable, namespace.names(), &mut containing_work))
            })
            .flatten();
        // A name the template calls (`name(…)`) was meant as a function: said so, with the
        // functions there are, rather than as a placeholder to define (which no call reads).
        let called = workspace
            .sources
            .get(span.source)
            .text
            .get(span.end..)
            .is_some_and(|rest| rest.trim_start().starts_with('('));
        let problem = if called {
            let mut known = functions.clone();
            known.sort();
            Problem::UnknownFunction {
                suggestion: (index < crate::diagnostic::MAX_PROBLEMS_PER_FILE)
                    .then(|| closest(variable, functions.iter()))
                    .flatten(),
                name: variable.to_string(),
                known,
            }
        } else {
            Problem::UndefinedPlaceholder {
                declared_unread: suggestion
                    .as_deref()
                    .and_then(|meant| declared_unread(workspace, meant, &mut read_anywhere)),
                suggestion,
                name: variable.to_string(),
            }
        };
        out.push(Diagnostic::new(problem, span));
    }
}

/// The file of a variant that declares the placeholder `name`, when no template of the
/// workspace reads it: a template's `TONE` near a declared `TOEN` that nothing reads is
/// more likely a misspelt declaration than a misspelt read.
fn declared_unread(
    workspace: &Workspace,
    name: &str,
    read_anywhere: &mut Option<std::collections::BTreeSet<String>>,
) -> Option<String> {
    let mut declaring = workspace
        .variants
        .values()
        .filter(|entry| entry.value.placeholders.contains_key(name));
    let first = declaring.next()?;
    let declarations = 1 + declaring.count();
    let read = read_anywhere.get_or_insert_with(|| workspace.templates.variables_anywhere());
    if read.contains(name) {
        return None;
    }
    // A condition may read it (`when = "TOEN == 'terse'"`): the name written in the data
    // files more often than its declarations are is taken as read.
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    let written = workspace
        .sources
        .with_ids()
        .filter(|(_, file)| crate::load::document::Format::of(&file.path).is_some())
        .map(|(_, file)| {
            file.text
                .match_indices(name)
                .filter(|&(at, _)| {
                    !file.text[..at].chars().next_back().is_some_and(is_name)
                        && !file.text[at + name.len()..]
                            .chars()
                            .next()
                            .is_some_and(is_name)
                })
                .count()
        })
        .sum::<usize>();
    if written > declarations {
        return None;
    }
    let declaring = first;
    Some(
        workspace
            .sources
            .get(declaring.source())
            .path
            .display()
            .to_string(),
    )
}

/// The bytes of names [`containing`] looks at for one template's unknown names: a template of
/// thousands of unknown names, in a workspace of thousands of names, is not a square of both.
const CONTAINING_WORK: usize = 1 << 20;

/// The one name that holds `variable` as whole words, whatever their case (`RULES` in
/// `USER_RULES_SECTION`), or of several the one that starts with them: a section or
/// placeholder read by a part of its name, too far from the whole for a typo. Names are looked
/// at while `work` lasts.
fn containing<'a>(
    variable: &str,
    names: impl Iterator<Item = &'a String>,
    work: &mut usize,
) -> Option<String> {
    let words =
        |name: &str| -> Vec<String> { name.split('_').map(str::to_ascii_lowercase).collect() };
    let wanted = words(variable);
    if wanted.iter().any(String::is_empty) {
        return None;
    }
    let found = names.filter(|name| {
        let Some(left) = work.checked_sub(name.len().max(1)) else {
            *work = 0;
            return false;
        };
        *work = left;
        let have = words(name);
        have.len() > wanted.len()
            && have
                .windows(wanted.len())
                .any(|window| window == wanted.as_slice())
    });
    // Several hold it (`RULES` in `RULES_SECTION` and `USER_RULES_SECTION`): the one that
    // starts with it, when one does.
    let found: Vec<&String> = found.take(MAX_CONTAINING + 1).collect();
    let starting = || {
        let mut starting = found.iter().filter(|name| words(name).starts_with(&wanted));
        let first = starting.next()?;
        starting.next().is_none().then_some(*first)
    };
    match found.as_slice() {
        [] => None,
        [one] => Some(*one),
        many if many.len() > MAX_CONTAINING => None,
        _ => starting(),
    }
    .cloned()
}

/// The most names holding an unknown one that are weighed against each other.
const MAX_CONTAINING: usize = 16;

/// `near`, the name closest to `variable`, unless it matches only by case: a name in capitals
/// that a field matches so (`RULES`, the field `rules`) is a section or placeholder read by a
/// part of its name (`RULES_SECTION`), which is said instead: those are written in capitals,
/// fields never are.
fn prefer_whole_name<'n>(
    variable: &str,
    near: Option<String>,
    names: impl Iterator<Item = &'n String>,
    work: &mut usize,
) -> Option<String> {
    let case_only = near
        .as_deref()
        .is_some_and(|near| near != variable && near.eq_ignore_ascii_case(variable));
    let whole = case_only
        .then(|| {
            let alike = |name: &&String| in_capitals(name) == in_capitals(variable);
            containing(variable, names.filter(alike), work)
        })
        .flatten();
    whole.or(near)
}

/// Written in capitals, as sections and placeholders are (`RULES_SECTION`).
fn in_capitals(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase()) && !name.chars().any(|c| c.is_ascii_lowercase())
}

/// The dotted paths a template reads, by their first name: `context.model.id` is `model.id`
/// below `context`. Sorted, so that the first of them that means something is the one said.
fn paths_below(workspace: &Workspace, template: TemplateId) -> BTreeMap<String, Vec<String>> {
    let mut below: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let Ok(compiled) = workspace.templates.template(template) else {
        return below;
    };
    for path in compiled.undeclared_variables(true) {
        if let Some((head, rest)) = path.split_once('.') {
            below
                .entry(head.to_owned())
                .or_default()
                .push(rest.to_owned());
        }
    }
    below.values_mut().for_each(|paths| paths.sort());
    below
}

/// A path read below an unknown name that is a path of the scope without it:
/// `context.model.id` (or `ctx.modle.id`), written as though the context's fields were the
/// keys of a table, means `model.id`, which is how templates read them.
fn path_below(paths: &[String], namespace: &Namespace) -> Option<String> {
    paths.iter().find_map(|below| {
        let (first, rest) = match below.split_once('.') {
            Some((first, rest)) => (first, Some(rest)),
            None => (below.as_str(), None),
        };
        let first = if namespace.contains(first) {
            first.to_owned()
        } else {
            closest(first, namespace.names())?
        };
        let meant = match rest {
            Some(rest) => format!("{first}.{rest}"),
            None => first,
        };
        let meant = match namespace.check_path(&meant) {
            Ok(()) => meant,
            Err((_, near)) => near?,
        };
        namespace.check_path(&meant).is_ok().then_some(meant)
    })
}

/// Paths into the context's tables that templates read (`browser.enabeld`), against the
/// context's shape, as conditions' paths are checked: a typo in a line no context of the
/// matrix reaches would otherwise first fail on a request that does, as "undefined value".
/// So are the fields read through loop variables and the filters and tests templates name
/// (see `item_fields` and `filters_and_tests`). Asked by `validate` alone: it parses again
/// every template that reads such a table, which the commands that build should not pay for
/// on every run.
pub fn context_paths(workspace: &Workspace) -> Diagnostics {
    let scope = Scope::new(workspace);
    let includers = includers(workspace);
    let mut out = Diagnostics::default();
    let mut templates: Vec<TemplateId> = workspace.templates.ids().collect();
    templates.sort_by_key(|id| workspace.templates.name(*id));
    for &template in &templates {
        let reads_a_table = workspace
            .templates
            .variables(template)
            .iter()
            .any(|name| scope.shared.has_shape(name));
        if !reads_a_table {
            continue;
        }
        // A name a template it is rendered within sets (a loop variable `model` around an
        // include, even through another include, or in the template it extends) is not the
        // context's.
        let Some(around) = rendered_within(workspace, &includers, template) else {
            continue;
        };
        // Whether a template it is rendered within mentions a name: asked once per name, as
        // each asks reads their whole text (16,000 paths read under 400 includers of 250 KB
        // ran validate out of time).
        let mentioned: std::cell::RefCell<HashMap<String, bool>> = Default::default();
        let set_by_used = workspace.templates.set_in_frame_by_used(template);
        let keep = |path: &str| {
            let head = path.split('.').next().unwrap_or_default();
            path.contains('.')
                && scope.shared.has_shape(head)
                && !set_by_used(head)
                && !*mentioned
                    .borrow_mut()
                    .entry(head.to_string())
                    .or_insert_with(|| {
                        around
                            .iter()
                            .any(|other| workspace.templates.mentions(*other, head))
                    })
        };
        for (path, suggestion, span) in unknown_paths(workspace, template, &scope.shared, keep) {
            out.push(Diagnostic::new(
                Problem::UnknownContextField {
                    fields: crate::schema::fields_if_none_near(&path, &suggestion),
                    path,
                    suggestion,
                    reader: crate::problem::PathReader::Template,
                },
                span,
            ));
        }
    }
    for template in templates {
        item_fields(workspace, template, &includers, &mut out);
    }
    super::filters_and_tests::check(workspace, &mut out);
    out
}

/// The fields a template reads from values whose shape is known but which a name of its own
/// stands for, or which are no context field: an item of a context's list through a loop
/// variable (`{% for r in server.resources %}{{ r.urii }}`, `server` an item of
/// `mcp_servers`), and a tool's value (`tool.descripton` in a tool format, `p.instrucion`
/// over `tool.parameters`). The context's own tables are checked above.
fn item_fields(
    workspace: &Workspace,
    template: TemplateId,
    includers: &BTreeMap<TemplateId, Vec<TemplateId>>,
    out: &mut Diagnostics,
) {
    use crate::namespace::CONNECTED_MCP_SERVERS;
    use crate::problem::PathReader;
    let templates = &workspace.templates;
    // A template that reads no name (plain text, an unused partial) reads no field: it is not
    // loaded into the environment for it, which would hold another copy of its text. One that
    // sets no name and reads no tool reads no field this check holds it to, and is not
    // parsed again.
    let variables = templates.variables(template);
    let reads_a_tool = variables
        .iter()
        .any(|name| UNSET_NAMES_CHECKED.contains(&name.as_str()));
    if variables.is_empty() || !(reads_a_tool || templates.binds_names(template)) {
        return;
    }
    let Ok(compiled) = templates.template(template) else {
        return;
    };
    let Some(around) = rendered_within(workspace, includers, template) else {
        return;
    };
    // Whether a name is set by a template this one is rendered within (a name a template it
    // includes sets is unknown after the include: see `item_reads`): asked once per name, as
    // each asks reads their whole text.
    let mut set_elsewhere: HashMap<String, bool> = HashMap::new();
    let mut is_set_elsewhere = |name: &str| -> bool {
        *set_elsewhere
            .entry(name.to_string())
            .or_insert_with(|| around.iter().any(|other| templates.mentions(*other, name)))
    };
    let context_fields = crate::namespace::context_fields();
    let mut reported = BTreeSet::new();
    for read in compiled.item_reads() {
        let Some((head, rest)) = read.written.split_once('.') else {
            continue;
        };
        // The path the read goes to, and how many of its first segments the head stands for.
        let bound = read.bound_to.as_deref().unwrap_or(head);
        let root = bound.split('.').next().unwrap_or_default();
        let known_root = UNSET_NAMES_CHECKED.contains(&root)
            || (context_fields.contains(root)
                && root != crate::namespace::EXTRA
                && root != "placeholders");
        if (read.bound_to.is_none() && !UNSET_NAMES_CHECKED.contains(&head))
            || !known_root
            || is_set_elsewhere(root)
        {
            continue;
        }
        let full = format!("{bound}.{rest}");
        let in_context = |path: &str| path.replacen(CONNECTED_MCP_SERVERS, "mcp_servers", 1);
        let is_tool = matches!(root, TOOL | TOOLS_DATA);
        let head_segments = bound.split('.').count();
        let unknown = if is_tool {
            tool_path_unknown(&full)
        } else {
            context_path_unknown(&in_context(&full))
        };
        // A list the template names wrongly is reported where it is named, not at each read.
        let Some((at, suggestion, fields)) = unknown.filter(|(at, _, _)| *at >= head_segments)
        else {
            continue;
        };
        // A path of the lookup as the template writes it: the head, then what follows.
        let written = |lookup: &str| -> Option<String> {
            let segments: Vec<&str> = lookup.split('.').skip(head_segments).collect();
            (!segments.is_empty()).then(|| format!("{head}.{}", segments.join(".")))
        };
        let Some(path) = written(&full.split('.').take(at + 1).collect::<Vec<_>>().join("."))
        else {
            continue;
        };
        if !reported.insert(path.clone()) {
            continue;
        }
        let suggestion = suggestion.and_then(|near| written(&near));
        let reader = if is_tool {
            PathReader::ToolValue {
                parameter: rest.starts_with("parameters.")
                    || bound.split('.').nth(1) == Some("parameters"),
            }
        } else if read.bound_to.is_some() {
            let list = in_context(bound);
            PathReader::TemplateItem {
                through_list: through_list(&list),
                list,
            }
        } else {
            // `connected_mcp_servers.x`, read from the name itself.
            PathReader::Template
        };
        // The read up to the field that is not there: `root.nmae` of `root.nmae.first`.
        let end = read
            .field_ends
            .get(at - head_segments)
            .copied()
            .unwrap_or(read.range.end);
        let Some(span) = templates.span_in(templates.name(template), read.range.start..end) else {
            continue;
        };
        out.push(Diagnostic::new(
            Problem::UnknownContextField {
                fields: if suggestion.is_some() {
                    Vec::new()
                } else {
                    fields
                },
                path,
                suggestion,
                reader,
            },
            span,
        ));
    }
}

/// Whether a path into the context goes through a list (`mcp_servers`, `mcp_servers.tools`):
/// what a name set from it stands for is one of its items, not the value itself.
fn through_list(path: &str) -> bool {
    let mut walked = String::new();
    path.split('.').any(|segment| {
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(segment);
        crate::schema::context_schema_at(&walked).is_ok_and(|schema| {
            schema.get("type").and_then(|t| t.as_str()) == Some("array")
                || schema.get("items").is_some()
        })
    })
}

/// The names a template does not set whose fields [`item_fields`] holds to a shape: the
/// context's own tables are checked by [`context_paths`]' first pass.
const UNSET_NAMES_CHECKED: [&str; 3] = [TOOL, TOOLS_DATA, crate::namespace::CONNECTED_MCP_SERVERS];

/// Where a path into the context first names nothing (its segment's index), with what it may
/// have meant (a near field, or the value above when that is a text with no fields) and the
/// fields there.
fn context_path_unknown(path: &str) -> Option<(usize, Option<String>, Vec<String>)> {
    let (walked, suggestion) = crate::schema::context_schema_at(path).err()?;
    let parent = walked.rsplit_once('.').map_or("", |(parent, _)| parent);
    let fields = crate::schema::context_fields_at(parent).unwrap_or_default();
    Some((walked.matches('.').count(), suggestion, fields))
}

/// As [`context_path_unknown`], for a path into a tool's value (`tool.parameters.name`, a
/// list's items as the list). Below a text or a parameter's free schema, anything goes.
fn tool_path_unknown(path: &str) -> Option<(usize, Option<String>, Vec<String>)> {
    let mut node = crate::compiled::tool_value_shape();
    for (at, segment) in path.split('.').enumerate().skip(1) {
        while let Some(item) = node.as_array().and_then(|items| items.first()) {
            node = item;
        }
        let fields = node.as_object().filter(|fields| !fields.is_empty())?;
        match fields.get(segment) {
            Some(next) => node = next,
            None => {
                let parent: Vec<&str> = path.split('.').take(at).collect();
                let near = closest(segment, fields.keys())
                    .map(|near| format!("{}.{near}", parent.join(".")));
                let names = fields.keys().cloned().collect();
                return Some((at, near, names));
            }
        }
    }
    None
}

/// The templates `template` may be rendered within: those that include it, through any
/// number of includes, and those it extends, with theirs.
fn rendered_within(
    workspace: &Workspace,
    includers: &std::collections::BTreeMap<TemplateId, Vec<TemplateId>>,
    template: TemplateId,
) -> Option<BTreeSet<TemplateId>> {
    use crate::templates::references::ReferenceKind;
    let templates = &workspace.templates;
    let mut found = BTreeSet::new();
    let mut next = vec![template];
    // Each template's are walked apart: past this many, a template's reads are not checked
    // (each could be a name one of them sets) rather than the walk costing templates × edges
    // (a chain of 5,000 partials, each included by hundreds, ran validate out of time).
    let mut steps = 0usize;
    while let Some(current) = next.pop() {
        steps += 1;
        if steps > MAX_RENDERED_WITHIN {
            return None;
        }
        let extended = templates
            .references(current)
            .iter()
            .filter(|reference| reference.kind == ReferenceKind::Extends)
            .filter_map(|reference| templates.by_name(reference.name.as_deref()?));
        let including = includers.get(&current).into_iter().flatten().copied();
        for other in including.chain(extended) {
            if other != template && found.insert(other) {
                next.push(other);
            }
        }
    }
    Some(found)
}

/// The most templates [`rendered_within`] walks for one template.
const MAX_RENDERED_WITHIN: usize = 1024;

/// `extra.<key>` paths a template reads, against the declared keys (only when the workspace
/// declares some: otherwise `extra` is free and the template is not parsed again).
fn undeclared_extra(
    workspace: &Workspace,
    template: TemplateId,
    namespace: &Namespace,
    out: &mut Diagnostics,
) {
    if workspace.settings().context_fields.is_empty()
        || !workspace
            .templates
            .variables(template)
            .iter()
            .any(|v| v == EXTRA)
    {
        return;
    }
    let keep = |path: &str| path.starts_with("extra.");
    // A key of the context's `extra` the workspace does not declare, told as such (with the
    // `[context_fields]` entry that declares it), also where the template asks whether it is
    // defined: it never is, with fields declared. It was said to be a placeholder to define,
    // which a dotted name cannot be.
    for (path, suggestion, span) in unknown_paths(workspace, template, namespace, keep) {
        out.push(Diagnostic::new(
            Problem::UnknownContextField {
                path,
                suggestion,
                reader: crate::problem::PathReader::Template,
                fields: Vec::new(),
            },
            span,
        ));
    }
}

/// The paths `template` reads that `keep` picks and `namespace` does not have, in sorted
/// order: each as far as it is known, with the near one, and where its last name first stands
/// in the template (the template itself when it cannot be found).
fn unknown_paths(
    workspace: &Workspace,
    template: TemplateId,
    namespace: &Namespace,
    keep: impl Fn(&str) -> bool,
) -> Vec<(String, Option<String>, Span)> {
    let Ok(compiled) = workspace.templates.template(template) else {
        return Vec::new();
    };
    let mut paths: Vec<String> = compiled
        .undeclared_variables(true)
        .into_iter()
        .filter(|path| keep(path))
        .collect();
    paths.sort();
    // Each one placed is a search of the template's text: past the problems a file shows,
    // the rest are counted (placed at the template's end, after those shown) rather than
    // placed, which for sixteen thousand misspelt fields ran validate out of time.
    let mut placed = 0;
    paths
        .into_iter()
        .filter_map(|path| {
            let (unknown, suggestion) = namespace.check_path(&path).err()?;
            let templates = &workspace.templates;
            let span = if placed < crate::diagnostic::MAX_PROBLEMS_PER_FILE {
                placed += 1;
                let last = unknown.rsplit('.').next().unwrap_or(&unknown);
                templates
                    .find_path(template, &unknown)
                    .or_else(|| templates.find_name(template, last))
                    .or_else(|| templates.span_of(template))?
            } else {
                let extent = templates.extent(template)?;
                Span::new(extent.source, extent.end..extent.end)
            };
            Some((unknown, suggestion, span))
        })
        .collect()
}
