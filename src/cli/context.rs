use std::path::{Path, PathBuf};

use clap::Args;
use clap::builder::NonEmptyStringValueParser;

use super::show::toml_written;
use super::{CliError, DataFormat, Printer, TargetArgs, load_valid, request_with_rules};
use crate::emit::write::Staged;
use crate::path_error::{PathError, PathProblem};
use crate::report;

#[derive(Args, Debug)]
pub struct ContextArgs {
    /// A context: a file (TOML, YAML or JSON), the name of one in the workspace, or `-` for
    /// standard input (default: the manifest's `default_context`).
    #[arg(long)]
    pub context: Option<String>,
    /// Set the context's `model.id`.
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub model: Option<String>,
    /// Set the context's `model.provider`.
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub provider: Option<String>,
    #[command(flatten)]
    pub rules: super::RulesArgs,
    /// An MCP settings file whose servers join the context's.
    #[arg(long, value_name = "FILE")]
    pub mcp: Option<PathBuf>,
    /// Fill `os`, `shell`, `home` and `cwd` from this machine.
    #[arg(long)]
    pub detect_env: bool,
    /// `toml`, `yaml` or `json` (default: that of `--out`'s extension, else the workspace's
    /// own, `yaml` where its variants, components and tools are all YAML, else `toml`).
    #[arg(long, value_enum)]
    pub format: Option<DataFormat>,
    /// Write the context to this file (as a whole, or not at all) instead of printing it: a
    /// shell's `> examples/contexts/x.toml` empties the file before promptc reads the
    /// workspace, which then refuses it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// The context a compile sees, after inheritance and the command line's changes: to inspect,
/// or to save as an example context.
pub fn run(
    args: ContextArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    // A context forgotten on the command line would write the empty one over a saved file.
    if let Some(out) = &args.out
        && args.context.is_none()
        && workspace.settings().default_context.is_none()
        && out.symlink_metadata().is_ok()
    {
        return Err(CliError::OutEmptyContext(out.clone()));
    }
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
    if let Some(out) = args
        .out
        .as_deref()
        .filter(|out| crate::load::document::Format::of_another_case(out))
    {
        return Err(CliError::OutExtensionCase(out.to_path_buf()));
    }
    let of_out = args
        .out
        .as_deref()
        .and_then(crate::load::document::Format::of)
        .map(DataFormat::from);
    if let (Some(asked), Some(of_out), Some(out)) = (args.format, of_out, &args.out)
        && asked != of_out
    {
        return Err(CliError::OutFormat {
            path: out.clone(),
            format: asked.extension(),
        });
    }
    let format = args
        .format
        .or(of_out)
        .unwrap_or_else(|| DataFormat::of_workspace(workspace));
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
    let text = match format {
        DataFormat::Json => report::json_document(&value),
        DataFormat::Toml => toml_written(&value)?,
        DataFormat::Yaml => report::yaml::yaml_document(&value),
    };
    match args.out {
        None => printer.result(&text),
        Some(out) => {
            // In the workspace, with the schema line `new` writes, so an editor checks it too.
            let text = match schema_line(workspace, &out, format) {
                Some(line) => format!("{line}{text}"),
                None => text,
            };
            write_context(workspace, &out, &text, printer)
        }
    }
}

/// The line that points an editor at the context schema, relative to `out`, for a TOML or
/// YAML file written in the workspace's contexts folder (JSON has no comments to hold it).
fn schema_line(
    workspace: &crate::workspace::Workspace,
    out: &Path,
    format: DataFormat,
) -> Option<String> {
    let folder = std::path::absolute(out).ok()?.parent()?.to_path_buf();
    let contexts = workspace.root.join(&workspace.settings().paths.contexts);
    if !folder.starts_with(&contexts) {
        return None;
    }
    let depth = folder
        .strip_prefix(&workspace.root)
        .ok()?
        .components()
        .count();
    let schema_folder = workspace.settings().paths.schema.trim_end_matches('/');
    match format {
        DataFormat::Toml | DataFormat::Yaml => Some(super::new::schema_line(
            depth,
            schema_folder,
            "context",
            format == DataFormat::Yaml,
        )),
        DataFormat::Json => None,
    }
}

/// Writes the context to `out`, by way of a temporary file beside it. A context file of the
/// workspace may be written again; any other file of the workspace is refused.
fn write_context(
    workspace: &crate::workspace::Workspace,
    out: &Path,
    text: &str,
    printer: &Printer,
) -> Result<(), CliError> {
    let is_context = |relative: &Path| {
        workspace
            .contexts
            .values()
            .any(|entry| workspace.sources.get(entry.source()).path == relative)
    };
    if let Some(relative) = super::workspace_source(workspace, out)
        && !is_context(&relative)
    {
        return Err(PathError::new(out, PathProblem::IsSource).into());
    }
    crate::confine::caller_path_stays(&workspace.root, out).map_err(CliError::Argument)?;
    if let Some(why) = out_name_problem(workspace, out) {
        return Err(CliError::OutContextName {
            path: out.to_path_buf(),
            why,
        });
    }
    let mut staged = Staged::default();
    staged
        .add_named(out, out, text.as_bytes())
        .map_err(CliError::Argument)?;
    staged.commit().map_err(CliError::Argument)?;
    printer.message(super::message::Message::Wrote(&out.display()));
    Ok(())
}

/// Why `out`, a file of the workspace's contexts folder, may not be written: a name no
/// context may have, another context's name (in another format), or no data extension. A
/// path elsewhere is the caller's.
fn out_name_problem(
    workspace: &crate::workspace::Workspace,
    out: &Path,
) -> Option<super::error::OutNameProblem> {
    use super::error::OutNameProblem;
    let folder = workspace.root.join(&workspace.settings().paths.contexts);
    let absolute = std::path::absolute(out).ok()?;
    let parent = absolute.parent()?;
    // Contexts are read from the folder's sub-folders too: `sub/basic.toml` was a second
    // `basic`.
    let in_contexts = parent.starts_with(&folder)
        || parent
            .canonicalize()
            .ok()
            .zip(folder.canonicalize().ok())
            .is_some_and(|(parent, folder)| parent.starts_with(folder));
    if !in_contexts {
        return None;
    }
    if crate::load::document::Format::of(out).is_none() {
        return Some(OutNameProblem::NotData);
    }
    let name = crate::load::specs::context_name(out);
    if !crate::load::specs::is_plain_name(&name) {
        return Some(OutNameProblem::NotAName);
    }
    // `con.json` names an output `con`, which no clone on Windows can hold.
    if crate::validate::not_portable(&name, false) {
        return Some(OutNameProblem::NotPortable);
    }
    // The same context written again is the one file of its name; another file of the name,
    // or of a name that differs only by case (`Basic.toml`, one file on macOS and Windows),
    // is a second.
    let folded = crate::namespace::folded(&name);
    workspace
        .contexts
        .iter()
        .filter(|(other, _)| crate::namespace::folded(other) == folded)
        .find_map(|(_, entry)| {
            let other = &workspace.sources.get(entry.source()).path;
            let same_file = workspace.root.join(other) == absolute
                || std::fs::canonicalize(workspace.root.join(other))
                    .ok()
                    .zip(std::fs::canonicalize(&absolute).ok())
                    .is_some_and(|(other, out)| other == out);
            (!same_file).then(|| OutNameProblem::Taken(other.display().to_string()))
        })
}
