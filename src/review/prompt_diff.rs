//! `promptc diff`: the compiled prompts of two versions of a workspace, compared — per
//! family × context a unified diff with its change in characters and tokens, and which source
//! files changed and which outputs each one affected.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::confine;
use crate::emit::matrix::{self, unified_diff};
use crate::emit::write::{Staged, TEMP_PREFIX};
use crate::report;
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

/// Compiles the matrix of the workspace at `root`. `Err` holds why it could not, in words.
pub fn compile_side(root: &Path, source_date_epoch: Option<i64>) -> Result<SideOutputs, String> {
    let loaded = crate::loader::load_workspace(root).map_err(|error| error.to_string())?;
    let workspace = loaded.workspace;
    if loaded.diagnostics.has_errors() {
        let sorted = loaded.diagnostics.sorted();
        return Err(report::human(&sorted, &workspace.sources, false));
    }
    let run = matrix::compile_all(
        &crate::compile::Compiler::new(&workspace),
        source_date_epoch,
    );
    if !run.failed.is_empty() {
        let mut message = String::new();
        for (entry, error) in run.failed {
            message.push_str(&format!(
                "{} × {} does not compile: ",
                entry.family, entry.context
            ));
            match error {
                crate::compiled::CompileError::Selection(problem) => {
                    message.push_str(&format!("{problem}\n"));
                }
                crate::compiled::CompileError::InvalidWorkspace => {
                    message.push_str("the workspace has errors\n");
                }
                // Its errors were reported with an earlier entry of the same run.
                crate::compiled::CompileError::Diagnostics(diagnostics)
                    if diagnostics.is_empty() =>
                {
                    message.push_str("(errors above)\n");
                }
                crate::compiled::CompileError::Diagnostics(diagnostics) => {
                    message.push('\n');
                    message.push_str(&report::human(
                        &diagnostics.sorted(),
                        &workspace.sources,
                        false,
                    ));
                }
            }
        }
        return Err(message);
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

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

fn signed(before: usize, after: usize) -> String {
    let delta = i128::try_from(after).unwrap_or(0) - i128::try_from(before).unwrap_or(0);
    format!("{delta:+}")
}

impl PromptChange {
    fn summary(&self) -> String {
        format!(
            "{} × {} ({}): {} characters, {} tokens ({}{}, {} → {})",
            self.family,
            self.context,
            self.status,
            signed(self.characters.0, self.characters.1),
            signed(self.tokens.0, self.tokens.1),
            if self.exact { "" } else { "≈ " },
            self.encoding,
            self.tokens.0,
            self.tokens.1
        )
    }
}

impl DiffReport {
    pub fn text(&self, stat_only: bool) -> String {
        let mut out = String::new();
        for failure in &self.failures {
            out.push_str(&format!(
                "error: the {} side ({}) cannot be compiled:\n{}\n",
                failure.side, failure.revision, failure.message
            ));
        }
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        if self.failures.is_empty() && self.prompts.is_empty() {
            out.push_str(&format!(
                "no compiled prompt differs between {} and {}\n",
                self.base, self.head
            ));
        }
        for prompt in &self.prompts {
            out.push_str(&prompt.summary());
            out.push('\n');
            if !stat_only {
                out.push_str(&prompt.diff);
                out.push('\n');
            }
        }
        if !self.sources.is_empty() {
            out.push_str("source files changed:\n");
            for source in &self.sources {
                out.push_str(&format!("  {} ({})", source.path, source.status));
                if source.affects.is_empty() {
                    out.push_str(": no compiled prompt changed\n");
                } else {
                    out.push_str(&format!(": {}\n", source.affects.join(", ")));
                }
            }
        }
        out
    }

    /// A pull-request comment: one collapsible block per family.
    pub fn markdown(&self, stat_only: bool) -> String {
        let mut out = format!(
            "### Compiled prompt changes ({} → {})\n\n",
            self.base, self.head
        );
        for failure in &self.failures {
            out.push_str(&format!(
                "**The {} side (`{}`) cannot be compiled.**\n\n```text\n{}\n```\n\n",
                failure.side,
                failure.revision,
                failure.message.trim_end()
            ));
        }
        for note in &self.notes {
            out.push_str(&format!("Note: {note}.\n\n"));
        }
        if self.failures.is_empty() && self.prompts.is_empty() {
            out.push_str("No compiled prompt changed.\n");
        }
        let mut families: BTreeMap<&str, Vec<&PromptChange>> = BTreeMap::new();
        for prompt in &self.prompts {
            families.entry(&prompt.family).or_default().push(prompt);
        }
        for (family, prompts) in families {
            let tokens: i128 = prompts
                .iter()
                .map(|p| {
                    i128::try_from(p.tokens.1).unwrap_or(0)
                        - i128::try_from(p.tokens.0).unwrap_or(0)
                })
                .sum();
            out.push_str(&format!(
                "<details>\n<summary><b>{family}</b>: {} context(s) changed, {tokens:+} tokens</summary>\n\n",
                prompts.len()
            ));
            for prompt in prompts {
                out.push_str(&format!("- {}\n", prompt.summary()));
                if !stat_only {
                    // A fence longer than any backtick run in the diff, so a code block in
                    // the prompt cannot close it.
                    let fence = "`".repeat(longest_backtick_run(&prompt.diff).max(2) + 1);
                    out.push_str(&format!("\n{fence}diff\n{}{fence}\n\n", prompt.diff));
                }
            }
            out.push_str("</details>\n\n");
        }
        if !self.sources.is_empty() {
            out.push_str("| source file | change | affected outputs |\n| --- | --- | --- |\n");
            for source in &self.sources {
                out.push_str(&format!(
                    "| `{}` | {} | {} |\n",
                    source.path,
                    source.status,
                    if source.affects.is_empty() {
                        "none".to_string()
                    } else {
                        source.affects.join("<br>")
                    }
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(diff: &str) -> PromptChange {
        PromptChange {
            path: "out/f/c.md".into(),
            family: "f".into(),
            context: "c".into(),
            status: "modified",
            characters: (10, 12),
            tokens: (3, 4),
            encoding: "o200k",
            exact: true,
            diff: diff.into(),
        }
    }

    #[test]
    fn a_code_fence_in_the_prompt_cannot_close_the_comments_diff_block() {
        let report = DiffReport {
            base: "main".into(),
            head: "working tree".into(),
            prompts: vec![change(" ```\n-old\n+new\n ````\n")],
            sources: Vec::new(),
            failures: Vec::new(),
            notes: Vec::new(),
        };
        let markdown = report.markdown(false);
        assert!(
            markdown.contains("\n`````diff\n ```\n-old\n+new\n ````\n`````\n"),
            "{markdown}"
        );
        // Exact counts carry no estimate mark.
        assert!(markdown.contains("+1 tokens (o200k, 3 → 4)"), "{markdown}");
    }
}
