use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::build::{report_failures, source_date_epoch};
use super::{EXIT_OK, EXIT_PROBLEMS, Output, UsageError, emit, load_valid};
use crate::analysis::stable_prefix::{StablePrefix, stable_prefix};
use crate::emit::matrix;

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
    encoding: &'static str,
    /// Whether the encoding is the family's real tokenizer; otherwise counts are estimates.
    exact: bool,
    tokens: usize,
    characters: usize,
    stable_prefix: Option<StablePrefix>,
    sections: Vec<(String, usize)>,
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
        rows.push(Row {
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
    match args.format {
        StatsFormat::Json => {
            let json = serde_json::json!({ "prompts": rows });
            emit(&format!(
                "{}\n",
                serde_json::to_string_pretty(&json).unwrap_or_default()
            ))?;
        }
        StatsFormat::Markdown => emit(&markdown(&rows, args.family.is_some()))?,
    }
    Ok(EXIT_OK)
}

fn markdown(rows: &[Row], with_sections: bool) -> String {
    let mut out = String::from(
        "| family | context | tokens | characters | stable prefix (tokens) | prefix sha256 |\n\
         | --- | --- | ---: | ---: | ---: | --- |\n",
    );
    for row in rows {
        let estimate = if row.exact { "" } else { "≈ " };
        let (prefix, hash) =
            row.stable_prefix
                .as_ref()
                .map_or(("?".to_string(), String::new()), |p| {
                    (
                        format!("{} ({}%)", p.tokens, p.percent),
                        p.sha256[..12].to_string(),
                    )
                });
        out.push_str(&format!(
            "| {} | {} | {estimate}{} ({}) | {} | {prefix} | `{hash}` |\n",
            row.family, row.context, row.tokens, row.encoding, row.characters
        ));
    }
    out.push_str("\n≈: counted with an encoding that is not the family's own tokenizer.\n");
    if with_sections {
        for row in rows {
            out.push_str(&format!(
                "\n{} × {}:\n\n| section | tokens |\n| --- | ---: |\n",
                row.family, row.context
            ));
            for (section, tokens) in &row.sections {
                out.push_str(&format!("| {section} | {tokens} |\n"));
            }
        }
    }
    out
}
