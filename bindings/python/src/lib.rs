//! promptc for Python: a workspace loaded once, compiled per request in-process
//! ([`promptc::Runtime`]). The package `promptc_runtime` re-exports this module; its types are
//! described in `_native.pyi`.
//!
//! Results keep promptc's own JSON keys, which are already Python's case (`tool_definitions`,
//! `first_line`): the same data as `promptc build --format json`.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use promptc::{AgentRequest, DiagnosticRecord, Failure, Runtime};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::Serialize;
use serde_json::Value;

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
            dir,
            runtime: RwLock::new(Arc::new(runtime)),
        })
    }

    /// Reads the workspace's files again. On failure it raises, and the workspace keeps
    /// compiling as it was loaded before.
    fn reload(&self, py: Python<'_>) -> PyResult<()> {
        let fresh = py
            .detach(|| Runtime::load(&self.dir))
            .map_err(|failure| raised(py, failure))?;
        let mut current = self
            .runtime
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *current = Arc::new(fresh);
        Ok(())
    }

    /// The folder the workspace was loaded from.
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
    #[pyo3(signature = (*, model=None, context=None, family=None, variant=None, label=None, tag=None, dialect=None, set=None))]
    #[allow(clippy::too_many_arguments)]
    fn compile(
        &self,
        py: Python<'_>,
        model: Option<&Bound<'_, PyAny>>,
        context: Option<&Bound<'_, PyAny>>,
        family: Option<String>,
        variant: Option<String>,
        label: Option<String>,
        tag: Option<String>,
        dialect: Option<String>,
        set: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<CompileResult> {
        let request = Request {
            model,
            context,
            family,
            variant,
            label,
            tag,
            dialect,
            set,
        }
        .agent(py)?;
        let runtime = self.current();
        let response = py
            .detach(|| runtime.compile(&request))
            .map_err(|failure| raised(py, failure))?;
        CompileResult::new(py, response)
    }

    /// Why each component and tool is in the prompt or not (`promptc explain --format json`).
    #[pyo3(signature = (*, model=None, context=None, family=None, variant=None, label=None, tag=None, dialect=None, set=None))]
    #[allow(clippy::too_many_arguments)]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        model: Option<&Bound<'py, PyAny>>,
        context: Option<&Bound<'py, PyAny>>,
        family: Option<String>,
        variant: Option<String>,
        label: Option<String>,
        tag: Option<String>,
        dialect: Option<String>,
        set: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = Request {
            model,
            context,
            family,
            variant,
            label,
            tag,
            dialect,
            set,
        }
        .agent(py)?;
        let runtime = self.current();
        let response = py
            .detach(|| runtime.explain(&request))
            .map_err(|failure| raised(py, failure))?;
        python(py, &response.value)
    }

    /// Tokens, characters, budget and stable prefix of the request's prompt, per section too
    /// (`promptc stats --format json`).
    #[pyo3(signature = (*, model=None, context=None, family=None, variant=None, label=None, tag=None, dialect=None, set=None))]
    #[allow(clippy::too_many_arguments)]
    fn stats<'py>(
        &self,
        py: Python<'py>,
        model: Option<&Bound<'py, PyAny>>,
        context: Option<&Bound<'py, PyAny>>,
        family: Option<String>,
        variant: Option<String>,
        label: Option<String>,
        tag: Option<String>,
        dialect: Option<String>,
        set: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = Request {
            model,
            context,
            family,
            variant,
            label,
            tag,
            dialect,
            set,
        }
        .agent(py)?;
        let runtime = self.current();
        let response = py
            .detach(|| runtime.stats(&request))
            .map_err(|failure| raised(py, failure))?;
        python(py, &response.value)
    }

    /// The family, version and variant that serve a model, and the rule that chose them
    /// (`promptc route --format json`).
    #[pyo3(signature = (*, model=None, context=None, label=None, tag=None))]
    fn route<'py>(
        &self,
        py: Python<'py>,
        model: Option<&Bound<'py, PyAny>>,
        context: Option<&Bound<'py, PyAny>>,
        label: Option<String>,
        tag: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = Request {
            model,
            context,
            label,
            tag,
            ..Request::default()
        }
        .agent(py)?;
        let runtime = self.current();
        let response = py
            .detach(|| runtime.route(&request))
            .map_err(|failure| raised(py, failure))?;
        python(py, &response.value)
    }

    /// The families, their versions and the models routed to each.
    fn families<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        python(py, &self.current().families())
    }

    fn __repr__(&self) -> String {
        format!("Workspace.load({:?})", self.dir.display().to_string())
    }
}

impl Workspace {
    fn current(&self) -> Arc<Runtime> {
        self.runtime
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

/// The keyword arguments of a request, read into promptc's own request (which refuses
/// values of the wrong type, naming them).
#[derive(Default)]
struct Request<'a, 'py> {
    model: Option<&'a Bound<'py, PyAny>>,
    context: Option<&'a Bound<'py, PyAny>>,
    family: Option<String>,
    variant: Option<String>,
    label: Option<String>,
    tag: Option<String>,
    dialect: Option<String>,
    set: Option<&'a Bound<'py, PyAny>>,
}

impl Request<'_, '_> {
    fn agent(self, py: Python<'_>) -> PyResult<AgentRequest> {
        let data = |value: Option<&Bound<'_, PyAny>>| -> PyResult<Value> {
            match value {
                None => Ok(Value::Null),
                Some(value) => {
                    pythonize::depythonize::<Value>(&plain(value)?).map_err(|error| {
                        raised(
                            py,
                            Failure::invalid_request(format!(
                                "a value that is not data (str, int, float, bool, None, list, dict): {error}"
                            )),
                        )
                    })
                }
            }
        };
        let mut fields = serde_json::Map::new();
        for (key, value) in [
            ("model", data(self.model)?),
            ("context", data(self.context)?),
            ("set", data(self.set)?),
            ("family", self.family.map_or(Value::Null, Value::String)),
            ("variant", self.variant.map_or(Value::Null, Value::String)),
            ("label", self.label.map_or(Value::Null, Value::String)),
            ("tag", self.tag.map_or(Value::Null, Value::String)),
            ("dialect", self.dialect.map_or(Value::Null, Value::String)),
        ] {
            if !value.is_null() {
                fields.insert(key.to_string(), value);
            }
        }
        AgentRequest::from_json(Value::Object(fields)).map_err(|failure| raised(py, failure))
    }
}

/// A value with every path (`pathlib.Path`, as `rules_from` folders often are) turned into
/// its string, lists and dicts followed.
fn plain<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    if let Ok(dict) = value.cast::<PyDict>() {
        let out = PyDict::new(py);
        for (key, item) in dict.iter() {
            out.set_item(key, plain(&item)?)?;
        }
        return Ok(out.into_any());
    }
    if let Ok(list) = value.cast::<PyList>() {
        let items = list
            .iter()
            .map(|item| plain(&item))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(PyList::new(py, items)?.into_any());
    }
    let path_like = py.import("os")?.getattr("PathLike")?;
    if value.is_instance(&path_like)? {
        return py.import("os")?.getattr("fspath")?.call1((value,));
    }
    Ok(value.clone())
}

/// The compiled prompt and its parts.
#[pyclass(frozen, module = "promptc_runtime")]
struct CompileResult {
    #[pyo3(get)]
    family: String,
    #[pyo3(get)]
    variant: String,
    #[pyo3(get)]
    version: Option<String>,
    /// The final system prompt.
    #[pyo3(get)]
    prompt: String,
    #[pyo3(get)]
    sections: Py<PyAny>,
    #[pyo3(get)]
    tools: Py<PyAny>,
    #[pyo3(get)]
    model: Py<PyAny>,
    #[pyo3(get)]
    inputs: Vec<String>,
    #[pyo3(get)]
    dialect: Option<String>,
    #[pyo3(get)]
    tool_definitions: Py<PyAny>,
    #[pyo3(get)]
    warnings: Vec<Diagnostic>,
}

impl CompileResult {
    fn new(py: Python<'_>, response: promptc::Response<promptc::Compiled>) -> PyResult<Self> {
        let compiled = response.value;
        Ok(CompileResult {
            sections: python(py, &compiled.sections)?.unbind(),
            tools: python(py, &compiled.tools)?.unbind(),
            model: python(py, &compiled.model)?.unbind(),
            tool_definitions: python(py, &compiled.tool_definitions)?.unbind(),
            family: compiled.family,
            variant: compiled.variant,
            version: compiled.version,
            prompt: compiled.prompt,
            inputs: compiled.inputs,
            dialect: compiled.dialect.map(str::to_string),
            warnings: response.warnings.iter().map(Diagnostic::from).collect(),
        })
    }
}

#[pymethods]
impl CompileResult {
    fn __repr__(&self) -> String {
        format!(
            "CompileResult(family={:?}, variant={:?}, prompt=<{} characters>)",
            self.family,
            self.variant,
            self.prompt.chars().count()
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
    module.add("PromptcError", module.py().get_type::<PromptcError>())?;
    module.add_function(wrap_pyfunction!(version, module)?)?;
    Ok(())
}
