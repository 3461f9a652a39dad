//! promptc for Python: a workspace loaded once, compiled per request in-process
//! ([`promptc::Runtime`]). The package `promptc_runtime` re-exports this module; its types are
//! described in `_native.pyi`.
//!
//! Results keep promptc's own JSON keys, which are already Python's case (`tool_definitions`,
//! `first_line`): the same data as `promptc build --format json`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use promptc::{
    AgentRequest, DiagnosticRecord, Failure, NotData, Part, REQUEST_DEPTH, Runtime, SharedCompiled,
    Step,
};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::Serialize;
use serde_json::Value;

// Rust's allocations in this module (a compile makes many short-lived strings and values) go
// to mimalloc, as the command line's do; the host's own allocator is untouched.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pyo3::create_exception!(
    promptc_runtime,
    PromptcError,
    PyException,
    "What every failing call raises: the first error in its message, all of them in `diagnostics`."
);

/// A workspace of variants, components and tools, loaded and validated once.
#[pyclass(frozen, module = "promptc_runtime")]
struct Workspace {
    dir: PathBuf,
    /// Replaced whole by `reload`; a compile in flight keeps the one it started with.
    runtime: RwLock<Arc<Runtime>>,
    /// The Python values made from the parts results share.
    parts: Arc<PartValues>,
}

#[pymethods]
impl Workspace {
    /// Loads the workspace in `dir` (the folder of its promptc.toml). Raises `PromptcError`
    /// with every problem found, located.
    #[staticmethod]
    fn load(py: Python<'_>, dir: PathBuf) -> PyResult<Workspace> {
        let runtime = py
            .detach(|| Runtime::load(&dir))
            .map_err(|failure| raised(py, failure))?;
        Ok(Workspace {
            // Absolute, so that a reload after the process changed its directory reads the
            // same folder.
            dir: runtime.root(),
            runtime: RwLock::new(Arc::new(runtime)),
            parts: Arc::default(),
        })
    }

    /// Reads the workspace's files again. On failure it raises, and the workspace keeps
    /// compiling as it was loaded before.
    fn reload(&self, py: Python<'_>) -> PyResult<()> {
        let fresh = py
            .detach(|| Runtime::load(&self.dir))
            .map_err(|failure| raised(py, failure))?;
        let mut current = self.runtime.write().unwrap_or_else(PoisonError::into_inner);
        *current = Arc::new(fresh);
        self.parts.clear();
        Ok(())
    }

    /// The folder the workspace was loaded from, made absolute.
    #[getter]
    fn root(&self) -> PathBuf {
        self.dir.clone()
    }

    /// Warnings found while loading.
    #[getter]
    fn warnings(&self) -> Vec<Diagnostic> {
        self.current()
            .warnings()
            .iter()
            .map(Diagnostic::from)
            .collect()
    }

    /// The system prompt and native tool definitions for one request. The GIL is released
    /// while it compiles, so threads compile at once.
    #[pyo3(signature = (**request))]
    fn compile(
        &self,
        py: Python<'_>,
        request: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<CompileResult> {
        let request = agent_request(py, request)?;
        let runtime = self.current();
        let response = py
            .detach(|| runtime.compile_shared(&request))
            .map_err(|failure| raised(py, failure))?;
        Ok(CompileResult::new(response, self.parts.clone()))
    }

    /// Why each component and tool is in the prompt or not (`promptc explain --format json`).
    #[pyo3(signature = (**request))]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        request: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, request, Runtime::explain)
    }

    /// Tokens, characters, budget and stable prefix of the request's prompt, per section too
    /// (`promptc stats --format json`).
    #[pyo3(signature = (**request))]
    fn stats<'py>(
        &self,
        py: Python<'py>,
        request: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, request, Runtime::stats)
    }

    /// The family, version and variant that serve a model, and the rule that chose them
    /// (`promptc route --format json`).
    #[pyo3(signature = (**request))]
    fn route<'py>(
        &self,
        py: Python<'py>,
        request: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, request, Runtime::route)
    }

    /// The median time, in microseconds, of `runs` compiles of a request by the Rust library
    /// alone in this process, with nothing converted: the baseline `bench/compile.py` sets
    /// the package's own figures against. Not part of the API.
    #[pyo3(signature = (runs, **request))]
    fn _bench_library_compile(
        &self,
        py: Python<'_>,
        runs: usize,
        request: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<f64> {
        let request = agent_request(py, request)?;
        let runtime = self.current();
        let mut samples = Vec::with_capacity(runs.max(1));
        for _ in 0..runs.max(1) {
            let start = std::time::Instant::now();
            let response = runtime
                .compile(&request)
                .map_err(|failure| raised(py, failure))?;
            drop(response);
            samples.push(start.elapsed().as_secs_f64() * 1e6);
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[samples.len() / 2])
    }

    /// The families with their versions, labels, tags and routing rules (`promptc list --format json`).
    fn families<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        python(py, &self.current().families())
    }

    fn __repr__(&self) -> String {
        format!("Workspace.load({:?})", self.dir.display().to_string())
    }
}

impl Workspace {
    /// A request's answer as promptc's JSON, made into Python values; the GIL is released
    /// while promptc works.
    fn answer<'py, T: Serialize + Send>(
        &self,
        py: Python<'py>,
        request: Option<&Bound<'py, PyDict>>,
        ask: impl FnOnce(&Runtime, &AgentRequest) -> Result<promptc::Response<T>, Failure> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = agent_request(py, request)?;
        let runtime = self.current();
        let response = py
            .detach(|| ask(&runtime, &request))
            .map_err(|failure| raised(py, failure))?;
        python(py, &response.value)
    }

    fn current(&self) -> Arc<Runtime> {
        self.runtime
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// A request's keyword arguments, read by promptc, which refuses unknown keys and values of
/// the wrong type, naming them.
fn agent_request(py: Python<'_>, request: Option<&Bound<'_, PyDict>>) -> PyResult<AgentRequest> {
    let Some(request) = request else {
        return Ok(AgentRequest::default());
    };
    let value = pythonize::depythonize::<Value>(&plain(request.as_any())?).map_err(|error| {
        raised(
            py,
            Failure::invalid_request(format!(
                "a value that is not data (str, int, float, bool, None, list, dict): {error}"
            )),
        )
    })?;
    AgentRequest::from_json(value).map_err(|failure| raised(py, failure))
}

/// A copy of `value`: new dicts and lists, each other value as it is. The value is promptc's
/// own, as deep as the request and workspace data it was made from allowed.
fn rebuilt<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    if let Ok(dict) = value.cast::<PyDict>() {
        let out = PyDict::new(py);
        for (key, item) in dict.iter() {
            out.set_item(key, rebuilt(&item)?)?;
        }
        return Ok(out.into_any());
    }
    if let Ok(list) = value.cast::<PyList>() {
        let items = list
            .iter()
            .map(|item| rebuilt(&item))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(PyList::new(py, items)?.into_any());
    }
    Ok(value.clone())
}

/// Why a request's value was not made plain: one promptc refuses, at the steps from it back
/// to the request's top (gathered as the refusal goes up, so a request that is data pays
/// nothing for them), or an error of Python's own.
enum Refusal {
    NotData(Vec<Step>, NotData),
    Python(PyErr),
}

impl From<PyErr> for Refusal {
    fn from(error: PyErr) -> Refusal {
        Refusal::Python(error)
    }
}

impl Refusal {
    fn under(self, step: impl FnOnce() -> Step) -> Refusal {
        match self {
            Refusal::NotData(mut steps, what) => {
                steps.push(step());
                Refusal::NotData(steps, what)
            }
            python => python,
        }
    }
}

/// A request's value as data: new dicts and lists (a tuple made a list), every path
/// (`pathlib.Path`, as `rules_from` folders often are) its string. What JSON cannot carry as
/// written (a NaN, an int past 64 bits, a set, a key that is no string) and lists and dicts
/// nested [`REQUEST_DEPTH`] levels deep, or holding themselves, are refused at their place:
/// made into JSON, a NaN became `null` and a request other than the one written.
fn plain<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    plain_at(value, 1).map_err(|refusal| match refusal {
        Refusal::NotData(mut steps, what) => {
            steps.reverse();
            raised(value.py(), Failure::not_data(&steps, what))
        }
        Refusal::Python(error) => error,
    })
}

fn plain_at<'py>(value: &Bound<'py, PyAny>, level: usize) -> Result<Bound<'py, PyAny>, Refusal> {
    let py = value.py();
    let refused = |what| Err(Refusal::NotData(Vec::new(), what));
    // Data, the common case, first.
    if value.is_none() || value.is_instance_of::<PyString>() || value.is_instance_of::<PyBool>() {
        return Ok(value.clone());
    }
    if let Ok(number) = value.cast::<PyFloat>() {
        if !number.value().is_finite() {
            return refused(NotData::Number(value.repr()?.to_string()));
        }
        return Ok(value.clone());
    }
    if value.is_instance_of::<PyInt>() {
        if value.extract::<i64>().is_err() && value.extract::<u64>().is_err() {
            return refused(NotData::Number(value.repr()?.to_string()));
        }
        return Ok(value.clone());
    }
    let nested = value.is_instance_of::<PyDict>()
        || value.is_instance_of::<PyList>()
        || value.is_instance_of::<PyTuple>();
    if nested && level >= REQUEST_DEPTH {
        return refused(NotData::TooDeep);
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let out = PyDict::new(py);
        for (key, item) in dict.iter() {
            let Ok(name) = key.cast::<PyString>() else {
                return refused(NotData::Key(key.get_type().name()?.to_string()));
            };
            let item = plain_at(&item, level + 1)
                .map_err(|refusal| refusal.under(|| Step::Key(name.to_string())))?;
            out.set_item(&key, item)?;
        }
        return Ok(out.into_any());
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value
            .try_iter()?
            .enumerate()
            .map(|(index, item)| {
                plain_at(&item?, level + 1).map_err(|refusal| refusal.under(|| Step::Index(index)))
            })
            .collect::<Result<Vec<_>, Refusal>>()?;
        return Ok(PyList::new(py, items)?.into_any());
    }
    // A mapping that is no dict (`types.MappingProxyType`, a `UserDict`) is read as a dict,
    // and a sequence that is no list (a `UserList`) as a list. Bytes are no text, and a
    // `range` holds what it makes, not data (`range(10**12)` is a few bytes): both refused.
    let abc = py.import("collections.abc")?;
    let builtins = py.import("builtins")?;
    if value.is_instance(&abc.getattr("Mapping")?)? {
        return plain_at(&builtins.getattr("dict")?.call1((value,))?, level);
    }
    let not_data = value.is_instance_of::<pyo3::types::PyBytes>()
        || value.is_instance_of::<pyo3::types::PyByteArray>()
        || value.is_instance_of::<pyo3::types::PyRange>();
    if !not_data && value.is_instance(&abc.getattr("Sequence")?)? {
        return plain_at(&builtins.getattr("list")?.call1((value,))?, level);
    }
    let os = py.import("os")?;
    if value.is_instance(&os.getattr("PathLike")?)? {
        let text = os.getattr("fspath")?.call1((value,))?;
        if text.is_instance_of::<PyString>() {
            return Ok(text);
        }
        return refused(NotData::Kind(text.get_type().name()?.to_string()));
    }
    refused(NotData::Kind(value.get_type().name()?.to_string()))
}

/// The compiled prompt and its parts, each made into a Python value when first read, then kept:
/// a request pays only for what it reads. The large parts are shared with other results
/// wherever they are the same ([`Runtime::compile_shared`]), and the Python value made from
/// each is kept by the workspace: a result gets a copy of it (a string as it is, since strings
/// cannot change), which takes a fraction of the time making it again would.
#[pyclass(frozen, module = "promptc_runtime")]
struct CompileResult {
    compiled: SharedCompiled,
    warnings: Vec<DiagnosticRecord>,
    parts: Arc<PartValues>,
    prompt: PyOnceLock<Py<PyAny>>,
    sections: PyOnceLock<Py<PyAny>>,
    tools: PyOnceLock<Py<PyAny>>,
    inputs: PyOnceLock<Py<PyAny>>,
    model: PyOnceLock<Py<PyAny>>,
    tool_definitions: PyOnceLock<Py<PyAny>>,
}

impl CompileResult {
    fn new(response: promptc::Response<SharedCompiled>, parts: Arc<PartValues>) -> CompileResult {
        CompileResult {
            compiled: response.value,
            warnings: response.warnings,
            parts,
            prompt: PyOnceLock::new(),
            sections: PyOnceLock::new(),
            tools: PyOnceLock::new(),
            inputs: PyOnceLock::new(),
            model: PyOnceLock::new(),
            tool_definitions: PyOnceLock::new(),
        }
    }

    /// A shared part as this result's Python value: a copy of the workspace's, made on the
    /// first read, then kept.
    fn shared<'py, T: Serialize>(
        &self,
        py: Python<'py>,
        cell: &PyOnceLock<Py<PyAny>>,
        part: &Part<T>,
    ) -> PyResult<Bound<'py, PyAny>> {
        cell.get_or_try_init(py, || {
            let value = self
                .parts
                .value(py, part.number(), || python(py, part.value()))?;
            copy(&value).map(Bound::unbind)
        })
        .map(|value| value.bind(py).clone())
    }
}

/// A part of a result as a Python value, made on its first read.
fn kept<'py, T: Serialize>(
    py: Python<'py>,
    cell: &PyOnceLock<Py<PyAny>>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    cell.get_or_try_init(py, || python(py, value).map(Bound::unbind))
        .map(|value| value.bind(py).clone())
}

/// The Python values made from shared parts, by part number: the 128 used most recently. A
/// value is never given out itself, only copies.
#[derive(Default)]
struct PartValues {
    values: Mutex<HashMap<u64, (Py<PyAny>, u64)>>,
    /// Counts uses, to find the value used least recently.
    uses: AtomicU64,
}

const PARTS_KEPT: usize = 128;

impl PartValues {
    fn value<'py>(
        &self,
        py: Python<'py>,
        number: u64,
        make: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let now = self.uses.fetch_add(1, Ordering::Relaxed);
        if let Some((value, used)) = self.lock().get_mut(&number) {
            *used = now;
            return Ok(value.bind(py).clone());
        }
        // Made without the lock held: making a value runs Python.
        let value = make()?;
        let mut values = self.lock();
        if values.len() >= PARTS_KEPT {
            let oldest = values
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(number, _)| *number);
            if let Some(oldest) = oldest {
                values.remove(&oldest);
            }
        }
        values.insert(number, (value.clone().unbind(), now));
        Ok(value)
    }

    fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, (Py<PyAny>, u64)>> {
        self.values.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A copy of a value made from JSON: new dicts and lists, the same strings and numbers (which
/// cannot change). The value is promptc's own, as deep as the request and workspace data it
/// was made from allowed.
fn copy<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    rebuilt(value)
}

#[pymethods]
impl CompileResult {
    #[getter]
    fn family(&self) -> &str {
        &self.compiled.family
    }

    #[getter]
    fn variant(&self) -> &str {
        &self.compiled.variant
    }

    #[getter]
    fn version(&self) -> Option<&str> {
        self.compiled.version.as_deref()
    }

    /// The final system prompt.
    #[getter]
    fn prompt<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let part = &self.compiled.prompt;
        self.prompt
            .get_or_try_init(py, || {
                self.parts
                    .value(py, part.number(), || {
                        Ok(PyString::new(py, part.value()).into_any())
                    })
                    .map(Bound::unbind)
            })
            .map(|value| value.bind(py).clone())
    }

    #[getter]
    fn sections<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.shared(py, &self.sections, &self.compiled.sections)
    }

    /// The tools the prompt documents, in order.
    #[getter]
    fn tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.shared(py, &self.tools, &self.compiled.tools)
    }

    /// Model settings the variant carries (temperature, …).
    #[getter]
    fn model<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        kept(py, &self.model, &self.compiled.model)
    }

    /// Workspace files the prompt was compiled from.
    #[getter]
    fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.shared(py, &self.inputs, &self.compiled.inputs)
    }

    /// The provider shape of `tool_definitions`, for variants with native tools.
    #[getter]
    fn dialect(&self) -> Option<&str> {
        self.compiled.dialect
    }

    /// Native tool definitions, ready for the provider's API, for variants with native tools.
    #[getter]
    fn tool_definitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.compiled.tool_definitions {
            Some(part) => self.shared(py, &self.tool_definitions, part),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// Warnings met on the way (a rules file left out, say).
    #[getter]
    fn warnings(&self) -> Vec<Diagnostic> {
        self.warnings.iter().map(Diagnostic::from).collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "CompileResult(family={:?}, variant={:?}, prompt=<{} characters>)",
            self.compiled.family,
            self.compiled.variant,
            self.compiled.prompt.value().chars().count()
        )
    }
}

/// A problem, where it is and what would fix it. `file`, `line` and `column` are None for a
/// problem of the request itself.
#[pyclass(frozen, module = "promptc_runtime", get_all, skip_from_py_object)]
#[derive(Clone)]
struct Diagnostic {
    /// `error` or `warning`.
    severity: String,
    code: String,
    message: String,
    help: Option<String>,
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    notes: Vec<String>,
    /// For a `more-problems` diagnostic: how many problems past the first 1,000 of a run (or
    /// a file's first 100) it stands for, which have no diagnostic of their own.
    not_shown: Option<NotShown>,
}

/// The errors and warnings a `more-problems` diagnostic counts.
#[pyclass(frozen, module = "promptc_runtime", get_all, skip_from_py_object)]
#[derive(Clone)]
struct NotShown {
    errors: usize,
    warnings: usize,
}

#[pymethods]
impl NotShown {
    fn __repr__(&self) -> String {
        format!(
            "NotShown(errors={}, warnings={})",
            self.errors, self.warnings
        )
    }
}

#[pymethods]
impl Diagnostic {
    fn __repr__(&self) -> String {
        match (&self.file, self.line, self.column) {
            (Some(file), Some(line), Some(column)) => format!(
                "Diagnostic({}: {file}:{line}:{column}: {})",
                self.code, self.message
            ),
            _ => format!("Diagnostic({}: {})", self.code, self.message),
        }
    }
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
            line: at.map(|at| at.line),
            column: at.map(|at| at.column),
            end_line: at.map(|at| at.end_line),
            end_column: at.map(|at| at.end_column),
            notes: record.notes.clone(),
            not_shown: record.not_shown.map(|counted| NotShown {
                errors: counted.errors,
                warnings: counted.warnings,
            }),
        }
    }
}

/// A failure as a `PromptcError`, its diagnostics in `.diagnostics`.
fn raised(py: Python<'_>, failure: Failure) -> PyErr {
    let error = PromptcError::new_err(failure.to_string());
    let diagnostics: Vec<Diagnostic> = failure.diagnostics.iter().map(Diagnostic::from).collect();
    if let Err(unset) = error.value(py).setattr("diagnostics", diagnostics) {
        return unset;
    }
    error
}

fn python<'py, T: Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(PyErr::from)
}

/// The version of promptc this package carries.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Workspace>()?;
    module.add_class::<CompileResult>()?;
    module.add_class::<Diagnostic>()?;
    module.add_class::<NotShown>()?;
    module.add("PromptcError", module.py().get_type::<PromptcError>())?;
    module.add_function(wrap_pyfunction!(version, module)?)?;
    Ok(())
}
