//! A workspace loaded once and compiled per request, as an agent does at run time: the API
//! under the Node and Python packages. A request is data (the model, a context as JSON or a
//! context's name, the caller's rules folders); every problem comes back as
//! [`DiagnosticRecord`]s, located where a file is at fault.
//!
//! The workspace is shared by every request and never changes: what one request reads (its
//! context, its rules files) goes into sources of its own that continue the workspace's
//! numbering, so requests can run on many threads at once.

mod request;
mod shape;
mod shared;

use std::path::{Path, PathBuf};

use crate::analysis::budget::{self, check_budget};
use crate::analysis::stats::{PromptStats, prompt_stats};
use crate::compile::explain::{Explanation, explain};
use crate::compile::{Choice, Compiler, FamilyListing};
use crate::compiled::{CompileError, Compiled};
use crate::diagnostic::Diagnostics;
use crate::namespace::near_or;
use crate::problem::{Problem, RequestProblem, Severity};
use crate::report::diagnostics::{DiagnosticRecord, records};
use crate::source::Sources;
use crate::workspace::Workspace;

pub use request::{AgentRequest, OverBudget};
pub use shape::{NOT_DATA_MARK, NotData, REQUEST_DEPTH, Step, TOO_DEEP};
use shared::SharedParts;
pub use shared::{Part, SharedCompiled};

self_cell::self_cell!(
    /// The workspace and the compiler built over it, kept together.
    struct Held {
        owner: Workspace,
        #[not_covariant]
        dependent: Compiler,
    }
);

/// A loaded, valid workspace ready to compile requests; cheap to share between threads.
pub struct Runtime {
    held: Held,
    /// Warnings found while loading: the workspace compiles, but its author may want to know.
    warnings: Vec<DiagnosticRecord>,
    /// The parts of each variant's last `compile_shared`.
    shared: SharedParts,
    /// What the workspace's templates and conditions read, for the warning about a `set`
    /// name none reads; worked out at the first request that sets one.
    unread_set: crate::compile::UnreadSetNames,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("root", &self.held.borrow_owner().root)
            .field("warnings", &self.warnings.len())
            .finish_non_exhaustive()
    }
}

/// What a request gave, with the warnings met on the way (a rules file left out, say).
#[derive(Debug)]
pub struct Response<T> {
    pub value: T,
    pub warnings: Vec<DiagnosticRecord>,
}

/// Why a request gave nothing: at least one error, and any warnings met before it.
#[derive(Clone, Debug)]
pub struct Failure {
    pub diagnostics: Vec<DiagnosticRecord>,
}

impl Failure {
    /// A request that cannot be read: a language binding's argument of the wrong kind.
    pub fn invalid_request(message: String) -> Failure {
        Failure::unlocated(RequestProblem::InvalidRequest { message })
    }

    fn unlocated(problem: RequestProblem) -> Failure {
        Failure {
            diagnostics: vec![record(&problem)],
        }
    }
}

/// A problem of the request itself, which lies in no file.
fn record(problem: &RequestProblem) -> DiagnosticRecord {
    let mut record =
        DiagnosticRecord::unlocated(problem.code(), problem.to_string(), problem.help());
    if problem.severity() == Severity::Warning {
        record.severity = "warning";
    }
    record
}

/// The first error, its place, and how many more there are: one line for an exception.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A `more-problems` record counts errors that have no record of their own.
        let (errors, _) = crate::report::diagnostics::record_counts(&self.diagnostics);
        let Some(first) = self
            .diagnostics
            .iter()
            .find(|d| d.is_error() && d.not_shown.is_none())
        else {
            return f.write_str("the request failed");
        };
        if let Some(at) = &first.location {
            write!(f, "{}:{}:{}: ", at.file, at.line, at.column)?;
        }
        write!(f, "{}", first.message)?;
        match errors {
            0 | 1 => Ok(()),
            2 => f.write_str(" (and 1 more error)"),
            more => write!(f, " (and {} more errors)", more - 1),
        }
    }
}

impl std::error::Error for Failure {}

/// One request made ready to compile.
struct Prepared {
    request: crate::compile::Request,
    /// The context's name for messages: a workspace context's, else `<context>`.
    context_name: String,
    /// What the request read besides the workspace.
    sources: Sources,
    warnings: Diagnostics,
}

impl Runtime {
    /// Loads and validates the workspace in `dir`: a failure carries every error (and
    /// warning) loading found.
    pub fn load(dir: &Path) -> Result<Runtime, Failure> {
        if !crate::load::has_manifest(dir) {
            return Err(Failure::unlocated(RequestProblem::NotAWorkspace {
                dir: dir.display().to_string(),
            }));
        }
        // Kept absolute: an agent may change its working directory between a load and a
        // reload, which must read the same folder.
        let absolute = std::path::absolute(dir);
        let dir = absolute.as_deref().unwrap_or(dir);
        // The load makes room on the stack for deep files itself (`cores::with_stack_room`).
        let loaded = crate::loader::load_workspace(dir).map_err(|error| {
            Failure::unlocated(RequestProblem::Unreadable {
                path: dir.display().to_string(),
                reason: error.to_string(),
            })
        })?;
        let found = records(&loaded.diagnostics.sorted(), &[&loaded.workspace.sources]);
        if found.iter().any(DiagnosticRecord::is_error) {
            return Err(Failure { diagnostics: found });
        }
        Ok(Runtime {
            held: Held::new(loaded.workspace, |workspace| Compiler::new(workspace)),
            warnings: found,
            shared: SharedParts::default(),
            unread_set: crate::compile::UnreadSetNames::default(),
        })
    }

    /// The warnings loading found.
    pub fn warnings(&self) -> &[DiagnosticRecord] {
        &self.warnings
    }

    /// The workspace folder, made absolute when it was loaded.
    pub fn root(&self) -> PathBuf {
        self.held.borrow_owner().root.clone()
    }

    /// The prompt, its sections, tools and native tool definitions for a request; the same
    /// data as `promptc build --format json`. A prompt over its variant's token budget is a
    /// failure, as in `build`, or with `over_budget: warn` a warning beside the prompt.
    pub fn compile(&self, request: &AgentRequest) -> Result<Response<Compiled>, Failure> {
        let mut response = self.answer(request, |compiler, prepared, warnings| {
            let compiled = compiler.compile(&prepared.request)?;
            let workspace = compiler.workspace();
            if let Some(variant) = compiler.variant(&compiled.variant)
                && let Some(over) =
                    check_budget(workspace, variant, &compiled, &prepared.context_name)
            {
                let report = budget::report(vec![over]);
                if request.over_budget == OverBudget::Error {
                    return Err(CompileError::Diagnostics(report));
                }
                warnings.extend(report);
            }
            // An MCP tool left out of the definitions is said, as `build` says it.
            warnings.extend(compiler.definition_warnings(&prepared.request, &compiled));
            Ok(compiled)
        })?;
        // Asked to be a warning, the budget's report is one.
        for record in &mut response.warnings {
            if record.code == "over-budget" {
                record.severity = "warning";
            }
        }
        // A dialect asked for and not used is said, as `build --dialect` says it: the caller
        // may be waiting for definitions in that shape that never come.
        if let Some(dialect) = &request.dialect
            && response.value.tool_definitions.is_none()
        {
            response
                .warnings
                .push(record(&RequestProblem::DialectUnused {
                    dialect: dialect.clone(),
                    variant: response.value.variant.clone(),
                }));
        }
        Ok(response)
    }

    /// `compile`, with the result's large parts shared with the results of earlier compiles of
    /// the variant wherever they are the same (see [`SharedCompiled`]): for a binding that
    /// holds many results at once, or makes values of its own language from them.
    pub fn compile_shared(
        &self,
        request: &AgentRequest,
    ) -> Result<Response<SharedCompiled>, Failure> {
        let response = self.compile(request)?;
        Ok(Response {
            value: self.shared.share(response.value),
            warnings: response.warnings,
        })
    }

    /// Why each component and tool is in the prompt or not (`promptc explain --format json`).
    pub fn explain(&self, request: &AgentRequest) -> Result<Response<Explanation>, Failure> {
        self.answer(request, |compiler, prepared, _| {
            explain(compiler, &prepared.request)
        })
    }

    /// Tokens, characters, budget and cache-stable prefix of the request's prompt, with each
    /// section's tokens (`promptc stats --format json` for one prompt).
    pub fn stats(&self, request: &AgentRequest) -> Result<Response<PromptStats>, Failure> {
        self.answer(request, |compiler, prepared, _| {
            let compiled = compiler.compile(&prepared.request)?;
            let context = &prepared.context_name;
            Ok(prompt_stats(
                compiler,
                &prepared.request,
                &compiled,
                context,
            ))
        })
    }

    /// The family, version and variant that serve the request's model, and the routing rule
    /// that chose them (`promptc route --format json`).
    pub fn route(&self, request: &AgentRequest) -> Result<Response<Choice>, Failure> {
        self.answer(request, |compiler, prepared, _| {
            compiler.choose(&prepared.request)
        })
    }

    /// Prepares a request, asks the compiler, and gives its answer with the warnings met on
    /// the way (preparing it, and those `ask` adds), or every problem found.
    fn answer<T>(
        &self,
        request: &AgentRequest,
        ask: impl FnOnce(&Compiler<'_>, &Prepared, &mut Diagnostics) -> Result<T, CompileError>,
    ) -> Result<Response<T>, Failure> {
        // Reading, checking and rendering a context recurse once per level of its nesting,
        // and the caller's thread may have little stack (2 MiB for a Rust or tokio thread,
        // less than a debug build needs for a context nested 35 levels): a deep one is
        // compiled on a stack of its own.
        let mut response = if nests_deeper(request.context.as_ref(), SHALLOW_LEVELS) {
            crate::cores::on_a_stack_of_its_own(|| self.answer_here(request, ask))?
        } else {
            self.answer_here(request, ask)?
        };
        response.warnings.extend(self.unread_set_warnings(request));
        Ok(response)
    }

    /// A `set` value under a name no template or condition reads, as `--set` tells it.
    fn unread_set_warnings(&self, request: &AgentRequest) -> Vec<DiagnosticRecord> {
        if request.set.is_empty() {
            return Vec::new();
        }
        self.unread_set
            .among(
                self.held.borrow_owner(),
                request.set.keys().map(String::as_str),
            )
            .into_iter()
            .map(|(name, suggestion)| record(&RequestProblem::SetNameUnread { name, suggestion }))
            .collect()
    }

    fn answer_here<T>(
        &self,
        request: &AgentRequest,
        ask: impl FnOnce(&Compiler<'_>, &Prepared, &mut Diagnostics) -> Result<T, CompileError>,
    ) -> Result<Response<T>, Failure> {
        self.held.with_dependent(|workspace, compiler| {
            let mut prepared = prepare(workspace, request)?;
            let mut warnings = std::mem::take(&mut prepared.warnings);
            let answer = ask(compiler, &prepared, &mut warnings);
            prepared.warnings = warnings;
            match answer {
                Ok(value) => Ok(respond(
                    workspace,
                    &prepared.sources,
                    prepared.warnings,
                    value,
                )),
                Err(error) => Err(compile_failure(workspace, &prepared, error)),
            }
        })
    }

    /// The families with their versions, labels, tags and routing rules, as `promptc list
    /// --format json` prints them.
    pub fn families(&self) -> Vec<FamilyListing> {
        self.held.with_dependent(|_, compiler| compiler.list())
    }
}

/// The most levels a request's context may nest and still be compiled on the caller's stack:
/// about half a megabyte of stack in a debug build, and a fraction of that in a release one.
const SHALLOW_LEVELS: usize = 16;

/// Whether `value` nests lists and tables more than `levels` deep; stops there.
fn nests_deeper(value: Option<&serde_json::Value>, levels: usize) -> bool {
    let mut open: Vec<(&serde_json::Value, usize)> = value.into_iter().map(|v| (v, 1)).collect();
    while let Some((value, level)) = open.pop() {
        let items: Box<dyn Iterator<Item = &serde_json::Value>> = match value {
            serde_json::Value::Object(fields) => Box::new(fields.values()),
            serde_json::Value::Array(items) => Box::new(items.iter()),
            _ => continue,
        };
        if level > levels {
            return true;
        }
        open.extend(items.map(|item| (item, level + 1)));
    }
    false
}

fn respond<T>(
    workspace: &Workspace,
    sources: &Sources,
    warnings: Diagnostics,
    value: T,
) -> Response<T> {
    Response {
        value,
        warnings: records(&warnings.sorted(), &[&workspace.sources, sources]),
    }
}

fn failure(workspace: &Workspace, sources: &Sources, found: Diagnostics) -> Failure {
    Failure {
        diagnostics: records(&found.sorted(), &[&workspace.sources, sources]),
    }
}

fn compile_failure(workspace: &Workspace, prepared: &Prepared, error: CompileError) -> Failure {
    let mut found = prepared.warnings.clone();
    match error {
        CompileError::Diagnostics(diagnostics) => found.extend(diagnostics),
        CompileError::Selection(problem) => {
            // As the command line says it: a family the workspace lacks gets a near name, else
            // the families there are; a selection the problem has no help for, the families.
            let families = workspace.families();
            let help = match &problem {
                Problem::NoVariant { family } => Some(near_or(family, &families, "families")),
                _ => problem
                    .help()
                    .or_else(|| Some(format!("families: {}", families.join(", ")))),
            };
            let mut failure = failure(workspace, &prepared.sources, found);
            failure.diagnostics.push(DiagnosticRecord::unlocated(
                problem.code(),
                problem.to_string(),
                help,
            ));
            return failure;
        }
        // `load` returns no runtime for a workspace with errors.
        CompileError::InvalidWorkspace => {}
    }
    failure(workspace, &prepared.sources, found)
}

/// The compiler's request for an agent's: the context assembled (a named one, or the fields
/// given, validated like a context file), the caller's rules folders read into it, the model
/// set, and the family chosen by routing unless named.
fn prepare(workspace: &Workspace, given: &AgentRequest) -> Result<Prepared, Failure> {
    let mut sources = Sources::after(&workspace.sources);
    let mut found = Diagnostics::default();
    let assembled = request::context(workspace, given, &mut sources, &mut found)?;
    let Some(request::Assembled {
        mut context,
        name: context_name,
        folders,
        mcp_places,
    }) = assembled
    else {
        return Err(failure(workspace, &sources, found));
    };
    let named = workspace
        .contexts
        .contains_key(&context_name)
        .then_some(context_name.as_str());
    let rules = crate::load::rules::RulesRequest {
        folders,
        ..Default::default()
    };
    crate::load::rules::assemble(
        &workspace.root,
        &mut sources,
        workspace.settings().limits.file_bytes,
        &mut context,
        &rules,
        (
            named
                .and_then(|name| workspace.context_rules.get(name))
                .map(AsRef::as_ref),
            named.map(|_| workspace.contexts.len()),
        ),
        &mut found,
    );
    if found.has_errors() {
        return Err(failure(workspace, &sources, found));
    }
    let request = given.compile_request(workspace, context, mcp_places)?;
    Ok(Prepared {
        request,
        context_name,
        sources,
        warnings: found,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::diagnostics::NotShown;

    #[test]
    fn a_failure_counts_the_errors_a_report_left_out() {
        let error = DiagnosticRecord::unlocated("unknown-key", "unknown key `x`".into(), None);
        let mut more = DiagnosticRecord::unlocated(
            "more-problems",
            "5 more errors in 2 files, not shown".into(),
            None,
        );
        more.not_shown = Some(NotShown {
            errors: 5,
            warnings: 3,
        });
        let failure = Failure {
            diagnostics: vec![error.clone(), error.clone(), more],
        };
        assert_eq!(failure.to_string(), "unknown key `x` (and 6 more errors)");
        let alone = Failure {
            diagnostics: vec![error],
        };
        assert_eq!(alone.to_string(), "unknown key `x`");
    }
}
