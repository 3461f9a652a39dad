//! Conditions (`when`, predicates): they must compile, and read only names that exist.

use crate::diagnostic::Diagnostics;
use crate::entry::Entry;
use crate::model::Parameter;
use crate::namespace::{ENABLED_TOOLS, Namespace};
use crate::problem::Problem;
use crate::source::Sources;
use crate::span::Span;
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let mut before_tools = Namespace::new(workspace.manifest.predicates.keys().map(String::as_str));
    for entry in workspace.variants.values() {
        for name in entry.value.placeholders.keys() {
            before_tools.insert(name.clone());
        }
    }
    let mut after_tools = before_tools.clone();
    after_tools.insert(ENABLED_TOOLS);
    let checker = Checker {
        workspace,
        sources: &workspace.sources,
    };

    if let Some(manifest) = &workspace.manifest_entry {
        for (name, condition) in &manifest.value.predicates {
            checker.check(
                manifest,
                &format!("/predicates/{name}"),
                condition,
                &before_tools,
                out,
            );
        }
        for (name, parameter) in &manifest.value.parameters {
            checker.parameter(
                manifest,
                &format!("/parameters/{name}"),
                parameter,
                &after_tools,
                out,
            );
        }
    }
    for entry in workspace.components.values() {
        if let Some(condition) = &entry.value.when {
            checker.check(entry, "/when", condition, &after_tools, out);
        }
    }
    for entry in workspace.tools.values() {
        let tool = &entry.value;
        if let Some(condition) = &tool.when {
            checker.check(entry, "/when", condition, &before_tools, out);
        }
        for (index, parameter) in tool.parameters.iter().enumerate() {
            checker.parameter(
                entry,
                &format!("/parameters/{index}"),
                parameter,
                &after_tools,
                out,
            );
        }
        for (family, spec) in &tool.families {
            let prefix = format!("/families/{family}");
            if let Some(condition) = &spec.when {
                checker.check(
                    entry,
                    &format!("{prefix}/when"),
                    condition,
                    &before_tools,
                    out,
                );
            }
            for (index, parameter) in spec.parameters.iter().flatten().enumerate() {
                checker.parameter(
                    entry,
                    &format!("{prefix}/parameters/{index}"),
                    parameter,
                    &after_tools,
                    out,
                );
            }
        }
    }
}

struct Checker<'a> {
    workspace: &'a Workspace,
    sources: &'a Sources,
}

impl Checker<'_> {
    fn parameter<T>(
        &self,
        entry: &Entry<T>,
        pointer: &str,
        parameter: &Parameter,
        namespace: &Namespace,
        out: &mut Diagnostics,
    ) {
        if let Some(condition) = &parameter.when {
            self.check(entry, &format!("{pointer}/when"), condition, namespace, out);
        }
    }

    fn check<T>(
        &self,
        entry: &Entry<T>,
        pointer: &str,
        condition: &str,
        namespace: &Namespace,
        out: &mut Diagnostics,
    ) {
        let value_span = entry.value_span(pointer);
        let env = self.workspace.templates.env();
        let expression = match env.compile_expression_owned(condition.to_string()) {
            Ok(expression) => expression,
            Err(error) => {
                let span = error.range().map_or(value_span, |range| {
                    self.within(value_span, condition, range)
                });
                out.error(
                    Problem::ConditionSyntax {
                        message: error.detail().unwrap_or("invalid expression").to_string(),
                    },
                    span,
                );
                return;
            }
        };
        let mut paths: Vec<String> = expression.undeclared_variables(true).into_iter().collect();
        paths.sort();
        for path in paths {
            if let Err((unknown, suggestion)) = namespace.check_path(&path) {
                let first = unknown.split('.').next().unwrap_or(&unknown);
                let at = condition.find(first).unwrap_or(0);
                out.error(
                    Problem::UnknownContextField {
                        path: unknown.clone(),
                        suggestion,
                    },
                    self.within(value_span, condition, at..at + unknown.len()),
                );
            }
        }
    }

    /// A range of the condition's text as a span of the file, when the text stands there
    /// verbatim; the whole value otherwise.
    fn within(&self, value_span: Span, text: &str, range: std::ops::Range<usize>) -> Span {
        let file = self.sources.get(value_span.source);
        file.text
            .get(value_span.range())
            .and_then(|quoted| quoted.find(text))
            .map_or(value_span, |offset| {
                let start = value_span.start + offset;
                Span::new(value_span.source, start + range.start..start + range.end)
            })
    }
}
