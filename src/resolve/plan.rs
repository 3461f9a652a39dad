//! What one compile contains, and why: the components and tools in order, each included or
//! left out with the reason (an override, a condition and the values it saw, a missing
//! dependency).

use std::collections::HashSet;
use std::sync::Arc;

use minijinja::Value;

use crate::diagnostic::Diagnostics;
use crate::resolve::conditions::Conditions;
use crate::resolve::order::apply_order;
use crate::resolve::scope::Scope;
use crate::resolve::tool_spec::{ResolvedParameter, ResolvedTool, ResolvedTools};
use crate::span::Span;
use crate::templates::TemplateId;
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;
use crate::workspace::template_choice::{TemplateChoice, component_template};

/// Why something is in the prompt or not.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    Included,
    DisabledByOverride,
    ConditionFalse { condition: String },
    MissingDependency { tools: Vec<String> },
}

/// The one wording of each reason, for the JSON output and for `explain`.
impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Included => f.write_str("included"),
            Reason::DisabledByOverride => f.write_str("disabled by an override"),
            Reason::ConditionFalse { condition } => write!(f, "condition `{condition}` is false"),
            Reason::MissingDependency { tools } => write!(
                f,
                "depends on tools that are not enabled: {}",
                tools.join(", ")
            ),
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
}

/// Included when the condition holds; a condition that fails to evaluate is reported and
/// counts as false.
fn decide(
    conditions: &Conditions<'_>,
    condition: &str,
    values: &Value,
    span: Span,
    diagnostics: &mut Diagnostics,
) -> Reason {
    match conditions.evaluate(condition, values, span) {
        Ok(true) => return Reason::Included,
        Ok(false) => {}
        Err(diagnostic) => diagnostics.push(diagnostic),
    }
    Reason::ConditionFalse {
        condition: condition.to_string(),
    }
}

/// What the compile of `variant` contains: the tools (whose enabled ids join the scope as
/// `enabled_tools`), their parameters, then the components, each with the reason for it.
pub fn plan(
    workspace: &Workspace,
    conditions: &Conditions<'_>,
    resolved: &ResolvedTools,
    variant: &EffectiveVariant,
    scope: &mut Scope,
    diagnostics: &mut Diagnostics,
) -> Plan {
    let planner = Planner {
        workspace,
        conditions,
        resolved,
        variant,
    };
    let mut tools = planner.tools(&scope.values(), diagnostics);
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
    for planned in &mut tools {
        planned.parameters = planner.parameters(&planned.tool, &enabled, &values, diagnostics);
    }
    let components = planner.components(&values, diagnostics);
    Plan { components, tools }
}

struct Planner<'a> {
    workspace: &'a Workspace,
    conditions: &'a Conditions<'a>,
    resolved: &'a ResolvedTools,
    variant: &'a EffectiveVariant,
}

impl Planner<'_> {
    fn overrides(&self) -> &crate::model::Overrides {
        &self.variant.variant.overrides
    }

    /// The variant's tools in order, each with the family's spec.
    fn tools(&self, values: &Value, diagnostics: &mut Diagnostics) -> Vec<PlannedTool> {
        let overrides = &self.overrides().tools;
        let ids = apply_order(self.variant.tools(), |id| {
            overrides.get(id).and_then(|o| o.order)
        });
        let mut tools = Vec::with_capacity(ids.len());
        for id in &ids {
            let Some(tool) = self.resolved.get(self.workspace, id, self.variant.family()) else {
                continue;
            };
            let reason = if overrides.get(id).and_then(|o| o.enabled) == Some(false) {
                Reason::DisabledByOverride
            } else if let Some((condition, span)) = &tool.when {
                decide(self.conditions, condition, values, *span, diagnostics)
            } else {
                Reason::Included
            };
            tools.push(PlannedTool {
                tool,
                reason,
                parameters: Vec::new(),
            });
        }
        tools
    }

    /// A tool's parameters: each needs the tools it depends on, then its condition.
    fn parameters(
        &self,
        tool: &ResolvedTool,
        enabled: &HashSet<String>,
        values: &Value,
        diagnostics: &mut Diagnostics,
    ) -> Vec<(Arc<ResolvedParameter>, Reason)> {
        tool.parameters
            .iter()
            .map(|parameter| {
                let missing: Vec<String> = parameter
                    .depends_on
                    .iter()
                    .filter(|tool| !enabled.contains(*tool))
                    .cloned()
                    .collect();
                let reason = if !missing.is_empty() {
                    Reason::MissingDependency { tools: missing }
                } else if let Some((condition, span)) = &parameter.when {
                    decide(self.conditions, condition, values, *span, diagnostics)
                } else {
                    Reason::Included
                };
                (parameter.clone(), reason)
            })
            .collect()
    }

    /// The variant's components in order, each with the template it renders with.
    fn components(&self, values: &Value, diagnostics: &mut Diagnostics) -> Vec<PlannedComponent> {
        let overrides = &self.overrides().components;
        let ids = apply_order(self.variant.components(), |id| {
            overrides.get(id).and_then(|o| o.order)
        });
        let mut components = Vec::with_capacity(ids.len());
        for id in ids {
            // Only a workspace with errors lists a component it does not hold.
            let (Some(entry), Some((template, choice))) = (
                self.workspace.components.get(&id),
                component_template(self.workspace, self.variant, &id),
            ) else {
                continue;
            };
            let reason = if overrides.get(&id).and_then(|o| o.enabled) == Some(false) {
                Reason::DisabledByOverride
            } else if let Some(condition) = &entry.value.when {
                let span = entry.value_span("/when");
                decide(self.conditions, condition, values, span, diagnostics)
            } else {
                Reason::Included
            };
            components.push(PlannedComponent {
                slot: entry.value.slot(),
                id,
                template,
                choice,
                reason,
            });
        }
        components
    }
}
