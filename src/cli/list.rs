use std::path::Path;

use clap::Args;

use super::{CliError, OutputFormat, Printer, load_valid};
use crate::report;

#[derive(Args, Debug)]
pub struct ListArgs {
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

pub fn run(
    args: ListArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    let families = crate::compile::Compiler::new(workspace).list();
    match args.format {
        OutputFormat::Text => printer.report(&report::routing::list(&families)),
        OutputFormat::Json => printer.result(&report::json_document(&families)),
    }
}
