//! Every condition of the workspace (`when` of components, tools and parameters, and the
//! manifest's predicates), parsed once and kept for all the compiles of a run.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use minijinja::{Expression, Value};

use crate::bounded_memo::BoundedMemo;
use crate::diagnostic::Diagnostic;
use crate::model::limits::DEFAULT_FUEL;
use crate::model::{Component, Manifest, Parameter, ToolSpec, Variant};
use crate::problem::Problem;
use crate::span::Span;
use crate::templates::model_id::used_fuel;
use crate::templates::written::write_value;
use crate::workspace::Workspace;

/// A condition whose names, written out, take more than this is evaluated every time: most
/// conditions are quicker to evaluate than a large value is to write.
const MAX_KEY_BYTES: usize = 256;
/// What the results may hold, in bytes of their keys.
const MAX_HELD_BYTES: usize = 4 * 1024 * 1024;

pub struct Conditions<'w> {
    workspace: &'w Workspace,
    parsed: HashMap<&'w str, Result<Parsed<'w>, Problem>>,
    /// Results by condition and the values of the names it reads, with the fuel each
    /// evaluation used: a condition is a pure function of them, and most compiles of a run
    /// see the same ones.
    results: BoundedMemo<ResultKey, (bool, u64)>,
}

/// The fuel the conditions of one compile (or one route, or one choice of a dialect) share.
/// Each evaluation may run up to the workspace's `fuel`, and what it used is taken from what
/// is left; the condition that finds too little left is reported, as a template is that runs
/// out. Without it, each of a compile's conditions had the whole fuel, and a workspace of many
/// conditions that each build many patterns ran for minutes in one compile. A result taken
/// from memory costs what its evaluation used, so what is left never depends on which
/// compile evaluated a condition first.
pub struct ConditionFuel {
    fuel: u64,
    left: Cell<u64>,
    /// Whether running out (or a condition that failed) was reported: it is reported once, at
    /// the condition that found too little left; the conditions after it are not evaluated,
    /// and count as false.
    reported: Cell<bool>,
}

impl ConditionFuel {
    pub fn new(fuel: u64) -> Self {
        Self {
            fuel,
            left: Cell::new(fuel),
            reported: Cell::new(false),
        }
    }

    /// Running out, at `span`: reported the first time, `false` after.
    fn ran_out(&self, span: Span) -> Result<bool, Diagnostic> {
        self.left.set(0);
        if self.reported.replace(true) {
            return Ok(false);
        }
        Err(Diagnostic::new(
            Problem::ConditionsOutOfFuel { fuel: self.fuel },
            span,
        ))
    }

    /// Takes `used` from what is left; `false` when it is more.
    fn spend(&self, used: u64) -> bool {
        match self.left.get().checked_sub(used) {
            Some(left) => {
                self.left.set(left);
                true
            }
            None => false,
        }
    }

    /// Spends what is left, for a condition that failed and was reported.
    fn spend_all(&self) {
        self.left.set(0);
        self.reported.set(true);
    }

    /// What was used so far.
    pub fn used(&self) -> u64 {
        self.fuel - self.left.get()
    }

    /// Takes what earlier evaluations used, remembered with their results.
    pub fn spend_remembered(&self, used: u64) {
        self.left.set(self.left.get().saturating_sub(used));
    }
}

/// A condition's index and the values of the names it reads, written out.
type ResultKey = (usize, Box<[u8]>);

struct Parsed<'w> {
    /// Which condition of the workspace this is, for its results.
    index: usize,
    expression: Expression<'w, 'w>,
    /// The names it reads, sorted; `None` when they do not tell all it reads (`debug()`).
    reads: Option<Vec<String>>,
    /// Cleared once the values it reads were too large to write: from then on it is
    /// evaluated every time.
    remembered: AtomicBool,
}

impl<'w> Conditions<'w> {
    pub fn new(workspace: &'w Workspace) -> Self {
        let mut conditions = Self {
            workspace,
            parsed: HashMap::new(),
            results: BoundedMemo::new(MAX_HELD_BYTES),
        };
        for text in all_conditions(workspace) {
            if !conditions.parsed.contains_key(text) {
                let parsed = conditions.parse(text);
                conditions.parsed.insert(text, parsed);
            }
        }
        conditions
    }

    fn parse(&self, text: &'w str) -> Result<Parsed<'w>, Problem> {
        let expression = self
            .workspace
            .templates
            .env()
            .compile_expression(text)
            .map_err(|error| self.problem(&error))?;
        let mut reads: Vec<String> = expression.undeclared_variables(false).into_iter().collect();
        reads.sort();
        let reads = (!reads.iter().any(|name| name == "debug")).then_some(reads);
        Ok(Parsed {
            index: self.parsed.len(),
            expression,
            reads,
            remembered: AtomicBool::new(true),
        })
    }

    /// The names a condition reads; `None` when they cannot be told, or for a condition that
    /// did not compile.
    pub fn reads(&self, text: &str) -> Option<&[String]> {
        self.parsed.get(text)?.as_ref().ok()?.reads.as_deref()
    }

    /// The parsed condition, for the names it reads.
    pub fn expression(&self, text: &str) -> Option<&Expression<'w, 'w>> {
        Some(&self.parsed.get(text)?.as_ref().ok()?.expression)
    }

    /// Whether a `for_each` list holds an item, taking the fuel its evaluation uses from
    /// `fuel`: a list that is absent, `none` or empty holds none, as the tools' render finds.
    /// One that fails to evaluate, or any value that is no list, counts as holding some, and
    /// spends nothing: the render reports it where the list is written, and the compile fails
    /// there.
    pub fn holds_items(&self, list: &str, scope: &Value, fuel: &ConditionFuel) -> bool {
        let evaluated = self
            .workspace
            .templates
            .env()
            .compile_expression(list)
            .and_then(|expression| expression.eval_inspected(scope.clone(), used_fuel));
        let Ok((value, used)) = evaluated else {
            return true;
        };
        if !fuel.spend(used) {
            return true;
        }
        if value.is_undefined() || value.is_none() {
            return false;
        }
        if value.kind() != minijinja::value::ValueKind::Seq {
            return true;
        }
        value
            .try_iter()
            .map_or(true, |mut items| items.next().is_some())
    }

    /// The key of a condition's result: the values of the names it reads, written out.
    fn key(parsed: &Parsed<'w>, scope: &Value) -> Option<ResultKey> {
        if !parsed.remembered.load(Ordering::Relaxed) {
            return None;
        }
        let mut out = Vec::new();
        for name in parsed.reads.as_ref()? {
            let value = scope.get_attr(name).ok()?;
            if write_value(&value, MAX_KEY_BYTES, &mut out).is_none() {
                if out.len() > MAX_KEY_BYTES {
                    parsed.remembered.store(false, Ordering::Relaxed);
                }
                return None;
            }
        }
        Some((parsed.index, out.into_boxed_slice()))
    }

    /// The fuel for the conditions of one compile, route or choice of a dialect.
    pub fn fuel(&self) -> ConditionFuel {
        ConditionFuel::new(self.workspace_fuel())
    }

    /// The workspace's `fuel`, as its templates' environment holds it.
    fn workspace_fuel(&self) -> u64 {
        self.workspace
            .templates
            .env()
            .fuel()
            .unwrap_or(DEFAULT_FUEL)
    }

    /// Evaluates a condition against a scope, taking the fuel it uses from `fuel`; an
    /// evaluation error, or too little fuel left, is a diagnostic at the condition.
    pub fn evaluate(
        &self,
        text: &str,
        scope: &Value,
        span: Span,
        fuel: &ConditionFuel,
    ) -> Result<bool, Diagnostic> {
        let fail = |problem: Problem| Diagnostic::new(problem, span);
        // Nothing left: not evaluated, which could take the whole fuel again.
        if fuel.left.get() == 0 {
            return fuel.ran_out(span);
        }
        let result = match self.parsed.get(text) {
            Some(Ok(parsed)) => {
                let key = Self::key(parsed, scope);
                if let Some(known) = key.as_ref().and_then(|key| self.results.get(key)) {
                    return Self::spent(known, fuel, span);
                }
                let result = parsed
                    .expression
                    .eval_inspected(scope.clone(), used_fuel)
                    .and_then(truth);
                if let (Some(key), Ok(found)) = (key, &result) {
                    // The key's bytes, and about as much again for the entry around them.
                    let bytes = 2 * key.1.len() + 16;
                    self.results.insert(key, *found, bytes);
                }
                result
            }
            Some(Err(problem)) => return Err(fail(problem.clone())),
            // Every condition of the workspace was parsed up front: this is one of the
            // caller's own.
            None => self
                .workspace
                .templates
                .env()
                .compile_expression(text)
                .and_then(|expression| expression.eval_inspected(scope.clone(), used_fuel))
                .and_then(truth),
        };
        match result {
            Ok(found) => Self::spent(found, fuel, span),
            // What a failed evaluation used is not known (it may have run out of fuel, or
            // failed after walking most of it): the conditions' fuel counts as spent, so that
            // many failing conditions do not each run up to the whole fuel. This one is
            // reported; those after it are not evaluated, and count as false.
            Err(error) => {
                fuel.spend_all();
                let value = span;
                let mut span = self.narrowed(value, text, &error).unwrap_or(value);
                let mut problem = self.problem(&error);
                if let Problem::ConditionFailed {
                    undefined, meant, ..
                } = &mut problem
                    && error.kind() == minijinja::ErrorKind::UndefinedError
                {
                    *undefined = self.undefined_path(text, scope);
                    // A key the value read has under a near name (`extra.teem`, `extra['teem']`).
                    *meant = meant
                        .take()
                        .or_else(|| crate::templates::meant::attribute(&error, scope))
                        .or_else(|| crate::templates::meant::path(undefined.as_deref()?, scope));
                    // At the path, where the condition writes it.
                    if let Some(path) = undefined.as_deref()
                        && let Some(at) = text.find(path)
                    {
                        span = self
                            .within(value, text, at..at + path.len())
                            .unwrap_or(span);
                    }
                }
                Err(Diagnostic::new(problem, span))
            }
        }
    }

    /// Where in the condition an evaluation failed, when minijinja says (a `glob` or
    /// `matching` test given a pattern that does not parse): the part of the condition as the
    /// file writes it, found through its escapes. `None` keeps the whole condition.
    fn narrowed(&self, span: Span, text: &str, error: &minijinja::Error) -> Option<Span> {
        self.within(span, text, error.range()?)
    }

    /// `range` of the condition's text, as a span of the file it is written in.
    fn within(&self, span: Span, text: &str, range: std::ops::Range<usize>) -> Option<Span> {
        crate::span::within_value(&self.workspace.sources, span, text, range)
    }

    /// The first path the condition reads (in the order it is written) that the scope does
    /// not have, to the first part missing: `extra.team` where `extra` has no `team`.
    fn undefined_path(&self, text: &str, scope: &Value) -> Option<String> {
        let env = self.workspace.templates.env();
        let compiled;
        let expression = match self.parsed.get(text) {
            Some(Ok(parsed)) => &parsed.expression,
            _ => {
                compiled = env.compile_expression(text).ok()?;
                &compiled
            }
        };
        let mut paths: Vec<String> = expression.undeclared_variables(true).into_iter().collect();
        paths.sort_by_key(|path| (text.find(path.as_str()).unwrap_or(usize::MAX), path.clone()));
        paths.into_iter().find_map(|path| {
            let mut value = scope.clone();
            let mut walked = String::new();
            for part in path.split('.') {
                if !walked.is_empty() {
                    walked.push('.');
                }
                walked.push_str(part);
                value = value.get_attr(part).ok()?;
                if value.is_undefined() {
                    return Some(walked);
                }
            }
            None
        })
    }

    /// A result, once its fuel is taken from what the compile's conditions have left.
    fn spent(
        (holds, used): (bool, u64),
        fuel: &ConditionFuel,
        span: Span,
    ) -> Result<bool, Diagnostic> {
        if fuel.spend(used) {
            Ok(holds)
        } else {
            fuel.ran_out(span)
        }
    }

    fn problem(&self, error: &minijinja::Error) -> Problem {
        match error.kind() {
            minijinja::ErrorKind::OutOfFuel => Problem::ConditionsOutOfFuel {
                fuel: self.workspace_fuel(),
            },
            // The kind and its detail: the "(in <expression>:1)" of minijinja's own text
            // names no place the user knows; the span does.
            kind => Problem::ConditionFailed {
                message: match error.detail() {
                    Some(detail) => format!("{kind}: {detail}"),
                    None => kind.to_string(),
                },
                meant: crate::templates::meant::meant(self.workspace.templates.env(), error),
                known: crate::templates::meant::known(self.workspace.templates.env(), error),
                undefined: None,
            },
        }
    }
}

/// The text of every condition a compile may evaluate.
pub(crate) fn all_conditions(workspace: &Workspace) -> impl Iterator<Item = &str> {
    conditions_in(
        workspace.settings(),
        workspace.variants(),
        workspace.components(),
        workspace.tools(),
    )
}

/// The text of every condition of these specs: [`all_conditions`] of the workspace they make,
/// known before it is made.
pub(crate) fn conditions_in<'a>(
    manifest: &'a Manifest,
    variants: impl Iterator<Item = &'a Variant>,
    components: impl Iterator<Item = &'a Component>,
    tools: impl Iterator<Item = &'a ToolSpec>,
) -> impl Iterator<Item = &'a str> {
    let predicates = manifest.predicates.values().map(String::as_str);
    let shared = manifest.parameters.values();
    let components = components.filter_map(|component| component.when.as_deref());
    let tools = tools.flat_map(|tool| {
        let own = tool.when.as_deref().into_iter();
        let family_whens = tool.families.values().filter_map(|f| f.when.as_deref());
        let parameters = tool.parameter_lists().flat_map(|(_, list)| list);
        own.chain(family_whens)
            .chain(parameter_conditions(parameters))
    });
    let matches = variants.filter_map(|variant| variant.route_match.as_deref());
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
/// Whether an evaluated condition holds, with the fuel it used. A condition whose value is
/// undefined (`extra.strict_mod`, a key the context leaves unset, read bare or last in an
/// `and`) fails as reading it anywhere else in a condition does (`not extra.strict_mod`):
/// taken as false, a misspelt key left its section out of every prompt without a word.
fn truth((value, used): (Value, u64)) -> Result<(bool, u64), minijinja::Error> {
    if value.is_undefined() {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::UndefinedError,
            "the condition's value is undefined",
        ));
    }
    Ok((value.is_true(), used))
}
