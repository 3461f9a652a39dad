//! `promptc explain`: for every component, tool and parameter of one compile, whether it is in
//! the prompt and why — the condition and the values it saw, the missing dependency, the
//! override that disabled it, the spec used — with the file and line each came from.

use std::collections::HashSet;

use minijinja::Value;
use serde::Serialize;

use crate::compile::{CompileError, Request};
use crate::compiled::SourceRange;
use crate::diagnostic::Diagnostics;
use crate::entry::Entry;
use crate::load::document::child_pointer;
use crate::model::Variant;
use crate::resolve::effective_variant::EffectiveVariant;
use crate::resolve::plan::Reason;
use crate::resolve::template_choice::{TemplateChoice, component_template};
use crate::resolve::tool_spec::SpecChoice;
use crate::span::Span;
use crate::workspace::Workspace;

#[derive(Debug, Serialize)]
pub struct Explanation {
    pub variant: String,
    pub family: String,
    /// The variant and its ancestors, child first, with their files.
    pub chain: Vec<SourceRange>,
    pub components: Vec<Item>,
    pub tools: Vec<Item>,
}

/// One component, tool or parameter.
#[derive(Debug, Serialize)]
pub struct Item {
    pub id: String,
    pub included: bool,
    /// Why, in words.
    pub reason: String,
    /// The file (and lines) the item is defined in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRange>,
    /// For components, the template used and why; for tools, the spec used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice: Option<String>,
    /// The condition, if one decided, and the values it read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<ConditionReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Item>,
}

impl Item {
    /// A component or tool of the workspace that the variant does not list.
    fn unlisted(id: &str, reason: &str, source: SourceRange) -> Self {
        Self {
            id: id.to_string(),
            included: false,
            reason: reason.to_string(),
            source: Some(source),
            choice: None,
            condition: None,
            parameters: Vec::new(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct ConditionReport {
    pub expression: String,
    pub holds: bool,
    /// Each name the condition reads and its value, as JSON.
    pub values: Vec<(String, String)>,
}

impl Workspace {
    pub fn explain(&self, request: &Request) -> Result<Explanation, CompileError> {
        let mut diagnostics = Diagnostics::default();
        let prepared = self.prepare(request, &mut diagnostics)?;
        if diagnostics.has_errors() {
            return Err(CompileError::Diagnostics(diagnostics));
        }
        let variant = &prepared.variant;
        let scope = prepared.globals.scope();
        let range = |span: Span| SourceRange::of(span, &self.sources);

        let chain = variant
            .chain
            .iter()
            .filter_map(|id| self.variants.get(id))
            .map(|entry| range(entry.value_span("")))
            .collect();

        let mut components: Vec<Item> = prepared
            .plan
            .components
            .iter()
            .map(|planned| {
                let entry = self.components.get(&planned.id);
                let choice = component_template(self, variant, &planned.id).map(|(name, why)| {
                    let how = match why {
                        TemplateChoice::Override => "overridden by the variant",
                        TemplateChoice::Family => "the component's template for this family",
                        TemplateChoice::Default => "the component's own template",
                    };
                    format!("{name} ({how})")
                });
                Item {
                    id: planned.id.clone(),
                    included: planned.reason == Reason::Included,
                    reason: self.reason(variant, "components", &planned.id, &planned.reason),
                    source: entry.map(|e| range(e.value_span(""))),
                    choice,
                    condition: entry
                        .and_then(|e| e.value.when.as_deref())
                        .and_then(|when| condition(self, when, &planned.reason, &scope)),
                    parameters: Vec::new(),
                }
            })
            .collect();
        let listed: HashSet<&String> = variant.components().iter().collect();
        components.extend(
            self.components
                .iter()
                .filter(|(id, _)| !listed.contains(id))
                .map(|(id, entry)| {
                    let reason = "not listed by the variant (its slot renders \"\")";
                    Item::unlisted(id, reason, range(entry.value_span("")))
                }),
        );

        let mut tools: Vec<Item> = prepared
            .plan
            .tools
            .iter()
            .map(|planned| {
                let tool = &planned.tool;
                let entry = &self.tools[tool.id.as_str()];
                let (choice, span) = match &tool.choice {
                    SpecChoice::Family(family) => (
                        format!("the `{family}` spec"),
                        entry.value_span(&child_pointer("/families", family)),
                    ),
                    SpecChoice::Generic => (
                        format!("the generic spec (no `{}` entry)", variant.family()),
                        entry.value_span(""),
                    ),
                };
                Item {
                    id: tool.id.clone(),
                    included: planned.reason == Reason::Included,
                    reason: self.reason(variant, "tools", &tool.id, &planned.reason),
                    source: Some(range(span)),
                    choice: Some(choice),
                    condition: tool
                        .when
                        .as_ref()
                        .and_then(|(when, _)| condition(self, when, &planned.reason, &scope)),
                    parameters: planned
                        .parameters
                        .iter()
                        .map(|(parameter, reason)| Item {
                            id: parameter.name.clone(),
                            included: *reason == Reason::Included,
                            reason: self.reason(variant, "tools", &tool.id, reason),
                            source: parameter.when.as_ref().map(|(_, span)| range(*span)),
                            choice: None,
                            condition: parameter
                                .when
                                .as_ref()
                                .and_then(|(when, _)| condition(self, when, reason, &scope)),
                            parameters: Vec::new(),
                        })
                        .collect(),
                }
            })
            .collect();
        let listed: HashSet<&String> = variant.tools().iter().collect();
        tools.extend(
            self.tools
                .iter()
                .filter(|(id, _)| !listed.contains(id))
                .map(|(id, entry)| {
                    let reason = "not listed by the variant";
                    Item::unlisted(id, reason, range(entry.value_span("")))
                }),
        );

        Ok(Explanation {
            variant: variant.id().to_string(),
            family: variant.family().to_string(),
            chain,
            components,
            tools,
        })
    }

    fn reason(&self, variant: &EffectiveVariant, kind: &str, id: &str, reason: &Reason) -> String {
        match reason {
            Reason::Included => "included".into(),
            Reason::ConditionFalse { condition } => format!("condition `{condition}` is false"),
            Reason::MissingDependency { tools } => {
                format!(
                    "depends on tools that are not enabled: {}",
                    tools.join(", ")
                )
            }
            Reason::DisabledByOverride => {
                let pointer = format!(
                    "{}/enabled",
                    child_pointer(&format!("/overrides/{kind}"), id)
                );
                let at = variant
                    .chain
                    .iter()
                    .filter_map(|v| self.variants.get(v))
                    .find(|entry| disables(entry, kind, id))
                    .map(|entry| {
                        let span = entry.value_span(&pointer);
                        let file = self.sources.get(span.source);
                        let (line, column) = file.line_col(span.start);
                        format!(" at {}:{line}:{column}", file.path.display())
                    })
                    .unwrap_or_default();
                format!("disabled by an override{at}")
            }
        }
    }
}

fn disables(entry: &Entry<Variant>, kind: &str, id: &str) -> bool {
    let overrides = &entry.value.overrides;
    let enabled = if kind == "components" {
        overrides.components.get(id).and_then(|o| o.enabled)
    } else {
        overrides.tools.get(id).and_then(|o| o.enabled)
    };
    enabled == Some(false)
}

/// An item's condition, whether it held, and the value of each name it reads. Nothing when
/// something else decided first (an override, a missing dependency).
fn condition(
    workspace: &Workspace,
    condition: &str,
    reason: &Reason,
    scope: &Value,
) -> Option<ConditionReport> {
    let holds = match reason {
        Reason::Included => true,
        Reason::ConditionFalse { .. } => false,
        _ => return None,
    };
    let env = workspace.templates.env();
    let expression = env.compile_expression_owned(condition.to_string()).ok()?;
    let mut paths: Vec<String> = expression.undeclared_variables(true).into_iter().collect();
    paths.sort();
    let values = paths
        .into_iter()
        .map(|path| {
            let value = env
                .compile_expression_owned(path.clone())
                .and_then(|e| e.eval(scope.clone()))
                .map(|v| serde_json::to_string(&v).unwrap_or_else(|_| v.to_string()))
                .unwrap_or_else(|error| format!("<{error}>"));
            (path, value)
        })
        .collect();
    Some(ConditionReport {
        expression: condition.to_string(),
        holds,
        values,
    })
}
