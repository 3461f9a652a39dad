//! The diagnostic model: a problem, where it is, and related places. Rendering lives in
//! [`crate::report`], apart from the model, so every stage can simply push.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};

use crate::problem::{LabelKind, NoteKind, Problem, Severity};
use crate::source::SourceId;
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
///
/// Past [`COMPACT_PAST`] problems held, [`Diagnostics::compact`] leaves out those no report
/// can show (see [`MAX_PROBLEMS`]) and only counts them: a workspace of thousands of files,
/// each with a hundred mistakes, held a million diagnostics (half a gigabyte) for a report
/// that shows a thousand.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
    /// Problems left out by [`Diagnostics::compact`], by file.
    left_out: BTreeMap<SourceId, LeftOut>,
}

/// The problems of one file left out of the report: how many, and the first of them in the
/// report's order, where the diagnostic that counts them is placed.
#[derive(Clone, Debug)]
struct LeftOut {
    first: Diagnostic,
    errors: usize,
    warnings: usize,
}

impl LeftOut {
    fn of(diagnostic: Diagnostic) -> Self {
        let mut left = LeftOut {
            errors: 0,
            warnings: 0,
            first: diagnostic,
        };
        left.count(left.first.severity());
        left
    }

    fn count(&mut self, severity: Severity) {
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
    }

    fn merge(&mut self, other: LeftOut) {
        self.errors += other.errors;
        self.warnings += other.warnings;
        if in_report_order(&other.first, &self.first).is_lt() {
            self.first = other.first;
        }
    }
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
        for (source, left) in other.left_out {
            self.leave_out(source, left);
        }
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity() == Severity::Error)
            || self.left_out.values().any(|left| left.errors > 0)
    }

    pub fn error_count(&self) -> usize {
        let held = self
            .items
            .iter()
            .filter(|d| d.severity() == Severity::Error)
            .count();
        held + self
            .left_out
            .values()
            .map(|left| left.errors)
            .sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.left_out.is_empty()
    }

    /// How many errors each file has, those [`Diagnostics::compact`] left out among them.
    pub fn errors_by_file(&self) -> BTreeMap<SourceId, usize> {
        let mut errors: BTreeMap<SourceId, usize> = BTreeMap::new();
        for diagnostic in &self.items {
            if diagnostic.severity() == Severity::Error {
                *errors.entry(diagnostic.span.source).or_default() += 1;
            }
        }
        for (source, left) in &self.left_out {
            if left.errors > 0 {
                *errors.entry(*source).or_default() += left.errors;
            }
        }
        errors
    }

    /// How many diagnostics are held (not those [`Diagnostics::compact`] left out): a finder
    /// compares it before and after its work to know whether it found something.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The diagnostics held (see [`Diagnostics::len`]).
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    /// The diagnostics pushed after the first `from`, to add what their finder knows. Only
    /// [`Diagnostics::compact`] reorders them, which a finder does not call meanwhile.
    pub fn since_mut(&mut self, from: usize) -> impl Iterator<Item = &mut Diagnostic> {
        self.items.iter_mut().skip(from)
    }

    /// Past [`COMPACT_PAST`] diagnostics held, keeps only those a report can still show, and
    /// counts the rest: the report made of them all ([`Diagnostics::sorted`]) is the same. A
    /// problem no report shows now never will: more problems only push it further back. (One
    /// difference: a problem found twice is reported once, but if both were left out by
    /// different compactions, it is counted twice.) Called between files by the load, which
    /// can find a problem per value of every file.
    pub fn compact(&mut self) {
        if self.items.len() <= COMPACT_PAST {
            return;
        }
        self.items = self.take_shown();
    }

    /// The diagnostics held that a report shows, in its order; the others are left out.
    fn take_shown(&mut self) -> Vec<Diagnostic> {
        let mut items = std::mem::take(&mut self.items);
        sort_in_report_order(&mut items);
        let (shown, left) = split_shown(items);
        for diagnostic in left {
            self.leave_out(diagnostic.span.source, LeftOut::of(diagnostic));
        }
        shown
    }

    /// Counts `left` with the problems of `source` already left out.
    fn leave_out(&mut self, source: SourceId, left: LeftOut) {
        match self.left_out.entry(source) {
            Entry::Occupied(mut held) => held.get_mut().merge(left),
            Entry::Vacant(slot) => {
                slot.insert(left);
            }
        }
    }

    /// Diagnostics in a stable order, whatever order the stages found them in: files that
    /// cannot be parsed first, then schema errors, then the rest (so the first message is the
    /// cause), each by file, position, then message. At most [`MAX_PROBLEMS_PER_FILE`] of a
    /// file and [`MAX_PROBLEMS`] in all are shown; the rest are counted by
    /// [`Problem::MoreProblems`] diagnostics at the end.
    pub fn sorted(mut self) -> Vec<Diagnostic> {
        let mut shown = self.take_shown();
        shown.extend(counted(&shown, self.left_out));
        shown
    }
}

/// The order of a report: by stage, errors before warnings within it (a warning is often
/// what an error left behind: a slot misspelt in the base template leaves its component
/// unslotted), then by file, position, code and message.
fn in_report_order(a: &Diagnostic, b: &Diagnostic) -> std::cmp::Ordering {
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
}

/// Sorted into the report's order, each problem once.
fn sort_in_report_order(items: &mut Vec<Diagnostic>) {
    items.sort_by(in_report_order);
    items.dedup();
}

/// The most problems reported for one file. A file of a few megabytes can hold hundreds of
/// thousands of the same mistake (a key misspelt on every line, a list of unknown ids): each
/// was reported in full, with its quoted line, and such a file took seconds to minutes and
/// hundreds of megabytes to report (more with `--format json`), for a report no one reads
/// to the end.
pub const MAX_PROBLEMS_PER_FILE: usize = 100;

/// The most problems one run reports, after each file's own limit
/// ([`MAX_PROBLEMS_PER_FILE`]): ten thousand files with a mistake each were ten thousand
/// reports, and a file's hundred each, a hundred megabytes of them.
pub const MAX_PROBLEMS: usize = 1_000;

/// How many diagnostics [`Diagnostics::compact`] lets a collection hold before it leaves out
/// those no report shows: a few times what a report shows, so that each compaction's sort is
/// paid for by as many problems found since the last.
const COMPACT_PAST: usize = 4 * MAX_PROBLEMS;
/// Which problems a near name is looked for: the first [`MAX_PROBLEMS_PER_FILE`] of each file
/// that asks, as only so many of a file are told. Looking for one compares the name with every
/// name it could have meant, and a list of a hundred thousand unknown ids, against thousands
/// of known ones, took minutes to suggest names no report showed.
#[derive(Debug, Default)]
pub struct Suggestions {
    asked: std::sync::Mutex<HashMap<SourceId, usize>>,
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

/// `sorted` diagnostics split into those a report shows (the first [`MAX_PROBLEMS_PER_FILE`]
/// of each file, and of them the first [`MAX_PROBLEMS`]) and the rest, each in their order.
fn split_shown(sorted: Vec<Diagnostic>) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let mut of_file: HashMap<SourceId, usize> = HashMap::new();
    let mut shown = Vec::with_capacity(sorted.len().min(MAX_PROBLEMS));
    let mut left = Vec::new();
    for diagnostic in sorted {
        let count = of_file.entry(diagnostic.span.source).or_default();
        *count += 1;
        if *count <= MAX_PROBLEMS_PER_FILE && shown.len() < MAX_PROBLEMS {
            shown.push(diagnostic);
        } else {
            left.push(diagnostic);
        }
    }
    (shown, left)
}

/// The diagnostics that count the problems left out, in the order of the first of each: one
/// [`Problem::MoreProblems`] per file that shows its first [`MAX_PROBLEMS_PER_FILE`], where
/// the first it leaves out is (an error when any of them is); and one for every other file's,
/// which the report's own limit left out, where the first of those is.
fn counted(shown: &[Diagnostic], left_out: BTreeMap<SourceId, LeftOut>) -> Vec<Diagnostic> {
    let mut shown_of: HashMap<SourceId, usize> = HashMap::new();
    for diagnostic in shown {
        *shown_of.entry(diagnostic.span.source).or_default() += 1;
    }
    let mut files: Vec<LeftOut> = Vec::new();
    let mut run: Option<(LeftOut, usize)> = None;
    for (source, left) in left_out {
        if shown_of.get(&source) == Some(&MAX_PROBLEMS_PER_FILE) {
            files.push(left);
            continue;
        }
        match &mut run {
            Some((all, count)) => {
                all.merge(left);
                *count += 1;
            }
            None => run = Some((left, 1)),
        }
    }
    files.sort_by(|a, b| in_report_order(&a.first, &b.first));
    let more = |left: &LeftOut, shown: usize, files: Option<usize>| {
        Diagnostic::new(
            Problem::MoreProblems {
                shown,
                errors: left.errors,
                warnings: left.warnings,
                files,
            },
            left.first.span,
        )
    };
    let mut counts: Vec<Diagnostic> = files
        .iter()
        .map(|left| more(left, MAX_PROBLEMS_PER_FILE, None))
        .collect();
    if let Some((left, count)) = run {
        counts.push(more(&left, MAX_PROBLEMS, Some(count)));
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;
    use proptest::prelude::*;

    /// `files` sources of one line each.
    fn sources(files: usize) -> Vec<SourceId> {
        let mut sources = Sources::default();
        (0..files)
            .map(|file| sources.add(format!("f{file}.toml").into(), "x = 1\n".into()))
            .collect()
    }

    /// A problem of `file` at `at`: an error, or a warning when `warning`.
    fn found(file: SourceId, at: usize, warning: bool) -> Diagnostic {
        let problem = if warning {
            Problem::ExtraKeyIsAField {
                key: format!("k{at}"),
            }
        } else {
            Problem::MissingField {
                field: format!("f{at}"),
            }
        };
        Diagnostic::new(problem, Span::new(file, at..at + 1))
    }

    fn more(diagnostic: &Diagnostic) -> Option<(usize, usize, usize, Option<usize>)> {
        match diagnostic.problem {
            Problem::MoreProblems {
                shown,
                errors,
                warnings,
                files,
            } => Some((shown, errors, warnings, files)),
            _ => None,
        }
    }

    #[test]
    fn a_run_shows_its_first_thousand_problems_and_counts_the_rest_by_file() {
        // 30 files of 60 problems (errors at even places, warnings at odd ones), and one of
        // 150: the first 1,000 in the report's order are shown.
        let files = sources(31);
        let mut diagnostics = Diagnostics::default();
        for &file in &files[..30] {
            for at in 0..60 {
                diagnostics.push(found(file, at, at % 2 == 1));
            }
        }
        for at in 0..150 {
            diagnostics.push(found(files[30], at, false));
        }
        let report = diagnostics.sorted();
        let (counts, shown): (Vec<_>, Vec<_>) = report.iter().partition(|d| more(d).is_some());
        assert_eq!(shown.len(), MAX_PROBLEMS);
        // Errors come first: the 30 errors of each of the 30 files, then the 150-error file's
        // first 100; then warnings, up to 1,000 in all.
        let errors = shown
            .iter()
            .filter(|d| d.severity() == Severity::Error)
            .count();
        assert_eq!(errors, 30 * 30 + 100);
        assert!(shown.iter().all(|d| d.severity() == Severity::Error));
        // The file of 150 shows its first 100 and counts its 50 more where the first is; every
        // warning (900) is past the run's limit, in 30 files, counted at the first of them.
        assert_eq!(counts.len(), 2, "{counts:?}");
        assert_eq!(more(counts[0]), Some((100, 50, 0, None)));
        assert_eq!(counts[0].span, Span::new(files[30], 100..101));
        assert_eq!(more(counts[1]), Some((MAX_PROBLEMS, 0, 900, Some(30))));
        assert_eq!(counts[1].span, Span::new(files[0], 1..2));
        assert_eq!(
            counts[1].problem.to_string(),
            "900 more warnings in 30 files, not shown: only a run's first 1000 problems are reported"
        );
        // The closing count is of every problem.
        assert_eq!(crate::report::diagnostics::counts(&report), (1050, 900));
    }

    #[test]
    fn a_file_past_its_limit_and_the_run_s_counts_its_problems_once() {
        // 12 files of 101 errors: the first 9 show 100 each (900), the tenth its first 100
        // (1,000 in all); the 11th and 12th show none.
        let files = sources(12);
        let mut diagnostics = Diagnostics::default();
        for &file in &files {
            for at in 0..101 {
                diagnostics.push(found(file, at, false));
            }
        }
        let report = diagnostics.sorted();
        let counts: Vec<_> = report.iter().filter_map(more).collect();
        assert_eq!(
            counts,
            [
                vec![(100, 1, 0, None); 10],
                vec![(MAX_PROBLEMS, 202, 0, Some(2))]
            ]
            .concat()
        );
        assert_eq!(crate::report::diagnostics::counts(&report), (12 * 101, 0));
    }

    #[test]
    fn compacting_holds_what_a_report_shows_and_counts_the_rest() {
        let files = sources(50);
        let mut diagnostics = Diagnostics::default();
        for &file in &files {
            for at in 0..200 {
                diagnostics.push(found(file, at, false));
            }
            diagnostics.compact();
        }
        assert!(diagnostics.len() <= COMPACT_PAST + 200);
        assert_eq!(diagnostics.error_count(), 50 * 200);
        assert!(diagnostics.has_errors());
        // Each file's errors are still known, those left out among them.
        let by_file = diagnostics.errors_by_file();
        assert_eq!(by_file.len(), 50);
        assert!(by_file.values().all(|&errors| errors == 200), "{by_file:?}");
    }

    /// Distinct problems (file, place, whether a warning) in any order, each with the
    /// collection (of two) that finds it.
    fn distinct_problems() -> impl Strategy<Value = Vec<((usize, usize, bool), bool)>> {
        proptest::collection::btree_set((0usize..40, 0usize..400, any::<bool>()), 0..12_000)
            .prop_flat_map(|set| {
                let problems: Vec<_> = set.into_iter().collect();
                let finders = proptest::collection::vec(any::<bool>(), problems.len());
                (Just(problems), finders)
            })
            .prop_map(|(problems, finders)| problems.into_iter().zip(finders).collect::<Vec<_>>())
            .prop_shuffle()
    }

    proptest! {
        // The report of diagnostics compacted as they come, by two finders whose collections
        // are merged, is the report of them all, whatever their order.
        #[test]
        fn a_compacted_collection_reports_what_the_whole_one_does(found_at in distinct_problems()) {
            let files = sources(40);
            let mut whole = Diagnostics::default();
            let mut finders = [Diagnostics::default(), Diagnostics::default()];
            for &((file, at, warning), finder) in &found_at {
                whole.push(found(files[file], at, warning));
                let collection = &mut finders[usize::from(finder)];
                collection.push(found(files[file], at, warning));
                collection.compact();
            }
            let [mut compacted, other] = finders;
            compacted.extend(other);
            prop_assert_eq!(compacted.error_count(), whole.error_count());
            prop_assert_eq!(compacted.sorted(), whole.sorted());
        }
    }
}
