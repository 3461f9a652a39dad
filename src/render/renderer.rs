//! Renders templates and tool texts, turning failures into diagnostics.

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use minijinja::Value;
use minijinja::value::{ValueKind, merge_maps};

use crate::compiled::{CompiledParameter, CompiledTool, CompiledTools};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::namespace::{TOOL, TOOLS_DATA, TOOLS_TEXT};
use crate::problem::Problem;
use crate::render::budget::{Budget, CappedBuffer, Exhausted};
use crate::render::memo::{RenderMemo, ToolSection, write_tool};
use crate::resolve::date::SourceDateEpoch;
use crate::resolve::plan::{Plan, PlannedTool, Reason};
use crate::resolve::scope::Scope;
use crate::resolve::scope::SlotReads;
use crate::resolve::tool_spec::{ForEach, ResolvedParameter, SpecChoice};
use crate::templates::TemplateId;
use crate::templates::limits::too_large;
use crate::templates::written::{write_bytes, write_value};
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;
use crate::workspace::template_choice::tool_format;

/// The most tools one `for_each` spec makes in a compile. Providers take a few hundred tools at
/// most; a context list of hundreds of thousands of items made as many tools, a gigabyte of
/// them, before the compile ran out of fuel.
pub const MAX_FOR_EACH_ITEMS: usize = 1_000;

/// The longest a tool section's key may be written out (its tools, then every value their
/// texts read) for the section to be remembered.
const MAX_SECTION_KEY_BYTES: usize = 256 * 1024;

pub struct Renderer<'a> {
    pub workspace: &'a Workspace,
    pub diagnostics: &'a mut Diagnostics,
    /// The compile has no date (and what SOURCE_DATE_EPOCH was, which would have given
    /// it): an undefined `CURRENT_DATE` is reported as such.
    pub no_date: Option<SourceDateEpoch>,
    pub budget: Budget,
    pub exhausted: &'a Exhausted,
    pub memo: &'a RenderMemo,
    /// Where the slots of filled sections each render reads are noted, when the compile
    /// asks (see `scope::SlotReads`).
    pub slot_reads: Option<Arc<SlotReads>>,
}

impl Renderer<'_> {
    /// Renders a template; a failure becomes a diagnostic at the failing expression. Each
    /// render spends the compile's fuel and bytes; once they ran out, nothing more renders.
    pub fn render(&mut self, template: TemplateId, values: &Value) -> Option<String> {
        self.render_given(template, values, None)
            .map(Text::into_string)
    }

    /// `render`, as a text that may be shared with the render memo: what a section's slot
    /// holds, without a copy.
    pub fn render_text(&mut self, template: TemplateId, values: &Value) -> Option<Text> {
        self.render_given(template, values, None)
    }

    /// `render`, where the value of one name is also given written out (see `RenderMemo::key`).
    fn render_given(
        &mut self,
        template: TemplateId,
        values: &Value,
        given: Option<(&str, &[u8])>,
    ) -> Option<Text> {
        if self.budget.stopped {
            return None;
        }
        if let Some(diagnostic) = self.exhausted.get(template) {
            self.diagnostics.push(diagnostic);
            self.budget.stopped = true;
            return None;
        }
        let templates = &self.workspace.templates;
        let byte_limit = self.budget.render_bytes.min(self.budget.bytes_left);
        // Plain text (most descriptions and instructions) is its own rendering; one over the
        // byte limit goes the long way, to be refused as any other.
        if let Some(text) = templates.plain(template)
            && text.len() as u64 <= byte_limit
        {
            self.budget.bytes_left -= text.len() as u64;
            return Some(Text::Shared(Arc::clone(text)));
        }
        let key = self.memo.key(templates, template, values, given);
        if let Some(hit) = key.as_ref().and_then(|key| self.memo.get(key))
            && hit.text.len() as u64 <= byte_limit
        {
            if let Some(reads) = &self.slot_reads {
                reads.replay(&hit.slots);
            }
            return self.spend(template, Text::Shared(hit.text), hit.fuel);
        }
        let mut buffer =
            CappedBuffer::new(byte_limit, self.memo.expected_length(template, byte_limit));
        let start = self.slot_reads.as_ref().map(|reads| reads.start());
        let result = templates.template(template).and_then(|template| {
            template
                .render_captured_to(values.clone(), &mut buffer)
                .map(|captured| crate::templates::model_id::used_fuel(captured.state()))
        });
        let slots = match (&self.slot_reads, start) {
            (Some(reads), Some(start)) => reads.stop(start),
            _ => Vec::new(),
        };
        match result {
            Ok(used) => {
                self.memo.rendered_length(template, buffer.bytes.len());
                let mut text = String::from_utf8(buffer.bytes)
                    .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
                let text = match key {
                    // The memo keeps a copy of its own size.
                    Some(key) => Text::Shared(self.memo.insert(key, text, used, slots)),
                    None => {
                        // Kept until its output is handled, and the byte limits count its
                        // length, not the room the last render's length gave it.
                        if text.capacity() > 2 * text.len().max(32) {
                            text.shrink_to_fit();
                        }
                        Text::Owned(text)
                    }
                };
                self.spend(template, text, used)
            }
            Err(_) if buffer.overflowed => {
                // Past what the compile had left: the limit is the compile's whole budget,
                // which the sections rendered before this one spent most of.
                let (setting, limit) = if byte_limit < self.budget.render_bytes {
                    ("limits.compile_bytes", self.budget.compile_bytes)
                } else {
                    ("limits.render_bytes", byte_limit)
                };
                let alone = setting == "limits.render_bytes";
                self.stop(template, Problem::TooMuchText { limit, setting }, alone);
                None
            }
            Err(error) => {
                self.failed(template, &error, values);
                None
            }
        }
    }

    /// Takes a render's fuel and bytes from the compile's budget; a render that spent more
    /// fuel than the compile had left stops the compile.
    fn spend(&mut self, template: TemplateId, text: Text, used: u64) -> Option<Text> {
        if used > self.budget.fuel_left {
            // The compile's budget ran out, not necessarily the template's: not remembered.
            self.stop(
                template,
                Problem::OutOfFuel {
                    fuel: self.budget.fuel,
                },
                false,
            );
            return None;
        }
        self.budget.fuel_left -= used;
        self.budget.bytes_left -= text.len() as u64;
        Some(text)
    }

    /// Reports a render error at the failing expression. A template that spent all the fuel,
    /// or built too much text, alone is remembered: whatever the context, rendering it again
    /// would likely spend as much again.
    fn failed(&mut self, template: TemplateId, error: &minijinja::Error, values: &Value) {
        let templates = &self.workspace.templates;
        let error = templates.cause(error);
        let span = templates
            .error_span(error)
            .or_else(|| templates.span_of(template));
        let problem = self.problem(template, error, values);
        let ran_out = matches!(
            problem,
            Problem::OutOfFuel { .. } | Problem::TooMuchText { .. }
        );
        if let Some(span) = span {
            let diagnostic = Diagnostic::new(problem, span);
            if ran_out {
                self.exhausted.insert(template, diagnostic.clone());
            }
            self.diagnostics.push(diagnostic);
        }
        if ran_out {
            self.budget.stopped = true;
        }
    }

    /// What a render error means to the user.
    fn problem(&self, template: TemplateId, error: &minijinja::Error, values: &Value) -> Problem {
        let templates = &self.workspace.templates;
        // minijinja's detail names what is undefined ("`CURRENT_DATE` is undefined"), in the
        // template that failed, which may be a partial the rendered one includes or imports;
        // without a name, the template that failed is asked whether it reads the date.
        let detail = error.detail().unwrap_or("");
        let names_date = detail.contains("`CURRENT_DATE` is undefined");
        let names_another = !names_date && detail.contains("` is undefined");
        let failed_in = error
            .name()
            .and_then(|name| templates.by_name(name))
            .unwrap_or(template);
        let uses_date = names_date
            || (!names_another
                && templates
                    .variables(failed_in)
                    .iter()
                    .any(|v| v == "CURRENT_DATE"));
        if let Some(found) = too_large(error) {
            Problem::TooMuchText {
                limit: found.limit,
                setting: "limits.render_bytes",
            }
        } else if error.kind() == minijinja::ErrorKind::OutOfFuel {
            Problem::OutOfFuel {
                fuel: self.budget.fuel,
            }
        } else if let Some(epoch) = self.no_date
            && uses_date
            && error.kind() == minijinja::ErrorKind::UndefinedError
        {
            Problem::NoDate {
                epoch_invalid: epoch == SourceDateEpoch::Invalid,
            }
        } else if let Some((name, argument)) = (error.kind()
            == minijinja::ErrorKind::UndefinedError)
            .then(|| crate::templates::macro_argument_at(error.template_source()?, error.range()?))
            .flatten()
        {
            Problem::MacroArgumentMissing { name, argument }
        } else {
            match render_failed(self.workspace.templates.env(), error) {
                // A key or attribute misspelt (`tool.descripton`) is said with the near one
                // the value has, rather than as a value a context may leave unset.
                Problem::RenderFailed {
                    message,
                    meant: None,
                    known,
                } => Problem::RenderFailed {
                    meant: crate::templates::meant::attribute(error, values).or_else(|| {
                        // A macro of an imported partial, misspelt (`v.verfy(…)`).
                        let missing = message.split("has no method named ").nth(1)?.trim();
                        templates.macro_meant(error.name()?, error.range()?, missing)
                    }),
                    message,
                    known,
                },
                problem => problem,
            }
        }
    }

    /// Reports that the compile ran out while rendering `template` (no line is known: the
    /// template as a whole is pointed at), and renders nothing more; `remember` when the
    /// template alone is the cause, so the rest of the run does not render it again.
    fn stop(&mut self, template: TemplateId, problem: Problem, remember: bool) {
        self.budget.stopped = true;
        if let Some(span) = self.workspace.templates.span_of(template) {
            let diagnostic = Diagnostic::new(problem, span);
            if remember {
                self.exhausted.insert(template, diagnostic.clone());
            }
            self.diagnostics.push(diagnostic);
        }
    }

    /// A text field that may be absent (a parameter without `usage`): absent is "". A render
    /// that fails is reported, and the compile fails with it.
    fn optional_text(&mut self, text: Option<TemplateId>, values: &Value) -> String {
        text.and_then(|template| self.render(template, values))
            .unwrap_or_default()
    }

    /// Renders the enabled tools' texts (a `for_each` spec once per item), then documents
    /// each through the tool format into `TOOLS`.
    pub fn tools(
        &mut self,
        plan: &Plan,
        variant: &EffectiveVariant,
        scope: &mut Scope,
    ) -> CompiledTools {
        let values = scope.values();
        let section_key = self.tool_section_key(plan, variant, &values);
        if let Some(section) = section_key
            .as_ref()
            .and_then(|key| self.memo.tool_section(key))
        {
            // The same tools over the same values, from the same budget: what rendering would
            // give, spending what it would spend.
            self.budget.fuel_left -= section.fuel;
            self.budget.bytes_left -= section.bytes;
            scope.insert_fact(TOOLS_DATA, section.values.clone());
            scope.insert_fact(TOOLS_TEXT, section.text.clone());
            return section.tools.clone();
        }
        let (fuel_before, bytes_before) = (self.budget.fuel_left, self.budget.bytes_left);
        let found_before = self.diagnostics.iter().count();
        let mut compiled = Vec::new();
        for planned in plan.enabled_tools() {
            let Some(for_each) = &planned.tool.for_each else {
                compiled.extend(self.tool(planned, &values, None));
                continue;
            };
            for (index, item) in self.items(for_each, &values).into_iter().enumerate() {
                let mut top = std::collections::BTreeMap::new();
                top.insert(for_each.item.clone(), item);
                let values = merge_maps([values.clone(), Value::from(top)]);
                let found = self.diagnostics.len();
                compiled.extend(self.tool(planned, &values, Some(index)));
                // A field the item lacks is the list's data to fix, not the spec: the near
                // key the item has is likely the misspelt one, so it is not offered.
                for diagnostic in self.diagnostics.since_mut(found) {
                    if let Problem::RenderFailed { message, meant, .. } = &mut diagnostic.problem
                        && reads_item(message, &for_each.item)
                    {
                        *meant = None;
                        diagnostic
                            .notes
                            .push(crate::problem::NoteKind::MadeFromItem {
                                index,
                                list: for_each.list.clone(),
                            });
                    }
                }
            }
        }
        self.check_names(&compiled);
        if self.budget.stopped {
            // The compile fails with what stopped it: no tool values, no documentation.
            return CompiledTools::from(compiled);
        }
        let compiled = CompiledTools::from(compiled);
        let format = tool_format(self.workspace, variant);
        let mut documented = Vec::with_capacity(compiled.len());
        // Each tool becomes a template value once: for its own documentation, then in the
        // list all tools make. The same tool (the same fields) is the same value in every
        // compile of the run, so it is made once and its documentation remembered by it.
        let mut as_values = Vec::with_capacity(compiled.len());
        let mut written = Vec::new();
        let mut tools_written = 0;
        for tool in &compiled {
            written.clear();
            write_tool(tool, &mut written);
            tools_written += written.len();
            let value = self
                .memo
                .tool_value(&written, || Value::from(minijinja::value::Serde(tool)));
            let mut top = std::collections::BTreeMap::new();
            top.insert(TOOL, value.clone());
            let scope = merge_maps([values.clone(), Value::from(top)]);
            if let Some(text) = self.render_given(format, &scope, Some((TOOL, &written))) {
                documented.push(text.as_str().trim_end().to_string());
            }
            as_values.push(value);
        }
        let data = Value::from(as_values);
        let text = Value::from(documented.join("\n\n"));
        scope.insert_fact(TOOLS_DATA, data.clone());
        scope.insert_fact(TOOLS_TEXT, text.clone());
        // Only a section that rendered without a word to say is remembered: a problem is
        // reported by the compile that meets it, every time.
        if let Some(key) = section_key
            && !self.budget.stopped
            && self.diagnostics.iter().count() == found_before
        {
            self.memo.insert_tool_section(
                key,
                ToolSection {
                    tools: compiled.clone(),
                    values: data,
                    text,
                    fuel: fuel_before - self.budget.fuel_left,
                    bytes: bytes_before - self.budget.bytes_left,
                },
                tools_written,
            );
        }
        compiled
    }

    /// What a tool section depends on, written out: the tool format, the budget it starts
    /// from, the tools and parameters the plan includes with the spec each tool was resolved
    /// from, and the values of every name their texts and the tool format read. Not the
    /// variant itself: families that resolve the same tools over the same values share one
    /// section (the shipped matrix's 48 compiles made 40 tool sections when the key was the
    /// variant's, 33 now). `None`
    /// when that cannot be known (a text that reads what its text does not show, a
    /// `for_each` tool whose items come from the context, a value too large or not plain
    /// data) or when a template of this run already ran out, whose error a render would
    /// report.
    fn tool_section_key(
        &self,
        plan: &Plan,
        variant: &EffectiveVariant,
        values: &Value,
    ) -> Option<Box<[u8]>> {
        if self.budget.stopped || !self.exhausted.is_empty() {
            return None;
        }
        let templates = &self.workspace.templates;
        let mut out = Vec::with_capacity(4096);
        let format = tool_format(self.workspace, variant);
        out.extend_from_slice(&(format.index() as u64).to_le_bytes());
        out.extend_from_slice(&self.budget.fuel_left.to_le_bytes());
        out.extend_from_slice(&self.budget.bytes_left.to_le_bytes());
        let names_read = |template: Option<TemplateId>, into: &mut BTreeSet<String>| {
            if let Some(template) = template {
                into.extend(self.memo.reads_of(templates, template)?.iter().cloned());
            }
            Some(())
        };
        // The tool format is given `tool`, the tool it documents: that is one of the tools
        // written below. Any other text reads `tool` from the compile's values like any name.
        let mut read = BTreeSet::new();
        names_read(Some(format), &mut read)?;
        read.remove(TOOL);
        let enabled: Vec<&PlannedTool> = plan.enabled_tools().collect();
        // Counts before lists, so that no two different plans write the same bytes.
        out.extend_from_slice(&(enabled.len() as u64).to_le_bytes());
        for planned in enabled {
            let tool = &planned.tool;
            if tool.for_each.is_some() {
                return None;
            }
            // A tool resolves from its id and the spec chosen (see `resolve_tool`): these two
            // fix its name, texts, source and parameters.
            write_bytes(tool.id.as_bytes(), &mut out);
            match &tool.choice {
                SpecChoice::Family(family) => {
                    out.push(1);
                    write_bytes(family.as_bytes(), &mut out);
                }
                SpecChoice::Generic => out.push(0),
            }
            names_read(tool.name_template, &mut read)?;
            names_read(Some(tool.description), &mut read)?;
            out.extend_from_slice(&(planned.parameters.len() as u64).to_le_bytes());
            for (parameter, reason) in &planned.parameters {
                write_bytes(parameter.name.as_bytes(), &mut out);
                let included = *reason == Reason::Included;
                out.push(u8::from(included));
                if included {
                    names_read(parameter.instruction, &mut read)?;
                    names_read(parameter.usage, &mut read)?;
                    names_read(parameter.note, &mut read)?;
                }
            }
        }
        // Then the values read, by name.
        for name in &read {
            write_bytes(name.as_bytes(), &mut out);
            let value = values.get_attr(name).ok()?;
            write_value(&value, MAX_SECTION_KEY_BYTES, &mut out)?;
        }
        (out.len() <= MAX_SECTION_KEY_BYTES).then(|| out.into_boxed_slice())
    }

    /// One tool's texts; `None` when its description (or, per item, its name) failed to
    /// render, which was reported.
    fn tool(
        &mut self,
        planned: &PlannedTool,
        values: &Value,
        item: Option<usize>,
    ) -> Option<CompiledTool> {
        let tool = &planned.tool;
        let name = match tool.name_template {
            Some(template) => self.render(template, values)?.trim().to_string(),
            None => tool.name.clone(),
        };
        let mut description = self.render(tool.description, values)?;
        let mut parameters: Vec<CompiledParameter> = Vec::new();
        for (parameter, reason) in &planned.parameters {
            if *reason != Reason::Included {
                continue;
            }
            self.spend_schema(parameter)?;
            parameters.push(CompiledParameter {
                name: parameter.name.clone(),
                required: parameter.required,
                kind: parameter.kind.name().to_string(),
                instruction: self.optional_text(parameter.instruction, values),
                usage: self.optional_text(parameter.usage, values),
                note: self.optional_text(parameter.note, values),
                schema: parameter.schema.clone(),
            });
        }
        // Each shown parameter's note goes on a line of its own after the description.
        for note in parameters.iter().map(|p| p.note.trim_end()) {
            if note.is_empty() {
                continue;
            }
            if !description.is_empty() && !description.ends_with('\n') {
                description.push('\n');
            }
            description.push_str(note);
        }
        let (spec, from_family) = match &tool.choice {
            SpecChoice::Family(family) => (family.clone(), true),
            SpecChoice::Generic => ("generic".into(), false),
        };
        Some(CompiledTool {
            id: tool.id.clone(),
            name,
            spec,
            from_family,
            source: tool.source.clone(),
            description,
            parameters,
            item,
        })
    }

    /// Takes a copy of the parameter's schema from the compile's bytes: the compiled tools
    /// share one, but the native tool definitions hold a copy per tool, and the JSON output
    /// writes one per tool. A shared `enum` of thousands of values used by thousands of tools
    /// stops the compile here, not a definitions document of gigabytes later.
    fn spend_schema(&mut self, parameter: &ResolvedParameter) -> Option<()> {
        if self.budget.stopped {
            return None;
        }
        let bytes = parameter.schema.copy_cost() as u64;
        if bytes > self.budget.bytes_left {
            self.budget.stopped = true;
            let limit = self.budget.compile_bytes;
            self.diagnostics.push(Diagnostic::new(
                Problem::SchemasTooLarge { limit, bytes },
                parameter.span,
            ));
            return None;
        }
        self.budget.bytes_left -= bytes;
        Some(())
    }

    /// The items of a `for_each` list: none when the context lacks it (or it is `none`); a
    /// value that is not a list, or an expression that fails, is reported.
    fn items(&mut self, for_each: &ForEach, values: &Value) -> Vec<Value> {
        if self.budget.stopped {
            return Vec::new();
        }
        let env = self.workspace.templates.env();
        let result = env
            .compile_expression(&for_each.list)
            .and_then(|expression| {
                expression.eval_inspected(values.clone(), crate::templates::model_id::used_fuel)
            });
        // The list's fuel comes from the compile's, as a render's does; a list that fails
        // (perhaps after walking most of the fuel) stops the compile, so that many tools'
        // lists do not each run up to the whole fuel.
        let result = match result {
            Ok((_, used)) if used > self.budget.fuel_left => {
                self.budget.stopped = true;
                self.diagnostics.push(Diagnostic::new(
                    Problem::OutOfFuel {
                        fuel: self.budget.fuel,
                    },
                    for_each.span,
                ));
                return Vec::new();
            }
            Ok((list, used)) => {
                self.budget.fuel_left -= used;
                Ok(list)
            }
            Err(error) => {
                self.budget.stopped = true;
                Err(error)
            }
        };
        let problem = match result {
            Ok(list) if list.is_undefined() || list.is_none() => return Vec::new(),
            Ok(list) if list.kind() == ValueKind::Seq => match list.try_iter() {
                // One past the limit is enough to know it is passed: a list of millions is
                // not walked, nor made into as many tools.
                Ok(items) => {
                    let items: Vec<Value> = items.take(MAX_FOR_EACH_ITEMS + 1).collect();
                    if items.len() <= MAX_FOR_EACH_ITEMS {
                        return items;
                    }
                    Problem::ForEachTooLong {
                        limit: MAX_FOR_EACH_ITEMS,
                    }
                }
                Err(error) => Problem::RenderFailed {
                    message: error.to_string(),
                    meant: None,
                    known: None,
                },
            },
            Ok(list) => Problem::ForEachNotAList {
                found: list.kind().to_string(),
            },
            Err(error) => render_failed(env, &error),
        };
        self.diagnostics
            .push(Diagnostic::new(problem, for_each.span));
        Vec::new()
    }

    /// Every tool the model is offered has a name of its own, and a name from a `for_each`
    /// item is one a model can call.
    fn check_names(&mut self, compiled: &[CompiledTool]) {
        // By name, the first tool to take it: a lookup, not a scan, so a thousand tools cost a
        // thousand lookups rather than half a million comparisons.
        let mut seen: HashMap<&str, &CompiledTool> = HashMap::with_capacity(compiled.len());
        for tool in compiled {
            let bad_name = tool.item.is_some() && !crate::model::is_callable_name(&tool.name);
            let taken_by = match seen.entry(tool.name.as_str()) {
                Entry::Occupied(first) => Some(first.get().id.clone()),
                Entry::Vacant(vacant) => {
                    vacant.insert(tool);
                    None
                }
            };
            if !bad_name && taken_by.is_none() {
                continue;
            }
            let entry = &self.workspace.tools[tool.id.as_str()];
            let at = if entry.value.name.is_some() {
                "/name"
            } else {
                "/id"
            };
            let span = entry.value_span(at);
            // Which item made the name: the list's data, not the spec, is what to fix.
            let made_from = tool
                .item
                .zip(entry.value.for_each.as_ref())
                .map(|(index, list)| crate::problem::NoteKind::MadeFromItem {
                    index,
                    list: list.clone(),
                });
            if bad_name {
                let mut diagnostic = Diagnostic::new(
                    Problem::BadToolName {
                        name: tool.name.clone(),
                    },
                    span,
                );
                if let Some(note) = made_from {
                    diagnostic = diagnostic.note(note);
                }
                self.diagnostics.push(diagnostic);
            }
            if let Some(first) = taken_by {
                self.diagnostics.push(Diagnostic::new(
                    Problem::ToolNameTaken {
                        name: tool.name.clone(),
                        first,
                        mcp: false,
                    },
                    span,
                ));
            }
        }
    }
}

/// Whether a render error is an undefined value read through a `for_each` item (`agent.name`
/// where the item is `agent`): minijinja's detail names the expression between backticks.
fn reads_item(message: &str, item: &str) -> bool {
    message.starts_with("undefined value")
        && message.split('`').nth(1).is_some_and(|path| {
            path.strip_prefix(item)
                .is_some_and(|rest| rest.starts_with(['.', '[']))
        })
}

/// A render's text: its own, or the render memo's.
pub enum Text {
    Owned(String),
    Shared(Arc<str>),
}

impl Text {
    pub fn as_str(&self) -> &str {
        match self {
            Text::Owned(text) => text,
            Text::Shared(text) => text,
        }
    }

    pub fn len(&self) -> usize {
        self.as_str().len()
    }

    pub fn into_string(self) -> String {
        match self {
            Text::Owned(text) => text,
            Text::Shared(text) => text.to_string(),
        }
    }
}

/// A render error the user must fix in the template: what minijinja says, and the name meant
/// when it names a filter, test or function the environment lacks.
fn render_failed(env: &minijinja::Environment<'_>, error: &minijinja::Error) -> Problem {
    Problem::RenderFailed {
        message: match error.detail() {
            Some(detail) => format!("{}: {detail}", error.kind()),
            None => error.kind().to_string(),
        },
        meant: crate::templates::meant::meant(env, error),
        known: crate::templates::meant::known(env, error),
    }
}
