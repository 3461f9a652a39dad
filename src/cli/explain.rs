use std::path::Path;

use clap::Args;

use super::{CliError, Printer, TargetArgs, compile_failed, load_valid, request_with_rules};
use crate::report;

#[derive(Args, Debug)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Only this tool.
    #[arg(long, conflicts_with = "component")]
    pub tool: Option<String>,
    /// Only this component.
    #[arg(long)]
    pub component: Option<String>,
    #[arg(long, value_enum, default_value_t = super::OutputFormat::Text)]
    pub format: super::OutputFormat,
}

pub fn run(
    args: ExplainArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    let (request, rules) = request_with_rules(workspace, args.target, printer)?;
    let compiler = crate::compile::Compiler::new(workspace);
    let mut explanation = crate::compile::explain::explain(&compiler, &request)
        .map_err(|error| compile_failed(workspace, error, printer))?;
    let only_tool = args.tool.clone();
    // The explanation lists every tool and component of the workspace, used or not.
    if let Some(tool) = args.tool {
        if !explanation.tools.iter().any(|item| item.id == tool) {
            let tools = explanation
                .tools
                .iter()
                .map(|item| item.id.clone())
                .collect();
            return Err(CliError::UnknownTool { tool, tools });
        }
        explanation.components.clear();
        explanation.tools.retain(|item| item.id == tool);
    }
    if let Some(component) = args.component {
        if !explanation
            .components
            .iter()
            .any(|item| item.id == component)
        {
            let components = explanation
                .components
                .iter()
                .map(|item| item.id.clone())
                .collect();
            return Err(CliError::UnknownComponent {
                component,
                components,
            });
        }
        explanation.tools.clear();
        explanation.components.retain(|item| item.id == component);
    }
    // Rules are explained only when some were read or listed: other output stays as it was.
    let rules = (rules.assembled && only_tool.is_none()).then_some(rules);
    match (args.format, rules) {
        (super::OutputFormat::Json, None) => printer.result(&report::explain::json(&explanation)),
        (super::OutputFormat::Json, Some(rules)) => {
            let mut document = serde_json::to_value(&explanation).unwrap_or_default();
            if let serde_json::Value::Object(fields) = &mut document {
                fields.insert("rules".into(), report::rules::json(&rules));
            }
            printer.result(&report::json_document(&document))
        }
        (super::OutputFormat::Text, None) => printer.report(&report::explain::text(&explanation)),
        (super::OutputFormat::Text, Some(rules)) => {
            printer.report(&(report::explain::text(&explanation) + &report::rules::text(&rules)))
        }
    }
}
