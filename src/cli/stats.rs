use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{CliError, Printer, load_valid, report_failures, source_date_epoch};
use crate::analysis::stable_prefix::stable_prefix;
use crate::compile::Compiler;
use crate::compiled::Compiled;
use crate::emit::matrix::{self, MatrixEntry};
use crate::report;
use crate::report::stats::PromptStats;

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Only this family (and then per-section counts are shown too).
    #[arg(long)]
    pub family: Option<String>,
    /// Only this context.
    #[arg(long)]
    pub context: Option<String>,
    /// `markdown` (a table) or `json`.
    #[arg(long, value_enum, default_value_t = StatsFormat::Markdown)]
    pub format: StatsFormat,
    /// The workspace (default: the nearest folder with promptc.toml).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    Markdown,
    Json,
}

pub fn run(args: StatsArgs, printer: &Printer) -> Result<(), CliError> {
    let workspace = load_valid(args.workspace.as_deref(), printer)?;
    if let Some(family) = &args.family
        && !workspace.families().contains(family)
    {
        return Err(CliError::UnknownFamily {
            family: family.clone(),
            families: workspace.families(),
        });
    }
    if let Some(context) = &args.context
        && !workspace.contexts.contains_key(context)
    {
        return Err(CliError::UnknownContext {
            context: context.clone(),
            contexts: workspace.contexts.keys().cloned().collect(),
        });
    }
    let epoch = source_date_epoch()?;
    let wanted =
        matrix::entries_matching(&workspace, args.family.as_deref(), args.context.as_deref());
    // One run over the entries: a runaway template is stopped once, not once per entry.
    let compiler = Compiler::new(&workspace);
    let run = matrix::compile_entries(&compiler, wanted, epoch);
    let rows: Vec<PromptStats> = run
        .outputs
        .into_iter()
        .filter_map(|(entry, compiled)| prompt_stats(&compiler, entry, &compiled, epoch))
        .collect();
    if report_failures(&workspace, run.failed, printer) {
        return Err(CliError::Reported);
    }
    printer.result(&match args.format {
        StatsFormat::Json => report::stats::json(&rows),
        StatsFormat::Markdown => report::stats::markdown(&rows, args.family.is_some()),
    })
}

/// The counts of one compiled entry, in the family's encoding; `None` for an entry without a
/// request (which does not compile either).
fn prompt_stats(
    compiler: &Compiler<'_>,
    entry: MatrixEntry,
    compiled: &Compiled,
    epoch: Option<i64>,
) -> Option<PromptStats> {
    let workspace = compiler.workspace();
    let request = matrix::request(workspace, &entry, epoch)?;
    let settings = &workspace.settings().tokens;
    let encoding = settings.encoding_for(&entry.family);
    Some(PromptStats {
        encoding: encoding.name(),
        exact: settings.is_exact(&entry.family),
        tokens: encoding.count(&compiled.prompt),
        characters: compiled.prompt.chars().count(),
        stable_prefix: stable_prefix(compiler, &request, compiled),
        sections: compiled
            .sections
            .iter()
            .filter(|s| !s.text.is_empty())
            .map(|s| (s.id.clone(), encoding.count(&s.text)))
            .collect(),
        family: entry.family,
        context: entry.context,
    })
}
