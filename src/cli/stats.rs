use std::path::Path;

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, ValueEnum};

use super::{CliError, Printer, load_valid, report_failures, source_date_epoch};
use crate::analysis::stats::{PromptStats, prompt_stats};
use crate::compile::Compiler;
use crate::emit::matrix;
use crate::report;

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Only this family (and then per-section counts are shown too).
    #[arg(long, conflicts_with_all = ["model", "provider"])]
    pub family: Option<String>,
    /// Only the family routing picks for this model id (as `promptc route` does).
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub model: Option<String>,
    /// The provider, for routing.
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub provider: Option<String>,
    /// Only this context: the name of one in the workspace, a file (TOML, YAML or JSON), or
    /// `-` for standard input.
    #[arg(long)]
    pub context: Option<String>,
    /// `text` (a Markdown table, so `markdown` is accepted too) or `json`.
    #[arg(long, value_enum, default_value_t = StatsFormat::Text)]
    pub format: StatsFormat,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    #[value(alias = "markdown")]
    Text,
    Json,
}

pub fn run(
    mut args: StatsArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    if let Some(context) = &args.context
        && !workspace.contexts.contains_key(context)
    {
        let context = context.clone();
        return of_context_given(workspace, args, &context, printer);
    }
    if args.model.is_some() || args.provider.is_some() {
        args.family = Some(routed_family(workspace, &args, printer)?);
    }
    if let Some(family) = &args.family
        && !workspace.families().contains(family)
    {
        return Err(CliError::Selection {
            problem: crate::problem::Problem::NoVariant {
                family: family.clone(),
            },
            known: workspace.families(),
        });
    }
    let epoch = source_date_epoch(printer);
    let mut wanted =
        matrix::entries_matching(workspace, args.family.as_deref(), args.context.as_deref());
    // A family or context the build matrix leaves out (`build.families`, `build.contexts`)
    // printed an empty table: it is measured all the same, as `build` compiles it, with no
    // output file to name.
    if wanted.is_empty() && (args.family.is_some() || args.context.is_some()) {
        let families: Vec<String> = match &args.family {
            Some(family) => vec![family.clone()],
            // A context alone: for the families the matrix builds.
            None => {
                let mut families = Vec::new();
                for entry in matrix::entries(workspace) {
                    if !families.contains(&entry.family) {
                        families.push(entry.family);
                    }
                }
                families
            }
        };
        let contexts: Vec<String> = match &args.context {
            Some(context) => vec![context.clone()],
            None => workspace.contexts.keys().cloned().collect(),
        };
        wanted = families
            .iter()
            .flat_map(|family| {
                contexts.iter().map(|context| matrix::MatrixEntry {
                    family: family.clone(),
                    variant: None,
                    context: context.clone(),
                    path: String::new(),
                })
            })
            .collect();
    }
    // One run over the entries: a runaway template is stopped once, not once per entry. Each
    // prompt is measured as it compiles and let go: holding the matrix's prompts for the
    // measures took gigabytes for a workspace of a hundred kilobytes.
    let compiler = Compiler::new(workspace);
    let mut rows: Vec<PromptStats> = Vec::new();
    let run = matrix::compile_visiting(&compiler, wanted, epoch, |entry, compiled| {
        if let Some(request) = matrix::request(workspace, &entry, epoch) {
            let mut row = prompt_stats(&compiler, &request, &compiled, &entry.context);
            row.output = (!entry.path.is_empty()).then(|| entry.path.clone());
            rows.push(row);
        }
    });
    if report_failures(workspace, run.failed, printer) {
        return Err(CliError::Reported);
    }
    print(&rows, &args, printer)
}

fn print(rows: &[PromptStats], args: &StatsArgs, printer: &Printer) -> Result<(), CliError> {
    printer.result(&match args.format {
        StatsFormat::Json => report::stats::json(rows),
        StatsFormat::Text => report::stats::markdown(rows, args.family.is_some()),
    })
}

/// The stats of a context that is not one of the workspace's (a file, or standard input), as
/// `build --context` reads it: for the family asked for (or routed to), else every family the
/// build matrix compiles.
fn of_context_given(
    workspace: &'static mut crate::workspace::Workspace,
    mut args: StatsArgs,
    context: &str,
    printer: &Printer,
) -> Result<(), CliError> {
    let target = super::TargetArgs {
        family: None,
        variant: None,
        model: args.model.clone(),
        provider: args.provider.clone(),
        label: None,
        tag: None,
        dialect: None,
        mcp: None,
        rules: super::RulesArgs::default(),
        detect_env: false,
        context: Some(context.to_string()),
        set: Vec::new(),
    };
    let request = super::dated(super::request(workspace, target, printer)?, printer);
    let workspace: &'static crate::workspace::Workspace = workspace;
    let compiler = Compiler::new(workspace);
    if args.model.is_some() || args.provider.is_some() {
        let routed = compiler
            .route(&request.context)
            .map_err(|error| super::compile_failed(workspace, error, printer))?;
        args.family = Some(routed.family);
    }
    // What the matrix compiles (a family, or the variant an entry pins), once each.
    let selections: Vec<crate::compile::Selection> = match &args.family {
        Some(family) if !workspace.families().contains(family) => {
            return Err(CliError::Selection {
                problem: crate::problem::Problem::NoVariant {
                    family: family.clone(),
                },
                known: workspace.families(),
            });
        }
        Some(family) => vec![crate::compile::Selection::family(family.clone())],
        None => {
            let mut seen: Vec<(String, Option<String>)> = Vec::new();
            for entry in matrix::entries(workspace) {
                let selection = (entry.family, entry.variant);
                if !seen.contains(&selection) {
                    seen.push(selection);
                }
            }
            if seen.is_empty() {
                seen = workspace
                    .families()
                    .into_iter()
                    .map(|f| (f, None))
                    .collect();
            }
            seen.into_iter()
                .map(|(family, variant)| match variant {
                    Some(variant) => crate::compile::Selection::variant(variant),
                    None => crate::compile::Selection::family(family),
                })
                .collect()
        }
    };
    let shown = if context == super::STDIN {
        "<stdin>"
    } else {
        context
    };
    let mut rows = Vec::new();
    let mut failed = false;
    for selection in selections {
        let mut request = request.clone();
        request.selection = selection;
        // Each compile that fails is told, as the matrix's are, and the others measured.
        match compiler.compile(&request) {
            Ok(compiled) => rows.push(prompt_stats(&compiler, &request, &compiled, shown)),
            Err(error) => {
                failed = true;
                printer.error(&super::compile_failed(workspace, error, printer));
            }
        }
    }
    if failed {
        return Err(CliError::Reported);
    }
    print(&rows, &args, printer)
}

/// The family routing picks for `--model`/`--provider`, in the context the stats are for (or
/// the default one).
fn routed_family(
    workspace: &crate::workspace::Workspace,
    args: &StatsArgs,
    printer: &Printer,
) -> Result<String, CliError> {
    let name = args
        .context
        .as_deref()
        .or(workspace.settings().default_context.as_deref());
    let mut context = name
        .and_then(|name| workspace.context(name))
        .cloned()
        .unwrap_or_default();
    super::set_model(&mut context, args.model.clone(), args.provider.clone());
    Compiler::new(workspace)
        .route(&context)
        .map(|route| route.family)
        .map_err(|error| super::compile_failed(workspace, error, printer))
}
