use std::path::Path;

use clap::Args;

use super::{
    CliError, Printer, TargetArgs, compile_failed, dated, definition_warnings, load_valid, request,
};
use crate::report;

#[derive(Args, Debug)]
pub struct ToolsArgs {
    #[command(flatten)]
    pub target: TargetArgs,
}

/// The tool definitions of one compile, alone: what an agent sends with the prompt.
pub fn run(
    args: ToolsArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    let request = dated(request(workspace, args.target, printer)?, printer);
    let compiler = crate::compile::Compiler::new(workspace);
    let compiled = compiler
        .compile(&request)
        .map_err(|error| compile_failed(workspace, error, printer))?;
    definition_warnings(&compiler, &request, &compiled, printer);
    match &compiled.tool_definitions {
        Some(definitions) => printer.result(&report::json_document(definitions)),
        None => Err(CliError::NotNative(compiled.variant)),
    }
}
