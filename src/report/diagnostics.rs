//! Rendering diagnostics: rustc-style for people (coloured only when asked), JSON for
//! machines. The one place diagnostics become text.

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use std::path::Path;

use serde::Serialize;

use crate::diagnostic::Diagnostic;
use crate::problem::{Problem, Severity};
use crate::source::{SourceFile, Sources};

/// Diagnostics for a terminal or a log, with a closing count.
pub fn human(diagnostics: &[Diagnostic], sources: &Sources, color: bool) -> String {
    let mut out = human_unsummed(diagnostics, sources, color);
    if let Some(summary) = summary(diagnostics) {
        out.push_str(&summary);
        out.push('\n');
    }
    out
}

/// [`human`] without the closing count: for a command that reports in several batches and
/// counts them all once, at its end.
pub fn human_unsummed(diagnostics: &[Diagnostic], sources: &Sources, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    }
    .decor_style(DecorStyle::Ascii);
    let mut out = String::new();
    for diagnostic in diagnostics {
        let labels: Vec<String> = diagnostic
            .labels
            .iter()
            .map(|l| super::visible::visible(&l.kind.to_string()).into_owned())
            .collect();
        let notes: Vec<String> = diagnostic
            .notes
            .iter()
            .map(|note| super::visible::visible(&note.to_string()).into_owned())
            .collect();
        let (groups, place) = groups(diagnostic, sources, &labels, &notes);
        let rendered = renderer.render(&groups);
        out.push_str(&match place {
            Some(place) => place.corrected(&rendered),
            None => rendered,
        });
        out.push_str("\n\n");
    }
    out
}

/// `label_words` and `note_words` are the words of the diagnostic's labels and notes. With
/// the place the rendered text gets wrong, when the snippet leaves out the start of its line.
fn groups<'a>(
    diagnostic: &'a Diagnostic,
    sources: &'a Sources,
    label_words: &'a [String],
    note_words: &'a [String],
) -> (Vec<Group<'a>>, Option<Place>) {
    let level = match diagnostic.severity() {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    // A message quotes text of the workspace (a value, a name): its control characters are
    // shown as pictures, a tab as `␉` rather than the renderer's spaces, a line break as `␊`.
    let file = sources.get(diagnostic.span.source);
    let message = in_format_of(diagnostic.problem.to_string(), Some(&file.path));
    let message = super::visible::visible(&message).into_owned();
    let mut primary_spans = vec![(diagnostic.span.range(), None)];
    let mut others = Vec::new();
    for (label, words) in diagnostic.labels.iter().zip(label_words) {
        if label.span.source == diagnostic.span.source {
            primary_spans.push((label.span.range(), Some(words.as_str())));
        } else {
            let other = sources.get(label.span.source);
            let (_, snippet) = snippet(
                other,
                &[(label.span.range(), Some(words.as_str()))],
                Cut::EndOnly,
            );
            others.push(snippet);
        }
    }
    let (place, primary) = snippet(file, &primary_spans, Cut::BothEnds);
    let group = level.primary_title(message).id(diagnostic.problem.code());
    // A path with no text to quote (a link refused, a folder, an empty file) is named alone:
    // its snippet was an empty line `1 |` with a caret under nothing.
    let mut group = if file.text.is_empty() {
        let path = super::visible::visible(&file.path.to_string_lossy()).into_owned();
        group.element(Origin::path(path).line(1).char_column(1))
    } else {
        group.element(primary)
    };
    for snippet in others {
        group = group.element(snippet);
    }
    for note in note_words {
        group = group.element(Level::NOTE.message(note.as_str()));
    }
    if let Some(help) = help_for(&diagnostic.problem, Some(&file.path)) {
        group = group.element(Level::HELP.message(super::visible::visible(&help).into_owned()));
    }
    (vec![group], place)
}

/// Where a snippet that leaves out the start of its line points: the renderer counts the
/// column from where the snippet starts, and prints `written` where `actual` is true.
struct Place {
    written: String,
    actual: String,
}

impl Place {
    /// `rendered` with the place after its first `-->` (the diagnostic's own) made right.
    fn corrected(&self, rendered: &str) -> String {
        let Some(arrow) = rendered.find("-->") else {
            return rendered.to_string();
        };
        let (head, tail) = rendered.split_at(arrow);
        format!("{head}{}", tail.replacen(&self.written, &self.actual, 1))
    }
}

/// How much of a line a snippet shows before and after its spans: the renderer reads all it
/// is given, and a thousand diagnostics on one line of 3 MB took seconds (it shows a terminal's
/// width around the spans anyway).
const AROUND_SPANS: usize = 512;

/// Which ends of the lines a snippet may leave out (see [`snippet`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The text past [`AROUND_SPANS`] before the spans too (see [`Place`]).
    BothEnds,
    /// Only after the spans: a label in another file, whose place is printed with no
    /// correction.
    EndOnly,
}

/// A snippet of the lines the spans touch (the first one primary, the others context). Only
/// those lines are handed to the renderer, which otherwise scans the whole file for each
/// diagnostic: a large template with many errors took minutes; and of a long line, only
/// [`AROUND_SPANS`] bytes on either side of the spans. When the start of the line is left
/// out, the place the renderer will print is returned to be corrected.
fn snippet<'a>(
    file: &'a SourceFile,
    spans: &[(std::ops::Range<usize>, Option<&'a str>)],
    cut: Cut,
) -> (
    Option<Place>,
    Snippet<'a, annotate_snippets::Annotation<'a>>,
) {
    let text = file.text.as_str();
    let ranges: Vec<std::ops::Range<usize>> = spans
        .iter()
        .map(|(range, _)| clamp(range.clone(), text))
        .collect();
    let low = ranges.iter().map(|r| r.start).min().unwrap_or(0);
    let high = ranges.iter().map(|r| r.end).max().unwrap_or(0);
    let line_start = text[..low].rfind('\n').map_or(0, |at| at + 1);
    let from = if cut == Cut::BothEnds && low - line_start > 2 * AROUND_SPANS {
        clamp(low - AROUND_SPANS..low, text).start
    } else {
        line_start
    };
    let line_end = text[high..]
        .find('\n')
        .map_or(text.len(), |at| high + at + 1);
    let to = if line_end - high > 2 * AROUND_SPANS {
        clamp(high..high + AROUND_SPANS, text).end
    } else {
        line_end
    };
    let (line, _) = file.line_col(from);
    let path = super::visible::visible(&file.path.to_string_lossy()).into_owned();
    let place = (from != line_start).then(|| {
        // The renderer's column is the primary span's, from the snippet's start.
        let start = ranges.first().map_or(low, |r| r.start);
        let (line, column) = file.line_col(start);
        let counted = text[from..start].chars().count() + 1;
        Place {
            written: format!("{path}:{line}:{counted}"),
            actual: format!("{path}:{line}:{column}"),
        }
    });
    // A character that takes no room in a quoted line would hide itself there too.
    let (source, shown_at) = super::visible::visible_source(&text[from..to]);
    let mut snippet = Snippet::source(source)
        .path(path)
        .line_start(line)
        .fold(true);
    for (index, (range, (_, label))) in ranges.iter().zip(spans).enumerate() {
        let kind = if index == 0 {
            AnnotationKind::Primary
        } else {
            AnnotationKind::Context
        };
        let mut annotation = kind.span(shown_at(range.start - from)..shown_at(range.end - from));
        if let Some(label) = label {
            annotation = annotation.label(*label);
        }
        snippet = snippet.annotation(annotation);
    }
    (place, snippet)
}

/// Keeps a span on character boundaries inside the text, so rendering never panics.
fn clamp(range: std::ops::Range<usize>, text: &str) -> std::ops::Range<usize> {
    let fix = |mut at: usize| {
        at = at.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let start = fix(range.start);
    start..fix(range.end).max(start)
}

/// "2 errors, 1 warning", or nothing when there is nothing to report.
pub fn summary(diagnostics: &[Diagnostic]) -> Option<String> {
    let (errors, warnings) = counts(diagnostics);
    summary_of(errors, warnings)
}

/// How many errors and warnings `diagnostics` hold, those a [`Problem::MoreProblems`]
/// stands for among them.
pub fn counts(diagnostics: &[Diagnostic]) -> (usize, usize) {
    // A file's problems left out of the report count as the ones shown do.
    let (mut errors, mut warnings) = (0, 0);
    for diagnostic in diagnostics {
        match (&diagnostic.problem, diagnostic.severity()) {
            (
                Problem::MoreProblems {
                    errors: e,
                    warnings: w,
                    ..
                },
                _,
            ) => {
                errors += e;
                warnings += w;
            }
            (_, Severity::Error) => errors += 1,
            (_, Severity::Warning) => warnings += 1,
        }
    }
    (errors, warnings)
}

/// The closing count of a report of `errors` and `warnings`: `error: 2 errors, 1 warning`.
pub fn summary_of(errors: usize, warnings: usize) -> Option<String> {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => None,
        (0, w) => Some(format!("warning: {}", plural(w, "warning"))),
        (e, 0) => Some(format!("error: {}", plural(e, "error"))),
        (e, w) => Some(format!(
            "error: {}, {}",
            plural(e, "error"),
            plural(w, "warning")
        )),
    }
}

/// One diagnostic as data: what `--format json` prints for each, and what the language
/// bindings hand to their callers. A problem found outside any file (a request naming a
/// context that does not exist) has no location.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DiagnosticRecord {
    /// `error` or `warning`.
    pub severity: &'static str,
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub location: Option<RecordLocation>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<RecordLabel>,
    /// For a `more-problems` record: the problems it counts, which have no record of their
    /// own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_shown: Option<NotShown>,
}

/// How many errors and warnings a `more-problems` record counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NotShown {
    pub errors: usize,
    pub warnings: usize,
}

/// Where a diagnostic points: the file (relative to the workspace when inside it) and the
/// 1-based line and column, in characters, of the start and end of its span.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecordLocation {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

/// A secondary place a diagnostic names ("first defined here").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecordLabel {
    pub message: String,
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl DiagnosticRecord {
    /// A warning about a file as a whole that is not one of the workspace's sources (a
    /// generated schema that is stale): placed at its start.
    pub fn about_file(code: &'static str, file: String, message: String) -> Self {
        DiagnosticRecord {
            severity: "warning",
            code,
            message,
            help: None,
            location: Some(RecordLocation {
                file,
                line: 1,
                column: 1,
                end_line: 1,
                end_column: 1,
            }),
            notes: Vec::new(),
            labels: Vec::new(),
            not_shown: None,
        }
    }

    /// An error with no place in a file.
    pub fn unlocated(code: &'static str, message: String, help: Option<String>) -> Self {
        DiagnosticRecord {
            severity: "error",
            code,
            message,
            help,
            location: None,
            notes: Vec::new(),
            labels: Vec::new(),
            not_shown: None,
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == "error"
    }

    /// The errors and warnings the record stands for: itself, or those it counts.
    pub fn counts(&self) -> (usize, usize) {
        match self.not_shown {
            Some(NotShown { errors, warnings }) => (errors, warnings),
            None if self.is_error() => (1, 0),
            None => (0, 1),
        }
    }
}

/// The errors and warnings `records` stand for, those `more-problems` records count among
/// them, as the closing count of a report says.
pub fn record_counts(records: &[DiagnosticRecord]) -> (usize, usize) {
    records.iter().fold((0, 0), |(errors, warnings), record| {
        let (e, w) = record.counts();
        (errors + e, warnings + w)
    })
}

/// Diagnostics as records. Each span is looked up in the first of `sources` that holds its
/// file: a request's own sources continue a workspace's (see [`Sources::after`]).
pub fn records(diagnostics: &[Diagnostic], sources: &[&Sources]) -> Vec<DiagnosticRecord> {
    let file = |id| {
        sources
            .iter()
            .find(|sources| sources.holds(id))
            .or(sources.first())
            .map(|sources| sources.get(id))
    };
    let path_of = |d: &Diagnostic| file(d.span.source).map(|file| file.path.as_path());
    diagnostics
        .iter()
        .map(|d| DiagnosticRecord {
            severity: match d.severity() {
                Severity::Error => "error",
                Severity::Warning => "warning",
            },
            code: d.problem.code(),
            message: in_format_of(d.problem.to_string(), path_of(d)),
            help: help_for(&d.problem, path_of(d)),
            location: file(d.span.source).map(|file| {
                let (line, column) = file.line_col(d.span.start);
                let (end_line, end_column) = file.line_col(d.span.end);
                RecordLocation {
                    file: file.path.to_string_lossy().into_owned(),
                    line,
                    column,
                    end_line,
                    end_column,
                }
            }),
            notes: d.notes.iter().map(ToString::to_string).collect(),
            labels: d
                .labels
                .iter()
                .filter_map(|label| {
                    let other = file(label.span.source)?;
                    let (line, column) = other.line_col(label.span.start);
                    Some(RecordLabel {
                        message: label.kind.to_string(),
                        file: other.path.to_string_lossy().into_owned(),
                        line,
                        column,
                    })
                })
                .collect(),
            not_shown: match d.problem {
                Problem::MoreProblems {
                    errors, warnings, ..
                } => Some(NotShown { errors, warnings }),
                _ => None,
            },
        })
        .collect()
}

/// One JSON document: `{"diagnostics": [...], "errors": N, "warnings": N}`.
pub fn json(diagnostics: &[Diagnostic], sources: &Sources) -> String {
    json_with(diagnostics, sources, &[])
}

/// [`json`], with `also` (what is said about files that are not sources) after the
/// diagnostics.
pub fn json_with(
    diagnostics: &[Diagnostic],
    sources: &Sources,
    also: &[DiagnosticRecord],
) -> String {
    let mut all = records(diagnostics, &[sources]);
    all.extend_from_slice(also);
    json_records(&all)
}

/// Records as `--format json` prints them, with their counts.
pub fn json_records(records: &[DiagnosticRecord]) -> String {
    let (errors, warnings) = record_counts(records);
    let document = serde_json::json!({
        "diagnostics": records,
        "errors": errors,
        "warnings": warnings,
    });
    super::json_document(&document)
}

/// Diagnostics as GitHub Actions workflow commands (`::error file=…,line=…::…`), one line
/// each, so a CI run shows them on the lines of the pull request they are about. `base` is
/// the workspace's folder relative to the job's working directory, which GitHub resolves
/// `file` against. `also` (what is said about files that are not sources) follows them, then
/// a closing count of the diagnostics, for the log.
pub fn github(
    diagnostics: &[Diagnostic],
    sources: &Sources,
    base: &Path,
    also: &[DiagnosticRecord],
) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        let file = sources.get(diagnostic.span.source);
        let (line, column) = file.line_col(diagnostic.span.start);
        let (end_line, end_column) = file.line_col(diagnostic.span.end);
        let command = match diagnostic.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let path = base.join(&file.path);
        let mut message = in_format_of(diagnostic.problem.to_string(), Some(&file.path));
        for note in &diagnostic.notes {
            message.push_str(&format!("\nnote: {note}"));
        }
        if let Some(help) = help_for(&diagnostic.problem, Some(&file.path)) {
            message.push_str(&format!("\nhelp: {help}"));
        }
        out.push_str(&format!(
            "::{command} file={},line={line},col={column},endLine={end_line},endColumn={end_column},title={}::{}\n",
            workflow_property(&path.to_string_lossy().replace('\\', "/")),
            workflow_property(&format!("promptc {}", diagnostic.problem.code())),
            workflow_data(&message),
        ));
    }
    for record in also {
        let command = if record.is_error() {
            "error"
        } else {
            "warning"
        };
        let place = record.location.as_ref().map_or_else(String::new, |at| {
            format!(
                "file={},line={},col={},",
                workflow_property(&base.join(&at.file).to_string_lossy().replace('\\', "/")),
                at.line,
                at.column
            )
        });
        out.push_str(&format!(
            "::{command} {place}title={}::{}\n",
            workflow_property(&format!("promptc {}", record.code)),
            workflow_data(&record.message),
        ));
    }
    if let Some(summary) = summary(diagnostics) {
        out.push_str(&summary);
        out.push('\n');
    }
    out
}

/// A workflow command's message: `%`, CR and LF escaped as GitHub's runner expects. The log
/// shows it as it is, so a control character other than a line break or tab (an escape
/// sequence in a file's name, which could clear or recolour the log) or one that reorders the
/// text is shown as the text format shows it.
fn workflow_data(text: &str) -> String {
    let escaped = text
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    super::visible::visible(&escaped).into_owned()
}

/// A workflow command's property value: also `:` and `,`, which end a value.
fn workflow_property(text: &str) -> String {
    workflow_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A problem's help for the file it is about (see [`in_format_of`]).
fn help_for(problem: &crate::problem::Problem, path: Option<&std::path::Path>) -> Option<String> {
    use crate::load::document::Format;
    let help = problem.help()?;
    // Only YAML folds a line into the item above it.
    if help == crate::problem::YAML_FOLDED_ITEM && path.and_then(Format::of) != Some(Format::Yaml) {
        return None;
    }
    Some(in_format_of(help, path))
}

/// Words about a file, the settings they show as TOML (`order = 2`) written as YAML
/// (`order: 2`) when the file is YAML, or as JSON (`"order": 2`, a table called an object)
/// when it is JSON, so that a fix can be copied as it is.
fn in_format_of(text: String, path: Option<&std::path::Path>) -> String {
    use crate::load::document::Format;
    let format = path.and_then(Format::of);
    // JSON calls a table an object.
    let text = if format == Some(Format::Json) {
        text.replace("an array of tables", "an array of objects")
            .replace("a table", "an object")
            .replace(" tables", " objects")
            .replace(" table ", " object ")
    } else {
        text
    };
    let yaml = format == Some(Format::Yaml);
    // A setting of promptc.toml, which the words name, stays TOML.
    if !(yaml || format == Some(Format::Json))
        || !text.contains(" = ")
        || text.contains("promptc.toml")
    {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    // Between backticks (the odd parts), a setting written `key = value`.
    for (index, part) in text.split('`').enumerate() {
        if index > 0 {
            out.push('`');
        }
        let setting = part.split_once(" = ").is_some_and(|(key, _)| {
            !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        });
        if index % 2 == 1 && setting && yaml {
            out.push_str(&part.replace(" = ", ": "));
        } else if index % 2 == 1
            && setting
            && let Some((key, value)) = part.split_once(" = ")
        {
            out.push_str(&format!("\"{key}\": {value}"));
        } else {
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{workflow_data, workflow_property};

    #[test]
    fn workflow_commands_escape_what_would_end_a_value() {
        assert_eq!(workflow_data("100% sure\r\nnext"), "100%25 sure%0D%0Anext");
        // A `,` or `:` in a path would start another property.
        assert_eq!(
            workflow_property("tools/a,b:c.toml"),
            "tools/a%2Cb%3Ac.toml"
        );
    }

    // A file's name reaches the log in the annotation's file and message: an escape sequence
    // in it cleared and recoloured the log, and a right-to-left mark reordered what followed.
    #[test]
    fn workflow_commands_show_what_a_log_would_obey() {
        let name = "partials/\u{1b}[2J\u{1b}[31mevil\u{202e}dm.txt";
        for written in [workflow_data(name), workflow_property(name)] {
            assert!(!written.contains(['\u{1b}', '\u{202e}']), "{written:?}");
            assert!(written.contains("evil"), "{written:?}");
        }
    }
}
