use std::path::{Path, PathBuf};

use clap::Args;

use super::{
    CliError, Message, Printer, TargetArgs, compile_failed, dated, definition_warnings, load_valid,
    report_failures, request, source_date_epoch,
};
use crate::analysis::budget::{self, check_budget};
use crate::emit::matrix;
use crate::emit::write::Staged;
use crate::path_error::{PathError, PathProblem};
use crate::report;
use crate::workspace::Workspace;

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Compile the whole build matrix of promptc.toml into its output folder, and remove the
    /// outputs of entries that left the matrix.
    // The matrix names its own requests: every flag that shapes one request is refused with
    // it, rather than ignored.
    #[arg(long, conflicts_with_all = [
        "family", "variant", "model", "provider", "label", "tag", "detect_env", "mcp", "dialect",
        "context", "set", "folders", "global", "files", "disabled", "out", "format",
    ])]
    pub all: bool,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Write the output into this folder as `<family>.md` (or `.json`) instead of printing it.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// `text` (the prompt) or `json` (the prompt with its sections, tools and model config).
    #[arg(long, value_enum, default_value_t = super::OutputFormat::Text)]
    pub format: super::OutputFormat,
}

/// A build that compiled the fallback family for a context naming a model routed elsewhere:
/// an agent passing its context on standard input may have expected it routed, as the
/// library routes by default.
fn not_routed(
    compiler: &crate::compile::Compiler<'_>,
    request: &crate::compile::Request,
    compiled: &crate::compiled::Compiled,
    printer: &Printer,
) {
    let model = &request.context.model.id;
    if request.selection.by != crate::compile::SelectBy::Fallback || model.is_empty() {
        return;
    }
    if let Ok(route) = compiler.route(&request.context)
        && route.family != compiled.family
    {
        printer.message(Message::ModelNotRouted {
            model,
            routes_to: &route.family,
            built: &compiled.family,
        });
    }
}

pub fn run(
    args: BuildArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    if args.all {
        return build_all(workspace, printer);
    }
    // Budget errors name the context as given, or the default one.
    let context_name = args.target.context_name(workspace);
    let request = dated(request(workspace, args.target, printer)?, printer);
    let compiler = crate::compile::Compiler::new(workspace);
    let compiled = compiler
        .compile(&request)
        .map_err(|error| compile_failed(workspace, error, printer))?;
    definition_warnings(&compiler, &request, &compiled, printer);
    not_routed(&compiler, &request, &compiled, printer);
    if let Some(dialect) = request.dialect
        && compiled.tool_definitions.is_none()
    {
        printer.message(Message::DialectUnused {
            dialect: dialect.name(),
            variant: &compiled.variant,
        });
    }
    if let Some(variant) = compiler.variant(&compiled.variant)
        && let Some(over) = check_budget(workspace, variant, &compiled, &context_name)
    {
        printer.diagnostics(budget::report(vec![over]), &workspace.sources);
        return Err(CliError::Reported);
    }
    let (text, extension) = match args.format {
        super::OutputFormat::Text => (compiled.prompt.clone(), "md"),
        super::OutputFormat::Json => (report::json_document(&compiled), "json"),
    };
    let Some(dir) = args.out else {
        return printer.result(&text);
    };
    crate::confine::caller_path_stays(&workspace.root, &dir).map_err(CliError::Argument)?;
    let mut files = vec![(dir.join(format!("{}.{extension}", compiled.family)), text)];
    // A prompt without its tool definitions is of no use to a native variant: they go beside
    // it, as `build --all` writes them (the JSON document holds them already).
    if extension == "md"
        && let Some(definitions) = &compiled.tool_definitions
    {
        let name = format!("{}{}", compiled.family, matrix::DEFINITIONS_SUFFIX);
        files.push((dir.join(name), matrix::definitions_text(definitions)));
    }
    let mut staged = Staged::default();
    for (path, text) in &files {
        // The folder is the caller's, but a workspace's own file is never an output.
        if super::workspace_source(workspace, path).is_some() {
            return Err(PathError::new(path, PathProblem::IsSource).into());
        }
        // A folder the command line names: what stops the write there is a bad argument, as
        // the system's error was before it was put in promptc's words.
        staged
            .add_named(path, path, text.as_bytes())
            .map_err(CliError::Argument)?;
    }
    staged.commit().map_err(CliError::Argument)?;
    for (path, _) in &files {
        printer.message(Message::Wrote(&path.display()));
    }
    Ok(())
}

fn build_all(workspace: &'static Workspace, printer: &Printer) -> Result<(), CliError> {
    // Alone among builds of the workspace, from reading the outputs to renaming them.
    let _lock = super::outputs_lock::lock_outputs(&workspace.root, true, printer);
    // Each output goes to a temporary file as it compiles; they are renamed into place only
    // once the whole matrix has compiled within its budgets, else removed.
    let mut writer = matrix::MatrixWriter::new(workspace);
    let entries = matrix::entries(workspace);
    if entries.is_empty() {
        printer.message(Message::EmptyMatrix(empty_matrix(workspace)));
    }
    let mut progress = super::progress::Progress::new(entries.len(), printer.is_quiet());
    let run = matrix::compile_each(
        super::kept_compiler(workspace),
        entries,
        source_date_epoch(printer),
        |entry, compiled| {
            progress.step(&entry.path);
            writer.add(&entry, compiled)
        },
    );
    drop(progress);
    let run = run.map_err(CliError::NothingWritten)?;
    let clean = run.is_clean();
    printer.diagnostics(run.over_budget, &workspace.sources);
    if report_failures(workspace, run.failed, printer) || !clean {
        printer.message(Message::NothingWritten);
        return Err(CliError::Reported);
    }
    let written = writer.finish().map_err(CliError::NothingWritten)?;
    for path in &written.written {
        printer.message(Message::Wrote(path));
    }
    for path in &written.removed {
        printer.message(Message::Removed(path));
    }
    for path in &written.strays {
        printer.message(Message::RemovedStray(path));
    }
    for path in &written.foreign {
        printer.message(Message::ForeignOutput(path));
    }
    printer.message(Message::Built {
        outputs: written.written.len() + written.unchanged.len(),
        written: written.written.len(),
        unchanged: written.unchanged.len(),
        removed: written.removed.len(),
    });
    // The outputs are written; a file the build could not remove after them is an error of
    // its own, not "nothing was written".
    let mut not_removed = written.not_removed.into_iter().map(CliError::Path);
    let last = not_removed.next_back();
    for error in not_removed {
        printer.error(&error);
    }
    last.map_or(Ok(()), Err)
}

/// Why the build matrix of `workspace` holds no entry.
pub fn empty_matrix(workspace: &Workspace) -> super::message::EmptyMatrix<'_> {
    use super::message::EmptyMatrix;
    if workspace.variants.is_empty() {
        EmptyMatrix::NoVariants
    } else if workspace.contexts.is_empty() {
        EmptyMatrix::NoContexts {
            folder: workspace.settings().paths.contexts.trim_end_matches('/'),
        }
    } else {
        EmptyMatrix::NoneListed
    }
}
