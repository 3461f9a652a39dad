use std::path::Path;

use clap::{Args, ValueEnum};

use super::error::IdProblem;
use super::message::NextAfterNew;
use super::{CliError, Message, Printer, workspace_root};
use crate::confine::resolve_output;
use crate::emit::write::Staged;
use crate::model::default_slot;
use crate::problem::RefKind;

#[derive(Args, Debug)]
pub struct NewArgs {
    /// What to create.
    #[arg(value_enum)]
    pub kind: NewKind,
    /// Its id: letters, digits, `_`, `.` and `-`.
    pub id: String,
    /// The data file's language (default: YAML when the workspace's variants, components and
    /// tools are all YAML, else TOML). Not `--format`, which names what a command prints.
    #[arg(long = "as", value_enum, value_name = "LANGUAGE")]
    pub written_as: Option<NewFormat>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum NewFormat {
    Toml,
    /// `yml` too: the extension YAML files often have, which promptc reads as well.
    #[value(alias = "yml")]
    Yaml,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum NewKind {
    Tool,
    Component,
    Variant,
}

/// Writes a new file of the kind, with its schema line and the fields it needs, where the
/// manifest's paths put that kind; never over an existing file, nor under an id or slot the
/// workspace has already. A workspace with errors elsewhere still gets the file (the file may
/// be what fixes them, as a component a base template reads): only a manifest with errors,
/// which says where files go, stops it.
/// The longest id `new` names files after: its `.toml`, `.yaml` or `.md` file name stays
/// within the 255 bytes most file systems allow.
pub(super) const MAX_NEW_ID_BYTES: usize = 200;

pub fn run(args: NewArgs, workspace_dir: Option<&Path>, printer: &Printer) -> Result<(), CliError> {
    let root = workspace_root(workspace_dir)?;
    let loaded = crate::loader::load_workspace(&root)?;
    let workspace = &loaded.workspace;
    if workspace.invalid.manifest_invalid {
        printer.diagnostics(loaded.diagnostics, &workspace.sources);
        return Err(CliError::Reported);
    }
    let id = &args.id;
    if !crate::model::is_valid_id(id) {
        return Err(CliError::NotAnId {
            id: id.clone(),
            problem: IdProblem::Characters,
        });
    }
    // The files are named after the id, and a file name has at most 255 bytes on most
    // systems: a longer id failed with the system's own words after the checks passed.
    if id.len() > MAX_NEW_ID_BYTES {
        return Err(CliError::NotAnId {
            id: id.clone(),
            problem: IdProblem::TooLong,
        });
    }
    // Its files are named after it: `nul.toml` is a device on Windows (validation refuses
    // such a family or context, which names an output too), and `x.` names an output `x.`,
    // which Windows makes `x`.
    if crate::validate::not_portable(id, false) {
        return Err(CliError::NotAnId {
            id: id.clone(),
            problem: IdProblem::WindowsDevice,
        });
    }
    // A tool's id is its name unless the file gives one: an id validation would refuse as a
    // name is refused here, before the file is written.
    if args.kind == NewKind::Tool && !crate::model::is_callable_name(id) {
        return Err(CliError::NotAnId {
            id: id.clone(),
            problem: IdProblem::NotCallable,
        });
    }
    let settings = workspace.settings();
    let paths = &settings.paths;
    let yaml = match args.written_as {
        Some(format) => format == NewFormat::Yaml,
        None => super::DataFormat::of_workspace(workspace) == super::DataFormat::Yaml,
    };
    let (folder, schema, files) = match args.kind {
        NewKind::Tool => (
            &paths.tools,
            "tool",
            vec![(
                format!("{id}.toml"),
                format!("id = \"{id}\"\ndescription = \"What {id} does, and when to use it.\"\n"),
            )],
        ),
        NewKind::Component => (
            &paths.components,
            "component",
            vec![
                (
                    format!("{id}.toml"),
                    format!(
                        "id = \"{id}\"\ndescription = \"What this section tells the model.\"\n"
                    ),
                ),
                (format!("{id}.md"), format!("{}\n", id.to_uppercase())),
            ],
        ),
        // A variant of another family extends the fallback family's variant; the fallback
        // family's own (or any variant while the fallback has none) is a base variant with a
        // template of its own, which the components' slots are added to.
        NewKind::Variant => match fallback_variant(workspace) {
            Some(parent) => (
                &paths.variants,
                "variant",
                vec![(
                    format!("{id}.toml"),
                    format!("id = \"{id}\"\nextends = \"{parent}\"\nversion = \"1.0.0\"\n"),
                )],
            ),
            None => (
                &paths.variants,
                "variant",
                vec![
                    (
                        format!("{id}.toml"),
                        format!(
                            "id = \"{id}\"\nversion = \"1.0.0\"\ntemplate_file = \"{id}.md\"\ncomponents = []\ntools = []\n"
                        ),
                    ),
                    (format!("{id}.md"), BASE_TEMPLATE.to_string()),
                ],
            ),
        },
    };
    // A folder the load does not read (the root, one outside the workspace): a file written
    // there would not count, and validation says so at the setting.
    if crate::load::read::data_folder(workspace.root(), folder).is_none() {
        let setting = match args.kind {
            NewKind::Tool => "paths.tools",
            NewKind::Component => "paths.components",
            NewKind::Variant => "paths.variants",
        };
        return Err(CliError::NotADataFolder {
            setting,
            folder: folder.clone(),
        });
    }
    if let Some(taken) = taken(workspace, args.kind, id, folder) {
        return Err(taken);
    }
    let depth = std::path::Path::new(folder).components().count();
    let schema_line = schema_line(depth, &paths.schema, schema, yaml);
    // The same fields in YAML: each is `key = value` with a TOML string, number or empty
    // list, which YAML writes as `key: value`.
    let files: Vec<(String, String)> = if yaml {
        files
            .into_iter()
            .map(|(name, text)| match name.strip_suffix(".toml") {
                Some(stem) => (format!("{stem}.yaml"), text.replace(" = ", ": ")),
                None => (name, text),
            })
            .collect()
    } else {
        files
    };
    let root = workspace.root();
    let mut staged = Staged::default();
    let mut written = Vec::new();
    for (name, text) in files {
        let shown = std::path::Path::new(folder).join(&name);
        let real = resolve_output(
            root,
            std::path::Path::new(folder),
            std::path::Path::new(&name),
        )?;
        if real.symlink_metadata().is_ok() {
            return Err(CliError::WouldOverwrite(vec![shown]));
        }
        let text = if name.ends_with(".toml") || name.ends_with(".yaml") {
            format!("{schema_line}{text}")
        } else {
            text
        };
        staged.add(&real, &shown, text.as_bytes())?;
        written.push(shown);
    }
    staged.commit()?;
    for path in &written {
        printer.message(Message::Wrote(&path.display()));
    }
    let fallback = fallback_variant(workspace).and_then(|variant| {
        let entry = workspace.variants.get(variant)?;
        Some((
            variant,
            workspace.sources.get(entry.source()).path.as_path(),
        ))
    });
    let variant_file = written.first().map(std::path::PathBuf::as_path);
    // A new variant is its own family, which a `build.families` list leaves out.
    let unbuilt = workspace
        .settings()
        .build
        .families
        .as_ref()
        .is_some_and(|families| !families.iter().any(|family| family == id));
    let next = match (args.kind, fallback, variant_file) {
        (NewKind::Tool, _, _) => Some(NextAfterNew::List {
            field: "tools",
            id,
            slot: None,
            variant: fallback,
        }),
        (NewKind::Component, _, _) => Some(NextAfterNew::List {
            field: "components",
            id,
            slot: Some(default_slot(id)),
            variant: fallback,
        }),
        (NewKind::Variant, Some((parent, _)), Some(file)) => Some(NextAfterNew::Extending {
            id,
            parent,
            file,
            unbuilt,
        }),
        (NewKind::Variant, None, Some(file)) => Some(NextAfterNew::Base { id, file, unbuilt }),
        (NewKind::Variant, _, None) => None,
    };
    if let Some(next) = next {
        printer.message(Message::NextAfterNew(next));
    }
    // Counted again with the new files: the one written may be what fixed them.
    if loaded.diagnostics.has_errors()
        && let Ok(now) = crate::loader::load_workspace(root)
    {
        let (mut in_new, mut elsewhere) = (0, 0);
        for (source, errors) in now.diagnostics.errors_by_file() {
            let file = &now.workspace.sources.get(source).path;
            if written.iter().any(|path| path == file) {
                in_new += errors;
            } else {
                elsewhere += errors;
            }
        }
        if in_new + elsewhere > 0 {
            printer.message(Message::WorkspaceHasErrors { in_new, elsewhere });
        }
    }
    Ok(())
}

/// The id of a variant of the fallback family (a family's variants may have ids of their own,
/// `generic-1.1`): the one named like the family, else the first.
fn fallback_variant(workspace: &crate::workspace::Workspace) -> Option<&str> {
    let family = &workspace.settings().fallback_family;
    if workspace.variants.contains_key(family) {
        return Some(family);
    }
    workspace
        .variants
        .iter()
        .find(|(_, entry)| entry.value.family_or_id() == family)
        .map(|(id, _)| id.as_str())
}

/// The base template of a new base variant: the tools, where each listed component's slot
/// goes once there are some.
const BASE_TEMPLATE: &str = "\
{#- The prompt's outline: write each listed component's slot (`{{ INTRO_SECTION }}` for the
    component `intro`) where its section belongs. -#}
You are a helpful assistant.

{{ TOOLS }}
";

/// Why `id` cannot be a new file of `kind`: the workspace has it already (as a file of any
/// format, or declared by a file of another name), or, for a component, its slot.
fn taken(
    workspace: &crate::workspace::Workspace,
    kind: NewKind,
    id: &str,
    folder: &str,
) -> Option<CliError> {
    // What the kind is called, and each id of it with its file.
    let (what, ref_kind, ids): (_, _, Vec<(&String, &std::path::PathBuf)>) = match kind {
        NewKind::Tool => (
            "tool",
            RefKind::Tool,
            workspace
                .tools
                .iter()
                .map(|(id, e)| (id, &e.path))
                .collect(),
        ),
        NewKind::Component => (
            "component",
            RefKind::Component,
            workspace
                .components
                .iter()
                .map(|(id, e)| (id, &e.path))
                .collect(),
        ),
        NewKind::Variant => (
            "variant",
            RefKind::Variant,
            workspace
                .variants
                .iter()
                .map(|(id, e)| (id, &e.path))
                .collect(),
        ),
    };
    let existing = ids
        .iter()
        .find(|(known, _)| *known == id)
        .map(|(_, path)| (*path).clone());
    let root = workspace.root();
    let shown = |path: &Path| {
        path.strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    // A file of another format under the same name, whether it loaded or not.
    let same_name = ["toml", "yaml", "yml"]
        .iter()
        .map(|extension| Path::new(folder).join(format!("{id}.{extension}")))
        .find(|path| root.join(path).symlink_metadata().is_ok());
    // A link to nothing under the name is no tool, component or variant: it is told as what
    // it is.
    if existing.is_none()
        && let Some(path) = &same_name
        && crate::confine::is_dangling_link(&root.join(path))
    {
        return Some(CliError::Path(crate::path_error::PathError::new(
            path,
            crate::path_error::PathProblem::DanglingLink,
        )));
    }
    let by = existing
        .map(|path| shown(&path))
        .or_else(|| same_name.map(|path| path.display().to_string()))
        .or_else(|| {
            workspace
                .invalid
                .contains(ref_kind, id)
                .then(|| "a file that does not load".to_string())
        });
    if let Some(by) = by {
        return Some(CliError::IdTaken {
            what,
            id: id.to_string(),
            by,
        });
    }
    if kind == NewKind::Component {
        let slot = default_slot(id);
        let holder = workspace
            .components
            .values()
            .find(|entry| entry.value.slot() == slot)
            .map(|entry| format!("component `{}`", entry.value.id))
            .or_else(|| {
                workspace
                    .invalid
                    .slots
                    .contains(&slot)
                    .then(|| "a component that does not load".to_string())
            });
        if let Some(holder) = holder {
            return Some(CliError::SlotTaken {
                id: id.to_string(),
                slot,
                by: holder,
            });
        }
    }
    // An id that differs only by case names a file that is the same one where case is
    // ignored (and the validation refuses the pair wherever it is).
    let folded = crate::namespace::folded(id);
    if let Some((other, path)) = ids
        .iter()
        .find(|(known, _)| crate::namespace::folded(known) == folded)
    {
        return Some(CliError::IdTakenByCase {
            what,
            id: id.to_string(),
            other: (*other).clone(),
            by: shown(path),
        });
    }
    None
}

/// The first line of a data file `depth` folders below the workspace root that points an
/// editor at the schema of its `kind` in `schema_folder`: relative to the file, as many `..`
/// as the folder is deep.
pub(super) fn schema_line(depth: usize, schema_folder: &str, kind: &str, yaml: bool) -> String {
    let schema_path = format!("{}{schema_folder}/{kind}.schema.json", "../".repeat(depth));
    if yaml {
        format!("# yaml-language-server: $schema={schema_path}\n")
    } else {
        format!("#:schema {schema_path}\n")
    }
}
