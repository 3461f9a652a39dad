//! `promptc diff` as text (a terminal), markdown (a pull-request comment) or JSON, and why a
//! side could not be compiled, in words.

use crate::compiled::CompileError;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::review::prompt_diff::{DiffReport, PromptChange, SideError};

use super::visible::push_line;
use super::{human, json_document};

/// What went wrong with a side: it did not compile, or compiled and fails as a build would.
fn failed_how(failure: &crate::review::prompt_diff::SideFailure) -> &'static str {
    if failure.compiled {
        "compiles, and fails as `build --all` and `check` would (its outputs are compared below)"
    } else {
        "cannot be compiled"
    }
}

/// The report for a terminal: each changed prompt with its diff (or only its summary line),
/// then the source files that changed and what each one affected.
pub fn text(report: &DiffReport, stat_only: bool) -> String {
    let mut out = String::new();
    for failure in &report.failures {
        push_line(
            &mut out,
            &format!(
                "error: the {} side ({}) {}:",
                failure.side,
                failure.revision,
                failed_how(failure)
            ),
        );
        // The diagnostics, rendered as every diagnostic is (their quoted text shown); the
        // line breaks are theirs.
        out.push_str(&super::visible::visible_lines(&failure.message));
        out.push('\n');
    }
    for note in &report.notes {
        push_line(&mut out, &format!("note: {note}"));
    }
    if report.failures.is_empty() && report.prompts.is_empty() {
        push_line(
            &mut out,
            &format!(
                "no compiled prompt differs between {} and {}",
                report.base, report.head
            ),
        );
    }
    for prompt in &report.prompts {
        push_line(&mut out, &summary(prompt));
        if !stat_only {
            out.push_str(&prompt.diff);
            out.push('\n');
        }
    }
    if !report.sources.is_empty() {
        out.push_str("source files changed:\n");
        if report.sources_by_readers {
            out.push_str(&format!("  ({})\n", by_readers_note()));
        }
        for source in &report.sources {
            let mut line = format!("  {} ({})", source.path, source.status);
            if !source.together_with.is_empty() {
                line.push_str(&format!(
                    ", only together with {}",
                    source.together_with.join(", ")
                ));
            }
            if source.affects.is_empty() {
                line.push_str(": no compiled prompt changed");
            } else {
                line.push_str(&format!(": {}", source.affects.join(", ")));
            }
            push_line(&mut out, &line);
        }
    }
    out
}

/// The most characters of a pull-request comment by default: GitHub refuses one over 65,536,
/// and a workflow may add a line or two (a link to the full report) after promptc's text.
pub const COMMENT_LIMIT: usize = 60_000;

/// A pull-request comment: outputs whose diffs are the same change are one collapsible
/// block, each listing its outputs with their counts; then the source files and what each
/// changed. Past `limit` characters (0: no limit) diffs give way to summaries, then blocks to a
/// count, with a note saying what was left out.
pub fn markdown(report: &DiffReport, stat_only: bool, limit: usize) -> String {
    let limit = if limit == 0 { usize::MAX } else { limit };
    let mut head = format!(
        "### Compiled prompt changes ({} → {})\n\n",
        report.base, report.head
    );
    // Each side's failure takes at most a share of the limit: the rest of the comment (and
    // the limit itself) must still fit.
    let failure_chars =
        FAILURE_CHARS.min(limit.saturating_sub(NOTE_ROOM) / (4 * report.failures.len().max(1)));
    for failure in &report.failures {
        // The message quotes the revision's files: a fence longer than any backtick run in it,
        // so a line of them cannot close the block and write into the comment.
        let message = shortened(
            &super::visible::visible_lines(failure.message.trim_end()),
            failure_chars,
        );
        let fence = "`".repeat(longest_backtick_run(&message).max(2) + 1);
        head.push_str(&format!(
            "**The {} side ({}) {}.**\n\n{fence}text\n{message}\n{fence}\n\n",
            failure.side,
            code_span(&failure.revision, false),
            failed_how(failure),
        ));
    }
    for note in &report.notes {
        head.push_str(&format!("Note: {note}.\n\n"));
    }
    if report.failures.is_empty() && report.prompts.is_empty() {
        head.push_str("No compiled prompt changed.\n");
    }
    let groups = same_changes(&report.prompts);
    if !groups.is_empty() {
        head.push_str(&format!(
            "{} {} changed, in {} distinct {}.\n\n",
            report.prompts.len(),
            plural(report.prompts.len(), "output", "outputs"),
            groups.len(),
            plural(groups.len(), "change", "changes"),
        ));
    }
    let sources = sources_table(report);
    // What is left for the change blocks once the head, the table and a closing note fit.
    let mut room = limit
        .saturating_sub(chars(&head) + chars(&sources))
        .saturating_sub(NOTE_ROOM);
    let mut blocks = String::new();
    let (mut summarised, mut omitted) = (0, 0);
    for (number, group) in groups.iter().enumerate() {
        let full = group_block(number + 1, group, stat_only);
        let brief = format!("- <b>Change {}</b>: {}\n\n", number + 1, group_title(group));
        if chars(&full) <= room {
            room -= chars(&full);
            blocks.push_str(&full);
        } else if chars(&brief) <= room {
            room -= chars(&brief);
            blocks.push_str(&brief);
            summarised += 1;
        } else {
            omitted += 1;
        }
    }
    let mut out = head + &blocks;
    if summarised + omitted > 0 {
        out.push_str(&format!(
            "**This comment is cut to {limit} characters**: {summarised} of the {} changes \
             are shown without their diff and {omitted} are left out. `promptc diff --base {}` \
             prints the whole report.\n\n",
            groups.len(),
            report.base
        ));
    }
    if chars(&out) + chars(&sources) <= limit {
        out.push_str(&sources);
    } else {
        out.push_str("The table of changed source files is left out to fit.\n");
    }
    out
}

/// The most characters of one side's failure in a comment.
const FAILURE_CHARS: usize = 8_000;
/// Characters kept for the note that says what a cut comment left out.
const NOTE_ROOM: usize = 400;

/// Changed outputs whose diffs are the same change (see [`change_key`]), in the order of
/// their first output.
fn same_changes(prompts: &[PromptChange]) -> Vec<Vec<&PromptChange>> {
    // Found by key: a report of thousands of distinct changes compared each with every group.
    let mut groups: Vec<Vec<&PromptChange>> = Vec::new();
    let mut group_of: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for prompt in prompts {
        match group_of.entry(change_key(prompt)) {
            std::collections::hash_map::Entry::Occupied(known) => groups[*known.get()].push(prompt),
            std::collections::hash_map::Entry::Vacant(new) => {
                new.insert(groups.len());
                groups.push(vec![prompt]);
            }
        }
    }
    groups
}

/// What makes two diffs the same change: their status and the lines added and removed, in
/// order; not the file names of the header, the hunks' line numbers, nor the unchanged lines
/// around them (a context's own directory beside the same edit).
fn change_key(prompt: &PromptChange) -> String {
    let mut key = format!("{}\n", prompt.status);
    for line in prompt.diff.lines() {
        if line.starts_with("--- a/") || line.starts_with("+++ b/") {
            continue;
        }
        if line.starts_with(['+', '-', '\\']) {
            key.push_str(line);
            key.push('\n');
        }
    }
    key
}

/// One change: its outputs with their counts, and the diff of the first one.
fn group_block(number: usize, group: &[&PromptChange], stat_only: bool) -> String {
    let Some(first) = group.first() else {
        return String::new();
    };
    let mut out = format!(
        "<details>\n<summary><b>Change {number}</b>: {}</summary>\n\n",
        group_title(group)
    );
    if group.len() > 1 {
        for prompt in group {
            out.push_str(&format!("- {}\n", summary(prompt)));
        }
        out.push('\n');
    }
    if !stat_only {
        if group.len() > 1 {
            out.push_str(&format!(
                "The diff of {}:\n\n",
                code_span(&first.path, false)
            ));
        }
        // A fence longer than any backtick run in the diff, so a code block in the prompt
        // cannot close it.
        // Shown as on a terminal: a bidi override or an escape in the prompt must not make a
        // changed line read as another one in the review.
        let diff = super::visible::visible_lines(&first.diff);
        let fence = "`".repeat(longest_backtick_run(&diff).max(2) + 1);
        out.push_str(&format!("{fence}diff\n{diff}{fence}\n\n"));
    }
    out.push_str("</details>\n\n");
    out
}

/// A change in a line: its one output's summary, or how many outputs share it.
fn group_title(group: &[&PromptChange]) -> String {
    match group {
        [] => String::new(),
        [only] => summary(only),
        [first, ..] => format!(
            "{} outputs, the same change: {} and {} more",
            group.len(),
            first.entry,
            group.len() - 1
        ),
    }
}

/// What a source's outputs are when more changed than are tried one by one.
fn by_readers_note() -> String {
    format!(
        "more than {} source files changed: each names the changed outputs that read it, not those its change alone alters",
        crate::review::prompt_diff::MAX_ISOLATED
    )
}

/// The source files that changed and the outputs each one changes, alone or together with
/// the files named beside it.
fn sources_table(report: &DiffReport) -> String {
    if report.sources.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    if report.sources_by_readers {
        out.push_str(&format!("{}.\n\n", upper_first(&by_readers_note())));
    }
    out.push_str("| source file | change | affected outputs |\n| --- | --- | --- |\n");
    for source in &report.sources {
        let mut affected = if source.affects.is_empty() {
            "none".to_string()
        } else {
            listed(&source.affects, TABLE_OUTPUTS)
        };
        if !source.together_with.is_empty() {
            let others: Vec<String> = source
                .together_with
                .iter()
                .map(|path| code_span(path, true))
                .collect();
            affected = format!("together with {}: {affected}", others.join(", "));
        }
        out.push_str(&format!(
            "| {} | {} | {affected} |\n",
            code_span(&source.path, true),
            source.status
        ));
    }
    out.push('\n');
    out
}

/// `text` with its first letter a capital.
fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The most outputs a row of the source table names.
const TABLE_OUTPUTS: usize = 8;

/// The first `most` paths, one per line, and how many more there are.
fn listed(paths: &[String], most: usize) -> String {
    let mut shown: Vec<String> = paths.iter().take(most).cloned().collect();
    if paths.len() > most {
        shown.push(format!("… and {} more", paths.len() - most));
    }
    shown.join("<br>")
}

/// `text` cut to `most` characters, saying so.
fn shortened(text: &str, most: usize) -> String {
    if chars(text) <= most {
        return text.to_string();
    }
    let kept: String = text.chars().take(most).collect();
    format!("{kept}\n… (cut at {most} characters)")
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

fn plural<'a>(count: usize, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 { one } else { many }
}

pub fn json(report: &DiffReport) -> String {
    json_document(report)
}

/// Why a side could not be compiled, as words (see [`side_error`]) and as records: each
/// diagnostic located in the side's files, an entry's with a note naming the entry.
pub fn side_failure(error: &SideError) -> crate::review::prompt_diff::Failed {
    use super::diagnostics::{DiagnosticRecord, records};
    let data = match error {
        SideError::Unreadable(error) => vec![DiagnosticRecord::unlocated(
            "side-unreadable",
            format!("the workspace could not be read: {error}"),
            None,
        )],
        SideError::Invalid {
            diagnostics,
            sources,
        } => records(diagnostics, &[sources]),
        SideError::NotCompiled { failed, sources } => {
            let mut found = Vec::new();
            for (entry, error) in failed {
                let note = format!("in {}", entry.label());
                let mut entry_records = match error {
                    CompileError::Selection(problem) => vec![DiagnosticRecord::unlocated(
                        problem.code(),
                        problem.to_string(),
                        problem.help(),
                    )],
                    CompileError::InvalidWorkspace => Vec::new(),
                    CompileError::Diagnostics(diagnostics) => {
                        records(&sorted(diagnostics), &[sources])
                    }
                };
                for record in &mut entry_records {
                    record.notes.push(note.clone());
                }
                found.extend(entry_records);
            }
            found
        }
    };
    let data = data
        .iter()
        .filter_map(|record| serde_json::to_value(record).ok())
        .collect();
    (side_error(error), data)
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
                message.push_str(&format!("{} does not compile: ", entry.label()));
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
    diagnostics.clone().sorted()
}

/// `base × full (modified): -9 characters, -1 tokens (≈ o200k, 299 → 298)`.
/// One output's change on one line (its family and context are the workspace's names).
fn summary(change: &PromptChange) -> String {
    // A change to the tool definitions beside a prompt says so: it is not the prompt's.
    let what = if change.what == "prompt" {
        String::new()
    } else {
        format!(" {}", change.what)
    };
    format!(
        "{}{what} ({}): {} characters, {} tokens ({}{}, {} → {})",
        change.entry,
        change.status,
        signed(change.characters.0, change.characters.1),
        signed(change.tokens.0, change.tokens.1),
        if change.exact { "" } else { "≈ " },
        change.encoding,
        change.tokens.0,
        change.tokens.1
    )
}

/// `text` (a file's name, which the pull request chooses) as inline code that nothing in it can
/// close or leave: fenced by more backticks than any run of them in it, its line breaks and
/// other control characters shown as pictures, and in a table cell its `|` escaped, so no
/// name can end the cell, add a link or raw HTML to the comment.
fn code_span(text: &str, in_table: bool) -> String {
    let mut text = super::visible::visible(text).replace('\n', "\u{240a}");
    if in_table {
        text = text.replace('|', "\\|");
    }
    let fence = "`".repeat(longest_backtick_run(&text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
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

    // A partial's name closed its code span and its table cell, and put a live link and HTML
    // into the pull request's comment.
    #[test]
    fn a_file_name_stays_inside_its_code_span_and_its_cell() {
        let name = "partials/x` | [click](https:evil) <b>bold<b> `y.md";
        assert_eq!(
            code_span(name, true),
            "``partials/x` \\| [click](https:evil) <b>bold<b> `y.md``"
        );
        assert_eq!(code_span("`a`", false), "`` `a` ``");
        assert_eq!(code_span("a\nb\u{1b}", false), "`a\u{240a}b\u{241b}`");
        assert_eq!(code_span("plain/name.md", true), "`plain/name.md`");
    }

    fn change(diff: &str) -> PromptChange {
        PromptChange {
            path: "out/f/c.md".into(),
            what: "prompt",
            family: "f".into(),
            variant: None,
            context: "c".into(),
            entry: "f × c".into(),
            status: Status::Modified,
            characters: (10, 12),
            tokens: (3, 4),
            encoding: "o200k",
            exact: true,
            diff: diff.into(),
        }
    }

    // The same edit in two contexts whose unchanged lines around it differ (each context's
    // own directory) was two changes; it is one, as the README says.
    #[test]
    fn the_same_lines_added_and_removed_are_one_change_whatever_surrounds_them() {
        let edit = |context_line: &str, at: usize| {
            change(&format!(
                "--- a/out/f/c.md\n+++ b/out/f/c.md\n@@ -{at},3 +{at},3 @@\n {context_line}\n-Be brief.\n+Be brief and exact.\n"
            ))
        };
        let prompts = [
            edit("You work in /srv/a.", 3),
            edit("You work in /home/b.", 9),
            change(
                "--- a/out/f/c.md\n+++ b/out/f/c.md\n@@ -3,3 +3,3 @@\n You work in /srv/a.\n-Be brief.\n+Be terse.\n",
            ),
        ];
        let groups = same_changes(&prompts);
        assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), [2, 1]);
    }

    #[test]
    fn a_code_fence_in_the_prompt_cannot_close_the_comments_diff_block() {
        let report = DiffReport {
            base: "main".into(),
            head: "working tree".into(),
            prompts: vec![change(" ```\n-old\n+new\n ````\n")],
            sources: Vec::new(),
            sources_by_readers: false,
            failures: Vec::new(),
            notes: Vec::new(),
        };
        let markdown = markdown(&report, false, COMMENT_LIMIT);
        assert!(
            markdown.contains("\n`````diff\n ```\n-old\n+new\n ````\n`````\n"),
            "{markdown}"
        );
        // Exact counts carry no estimate mark.
        assert!(markdown.contains("+1 tokens (o200k, 3 → 4)"), "{markdown}");
    }

    // A bidi override in a prompt reorders the line it is on wherever the comment is read,
    // so that an added instruction can read as something else (Trojan Source).
    #[test]
    fn characters_that_reorder_or_redraw_a_diff_line_are_shown_in_the_comment() {
        let report = DiffReport {
            base: "main".into(),
            head: "working tree".into(),
            prompts: vec![change("-old\n+run \u{202e}txt.exe\r\u{1b}[2K\ttab\n")],
            sources: Vec::new(),
            sources_by_readers: false,
            failures: Vec::new(),
            notes: Vec::new(),
        };
        let markdown = markdown(&report, false, COMMENT_LIMIT);
        assert!(
            markdown.contains("-old\n+run \u{fffd}txt.exe\u{240d}\u{241b}[2K\ttab\n"),
            "{markdown}"
        );
    }
}
