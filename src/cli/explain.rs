use clap::{Args, ValueEnum};

use super::build::{TargetArgs, compile_failed, request};
use super::{EXIT_OK, Output, UsageError, emit, load_valid};
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
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    pub format: ExplainFormat,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    Text,
    Json,
}

pub fn run(args: ExplainArgs, output: &Output) -> Result<u8, UsageError> {
    let mut workspace = match load_valid(args.target.workspace.as_deref(), output)? {
        Ok(workspace) => workspace,
        Err(code) => return Ok(code),
    };
    let request = match request(&mut workspace, args.target, output)? {
        Ok(request) => request,
        Err(code) => return Ok(code),
    };
    let mut explanation = match crate::compile::explain::explain(
        &crate::compile::Compiler::new(&workspace),
        &request,
    ) {
        Ok(explanation) => explanation,
        Err(error) => return compile_failed(&workspace, error, output),
    };
    if let Some(tool) = &args.tool {
        explanation.components.clear();
        explanation.tools.retain(|item| &item.id == tool);
        if explanation.tools.is_empty() {
            return Err(UsageError(format!("no tool `{tool}` in the workspace")));
        }
    }
    if let Some(component) = &args.component {
        explanation.tools.clear();
        explanation.components.retain(|item| &item.id == component);
        if explanation.components.is_empty() {
            return Err(UsageError(format!(
                "no component `{component}` in the workspace"
            )));
        }
    }
    emit(&match args.format {
        ExplainFormat::Json => report::explain::json(&explanation),
        ExplainFormat::Text => report::explain::text(&explanation),
    })?;
    Ok(EXIT_OK)
}
