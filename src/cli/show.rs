use std::path::PathBuf;

use clap::Args;

use super::{EXIT_OK, Output, UsageError, emit, load_valid};
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
    let compiler = crate::compile::Compiler::new(&workspace);
    let effective = compiler
        .select(&Selection::Variant(args.variant.clone()))
        .map_err(|problem| UsageError(problem.to_string()))?;
    // TOML has no null: a placeholder set to null (YAML `~`) is left out of the listing.
    let mut value = serde_json::to_value(&effective.variant)?;
    drop_nulls(&mut value);
    let text = toml::to_string(&value)?;
    emit(&format!(
        "# variant `{}` after inheritance ({})\n\n{text}",
        effective.id(),
        effective.chain.join(" <- ")
    ))?;
    Ok(EXIT_OK)
}

fn drop_nulls(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}
