//! One compile: a family (or variant) and a context in, the prompt and its parts out.

use indexmap::IndexMap;
use minijinja::Value;
use serde::Serialize;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::emit::postprocess::postprocess;
use crate::model::{Context, ModelConfig, PostprocessRule};
use crate::namespace::{TOOL, TOOLS_DATA, TOOLS_TEXT};
use crate::problem::Problem;
use crate::render::globals::Globals;
use crate::resolve::effective_variant::{EffectiveVariant, effective};
use crate::resolve::plan::{Plan, Reason, plan};
use crate::resolve::template_choice::{base_template, component_template, tool_format};
use crate::resolve::tool_spec::Text;
use crate::workspace::Workspace;

/// Which variant to compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// The manifest's fallback family.
    Default,
    Family(String),
    Variant(String),
}

#[derive(Clone, Debug)]
pub struct Request {
    pub selection: Selection,
    pub context: Context,
    /// `--set KEY=VALUE` pairs: runtime placeholders that win over everything.
    pub set: IndexMap<String, String>,
    /// SOURCE_DATE_EPOCH, used when the context has no date.
    pub source_date_epoch: Option<i64>,
}

impl Request {
    pub fn new(selection: Selection, context: Context) -> Self {
        Self {
            selection,
            context,
            set: IndexMap::new(),
            source_date_epoch: None,
        }
    }
}

/// Why a compile produced no prompt.
#[derive(Debug)]
pub enum CompileError {
    /// The selection names no variant (a usage problem: nothing in the files is wrong).
    Selection(Problem),
    /// Rendering failed; the diagnostics point into the workspace's files.
    Diagnostics(Diagnostics),
}

#[derive(Clone, Debug, Serialize)]
pub struct Compiled {
    pub family: String,
    pub variant: String,
    pub version: Option<String>,
    /// The final prompt, post-processed.
    pub prompt: String,
    pub sections: Vec<Section>,
    pub tools: Vec<CompiledTool>,
    pub model: ModelConfig,
}

#[derive(Clone, Debug, Serialize)]
pub struct Section {
    pub id: String,
    pub slot: String,
    /// Whether the section is in the prompt, and why not.
    pub included: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The template file (or `file#field` for inline templates) it was rendered from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    pub text: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct CompiledTool {
    pub id: String,
    pub name: String,
    /// `generic`, or the family whose spec was used.
    pub spec: String,
    pub description: String,
    pub parameters: Vec<CompiledParameter>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CompiledParameter {
    pub name: String,
    pub required: bool,
    #[serde(rename = "type")]
    pub kind: String,
    pub instruction: String,
    pub usage: String,
}

impl Workspace {
    /// The variant a selection names, after inheritance.
    pub fn select(&self, selection: &Selection) -> Result<EffectiveVariant, Problem> {
        let family = match selection {
            Selection::Variant(id) => {
                return effective(&self.variants, id).ok_or_else(|| Problem::Unknown {
                    kind: crate::problem::RefKind::Variant,
                    name: id.clone(),
                    suggestion: crate::namespace::closest(id, self.variants.keys()),
                });
            }
            Selection::Family(family) => family.as_str(),
            Selection::Default => self.manifest.fallback_family.as_str(),
        };
        let mut matching = self
            .variants
            .values()
            .filter(|entry| entry.value.family.as_ref().unwrap_or(&entry.value.id) == family);
        let first = matching.next().ok_or_else(|| Problem::NoVariant {
            family: family.to_string(),
        })?;
        if matching.next().is_some() {
            return Err(Problem::DuplicateFamily {
                family: family.to_string(),
            });
        }
        effective(&self.variants, &first.value.id).ok_or_else(|| Problem::NoVariant {
            family: family.to_string(),
        })
    }

    pub fn compile(&self, request: &Request) -> Result<Compiled, CompileError> {
        let mut diagnostics = Diagnostics::default();
        let variant = self
            .select(&request.selection)
            .map_err(CompileError::Selection)?;
        let date = request
            .context
            .date
            .clone()
            .or_else(|| request.source_date_epoch.map(date_from_epoch));
        let mut globals = Globals::new(&variant, &request.context, date.as_deref(), &request.set);
        self.insert_predicates(&mut globals, &mut diagnostics);

        let plan = plan(self, &variant, &mut globals, &mut diagnostics);
        let mut renderer = Renderer {
            workspace: self,
            diagnostics: &mut diagnostics,
            no_date: date.is_none(),
        };
        let tools = renderer.tools(&plan, &variant, &mut globals);

        // Every slot resolves: "" until its component renders.
        for entry in self.components.values() {
            globals.insert_section(&entry.value.slot(), "");
        }
        let scope = globals.scope();
        let mut sections = Vec::with_capacity(plan.components.len());
        for planned in &plan.components {
            let Some(entry) = self.components.get(&planned.id) else {
                continue;
            };
            let slot = entry.value.slot();
            let template = component_template(self, &variant, &planned.id).map(|(n, _)| n);
            let text = match (&planned.reason, template) {
                (Reason::Included, Some(template)) => renderer
                    .render(template, &scope)
                    .filter(|text| !text.trim().is_empty())
                    .unwrap_or_default(),
                _ => String::new(),
            };
            globals.insert_section(&slot, &text);
            sections.push(Section {
                id: planned.id.clone(),
                slot,
                included: planned.reason == Reason::Included,
                reason: describe(&planned.reason),
                template: template.map(str::to_string),
                text,
            });
        }

        let rendered = base_template(self, &variant)
            .and_then(|base| renderer.render(base, &scope))
            .unwrap_or_default();
        if diagnostics.has_errors() {
            return Err(CompileError::Diagnostics(diagnostics));
        }
        let default_rules;
        let rules = match &self.manifest.postprocess {
            Some(rules) => rules,
            None => {
                default_rules = PostprocessRule::default_set();
                &default_rules
            }
        };
        Ok(Compiled {
            family: variant.family().to_string(),
            variant: variant.id().to_string(),
            version: variant.variant.version.clone(),
            prompt: postprocess(&rendered, rules),
            sections,
            tools,
            model: variant.variant.model.clone(),
        })
    }

    /// Predicates, in declaration order; each sees the ones before it.
    fn insert_predicates(&self, globals: &mut Globals, diagnostics: &mut Diagnostics) {
        let Some(manifest) = &self.manifest_entry else {
            return;
        };
        for (name, condition) in &manifest.value.predicates {
            let span = manifest.value_span(&format!("/predicates/{name}"));
            let value = crate::resolve::plan::evaluate(self, condition, &globals.scope(), span)
                .unwrap_or_else(|diagnostic| {
                    diagnostics.push(diagnostic);
                    false
                });
            globals.insert_predicate(name, value);
        }
    }
}

struct Renderer<'a> {
    workspace: &'a Workspace,
    diagnostics: &'a mut Diagnostics,
    no_date: bool,
}

impl Renderer<'_> {
    /// Renders a template; a failure becomes a diagnostic at the failing expression.
    fn render(&mut self, name: &str, globals: &Value) -> Option<String> {
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
    fn tools(
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
            compiled.push(CompiledTool {
                id: tool.id.clone(),
                name: tool.name.clone(),
                spec: match &tool.choice {
                    crate::resolve::tool_spec::SpecChoice::Family(f) => f.clone(),
                    crate::resolve::tool_spec::SpecChoice::Generic => "generic".into(),
                },
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

fn describe(reason: &Reason) -> Option<String> {
    match reason {
        Reason::Included => None,
        Reason::DisabledByOverride => Some("disabled by an override".into()),
        Reason::ConditionFalse { condition } => Some(format!("condition `{condition}` is false")),
        Reason::MissingDependency { tools } => {
            Some(format!("needs tools not enabled: {}", tools.join(", ")))
        }
    }
}

/// `YYYY-MM-DD` of a Unix timestamp (UTC), for SOURCE_DATE_EPOCH.
pub fn date_from_epoch(seconds: i64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let days = seconds.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_dates() {
        assert_eq!(date_from_epoch(0), "1970-01-01");
        assert_eq!(date_from_epoch(951_782_400), "2000-02-29");
        assert_eq!(date_from_epoch(1_793_491_200), "2026-11-01");
    }
}
