use std::path::Path;

use clap::Args;
use clap::builder::NonEmptyStringValueParser;

use super::{CliError, OutputFormat, Printer, TargetArgs, compile_failed, load_valid, request};
use crate::report;

#[derive(Args, Debug)]
pub struct RouteArgs {
    /// The model id, as the agent's provider names it (`claude-sonnet-4-5`, `openai/gpt-5`).
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub model: String,
    /// The provider, when the rules read it (`anthropic`, `openrouter`, `ollama`, …).
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
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
    let provider_given = target.provider.is_some();
    let context_name = target.context_name(workspace);
    let request = request(workspace, target, printer)?;
    let compiler = crate::compile::Compiler::new(workspace);
    let choice = compiler
        .choose(&request)
        .map_err(|error| compile_failed(workspace, error, printer))?;
    match args.format {
        OutputFormat::Text => {
            let model = &request.context.model;
            // The rules read the provider too: one the context gave, not the command line,
            // is said, so that a model is not taken for routed on its id alone.
            let provider = match (model.provider.as_str(), provider_given) {
                ("", _) => "no provider".to_string(),
                (provider, true) => format!("provider `{provider}`"),
                (provider, false) if context_name.is_empty() => format!("provider `{provider}`"),
                (provider, false) if context_name == "-" => format!(
                    "provider `{provider}`, the context's on standard input; `--provider` routes for another"
                ),
                (provider, false) => format!(
                    "provider `{provider}`, the context `{context_name}`'s; `--provider` routes for another"
                ),
            };
            let mut text = format!("model:   {} ({provider})\n", model.id);
            text.push_str(&report::routing::choice(&choice));
            printer.report(&text)
        }
        // The model and provider routed for first, as the text says them: a provider the
        // context gave, not the command line, decides as much as the id.
        OutputFormat::Json => {
            let model = &request.context.model;
            let mut document = serde_json::Map::new();
            document.insert("model".into(), model.id.clone().into());
            let provider = (!model.provider.is_empty()).then(|| model.provider.clone());
            document.insert("provider".into(), provider.into());
            if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&choice) {
                document.extend(fields);
            }
            printer.result(&report::json_document(&document))
        }
    }
}
