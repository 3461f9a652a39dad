//! promptc for Node.js: a workspace loaded once, compiled per request in-process
//! ([`promptc::Runtime`]). `index.js` wraps this module: it turns the errors thrown here into
//! `PromptcError`s carrying their diagnostics.
//!
//! Results are plain objects with camelCase keys, the same data as `promptc build --format
//! json`; what the workspace's authors wrote as data (tool definitions, parameter schemas,
//! model settings) keeps its own keys.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use napi::bindgen_prelude::{AsyncTask, Env, Error, ObjectFinalize, Result, Status, Task};
use napi_derive::napi;
use promptc::{AgentRequest, DiagnosticRecord, Failure, Part, Runtime, SharedCompiled};
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
    runtime: RwLock<Arc<Runtime>>,
}

#[napi]
impl Workspace {
    /// Loads the workspace in `dir` (the folder of its promptc.toml). Throws with every
    /// problem found, located.
    #[napi(factory)]
    pub fn load(dir: String) -> Result<Workspace> {
        let runtime = Runtime::load(&PathBuf::from(dir)).map_err(thrown)?;
        Ok(Workspace {
            // Absolute, so that a reload after the process changed its directory reads the
            // same folder.
            dir: runtime.root(),
            runtime: RwLock::new(Arc::new(runtime)),
        })
    }

    /// Reads the workspace's files again. On failure it throws, and the workspace keeps
    /// compiling as it was loaded before.
    #[napi]
    pub fn reload(&self) -> Result<()> {
        let fresh = Runtime::load(&self.dir).map_err(thrown)?;
        let mut current = self.runtime.write().unwrap_or_else(PoisonError::into_inner);
        *current = Arc::new(fresh);
        Ok(())
    }

    /// The folder the workspace was loaded from, made absolute.
    #[napi(getter)]
    pub fn root(&self) -> String {
        self.dir.display().to_string()
    }

    /// Warnings found while loading.
    #[napi(getter)]
    pub fn warnings(&self) -> Vec<Diagnostic> {
        self.current()
            .warnings()
            .iter()
            .map(Diagnostic::from)
            .collect()
    }

    /// The system prompt and native tool definitions for one request.
    #[napi(ts_args_type = "requestJson?: string")]
    pub fn compile(&self, env: Env, request: Option<String>) -> Result<CompileResult> {
        let request = agent_request(request)?;
        let response = self.current().compile_shared(&request).map_err(thrown)?;
        CompileResult::new(&env, response)
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
        let runtime = self.current();
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
            runtime: self.current(),
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

    /// The families with their versions, labels, tags and routing rules (`promptc list --format json`).
    #[napi(ts_return_type = "Array<Record<string, any>>")]
    pub fn families(&self) -> Value {
        camel_case(json(&self.current().families()))
    }

    /// A request's answer as promptc's JSON with camelCase keys.
    fn answer<T: Serialize>(
        &self,
        request: Option<String>,
        ask: impl FnOnce(&Runtime, &AgentRequest) -> std::result::Result<promptc::Response<T>, Failure>,
    ) -> Result<Value> {
        let request = agent_request(request)?;
        let response = ask(&self.current(), &request).map_err(thrown)?;
        Ok(camel_case(json(&response.value)))
    }

    fn current(&self) -> Arc<Runtime> {
        self.runtime
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
    runtime: Arc<Runtime>,
    request: AgentRequest,
}

impl Task for CompileTask {
    type Output = promptc::Response<SharedCompiled>;
    type JsValue = CompileResult;

    fn compute(&mut self) -> Result<Self::Output> {
        self.runtime.compile_shared(&self.request).map_err(thrown)
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        CompileResult::new(&env, output)
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
    /// Compile this variant (an id or `family@version`) instead of the routed one; given alone, without `family`, `label` or `tag`.
    pub variant: Option<String>,
    /// Within the family, the version this label names.
    pub label: Option<String>,
    /// Within the family, only variants carrying this tag.
    pub tag: Option<String>,
    /// The provider shape of native tool definitions (`openai`, `openai-responses`, `anthropic`, `gemini`); for a variant without native tools, a `dialect-unused` warning.
    pub dialect: Option<String>,
    /// Runtime placeholders that win over every other value.
    pub set: Option<HashMap<String, String>>,
    /// What a prompt over its variant's token budget is: a failure (`error`, the default), or the prompt with an `over-budget` warning (`warn`).
    #[napi(js_name = "over_budget", ts_type = "'error' | 'warn'")]
    pub over_budget: Option<String>,
}

/// A model as its provider names it.
#[napi(object)]
#[allow(dead_code)]
pub struct Model {
    pub id: Option<String>,
    pub provider: Option<String>,
}

/// The compiled prompt and its parts, each made into a JavaScript value when first read, so a
/// request pays only for the parts it reads.
///
/// N-API runs a result's finalizer only when the event loop turns: results compiled one after
/// another in synchronous code all stay alive until then. Their large parts are therefore
/// shared with other results wherever they are the same ([`Runtime::compile_shared`]), and
/// `index.js` keeps the JavaScript value made from each part by its number (`…Part`), giving
/// each result a copy.
#[napi(custom_finalize)]
pub struct CompileResult {
    compiled: SharedCompiled,
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
    fn new(env: &Env, response: promptc::Response<SharedCompiled>) -> Result<CompileResult> {
        let held = i64::try_from(response.value.fresh_bytes).unwrap_or(i64::MAX);
        if held > 0 {
            env.adjust_external_memory(held)?;
        }
        Ok(CompileResult {
            compiled: response.value,
            warnings: response.warnings,
            held,
        })
    }

    #[napi(getter)]
    pub fn family(&self) -> String {
        self.compiled.family.clone()
    }

    #[napi(getter)]
    pub fn variant(&self) -> String {
        self.compiled.variant.clone()
    }

    #[napi(getter)]
    pub fn version(&self) -> Option<String> {
        self.compiled.version.clone()
    }

    /// The final system prompt.
    #[napi(getter)]
    pub fn prompt(&self) -> String {
        self.compiled.prompt.value().clone()
    }

    /// The number of the prompt's part: the same for results with the same prompt.
    #[napi(getter)]
    pub fn prompt_part(&self) -> i64 {
        number(&self.compiled.prompt)
    }

    /// The number of the sections' part.
    #[napi(getter)]
    pub fn sections_part(&self) -> i64 {
        number(&self.compiled.sections)
    }

    /// The number of the tools' part.
    #[napi(getter)]
    pub fn tools_part(&self) -> i64 {
        number(&self.compiled.tools)
    }

    /// The number of the inputs' part.
    #[napi(getter)]
    pub fn inputs_part(&self) -> i64 {
        number(&self.compiled.inputs)
    }

    /// The number of the tool definitions' part, for variants with native tools.
    #[napi(getter)]
    pub fn tool_definitions_part(&self) -> Option<i64> {
        self.compiled.tool_definitions.as_deref().map(number)
    }

    /// The sections, as JSON text (see `tool_definitions_json`).
    #[napi(getter)]
    pub fn sections_json(&self) -> String {
        let sections: Vec<Section> = self
            .compiled
            .sections
            .value()
            .iter()
            .cloned()
            .map(Section::from)
            .collect();
        serde_json::to_string(&sections).unwrap_or_default()
    }

    /// The tools the prompt documents, in order, as JSON text (see `tool_definitions_json`).
    #[napi(getter)]
    pub fn tools_json(&self) -> String {
        let tools: Vec<Tool> = self
            .compiled
            .tools
            .value()
            .iter()
            .cloned()
            .map(Tool::from)
            .collect();
        serde_json::to_string(&tools).unwrap_or_default()
    }

    /// Model settings the variant carries (temperature, …), keys as written.
    #[napi(getter, ts_return_type = "Record<string, unknown>")]
    pub fn model(&self) -> Value {
        json(&self.compiled.model)
    }

    /// Workspace files the prompt was compiled from.
    #[napi(getter)]
    pub fn inputs(&self) -> Vec<String> {
        self.compiled.inputs.value().clone()
    }

    /// The provider shape of `toolDefinitions`, for variants with native tools.
    #[napi(getter)]
    pub fn dialect(&self) -> Option<String> {
        self.compiled.dialect.map(str::to_string)
    }

    /// Native tool definitions, ready for the provider's API, for variants with native tools,
    /// as JSON text. `index.js` parses the `…_json` texts into `toolDefinitions`, `sections`
    /// and `tools`: V8 parses JSON far faster than objects are built one call at a time.
    #[napi(getter)]
    pub fn tool_definitions_json(&self) -> Option<String> {
        let definitions = self.compiled.tool_definitions.as_ref()?;
        serde_json::to_string(definitions.value()).ok()
    }

    /// Warnings met on the way (a rules file left out, say).
    #[napi(getter)]
    pub fn warnings(&self) -> Vec<Diagnostic> {
        self.warnings.iter().map(Diagnostic::from).collect()
    }
}

/// A part's number as a JavaScript number (exact below 2^53 parts).
fn number<T>(part: &Part<T>) -> i64 {
    i64::try_from(part.number()).unwrap_or(i64::MAX)
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
            schema: (!parameter.schema.is_empty())
                .then(|| Value::Object(parameter.schema.to_map())),
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
    /// For a `more-problems` diagnostic: how many problems past the first 1,000 of a run
    /// (or a file's first 100) it stands for, which have no diagnostic of their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_shown: Option<NotShown>,
}

/// The errors and warnings a `more-problems` diagnostic counts.
#[napi(object)]
#[derive(Serialize)]
pub struct NotShown {
    pub errors: u32,
    pub warnings: u32,
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
            not_shown: record.not_shown.map(|counted| NotShown {
                errors: small(counted.errors),
                warnings: small(counted.warnings),
            }),
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
