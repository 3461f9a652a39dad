//! One tool as a family sees it: the family's spec (following `based_on`) or the generic one,
//! with shared parameters filled in. Each text field remembers which file and field it came
//! from, since it is a template compiled under that name.

use crate::load::document::Document;
use crate::load::document::child_pointer;
use crate::model::{Parameter, ParameterType, ToolSpec};
use crate::source::SourceId;
use crate::span::Span;
use crate::workspace::Workspace;

/// A text field and where its template was registered.
#[derive(Clone, Debug, PartialEq)]
pub struct Text {
    pub source: SourceId,
    pub pointer: String,
}

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
    pub description: Text,
    /// The condition and the pointer of its field.
    pub when: Option<(String, String)>,
    pub parameters: Vec<ResolvedParameter>,
    pub choice: SpecChoice,
}

#[derive(Clone, Debug)]
pub struct ResolvedParameter {
    pub name: String,
    pub required: bool,
    pub kind: ParameterType,
    pub instruction: Option<Text>,
    pub usage: Option<Text>,
    pub depends_on: Vec<String>,
    /// The condition and where it is written.
    pub when: Option<(String, Span)>,
}

pub fn resolve_tool(workspace: &Workspace, id: &str, family: &str) -> Option<ResolvedTool> {
    let entry = workspace.tools.get(id)?;
    let spec: &ToolSpec = &entry.value;
    let source = entry.source();

    // The chain of family specs to apply, base first.
    let mut chain = Vec::new();
    let mut next = spec
        .families
        .contains_key(family)
        .then(|| family.to_string());
    while let Some(current) = next {
        if chain.contains(&current) {
            break; // a cycle, reported by validation
        }
        next = spec.families.get(&current).and_then(|f| f.based_on.clone());
        chain.push(current);
    }
    chain.reverse();

    let mut name = spec.name.clone().unwrap_or_else(|| spec.id.clone());
    let mut description = Text {
        source,
        pointer: "/description".into(),
    };
    let mut when = spec.when.clone().map(|w| (w, "/when".to_string()));
    let mut parameters = (spec.parameters.as_slice(), "/parameters".to_string());
    for family_name in &chain {
        let Some(family_spec) = spec.families.get(family_name) else {
            continue;
        };
        let prefix = child_pointer("/families", family_name);
        if let Some(n) = &family_spec.name {
            name.clone_from(n);
        }
        if family_spec.description.is_some() {
            description.pointer = format!("{prefix}/description");
        }
        if let Some(w) = &family_spec.when {
            when = Some((w.clone(), format!("{prefix}/when")));
        }
        if let Some(list) = &family_spec.parameters {
            parameters = (list.as_slice(), format!("{prefix}/parameters"));
        }
    }

    let parameters = parameters
        .0
        .iter()
        .enumerate()
        .map(|(index, parameter)| {
            resolve_parameter(
                workspace,
                &entry.document,
                &format!("{}/{index}", parameters.1),
                parameter,
            )
        })
        .collect();

    Some(ResolvedTool {
        id: spec.id.clone(),
        name,
        description,
        when,
        parameters,
        choice: chain
            .last()
            .map_or(SpecChoice::Generic, |f| SpecChoice::Family(f.clone())),
    })
}

/// A parameter with its shared definition (if it `use`s one) underneath.
fn resolve_parameter(
    workspace: &Workspace,
    document: &Document,
    pointer: &str,
    parameter: &Parameter,
) -> ResolvedParameter {
    let source = document.source;
    let manifest = workspace.manifest_entry.as_ref();
    let shared = parameter.use_shared.as_ref().and_then(|name| {
        let definition = manifest?.value.parameters.get(name)?;
        Some((
            definition,
            manifest?.source(),
            child_pointer("/parameters", name),
            name,
        ))
    });
    let pick_text = |own: &Option<String>, field: &str| -> Option<Text> {
        if own.is_some() {
            return Some(Text {
                source,
                pointer: format!("{pointer}/{field}"),
            });
        }
        let (definition, shared_source, shared_pointer, _) = shared.as_ref()?;
        let value = if field == "instruction" {
            &definition.instruction
        } else {
            &definition.usage
        };
        value.as_ref().map(|_| Text {
            source: *shared_source,
            pointer: format!("{shared_pointer}/{field}"),
        })
    };
    let base = shared.as_ref().map(|(definition, ..)| *definition);
    let name = parameter
        .name
        .clone()
        .or_else(|| base.and_then(|d| d.name.clone()))
        .or_else(|| shared.as_ref().map(|(.., name)| (*name).clone()))
        .unwrap_or_default();
    let when = match (&parameter.when, base.and_then(|d| d.when.as_ref())) {
        (Some(own), _) => Some((own.clone(), document.value_span(&format!("{pointer}/when")))),
        (None, Some(inherited)) => shared
            .as_ref()
            .zip(manifest)
            .map(|((.., p, _), m)| (inherited.clone(), m.value_span(&format!("{p}/when")))),
        (None, None) => None,
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
        instruction: pick_text(&parameter.instruction, "instruction"),
        usage: pick_text(&parameter.usage, "usage"),
        depends_on: parameter
            .depends_on
            .clone()
            .or_else(|| base.and_then(|d| d.depends_on.clone()))
            .unwrap_or_default(),
        when,
    }
}
