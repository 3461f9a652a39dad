//! One compile: a family (or variant) and a context in, the prompt and its parts out.

use crate::diagnostic::Diagnostics;
use crate::emit::postprocess::postprocess;
use crate::load::document::child_pointer;
use crate::model::PostprocessRule;
use crate::problem::Problem;
use crate::render::budget::{Budget, Exhausted};
use crate::render::globals::Globals;
use crate::render::limits::DEFAULT_FUEL;
use crate::render::renderer::Renderer;
use crate::resolve::effective_variant::{EffectiveVariant, effective};
use crate::resolve::plan::{Reason, plan};
use crate::resolve::template_choice::{base_template, component_template, tool_format};
use crate::workspace::Workspace;

pub use crate::compiled::{
    CompileError, Compiled, CompiledParameter, CompiledTool, Section, SourceRange,
};
pub use crate::request::{Request, Selection};
pub use crate::resolve::date::date_from_epoch;

/// A compile up to rendering: the variant, the scope, and the plan.
pub(crate) struct Prepared {
    pub variant: EffectiveVariant,
    pub globals: Globals,
    pub plan: crate::resolve::plan::Plan,
    pub date: Option<String>,
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

    /// Selects the variant, fills the scope and decides what the prompt contains; shared by
    /// `compile` and `explain`.
    pub(crate) fn prepare(
        &self,
        request: &Request,
        diagnostics: &mut Diagnostics,
    ) -> Result<Prepared, CompileError> {
        let variant = self
            .select(&request.selection)
            .map_err(CompileError::Selection)?;
        let date = request
            .context
            .date
            .clone()
            .or_else(|| request.source_date_epoch.map(date_from_epoch));
        let mut globals = Globals::new(&variant, &request.context, date.as_deref(), &request.set);
        self.insert_predicates(&mut globals, diagnostics);
        let plan = plan(self, &variant, &mut globals, diagnostics);
        Ok(Prepared {
            variant,
            globals,
            plan,
            date,
        })
    }

    pub fn compile(&self, request: &Request) -> Result<Compiled, CompileError> {
        self.compile_in(request, &Exhausted::default())
    }

    /// A compile within a longer run: templates that ran out of fuel earlier in the run
    /// (`exhausted`) are not rendered again.
    pub(crate) fn compile_in(
        &self,
        request: &Request,
        exhausted: &Exhausted,
    ) -> Result<Compiled, CompileError> {
        let mut diagnostics = Diagnostics::default();
        let Prepared {
            variant,
            mut globals,
            plan,
            date,
        } = self.prepare(request, &mut diagnostics)?;
        let mut renderer = Renderer {
            workspace: self,
            diagnostics: &mut diagnostics,
            no_date: date.is_none(),
            budget: Budget::new(
                self.templates.env().fuel().unwrap_or(DEFAULT_FUEL),
                self.manifest.limits.render_bytes,
                self.manifest.limits.compile_bytes,
            ),
            exhausted,
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
                source: template
                    .and_then(|name| self.templates.extent(name))
                    .map(|span| SourceRange::of(span, &self.sources)),
                text,
            });
        }

        let base = base_template(self, &variant);
        let rendered = base
            .and_then(|base| renderer.render(base, &scope))
            .unwrap_or_default();
        let inputs = self.inputs(&variant, &plan, base, &sections);
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
            inputs,
        })
    }

    /// The files a compile read: manifest, variant chain, templates, components and tools.
    fn inputs(
        &self,
        variant: &EffectiveVariant,
        plan: &crate::resolve::plan::Plan,
        base: Option<&str>,
        sections: &[Section],
    ) -> Vec<String> {
        let mut sources = Vec::new();
        sources.extend(self.manifest_entry.as_ref().map(|m| m.source()));
        sources.extend(
            variant
                .chain
                .iter()
                .filter_map(|id| self.variants.get(id))
                .map(|e| e.source()),
        );
        let templates = base
            .into_iter()
            .chain(std::iter::once(tool_format(self, variant)))
            .chain(sections.iter().filter_map(|s| s.template.as_deref()));
        sources.extend(
            templates
                .filter_map(|name| self.templates.extent(name))
                .map(|s| s.source),
        );
        sources.extend(
            plan.components
                .iter()
                .filter_map(|c| self.components.get(&c.id))
                .map(|e| e.source()),
        );
        sources.extend(
            plan.tools
                .iter()
                .filter_map(|t| self.tools.get(&t.tool.id))
                .map(|e| e.source()),
        );
        let mut paths: Vec<String> = sources
            .into_iter()
            .map(|source| self.sources.get(source).path.to_string_lossy().into_owned())
            .filter(|path| !path.starts_with("<built-in>"))
            .collect();
        paths.sort();
        paths.dedup();
        paths
    }

    /// Predicates, in declaration order; each sees the ones before it.
    fn insert_predicates(&self, globals: &mut Globals, diagnostics: &mut Diagnostics) {
        let Some(manifest) = &self.manifest_entry else {
            return;
        };
        for (name, condition) in &manifest.value.predicates {
            let span = manifest.value_span(&child_pointer("/predicates", name));
            let value = crate::resolve::plan::evaluate(self, condition, &globals.scope(), span)
                .unwrap_or_else(|diagnostic| {
                    diagnostics.push(diagnostic);
                    false
                });
            globals.insert_predicate(name, value);
        }
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
