//! What one compile contains, and why: the components and tools in order, each included or
//! left out with the reason (an override, a condition and the values it saw, a missing
//! dependency).

use std::collections::HashSet;

use minijinja::Value;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::problem::Problem;
use crate::render::globals::Globals;
use crate::resolve::effective_variant::EffectiveVariant;
use crate::resolve::order::apply_order;
use crate::resolve::tool_spec::{ResolvedParameter, ResolvedTool, resolve_tool};
use crate::span::Span;
use crate::workspace::Workspace;

/// Why something is in the prompt or not.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    Included,
    DisabledByOverride,
    ConditionFalse { condition: String },
    MissingDependency { tools: Vec<String> },
}

#[derive(Clone, Debug)]
pub struct PlannedComponent {
    pub id: String,
    pub reason: Reason,
}

#[derive(Clone, Debug)]
pub struct PlannedTool {
    pub tool: ResolvedTool,
    pub reason: Reason,
    pub parameters: Vec<(ResolvedParameter, Reason)>,
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

/// Evaluates a condition against the globals; an evaluation error is a diagnostic at the
/// condition.
pub fn evaluate(
    workspace: &Workspace,
    condition: &str,
    globals: &Value,
    span: Span,
) -> Result<bool, Diagnostic> {
    let failed = |error: minijinja::Error| {
        let problem = match error.kind() {
            minijinja::ErrorKind::OutOfFuel => Problem::OutOfFuel {
                fuel: workspace
                    .manifest
                    .fuel
                    .unwrap_or(crate::render::limits::DEFAULT_FUEL),
            },
            // The kind and its detail: the "(in <expression>:1)" of minijinja's own text
            // names no place the user knows; the span does.
            kind => Problem::ConditionFailed {
                message: match error.detail() {
                    Some(detail) => format!("{kind}: {detail}"),
                    None => kind.to_string(),
                },
            },
        };
        Diagnostic::new(problem, span)
    };
    let expression = workspace
        .templates
        .env()
        .compile_expression_owned(condition.to_string())
        .map_err(failed)?;
    expression
        .eval(globals.clone())
        .map(|value| value.is_true())
        .map_err(failed)
}

/// Included when the condition holds; a condition that fails to evaluate is reported and
/// counts as false.
fn decide(
    workspace: &Workspace,
    condition: &str,
    globals: &Value,
    span: Span,
    diagnostics: &mut Diagnostics,
) -> Reason {
    match evaluate(workspace, condition, globals, span) {
        Ok(true) => return Reason::Included,
        Ok(false) => {}
        Err(diagnostic) => diagnostics.push(diagnostic),
    }
    Reason::ConditionFalse {
        condition: condition.to_string(),
    }
}

pub fn plan(
    workspace: &Workspace,
    variant: &EffectiveVariant,
    globals: &mut Globals,
    diagnostics: &mut Diagnostics,
) -> Plan {
    let overrides = &variant.variant.overrides;
    let family = variant.family();
    let values = globals.scope();

    let tool_ids = apply_order(variant.tools(), |id| {
        overrides.tools.get(id).and_then(|o| o.order)
    });
    let mut tools: Vec<PlannedTool> = Vec::with_capacity(tool_ids.len());
    for id in &tool_ids {
        let Some(tool) = resolve_tool(workspace, id, family) else {
            continue;
        };
        let reason = if overrides.tools.get(id).and_then(|o| o.enabled) == Some(false) {
            Reason::DisabledByOverride
        } else if let Some((condition, pointer)) = &tool.when {
            let span = workspace.tools[id.as_str()].value_span(pointer);
            decide(workspace, condition, &values, span, diagnostics)
        } else {
            Reason::Included
        };
        tools.push(PlannedTool {
            tool,
            reason,
            parameters: Vec::new(),
        });
    }

    let enabled: Vec<String> = tools
        .iter()
        .filter(|t| t.reason == Reason::Included)
        .map(|t| t.tool.id.clone())
        .collect();
    globals.insert_fact(
        crate::namespace::ENABLED_TOOLS,
        Value::from(enabled.clone()),
    );
    let enabled: HashSet<String> = enabled.into_iter().collect();
    let values = globals.scope();

    for planned in &mut tools {
        planned.parameters = planned
            .tool
            .parameters
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
                    decide(workspace, condition, &values, *span, diagnostics)
                } else {
                    Reason::Included
                };
                (parameter.clone(), reason)
            })
            .collect();
    }

    let component_ids = apply_order(variant.components(), |id| {
        overrides.components.get(id).and_then(|o| o.order)
    });
    let mut components = Vec::with_capacity(component_ids.len());
    for id in component_ids {
        let Some(entry) = workspace.components.get(&id) else {
            continue;
        };
        let reason = if overrides.components.get(&id).and_then(|o| o.enabled) == Some(false) {
            Reason::DisabledByOverride
        } else if let Some(condition) = &entry.value.when {
            let span = entry.value_span("/when");
            decide(workspace, condition, &values, span, diagnostics)
        } else {
            Reason::Included
        };
        components.push(PlannedComponent { id, reason });
    }

    Plan { components, tools }
}
