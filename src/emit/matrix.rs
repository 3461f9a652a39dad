//! The build matrix: every family × context of the manifest compiled to
//! `<out>/<family>/<context>.md`, written, compared with what is committed, and cleaned.
//!
//! promptc records the files it wrote in `<out>/.promptc-outputs`, so that removing a family
//! or context from the matrix removes its output and never a file promptc did not write.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use similar::TextDiff;

use crate::compile::{CompileError, Compiled, Request, Selection};
use crate::diagnostic::Diagnostics;
use crate::emit::budget::check_budget;
use crate::emit::stable_prefix::volatile_warning;
use crate::emit::write::write_atomic;
use crate::render::budget::Exhausted;
use crate::workspace::Workspace;

/// The list of outputs promptc owns, one workspace-relative path per line.
pub const INDEX_FILE: &str = ".promptc-outputs";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixEntry {
    pub family: String,
    pub context: String,
    /// Relative to the workspace root, `/`-separated.
    pub path: String,
}

/// The matrix's entries, families in manifest (or declaration) order, contexts likewise.
pub fn entries(workspace: &Workspace) -> Vec<MatrixEntry> {
    let build = &workspace.manifest.build;
    let families = build
        .families
        .clone()
        .unwrap_or_else(|| workspace.families());
    let contexts: Vec<String> = build
        .contexts
        .clone()
        .unwrap_or_else(|| workspace.contexts.keys().cloned().collect());
    let out = build.out.trim_end_matches('/');
    families
        .iter()
        .flat_map(|family| {
            contexts.iter().map(move |context| MatrixEntry {
                family: family.clone(),
                context: context.clone(),
                path: format!("{out}/{family}/{context}.md"),
            })
        })
        .collect()
}

/// The result of compiling the whole matrix: what compiled, and what did not and why.
#[derive(Debug, Default)]
pub struct MatrixRun {
    pub outputs: Vec<(MatrixEntry, Compiled)>,
    pub failed: Vec<(MatrixEntry, CompileError)>,
    /// Outputs over their token budget: errors, though the text was compiled.
    pub over_budget: Diagnostics,
}

impl MatrixRun {
    /// Whether every entry compiled within its budget.
    pub fn is_clean(&self) -> bool {
        self.failed.is_empty() && self.over_budget.is_empty()
    }
}

/// The request that compiles one matrix entry; `None` for an unknown context (a validation
/// error of its own).
pub fn request(
    workspace: &Workspace,
    entry: &MatrixEntry,
    source_date_epoch: Option<i64>,
) -> Option<Request> {
    let context = workspace.contexts.get(&entry.context)?;
    let mut request = Request::new(
        Selection::Family(entry.family.clone()),
        context.value.clone(),
    );
    request.source_date_epoch = source_date_epoch;
    Some(request)
}

/// Compiles every entry. Failures are returned with their entry; the other entries still
/// compile. A diagnostic is returned with the first entry that hit it only: the same
/// template error is not repeated for every family × context.
pub fn compile_all(workspace: &Workspace, source_date_epoch: Option<i64>) -> MatrixRun {
    let mut run = MatrixRun::default();
    let exhausted = Exhausted::default();
    let mut reported = BTreeSet::new();
    for entry in entries(workspace) {
        let Some(request) = request(workspace, &entry, source_date_epoch) else {
            continue;
        };
        match workspace.compile_in(&request, &exhausted) {
            Ok(output) => {
                if let Ok(variant) = workspace.select(&request.selection)
                    && let Some(diagnostic) =
                        check_budget(workspace, &variant, &output, &entry.context)
                {
                    run.over_budget.push(diagnostic);
                }
                run.outputs.push((entry, output));
            }
            Err(CompileError::Diagnostics(found)) => {
                let mut fresh = Diagnostics::default();
                for diagnostic in found.iter() {
                    let span = diagnostic.span;
                    let key = (
                        span.source,
                        span.start,
                        span.end,
                        diagnostic.problem.to_string(),
                    );
                    if reported.insert(key) {
                        fresh.push(diagnostic.clone());
                    }
                }
                run.failed.push((entry, CompileError::Diagnostics(fresh)));
            }
            Err(error) => run.failed.push((entry, error)),
        }
    }
    run
}

#[derive(Debug, Default)]
pub struct WriteReport {
    pub written: Vec<String>,
    pub unchanged: Vec<String>,
    pub removed: Vec<String>,
}

/// Writes the outputs that changed (atomically), removes owned outputs no longer in the
/// matrix, and records the new set of owned files.
pub fn write_all(
    workspace: &Workspace,
    outputs: &[(MatrixEntry, Compiled)],
) -> io::Result<WriteReport> {
    let root = &workspace.root;
    let mut report = WriteReport::default();
    let current: BTreeSet<&str> = outputs.iter().map(|(e, _)| e.path.as_str()).collect();
    for (entry, compiled) in outputs {
        let text = &compiled.prompt;
        let path = root.join(&entry.path);
        if std::fs::read(&path).ok().as_deref() == Some(text.as_bytes()) {
            report.unchanged.push(entry.path.clone());
        } else {
            write_atomic(&path, text.as_bytes())?;
            report.written.push(entry.path.clone());
        }
    }
    for owned in read_index(workspace)? {
        if !current.contains(owned.as_str()) {
            let path = root.join(&owned);
            if path.is_file() {
                std::fs::remove_file(&path)?;
                report.removed.push(owned);
            }
        }
    }
    let mut index = String::new();
    for path in &current {
        index.push_str(path);
        index.push('\n');
    }
    write_atomic(&index_path(workspace), index.as_bytes())?;
    Ok(report)
}

/// How a committed output differs from a fresh compile.
#[derive(Debug, PartialEq, Eq)]
pub enum Mismatch {
    Stale {
        path: String,
        diff: String,
    },
    Missing {
        path: String,
    },
    /// A file in the output folder that is not an output of the matrix. `owned` when promptc
    /// wrote it (so `build --all` removes it), otherwise it is someone else's file.
    Unexpected {
        path: String,
        owned: bool,
    },
}

impl Mismatch {
    pub fn path(&self) -> &str {
        match self {
            Mismatch::Stale { path, .. }
            | Mismatch::Missing { path }
            | Mismatch::Unexpected { path, .. } => path,
        }
    }
}

/// Compares fresh outputs with the files on disk; writes nothing.
pub fn check(
    workspace: &Workspace,
    outputs: &[(MatrixEntry, Compiled)],
) -> io::Result<Vec<Mismatch>> {
    let root = &workspace.root;
    let mut mismatches = Vec::new();
    for (entry, compiled) in outputs {
        let text = &compiled.prompt;
        match std::fs::read_to_string(root.join(&entry.path)) {
            Ok(on_disk) if on_disk == *text => {}
            Ok(on_disk) => mismatches.push(Mismatch::Stale {
                path: entry.path.clone(),
                diff: unified_diff(&entry.path, &on_disk, text),
            }),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                mismatches.push(Mismatch::Missing {
                    path: entry.path.clone(),
                });
            }
            Err(error) => return Err(error),
        }
    }
    let expected: BTreeSet<&str> = outputs.iter().map(|(e, _)| e.path.as_str()).collect();
    let owned: BTreeSet<String> = read_index(workspace)?
        .into_iter()
        .filter(|p| root.join(p).is_file())
        .collect();
    let mut present = outputs_on_disk(workspace)?;
    present.extend(owned.iter().cloned());
    for path in present {
        if !expected.contains(path.as_str()) {
            let owned = owned.contains(&path);
            mismatches.push(Mismatch::Unexpected { path, owned });
        }
    }
    Ok(mismatches)
}

/// A unified diff from the committed text to the fresh one.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

fn index_path(workspace: &Workspace) -> PathBuf {
    workspace
        .root
        .join(&workspace.manifest.build.out)
        .join(INDEX_FILE)
}

/// The outputs promptc recorded as its own. Only entries of the form
/// `<out>/<family>/<context>.md` count: the index is a committed file, and an edited one must
/// never make `build --all` delete anything else.
fn read_index(workspace: &Workspace) -> io::Result<Vec<String>> {
    let text = match std::fs::read_to_string(index_path(workspace)) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let out = workspace.manifest.build.out.trim_end_matches('/');
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| is_output_path(out, line))
        .map(str::to_string)
        .collect())
}

/// Whether `path` is `<out>/<name>/<name>.md` with plain names (no `..`, no separators).
fn is_output_path(out: &str, path: &str) -> bool {
    let Some(rest) = path.strip_prefix(out).and_then(|r| r.strip_prefix('/')) else {
        return false;
    };
    let plain =
        |name: &str| !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\']);
    match rest.split_once('/') {
        Some((family, file)) => plain(family) && file.strip_suffix(".md").is_some_and(plain),
        None => false,
    }
}

/// `<out>/<family>/<context>.md` files present on disk, sorted.
fn outputs_on_disk(workspace: &Workspace) -> io::Result<BTreeSet<String>> {
    let out = workspace.manifest.build.out.trim_end_matches('/');
    let dir = workspace.root.join(out);
    let mut found = BTreeSet::new();
    if !dir.is_dir() {
        return Ok(found);
    }
    for family in std::fs::read_dir(&dir)? {
        let family = family?;
        if !family.file_type()?.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(family.path())? {
            let path = file?.path();
            if path.extension().is_some_and(|e| e == "md") && path.is_file() {
                found.insert(relative(&workspace.root, &path));
            }
        }
    }
    Ok(found)
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Everything wrong with the compiled matrix, as diagnostics: entries that fail to compile,
/// prompts over budget, and volatile values early in a prompt (warnings).
pub fn diagnostics(workspace: &Workspace, source_date_epoch: Option<i64>) -> Diagnostics {
    let run = compile_all(workspace, source_date_epoch);
    let mut diagnostics = Diagnostics::default();
    for (_, error) in run.failed {
        match error {
            CompileError::Diagnostics(found) => diagnostics.extend(found),
            // Several variants for one family: reported at the manifest's matrix.
            CompileError::Selection(problem) => {
                if let Some(manifest) = &workspace.manifest_entry {
                    diagnostics.error(problem, manifest.key_span("/build"));
                }
            }
        }
    }
    diagnostics.extend(run.over_budget);
    for (entry, compiled) in &run.outputs {
        if let Some(request) = request(workspace, entry, source_date_epoch)
            && let Some(warning) = volatile_warning(workspace, &request, compiled, &entry.context)
        {
            diagnostics.push(warning);
        }
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::is_output_path;

    #[test]
    fn only_plain_output_paths_are_owned() {
        let out = "examples/prompts";
        assert!(is_output_path(out, "examples/prompts/xs/basic.md"));
        assert!(!is_output_path(out, "/tmp/victim.txt"));
        assert!(!is_output_path(out, "../../../tmp/victim.md"));
        assert!(!is_output_path(out, "examples/prompts/../promptc.toml"));
        assert!(!is_output_path(out, "examples/prompts/../x/basic.md"));
        assert!(!is_output_path(out, "examples/prompts/xs/../../x.md"));
        assert!(!is_output_path(out, "examples/prompts/xs/basic.txt"));
        assert!(!is_output_path(out, "promptc.toml"));
    }
}
