use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::build::{report_failures, source_date_epoch};
use super::{EXIT_OK, EXIT_PROBLEMS, Output, UsageError, emit, load_valid};
use crate::analysis::stable_prefix::stable_prefix;
use crate::emit::matrix;
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

pub fn run(args: StatsArgs, output: &Output) -> Result<u8, UsageError> {
    let workspace = match load_valid(args.workspace.as_deref(), output)? {
        Ok(workspace) => workspace,
        Err(code) => return Ok(code),
    };
    if let Some(family) = &args.family
        && !workspace.families().contains(family)
    {
        let families = workspace.families().join(", ");
        return Err(UsageError(format!(
            "no variant has family `{family}` (families: {families})"
        )));
    }
    if let Some(context) = &args.context
        && !workspace.contexts.contains_key(context)
    {
        let names: Vec<&str> = workspace.contexts.keys().map(String::as_str).collect();
        return Err(UsageError(format!(
            "no context `{context}` in the workspace (contexts: {})",
            names.join(", ")
        )));
    }
    let settings = &workspace.settings().tokens;
    let epoch = source_date_epoch()?;
    let mut rows = Vec::new();
    let wanted = matrix::entries(&workspace)
        .into_iter()
        .filter(|entry| {
            args.family.as_ref().is_none_or(|f| *f == entry.family)
                && args.context.as_ref().is_none_or(|c| *c == entry.context)
        })
        .collect();
    // One run over the entries: a runaway template is stopped once, not once per entry.
    let compiler = crate::compile::Compiler::new(&workspace);
    let run = matrix::compile_entries(&compiler, wanted, epoch);
    for (entry, compiled) in run.outputs {
        let Some(request) = matrix::request(&workspace, &entry, epoch) else {
            continue;
        };
        let encoding = settings.encoding_for(&entry.family);
        rows.push(PromptStats {
            encoding: encoding.name(),
            exact: settings.is_exact(&entry.family),
            tokens: encoding.count(&compiled.prompt),
            characters: compiled.prompt.chars().count(),
            stable_prefix: stable_prefix(&compiler, &request, &compiled),
            sections: compiled
                .sections
                .iter()
                .filter(|s| !s.text.is_empty())
                .map(|s| (s.id.clone(), encoding.count(&s.text)))
                .collect(),
            family: entry.family,
            context: entry.context,
        });
    }
    if report_failures(&workspace, run.failed, output)? {
        return Ok(EXIT_PROBLEMS);
    }
    emit(&match args.format {
        StatsFormat::Json => report::stats::json(&rows),
        StatsFormat::Markdown => report::stats::markdown(&rows, args.family.is_some()),
    })?;
    Ok(EXIT_OK)
}
