//! `promptc diff`: the compiled prompts of two versions of a workspace, compared — per
//! family × context a unified diff with its change in characters and tokens, and which source
//! files changed and which outputs each one affected.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::compiled::CompileError;
use crate::confine;
use crate::diagnostic::Diagnostic;
use crate::emit::matrix::{self, MatrixEntry, unified_diff};
use crate::emit::write::TEMP_PREFIX;
use crate::resolve::date::SourceDateEpoch;
use crate::source::Sources;
use crate::tokens::Encoding;

/// One side's compiled matrix, as digests, and the text of every file it read. Its outputs'
/// texts are not kept: a matrix of large prompts, held whole on both sides, took gigabytes.
/// The outputs that differ are compiled again, a few at a time, to be compared.
pub struct SideOutputs {
    outputs: BTreeMap<String, Output>,
    /// The text of every file the side's compiles read, by path.
    files: BTreeMap<String, String>,
    /// The workspace's folder, loaded again to compile outputs again; `None` on a side
    /// compiled only to be compared. Not the loaded workspace itself: holding both sides'
    /// while the trial compiles load their own took as much memory as three workspaces.
    root: Option<PathBuf>,
    source_date_epoch: SourceDateEpoch,
    /// Outputs over their token budget (as [`SideError::Invalid`]): they compiled, and are
    /// compared, but `build --all` and `check` fail on them, so the side fails too.
    pub over_budget: Option<SideError>,
}

struct Output {
    /// The entry that compiles it.
    entry: MatrixEntry,
    /// The text's length in bytes.
    len: usize,
    /// The text's SHA-256, by which sides are compared.
    digest: [u8; 32],
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
pub fn compile_side(
    root: &Path,
    source_date_epoch: SourceDateEpoch,
) -> Result<SideOutputs, SideError> {
    compile_keeping(root, source_date_epoch, Keep::Workspace)
}

/// Whether a side keeps its files and its folder, to compile outputs again, or is only
/// compared (a trial compile that finds what one file's change alters).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Workspace,
    Digests,
}

fn compile_keeping(
    root: &Path,
    source_date_epoch: SourceDateEpoch,
    keep: Keep,
) -> Result<SideOutputs, SideError> {
    let loaded = crate::loader::load_workspace(root).map_err(SideError::Unreadable)?;
    let mut workspace = loaded.workspace;
    if loaded.diagnostics.has_errors() {
        return Err(SideError::Invalid {
            diagnostics: loaded.diagnostics.sorted(),
            sources: workspace.sources,
        });
    }
    // Each output is kept as it compiles, once: the matrix's outputs were held whole, then
    // copied out.
    let mut outputs = BTreeMap::new();
    let run = {
        let compiler = crate::compile::Compiler::new(&workspace);
        let entries = matrix::entries(&workspace);
        let tokens = &workspace.settings().tokens;
        matrix::compile_visiting(&compiler, entries, source_date_epoch, |entry, compiled| {
            let mut inputs = compiled.inputs.clone();
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
            // The prompt, and its tool definitions beside it: each file a build writes.
            for (path, text) in matrix::files(&entry, &compiled) {
                let digest = Sha256::digest(text.as_bytes()).into();
                outputs.insert(
                    path,
                    Output {
                        encoding: tokens.encoding_for(&entry.family),
                        exact: tokens.is_exact(&entry.family),
                        entry: entry.clone(),
                        len: text.len(),
                        digest,
                        inputs: inputs.clone(),
                    },
                );
            }
        })
    };
    if !run.failed.is_empty() {
        return Err(SideError::NotCompiled {
            failed: run.failed,
            sources: std::mem::take(&mut workspace.sources),
        });
    }
    let keep = keep == Keep::Workspace;
    let files = if keep {
        workspace
            .sources
            .iter()
            .filter(|file| !file.path.starts_with("<built-in>"))
            .map(|file| (file.path.to_string_lossy().into_owned(), file.text.clone()))
            .collect()
    } else {
        BTreeMap::new()
    };
    // A trial compile of one file's change is compared only; a budget is the sides' to keep.
    let over_budget = (keep && !run.over_budget.is_empty()).then(|| SideError::Invalid {
        diagnostics: run.over_budget.sorted(),
        sources: std::mem::take(&mut workspace.sources),
    });
    Ok(SideOutputs {
        outputs,
        files,
        root: keep.then(|| root.to_path_buf()),
        source_date_epoch,
        over_budget,
    })
}

/// A side's files by path: the text of every file its compiles read.
type Files<'s> = BTreeMap<String, &'s str>;

impl SideOutputs {
    fn files(&self) -> Files<'_> {
        self.files
            .iter()
            .map(|(path, text)| (path.clone(), text.as_str()))
            .collect()
    }

    /// The texts of the outputs at `paths`, compiled again from the side's folder (each entry
    /// once, whether its prompt or its tool definitions were asked for). A text that is not
    /// the one compiled first (its files changed meanwhile) is left out, as is every text
    /// when the folder no longer loads.
    fn texts(&self, paths: &[&String]) -> BTreeMap<String, String> {
        let mut texts = BTreeMap::new();
        let Some(root) = &self.root else {
            return texts;
        };
        let Ok(loaded) = crate::loader::load_workspace(root) else {
            return texts;
        };
        if loaded.diagnostics.has_errors() {
            return texts;
        }
        let workspace = &loaded.workspace;
        // Sets, not scans: a group may be the whole matrix of small outputs.
        let wanted: BTreeSet<&String> = paths.iter().copied().collect();
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut entries: Vec<MatrixEntry> = Vec::new();
        for path in paths {
            if let Some(output) = self.outputs.get(*path)
                && seen.insert(output.entry.path.as_str())
            {
                entries.push(output.entry.clone());
            }
        }
        let compiler = crate::compile::Compiler::new(workspace);
        matrix::compile_visiting(
            &compiler,
            entries,
            self.source_date_epoch,
            |entry, compiled| {
                for (path, text) in matrix::files(&entry, &compiled) {
                    let first = self.outputs.get(&path).map(|output| output.digest);
                    let same = first == Some(Sha256::digest(text.as_bytes()).into());
                    if same && wanted.contains(&path) {
                        texts.insert(path, text.into_owned());
                    }
                }
            },
        );
        texts
    }
}

#[derive(Debug, Serialize)]
pub struct DiffReport {
    pub base: String,
    pub head: String,
    pub prompts: Vec<PromptChange>,
    pub sources: Vec<SourceChange>,
    /// More source files changed than are tried one by one: each names the changed outputs
    /// that read it, not those its change alone alters.
    pub sources_by_readers: bool,
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
    /// Whether its outputs compiled (and are compared), failing only as `build --all` and
    /// `check` would: over their token budget.
    pub compiled: bool,
    /// The reason as the text report words it.
    pub message: String,
    /// The same as data, one record per diagnostic (each located where it has a place), as
    /// `--format json` gives them elsewhere: written by the report layer, which words them.
    pub diagnostics: Vec<serde_json::Value>,
}

/// Why a side did not compile: the words, and the diagnostics as records (see
/// `report::diff::side_failure`).
pub type Failed = (String, Vec<serde_json::Value>);

/// How a file differs between the two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Modified,
    Added,
    Removed,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Modified => "modified",
            Status::Added => "added",
            Status::Removed => "removed",
        })
    }
}

#[derive(Debug, Serialize)]
pub struct PromptChange {
    pub path: String,
    /// `prompt`, or `tool definitions` for the native tool definitions beside one.
    pub what: &'static str,
    pub family: String,
    /// The variant a build entry names (`next-gen@2`, an id), which is not the family's
    /// released version; `None` for the family's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    pub context: String,
    /// The entry as the reports name it (see [`MatrixEntry::label`]).
    #[serde(skip)]
    pub entry: String,
    pub status: Status,
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
    pub status: Status,
    /// Outputs that changed and were compiled from this file.
    pub affects: Vec<String>,
    /// Other changed files this one acts only together with (a new tool and the variant
    /// that lists it): `affects` is then what they change together.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub together_with: Vec<String>,
}

/// One side to compare: its label, its outputs or why it did not compile, and why it fails
/// though it compiled (outputs over their budget, worded by the report layer).
pub type Side<'a> = (&'a str, Result<SideOutputs, Failed>, Option<Failed>);

/// Compares two sides; either may have failed.
pub fn compare(base: Side<'_>, head: Side<'_>, source_date_epoch: SourceDateEpoch) -> DiffReport {
    let mut report = DiffReport {
        base: base.0.to_string(),
        head: head.0.to_string(),
        prompts: Vec::new(),
        sources: Vec::new(),
        sources_by_readers: false,
        failures: Vec::new(),
        notes: Vec::new(),
    };
    let mut over_budget = Vec::new();
    for (side, (revision, _, over)) in [("base", &base), ("head", &head)] {
        if let Some((message, diagnostics)) = over {
            over_budget.push(SideFailure {
                side: side.into(),
                revision: (*revision).into(),
                compiled: true,
                message: message.clone(),
                diagnostics: diagnostics.clone(),
            });
        }
    }
    let before = outputs_or_failure("base", (base.0, base.1), &mut report.failures);
    let after = outputs_or_failure("head", (head.0, head.1), &mut report.failures);
    report.failures.extend(over_budget);
    match (before, after) {
        (Some(before), Some(after)) => {
            report.prompts = prompt_changes(&before, &after);
            report.sources = source_changes(&before, &after, &report.prompts, source_date_epoch);
            report.sources_by_readers = report.sources.len() > MAX_ISOLATED;
        }
        (before, after) => {
            report.notes = compiled_side_notes(&report, before.as_ref(), after.as_ref());
        }
    }
    report
}

/// A side's outputs, or `None` with its failure recorded.
fn outputs_or_failure(
    side: &str,
    (revision, result): (&str, Result<SideOutputs, Failed>),
    failures: &mut Vec<SideFailure>,
) -> Option<SideOutputs> {
    match result {
        Ok(outputs) => Some(outputs),
        Err((message, diagnostics)) => {
            failures.push(SideFailure {
                side: side.into(),
                revision: revision.into(),
                compiled: false,
                message,
                diagnostics,
            });
            None
        }
    }
}

/// What is known of the side that compiled, when the other did not.
fn compiled_side_notes(
    report: &DiffReport,
    before: Option<&SideOutputs>,
    after: Option<&SideOutputs>,
) -> Vec<String> {
    [
        ("base", &report.base, before),
        ("head", &report.head, after),
    ]
    .into_iter()
    .filter_map(|(side, label, outputs)| {
        let outputs = outputs?;
        Some(format!(
            "the {side} side ({label}) compiles: {} outputs",
            outputs.outputs.len()
        ))
    })
    .collect()
}

/// The most bytes of the outputs' texts (both sides) compiled again at once to be compared.
const TEXTS_AT_ONCE: usize = 64 * 1024 * 1024;
/// The most bytes of diffs a report holds: each output's diff is bounded
/// ([`matrix::MAX_DIFF_BYTES`]), but a matrix of thousands of outputs is not.
pub const MAX_REPORT_DIFF_BYTES: usize = 16 * 1024 * 1024;

/// The outputs whose text differs, by path. Only their texts are compiled again, a group of
/// at most [`TEXTS_AT_ONCE`] bytes at a time (an output larger than that alone).
fn prompt_changes(before: &SideOutputs, after: &SideOutputs) -> Vec<PromptChange> {
    let changed = differing(&before.outputs, &after.outputs);
    let size = |path: &String| {
        let len = |side: &SideOutputs| side.outputs.get(path).map_or(0, |o| o.len);
        len(before) + len(after)
    };
    let mut changes = Vec::with_capacity(changed.len());
    let mut diff_bytes = 0;
    let diff_time = matrix::DiffTime::default();
    let mut rest = changed.as_slice();
    while !rest.is_empty() {
        let mut group_bytes = 0;
        let count = rest
            .iter()
            .take_while(|path| {
                group_bytes += size(path);
                group_bytes <= TEXTS_AT_ONCE
            })
            .count()
            .max(1);
        let (group, after_group) = rest.split_at(count);
        rest = after_group;
        let group: Vec<&String> = group.iter().collect();
        let (old_texts, new_texts) = (before.texts(&group), after.texts(&group));
        for path in group {
            let change = prompt_change(
                path,
                before
                    .outputs
                    .get(path)
                    .map(|o| (o, text_of(&old_texts, path))),
                after
                    .outputs
                    .get(path)
                    .map(|o| (o, text_of(&new_texts, path))),
                (&mut diff_bytes, &diff_time),
            );
            changes.extend(change);
        }
    }
    changes
}

/// The text compiled again of an output; `None` when it could not be (see
/// [`SideOutputs::texts`]).
fn text_of<'t>(texts: &'t BTreeMap<String, String>, path: &str) -> Option<&'t str> {
    texts.get(path).map(String::as_str)
}

/// How one output changed; `None` when it did not. `diff_bytes` counts the report's diffs
/// so far: past [`MAX_REPORT_DIFF_BYTES`], a diff gives way to a line saying so; `diff_time`,
/// the time they took (see [`matrix::RUN_DIFF_TIME`]).
fn prompt_change(
    path: &str,
    old: Option<(&Output, Option<&str>)>,
    new: Option<(&Output, Option<&str>)>,
    (diff_bytes, diff_time): (&mut usize, &matrix::DiffTime),
) -> Option<PromptChange> {
    let (status, old_text, new_text) = match (old, new) {
        (Some((o, _)), Some((n, _))) if o.digest == n.digest => return None,
        (Some((_, o)), Some((_, n))) => (Status::Modified, o, n),
        (Some((_, o)), None) => (Status::Removed, o, Some("")),
        (None, Some((_, n))) => (Status::Added, Some(""), n),
        (None, None) => return None,
    };
    let (output, _) = new.or(old)?;
    let encoding = output.encoding;
    // Tool definitions are counted as a request carries them, compact, as `stats` and the
    // budget count them; their file is written pretty for review, and its whitespace is
    // about a third more tokens.
    let definitions = path.ends_with(matrix::DEFINITIONS_SUFFIX);
    let count = |text: &str| {
        let compact = definitions
            .then(|| serde_json::from_str::<serde_json::Value>(text).ok())
            .flatten()
            .and_then(|value| serde_json::to_string(&value).ok());
        encoding.count(compact.as_deref().unwrap_or(text))
    };
    let (characters, tokens, diff) = match (old_text, new_text) {
        (Some(old_text), Some(new_text)) => {
            let diff = if *diff_bytes <= MAX_REPORT_DIFF_BYTES {
                let diff = unified_diff(path, old_text, new_text, diff_time);
                *diff_bytes += diff.len();
                diff
            } else {
                format!(
                    "--- a/{path}\n+++ b/{path}\n… the diff of {path} is not shown: the report's diffs are over {} MiB\n",
                    MAX_REPORT_DIFF_BYTES / (1024 * 1024)
                )
            };
            (
                (old_text.chars().count(), new_text.chars().count()),
                (count(old_text), count(new_text)),
                diff,
            )
        }
        // Its files changed while the report was made (or no longer load): what it was is
        // not known any more.
        _ => (
            (0, 0),
            (0, 0),
            format!(
                "--- a/{path}\n+++ b/{path}\n… {path} compiled to another text when compiled again to be compared (did its files change meanwhile?): its diff and counts are not known\n"
            ),
        ),
    };
    Some(PromptChange {
        encoding: encoding.name(),
        exact: output.exact,
        what: if path.ends_with(matrix::DEFINITIONS_SUFFIX) {
            "tool definitions"
        } else {
            "prompt"
        },
        path: path.to_string(),
        family: output.entry.family.clone(),
        variant: output.entry.variant.clone(),
        context: output.entry.context.clone(),
        entry: output.entry.label(),
        status,
        characters,
        tokens,
        diff,
    })
}

/// The most changed source files whose effects are found one by one, each by compiling the
/// whole workspace once more: past it, a change of a few hundred files would compile the
/// workspace a few hundred times (and a file's effects are the changed outputs that read it).
pub const MAX_ISOLATED: usize = 16;

/// The source files that differ, each with the changed outputs it affects: what its change
/// alone alters. Files whose change alters nothing alone (or does not compile alone) but is
/// needed by the rest of the change are one cause together. Past [`MAX_ISOLATED`] changed
/// files, each affects the changed outputs that read it.
fn source_changes(
    before: &SideOutputs,
    after: &SideOutputs,
    prompts: &[PromptChange],
    source_date_epoch: SourceDateEpoch,
) -> Vec<SourceChange> {
    let (before_files, after_files) = (before.files(), after.files());
    let files: BTreeSet<&String> = before_files.keys().chain(after_files.keys()).collect();
    let mut changes: Vec<SourceChange> = files
        .into_iter()
        .filter_map(|file| {
            let status = file_status(before_files.get(file), after_files.get(file))?;
            Some(SourceChange {
                path: file.clone(),
                status,
                affects: Vec::new(),
                together_with: Vec::new(),
            })
        })
        .collect();
    if changes.len() > MAX_ISOLATED {
        for change in &mut changes {
            change.affects = readers(before, after, &change.path, prompts);
        }
        return changes;
    }
    // What a trial alters is said only of the outputs the whole change alters: a file whose
    // change another file undoes (or whose output another file changes back to the same
    // bytes) altered, alone, outputs whose bytes the report shows unchanged.
    let changed: BTreeSet<&str> = prompts.iter().map(|p| p.path.as_str()).collect();
    let in_report = |trial: SideOutputs| -> Vec<String> {
        differing(&before.outputs, &trial.outputs)
            .into_iter()
            .filter(|path| changed.contains(path.as_str()))
            .collect()
    };
    let names: Vec<String> = changes.iter().map(|change| change.path.clone()).collect();
    let mut alone: Vec<_> = changes
        .iter()
        .map(|change| {
            with_files(
                &before_files,
                &[&change.path],
                &after_files,
                source_date_epoch,
            )
            .map(in_report)
        })
        .collect();
    // A file that alters nothing alone, or cannot compile alone, acts with others when the
    // head without it differs from the head: what it alters there, when that compiles.
    // One that cannot compile alone always does (a file of a rename). Each is known by what
    // the head without it alters, or else by the files that then fail: those need it.
    let mut joint: Vec<(usize, Absence)> = Vec::new();
    for (index, change) in changes.iter().enumerate() {
        if matches!(&alone[index], Some(changed) if !changed.is_empty()) {
            continue;
        }
        let absence = without(
            &before_files,
            after,
            &after_files,
            &change.path,
            source_date_epoch,
        );
        match absence {
            Ok(altered) if altered.is_empty() && alone[index].is_some() => continue,
            Ok(altered) if altered.is_empty() => {
                joint.push((index, Absence::Needs(BTreeSet::new())));
            }
            Ok(altered) => joint.push((index, Absence::Alters(altered))),
            Err(needing) => joint.push((index, Absence::Needs(needing))),
        }
    }
    let groups = acting_together(
        &joint,
        |paths: &[&String]| {
            with_files(&before_files, paths, &after_files, source_date_epoch).map(in_report)
        },
        &changes,
    );
    for (index, change) in changes.iter_mut().enumerate() {
        let group = groups.iter().find(|(members, _)| members.contains(&index));
        change.affects = match (group, alone[index].take()) {
            (Some((members, changed)), _) => {
                change.together_with = members
                    .iter()
                    .filter(|&&member| member != index)
                    .map(|&member| names[member].clone())
                    .collect();
                changed.clone()
            }
            (None, Some(changed)) => changed,
            (None, None) => readers(before, after, &change.path, prompts),
        };
    }
    changes
}

/// The outputs that differ between the head and the head with `file` as it was in the base;
/// when that does not compile, the files its errors are in (those that need the file's
/// change).
fn without(
    before_files: &Files<'_>,
    after: &SideOutputs,
    after_files: &Files<'_>,
    file: &str,
    source_date_epoch: SourceDateEpoch,
) -> Result<BTreeSet<String>, BTreeSet<String>> {
    let mut files: BTreeMap<&String, &str> = after_files
        .iter()
        .filter(|(path, _)| path.as_str() != file)
        .map(|(path, text)| (path, *text))
        .collect();
    if let Some((path, text)) = before_files.get_key_value(file) {
        files.insert(path, text);
    }
    let trial = compile_files_or_blame(files.into_iter(), source_date_epoch)?;
    Ok(differing(&after.outputs, &trial.outputs)
        .into_iter()
        .collect())
}

/// What the head without one changed file comes to: other outputs, or errors in the files
/// that need its change.
enum Absence {
    Alters(BTreeSet<String>),
    Needs(BTreeSet<String>),
}

/// The changed files that act only together (each `joint` entry: a change's index, and what
/// the head without it comes to), in groups, each with the outputs the base with the group's
/// changes alters (`compiled`, `None` when that does not compile). Two features of one pull
/// request are two groups: files whose absence alters outputs in common act together, and a
/// file without which others fail (a new tool that a changed variant lists, a component's
/// template) acts with them. Where that cannot be worked out, every such file is one group,
/// as the head's change is.
fn acting_together(
    joint: &[(usize, Absence)],
    compiled: impl Fn(&[&String]) -> Option<Vec<String>>,
    changes: &[SourceChange],
) -> Vec<(Vec<usize>, Vec<String>)> {
    let path = |index: usize| &changes[index].path;
    let all = || -> Vec<(Vec<usize>, Vec<String>)> {
        let members: Vec<usize> = joint.iter().map(|(index, _)| *index).collect();
        if members.len() < 2 {
            return Vec::new();
        }
        let paths: Vec<&String> = members.iter().map(|&index| path(index)).collect();
        compiled(&paths).map_or_else(Vec::new, |changed| vec![(members, changed)])
    };
    // Each joint file's group: the least position in `joint` of a file it acts with.
    let mut group: Vec<usize> = (0..joint.len()).collect();
    let root = |group: &[usize], mut at: usize| {
        while group[at] != at {
            at = group[at];
        }
        at
    };
    let needs = |absence: &Absence, other: usize| matches!(absence, Absence::Needs(needing) if needing.contains(path(joint[other].0)));
    for a in 0..joint.len() {
        for b in a + 1..joint.len() {
            let together = match (&joint[a].1, &joint[b].1) {
                (Absence::Alters(one), Absence::Alters(two)) => !one.is_disjoint(two),
                (first, second) => needs(first, b) || needs(second, a),
            };
            if together {
                let (a, b) = (root(&group, a), root(&group, b));
                group[a.max(b)] = a.min(b);
            }
        }
    }
    let roots: Vec<usize> = (0..joint.len()).map(|at| root(&group, at)).collect();
    // A file that nothing else needs and whose absence alters nothing has no group of its
    // own to say.
    let placed = |at: usize| {
        matches!(joint[at].1, Absence::Alters(_))
            || (0..joint.len()).any(|other| other != at && roots[other] == roots[at])
    };
    if !(0..joint.len()).all(placed) {
        return all();
    }
    let mut found = Vec::new();
    for first in 0..joint.len() {
        if roots[first] != first {
            continue;
        }
        let members: Vec<usize> = (0..joint.len())
            .filter(|&at| roots[at] == first)
            .map(|at| joint[at].0)
            .collect();
        // A group of one file acts alone, as the report says of any other.
        if members.len() < 2 {
            continue;
        }
        let paths: Vec<&String> = members.iter().map(|&member| path(member)).collect();
        match compiled(&paths) {
            Some(changed) => found.push((members, changed)),
            None => return all(),
        }
    }
    found
}

/// The outputs whose text differs between two compiled matrices.
fn differing(
    reference: &BTreeMap<String, Output>,
    trial: &BTreeMap<String, Output>,
) -> Vec<String> {
    let paths: BTreeSet<&String> = reference.keys().chain(trial.keys()).collect();
    paths
        .into_iter()
        .filter(|path| reference.get(*path).map(|o| o.digest) != trial.get(*path).map(|o| o.digest))
        .cloned()
        .collect()
}

/// How a file differs; `None` when it is the same on both sides.
fn file_status(old: Option<&&str>, new: Option<&&str>) -> Option<Status> {
    match (old, new) {
        (Some(a), Some(b)) if a == b => None,
        (Some(_), Some(_)) => Some(Status::Modified),
        (Some(_), None) => Some(Status::Removed),
        (None, Some(_)) => Some(Status::Added),
        (None, None) => None,
    }
}

/// The changed outputs that read `file` on either side: what a change is said to affect when
/// it could not be isolated.
fn readers(
    before: &SideOutputs,
    after: &SideOutputs,
    file: &str,
    prompts: &[PromptChange],
) -> Vec<String> {
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
}

/// The base's files with `changed` as they are in the head, compiled. `None` when that cannot
/// be done.
fn with_files(
    before_files: &Files<'_>,
    changed: &[&String],
    after_files: &Files<'_>,
    source_date_epoch: SourceDateEpoch,
) -> Option<SideOutputs> {
    let mut files: BTreeMap<&String, &str> = before_files
        .iter()
        .filter(|(path, _)| !changed.contains(path))
        .map(|(path, text)| (path, *text))
        .collect();
    for file in changed {
        if let Some((path, text)) = after_files.get_key_value(file.as_str()) {
            files.insert(path, text);
        }
    }
    compile_files(files.into_iter(), source_date_epoch)
}

/// A workspace made of these files in a temporary folder, compiled. `None` when it cannot be
/// written or does not compile.
fn compile_files<'a>(
    files: impl Iterator<Item = (&'a String, &'a str)>,
    source_date_epoch: SourceDateEpoch,
) -> Option<SideOutputs> {
    compile_files_or_blame(files, source_date_epoch).ok()
}

/// [`compile_files`], or the files its errors are in (none, when it failed otherwise).
fn compile_files_or_blame<'a>(
    files: impl Iterator<Item = (&'a String, &'a str)>,
    source_date_epoch: SourceDateEpoch,
) -> Result<SideOutputs, BTreeSet<String>> {
    let dir = crate::scratch::ScratchDir::new(TEMP_PREFIX).map_err(|_| BTreeSet::new())?;
    let root = dir.path().canonicalize().map_err(|_| BTreeSet::new())?;
    for (path, text) in files {
        // Workspace-relative paths only: nothing is written outside the temporary folder.
        let target = confine::resolve_output(&root, Path::new(""), Path::new(path))
            .map_err(|_| BTreeSet::new())?;
        // Written plainly, not staged and synced as outputs are: the copy is read once and
        // removed, and a sync per file made fifty changed files wait seconds on the disk.
        let written = target
            .parent()
            .is_some_and(|parent| std::fs::create_dir_all(parent).is_ok())
            && std::fs::write(&target, text).is_ok();
        if !written {
            return Err(BTreeSet::new());
        }
    }
    compile_keeping(&root, source_date_epoch, Keep::Digests).map_err(|error| match error {
        SideError::Invalid {
            diagnostics,
            sources,
        } => diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.severity() == crate::problem::Severity::Error)
            .map(|diagnostic| {
                sources
                    .get(diagnostic.span.source)
                    .path
                    .to_string_lossy()
                    .into_owned()
            })
            .collect(),
        _ => BTreeSet::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(text: &str) -> Output {
        Output {
            entry: MatrixEntry {
                family: "f".into(),
                variant: None,
                context: "c".into(),
                path: "out/f/c.md".into(),
            },
            len: text.len(),
            digest: Sha256::digest(text.as_bytes()).into(),
            inputs: Vec::new(),
            encoding: Encoding::default(),
            exact: false,
        }
    }

    /// Each diff counts towards the report's diffs; past their limit, a change keeps its
    /// counts and says its diff is not shown.
    #[test]
    fn past_the_reports_limit_a_diff_gives_way_to_a_line() {
        let (old, new) = ("one\ntwo\n", "one\nthree\n");
        let (before, after) = (output(old), output(new));
        let change = |diff_bytes: &mut usize| {
            prompt_change(
                "out/f/c.md",
                Some((&before, Some(old))),
                Some((&after, Some(new))),
                (diff_bytes, &matrix::DiffTime::default()),
            )
            .expect("a change")
        };
        let mut diff_bytes = 0;
        let shown = change(&mut diff_bytes);
        assert!(shown.diff.contains("-two\n+three\n"), "{}", shown.diff);
        assert_eq!(diff_bytes, shown.diff.len());

        let mut diff_bytes = MAX_REPORT_DIFF_BYTES + 1;
        let left_out = change(&mut diff_bytes);
        assert_eq!(
            left_out.diff,
            "--- a/out/f/c.md\n+++ b/out/f/c.md\n… the diff of out/f/c.md is not shown: the report's diffs are over 16 MiB\n"
        );
        assert_eq!(diff_bytes, MAX_REPORT_DIFF_BYTES + 1);
        assert_eq!(left_out.characters, (8, 10));

        // A text that compiled to another the second time is not compared.
        let unknown = prompt_change(
            "out/f/c.md",
            Some((&before, None)),
            Some((&after, Some(new))),
            (&mut 0, &matrix::DiffTime::default()),
        )
        .expect("a change");
        assert!(
            unknown.diff.contains("its diff and counts are not known"),
            "{}",
            unknown.diff
        );
        assert_eq!((unknown.characters, unknown.tokens), ((0, 0), (0, 0)));

        let same = output(old);
        assert!(
            prompt_change(
                "p",
                Some((&same, Some(old))),
                Some((&before, Some(old))),
                (&mut 0, &matrix::DiffTime::default())
            )
            .is_none()
        );
    }
}
