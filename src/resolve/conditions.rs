//! Every condition of the workspace (`when` of components, tools and parameters, and the
//! manifest's predicates), parsed once and kept for all the compiles of a run.

use std::collections::HashMap;

use minijinja::{Expression, Value};

use crate::diagnostic::Diagnostic;
use crate::model::Parameter;
use crate::model::limits::DEFAULT_FUEL;
use crate::problem::Problem;
use crate::span::Span;
use crate::workspace::Workspace;

pub struct Conditions<'w> {
    workspace: &'w Workspace,
    parsed: HashMap<&'w str, Result<Expression<'w, 'w>, Problem>>,
}

impl<'w> Conditions<'w> {
    pub fn new(workspace: &'w Workspace) -> Self {
        let mut conditions = Self {
            workspace,
            parsed: HashMap::new(),
        };
        for text in all_conditions(workspace) {
            if !conditions.parsed.contains_key(text) {
                let parsed = conditions.parse(text);
                conditions.parsed.insert(text, parsed);
            }
        }
        conditions
    }

    fn parse(&self, text: &'w str) -> Result<Expression<'w, 'w>, Problem> {
        self.workspace
            .templates
            .env()
            .compile_expression(text)
            .map_err(|error| self.problem(&error))
    }

    /// The parsed condition, for the names it reads.
    pub fn expression(&self, text: &str) -> Option<&Expression<'w, 'w>> {
        self.parsed.get(text)?.as_ref().ok()
    }

    /// Evaluates a condition against a scope; an evaluation error is a diagnostic at the
    /// condition.
    pub fn evaluate(&self, text: &str, scope: &Value, span: Span) -> Result<bool, Diagnostic> {
        let fail = |problem: Problem| Diagnostic::new(problem, span);
        let result = match self.parsed.get(text) {
            Some(Ok(expression)) => expression.eval(scope.clone()),
            Some(Err(problem)) => return Err(fail(problem.clone())),
            // Every condition of the workspace was parsed up front: this is one of the
            // caller's own.
            None => self
                .workspace
                .templates
                .env()
                .compile_expression(text)
                .and_then(|expression| expression.eval(scope.clone())),
        };
        result
            .map(|value| value.is_true())
            .map_err(|error| fail(self.problem(&error)))
    }

    fn problem(&self, error: &minijinja::Error) -> Problem {
        match error.kind() {
            minijinja::ErrorKind::OutOfFuel => Problem::OutOfFuel {
                fuel: self.workspace.settings().fuel.unwrap_or(DEFAULT_FUEL),
            },
            // The kind and its detail: the "(in <expression>:1)" of minijinja's own text
            // names no place the user knows; the span does.
            kind => Problem::ConditionFailed {
                message: match error.detail() {
                    Some(detail) => format!("{kind}: {detail}"),
                    None => kind.to_string(),
                },
            },
        }
    }
}

/// The text of every condition a compile may evaluate.
fn all_conditions(workspace: &Workspace) -> impl Iterator<Item = &str> {
    let manifest = workspace.settings();
    let predicates = manifest.predicates.values().map(String::as_str);
    let shared = manifest.parameters.values();
    let components = workspace
        .components
        .values()
        .filter_map(|entry| entry.value.when.as_deref());
    let tools = workspace.tools.values().flat_map(|entry| {
        let tool = &entry.value.spec;
        let own = tool.when.as_deref().into_iter();
        let family_whens = tool.families.values().filter_map(|f| f.when.as_deref());
        let parameters = tool.parameter_lists().flat_map(|(_, list)| list);
        own.chain(family_whens)
            .chain(parameter_conditions(parameters))
    });
    let matches = workspace
        .variants
        .values()
        .filter_map(|entry| entry.value.route_match.as_deref());
    let dialects = manifest
        .tool_definitions
        .dialects
        .iter()
        .map(|rule| rule.when.as_str());
    predicates
        .chain(matches)
        .chain(dialects)
        .chain(components)
        .chain(tools)
        .chain(parameter_conditions(shared))
}

fn parameter_conditions<'a>(
    parameters: impl Iterator<Item = &'a Parameter>,
) -> impl Iterator<Item = &'a str> {
    parameters.filter_map(|parameter| parameter.when.as_deref())
}
