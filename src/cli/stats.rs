use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::build::{report_failures, source_date_epoch};
use super::{EXIT_OK, EXIT_PROBLEMS, Output, UsageError, load_valid};
use crate::compile::{Request, Selection};
use crate::emit::matrix;
use crate::tokens::Encoding;

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

#[derive(serde::Serialize)]
struct Row {
    family: String,
    context: String,
    tokens: usize,
    characters: usize,
    sections: Vec<(String, usize)>,
}

pub fn run(args: StatsArgs, output: &Output) -> Result<u8, UsageError> {
    let workspace = match load_valid(args.workspace.as_deref(), output)? {
        Ok(workspace) => workspace,
        Err(code) => return Ok(code),
    };
    let encoding = Encoding::O200k;
    let epoch = source_date_epoch()?;
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for entry in matrix::entries(&workspace) {
        if args.family.as_ref().is_some_and(|f| *f != entry.family)
            || args.context.as_ref().is_some_and(|c| *c != entry.context)
        {
            continue;
        }
        let Some(context) = workspace.contexts.get(&entry.context) else {
            continue;
        };
        let mut request = Request::new(
            Selection::Family(entry.family.clone()),
            context.value.clone(),
        );
        request.source_date_epoch = epoch;
        match workspace.compile(&request) {
            Ok(compiled) => rows.push(Row {
                tokens: encoding.count(&compiled.prompt),
                characters: compiled.prompt.chars().count(),
                sections: compiled
                    .sections
                    .iter()
                    .filter(|s| !s.text.is_empty())
                    .map(|s| (s.id.clone(), encoding.count(&s.text)))
                    .collect(),
                family: entry.family,
                context: entry.context,
            }),
            Err(error) => failed.push((entry, error)),
        }
    }
    if report_failures(&workspace, failed, output)? {
        return Ok(EXIT_PROBLEMS);
    }
    match args.format {
        StatsFormat::Json => {
            let json = serde_json::json!({ "encoding": encoding.name(), "prompts": rows });
            println!(
                "{}",
                serde_json::to_string_pretty(&json).unwrap_or_default()
            );
        }
        StatsFormat::Markdown => {
            println!(
                "| family | context | tokens (≈ {}) | characters |",
                encoding.name()
            );
            println!("| --- | --- | ---: | ---: |");
            for row in &rows {
                println!(
                    "| {} | {} | {} | {} |",
                    row.family, row.context, row.tokens, row.characters
                );
            }
            if args.family.is_some() {
                for row in &rows {
                    println!("\n{} × {}:\n", row.family, row.context);
                    println!("| section | tokens |\n| --- | ---: |");
                    for (section, tokens) in &row.sections {
                        println!("| {section} | {tokens} |");
                    }
                }
            }
        }
    }
    Ok(EXIT_OK)
}
