use clap::{Args, ValueEnum};

use super::build::{TargetArgs, compile_failed, request};
use super::{EXIT_OK, Output, UsageError, emit, load_valid};
use crate::compile::explain::{Explanation, Item};
use crate::compiled::SourceRange;

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
    match args.format {
        ExplainFormat::Json => emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&explanation).unwrap_or_default()
        ))?,
        ExplainFormat::Text => emit(&text(&explanation))?,
    }
    Ok(EXIT_OK)
}

fn at(source: &Option<SourceRange>) -> String {
    source
        .as_ref()
        .map(|s| format!("  [{}:{}]", s.file, s.first_line))
        .unwrap_or_default()
}

fn item(out: &mut String, item: &Item, indent: &str) {
    let mark = if item.included { '+' } else { '-' };
    out.push_str(&format!(
        "{indent}{mark} {}: {}{}\n",
        item.id,
        item.reason,
        at(&item.source)
    ));
    if let Some(choice) = &item.choice {
        out.push_str(&format!("{indent}    uses {choice}\n"));
    }
    if let Some(condition) = &item.condition {
        let values: Vec<String> = condition
            .values
            .iter()
            .map(|(name, value)| format!("{name} = {value}"))
            .collect();
        out.push_str(&format!(
            "{indent}    when `{}` is {} with {}\n",
            condition.expression,
            condition.holds,
            values.join(", ")
        ));
    }
    for parameter in &item.parameters {
        self::item(out, parameter, &format!("{indent}    "));
    }
}

fn text(explanation: &Explanation) -> String {
    let mut out = format!(
        "variant `{}` (family `{}`), from {}\n",
        explanation.variant,
        explanation.family,
        explanation
            .chain
            .iter()
            .map(|s| s.file.as_str())
            .collect::<Vec<_>>()
            .join(" <- ")
    );
    if !explanation.components.is_empty() {
        out.push_str("\ncomponents, in rendering order:\n");
        for component in &explanation.components {
            item(&mut out, component, "  ");
        }
    }
    if !explanation.tools.is_empty() {
        out.push_str("\ntools, in documentation order:\n");
        for tool in &explanation.tools {
            item(&mut out, tool, "  ");
        }
    }
    out
}
