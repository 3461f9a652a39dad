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
        self.items
    }
}
