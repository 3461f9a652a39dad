use std::path::{Path, PathBuf};

use clap::Args;

use super::show::toml_written;
use super::{CliError, DataFormat, Printer, TargetArgs, load_valid, request_with_rules};
use crate::report;

#[derive(Args, Debug)]
pub struct ContextArgs {
    /// A context: a file (TOML, YAML or JSON), the name of one in the workspace, or `-` for
    /// standard input (default: the manifest's `default_context`).
    #[arg(long)]
    pub context: Option<String>,
    /// Set the context's `model.id`.
    #[arg(long)]
    pub model: Option<String>,
    /// Set the context's `model.provider`.
    #[arg(long)]
    pub provider: Option<String>,
    #[command(flatten)]
    pub rules: super::RulesArgs,
    /// An MCP settings file whose servers join the context's.
    #[arg(long, value_name = "FILE")]
    pub mcp: Option<PathBuf>,
    /// Fill `os`, `shell`, `home` and `cwd` from this machine.
    #[arg(long)]
    pub detect_env: bool,
    /// `toml`, `yaml` or `json` (default: the workspace's own, `yaml` where its variants,
    /// components and tools are all YAML, else `toml`).
    #[arg(long, value_enum)]
    pub format: Option<DataFormat>,
}

/// The context a compile sees, after inheritance and the command line's changes: to inspect,
/// or to save as an example context.
pub fn run(
    args: ContextArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    // The active files given decide which rules apply; the context printed keeps them, so
    // that, used again, it decides the same.
    let files = args.rules.files.clone();
    let target = TargetArgs {
        family: None,
        variant: None,
        model: args.model,
        provider: args.provider,
        label: None,
        tag: None,
        dialect: None,
        mcp: args.mcp,
        rules: args.rules,
        detect_env: args.detect_env,
        context: args.context,
        set: Vec::new(),
    };
    let (mut request, rules) = request_with_rules(workspace, target, printer)?;
    for file in files {
        if !request.context.active_files.contains(&file) {
            request.context.active_files.push(file);
        }
    }
    // The declared fields a context leaves out, at the defaults compiles see.
    for (key, field) in &workspace.settings().context_fields {
        if !request.context.extra.contains_key(key) {
            request
                .context
                .extra
                .insert(key.clone(), field.default_value());
        }
    }
    let mut value = serde_json::to_value(&request.context)
        .map_err(|error| CliError::Unprintable(error.to_string()))?;
    // What is printed is a context to use again: its rules folders were read into `rules`
    // and `workflows`, and naming them as well would read them twice. A field left unset
    // (`date`) is left out, not written `null` (which a context may not hold); a null
    // anywhere else is the user's own (a tool schema's `default`), kept in JSON and refused
    // by TOML by name.
    if let Some(fields) = value.as_object_mut() {
        fields.remove("rules_from");
        // The rules assembled are those the toggles left on: a toggle kept would name a rule
        // the printed context no longer holds.
        if rules.assembled {
            fields.remove("rule_toggles");
        }
        fields.retain(|_, field| !field.is_null());
    }
    let format = DataFormat::or_workspace(args.format, workspace);
    // A rules file's frontmatter key left empty (`globs:`, as Cursor writes every new rule)
    // is a null, which TOML has no way to write: such a key says nothing, and is left out of
    // the TOML rather than refuse the whole context.
    if format == DataFormat::Toml {
        for kind in ["rules", "workflows"] {
            let rules = value
                .get_mut(kind)
                .and_then(serde_json::Value::as_array_mut);
            for rule in rules.into_iter().flatten() {
                if let Some(metadata) = rule
                    .get_mut("metadata")
                    .and_then(serde_json::Value::as_object_mut)
                {
                    metadata.retain(|_, value| !value.is_null());
                }
            }
        }
    }
    printer.result(&match format {
        DataFormat::Json => report::json_document(&value),
        DataFormat::Toml => toml_written(&value)?,
        DataFormat::Yaml => report::yaml::yaml_document(&value),
    })
}
