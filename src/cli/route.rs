use std::path::Path;

use clap::Args;

use super::{CliError, OutputFormat, Printer, TargetArgs, compile_failed, load_valid, request};
use crate::report;

#[derive(Args, Debug)]
pub struct RouteArgs {
    /// The model id, as the agent's provider names it (`claude-sonnet-4-5`, `openai/gpt-5`).
    #[arg(long)]
    pub model: String,
    /// The provider, when the rules read it (`anthropic`, `openrouter`, `ollama`, …).
    #[arg(long)]
    pub provider: Option<String>,
    /// The context the rules see: a file or a named context (default: the manifest's
    /// `default_context`).
    #[arg(long)]
    pub context: Option<String>,
    /// Take the version this label names instead of `routing.label`'s.
    #[arg(long)]
    pub label: Option<String>,
    /// Only variants carrying this tag.
    #[arg(long)]
    pub tag: Option<String>,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

pub fn run(
    args: RouteArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    let target = TargetArgs {
        family: None,
        variant: None,
        model: Some(args.model),
        provider: args.provider,
        label: args.label,
        tag: args.tag,
        dialect: None,
        mcp: None,
        detect_env: false,
        context: args.context,
        set: Vec::new(),
        rules: super::RulesArgs::default(),
    };
    let request = request(workspace, target, printer)?;
    let compiler = crate::compile::Compiler::new(workspace);
    let choice = compiler
        .choose(&request)
        .map_err(|error| compile_failed(workspace, error, printer))?;
    match args.format {
        OutputFormat::Text => printer.report(&report::routing::choice(&choice)),
        OutputFormat::Json => printer.result(&report::json_document(&choice)),
    }
}
