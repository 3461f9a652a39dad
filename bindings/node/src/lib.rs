//! promptc for Node.js: a workspace loaded once, compiled per request in-process
//! ([`promptc::Runtime`]). `index.js` wraps this module: it turns the errors thrown here into
//! `PromptcError`s carrying their diagnostics.
//!
//! Results are plain objects with camelCase keys, the same data as `promptc build --format
//! json`; what the workspace's authors wrote as data (tool definitions, parameter schemas,
//! model settings) keeps its own keys.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use napi::bindgen_prelude::{AsyncTask, Env, Error, ObjectFinalize, Result, Status, Task};
use napi_derive::napi;
use promptc::{AgentRequest, Compiled, DiagnosticRecord, Failure, Runtime};
use serde::Serialize;
use serde_json::Value;

// Rust's allocations in this module (a compile makes many short-lived strings and values) go
// to mimalloc, as the command line's do; the host's own allocator is untouched.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The start of the message of every error promptc throws; JSON follows it.
const FAILURE_MARK: &str = "promptc-error:";

/// A workspace of variants, components and tools, loaded and validated once.
#[napi]
pub struct Workspace {
    dir: PathBuf,
    /// Replaced whole by `reload`; a compile in flight keeps the one it started with.
    loaded: RwLock<Arc<Loaded>>,
}

/// A loaded workspace and what its compiles leave for the next ones.
struct Loaded {
    runtime: Runtime,
    /// Per variant, the parts of its last compile, shared with every result whose parts are
    /// the same. One entry per variant of the workspace.
    shared: Mutex<HashMap<String, Shared>>,
}

/// The parts of a variant's last compile. An agent asks for the same variant and context again
/// and again: a result that made the same parts holds these, and what it made itself is freed
/// at once. Comparing costs a few microseconds; holding every result's own copy until V8
/// finalizes it (only when the event loop turns: never, in a loop of synchronous compiles)
/// leaves each compile fresh memory to fault in, and their JSON texts would be written again.
#[derive(Default)]
struct Shared {
    prompt: Option<Arc<Part<String>>>,
    sections: Option<Arc<Part<Vec<promptc::Section>>>>,
    tools: Option<Arc<Part<Vec<promptc::CompiledTool>>>>,
    inputs: Option<Arc<Part<Vec<String>>>>,
    definitions: Option<Arc<Part<Value>>>,
}

/// A part of a result; its number, the same for every result that shares it; and, from the
/// first time a result's reader asks for it, its JSON text. `index.js` keeps the JavaScript
/// value made from a part by its number, and gives each result a copy of it (or the string
/// itself: strings cannot be changed), where making the value again would cost more.
struct Part<T> {
    id: i64,
    value: T,
    json: OnceLock<String>,
}

/// The number of the next part made in this process (never reused, reloads included).
static NEXT_PART: AtomicI64 = AtomicI64::new(1);

impl<T: Serialize> Part<T> {
    fn new(value: T) -> Part<T> {
        Part {
            id: NEXT_PART.fetch_add(1, Ordering::Relaxed),
            value,
            json: OnceLock::new(),
        }
    }

    /// The part as JSON, in the shape `convert` gives it.
    fn json<U: Serialize>(&self, convert: impl FnOnce(&T) -> U) -> &str {
        self.json
            .get_or_init(|| serde_json::to_string(&convert(&self.value)).unwrap_or_default())
    }
}

/// The known part when `made` is the same, else `made`, now known. `fresh` counts the bytes
/// of parts that were not known.
fn share<T>(
    known: &mut Option<Arc<T>>,
    made: T,
    same: impl Fn(&T, &T) -> bool,
    bytes: impl Fn(&T) -> usize,
    fresh: &mut usize,
) -> Arc<T> {
    if let Some(known) = known.as_ref().filter(|known| same(known, &made)) {
        return known.clone();
    }
    *fresh += bytes(&made);
    let made = Arc::new(made);
    *known = Some(made.clone());
    made
}

impl Loaded {
    fn new(runtime: Runtime) -> Arc<Loaded> {
        Arc::new(Loaded {
            runtime,
            shared: Mutex::new(HashMap::new()),
        })
    }

    fn compile(&self, request: &AgentRequest) -> Result<promptc::Response<Compiled>> {
        self.runtime.compile(request).map_err(thrown)
    }

    fn result(&self, env: &Env, response: promptc::Response<Compiled>) -> Result<CompileResult> {
        let Compiled {
            family,
            variant,
            version,
            prompt,
            sections,
            tools,
            model,
            inputs,
            dialect,
            tool_definitions,
        } = response.value;
        let mut fresh = 0;
        let mut all = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        let known = all.entry(variant.clone()).or_default();
        let prompt = share(
            &mut known.prompt,
            Part::new(prompt),
            |a, b| a.value == b.value,
            |part| part.value.len(),
            &mut fresh,
        );
        let sections = share(
            &mut known.sections,
            Part::new(sections),
            |a, b| same_list(&a.value, &b.value, same_section),
            |part| sections_bytes(&part.value),
            &mut fresh,
        );
        let tools = share(
            &mut known.tools,
            Part::new(tools),
            |a, b| same_list(&a.value, &b.value, same_tool),
            |part| tools_bytes(&part.value),
            &mut fresh,
        );
        let inputs = share(
            &mut known.inputs,
            Part::new(inputs),
            |a, b| a.value == b.value,
            |part| part.value.iter().map(String::len).sum(),
            &mut fresh,
        );
        let definitions = tool_definitions.map(|definitions| {
            share(
                &mut known.definitions,
                Part::new(definitions),
                |a, b| same_json(&a.value, &b.value),
                |part| json_bytes(&part.value),
                &mut fresh,
            )
        });
        drop(all);
        let held = i64::try_from(fresh).unwrap_or(i64::MAX);
        if held > 0 {
            env.adjust_external_memory(held)?;
        }
        Ok(CompileResult {
            family,
            variant,
            version,
            prompt,
            sections,
            tools,
            model,
            inputs,
            dialect,
            definitions,
            warnings: response.warnings,
            held,
        })
    }
}

fn same_list<T>(a: &[T], b: &[T], same: impl Fn(&T, &T) -> bool) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
}

fn same_section(a: &promptc::Section, b: &promptc::Section) -> bool {
    // Every field named: a field added to `Section` does not compile until it is compared.
    let promptc::Section {
        id,
        slot,
        included,
        reason,
        template,
        source,
        text,
    } = a;
    *id == b.id
        && *slot == b.slot
        && *included == b.included
        && *reason == b.reason
        && *template == b.template
        && *source == b.source
        && *text == b.text
}

fn same_tool(a: &promptc::CompiledTool, b: &promptc::CompiledTool) -> bool {
    let promptc::CompiledTool {
        id,
        name,
        spec,
        source,
        description,
        parameters,
        item,
    } = a;
    *id == b.id
        && *name == b.name
        && *spec == b.spec
        && *source == b.source
        && *description == b.description
        && *item == b.item
        && same_list(parameters, &b.parameters, same_parameter)
}

fn same_parameter(a: &promptc::CompiledParameter, b: &promptc::CompiledParameter) -> bool {
    let promptc::CompiledParameter {
        name,
        required,
        kind,
        instruction,
        usage,
        note,
        schema,
    } = a;
    *name == b.name
        && *required == b.required
        && *kind == b.kind
        && *instruction == b.instruction
        && *usage == b.usage
        && *note == b.note
        && same_map(schema, &b.schema)
}

fn same_map(a: &serde_json::Map<String, Value>, b: &serde_json::Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same_json(va, vb))
}

/// About the bytes a JSON value holds in memory.
fn json_bytes(value: &Value) -> usize {
    match value {
        Value::String(text) => 32 + text.len(),
        Value::Array(items) => 32 + items.iter().map(json_bytes).sum::<usize>(),
        Value::Object(fields) => {
            64 + fields
                .iter()
                .map(|(key, value)| key.len() + json_bytes(value))
                .sum::<usize>()
        }
        _ => 16,
    }
}

/// Whether two JSON values are written the same: as `==`, but maps must also list their keys in
/// the same order (`==` on maps ignores order, and the text would differ).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => same_map(a, b),
        (Value::Array(a), Value::Array(b)) => same_list(a, b, same_json),
        // `==` holds for 0.0 and -0.0, which are written differently.
        (Value::Number(a), Value::Number(b)) => {
            a == b && a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits)
        }
        (a, b) => a == b,
    }
}

#[napi]
impl Workspace {
    /// Loads the workspace in `dir` (the folder of its promptc.toml). Throws with every
    /// problem found, located.
    #[napi(factory)]
    pub fn load(dir: String) -> Result<Workspace> {
        let dir = PathBuf::from(dir);
        let runtime = Runtime::load(&dir).map_err(thrown)?;
        Ok(Workspace {
            dir,
            loaded: RwLock::new(Loaded::new(runtime)),
        })
    }

    /// Reads the workspace's files again. On failure it throws, and the workspace keeps
    /// compiling as it was loaded before.
    #[napi]
    pub fn reload(&self) -> Result<()> {
        let fresh = Runtime::load(&self.dir).map_err(thrown)?;
        let mut current = self.loaded.write().unwrap_or_else(PoisonError::into_inner);
        *current = Loaded::new(fresh);
        Ok(())
    }

    /// The folder the workspace was loaded from.
    #[napi(getter)]
    pub fn root(&self) -> String {
        self.dir.display().to_string()
    }

    /// Warnings found while loading.
    #[napi(getter)]
    pub fn warnings(&self) -> Vec<Diagnostic> {
        self.current()
            .runtime
            .warnings()
            .iter()
            .map(Diagnostic::from)
            .collect()
    }

    /// The system prompt and native tool definitions for one request.
    #[napi(ts_args_type = "requestJson?: string")]
    pub fn compile(&self, env: Env, request: Option<String>) -> Result<CompileResult> {
        let request = agent_request(request)?;
        let loaded = self.current();
        let response = loaded.compile(&request)?;
        loaded.result(&env, response)
    }

    /// The median time, in microseconds, of `runs` compiles of `request` by the Rust library
    /// alone in this process, with nothing converted: the baseline `bench/compile.mjs` sets
    /// the package's own figures against. Not part of the API.
    #[napi(
        js_name = "_benchLibraryCompile",
        ts_args_type = "requestJson: string | undefined, runs: number"
    )]
    pub fn bench_library_compile(&self, request: Option<String>, runs: u32) -> Result<f64> {
        let request = agent_request(request)?;
        let loaded = self.current();
        let runtime = &loaded.runtime;
        let mut samples = Vec::with_capacity(runs as usize);
        for _ in 0..runs.max(1) {
            let start = std::time::Instant::now();
            let response = runtime.compile(&request).map_err(thrown)?;
            drop(response);
            samples.push(start.elapsed().as_secs_f64() * 1e6);
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[samples.len() / 2])
    }

    /// `compile` on a worker thread: many requests compile at once without blocking the
    /// event loop.
    #[napi(
        ts_args_type = "requestJson?: string",
        ts_return_type = "Promise<CompileResult>"
    )]
    pub fn compile_async(&self, request: Option<String>) -> Result<AsyncTask<CompileTask>> {
        Ok(AsyncTask::new(CompileTask {
            loaded: self.current(),
            request: agent_request(request)?,
        }))
    }

    /// Why each component and tool is in the prompt or not (`promptc explain --format json`).
    #[napi(
        ts_args_type = "requestJson?: string",
        ts_return_type = "Record<string, any>"
    )]
    pub fn explain(&self, request: Option<String>) -> Result<Value> {
        self.answer(request, Runtime::explain)
    }

    /// Tokens, characters, budget and stable prefix of the request's prompt, per section too
    /// (`promptc stats --format json`).
    #[napi(
        ts_args_type = "requestJson?: string",
        ts_return_type = "Record<string, any>"
    )]
    pub fn stats(&self, request: Option<String>) -> Result<Value> {
        self.answer(request, Runtime::stats)
    }

    /// The family, version and variant that serve the request's model, and the rule that
    /// chose them (`promptc route --format json`).
    #[napi(
        ts_args_type = "requestJson?: string",
        ts_return_type = "Record<string, any>"
    )]
    pub fn route(&self, request: Option<String>) -> Result<Value> {
        self.answer(request, Runtime::route)
    }

    /// The families, their versions and the models routed to each (`promptc route --list`).
    #[napi(ts_return_type = "Array<Record<string, any>>")]
    pub fn families(&self) -> Value {
        camel_case(json(&self.current().runtime.families()))
    }

    /// A request's answer as promptc's JSON with camelCase keys.
    fn answer<T: Serialize>(
        &self,
        request: Option<String>,
        ask: impl FnOnce(&Runtime, &AgentRequest) -> std::result::Result<promptc::Response<T>, Failure>,
    ) -> Result<Value> {
        let request = agent_request(request)?;
        let response = ask(&self.current().runtime, &request).map_err(thrown)?;
        Ok(camel_case(json(&response.value)))
    }

    fn current(&self) -> Arc<Loaded> {
        self.loaded
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The version of promptc this package carries.
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

pub struct CompileTask {
    loaded: Arc<Loaded>,
    request: AgentRequest,
}

impl Task for CompileTask {
    type Output = promptc::Response<Compiled>;
    type JsValue = CompileResult;

    fn compute(&mut self) -> Result<Self::Output> {
        self.loaded.compile(&self.request)
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        self.loaded.result(&env, output)
    }
}

/// What `compile` takes. The object itself is read by promptc, which refuses unknown keys:
/// this declares its TypeScript type.
#[napi(object)]
#[allow(dead_code)]
pub struct CompileRequest {
    /// The model in hand: routing picks the family for it, and it becomes the context's
    /// `model`.
    pub model: Option<Model>,
    /// The context's fields as in a context file (`cwd`, `mode`, `mcp_servers`, `date`, …;
    /// keys as in the schema), or the name of one of the workspace's contexts. Its
    /// `rules_from` folders are the caller's and may lie anywhere.
    #[napi(ts_type = "Record<string, unknown> | string")]
    pub context: Option<Value>,
    /// Compile this family instead of the routed one.
    pub family: Option<String>,
    /// Compile this variant (an id or `family@version`) instead of the routed one.
    pub variant: Option<String>,
    /// Within the family, the version this label names.
    pub label: Option<String>,
    /// Within the family, only variants carrying this tag.
    pub tag: Option<String>,
    /// The provider shape of native tool definitions (`openai`, `anthropic`, `gemini`).
    pub dialect: Option<String>,
    /// Runtime placeholders that win over every other value.
    pub set: Option<HashMap<String, String>>,
}

/// A model as its provider names it.
#[napi(object)]
#[allow(dead_code)]
pub struct Model {
    pub id: Option<String>,
    pub provider: Option<String>,
}

/// The compiled prompt and its parts, each made into a JavaScript value when first read
/// (`index.js` keeps what it read), so a request pays only for the parts it reads. The large
/// parts are shared with the results of other compiles that made the same (see `Shared`).
#[napi(custom_finalize)]
pub struct CompileResult {
    family: String,
    variant: String,
    version: Option<String>,
    prompt: Arc<Part<String>>,
    sections: Arc<Part<Vec<promptc::Section>>>,
    tools: Arc<Part<Vec<promptc::CompiledTool>>>,
    model: promptc::model::ModelConfig,
    inputs: Arc<Part<Vec<String>>>,
    dialect: Option<&'static str>,
    definitions: Option<Arc<Part<Value>>>,
    warnings: Vec<DiagnosticRecord>,
    /// About the bytes of the parts this result made itself, told to V8: without it the
    /// garbage collector sees small objects, and finished results pile up in native memory
    /// between collections.
    held: i64,
}

impl ObjectFinalize for CompileResult {
    fn finalize(self, env: Env) -> Result<()> {
        if self.held > 0 {
            env.adjust_external_memory(-self.held)?;
        }
        Ok(())
    }
}

#[napi]
impl CompileResult {
    #[napi(getter)]
    pub fn family(&self) -> String {
        self.family.clone()
    }

    #[napi(getter)]
    pub fn variant(&self) -> String {
        self.variant.clone()
    }

    #[napi(getter)]
    pub fn version(&self) -> Option<String> {
        self.version.clone()
    }

    /// The final system prompt.
    #[napi(getter)]
    pub fn prompt(&self) -> String {
        self.prompt.value.clone()
    }

    /// The number of the prompt's part: the same for results with the same prompt.
    #[napi(getter)]
    pub fn prompt_part(&self) -> i64 {
        self.prompt.id
    }

    /// The number of the sections' part.
    #[napi(getter)]
    pub fn sections_part(&self) -> i64 {
        self.sections.id
    }

    /// The number of the tools' part.
    #[napi(getter)]
    pub fn tools_part(&self) -> i64 {
        self.tools.id
    }

    /// The number of the inputs' part.
    #[napi(getter)]
    pub fn inputs_part(&self) -> i64 {
        self.inputs.id
    }

    /// The number of the tool definitions' part, for variants with native tools.
    #[napi(getter)]
    pub fn tool_definitions_part(&self) -> Option<i64> {
        self.definitions.as_ref().map(|part| part.id)
    }

    /// The sections, as JSON text (see `tool_definitions_json`).
    #[napi(getter)]
    pub fn sections_json(&self) -> String {
        let convert = |sections: &Vec<promptc::Section>| {
            sections
                .iter()
                .cloned()
                .map(Section::from)
                .collect::<Vec<_>>()
        };
        self.sections.json(convert).to_string()
    }

    /// The tools the prompt documents, in order, as JSON text (see `tool_definitions_json`).
    #[napi(getter)]
    pub fn tools_json(&self) -> String {
        let convert = |tools: &Vec<promptc::CompiledTool>| {
            tools.iter().cloned().map(Tool::from).collect::<Vec<_>>()
        };
        self.tools.json(convert).to_string()
    }

    /// Model settings the variant carries (temperature, …), keys as written.
    #[napi(getter, ts_return_type = "Record<string, unknown>")]
    pub fn model(&self) -> Value {
        json(&self.model)
    }

    /// Workspace files the prompt was compiled from.
    #[napi(getter)]
    pub fn inputs(&self) -> Vec<String> {
        self.inputs.value.clone()
    }

    /// The provider shape of `toolDefinitions`, for variants with native tools.
    #[napi(getter)]
    pub fn dialect(&self) -> Option<String> {
        self.dialect.map(str::to_string)
    }

    /// Native tool definitions, ready for the provider's API, for variants with native tools,
    /// as JSON text. `index.js` parses the `…_json` texts into `toolDefinitions`, `sections`
    /// and `tools`: V8 parses JSON far faster than objects are built one call at a time.
    #[napi(getter)]
    pub fn tool_definitions_json(&self) -> Option<String> {
        let definitions = self.definitions.as_ref()?;
        Some(definitions.json(Value::clone).to_string())
    }

    /// Warnings met on the way (a rules file left out, say).
    #[napi(getter)]
    pub fn warnings(&self) -> Vec<Diagnostic> {
        self.warnings.iter().map(Diagnostic::from).collect()
    }
}

fn sections_bytes(sections: &[promptc::Section]) -> usize {
    sections.iter().map(|section| section.text.len() + 64).sum()
}

/// A tool's description and, for its parameters, an estimate of their texts and schema.
fn tools_bytes(tools: &[promptc::CompiledTool]) -> usize {
    tools
        .iter()
        .map(|tool| tool.description.len() + 256 * tool.parameters.len())
        .sum()
}

/// One section of the prompt: a component's output, or why it is empty.
#[napi(object)]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Section {
    pub id: String,
    pub slot: String,
    pub included: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRange>,
    pub text: String,
}

impl From<promptc::Section> for Section {
    fn from(section: promptc::Section) -> Section {
        Section {
            id: section.id,
            slot: section.slot,
            included: section.included,
            reason: section.reason,
            template: section.template,
            source: section.source.map(SourceRange::from),
            text: section.text,
        }
    }
}

/// Lines of a workspace file.
#[napi(object)]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceRange {
    pub file: String,
    pub first_line: u32,
    pub last_line: u32,
}

impl From<promptc::SourceRange> for SourceRange {
    fn from(range: promptc::SourceRange) -> SourceRange {
        SourceRange {
            file: range.file,
            first_line: small(range.first_line),
            last_line: small(range.last_line),
        }
    }
}

/// A tool the prompt documents.
#[napi(object)]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub id: String,
    pub name: String,
    pub spec: String,
    pub source: SourceRange,
    pub description: String,
    pub parameters: Vec<Parameter>,
    /// For a tool made per item of runtime data, the item's index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<u32>,
}

impl From<promptc::CompiledTool> for Tool {
    fn from(tool: promptc::CompiledTool) -> Tool {
        Tool {
            id: tool.id,
            name: tool.name,
            spec: tool.spec,
            source: SourceRange::from(tool.source),
            description: tool.description,
            parameters: tool.parameters.into_iter().map(Parameter::from).collect(),
            item: tool.item.map(small),
        }
    }
}

#[napi(object)]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Parameter {
    pub name: String,
    pub required: bool,
    #[napi(js_name = "type")]
    #[serde(rename = "type")]
    pub kind: String,
    pub instruction: String,
    pub usage: String,
    pub note: String,
    /// JSON Schema keywords of the parameter, keys as written.
    #[napi(ts_type = "Record<string, unknown>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
}

impl From<promptc::CompiledParameter> for Parameter {
    fn from(parameter: promptc::CompiledParameter) -> Parameter {
        Parameter {
            name: parameter.name,
            required: parameter.required,
            kind: parameter.kind,
            instruction: parameter.instruction,
            usage: parameter.usage,
            note: parameter.note,
            schema: (!parameter.schema.is_empty()).then(|| Value::Object(parameter.schema)),
        }
    }
}

/// A problem, where it is and what would fix it. `file`, `line` and `column` are absent for
/// a problem of the request itself.
#[napi(object)]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// `error` or `warning`.
    pub severity: String,
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    pub notes: Vec<String>,
}

impl From<&DiagnosticRecord> for Diagnostic {
    fn from(record: &DiagnosticRecord) -> Diagnostic {
        let at = record.location.as_ref();
        Diagnostic {
            severity: record.severity.to_string(),
            code: record.code.to_string(),
            message: record.message.clone(),
            help: record.help.clone(),
            file: at.map(|at| at.file.clone()),
            line: at.map(|at| small(at.line)),
            column: at.map(|at| small(at.column)),
            end_line: at.map(|at| small(at.end_line)),
            end_column: at.map(|at| small(at.end_column)),
            notes: record.notes.clone(),
        }
    }
}

/// A request from the JSON text `index.js` makes of it with `JSON.stringify`: V8 writes a
/// whole object as JSON in a fraction of the time N-API takes to read it one property at a time.
fn agent_request(request: Option<String>) -> Result<AgentRequest> {
    match request {
        None => Ok(AgentRequest::default()),
        Some(text) => AgentRequest::from_json_text(&text).map_err(thrown),
    }
}

/// A failure as the error `index.js` turns into a `PromptcError`.
fn thrown(failure: Failure) -> Error {
    let diagnostics: Vec<Diagnostic> = failure.diagnostics.iter().map(Diagnostic::from).collect();
    let body = serde_json::json!({ "message": failure.to_string(), "diagnostics": diagnostics });
    Error::new(Status::GenericFailure, format!("{FAILURE_MARK}{body}"))
}

fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn small(number: usize) -> u32 {
    u32::try_from(number).unwrap_or(u32::MAX)
}

/// Keys whose values are data written by a workspace's authors or its users: their own keys
/// stay as they are.
const DATA_KEYS: [&str; 4] = ["tool_definitions", "schema", "extra", "values"];

/// The keys of promptc's own JSON in JavaScript's case (`first_line` → `firstLine`).
fn camel_case(value: Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| {
                    let value = if DATA_KEYS.contains(&key.as_str()) {
                        value
                    } else {
                        camel_case(value)
                    };
                    (camel(&key), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(camel_case).collect()),
        other => other,
    }
}

fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
