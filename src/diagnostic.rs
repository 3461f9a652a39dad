//! The diagnostic model: a problem, where it is, and related places. Rendering lives in
//! [`crate::report`], apart from the model, so every stage can simply push.

use crate::problem::{LabelKind, NoteKind, Problem, Severity};
use crate::span::Span;

/// A secondary place that explains the primary one ("first defined here").
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub kind: LabelKind,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub problem: Problem,
    pub span: Span,
    pub labels: Vec<Label>,
    pub notes: Vec<NoteKind>,
}

impl Diagnostic {
    pub fn new(problem: Problem, span: Span) -> Self {
        Self {
            problem,
            span,
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[must_use]
    pub fn label(mut self, span: Span, kind: LabelKind) -> Self {
        self.labels.push(Label { span, kind });
        self
    }

    #[must_use]
    pub fn note(mut self, note: NoteKind) -> Self {
        self.notes.push(note);
        self
    }

    pub fn severity(&self) -> Severity {
        self.problem.severity()
    }
}

/// Collects every diagnostic of a run, so one run reports every problem.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(diagnostic);
    }

    pub fn error(&mut self, problem: Problem, span: Span) {
        self.push(Diagnostic::new(problem, span));
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity() == Severity::Error)
    }

    pub fn error_count(&self) -> usize {
        self.items
            .iter()
            .filter(|d| d.severity() == Severity::Error)
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    /// The diagnostics pushed after the first `from`, to add what their finder knows.
    pub fn since_mut(&mut self, from: usize) -> impl Iterator<Item = &mut Diagnostic> {
        self.items.iter_mut().skip(from)
    }

    /// Diagnostics in a stable order, whatever order the stages found them in: files that
    /// cannot be parsed first, then schema errors, then the rest (so the first message is the
    /// cause), each by file, position, then message.
    pub fn sorted(mut self) -> Vec<Diagnostic> {
        self.items.sort_by(|a, b| {
            // Within a stage, errors before warnings: a warning is often what an error left
            // behind (a slot misspelt in the base template leaves its component unslotted).
            let key = |d: &Diagnostic| {
                (
                    d.problem.stage(),
                    d.severity() != Severity::Error,
                    d.span.source,
                    d.span.start,
                )
            };
            (key(a), a.problem.code())
                .cmp(&(key(b), b.problem.code()))
                .then_with(|| a.problem.to_string().cmp(&b.problem.to_string()))
        });
        self.items.dedup();
        shown_per_file(self.items)
    }
}

/// The most problems reported for one file. A file of a few megabytes can hold hundreds of
/// thousands of the same mistake (a key misspelt on every line, a list of unknown ids): each
/// was reported in full, with its quoted line, and such a file took seconds to minutes and
/// hundreds of megabytes to report (more with `--format json`), for a report no one reads
/// to the end.
pub const MAX_PROBLEMS_PER_FILE: usize = 100;

/// Which problems a near name is looked for: the first [`MAX_PROBLEMS_PER_FILE`] of each file
/// that asks, as only so many of a file are told. Looking for one compares the name with every
/// name it could have meant, and a list of a hundred thousand unknown ids, against thousands
/// of known ones, took minutes to suggest names no report showed.
#[derive(Debug, Default)]
pub struct Suggestions {
    asked: std::sync::Mutex<std::collections::HashMap<crate::source::SourceId, usize>>,
}

impl Suggestions {
    /// Whether to look for a near name for a problem at `span`.
    pub fn allowed(&self, span: Span) -> bool {
        let Ok(mut asked) = self.asked.lock() else {
            return false;
        };
        let count = asked.entry(span.source).or_insert(0);
        *count += 1;
        *count <= MAX_PROBLEMS_PER_FILE
    }
}

/// `sorted` diagnostics with at most [`MAX_PROBLEMS_PER_FILE`] of each file, in their order;
/// the rest of a file are counted by one [`Problem::MoreProblems`] where the first of them
/// is, an error when any of them is.
fn shown_per_file(sorted: Vec<Diagnostic>) -> Vec<Diagnostic> {
    use std::collections::HashMap;
    let mut seen: HashMap<crate::source::SourceId, usize> = HashMap::new();
    // Each file's problems left out: where the first is, how many errors, how many warnings.
    let mut left: Vec<(Span, usize, usize)> = Vec::new();
    let mut left_of: HashMap<crate::source::SourceId, usize> = HashMap::new();
    let mut shown = Vec::with_capacity(sorted.len().min(1024));
    for diagnostic in sorted {
        let count = seen.entry(diagnostic.span.source).or_default();
        *count += 1;
        if *count <= MAX_PROBLEMS_PER_FILE {
            shown.push(diagnostic);
            continue;
        }
        let index = *left_of.entry(diagnostic.span.source).or_insert_with(|| {
            left.push((diagnostic.span, 0, 0));
            left.len() - 1
        });
        match diagnostic.severity() {
            Severity::Error => left[index].1 += 1,
            Severity::Warning => left[index].2 += 1,
        }
    }
    for (span, errors, warnings) in left {
        shown.push(Diagnostic::new(
            Problem::MoreProblems {
                shown: MAX_PROBLEMS_PER_FILE,
                errors,
                warnings,
            },
            span,
        ));
    }
    shown
}
