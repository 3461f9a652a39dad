//! Renders templates and tool texts, turning failures into diagnostics.

use minijinja::Value;

use crate::compiled::{CompiledParameter, CompiledTool, SourceRange};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::child_pointer;
use crate::namespace::{TOOL, TOOLS_DATA, TOOLS_TEXT};
use crate::problem::Problem;
use crate::render::globals::Globals;
use crate::resolve::effective_variant::EffectiveVariant;
use crate::resolve::plan::{Plan, Reason};
use crate::resolve::template_choice::tool_format;
use crate::resolve::tool_spec::{SpecChoice, Text};
use crate::workspace::Workspace;

pub struct Renderer<'a> {
    pub workspace: &'a Workspace,
    pub diagnostics: &'a mut Diagnostics,
    /// The compile has no date: an undefined `CURRENT_DATE` is reported as such.
    pub no_date: bool,
}

impl Renderer<'_> {
    /// Renders a template; a failure becomes a diagnostic at the failing expression.
    pub fn render(&mut self, name: &str, globals: &Value) -> Option<String> {
        let templates = &self.workspace.templates;
        let result = templates
            .env()
            .get_template(name)
            .and_then(|template| template.render(globals.clone()));
        match result {
            Ok(text) => Some(text),
            Err(error) => {
                let span = templates
                    .error_span(&error)
                    .or_else(|| templates.span_of(name));
                let uses_date = templates
                    .variables(name)
                    .iter()
                    .any(|v| v == "CURRENT_DATE");
                let problem = if self.no_date
                    && uses_date
                    && error.kind() == minijinja::ErrorKind::UndefinedError
                {
                    Problem::NoDate
                } else {
                    Problem::RenderFailed {
                        message: match error.detail() {
                            Some(detail) => format!("{}: {detail}", error.kind()),
                            None => error.kind().to_string(),
                        },
                    }
                };
                if let Some(span) = span {
                    self.diagnostics.push(Diagnostic::new(problem, span));
                }
                None
            }
        }
    }

    fn text(&mut self, text: &Option<Text>, globals: &Value) -> String {
        let Some(text) = text else {
            return String::new();
        };
        self.workspace
            .templates
            .lookup(text.source, &text.pointer)
            .map(str::to_string)
            .and_then(|name| self.render(&name, globals))
            .unwrap_or_default()
    }

    /// Renders the enabled tools' texts, then documents each through the tool format into
    /// `TOOLS`.
    pub fn tools(
        &mut self,
        plan: &Plan,
        variant: &EffectiveVariant,
        globals: &mut Globals,
    ) -> Vec<CompiledTool> {
        let values = globals.scope();
        let mut compiled = Vec::new();
        for planned in plan.enabled_tools() {
            let tool = &planned.tool;
            let description = self.text(&Some(tool.description.clone()), &values);
            let parameters = planned
                .parameters
                .iter()
                .filter(|(_, reason)| *reason == Reason::Included)
                .map(|(parameter, _)| CompiledParameter {
                    name: parameter.name.clone(),
                    required: parameter.required,
                    kind: parameter.kind.name().to_string(),
                    instruction: self.text(&parameter.instruction, &values),
                    usage: self.text(&parameter.usage, &values),
                })
                .collect();
            let entry = &self.workspace.tools[tool.id.as_str()];
            let (spec, span) = match &tool.choice {
                SpecChoice::Family(f) => {
                    (f.clone(), entry.value_span(&child_pointer("/families", f)))
                }
                SpecChoice::Generic => ("generic".into(), entry.value_span("")),
            };
            compiled.push(CompiledTool {
                id: tool.id.clone(),
                name: tool.name.clone(),
                spec,
                source: SourceRange::of(span, &self.workspace.sources),
                description,
                parameters,
            });
        }
        let format = tool_format(self.workspace, variant);
        let mut documented = Vec::with_capacity(compiled.len());
        for tool in &compiled {
            let scope = globals.scope_with(TOOL, Value::from(minijinja::value::Serde(tool)));
            if let Some(text) = self.render(format, &scope) {
                documented.push(text.trim_end().to_string());
            }
        }
        globals.insert_fact(TOOLS_DATA, Value::from(minijinja::value::Serde(&compiled)));
        globals.insert_fact(TOOLS_TEXT, Value::from(documented.join("\n\n")));
        compiled
    }
}
