//! `promptc diff` as text (a terminal), markdown (a pull-request comment) or JSON, and why a
//! side could not be compiled, in words.

use std::collections::BTreeMap;

use crate::compiled::CompileError;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::review::prompt_diff::{DiffReport, PromptChange, SideError};

use super::{human, json_document};

/// The report for a terminal: each changed prompt with its diff (or only its summary line),
/// then the source files that changed and what each one affected.
pub fn text(report: &DiffReport, stat_only: bool) -> String {
    let mut out = String::new();
    for failure in &report.failures {
        out.push_str(&format!(
            "error: the {} side ({}) cannot be compiled:\n{}\n",
            failure.side, failure.revision, failure.message
        ));
    }
    for note in &report.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    if report.failures.is_empty() && report.prompts.is_empty() {
        out.push_str(&format!(
            "no compiled prompt differs between {} and {}\n",
            report.base, report.head
        ));
    }
    for prompt in &report.prompts {
        out.push_str(&summary(prompt));
        out.push('\n');
        if !stat_only {
            out.push_str(&prompt.diff);
            out.push('\n');
        }
    }
    if !report.sources.is_empty() {
        out.push_str("source files changed:\n");
        for source in &report.sources {
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
pub fn markdown(report: &DiffReport, stat_only: bool) -> String {
    let mut out = format!(
        "### Compiled prompt changes ({} → {})\n\n",
        report.base, report.head
    );
    for failure in &report.failures {
        out.push_str(&format!(
            "**The {} side (`{}`) cannot be compiled.**\n\n```text\n{}\n```\n\n",
            failure.side,
            failure.revision,
            failure.message.trim_end()
        ));
    }
    for note in &report.notes {
        out.push_str(&format!("Note: {note}.\n\n"));
    }
    if report.failures.is_empty() && report.prompts.is_empty() {
        out.push_str("No compiled prompt changed.\n");
    }
    let mut families: BTreeMap<&str, Vec<&PromptChange>> = BTreeMap::new();
    for prompt in &report.prompts {
        families.entry(&prompt.family).or_default().push(prompt);
    }
    for (family, prompts) in families {
        out.push_str(&family_block(family, &prompts, stat_only));
    }
    if !report.sources.is_empty() {
        out.push_str("| source file | change | affected outputs |\n| --- | --- | --- |\n");
        for source in &report.sources {
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

/// One family's changed prompts in a `<details>` block, their token change in its summary.
fn family_block(family: &str, prompts: &[&PromptChange], stat_only: bool) -> String {
    let tokens: i128 = prompts
        .iter()
        .map(|p| i128::try_from(p.tokens.1).unwrap_or(0) - i128::try_from(p.tokens.0).unwrap_or(0))
        .sum();
    let mut out = format!(
        "<details>\n<summary><b>{family}</b>: {} context(s) changed, {tokens:+} tokens</summary>\n\n",
        prompts.len()
    );
    for prompt in prompts {
        out.push_str(&format!("- {}\n", summary(prompt)));
        if !stat_only {
            // A fence longer than any backtick run in the diff, so a code block in the prompt
            // cannot close it.
            let fence = "`".repeat(longest_backtick_run(&prompt.diff).max(2) + 1);
            out.push_str(&format!("\n{fence}diff\n{}{fence}\n\n", prompt.diff));
        }
    }
    out.push_str("</details>\n\n");
    out
}

pub fn json(report: &DiffReport) -> String {
    json_document(report)
}

/// Why a side could not be compiled, for the report's failures: the workspace's diagnostics,
/// or each matrix entry that failed and why. Never coloured: it may end up in a comment.
pub fn side_error(error: &SideError) -> String {
    match error {
        SideError::Unreadable(error) => error.to_string(),
        SideError::Invalid {
            diagnostics,
            sources,
        } => human(diagnostics, sources, false),
        SideError::NotCompiled { failed, sources } => {
            let mut message = String::new();
            for (entry, error) in failed {
                message.push_str(&format!(
                    "{} × {} does not compile: ",
                    entry.family, entry.context
                ));
                match error {
                    CompileError::Selection(problem) => {
                        message.push_str(&format!("{problem}\n"));
                    }
                    CompileError::InvalidWorkspace => {
                        message.push_str("the workspace has errors\n");
                    }
                    // Its errors were reported with an earlier entry of the same run.
                    CompileError::Diagnostics(diagnostics) if diagnostics.is_empty() => {
                        message.push_str("(errors above)\n");
                    }
                    CompileError::Diagnostics(diagnostics) => {
                        message.push('\n');
                        message.push_str(&human(&sorted(diagnostics), sources, false));
                    }
                }
            }
            message
        }
    }
}

/// The diagnostics in the order [`Diagnostics::sorted`] gives, leaving the error as it is.
fn sorted(diagnostics: &Diagnostics) -> Vec<Diagnostic> {
    let mut copy = Diagnostics::default();
    for diagnostic in diagnostics.iter() {
        copy.push(diagnostic.clone());
    }
    copy.sorted()
}

/// `base × full (modified): -9 characters, -1 tokens (≈ o200k, 299 → 298)`.
fn summary(change: &PromptChange) -> String {
    format!(
        "{} × {} ({}): {} characters, {} tokens ({}{}, {} → {})",
        change.family,
        change.context,
        change.status,
        signed(change.characters.0, change.characters.1),
        signed(change.tokens.0, change.tokens.1),
        if change.exact { "" } else { "≈ " },
        change.encoding,
        change.tokens.0,
        change.tokens.1
    )
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

fn signed(before: usize, after: usize) -> String {
    let delta = i128::try_from(after).unwrap_or(0) - i128::try_from(before).unwrap_or(0);
    format!("{delta:+}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::prompt_diff::Status;

    fn change(diff: &str) -> PromptChange {
        PromptChange {
            path: "out/f/c.md".into(),
            family: "f".into(),
            context: "c".into(),
            status: Status::Modified,
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
        let markdown = markdown(&report, false);
        assert!(
            markdown.contains("\n`````diff\n ```\n-old\n+new\n ````\n`````\n"),
            "{markdown}"
        );
        // Exact counts carry no estimate mark.
        assert!(markdown.contains("+1 tokens (o200k, 3 → 4)"), "{markdown}");
    }
}
