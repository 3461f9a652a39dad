//! `promptc explain`: for every component, tool and parameter of one compile, whether it is in
//! the prompt and why — the condition and the values it saw, the missing dependency, the
//! override that disabled it, the spec used — with the file and line each came from.

use std::collections::HashSet;
use std::sync::Arc;

use minijinja::Value;
use serde::Serialize;

use crate::compile::{Compiler, Request};
use crate::compiled::CompileError;
use crate::compiled::SourceRange;
use crate::diagnostic::Diagnostics;
use crate::model::Overrides;
use crate::pointer::child_pointer;
use crate::resolve::conditions::Conditions;
use crate::resolve::plan::{PlannedComponent, PlannedTool, Reason};
use crate::resolve::tool_spec::SpecChoice;
use crate::span::Span;
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;
use crate::workspace::template_choice::TemplateChoice;

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
    /// For a tool, the name the prompt gives it where that is not its id (a `name` of its
    /// spec); a `for_each` tool's names are its instances'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub included: bool,
    /// Why, in words.
    pub reason: String,
    /// The file (and lines) the item is defined in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRange>,
    /// For components, the template used and why; for tools, the spec used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice: Option<String>,
    /// For components, the templates its template includes, imports or extends
    /// (transitively): the partials it is made of.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partials: Vec<String>,
    /// The condition, if one decided, and the values it read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<ConditionReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Item>,
    /// For a `for_each` tool: the tools its items made, in item order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<Instance>,
}

/// One tool a `for_each` spec made: its name, and the index of its item in the list.
#[derive(Debug, Serialize)]
pub struct Instance {
    pub name: String,
    pub item: Option<usize>,
}

impl Item {
    /// A component or tool of the workspace that the variant does not list.
    fn unlisted(id: &str, reason: &str, source: SourceRange) -> Self {
        Self {
            id: id.to_string(),
            name: None,
            included: false,
            reason: reason.to_string(),
            source: Some(source),
            choice: None,
            partials: Vec::new(),
            condition: None,
            parameters: Vec::new(),
            instances: Vec::new(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct ConditionReport {
    /// Shared with the item's condition: a shared parameter's is every tool's.
    pub expression: Arc<str>,
    pub holds: bool,
    /// Each name the condition reads and its value, as JSON.
    pub values: Vec<(String, String)>,
}

/// Why each component, tool and parameter of one compile is in or out.
pub fn explain(compiler: &Compiler<'_>, request: &Request) -> Result<Explanation, CompileError> {
    let mut diagnostics = Diagnostics::default();
    let prepared = compiler.prepare(request, &mut diagnostics)?;
    if diagnostics.has_errors() {
        return Err(CompileError::Diagnostics(diagnostics));
    }
    // A `for_each` tool makes a tool per item of its list, which only a render knows: the
    // request is compiled for them. Where its items make no tools that can be offered (two
    // of one name, a name no model can call), that is what there is to explain: those errors
    // are given, where the list was said to hold no items. Any other failure of the compile
    // leaves the tools made unknown, and the rest is explained as ever.
    let for_each = prepared
        .plan
        .tools
        .iter()
        .any(|planned| planned.tool.for_each.is_some() && planned.reason == Reason::Included);
    // A section is in the prompt only where a render that is reads its slot, which only the
    // compile knows (a condition of the base template may skip it): the request is compiled
    // for that too, and a failing compile leaves the plan's word.
    let compiled = compiler.compile(request);
    let with_reason = |reason: &str| -> HashSet<String> {
        compiled
            .as_ref()
            .map(|compiled| {
                compiled
                    .sections
                    .iter()
                    .filter(|section| section.reason.as_deref() == Some(reason))
                    .map(|section| section.id.clone())
                    .collect()
            })
            .unwrap_or_default()
    };
    // Tools reach the model as native definitions, or written by a template whose render is
    // in the prompt: with neither (the section that writes them switched off, or left out
    // in this context), the model never sees the tools the variant lists.
    let tools_unwritten = prepared.variant.variant.native_tools != Some(true)
        && compiled.as_ref().is_ok_and(|compiled| {
            let placed = prepared
                .plan
                .components
                .iter()
                .filter(|planned| {
                    compiled
                        .sections
                        .iter()
                        .any(|section| section.id == planned.id && section.included)
                })
                .map(|planned| planned.template);
            !crate::validate::template_names::may_write_tools(
                compiler.workspace(),
                std::iter::once(prepared.variant.base).chain(placed),
            )
        });
    let skipped = with_reason(&Reason::SlotSkipped.to_string());
    let rendered_nothing = with_reason(crate::resolve::plan::RENDERED_NOTHING);
    let made = match for_each.then_some(compiled) {
        None => None,
        Some(Ok(compiled)) => Some(compiled.tools.to_vec()),
        Some(Err(CompileError::Diagnostics(found))) => {
            let mut naming = Diagnostics::default();
            for diagnostic in found.iter().filter(|diagnostic| {
                matches!(
                    diagnostic.problem,
                    crate::problem::Problem::ToolNameTaken { .. }
                        | crate::problem::Problem::BadToolName { .. }
                )
            }) {
                naming.push(diagnostic.clone());
            }
            if !naming.is_empty() {
                return Err(CompileError::Diagnostics(naming));
            }
            None
        }
        Some(Err(_)) => None,
    };
    let explainer = Explainer {
        workspace: compiler.workspace(),
        conditions: compiler.conditions(),
        variant: prepared.variant,
        scope: prepared.scope.values(),
        made,
        skipped,
        rendered_nothing,
        tools_unwritten,
    };
    let variant = prepared.variant;
    Ok(Explanation {
        variant: variant.id().to_string(),
        family: variant.family().to_string(),
        chain: variant
            .chain
            .iter()
            .filter_map(|id| explainer.workspace.variants.get(id))
            .map(|entry| explainer.document(entry.value_span("")))
            .collect(),
        components: explainer.components(&prepared.plan.components),
        tools: explainer.tools(&prepared.plan.tools),
    })
}

struct Explainer<'a> {
    workspace: &'a Workspace,
    conditions: &'a Conditions<'a>,
    variant: &'a EffectiveVariant,
    scope: Value,
    /// The tools the compile made, when a `for_each` tool asked for them.
    made: Option<Vec<crate::compiled::CompiledTool>>,
    /// The sections the compile rendered whose slot no render of the prompt read.
    skipped: HashSet<String>,
    /// Components in the prompt whose template rendered nothing in this context.
    rendered_nothing: HashSet<String>,
    /// No template in the prompt writes the tools, and none go as native definitions.
    tools_unwritten: bool,
}

impl Explainer<'_> {
    fn range(&self, span: Span) -> SourceRange {
        SourceRange::of(span, &self.workspace.sources)
    }

    /// A whole file's lines, from its first line of content.
    fn document(&self, span: Span) -> SourceRange {
        SourceRange::of_document(span, &self.workspace.sources)
    }

    /// The planned components, then the workspace's components the variant does not list.
    fn components(&self, planned: &[PlannedComponent]) -> Vec<Item> {
        let mut items: Vec<Item> = planned.iter().map(|c| self.component(c)).collect();
        let listed: HashSet<&String> = self.variant.components().iter().collect();
        items.extend(
            self.workspace
                .components
                .iter()
                .filter(|(id, _)| !listed.contains(id))
                .map(|(id, entry)| {
                    let reason = "not listed by the variant (its slot renders \"\")";
                    Item::unlisted(id, reason, self.document(entry.value_span("")))
                }),
        );
        items
    }

    fn component(&self, planned: &PlannedComponent) -> Item {
        let entry = self.workspace.components.get(&planned.id);
        let template = self.workspace.templates.name(planned.template);
        let reason = if self.skipped.contains(&planned.id) {
            &Reason::SlotSkipped
        } else {
            &planned.reason
        };
        Item {
            id: planned.id.clone(),
            name: None,
            included: *reason == Reason::Included,
            reason: if self.rendered_nothing.contains(&planned.id) {
                crate::resolve::plan::RENDERED_NOTHING.to_string()
            } else {
                self.reason(Kind::Component, &planned.id, reason)
            },
            source: entry.map(|e| self.document(e.value_span(""))),
            choice: Some(format!(
                "{template} ({})",
                self.template_choice(&planned.id, planned.choice)
            )),
            partials: self
                .workspace
                .templates
                .used_by(planned.template)
                .iter()
                .map(|used| self.workspace.templates.name(*used).to_string())
                .collect(),
            condition: entry
                .and_then(|e| e.value.condition.as_ref())
                .and_then(|when| self.condition(when, &planned.reason)),
            parameters: Vec::new(),
            instances: Vec::new(),
        }
    }

    /// The planned tools, then the workspace's tools the variant does not list.
    fn tools(&self, planned: &[PlannedTool]) -> Vec<Item> {
        let mut items: Vec<Item> = planned.iter().map(|t| self.tool(t)).collect();
        let listed: HashSet<&String> = self.variant.tools().iter().collect();
        items.extend(
            self.workspace
                .tools
                .iter()
                .filter(|(id, _)| !listed.contains(id))
                .map(|(id, entry)| {
                    Item::unlisted(
                        id,
                        "not listed by the variant",
                        self.document(entry.value_span("")),
                    )
                }),
        );
        items
    }

    fn tool(&self, planned: &PlannedTool) -> Item {
        let tool = &planned.tool;
        let entry = &self.workspace.tools[tool.id.as_str()];
        let (choice, source) = match &tool.choice {
            SpecChoice::Family(family) => (
                format!("the `{family}` spec"),
                self.range(entry.value_span(&child_pointer("/families", family))),
            ),
            SpecChoice::Generic => (
                format!("the generic spec (no `{}` entry)", self.variant.family()),
                self.document(entry.value_span("")),
            ),
        };
        let instances: Vec<Instance> = match (&tool.for_each, &self.made) {
            (Some(_), Some(made)) => made
                .iter()
                .filter(|made| made.id == tool.id)
                .map(|made| Instance {
                    name: made.name.clone(),
                    item: made.item,
                })
                .collect(),
            _ => Vec::new(),
        };
        // Included, but its list gave no item: no tool is offered.
        let no_items = planned.reason == Reason::Included
            && instances.is_empty()
            && self.made.is_some()
            && tool.for_each.is_some();
        let reason = match &tool.for_each {
            Some(for_each) if no_items => format!(
                "its `for_each` list `{}` holds no items here: no tool is offered",
                for_each.list
            ),
            _ => self.reason(Kind::Tool, &tool.id, &planned.reason),
        };
        let offered = planned.reason == Reason::Included && !no_items;
        let reason = if offered && self.tools_unwritten {
            TOOLS_UNWRITTEN.to_string()
        } else {
            reason
        };
        let shown = offered && !self.tools_unwritten;
        Item {
            id: tool.id.clone(),
            name: (tool.for_each.is_none() && tool.name != tool.id).then(|| tool.name.clone()),
            included: shown,
            reason,
            instances,
            source: Some(source),
            choice: Some(choice),
            partials: Vec::new(),
            condition: tool
                .when
                .as_ref()
                .and_then(|(when, _)| self.condition(when, &planned.reason)),
            parameters: planned
                .parameters
                .iter()
                .map(|(parameter, reason)| Item {
                    id: parameter.name.clone(),
                    name: None,
                    // A parameter of a tool that is not offered is shown nowhere, whatever
                    // its own condition says.
                    included: shown && *reason == Reason::Included,
                    reason: if shown {
                        self.reason(Kind::Tool, &tool.id, reason)
                    } else if offered {
                        "its tool is not in the prompt".to_string()
                    } else {
                        "its tool is not offered".to_string()
                    },
                    source: parameter.when.as_ref().map(|(_, span)| self.range(*span)),
                    choice: None,
                    partials: Vec::new(),
                    condition: parameter
                        .when
                        .as_ref()
                        .and_then(|(when, _)| self.condition(when, reason)),
                    parameters: Vec::new(),
                    instances: Vec::new(),
                })
                .collect(),
        }
    }

    /// Why a component renders with its template, in words; an override of its template is
    /// located in the file of the chain that writes it (the variant's own, or one it extends).
    fn template_choice(&self, id: &str, choice: TemplateChoice) -> String {
        if choice != TemplateChoice::Override {
            return choice.to_string();
        }
        let pointer = child_pointer("/overrides/components", id);
        self.variant
            .chain
            .iter()
            .filter_map(|v| self.workspace.variants.get(v))
            .find_map(|entry| {
                let over = entry.value.overrides.components.get(id)?;
                let field = if over.template.is_some() {
                    "template"
                } else if over.template_file.is_some() {
                    "template_file"
                } else {
                    return None;
                };
                let span = entry.value_span(&format!("{pointer}/{field}"));
                Some(format!("overridden at {}", self.place(span)))
            })
            .unwrap_or_else(|| choice.to_string())
    }

    /// `file:line:col` of `span`.
    fn place(&self, span: crate::span::Span) -> String {
        let file = self.workspace.sources.get(span.source);
        let (line, column) = file.line_col(span.start);
        format!("{}:{line}:{column}", file.path.display())
    }

    /// The reason in words; an override that disabled the item is located.
    fn reason(&self, kind: Kind, id: &str, reason: &Reason) -> String {
        if *reason != Reason::DisabledByOverride {
            return reason.to_string();
        }
        let pointer = format!(
            "{}/enabled",
            child_pointer(&format!("/overrides/{}", kind.field()), id)
        );
        let at = self
            .variant
            .chain
            .iter()
            .filter_map(|v| self.workspace.variants.get(v))
            .find(|entry| kind.disabled_by(&entry.value.overrides, id))
            .map(|entry| format!(" at {}", self.place(entry.value_span(&pointer))))
            .unwrap_or_default();
        format!("{reason}{at}")
    }

    /// An item's condition, whether it held, and the value of each name it reads. Nothing
    /// when something else decided first (an override, a missing dependency).
    fn condition(&self, condition: &Arc<str>, reason: &Reason) -> Option<ConditionReport> {
        let holds = match reason {
            Reason::Included => true,
            Reason::ConditionFalse { .. } => false,
            _ => return None,
        };
        let expression = self.conditions.expression(condition)?;
        let mut paths: Vec<String> = expression.undeclared_variables(true).into_iter().collect();
        paths.sort();
        let env = self.workspace.templates.env();
        let values = paths
            .into_iter()
            .map(|path| {
                let value = env
                    .compile_expression(&path)
                    .and_then(|e| e.eval(self.scope.clone()))
                    .map(|v| serde_json::to_string(&v).unwrap_or_else(|_| v.to_string()))
                    .unwrap_or_else(|error| format!("<{error}>"));
                (path, value)
            })
            .collect();
        Some(ConditionReport {
            expression: Arc::clone(condition),
            holds,
            values,
        })
    }
}

/// A listed tool that no template of the prompt writes, in a variant without native
/// definitions.
const TOOLS_UNWRITTEN: &str = "listed, but the model never sees it: no template in this \
    prompt writes the tools (`TOOLS`, `tools` or `enabled_tools`), and the variant sends no \
    native tool definitions";

/// What an override applies to.
#[derive(Clone, Copy)]
enum Kind {
    Component,
    Tool,
}

impl Kind {
    /// The table of `overrides` it lives in.
    fn field(self) -> &'static str {
        match self {
            Kind::Component => "components",
            Kind::Tool => "tools",
        }
    }

    fn disabled_by(self, overrides: &Overrides, id: &str) -> bool {
        let enabled = match self {
            Kind::Component => overrides.components.get(id).and_then(|o| o.enabled),
            Kind::Tool => overrides.tools.get(id).and_then(|o| o.enabled),
        };
        enabled == Some(false)
    }
}
