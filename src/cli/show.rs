use std::path::PathBuf;

use clap::Args;

use super::{EXIT_OK, Output, UsageError, load_valid};
use crate::compile::Selection;

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Print the variant after inheritance and overrides are applied.
    #[arg(long, required = true)]
    pub effective: bool,
    /// The variant id.
    pub variant: String,
    /// The workspace (default: the nearest folder with promptc.toml).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
}

pub fn run(args: ShowArgs, output: &Output) -> Result<u8, UsageError> {
    let workspace = match load_valid(args.workspace.as_deref(), output)? {
        Ok(workspace) => workspace,
        Err(code) => return Ok(code),
    };
    let effective = workspace
        .select(&Selection::Variant(args.variant.clone()))
        .map_err(|problem| UsageError(problem.to_string()))?;
    let text =
        toml::to_string(&effective.variant).map_err(|error| UsageError(error.to_string()))?;
    println!(
        "# variant `{}` after inheritance ({})\n",
        effective.id(),
        effective.chain.join(" <- ")
    );
    print!("{text}");
    Ok(EXIT_OK)
}
