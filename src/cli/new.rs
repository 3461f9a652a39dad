use std::path::Path;

use clap::{Args, ValueEnum};

use super::{CliError, Message, Printer, load_valid};
use crate::confine::resolve_output;
use crate::emit::write::Staged;

#[derive(Args, Debug)]
pub struct NewArgs {
    /// What to create.
    #[arg(value_enum)]
    pub kind: NewKind,
    /// Its id: letters, digits, `_`, `.` and `-`.
    pub id: String,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum NewKind {
    Tool,
    Component,
    Variant,
}

/// Writes a new file of the kind, with its schema line and the fields it needs, where the
/// manifest's paths put that kind; never over an existing file.
pub fn run(args: NewArgs, workspace_dir: Option<&Path>, printer: &Printer) -> Result<(), CliError> {
    let workspace = load_valid(workspace_dir, printer)?;
    let id = &args.id;
    let valid_id = id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !valid_id {
        return Err(CliError::Unprintable(format!(
            "`{id}` is not an id: use letters, digits, `_`, `.` and `-`, starting with a letter or digit"
        )));
    }
    let settings = workspace.settings();
    let paths = &settings.paths;
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
        NewKind::Variant => (
            &paths.variants,
            "variant",
            vec![(
                format!("{id}.toml"),
                format!(
                    "id = \"{id}\"\nextends = \"{}\"\nversion = \"1.0.0\"\n",
                    settings.fallback_family
                ),
            )],
        ),
    };
    // The schema line is relative to the file: as many `..` as the folder is deep.
    let depth = std::path::Path::new(folder).components().count();
    let up = "../".repeat(depth);
    let schema_line = format!("#:schema {up}{}/{schema}.schema.json\n", paths.schema);
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
        let text = if name.ends_with(".toml") {
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
    Ok(())
}
