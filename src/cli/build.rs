use std::path::PathBuf;

use clap::{Args, ValueEnum};
use indexmap::IndexMap;

use super::{EXIT_OK, EXIT_PROBLEMS, Output, UsageError, emit, load_valid, path_failed};
use crate::analysis::budget::check_budget;
use crate::compile::{Request, Selection};
use crate::compiled::{CompileError, Compiled};
use crate::emit::matrix;
use crate::emit::write::write_atomic;
use crate::load::document::Format;
use crate::loader::load_context_file;
use crate::model::Context;
use crate::path_error::{PathError, PathProblem};
use crate::workspace::Workspace;

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Compile the whole build matrix of promptc.toml into its output folder, and remove the
    /// outputs of entries that left the matrix.
    #[arg(long, conflicts_with_all = ["family", "variant", "context", "out", "format", "set"])]
    pub all: bool,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Write the output into this folder as `<family>.md` (or `.json`) instead of printing it.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// `text` (the prompt) or `json` (the prompt with its sections, tools and model config).
    #[arg(long, value_enum, default_value_t = BuildFormat::Text)]
    pub format: BuildFormat,
}

/// What to compile: shared by `build` and `explain`.
#[derive(Args, Debug)]
pub struct TargetArgs {
    /// The model family to compile (default: the manifest's fallback family).
    #[arg(long, conflicts_with = "variant")]
    pub family: Option<String>,
    /// A variant id to compile, instead of a family.
    #[arg(long)]
    pub variant: Option<String>,
    /// A context: a file (TOML, YAML or JSON) or the name of one in the workspace's contexts
    /// folder (default: the manifest's `default_context`).
    #[arg(long)]
    pub context: Option<String>,
    /// A runtime placeholder, KEY=VALUE; wins over every other definition. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_assignment)]
    pub set: Vec<(String, String)>,
    /// The workspace (default: the nearest folder with promptc.toml).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum BuildFormat {
    Text,
    Json,
}

fn parse_assignment(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("expected KEY=VALUE, found `{text}`")),
    }
}

pub fn run(args: BuildArgs, output: &Output) -> Result<u8, UsageError> {
    let mut workspace = match load_valid(args.target.workspace.as_deref(), output)? {
        Ok(workspace) => workspace,
        Err(code) => return Ok(code),
    };
    if args.all {
        return build_all(&workspace, output);
    }
    // Budget errors name the context as given, or the default one.
    let context_name = args
        .target
        .context
        .clone()
        .or_else(|| workspace.settings().default_context.clone())
        .unwrap_or_default();
    let request = match request(&mut workspace, args.target, output)? {
        Ok(request) => request,
        Err(code) => return Ok(code),
    };
    let compiler = crate::compile::Compiler::new(&workspace);
    let compiled = match compiler.compile(&request) {
        Ok(compiled) => compiled,
        Err(error) => return compile_failed(&workspace, error, output),
    };
    if let Ok(variant) = compiler.select(&request.selection)
        && let Some(diagnostic) = check_budget(&workspace, variant, &compiled, &context_name)
    {
        let mut diagnostics = crate::diagnostic::Diagnostics::default();
        diagnostics.push(diagnostic);
        output.diagnostics(diagnostics, &workspace.sources);
        return Ok(EXIT_PROBLEMS);
    }
    let (text, extension) = match args.format {
        BuildFormat::Text => (compiled.prompt.clone(), "md"),
        BuildFormat::Json => (json(&compiled), "json"),
    };
    match args.out {
        Some(dir) => {
            let path = dir.join(format!("{}.{extension}", compiled.family));
            // The folder is the caller's, but a workspace's own file is never an output.
            let relative = path
                .canonicalize()
                .ok()
                .and_then(|real| real.strip_prefix(&workspace.root).ok().map(PathBuf::from));
            if relative.is_some_and(|relative| workspace.sources.find(&relative).is_some()) {
                return path_failed(PathError::new(path, PathProblem::IsSource));
            }
            if let Err(error) = write_atomic(&path, text.as_bytes()) {
                return path_failed(error);
            }
            eprintln!("wrote {}", path.display());
        }
        None => emit(&text)?,
    }
    Ok(EXIT_OK)
}

/// The request a target names. `Err(exit code)` when its context has problems (printed).
pub fn request(
    workspace: &mut Workspace,
    target: TargetArgs,
    output: &Output,
) -> Result<Result<Request, u8>, UsageError> {
    let context = match context(workspace, target.context.as_deref())? {
        Ok(context) => context,
        Err(diagnostics) => {
            output.diagnostics(diagnostics, &workspace.sources);
            return Ok(Err(EXIT_PROBLEMS));
        }
    };
    let selection = match (target.family, target.variant) {
        (Some(family), _) => Selection::Family(family),
        (None, Some(variant)) => Selection::Variant(variant),
        (None, None) => Selection::Default,
    };
    let mut request = Request::new(selection, context);
    request.set = target.set.into_iter().collect::<IndexMap<_, _>>();
    request.source_date_epoch = source_date_epoch()?;
    Ok(Ok(request))
}

/// A selection naming no variant is a usage error; diagnostics are printed.
pub fn compile_failed(
    workspace: &Workspace,
    error: CompileError,
    output: &Output,
) -> Result<u8, UsageError> {
    match error {
        CompileError::Selection(problem) => {
            let families = workspace.families().join(", ");
            Err(UsageError(format!("{problem} (families: {families})")))
        }
        CompileError::Diagnostics(diagnostics) => {
            output.diagnostics(diagnostics, &workspace.sources);
            Ok(EXIT_PROBLEMS)
        }
        // Its errors were printed when it was loaded.
        CompileError::InvalidWorkspace => Ok(EXIT_PROBLEMS),
    }
}

fn build_all(workspace: &Workspace, output: &Output) -> Result<u8, UsageError> {
    let run = matrix::compile_all(
        &crate::compile::Compiler::new(workspace),
        source_date_epoch()?,
    );
    let clean = run.is_clean();
    let outputs = run.outputs;
    output.diagnostics(run.over_budget, &workspace.sources);
    if report_failures(workspace, run.failed, output)? || !clean {
        eprintln!("error: nothing was written");
        return Ok(EXIT_PROBLEMS);
    }
    let report = match matrix::write_all(workspace, &outputs) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("error: nothing was written");
            return path_failed(error);
        }
    };
    for path in &report.written {
        eprintln!("wrote {path}");
    }
    for path in &report.removed {
        eprintln!("removed {path}");
    }
    for path in &report.strays {
        eprintln!("removed {path} (a temporary file left by an interrupted build)");
    }
    eprintln!(
        "{} outputs: {} written, {} unchanged, {} removed",
        outputs.len(),
        report.written.len(),
        report.unchanged.len(),
        report.removed.len()
    );
    Ok(EXIT_OK)
}

/// Prints why matrix entries failed to compile; returns whether any did.
pub fn report_failures(
    workspace: &Workspace,
    failed: Vec<(matrix::MatrixEntry, CompileError)>,
    output: &Output,
) -> Result<bool, UsageError> {
    let any = !failed.is_empty();
    for (entry, error) in failed {
        // The matrix reports each diagnostic with the first entry that hit it.
        let seen = matches!(&error, CompileError::Diagnostics(d) if d.is_empty());
        eprintln!(
            "error: {} × {} does not compile{}",
            entry.family,
            entry.context,
            if seen { " (errors above)" } else { "" }
        );
        match error {
            CompileError::Selection(problem) => eprintln!("  {problem}"),
            CompileError::Diagnostics(diagnostics) => {
                output.diagnostics(diagnostics, &workspace.sources);
            }
            CompileError::InvalidWorkspace => {}
        }
    }
    Ok(any)
}

fn json(compiled: &Compiled) -> String {
    let mut text = serde_json::to_string_pretty(compiled).unwrap_or_default();
    text.push('\n');
    text
}

/// The context a build uses: a file path, a named context, the manifest's default, or an
/// empty one.
fn context(
    workspace: &mut Workspace,
    given: Option<&str>,
) -> Result<Result<Context, crate::diagnostic::Diagnostics>, UsageError> {
    let name = given.or(workspace.settings().default_context.as_deref());
    let Some(name) = name else {
        return Ok(Ok(Context::default()));
    };
    if let Some(entry) = workspace.contexts.get(name) {
        return Ok(Ok(entry.value.clone()));
    }
    let path = PathBuf::from(name);
    if path.exists() && !path.is_file() {
        return Err(UsageError(format!(
            "{} is not a regular file: a context is read from a TOML, YAML or JSON file",
            path.display()
        )));
    }
    if !path.is_file() {
        let known: Vec<&str> = workspace.contexts.keys().map(String::as_str).collect();
        return Err(UsageError(format!(
            "no context file or named context `{name}` (named contexts: {})",
            known.join(", ")
        )));
    }
    if Format::of(&path).is_none() {
        return Err(UsageError(format!(
            "{} is not a TOML, YAML or JSON file",
            path.display()
        )));
    }
    let path = path.canonicalize()?;
    Ok(load_context_file(workspace, &path)?)
}

/// Seconds of `9999-12-31T23:59:59Z`: a date a context's `date` could also hold.
const LAST_EPOCH: i64 = 253_402_300_799;

pub fn source_date_epoch() -> Result<Option<i64>, UsageError> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(value) if !value.trim().is_empty() => match value.trim().parse::<i64>() {
            Ok(seconds) if (0..=LAST_EPOCH).contains(&seconds) => Ok(Some(seconds)),
            Ok(_) => Err(UsageError(format!(
                "SOURCE_DATE_EPOCH `{value}` is outside 1970-01-01 to 9999-12-31"
            ))),
            Err(_) => Err(UsageError(format!(
                "SOURCE_DATE_EPOCH is not a number: `{value}`"
            ))),
        },
        _ => Ok(None),
    }
}
