//! `promptc diff`: the compiled prompts of two versions of a workspace, compared — per
//! family × context a unified diff with its change in characters and tokens, and which source
//! files changed and which outputs each one affected.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::compiled::CompileError;
use crate::confine;
use crate::diagnostic::Diagnostic;
use crate::emit::matrix::{self, MatrixEntry, unified_diff};
use crate::emit::write::{Staged, TEMP_PREFIX};
use crate::source::Sources;
use crate::tokens::Encoding;

/// One side's compiled matrix and the text of every file it read.
pub struct SideOutputs {
    outputs: BTreeMap<String, Output>,
    files: BTreeMap<String, String>,
}

struct Output {
    family: String,
    context: String,
    prompt: String,
    inputs: Vec<String>,
    /// The family's encoding from the side's `[tokens]`, and whether it is exact.
    encoding: Encoding,
    exact: bool,
}

/// Why one side's matrix could not be compiled; [`crate::report::diff::side_error`] words it.
#[derive(Debug)]
pub enum SideError {
    /// The workspace could not be read.
    Unreadable(std::io::Error),
    /// Its files have errors (sorted).
    Invalid {
        diagnostics: Vec<Diagnostic>,
        sources: Sources,
    },
    /// Entries of the matrix do not compile.
    NotCompiled {
        failed: Vec<(MatrixEntry, CompileError)>,
        sources: Sources,
    },
}

/// Compiles the matrix of the workspace at `root`.
pub fn compile_side(root: &Path, source_date_epoch: Option<i64>) -> Result<SideOutputs, SideError> {
    let loaded = crate::loader::load_workspace(root).map_err(SideError::Unreadable)?;
    let mut workspace = loaded.workspace;
    if loaded.diagnostics.has_errors() {
        return Err(SideError::Invalid {
            diagnostics: loaded.diagnostics.sorted(),
            sources: workspace.sources,
        });
    }
    let run = matrix::compile_all(
        &crate::compile::Compiler::new(&workspace),
        source_date_epoch,
    );
    if !run.failed.is_empty() {
        return Err(SideError::NotCompiled {
            failed: run.failed,
            sources: std::mem::take(&mut workspace.sources),
        });
    }
    let mut outputs = BTreeMap::new();
    for (entry, compiled) in run.outputs {
        let mut inputs = compiled.inputs;
        if let Some(context) = workspace.contexts.get(&entry.context) {
            inputs.push(
                workspace
                    .sources
                    .get(context.source())
                    .path
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        let tokens = &workspace.settings().tokens;
        outputs.insert(
            entry.path,
            Output {
                encoding: tokens.encoding_for(&entry.family),
                exact: tokens.is_exact(&entry.family),
                family: entry.family,
                context: entry.context,
                prompt: compiled.prompt,
                inputs,
            },
        );
    }
    let files = workspace
        .sources
        .iter()
        .filter(|file| !file.path.starts_with("<built-in>"))
        .map(|file| (file.path.to_string_lossy().into_owned(), file.text.clone()))
        .collect();
    Ok(SideOutputs { outputs, files })
}

#[derive(Debug, Serialize)]
pub struct DiffReport {
    pub base: String,
    pub head: String,
    pub prompts: Vec<PromptChange>,
    pub sources: Vec<SourceChange>,
    /// Sides that could not be compiled, with the reason.
    pub failures: Vec<SideFailure>,
    /// What is known of the side that did compile, when the other did not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct SideFailure {
    pub side: String,
    pub revision: String,
    pub message: String,
}

#[derive(Debug, Serialize)]
pub struct PromptChange {
    pub path: String,
    pub family: String,
    pub context: String,
    /// `modified`, `added` or `removed`.
    pub status: &'static str,
    pub characters: (usize, usize),
    pub tokens: (usize, usize),
    /// The encoding the tokens were counted with, and whether it is the family's own.
    pub encoding: &'static str,
    pub exact: bool,
    pub diff: String,
}

#[derive(Debug, Serialize)]
pub struct SourceChange {
    pub path: String,
    pub status: &'static str,
    /// Outputs that changed and were compiled from this file.
    pub affects: Vec<String>,
}

/// Compares two sides; either may have failed.
pub fn compare(
    base: (&str, Result<SideOutputs, String>),
    head: (&str, Result<SideOutputs, String>),
    source_date_epoch: Option<i64>,
) -> DiffReport {
    let mut failures = Vec::new();
    let mut take =
        |side: &str, (revision, result): (&str, Result<SideOutputs, String>)| match result {
            Ok(outputs) => Some(outputs),
            Err(message) => {
                failures.push(SideFailure {
                    side: side.into(),
                    revision: revision.into(),
                    message,
                });
                None
            }
        };
    let (base_label, head_label) = (base.0.to_string(), head.0.to_string());
    let before = take("base", base);
    let after = take("head", head);
    let (Some(before), Some(after)) = (&before, &after) else {
        let mut notes = Vec::new();
        for (side, label, outputs) in [
            ("base", &base_label, &before),
            ("head", &head_label, &after),
        ] {
            if let Some(outputs) = outputs {
                notes.push(format!(
                    "the {side} side ({label}) compiles: {} outputs",
                    outputs.outputs.len()
                ));
            }
        }
        return DiffReport {
            base: base_label,
            head: head_label,
            prompts: Vec::new(),
            sources: Vec::new(),
            failures,
            notes,
        };
    };

    let paths: BTreeSet<&String> = before.outputs.keys().chain(after.outputs.keys()).collect();
    let mut prompts = Vec::new();
    for path in paths {
        let old = before.outputs.get(path);
        let new = after.outputs.get(path);
        let (status, old_text, new_text) = match (old, new) {
            (Some(o), Some(n)) if o.prompt == n.prompt => continue,
            (Some(o), Some(n)) => ("modified", o.prompt.as_str(), n.prompt.as_str()),
            (Some(o), None) => ("removed", o.prompt.as_str(), ""),
            (None, Some(n)) => ("added", "", n.prompt.as_str()),
            (None, None) => continue,
        };
        let Some(output) = new.or(old) else {
            continue;
        };
        let encoding = output.encoding;
        prompts.push(PromptChange {
            encoding: encoding.name(),
            exact: output.exact,
            path: path.clone(),
            family: output.family.clone(),
            context: output.context.clone(),
            status,
            characters: (old_text.chars().count(), new_text.chars().count()),
            tokens: (encoding.count(old_text), encoding.count(new_text)),
            diff: unified_diff(path, old_text, new_text),
        });
    }

    let files: BTreeSet<&String> = before.files.keys().chain(after.files.keys()).collect();
    let mut sources = Vec::new();
    for file in files {
        let status = match (before.files.get(file), after.files.get(file)) {
            (Some(a), Some(b)) if a == b => continue,
            (Some(_), Some(_)) => "modified",
            (Some(_), None) => "removed",
            (None, Some(_)) => "added",
            (None, None) => continue,
        };
        let affects = affected(before, after, file, source_date_epoch).unwrap_or_else(|| {
            // Could not isolate the change: fall back to the outputs that read the file.
            let uses = |side: &SideOutputs, path: &str| {
                side.outputs
                    .get(path)
                    .is_some_and(|o| o.inputs.iter().any(|i| i == file))
            };
            prompts
                .iter()
                .filter(|p| uses(before, &p.path) || uses(after, &p.path))
                .map(|p| p.path.clone())
                .collect()
        });
        sources.push(SourceChange {
            path: file.clone(),
            status,
            affects,
        });
    }

    DiffReport {
        base: base_label,
        head: head_label,
        prompts,
        sources,
        failures,
        notes: Vec::new(),
    }
}

/// The outputs that one file's change alone alters: the base's files with only that file
/// changed, compiled and compared with the base's outputs. `None` when that cannot be done.
fn affected(
    before: &SideOutputs,
    after: &SideOutputs,
    file: &str,
    source_date_epoch: Option<i64>,
) -> Option<Vec<String>> {
    let dir = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempdir()
        .ok()?;
    let root = dir.path().canonicalize().ok()?;
    let files = before
        .files
        .iter()
        .filter(|(path, _)| path.as_str() != file)
        .chain(after.files.get_key_value(file));
    let mut staged = Staged::default();
    for (path, text) in files {
        // Workspace-relative paths only: nothing is written outside the temporary folder.
        let target = confine::resolve_output(&root, Path::new(""), Path::new(path)).ok()?;
        staged.add(&target, Path::new(path), text.as_bytes()).ok()?;
    }
    staged.commit().ok()?;
    let alone = compile_side(&root, source_date_epoch).ok()?;
    let paths: BTreeSet<&String> = before.outputs.keys().chain(alone.outputs.keys()).collect();
    Some(
        paths
            .into_iter()
            .filter(|path| {
                before.outputs.get(*path).map(|o| &o.prompt)
                    != alone.outputs.get(*path).map(|o| &o.prompt)
            })
            .cloned()
            .collect(),
    )
}
