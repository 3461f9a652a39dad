use std::path::Path;

use clap::Args;

use super::{CliError, Printer, TargetArgs, compile_failed, dated, load_valid, request_with_rules};
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
    let request = dated(request, printer);
    let compiler = crate::compile::Compiler::new(workspace);
    let mut explanation = crate::compile::explain::explain(&compiler, &request)
        .map_err(|error| compile_failed(workspace, error, printer))?;
    // As `build` says it: a dialect changes nothing for a variant that sends no definitions.
    if let Some(dialect) = request.dialect
        && compiler
            .variant(&explanation.variant)
            .is_some_and(|variant| variant.variant.native_tools != Some(true))
    {
        printer.message(super::message::Message::DialectUnused {
            dialect: dialect.name(),
            variant: &explanation.variant,
        });
    }
    let only_tool = args.tool.clone();
    // The explanation lists every tool and component of the workspace, used or not.
    if let Some(tool) = args.tool {
        explanation.components.clear();
        only(&mut explanation.tools, &tool)
            .map_err(|tools| CliError::UnknownTool { tool, tools })?;
    }
    if let Some(component) = args.component {
        explanation.tools.clear();
        only(&mut explanation.components, &component).map_err(|components| {
            CliError::UnknownComponent {
                component,
                components,
            }
        })?;
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

/// Keeps the item `id` alone; when there is none, the ids there are.
fn only(items: &mut Vec<crate::compile::explain::Item>, id: &str) -> Result<(), Vec<String>> {
    // A tool a `for_each` spec made (`use_reviewer`) is explained by its spec, and a tool
    // the prompt names otherwise (`name = "execute_command"`) answers to that name too.
    let id = items
        .iter()
        .find(|item| item.id == id)
        .or_else(|| {
            items.iter().find(|item| {
                item.name.as_deref() == Some(id)
                    || item.instances.iter().any(|made| made.name == id)
            })
        })
        .map(|item| item.id.clone())
        .ok_or_else(|| items.iter().map(|item| item.id.clone()).collect::<Vec<_>>())?;
    items.retain(|item| item.id == id);
    Ok(())
}
