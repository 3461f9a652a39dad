//! One compile: a family (or variant) and a context in, the prompt and its parts out. A
//! [`Compiler`] holds what every compile of a workspace shares, built once: the variants
//! after inheritance, the parsed conditions and the post-processing rules.

use std::collections::BTreeMap;
use std::sync::Arc;

use indexmap::IndexMap;
use minijinja::Value;

use crate::bounded_memo::BoundedMemo;
use crate::compiled::{CompileError, Compiled, Section};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::model::StandardPlaceholder;
use crate::model::limits::DEFAULT_FUEL;
use crate::namespace::{FAMILY, VARIANT};
use crate::pointer::child_pointer;
use crate::problem::Problem;
use crate::render::budget::{Budget, Exhausted};
use crate::render::memo::RenderMemo;
use crate::render::renderer::{Renderer, Text};
use crate::resolve::conditions::{ConditionFuel, Conditions};
use crate::resolve::plan::{Outline, Outlines};
use crate::resolve::plan::{Plan, Reason, plan};
use crate::resolve::scope::{Scope, SlotReads, context_layer};
use crate::span::Span;
use crate::templates::written::write_bytes;
use crate::workspace::Workspace;
use crate::workspace::inheritance::{EffectiveVariant, effective};
pub(crate) use definitions::place;
use postprocess::{Postprocessor, Stopped};

mod definitions;
pub mod explain;
mod guarded;
mod listing;
mod postprocess;
mod request;
mod route;
mod set_names;
pub(crate) mod set_values;

pub use listing::{FamilyListing, FamilyRouting, VariantListing};
pub use request::{Request, SelectBy, Selection, SetFrom};
pub use route::{Choice, Route, RouteRule};
pub use set_names::UnreadSetNames;

/// Compiles requests against one workspace.
pub struct Compiler<'w> {
    workspace: &'w Workspace,
    /// Every variant after inheritance, by id; a variant whose chain has no base template
    /// that compiles is absent (reported by validation).
    variants: IndexMap<String, EffectiveVariant>,
    /// Each family's variants (ids) in the catalog's order, ancestors first: a selection
    /// builds the catalog of its family alone (see `route::family_catalog`), where building
    /// the whole one for every compile made 3,000 variants × 10 contexts a quarter of a
    /// billion steps.
    family_ids: std::collections::HashMap<String, Vec<String>>,
    conditions: Conditions<'w>,
    postprocessor: Postprocessor,
    /// Templates that ran out of fuel or text in an earlier compile: not rendered again.
    exhausted: Exhausted,
    /// Renders remembered by the values they read, for the compiles that follow.
    memo: RenderMemo,
    /// What each variant's plans share, made once.
    outlines: Outlines,
    /// Where each of the manifest's predicates is written, in their order: found once, though
    /// only a predicate that fails needs it.
    predicate_spans: Vec<Span>,
    /// Scopes and plans made before, by what they were made of (see [`Compiler::prepare`]).
    prepared: BoundedMemo<Box<[u8]>, Arc<Planned>>,
    /// The manifest's predicates, in their order, by the request they were found for (its
    /// context written out, date and `--set` values), when none of them reads what the
    /// variant gives the scope: every variant of a matrix is compiled for the same contexts.
    context_predicates: BoundedMemo<Box<[u8]>, FoundPredicates>,
    /// The context's layer of the scope (its values as template values, and the date), by
    /// the request it was made for: every variant of a matrix is compiled for the same
    /// contexts, and making a context's values into template values is most of a scope's
    /// making.
    context_layers: BoundedMemo<Box<[u8]>, Arc<BTreeMap<String, Value>>>,
    /// Routes found before, by the context written out (see [`Compiler::route`]).
    routes: BoundedMemo<Box<[u8]>, Route>,
    /// Every component's slot, as "": what a slot reads before its section renders.
    empty_sections: Arc<BTreeMap<String, Value>>,
    /// Tool definitions made before, by the dialect asked for, the tools and the context
    /// (see [`Compiler::tool_definitions`]).
    definitions: BoundedMemo<Box<[u8]>, Arc<definitions::Made>>,
    /// The same, by the dialect, the tools and the context's MCP servers: what they are
    /// made of, for a context not seen before.
    definitions_by_servers: BoundedMemo<Box<[u8]>, Arc<definitions::Made>>,
}

/// The predicates' values for a request, and the fuel evaluating them used (which a compile
/// that takes them from memory spends again).
type FoundPredicates = (Arc<[bool]>, u64);

/// What `prepare` made of a variant and a request, for the next request like it: the scope
/// before any section renders, and the plan.
struct Planned {
    scope: Scope,
    plan: Arc<Plan>,
}

/// What the scopes and plans remembered may hold, and the routes and the tool definitions
/// apart, each counted by its key and what it holds.
const MAX_REMEMBERED_BYTES: usize = 8 * 1024 * 1024;

/// What a remembered scope is counted, per byte of its key (the context written out as JSON):
/// as template values, a context takes several times the bytes of its JSON (each entry of a
/// map is two values and a node of the map), and the scope holds the context's MCP servers
/// twice (all of them, and the connected ones).
const SCOPE_PER_KEY_BYTE: usize = 4;

/// A compile up to rendering: the variant, the scope, and the plan.
pub(crate) struct Prepared<'c> {
    pub variant: &'c EffectiveVariant,
    pub outline: Arc<Outline>,
    pub scope: Scope,
    pub plan: Arc<Plan>,
    pub date: Option<String>,
    /// The request's context written out as JSON, as the keys of what a compile remembers
    /// use it (`None` for a context that cannot be written out).
    pub context_json: Option<Vec<u8>>,
}

impl<'w> Compiler<'w> {
    pub fn new(workspace: &'w Workspace) -> Self {
        let variants: IndexMap<String, EffectiveVariant> = workspace
            .variants
            .keys()
            .filter_map(|id| Some((id.clone(), effective(&workspace.variants, id)?)))
            .collect();
        let family_ids = route::family_ids(&variants);
        Self {
            workspace,
            variants,
            family_ids,
            conditions: Conditions::new(workspace),
            postprocessor: Postprocessor::new(workspace.settings().postprocess.as_deref()),
            exhausted: Exhausted::default(),
            memo: RenderMemo::new(&workspace.templates),
            outlines: Outlines::default(),
            predicate_spans: workspace
                .manifest
                .value
                .predicates
                .keys()
                .map(|name| {
                    workspace
                        .manifest
                        .value_span(&child_pointer("/predicates", name))
                })
                .collect(),
            prepared: BoundedMemo::new(MAX_REMEMBERED_BYTES),
            context_predicates: BoundedMemo::new(MAX_REMEMBERED_BYTES),
            context_layers: BoundedMemo::new(MAX_REMEMBERED_BYTES),
            routes: BoundedMemo::new(MAX_REMEMBERED_BYTES),
            definitions: BoundedMemo::new(MAX_REMEMBERED_BYTES),
            definitions_by_servers: BoundedMemo::new(MAX_REMEMBERED_BYTES),
            empty_sections: Arc::new(
                workspace
                    .components
                    .values()
                    .map(|entry| (entry.value.slot(), Value::from("")))
                    .collect(),
            ),
        }
    }

    pub fn workspace(&self) -> &'w Workspace {
        self.workspace
    }

    pub(crate) fn conditions(&self) -> &Conditions<'w> {
        &self.conditions
    }

    /// Selects the variant, fills the scope and decides what the prompt contains; shared by
    /// `compile` and `explain`.
    pub(crate) fn prepare(
        &self,
        request: &Request,
        diagnostics: &mut Diagnostics,
    ) -> Result<Prepared<'_>, CompileError> {
        if !self.workspace.is_valid() {
            return Err(CompileError::InvalidWorkspace);
        }
        // Written out once: the key of the route (when the request routes) and of the scope.
        let written = serde_json::to_vec(&request.context).ok();
        let (variant, _) =
            self.select_written(&request.selection, &request.context, written.as_deref())?;
        let date = request
            .context
            .date
            .clone()
            .or_else(|| request.source_date_epoch.date());
        let outline = self.outlines.get(self.workspace, variant);
        // The scope and the plan are a function of the variant and of the request's context,
        // date and `--set` values: an agent compiles for the same context request after
        // request, and that context's values (its MCP servers' tools and schemas) cost more to
        // make into template values and to test conditions on than to write out as a key.
        // One buffer: the request's key, then the variant's id (see [`request_key`]).
        let (key, request_bytes) = match written.as_deref() {
            Some(written) => {
                let mut key = request_key(request, date.as_deref(), written);
                let request_bytes = key.len();
                write_bytes(variant.id().as_bytes(), &mut key);
                (Some(key.into_boxed_slice()), request_bytes)
            }
            None => (None, 0),
        };
        let request_key = key.as_deref().and_then(|key| key.get(..request_bytes));
        if let Some(planned) = key.as_ref().and_then(|key| self.prepared.get(key)) {
            return Ok(Prepared {
                variant,
                outline,
                scope: planned.scope.fresh(),
                plan: planned.plan.clone(),
                date,
                context_json: written,
            });
        }
        let set = set_values::typed(self.workspace, variant, &request.context, &request.set)?;
        let mut scope = Scope::on_context_layer(
            variant,
            self.context_layer(request, date.as_deref(), request_key),
            &request.context,
            date.as_deref(),
            &set,
        );
        let problems = diagnostics.len();
        let fuel = self.conditions.fuel();
        self.insert_variant_predicates(&mut scope, variant, request_key, &fuel, diagnostics);
        let plan = Arc::new(plan(
            (&self.conditions, &fuel),
            &outline,
            &mut scope,
            diagnostics,
        ));
        // A preparation that reported a problem is made again, and reports it again.
        if let Some(key) = key
            && diagnostics.len() == problems
        {
            let bytes = SCOPE_PER_KEY_BYTE * key.len() + plan.held_bytes();
            let planned = Planned {
                scope: scope.fresh(),
                plan: plan.clone(),
            };
            self.prepared.insert(key, Arc::new(planned), bytes);
        }
        Ok(Prepared {
            variant,
            outline,
            scope,
            plan,
            date,
            context_json: written,
        })
    }

    /// The prompt and tools of one request. It stands alone: a template that ran out of fuel
    /// or text in an earlier compile is rendered again, since what it renders may come from
    /// the context (MCP servers, rules), and one request's huge data must not fail the next
    /// request's compile of the same variant.
    pub fn compile(&self, request: &Request) -> Result<Compiled, CompileError> {
        self.compile_isolated(request).0
    }

    /// A compile of a build matrix run in order: a template that ran out alone in an earlier
    /// compile of the run fails this one at once, rather than spending the fuel again (see
    /// `emit::matrix`).
    pub(crate) fn compile_in_run(&self, request: &Request) -> Result<Compiled, CompileError> {
        self.compile_with(request, &self.exhausted)
    }

    /// A compile that neither learns from nor teaches the others of the run which templates
    /// ran out of fuel, and whether one did here: a matrix compiled on several threads stays
    /// the same as one compiled in order (see `emit::matrix`).
    pub(crate) fn compile_isolated(
        &self,
        request: &Request,
    ) -> (Result<Compiled, CompileError>, bool) {
        let own = Exhausted::default();
        let result = self.compile_with(request, &own);
        (result, !own.is_empty())
    }

    fn compile_with(
        &self,
        request: &Request,
        exhausted: &Exhausted,
    ) -> Result<Compiled, CompileError> {
        let workspace = self.workspace;
        let mut diagnostics = Diagnostics::default();
        if let Some(spent_ms) = crate::deadline::passed() {
            diagnostics.push(Diagnostic::new(
                Problem::ProcessorTimeSpent {
                    spent_ms,
                    stopped: crate::problem::StoppedWork::Compiles,
                },
                Span::file_start(workspace.manifest.source()),
            ));
            return Err(CompileError::Diagnostics(diagnostics));
        }
        let Prepared {
            variant,
            outline,
            mut scope,
            plan,
            date,
            context_json,
        } = self.prepare(request, &mut diagnostics)?;
        let limits = &workspace.settings().limits;
        let mut renderer = Renderer {
            workspace,
            diagnostics: &mut diagnostics,
            no_date: date.is_none().then_some(request.source_date_epoch),
            budget: Budget::new(
                workspace.templates.env().fuel().unwrap_or(DEFAULT_FUEL),
                limits.render_bytes,
                limits.compile_bytes,
            ),
            exhausted,
            memo: &self.memo,
            slot_reads: None,
        };
        // Every slot resolves: "" until its component renders; the tools' texts, rendered
        // before every section, read "" (validation warns of it).
        scope.fill_sections_from(&self.empty_sections);
        let tools = renderer.tools(&plan, variant, &mut scope);

        let slot_reads = std::sync::Arc::new(SlotReads::default());
        scope.note_slot_reads(&slot_reads);
        renderer.slot_reads = Some(std::sync::Arc::clone(&slot_reads));
        let values = scope.values();
        let mut sections = Vec::with_capacity(plan.components.len());
        // The slots each section's render read, by the section's place.
        let mut read_by_section = Vec::with_capacity(plan.components.len());
        for planned in &plan.components {
            let included = planned.reason == Reason::Included;
            // A section left out is ""; one whose render failed was reported, and the compile
            // fails.
            let rendered = included
                .then(|| renderer.render_text(planned.template, &values))
                .flatten()
                .filter(|text| !text.as_str().trim().is_empty());
            read_by_section.push(slot_reads.take());
            let text = match rendered {
                // One copy: the scope's value shares the memo's text, or the section keeps
                // the text rendered.
                Some(Text::Shared(text)) => {
                    scope.insert_section(&planned.slot, Value::from(Arc::clone(&text)));
                    text.to_string()
                }
                Some(Text::Owned(text)) => {
                    scope.insert_section(&planned.slot, text.as_str());
                    text
                }
                None => {
                    scope.insert_section(&planned.slot, "");
                    String::new()
                }
            };
            sections.push(Section {
                id: planned.id.clone(),
                slot: planned.slot.clone(),
                included,
                reason: (!included).then(|| planned.reason.to_string()),
                template: Some(planned.template_name.clone()),
                source: planned.source.clone(),
                text,
            });
        }

        let rendered = renderer.render(variant.base, &values);
        if !outline.writes_every_slot() {
            leave_out_unread(&mut sections, &read_by_section, slot_reads.take());
        }
        // A section in the prompt that rendered nothing says so: its template skipped all
        // it holds in this context.
        for section in &mut sections {
            if section.included && section.reason.is_none() && section.text.trim().is_empty() {
                section.reason = Some(crate::resolve::plan::RENDERED_NOTHING.to_string());
            }
        }
        // What the templates left of the fuel is what the clean-up rules may spend.
        let (fuel, fuel_left) = (renderer.budget.fuel, renderer.budget.fuel_left);
        let bytes_left = renderer.budget.bytes_left;
        let inputs = outline.inputs().to_vec();
        let Some(rendered) = rendered.filter(|_| !diagnostics.has_errors()) else {
            return Err(CompileError::Diagnostics(diagnostics));
        };
        let prompt = match self
            .postprocessor
            .apply(&rendered, limits.compile_bytes, fuel_left)
        {
            Ok(prompt) => prompt,
            Err(stopped) => {
                let (rule, problem) = match stopped {
                    Stopped::Overgrown { rule } => (
                        rule,
                        Problem::PostprocessGrows {
                            limit: limits.compile_bytes,
                        },
                    ),
                    Stopped::OutOfFuel {
                        rule,
                        per_kib,
                        groups,
                    } => (
                        rule,
                        Problem::PostprocessOutOfFuel {
                            fuel,
                            per_kib,
                            groups,
                        },
                    ),
                    Stopped::PassOutOfFuel { rule } => (
                        rule,
                        Problem::PostprocessPassOutOfFuel {
                            fuel,
                            free: postprocess::FREE_PASSES,
                        },
                    ),
                    Stopped::TimeSpent { rule, spent_ms } => (
                        rule,
                        Problem::ProcessorTimeSpent {
                            spent_ms,
                            stopped: crate::problem::StoppedWork::Postprocess,
                        },
                    ),
                };
                let span = workspace.manifest.key_span(&format!("/postprocess/{rule}"));
                diagnostics.push(Diagnostic::new(problem, span));
                return Err(CompileError::Diagnostics(diagnostics));
            }
        };
        Ok(Compiled {
            family: variant.family().to_string(),
            variant: variant.id().to_string(),
            version: variant.variant.version.clone(),
            prompt,
            sections,
            tools,
            model: variant.variant.model.clone(),
            inputs,
            dialect: None,
            tool_definitions: None,
        })
        .and_then(|mut compiled| {
            // The MCP tools' schemas the definitions copy count toward the compile's bytes,
            // checked before the definitions are made.
            if variant.variant.native_tools == Some(true)
                && let Some(finding) = definitions::mcp_tools_within(
                    &request.context,
                    bytes_left,
                    limits.compile_bytes,
                )
            {
                let mut errors = Diagnostics::default();
                errors.push(place(workspace, &finding, &request.mcp_places));
                return Err(CompileError::Diagnostics(errors));
            }
            if let Some(made) =
                self.tool_definitions(request, variant, &compiled.tools, context_json.as_deref())?
            {
                let (dialect, definitions, findings) = &*made;
                let mut errors = Diagnostics::default();
                for finding in findings {
                    let diagnostic = place(workspace, finding, &request.mcp_places);
                    if diagnostic.severity() == crate::problem::Severity::Error {
                        errors.push(diagnostic);
                    }
                }
                if !errors.is_empty() {
                    return Err(CompileError::Diagnostics(errors));
                }
                compiled.dialect = Some(dialect.name());
                // The compile's own copy: its caller may keep or change it.
                compiled.tool_definitions = Some(definitions.clone());
            }
            Ok(compiled)
        })
    }

    /// The context's layer of a scope (see [`Compiler::context_layers`]): made once per
    /// request, and copied for each variant (a copy shares its values).
    fn context_layer(
        &self,
        request: &Request,
        date: Option<&str>,
        request_key: Option<&[u8]>,
    ) -> BTreeMap<String, Value> {
        if let Some(layer) = request_key.and_then(|key| self.context_layers.get(key)) {
            return BTreeMap::clone(&layer);
        }
        let declared = &self.workspace.settings().context_fields;
        let layer = context_layer(&request.context, declared, date);
        if let Some(key) = request_key {
            let bytes = SCOPE_PER_KEY_BYTE * key.len();
            self.context_layers
                .insert(key.into(), Arc::new(layer.clone()), bytes);
        }
        layer
    }

    /// The predicates of a variant's scope (see [`Compiler::insert_predicates`]), found once
    /// per request (see [`Compiler::context_predicates`]) when none reads what the variant
    /// gives.
    fn insert_variant_predicates(
        &self,
        scope: &mut Scope,
        variant: &EffectiveVariant,
        request_key: Option<&[u8]>,
        fuel: &ConditionFuel,
        diagnostics: &mut Diagnostics,
    ) {
        let shared = request_key.filter(|_| !self.predicates_read_the_variant(variant));
        if let Some((found, used)) = shared.and_then(|key| self.context_predicates.get(key)) {
            let names = self.workspace.manifest.value.predicates.keys();
            for (name, &value) in names.zip(found.iter()) {
                scope.insert_predicate(name, value);
            }
            fuel.spend_remembered(used);
            return;
        }
        let problems = diagnostics.len();
        let found = self.insert_predicates(scope, fuel, diagnostics);
        // A predicate that failed is evaluated again, and reported again.
        if let Some(key) = shared
            && diagnostics.len() == problems
        {
            let bytes = key.len() + found.len() + 32;
            // The predicates come first, so what they used is all that was used yet.
            self.context_predicates
                .insert(key.into(), (found.into(), fuel.used()), bytes);
        }
    }

    /// Predicates, in declaration order; each sees the ones before it. Their values, in that
    /// order.
    fn insert_predicates(
        &self,
        scope: &mut Scope,
        fuel: &ConditionFuel,
        diagnostics: &mut Diagnostics,
    ) -> Vec<bool> {
        let manifest = &self.workspace.manifest;
        let mut found = Vec::with_capacity(manifest.value.predicates.len());
        for ((name, condition), &span) in
            manifest.value.predicates.iter().zip(&self.predicate_spans)
        {
            let value = self
                .conditions
                .evaluate(condition, &scope.values(), span, fuel)
                .unwrap_or_else(|diagnostic| {
                    diagnostics.push(diagnostic);
                    false
                });
            scope.insert_predicate(name, value);
            found.push(value);
        }
        found
    }

    /// Whether a predicate reads a name whose value the variant gives (its family, its
    /// description, its placeholders, the standard placeholders), directly or through a
    /// predicate before it, or reads what cannot be told.
    fn predicates_read_the_variant(&self, variant: &EffectiveVariant) -> bool {
        let given = |name: &str| {
            name == FAMILY
                || name == VARIANT
                || variant.variant.placeholders.contains_key(name)
                || StandardPlaceholder::ALL
                    .iter()
                    .any(|placeholder| placeholder.name() == name)
        };
        let mut reading: Vec<&str> = Vec::new();
        for (name, condition) in &self.workspace.manifest.value.predicates {
            let reads_variant = self.conditions.reads(condition).is_none_or(|reads| {
                reads
                    .iter()
                    .any(|read| given(read) || reading.contains(&read.as_str()))
            });
            if reads_variant {
                reading.push(name);
            }
        }
        !reading.is_empty()
    }
}

/// Leaves out of the compile's sections those whose slot no render of the prompt read:
/// the base template's render, or that of a section it reaches so (`read_by_section`, by
/// place; `by_base`, the base's). A section so left out rendered, but a condition of the
/// templates that read it skipped it in this context; counted as in the prompt, it made
/// `stats` and `build --format json` count text the prompt does not hold.
fn leave_out_unread(
    sections: &mut [Section],
    read_by_section: &[Vec<String>],
    by_base: Vec<String>,
) {
    let mut placed = vec![false; sections.len()];
    let mut slots = by_base;
    while let Some(slot) = slots.pop() {
        let Some(index) = sections
            .iter()
            .position(|section| section.slot == slot && section.included)
        else {
            continue;
        };
        if !placed[index] {
            placed[index] = true;
            slots.extend(read_by_section.get(index).into_iter().flatten().cloned());
        }
    }
    for (section, placed) in sections.iter_mut().zip(placed) {
        if section.included && !section.text.is_empty() && !placed {
            section.included = false;
            section.reason = Some(Reason::SlotSkipped.to_string());
            section.text.clear();
        }
    }
}

/// What a request's predicates are made of, written out: the date, the `--set` values and
/// the whole context (`context`, written out as JSON, which writes every field but `extends`,
/// which a context has already been resolved from). A prepared scope and plan are made of
/// that and the variant, whose id the key of [`Compiler::prepared`] adds after it. A context
/// that cannot be written out (never, for one that was read) is prepared every time.
fn request_key(request: &Request, date: Option<&str>, context: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(64 + context.len());
    match date {
        Some(date) => {
            key.push(1);
            write_bytes(date.as_bytes(), &mut key);
        }
        None => key.push(0),
    }
    key.extend((request.set.len() as u64).to_le_bytes());
    for (name, value) in &request.set {
        write_bytes(name.as_bytes(), &mut key);
        write_bytes(value.as_bytes(), &mut key);
    }
    write_bytes(context, &mut key);
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiled::CompiledTools;
    use crate::resolve::plan::PlannedTool;

    /// A workspace of two variants (families `a` and `b`) and one context, whose manifest
    /// declares `predicates` and whose variants print `template`.
    fn two_families(predicates: &str, template: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            (
                "promptc.toml".to_string(),
                format!(
                    "fallback_family = \"a\"\ndefault_context = \"c\"\n[predicates]\n{predicates}"
                ),
            ),
            (
                "examples/contexts/c.toml".to_string(),
                "cwd = \"/p\"\nmode = \"plan\"\n".to_string(),
            ),
            (
                "variants/a.toml".to_string(),
                format!("id = \"a\"\ntemplate = \"{template}\"\n"),
            ),
            (
                "variants/b.toml".to_string(),
                format!("id = \"b\"\ntemplate = \"{template}\"\n"),
            ),
        ];
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    /// Adds `text` to the end of both variants of [`two_families`].
    fn append_to_variants(dir: &tempfile::TempDir, text: &str) {
        for family in ["a", "b"] {
            let variant = dir.path().join(format!("variants/{family}.toml"));
            let own = std::fs::read_to_string(&variant).unwrap();
            std::fs::write(&variant, format!("{own}{text}")).unwrap();
        }
    }

    /// Each family's prompt, compiled one after the other for the same context, and the
    /// bytes of the predicates the compiles shared.
    fn prompts(predicates: &str, template: &str) -> (Vec<String>, usize) {
        let dir = two_families(predicates, template);
        let loaded = crate::load_workspace(dir.path()).unwrap();
        assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
        let compiler = Compiler::new(&loaded.workspace);
        let prompts = ["a", "b"]
            .into_iter()
            .map(|family| {
                let context = loaded.workspace.context("c").unwrap().clone();
                let request = Request::new(Selection::family(family), context);
                compiler.compile(&request).unwrap().prompt
            })
            .collect();
        (prompts, compiler.context_predicates.held_bytes())
    }

    #[test]
    fn predicates_that_read_the_variant_are_found_for_each_variant() {
        let (prompts, shared) = prompts(
            "is_a = \"family == 'a'\"\nvia = \"is_a\"\nplanning = \"mode == 'plan'\"\n",
            "{{ is_a }} {{ via }} {{ planning }}\\n",
        );
        assert_eq!(prompts, ["true true true\n", "false false true\n"]);
        assert_eq!(shared, 0);
    }

    #[test]
    fn predicates_that_read_only_the_request_are_found_once_for_every_variant() {
        let (prompts, shared) = prompts(
            "planning = \"mode == 'plan'\"\nacting = \"not planning\"\n",
            "{{ family }} {{ planning }} {{ acting }}\\n",
        );
        assert_eq!(prompts, ["a true false\n", "b true false\n"]);
        assert!(shared > 0);
    }

    #[test]
    fn a_context_s_values_are_made_once_for_every_variant_and_again_for_another_date() {
        let dir = two_families("", "{{ family }} {{ cwd }} {{ mode }} {{ date }}\\n");
        let loaded = crate::load_workspace(dir.path()).unwrap();
        assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
        let compiler = Compiler::new(&loaded.workspace);
        let context = loaded.workspace.context("c").unwrap().clone();
        let compile = |family: &str, epoch: i64| {
            let mut request = Request::new(Selection::family(family), context.clone());
            request.source_date_epoch = crate::resolve::date::SourceDateEpoch::At(epoch);
            compiler.compile(&request).unwrap().prompt
        };
        assert_eq!(compile("a", 0), "a /p plan 1970-01-01\n");
        let one = compiler.context_layers.held_bytes();
        assert!(one > 0);
        assert_eq!(compile("b", 0), "b /p plan 1970-01-01\n");
        assert_eq!(compiler.context_layers.held_bytes(), one);
        // Another date is another layer, whichever variant asks first.
        assert_eq!(compile("b", 86_400), "b /p plan 1970-01-02\n");
        assert_eq!(compile("a", 86_400), "a /p plan 1970-01-02\n");
        assert_eq!(compiler.context_layers.held_bytes(), 2 * one);
    }

    /// A tool without a family spec reads alike for every family and is resolved once for
    /// all the variants; one with a spec for a family is resolved for each.
    #[test]
    fn a_tool_every_family_sees_alike_is_resolved_once_for_all_variants() {
        let dir = two_families("", "{{ family }}:\\n{{ TOOLS }}");
        append_to_variants(&dir, "tools = [\"plain\", \"own\"]\n");
        std::fs::create_dir_all(dir.path().join("tools")).unwrap();
        std::fs::write(
            dir.path().join("tools/plain.toml"),
            "id = \"plain\"\ndescription = \"Plain for {{ family }}.\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tools/own.toml"),
            "id = \"own\"\ndescription = \"Own.\"\n[families.b]\ndescription = \"Own, as b.\"\n",
        )
        .unwrap();
        let loaded = crate::load_workspace(dir.path()).unwrap();
        assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
        let compiler = Compiler::new(&loaded.workspace);
        let context = loaded.workspace.context("c").unwrap().clone();
        let mut outlines = Vec::new();
        for family in ["a", "b"] {
            let request = Request::new(Selection::family(family), context.clone());
            let compiled = compiler.compile(&request).unwrap();
            let descriptions: Vec<&str> = compiled
                .tools
                .iter()
                .map(|tool| tool.description.as_str())
                .collect();
            let own = if family == "a" { "Own." } else { "Own, as b." };
            assert_eq!(descriptions, [format!("Plain for {family}.").as_str(), own]);
            let variant = compiler.variant(family).unwrap();
            outlines.push(
                compiler
                    .outlines
                    .get(&loaded.workspace, variant)
                    .resolved_tools(),
            );
        }
        let tool = |outline: usize, index: usize| Arc::clone(&outlines[outline][index]);
        assert!(Arc::ptr_eq(&tool(0, 0), &tool(1, 0)), "plain is shared");
        assert!(
            !Arc::ptr_eq(&tool(0, 1), &tool(1, 1)),
            "own is the family's"
        );
        assert_eq!(
            tool(1, 1).choice,
            crate::resolve::tool_spec::SpecChoice::Family("b".into())
        );
    }

    #[test]
    fn families_that_see_the_same_tools_alike_share_one_tool_section() {
        // The tools section of `b`, compiled after `a`'s for the same context, is `a`'s when
        // both families see the generic spec, and one of its own when `b` has a spec.
        let sections_held = |family_spec: &str| {
            let dir = two_families("", "{{ TOOLS }}");
            append_to_variants(&dir, "tools = [\"plain\"]\n");
            std::fs::create_dir_all(dir.path().join("tools")).unwrap();
            std::fs::write(
                dir.path().join("tools/plain.toml"),
                format!("id = \"plain\"\ndescription = \"Plain.\"\n{family_spec}"),
            )
            .unwrap();
            let loaded = crate::load_workspace(dir.path()).unwrap();
            assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
            let compiler = Compiler::new(&loaded.workspace);
            let context = loaded.workspace.context("c").unwrap().clone();
            ["a", "b"].map(|family| {
                let request = Request::new(Selection::family(family), context.clone());
                let compiled = compiler.compile(&request).unwrap();
                (compiler.memo.tool_sections_held(), compiled.tools)
            })
        };
        let [(after_a, tools_a), (after_b, tools_b)] = sections_held("");
        assert!(after_a > 0);
        assert_eq!(after_b, after_a, "b takes a's section");
        // Its tools too: the one list, not a copy of it.
        assert!(CompiledTools::ptr_eq(&tools_a, &tools_b));
        let [(after_a, tools_a), (after_b, tools_b)] =
            sections_held("[families.b]\ndescription = \"Plain, as b.\"\n");
        assert!(after_b > after_a, "b makes a section of its own");
        assert!(!CompiledTools::ptr_eq(&tools_a, &tools_b));
        assert_eq!(tools_b[0].description, "Plain, as b.");
    }

    /// Requests that differ only in a declared `extra` key, in a `--set` value, or in a date
    /// the context gives against one from the epoch, each get their own context values.
    #[test]
    fn a_context_s_values_are_made_apart_for_what_a_request_changes() {
        let dir = two_families("", "{{ family }} {{ extra.tier }} {{ date }} {{ note }}\\n");
        append_to_variants(&dir, "[placeholders]\nnote = \"-\"\n");
        let manifest = dir.path().join("promptc.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(
            &manifest,
            format!("{text}\n[context_fields.tier]\ntype = \"string\"\ndefault = \"free\"\n"),
        )
        .unwrap();
        let loaded = crate::load_workspace(dir.path()).unwrap();
        assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
        let compiler = Compiler::new(&loaded.workspace);
        let context = loaded.workspace.context("c").unwrap().clone();
        let compile = |family: &str, change: &dyn Fn(&mut Request)| {
            let mut request = Request::new(Selection::family(family), context.clone());
            request.source_date_epoch = crate::resolve::date::SourceDateEpoch::At(0);
            change(&mut request);
            compiler.compile(&request).unwrap().prompt
        };
        assert_eq!(compile("a", &|_| ()), "a free 1970-01-01 -\n");
        let paid = |request: &mut Request| {
            request
                .context
                .extra
                .insert("tier".into(), serde_json::json!("paid"));
        };
        assert_eq!(compile("b", &paid), "b paid 1970-01-01 -\n");
        let noted = |request: &mut Request| {
            request.set.insert("note".into(), "set".into());
        };
        assert_eq!(compile("a", &noted), "a free 1970-01-01 set\n");
        let dated = |request: &mut Request| request.context.date = Some("2026-11-27".into());
        assert_eq!(compile("b", &dated), "b free 2026-11-27 -\n");
        assert_eq!(compile("a", &|_| ()), "a free 1970-01-01 -\n");
    }

    /// A variant with many tools makes a plan many times larger than the context it is
    /// made for: the memo of plans counts the plan, or a matrix of such a variant over many
    /// contexts keeps every plan (at 1,000 tools × 2,000 outputs, 300 MB more).
    #[test]
    fn a_remembered_plan_is_counted_by_its_size_not_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "promptc.toml",
            "fallback_family = \"v\"\ndefault_context = \"c\"\n",
        );
        write("examples/contexts/c.toml", "cwd = \"/p\"\n");
        const TOOLS: usize = 300;
        let mut ids = Vec::new();
        for t in 0..TOOLS {
            ids.push(format!("\"tool_{t}\""));
            write(
                &format!("tools/tool_{t}.toml"),
                &format!("id = \"tool_{t}\"\ndescription = \"Tool {t}.\"\n"),
            );
        }
        write(
            "variants/v.toml",
            &format!(
                "id = \"v\"\ntemplate = \"{{{{ TOOLS }}}}\\n\"\ntools = [{}]\n",
                ids.join(", ")
            ),
        );
        let loaded = crate::load_workspace(dir.path()).unwrap();
        assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
        let compiler = Compiler::new(&loaded.workspace);
        let context = loaded.workspace.context("c").unwrap().clone();
        let compiled = compiler
            .compile(&Request::new(Selection::family("v"), context))
            .unwrap();
        assert!(compiled.prompt.contains("tool_299"));
        let counted = compiler.prepared.held_bytes();
        assert!(
            counted >= TOOLS * std::mem::size_of::<PlannedTool>(),
            "a plan of {TOOLS} tools counted as {counted} bytes"
        );
    }

    /// Native tool definitions made for one context serve another whose MCP servers and
    /// dialect are the same, and only such a one: a changed server or another provider's
    /// dialect makes them afresh.
    #[test]
    fn contexts_with_the_same_servers_and_dialect_share_their_tool_definitions() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let loaded = crate::load_workspace(root).unwrap();
        let workspace = &loaded.workspace;
        let basic = workspace.context("basic").unwrap().clone();
        let mut elsewhere = basic.clone();
        elsewhere.cwd = "/somewhere/else".into();
        elsewhere.date = Some("2030-01-01".into());
        // What the definitions do not read of a server: how it is started.
        elsewhere.mcp_servers[0].command = "another --command".into();
        let mut other_provider = basic.clone();
        other_provider.model.provider = "openai".into();
        let mut fewer_servers = basic.clone();
        fewer_servers.mcp_servers.truncate(1);
        let mut one_disabled = basic.clone();
        one_disabled.mcp_servers[0].disabled = true;
        assert!(basic.mcp_servers.len() > 1, "the test needs two servers");

        let compiler = Compiler::new(workspace);
        let definitions = |context: &crate::model::Context| {
            let request = Request::new(Selection::family("native-next-gen"), context.clone());
            let compiled = compiler.compile(&request).unwrap();
            // What a compiler that has made none before makes for the same request.
            let alone = Compiler::new(workspace);
            let alone_compiled = alone.compile(&request).unwrap();
            assert_eq!(compiled.tool_definitions, alone_compiled.tool_definitions);
            assert_eq!(compiled.dialect, alone_compiled.dialect);
            let variant = &compiler.variants["native-next-gen"];
            let made = compiler
                .tool_definitions(&request, variant, &compiled.tools, None)
                .unwrap()
                .unwrap();
            let made_alone = alone
                .tool_definitions(&request, variant, &compiled.tools, None)
                .unwrap()
                .unwrap();
            // The warnings `validate` reports too.
            assert_eq!(format!("{:?}", made.2), format!("{:?}", made_alone.2));
            made
        };
        let first = definitions(&basic);
        assert_eq!(first.0.name(), "anthropic");
        assert!(Arc::ptr_eq(&first, &definitions(&elsewhere)));
        let openai = definitions(&other_provider);
        assert_eq!(openai.0.name(), "openai");
        assert!(!Arc::ptr_eq(&first, &openai));
        let fewer = definitions(&fewer_servers);
        assert!(!Arc::ptr_eq(&first, &fewer));
        assert_ne!(first.1, fewer.1);
        let disabled = definitions(&one_disabled);
        assert!(!Arc::ptr_eq(&first, &disabled));
        assert_ne!(first.1, disabled.1);

        // The dialect asked for by name shares with the same dialect found by the rules.
        let mut asked = Request::new(Selection::family("native-next-gen"), elsewhere.clone());
        asked.dialect = Some(first.0);
        asked.context.cwd = "/a/third/place".into();
        let compiled = compiler.compile(&asked).unwrap();
        let variant = &compiler.variants["native-next-gen"];
        let by_name = compiler
            .tool_definitions(&asked, variant, &compiled.tools, None)
            .unwrap()
            .unwrap();
        assert!(Arc::ptr_eq(&first, &by_name));
    }
}
