//! One tool as a family sees it: the family's spec (following `based_on`) or the generic one,
//! with shared parameters filled in, each text field as the template compiled from it.

use std::sync::Arc;

use crate::compiled::SourceRange;
use crate::follow::follow;
use crate::model::{Parameter, ParameterType};
use crate::parameter_schema::ParameterSchema;
use crate::pointer::child_pointer;
use crate::span::Span;
use crate::templates::TemplateId;
use crate::workspace::{ParameterParts, Workspace};

/// Which spec a family got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecChoice {
    /// The tool's entry under `families.<family>`.
    Family(String),
    /// The top-level (generic) spec: the family has no entry of its own.
    Generic,
}

#[derive(Clone, Debug)]
pub struct ResolvedTool {
    pub id: String,
    pub name: String,
    /// For a `for_each` tool: its name as a template, rendered per item.
    pub name_template: Option<TemplateId>,
    /// For a `for_each` tool: the list expression, where it is written, and the item's name.
    pub for_each: Option<ForEach>,
    pub description: TemplateId,
    /// The condition and where it is written.
    pub when: Option<(Arc<str>, Span)>,
    pub parameters: Vec<Arc<ResolvedParameter>>,
    pub choice: SpecChoice,
    /// The tool's file and the lines of the spec used.
    pub source: SourceRange,
}

#[derive(Clone, Debug)]
pub struct ForEach {
    pub list: String,
    pub span: Span,
    pub item: String,
}

#[derive(Clone, Debug)]
pub struct ResolvedParameter {
    pub name: String,
    pub required: bool,
    pub kind: ParameterType,
    pub instruction: Option<TemplateId>,
    pub usage: Option<TemplateId>,
    /// Added to the tool's description when the parameter is shown.
    pub note: Option<TemplateId>,
    /// JSON Schema beyond `type`: `enum`, `items`, `properties`, then the free keywords.
    pub schema: ParameterSchema,
    /// Shared with every tool that takes it from the same shared parameter.
    pub depends_on: Arc<[String]>,
    /// The parameter's entry in its tool's file.
    pub span: Span,
    /// The condition and where it is written.
    pub when: Option<(Arc<str>, Span)>,
}

/// The family specs a family's view of a tool applies, base first: the family's own entry
/// and the entries it is `based_on`. Empty for a family with no entry (the generic spec).
pub(crate) fn family_chain<'t>(
    definition: &'t crate::model::ToolSpec,
    family: &str,
) -> Vec<&'t str> {
    let Some((start, _)) = definition.families.get_key_value(family) else {
        return Vec::new();
    };
    // A cycle or an unknown base ends the chain (both reported by validation).
    let known_base = |name: &str| {
        let base = definition.families.get(name)?.based_on.as_deref()?;
        definition.families.contains_key(base).then_some(base)
    };
    let mut chain = follow(start, known_base).links;
    chain.reverse();
    chain
}

/// Whether `family` has a view of its own of the tool (a family spec, or a base of one):
/// without one, every family sees the tool alike.
pub fn has_family_view(workspace: &Workspace, id: &str, family: &str) -> bool {
    workspace
        .tools
        .get(id)
        .is_some_and(|entry| !family_chain(&entry.value.spec, family).is_empty())
}

/// The tool as `family` sees it; `None` for a tool the workspace does not hold, or whose
/// description does not compile (both reported).
pub fn resolve_tool(workspace: &Workspace, id: &str, family: &str) -> Option<ResolvedTool> {
    let entry = workspace.tools.get(id)?;
    let definition = &entry.value;
    let chain = family_chain(&definition.spec, family);

    let mut name = definition
        .name
        .clone()
        .unwrap_or_else(|| definition.id.clone());
    let mut name_template = definition.texts.name;
    let mut description = definition.texts.description;
    let mut when = definition
        .texts
        .when
        .clone()
        .map(|w| (w, entry.value_span("/when")));
    let mut parameters = (
        definition.parameters.as_slice(),
        definition.texts.parameters.as_slice(),
        "/parameters".to_string(),
    );
    for family_name in &chain {
        let (Some(spec), Some(texts)) = (
            definition.families.get(*family_name),
            definition.family_texts.get(*family_name),
        ) else {
            continue;
        };
        let prefix = child_pointer("/families", family_name);
        if let Some(n) = &spec.name {
            name.clone_from(n);
            name_template = texts.name;
        }
        if spec.description.is_some() {
            description = texts.description;
        }
        if let Some(w) = &texts.when {
            when = Some((Arc::clone(w), entry.value_span(&format!("{prefix}/when"))));
        }
        if let (Some(list), Some(list_texts)) = (&spec.parameters, &texts.parameters) {
            parameters = (
                list.as_slice(),
                list_texts.as_slice(),
                format!("{prefix}/parameters"),
            );
        }
    }

    let (list, texts, pointer) = parameters;
    let parameters = list
        .iter()
        .zip(texts)
        .enumerate()
        .map(|(index, (parameter, texts))| {
            let at = format!("{pointer}/{index}");
            let (span, when_span) = (
                entry.value_span(&at),
                entry.value_span(&format!("{at}/when")),
            );
            Arc::new(resolve_parameter(
                workspace, parameter, texts, span, when_span,
            ))
        })
        .collect();

    let description = description?;
    let for_each = definition.for_each.as_ref().map(|list| ForEach {
        list: list.clone(),
        span: entry.value_span("/for_each"),
        item: definition.item_name().to_string(),
    });
    Some(ResolvedTool {
        id: definition.id.clone(),
        name,
        name_template,
        for_each,
        description,
        when,
        parameters,
        source: match chain.last() {
            Some(family) => SourceRange::of(
                entry.value_span(&child_pointer("/families", family)),
                &workspace.sources,
            ),
            None => SourceRange::of_document(entry.value_span(""), &workspace.sources),
        },
        choice: chain.last().map_or(SpecChoice::Generic, |f| {
            SpecChoice::Family((*f).to_string())
        }),
    })
}

/// A parameter with its shared definition (if it `use`s one) underneath: each field it does
/// not set comes from the shared one, shared rather than copied.
fn resolve_parameter(
    workspace: &Workspace,
    parameter: &Parameter,
    own: &ParameterParts,
    span: Span,
    when_span: Span,
) -> ResolvedParameter {
    let manifest = &workspace.manifest;
    let shared = parameter.use_shared.as_ref().and_then(|name| {
        let definition = manifest.value.spec.parameters.get(name)?;
        let parts = manifest.value.shared_parameters.get(name)?;
        Some((name, definition, parts))
    });
    let base = shared.as_ref().map(|(_, definition, _)| *definition);
    let shared_parts = shared.as_ref().map(|(.., parts)| *parts);
    let shared_texts = shared_parts.map(|parts| parts.texts).unwrap_or_default();
    let name = parameter
        .name
        .clone()
        .or_else(|| base.and_then(|d| d.name.clone()))
        .or_else(|| shared.as_ref().map(|(name, ..)| (*name).clone()))
        .unwrap_or_default();
    let when = match (
        &own.when,
        shared_parts.and_then(|parts| parts.when.as_ref()),
    ) {
        (Some(own), _) => Some((Arc::clone(own), when_span)),
        (None, Some(inherited)) => shared.as_ref().map(|(name, ..)| {
            let pointer = format!("{}/when", child_pointer("/parameters", name));
            (Arc::clone(inherited), manifest.value_span(&pointer))
        }),
        (None, None) => None,
    };
    let own_texts = own.texts;
    // A text the parameter sets is its own, even when it was reported and has no template.
    let text = |own: &Option<String>, own_id: Option<TemplateId>, shared: Option<TemplateId>| {
        if own.is_some() { own_id } else { shared }
    };
    ResolvedParameter {
        name,
        required: parameter
            .required
            .or_else(|| base.and_then(|d| d.required))
            .unwrap_or(false),
        kind: parameter
            .kind
            .or_else(|| base.and_then(|d| d.kind))
            .unwrap_or_default(),
        instruction: text(
            &parameter.instruction,
            own_texts.instruction,
            shared_texts.instruction,
        ),
        usage: text(&parameter.usage, own_texts.usage, shared_texts.usage),
        schema: own.schema_over(shared_parts),
        note: text(&parameter.note, own_texts.note, shared_texts.note),
        depends_on: own
            .depends_on
            .clone()
            .or_else(|| shared_parts.and_then(|parts| parts.depends_on.clone()))
            .unwrap_or_default(),
        span,
        when,
    }
}
