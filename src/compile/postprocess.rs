//! Post-processing: the manifest's ordered normalisation rules applied to a rendered prompt.

use std::cell::Cell;

use regex_automata::meta::Regex;
use regex_automata::util::iter::Searcher;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{Anchored, Input, Match, MatchError, hybrid};

use crate::built::{
    LazyRule, postprocess_lazy_dfa, postprocess_regexes, rule_size, search_fuel, stepped_fuel,
};
use crate::compile::guarded::GuardedText;
use crate::model::{Guard, PostprocessRule};

/// The manifest's rules (or the default set), ready to apply: regexes compiled once.
#[derive(Debug)]
pub struct Postprocessor {
    /// Each with its place among the rules.
    steps: Vec<(usize, Step)>,
}

/// Why post-processing stopped, with the place of the rule among the manifest's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The rule made the prompt longer than a compile's text may be (`limits.compile_bytes`).
    /// A rule whose replacement holds what it matches grows the text each time it applies; a
    /// few of them in a row, exponentially.
    Overgrown { rule: usize },
    /// The rule's regex could only be searched state by state over this prompt (see
    /// [`search_fuel`]), or the groups its replacement writes found so in its matches
    /// (`groups`), for more fuel than the compile had left. `per_kib` is what a KiB of text
    /// costs so.
    OutOfFuel {
        rule: usize,
        per_kib: u64,
        groups: bool,
    },
    /// The process's processor time ran out before the rule (see `crate::deadline`): rules
    /// by the thousand, each reading the whole prompt, took it all.
    TimeSpent { rule: usize, spent_ms: u64 },
    /// The rule is past the first [`FREE_PASSES`], whose passes over the prompt cost fuel,
    /// and less was left than its pass costs.
    PassOutOfFuel { rule: usize },
}

/// How many post-processing rules read the prompt for no fuel: a workspace's own few (the
/// default set is six). Each one past them costs fuel for its pass, 1 per 16 bytes of the
/// prompt, so that thousands of rules over a prompt of megabytes stop at the rule that runs
/// out, not at the process's time limit.
pub const FREE_PASSES: usize = 32;

#[derive(Debug)]
enum Step {
    Rule(PostprocessRule),
    /// `drop_empty_sections` (with a separator that is not blank), `collapse_blank_lines` and
    /// `trim`, one after the other (the default set): made in one pass over the lines, which
    /// copies the prompt once instead of three times.
    Tidy {
        separator: String,
        max: usize,
        whitespace_is_blank: bool,
        final_newline: bool,
    },
    Regex {
        regex: Regex,
        /// The same pattern as a lazy DFA, which finds its matches in linear time or gives up.
        lazy: Option<std::sync::Arc<LazyRule>>,
        replace: String,
        guard: Option<Guard>,
    },
}

impl Postprocessor {
    /// `None` is the default set. Regex rules whose pattern does not compile were reported by
    /// validation and are left out.
    pub fn new(rules: Option<&[PostprocessRule]>) -> Self {
        let rules = match rules {
            Some(rules) => rules.to_vec(),
            None => PostprocessRule::default_set(),
        };
        let patterns: Vec<&str> = rules
            .iter()
            .filter_map(|rule| match rule {
                PostprocessRule::Regex { pattern, .. } => Some(pattern.as_str()),
                _ => None,
            })
            .collect();
        let mut built = postprocess_regexes(patterns).into_iter();
        let steps = rules
            .iter()
            .enumerate()
            .filter_map(|(index, rule)| match rule {
                PostprocessRule::Regex {
                    pattern,
                    replace,
                    guard,
                } => built.next()?.ok().map(|regex| {
                    let step = Step::Regex {
                        regex,
                        lazy: postprocess_lazy_dfa(pattern),
                        replace: replace.clone(),
                        guard: guard.clone(),
                    };
                    (index, step)
                }),
                other => Some((index, Step::Rule(other.clone()))),
            })
            .collect();
        Self {
            steps: fuse_tidy(steps),
        }
    }

    /// Applies the rules in order; none may make the text longer than `limit` bytes. A regex
    /// rule that must be searched state by state pays for it from `fuel` (what the compile
    /// has left), before it searches.
    pub fn apply(&self, text: &str, limit: u64, fuel: u64) -> Result<String, Stopped> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let fuel = Fuel::new(fuel);
        // A rule that changes the text makes a new one; the rendered text is not copied.
        let mut text = std::borrow::Cow::Borrowed(text);
        for (position, (index, step)) in self.steps.iter().enumerate() {
            let rule = *index;
            if let Some(spent_ms) = crate::deadline::passed() {
                return Err(Stopped::TimeSpent { rule, spent_ms });
            }
            if position >= FREE_PASSES {
                fuel.pay(text.len() as u64 / 16 + 1)
                    .map_err(|_| Stopped::PassOutOfFuel { rule })?;
            }
            // `None`: the rule leaves the text as it is (most regex rules, in most prompts),
            // and it is not copied.
            let next = match step {
                Step::Rule(PostprocessRule::TrimTrailingWhitespace) => {
                    Some(trim_trailing_whitespace(&text))
                }
                Step::Rule(PostprocessRule::CollapseBlankLines {
                    max,
                    whitespace_is_blank,
                }) => has_long_blank_run(&text, *max, *whitespace_is_blank)
                    .then(|| collapse_blank_lines(&text, *max, *whitespace_is_blank)),
                Step::Rule(PostprocessRule::DropEmptySections { separator }) => {
                    Some(drop_empty_sections(&text, separator))
                }
                Step::Rule(PostprocessRule::Trim { final_newline }) => {
                    Some(trim(&text, *final_newline))
                }
                Step::Rule(PostprocessRule::SeparatorSpacing { separator, guard }) => {
                    Some(separator_spacing(&text, separator, guard.as_ref()))
                }
                Step::Rule(PostprocessRule::DropEmptyHeadings { guard }) => {
                    Some(drop_empty_headings(&text, guard.as_ref()))
                }
                // Compiled into `Step::Regex` by `new`.
                Step::Rule(PostprocessRule::Regex { .. }) => continue,
                Step::Tidy {
                    separator,
                    max,
                    whitespace_is_blank,
                    final_newline,
                } => {
                    let tidy = tidy(&text, separator, *max, *whitespace_is_blank, *final_newline);
                    // Only `trim` can grow a text (by its final newline); a text over the
                    // limit is taken through the three rules apart, for the one to blame.
                    if tidy.len() > limit {
                        return Err(Stopped::Overgrown {
                            rule: overgrown_in_tidy(
                                &text,
                                (separator, *max, *whitespace_is_blank),
                                limit,
                                rule,
                            ),
                        });
                    }
                    Some(tidy)
                }
                Step::Regex {
                    regex,
                    lazy,
                    replace,
                    guard,
                } => {
                    let rule_regex = RuleRegex {
                        regex,
                        lazy: lazy.as_deref(),
                    };
                    let stopped = |reason| match reason {
                        Reason::Overgrown => Stopped::Overgrown { rule },
                        Reason::OutOfFuel | Reason::OutOfFuelForGroups => Stopped::OutOfFuel {
                            rule,
                            per_kib: search_fuel(1024, rule_size(regex)),
                            groups: matches!(reason, Reason::OutOfFuelForGroups),
                        },
                    };
                    replace_guarded(&text, rule_regex, replace, guard.as_ref(), limit, &fuel)
                        .map_err(stopped)?
                }
            };
            if let Some(next) = next {
                text = std::borrow::Cow::Owned(next);
            }
            if text.len() > limit {
                return Err(Stopped::Overgrown { rule });
            }
        }
        Ok(text.into_owned())
    }
}

/// The steps with each run of `drop_empty_sections` (a separator that is not blank),
/// `collapse_blank_lines` and `trim` made one [`Step::Tidy`], placed as the first of the three.
fn fuse_tidy(steps: Vec<(usize, Step)>) -> Vec<(usize, Step)> {
    let mut fused: Vec<(usize, Step)> = Vec::with_capacity(steps.len());
    for (index, step) in steps {
        fused.push((index, step));
        let at = fused.len().saturating_sub(3);
        let tidy = match &fused[at..] {
            [
                (first, Step::Rule(PostprocessRule::DropEmptySections { separator })),
                (
                    second,
                    Step::Rule(PostprocessRule::CollapseBlankLines {
                        max,
                        whitespace_is_blank,
                    }),
                ),
                (third, Step::Rule(PostprocessRule::Trim { final_newline })),
            ] if !separator.trim().is_empty() && *second == first + 1 && *third == first + 2 => {
                Some((
                    *first,
                    Step::Tidy {
                        separator: separator.clone(),
                        max: *max,
                        whitespace_is_blank: *whitespace_is_blank,
                        final_newline: *final_newline,
                    },
                ))
            }
            _ => None,
        };
        if let Some(tidy) = tidy {
            fused.truncate(at);
            fused.push(tidy);
        }
    }
    fused
}

/// `drop_empty_sections`, `collapse_blank_lines` and `trim` in one pass: each line the first
/// keeps goes straight to the second, whose lines are joined once, then trimmed in place.
/// The first two rules' handling of a final newline makes no difference once the text is
/// trimmed.
fn tidy(
    text: &str,
    separator: &str,
    max: usize,
    whitespace_is_blank: bool,
    final_newline: bool,
) -> String {
    let mut collapse = Collapse::new(text, max, whitespace_is_blank);
    keep_nonempty_sections(text, separator, |line, blank| {
        collapse.push_known(line, blank)
    });
    let mut joined = collapse.finish();
    // `trim`, without copying the text again.
    let end = joined.trim_end().len();
    joined.truncate(end);
    let start = joined.len() - joined.trim_start().len();
    joined.drain(..start);
    if final_newline && !joined.is_empty() {
        joined.push('\n');
    }
    joined
}

/// The rule of a `Step::Tidy` (the first at `first`) after which the text is longer than
/// `limit`, as the three rules applied apart find it.
fn overgrown_in_tidy(
    text: &str,
    (separator, max, whitespace_is_blank): (&str, usize, bool),
    limit: usize,
    first: usize,
) -> usize {
    let dropped = drop_empty_sections(text, separator);
    if dropped.len() > limit {
        return first;
    }
    if collapse_blank_lines(&dropped, max, whitespace_is_blank).len() > limit {
        return first + 1;
    }
    first + 2
}

/// `collapse_blank_lines` fed one line at a time.
struct Collapse<'a> {
    out: Lines<'a>,
    /// The blank lines since the last line that is not.
    run: Vec<&'a str>,
    max: usize,
    whitespace_is_blank: bool,
}

impl<'a> Collapse<'a> {
    /// For lines of `source`.
    fn new(source: &'a str, max: usize, whitespace_is_blank: bool) -> Self {
        Self {
            out: Lines::new(source),
            run: Vec::new(),
            max,
            whitespace_is_blank,
        }
    }

    fn push(&mut self, line: &'a str) {
        self.push_known(line, Blank(self.whitespace_is_blank && is_blank(line)));
    }

    /// `push`, for a line known to be `blank` or not.
    fn push_known(&mut self, line: &'a str, Blank(blank): Blank) {
        let blank = if self.whitespace_is_blank {
            blank
        } else {
            line.is_empty()
        };
        if blank {
            self.run.push(line);
        } else {
            self.flush();
            self.out.keep(line);
        }
    }

    fn flush(&mut self) {
        if self.run.len() > self.max {
            self.run.clear();
            (0..self.max).for_each(|_| self.out.push(""));
        } else {
            self.run.drain(..).for_each(|line| self.out.keep(line));
        }
    }

    fn finish(mut self) -> String {
        self.flush();
        self.out.finish()
    }
}

/// The fuel post-processing may spend; paid from the search of a rule's matches and from
/// the expansion of each, both at once.
struct Fuel {
    left: Cell<u64>,
}

impl Fuel {
    fn new(left: u64) -> Self {
        Self {
            left: Cell::new(left),
        }
    }

    fn pay(&self, cost: u64) -> Result<(), Reason> {
        let left = self.left.get();
        if cost > left {
            return Err(Reason::OutOfFuel);
        }
        self.left.set(left - cost);
        Ok(())
    }
}

/// Why a regex rule stopped.
enum Reason {
    Overgrown,
    OutOfFuel,
    /// Finding the groups the replacement writes, in the matches.
    OutOfFuelForGroups,
}

/// A regex rule's pattern, as the engines that search it.
#[derive(Clone, Copy)]
struct RuleRegex<'a> {
    regex: &'a Regex,
    lazy: Option<&'a LazyRule>,
}

/// The text's lines, as `text.split('\n')` gives them (the part after a final newline is an
/// empty line), found with memchr's vectorised search: prompts have hundreds of short lines.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', text.as_bytes())
        .map(Some)
        .chain([None])
        .map(move |newline| {
            let end = newline.unwrap_or(text.len());
            let line = text.get(start..end).unwrap_or_default();
            start = end + 1;
            line
        })
}

fn trim_trailing_whitespace(text: &str) -> String {
    lines(text)
        .map(|line| line.trim_end_matches([' ', '\t', '\r']))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_blank(line: &str) -> bool {
    trimmed(line).is_empty()
}

/// `line.trim()`, with ASCII whitespace (most of what surrounds a line) stripped byte by byte:
/// only a line with a character beyond ASCII at either end is left to `str::trim`.
fn trimmed(line: &str) -> &str {
    let bytes = line.as_bytes();
    let space = |byte: &u8| matches!(byte, b'\t'..=b'\r' | b' ');
    let start = bytes
        .iter()
        .position(|byte| !space(byte))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|byte| !space(byte))
        .map_or(start, |last| last + 1);
    let ascii_ends = bytes.get(start).is_none_or(u8::is_ascii)
        && bytes.get(end.wrapping_sub(1)).is_none_or(u8::is_ascii);
    match line.get(start..end) {
        Some(inner) if ascii_ends => inner,
        _ => line.trim(),
    }
}

/// Whether `text` has a run of more than `max` blank lines, without which
/// `collapse_blank_lines` would leave it as it is. Looking is cheaper than collapsing, which
/// copies every line kept.
fn has_long_blank_run(text: &str, max: usize, whitespace_is_blank: bool) -> bool {
    let mut run = 0;
    for line in lines(text) {
        let blank = if whitespace_is_blank {
            is_blank(line)
        } else {
            line.is_empty()
        };
        if !blank {
            run = 0;
        } else if run == max {
            return true;
        } else {
            run += 1;
        }
    }
    false
}

/// Runs of more than `max` blank lines become `max` empty lines; a shorter run is left as it
/// is, so a whitespace-only line between two lines of text keeps its spaces.
fn collapse_blank_lines(text: &str, max: usize, whitespace_is_blank: bool) -> String {
    let mut collapse = Collapse::new(text, max, whitespace_is_blank);
    lines(text).for_each(|line| collapse.push(line));
    // A blank final line is the text's closing newline, not a line of its own.
    let mut joined = collapse.finish();
    if text.ends_with('\n') && !joined.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

/// Lines of `source` joined with newlines as they come, without a list of them first. Lines
/// kept one after another in the source are copied as one piece.
struct Lines<'a> {
    source: &'a str,
    text: String,
    first: bool,
    /// Source lines kept since the last copy: a byte range of `source`.
    pending: Option<(usize, usize)>,
}

impl<'a> Lines<'a> {
    fn new(source: &'a str) -> Self {
        Self {
            source,
            text: String::with_capacity(source.len()),
            first: true,
            pending: None,
        }
    }

    /// Keeps a line of the source (a slice of it, as `split` gives).
    fn keep(&mut self, line: &'a str) {
        let start = (line.as_ptr() as usize).saturating_sub(self.source.as_ptr() as usize);
        let end = start + line.len();
        match &mut self.pending {
            // The next line of the source: the piece grows over the newline between them.
            Some((_, pending_end)) if *pending_end + 1 == start => *pending_end = end,
            _ => {
                self.flush();
                self.pending = Some((start, end));
            }
        }
    }

    /// Adds a line of its own.
    fn push(&mut self, line: &str) {
        self.flush();
        self.append(line);
    }

    fn flush(&mut self) {
        if let Some((start, end)) = self.pending.take() {
            let piece = self.source.get(start..end).unwrap_or_default();
            self.append(piece);
        }
    }

    fn append(&mut self, piece: &str) {
        if !self.first {
            self.text.push('\n');
        }
        self.first = false;
        self.text.push_str(piece);
    }

    fn finish(mut self) -> String {
        self.flush();
        self.text
    }
}

/// Removes a separator line when nothing but blank lines follows it before the next separator
/// or the end, and a separator at the very start.
fn drop_empty_sections(text: &str, separator: &str) -> String {
    let is_separator = |line: &str| trimmed(line) == separator;
    // A separator that is itself blank is decided by the lines after the blank ones, which
    // may be separators too: that needs to look ahead past them.
    if separator.trim().is_empty() {
        return drop_blank_separators(text, is_separator);
    }
    let mut out = Lines::new(text);
    keep_nonempty_sections(text, separator, |line, _| out.keep(line));
    out.finish()
}

/// The lines `drop_empty_sections` keeps, for a separator that is not blank, handed to `keep`
/// in order.
fn keep_nonempty_sections<'a>(
    text: &'a str,
    separator: &str,
    mut keep: impl FnMut(&'a str, Blank),
) {
    // A separator after content, held with the blank lines that follow it until the next line
    // that is not blank says whether its section is empty.
    let mut held: Option<&str> = None;
    let mut blanks: Vec<&str> = Vec::new();
    let mut seen_content = false;
    // A line that starts with a printable ASCII character other than the separator's first
    // holds content, whatever follows: most lines of a prompt. Such lines one after another
    // are handed on as one piece of the text, with the newlines between them.
    let bytes = text.as_bytes();
    let separator_first = separator.as_bytes().first().copied();
    let plain = |at: usize| {
        bytes
            .get(at)
            .is_some_and(|&byte| byte.is_ascii_graphic() && Some(byte) != separator_first)
    };
    let end_of_line = |at: usize| {
        memchr::memchr(b'\n', bytes.get(at..).unwrap_or_default()).map_or(bytes.len(), |n| at + n)
    };
    // The lines as `lines` gives them: after a final newline, an empty last line.
    let mut next_line = Some(0);
    while let Some(start) = next_line {
        let mut end = end_of_line(start);
        let content = plain(start);
        if content {
            while end < bytes.len() && plain(end + 1) {
                end = end_of_line(end + 1);
            }
        }
        next_line = (end < bytes.len()).then_some(end + 1);
        let Some(line) = text.get(start..end) else {
            continue;
        };
        // Plain lines are content without a look at what they hold.
        let inner = if content { None } else { Some(trimmed(line)) };
        if inner == Some(separator) {
            // The held separator's section is empty: it goes, its blank lines stay.
            blanks.drain(..).for_each(|line| keep(line, Blank(true)));
            held = seen_content.then_some(line);
        } else if inner == Some("") {
            if held.is_some() {
                blanks.push(line);
            } else {
                keep(line, Blank(true));
            }
        } else {
            if let Some(separator) = held.take() {
                keep(separator, Blank(false));
            }
            blanks.drain(..).for_each(|line| keep(line, Blank(true)));
            keep(line, Blank(false));
            seen_content = true;
        }
    }
    blanks.into_iter().for_each(|line| keep(line, Blank(true)));
}

/// Whether a line is blank (whitespace only), found once by whoever reads the line first.
#[derive(Clone, Copy)]
struct Blank(bool);

/// `drop_empty_sections` for a separator that is blank itself.
fn drop_blank_separators(text: &str, is_separator: impl Fn(&str) -> bool) -> String {
    let lines: Vec<&str> = lines(text).collect();
    // By line: whether the next line that is not blank is a separator, or there is none.
    let mut empty_after = vec![true; lines.len()];
    let mut next_is_separator = true;
    for (index, line) in lines.iter().enumerate().rev() {
        empty_after[index] = next_is_separator;
        if !is_blank(line) {
            next_is_separator = is_separator(line);
        }
    }
    let mut out = Lines::new(text);
    let mut seen_content = false;
    for (line, empty_after) in lines.iter().zip(empty_after) {
        if is_separator(line) {
            if empty_after || !seen_content {
                continue;
            }
        } else if !is_blank(line) {
            seen_content = true;
        }
        out.keep(line);
    }
    out.finish()
}

/// The whole text without surrounding whitespace, ending in exactly one newline.
fn trim(text: &str, final_newline: bool) -> String {
    let trimmed = text.trim();
    if trimmed.is_empty() || !final_newline {
        trimmed.to_string()
    } else {
        // Sized once: `format!` starts from nothing and copies the whole prompt again to add
        // the newline.
        let mut text = String::with_capacity(trimmed.len() + 1);
        text.push_str(trimmed);
        text.push('\n');
        text
    }
}

/// The text's lines, each with the byte offset it starts at (for a guard's window).
fn lines_with_starts(text: &str) -> Vec<(usize, &str)> {
    let mut at = 0;
    lines(text)
        .map(|line| {
            let start = at;
            at += line.len() + 1;
            (start, line)
        })
        .collect()
}

/// Whether the guard, if there is one, protects a whole line, as it would a match of it.
/// Lines are asked about in order.
fn line_guarded(guarded: &mut Option<GuardedText<'_>>, (start, line): (usize, &str)) -> bool {
    guarded
        .as_mut()
        .is_some_and(|guarded| guarded.keeps(start, start + line.len()))
}

/// One blank line on each side of every separator line, unless a guard marker is near it.
fn separator_spacing(text: &str, separator: &str, guard: Option<&Guard>) -> String {
    let mut guarded = guard.map(|guard| GuardedText::new(text, guard));
    let lines = lines_with_starts(text);
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    // Right after a spaced separator: its blank lines are replaced by exactly one.
    let mut after_separator = false;
    for &(start, line) in &lines {
        if trimmed(line) == separator && !line_guarded(&mut guarded, (start, line)) {
            while out.last().is_some_and(|l| is_blank(l)) {
                out.pop();
            }
            if !out.is_empty() {
                out.push("");
            }
            out.push(line);
            after_separator = true;
            continue;
        }
        if after_separator {
            if is_blank(line) {
                continue;
            }
            out.push("");
            after_separator = false;
        }
        out.push(line);
    }
    // A blank final line is the text's closing newline, not a line of its own.
    let mut joined = out.join("\n");
    if text.ends_with('\n') && !joined.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

/// Removes lines that are a Markdown heading marker with no title (`#` to `######`, then
/// nothing but whitespace), unless a guard marker is near them (a lone `#` in a shell example
/// is a comment, not a heading).
fn drop_empty_headings(text: &str, guard: Option<&Guard>) -> String {
    let empty_heading = |line: &str| {
        let hashes = line.trim_start().len() - line.trim_start().trim_start_matches('#').len();
        (1..=6).contains(&hashes) && line.trim().trim_start_matches('#').trim().is_empty()
    };
    let mut guarded = guard.map(|guard| GuardedText::new(text, guard));
    lines_with_starts(text)
        .into_iter()
        .filter(|&(start, line)| !empty_heading(line) || line_guarded(&mut guarded, (start, line)))
        .map(|(_, line)| line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each match of the rule's regex replaced (`$1`, `${name}` and `$$` expanded as the regex
/// crate expands them), except a match the guard keeps. Stops once the text grows past `limit`
/// bytes: it is not built further.
///
/// The matches are found by the lazy DFA, in time proportional to the text, or else paid for
/// from `fuel` before the search that takes longer:
/// - a search of a match reads on as long as a longer match may follow (`a*b|a` over a text of
///   `a`s reads to its end for each `a`): what the searches read past four times the text is
///   paid, one unit per 16 bytes;
/// - the states a search builds are paid by their size; a search that fills the lazy DFA's
///   cache of states builds them at the pace of stepping through the pattern, and the rest of
///   the text is paid as such a search (see [`stepped_fuel`]);
/// - a search the lazy DFA gives up or stops on is made by the regex crate's engine, which
///   steps through the pattern's states for each byte: it is paid for the rest of the text,
///   before it runs (so is every search when there is no lazy DFA);
/// - finding the groups of a match steps through the match so, paid for the match.
fn replace_guarded(
    text: &str,
    regex: RuleRegex<'_>,
    replace: &str,
    guard: Option<&Guard>,
    limit: usize,
    fuel: &Fuel,
) -> Result<Option<String>, Reason> {
    let size = rule_size(regex.regex);
    if let Some(lazy) = regex.lazy {
        // Fresh caches for each rule of each compile: what a search costs, and whether the
        // lazy DFA gives up, then depend on the prompt alone, never on what other compiles
        // left in a shared cache.
        let mut matcher = LazyMatcher::new(lazy, text.len());
        let mut searcher = Searcher::new(Input::new(text));
        let free = (text.len() as u64).saturating_mul(4).saturating_add(4096);
        let mut read: u64 = 0;
        let mut search = |input: &Input<'_>| -> Result<Option<Match>, Reason> {
            let before = matcher.progress();
            let found = matcher.search(input);
            let after = matcher.progress();
            let rest = text.len().saturating_sub(input.start());
            let Ok(found) = found else {
                // The lazy DFA gave up on this search, or met a Unicode word boundary next to
                // non-ASCII text: this one search is made by the regex crate's engine, paid
                // for the rest of the text; the next is the lazy DFA's again.
                fuel.pay(search_fuel(rest, size))?;
                return Ok(regex.regex.search(input));
            };
            // Each state the search built took time in proportion to what it holds: a pattern
            // of hundreds of branches built states of thousands of pattern states, a second
            // for each rule, without filling the cache.
            let built = after.2.saturating_sub(before.2) as u64;
            fuel.pay(built.saturating_mul(FUEL_PER_STATE_BYTE))?;
            if after.1 != before.1 {
                // The cache filled: its states were built state by state.
                fuel.pay(stepped_fuel(rest, size))?;
                read = read.saturating_add(rest as u64);
            } else {
                let more = after.0.saturating_sub(before.0) as u64;
                let unpaid = read.saturating_add(more).saturating_sub(free.max(read)) / 16;
                read = read.saturating_add(more);
                fuel.pay(unpaid)?;
            }
            Ok(found)
        };
        let matches = std::iter::from_fn(|| next_match(&mut searcher, &mut search));
        return replace_matches(text, matches, regex.regex, replace, guard, limit, fuel);
    }
    // Each search may read the rest of the text, state by state.
    let mut searcher = Searcher::new(Input::new(text));
    let mut search = |input: &Input<'_>| -> Result<Option<Match>, Reason> {
        fuel.pay(search_fuel(text.len().saturating_sub(input.start()), size))?;
        Ok(regex.regex.search(input))
    };
    let matches = std::iter::from_fn(|| next_match(&mut searcher, &mut search));
    replace_matches(text, matches, regex.regex, replace, guard, limit, fuel)
}

/// A rule's lazy DFA with the caches of one rule's application to one prompt.
///
/// The regex crate finds a match's end with a forward search, then its start with a search
/// backwards from the end. For most rules, which start with a literal, the start is known
/// sooner: every match starts where the literal does, so a match is the first place the
/// literal occurs where a search anchored there matches. That search is forward only: the
/// backward automaton (of `\w`, thousands of states over UTF-8) is neither built nor paid
/// for, which was most of what a rule cost a compile. Where anchored searches that match
/// nothing read more than the prompt's length (`a\w*b` over a long word of `a`s reads the
/// rest of the word from each `a`), the rest of the prompt is searched the regex crate's way,
/// which reads it once.
struct LazyMatcher<'r> {
    lazy: &'r LazyRule,
    /// Where matches may start, for a pattern that matches no empty text; `None` otherwise.
    starts: Option<&'r Prefilter>,
    /// The anchored searches' cache, made for the first.
    forward: Option<hybrid::dfa::Cache>,
    /// The forward-then-backward searches' caches, made for the first.
    both: Option<hybrid::regex::Cache>,
    /// What anchored searches that matched nothing may read before the rest of the prompt
    /// is searched the regex crate's way.
    unmatched_allowance: usize,
}

impl<'r> LazyMatcher<'r> {
    fn new(lazy: &'r LazyRule, text_len: usize) -> Self {
        Self {
            lazy,
            starts: lazy.literal_starts(),
            forward: None,
            both: None,
            unmatched_allowance: text_len.saturating_add(4096),
        }
    }

    /// The leftmost-first match in `input`'s span, as `hybrid::regex::Regex::try_search`
    /// finds it.
    fn search(&mut self, input: &Input<'_>) -> Result<Option<Match>, MatchError> {
        let mut input = input.clone();
        if let Some(starts) = self.starts {
            let dfa = self.lazy.forward();
            while self.unmatched_allowance > 0 {
                let Some(start) = starts.find(input.haystack(), input.get_span()) else {
                    return Ok(None);
                };
                // Made for the first place the literal occurs: a rule whose literal a prompt
                // does not hold (most rules, in most prompts) builds no cache at all.
                let lazy = self.lazy;
                let cache = self.forward.get_or_insert_with(|| lazy.forward_cache());
                let at = input
                    .clone()
                    .span(start.start..input.end())
                    .anchored(Anchored::Yes);
                let before = cache.search_total_len();
                if let Some(end) = dfa.try_search_fwd(cache, &at)? {
                    return Ok(Some(Match::must(0, start.start..end.offset())));
                }
                let read = cache.search_total_len().saturating_sub(before);
                self.unmatched_allowance = self.unmatched_allowance.saturating_sub(read.max(1));
                input.set_start(start.start + 1);
            }
        }
        // Without its backward automaton, the rule is searched as when the lazy DFA gives up.
        if self.both.is_none() {
            self.both = self.lazy.both_cache();
        }
        let (Some(both), Some(cache)) = (self.lazy.both(), self.both.as_mut()) else {
            return Err(MatchError::gave_up(input.start()));
        };
        both.try_search(cache, &input)
    }

    /// What the caches have read, how often they filled, and the memory their states take.
    fn progress(&mut self) -> (usize, usize, usize) {
        let mut progress = (0, 0, 0);
        let mut add = |cache: &hybrid::dfa::Cache| {
            progress.0 += cache.search_total_len();
            progress.1 += cache.clear_count();
            progress.2 += cache.memory_usage();
        };
        if let Some(forward) = &self.forward {
            add(forward);
        }
        if let Some(both) = &mut self.both {
            let (forward, reverse) = both.as_parts_mut();
            add(forward);
            add(reverse);
        }
        progress
    }
}

/// Fuel per byte of states the lazy DFA builds: 2 MB of them took about a second.
const FUEL_PER_STATE_BYTE: u64 = 2;

/// The next match `search` finds after the last, as the regex crate's iterators find it
/// (an empty match is not found again, nor inside a character); `None` at the end.
fn next_match(
    searcher: &mut Searcher<'_>,
    search: &mut impl FnMut(&Input<'_>) -> Result<Option<Match>, Reason>,
) -> Option<Result<Match, Reason>> {
    // The searcher takes the regex crate's error; the reason travels beside it.
    let mut stopped = Reason::OutOfFuel;
    let next = searcher.try_advance(|input| {
        search(input).map_err(|reason| {
            stopped = reason;
            MatchError::quit(0, 0)
        })
    });
    next.map_or(Some(Err(stopped)), |found| found.map(Ok))
}

/// The text with each of `matches` replaced, as [`replace_guarded`] describes.
fn replace_matches(
    text: &str,
    matches: impl Iterator<Item = Result<Match, Reason>>,
    regex: &Regex,
    replace: &str,
    guard: Option<&Guard>,
    limit: usize,
    fuel: &Fuel,
) -> Result<Option<String>, Reason> {
    // No match: the text is left as it is, without a copy.
    let mut matches = matches.peekable();
    if matches.peek().is_none() {
        return Ok(None);
    }
    let mut guarded = guard.map(|guard| GuardedText::new(text, guard));
    let mut keep = |start: usize, end: usize| {
        guarded
            .as_mut()
            .is_some_and(|guarded| guarded.keeps(start, end))
    };
    // Nothing to expand: the matches alone, without their groups. A replacement that
    // writes only the whole match (`$0`, `[${0}]`) needs no search for groups either.
    let expands = replace.contains('$');
    let groups = expands && writes_groups(replace);
    let mut captures = regex.create_captures();
    let size = rule_size(regex);
    let mut out = String::with_capacity(text.len().min(limit));
    let mut last = 0;
    for found in matches {
        let found = found?;
        out.push_str(&text[last..found.start()]);
        if keep(found.start(), found.end()) {
            out.push_str(&text[found.range()]);
        } else if !expands {
            out.push_str(replace);
        } else if !groups {
            if !expand_whole(text, found.range(), replace, limit, &mut out) {
                return Err(Reason::Overgrown);
            }
        } else {
            // The groups of this match: the engine that finds them steps through the pattern
            // for each byte of it, paid for as a search of the match.
            fuel.pay(stepped_fuel(found.len(), size))
                .map_err(|_| Reason::OutOfFuelForGroups)?;
            let input = Input::new(text).span(found.range()).anchored(Anchored::Yes);
            regex.search_captures(&input, &mut captures);
            if !captures.is_match() {
                // The span is a match of the same pattern, found by a leftmost-first search:
                // the anchored search within it finds it again. Left as it is otherwise.
                out.push_str(&text[found.range()]);
            } else if !expand_within(text, &captures, replace, limit, &mut out) {
                return Err(Reason::Overgrown);
            }
        }
        last = found.end();
        if out.len() > limit {
            return Err(Reason::Overgrown);
        }
    }
    out.push_str(&text[last..]);
    if out.len() > limit {
        return Err(Reason::Overgrown);
    }
    Ok(Some(out))
}

/// Whether `replace` writes a group other than the whole match (`$1`, `${name}`).
fn writes_groups(replace: &str) -> bool {
    let (numbered, named) = (Cell::new(false), Cell::new(false));
    regex_automata::util::interpolate::string(
        replace,
        |index, _| numbered.set(numbered.get() || index != 0),
        |_| {
            named.set(true);
            None
        },
        &mut String::new(),
    );
    numbered.get() || named.get()
}

/// [`expand_within`] for a replacement that writes only the whole match, at `range`: no
/// search for groups.
fn expand_whole(
    text: &str,
    range: std::ops::Range<usize>,
    replace: &str,
    limit: usize,
    out: &mut String,
) -> bool {
    expand_bounded(text, replace, limit, out, |_| Some(range.clone()), |_| None)
}

/// Appends `replace` to `out` with its groups expanded, as `Captures::interpolate_string_into`
/// does, but copies no group that would take `out` past `limit` bytes: a replacement of a
/// thousand `$0` over a long match would otherwise build gigabytes before any check. False
/// when the expansion did not fit.
fn expand_within(
    text: &str,
    captures: &regex_automata::util::captures::Captures,
    replace: &str,
    limit: usize,
    out: &mut String,
) -> bool {
    expand_bounded(
        text,
        replace,
        limit,
        out,
        |index| captures.get_group(index).map(|span| span.range()),
        |name| captures.group_info().to_index(captures.pattern()?, name),
    )
}

/// `replace` expanded into `out`, each group's text (`group`, by index; `named`, an index by
/// name) copied from `text` while `out` stays within `limit` bytes; false once one did not.
fn expand_bounded(
    text: &str,
    replace: &str,
    limit: usize,
    out: &mut String,
    group: impl Fn(usize) -> Option<std::ops::Range<usize>>,
    named: impl Fn(&str) -> Option<usize>,
) -> bool {
    let mut over = false;
    regex_automata::util::interpolate::string(
        replace,
        |index, dst| {
            let Some(range) = group(index) else {
                return;
            };
            if over || dst.len() + range.len() > limit {
                over = true;
                return;
            }
            dst.push_str(&text[range]);
        },
        named,
        out,
    );
    !over
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::built::postprocess_regex;
    use crate::model::GuardSide;
    use crate::model::limits::DEFAULT_FUEL;

    /// Every match replaced, with no limit on the text.
    /// The text with the pattern's matches replaced, found by the lazy DFA; the full engine,
    /// with the fuel to search state by state, must agree.
    fn replaced(text: &str, pattern: &str, replace: &str, guard: Option<&Guard>) -> String {
        let regex = postprocess_regex(pattern).unwrap();
        let lazy = postprocess_lazy_dfa(pattern).unwrap();
        let fuel = Fuel::new(u64::MAX);
        let rule = RuleRegex {
            regex: &regex,
            lazy: Some(&lazy),
        };
        let found = replace_guarded(text, rule, replace, guard, usize::MAX, &fuel);
        let Ok(found) = found else {
            panic!("the lazy DFA gave up on {pattern}");
        };
        let fuel = Fuel::new(u64::MAX);
        let rule = RuleRegex {
            regex: &regex,
            lazy: None,
        };
        let full = replace_guarded(text, rule, replace, guard, usize::MAX, &fuel);
        assert!(full.as_ref().is_ok_and(|full| *full == found), "{pattern}");
        // No match leaves the text as it is.
        found.unwrap_or_else(|| text.to_string())
    }

    /// What a guard keeps, as it was first written: each span's windows walked and searched
    /// afresh. The sliding windows of `GuardedText` must agree with it.
    fn guarded(text: &str, start: usize, end: usize, guard: &Guard) -> bool {
        let before_start = match guard.within {
            0 => start,
            within => text[..start]
                .char_indices()
                .rev()
                .nth(within - 1)
                .map_or(0, |(i, _)| i),
        };
        let after_end = text[end..]
            .char_indices()
            .nth(guard.within)
            .map_or(text.len(), |(i, _)| end + i);
        let before = &text[before_start..start];
        let after = &text[end..after_end];
        let (look_before, look_after) = match guard.side {
            GuardSide::Before => (true, false),
            GuardSide::After => (false, true),
            GuardSide::Both => (true, true),
        };
        guard.markers.iter().any(|marker| {
            (look_before && before.contains(marker.as_str()))
                || (look_after && after.contains(marker.as_str()))
        })
    }

    fn guard(markers: &[&str], within: usize, side: GuardSide) -> Guard {
        Guard {
            markers: markers.iter().map(|m| m.to_string()).collect(),
            within,
            side,
        }
    }

    #[test]
    fn a_regex_rule_replaces_as_the_regex_crate_does() {
        let text = "NOTE: one\nnote: two\nNOTE: ünï\n\nλ x = y\n";
        let cases = [
            (r"(?m)^NOTE: (\w+)", "Note: $1"),
            (r"(?m)^(?<kind>\w+): (\w+)", "${kind}=$2 $$ $3"),
            (r"x*", "-"),
            (r"\b", "|"),
            (r"(?i)note", "N"),
            (r"=", "$0$0"),
            (r"nothing matches", "$1"),
        ];
        for (pattern, replace) in cases {
            let expected = regex::Regex::new(pattern)
                .unwrap()
                .replace_all(text, replace)
                .into_owned();
            assert_eq!(
                replaced(text, pattern, replace, None),
                expected,
                "{pattern} → {replace}"
            );
        }
    }

    /// A rule that starts with a literal builds no backward automaton; where searches
    /// anchored at the literal read on and on without a match, the rest of the prompt is read
    /// once, and the matches are still the regex crate's.
    #[test]
    fn a_rule_that_starts_with_a_literal_is_searched_forward_only() {
        let search_all = |pattern: &str, text: &str| {
            let lazy = postprocess_lazy_dfa(pattern).unwrap();
            let mut matcher = LazyMatcher::new(&lazy, text.len());
            let mut searcher = Searcher::new(Input::new(text));
            let mut found = Vec::new();
            while let Some(next) = searcher.try_advance(|input| matcher.search(input)).unwrap() {
                found.push(next.range());
            }
            let expected: Vec<_> = regex::Regex::new(pattern)
                .unwrap()
                .find_iter(text)
                .map(|m| m.range())
                .collect();
            assert_eq!(found, expected, "{pattern}");
            (
                matcher.both.is_some(),
                matcher.progress().0,
                lazy.built_backward(),
            )
        };
        let prompt = "NOTE: one\nnote: two\nNOTE: \u{fc}n\u{ef}\n".repeat(50);
        let (backward, _, _) = search_all(r"(?m)^NOTE: (\w+)", &prompt);
        assert!(!backward, "a literal start needs no backward search");
        // Nor is its backward automaton built, by the rule or by its searches (a pattern no
        // other test builds).
        let prompt = prompt.replace("NOTE:", "NOTE-forward-only:");
        let (_, _, built) = search_all(r"(?m)^NOTE-forward-only: (\w+)", &prompt);
        assert!(!built);
        // Where the search anchored at one place the literal occurs fails, the next is the
        // next place it starts, though the two overlap.
        let (backward, _, _) = search_all(r"(?:aa)+b", "aaab aaaab aaaaab");
        assert!(!backward);
        // Each `a` starts a search that reads the rest of the word: past the prompt's length
        // read so, the rest is searched forward and back, reading it once.
        let word = format!("{}b {}", "a".repeat(20_000), "ab ".repeat(10));
        let (backward, read, built) = search_all(r"a\w*c|ab", &word);
        assert!(backward && built);
        assert!(read < 4 * word.len(), "read {read} bytes of {}", word.len());
        // A prompt that does not hold the literal makes no cache at all.
        let lazy = postprocess_lazy_dfa(r"(?m)^NOTE: (\w+)").unwrap();
        let mut matcher = LazyMatcher::new(&lazy, 12);
        assert_eq!(matcher.search(&Input::new("nothing here")).unwrap(), None);
        assert!(matcher.forward.is_none() && matcher.both.is_none());
        // A pattern that may match empty text has no literal every match starts with.
        let (backward, _, _) = search_all(r"a*", "baab");
        assert!(backward);
        // Nor has one that starts with a class: every search needs the backward automaton,
        // which is built with the rule, before any search (a pattern no other test builds).
        let rule = postprocess_lazy_dfa(r"(?m)[ \t]+(?:\r)?$").unwrap();
        assert!(rule.built_backward());
    }

    #[test]
    fn collapses_long_runs_of_blank_lines_and_leaves_short_ones_as_they_are() {
        // A run longer than `max` becomes `max` empty lines, whatever its lines held.
        assert_eq!(collapse_blank_lines("a\n\n \n\t\nb\n", 1, true), "a\n\nb\n");
        assert_eq!(collapse_blank_lines("a\n  \n\n\nb", 2, true), "a\n\n\nb");
        assert_eq!(collapse_blank_lines("a\n  \n\n", 1, true), "a\n");
        // A run no longer than `max` is kept: a whitespace-only line keeps its spaces.
        assert_eq!(collapse_blank_lines("a\n   \nb\n", 1, true), "a\n   \nb\n");
        assert_eq!(collapse_blank_lines("a\n \n\t\nb", 2, true), "a\n \n\t\nb");
        // Unless whitespace counts as text: then only empty lines make runs.
        assert_eq!(
            collapse_blank_lines("a\n\n  \n\n\nb", 1, false),
            "a\n\n  \n\nb"
        );
        assert_eq!(collapse_blank_lines("a\n\n  \n\n\nb", 1, true), "a\n\nb");
    }

    #[test]
    fn lines_are_what_splitting_at_newlines_gives() {
        for text in ["", "\n", "a", "a\n", "\na\n\nb", "é\nü\n\n", "a\r\nb"] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.split('\n').collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn drops_separators_of_empty_sections() {
        let text = "====\n\nA\n\n====\n\n\n====\nB\n====\n\n";
        assert_eq!(drop_empty_sections(text, "===="), "\nA\n\n\n\n====\nB\n\n");
    }

    /// Every text of up to six lines, each one of `kinds`.
    fn every_text(kinds: &[&str]) -> Vec<String> {
        let mut texts = Vec::new();
        for length in 0..=6u32 {
            for mut n in 0..kinds.len().pow(length) {
                let mut lines = Vec::new();
                for _ in 0..length {
                    lines.push(kinds[n % kinds.len()]);
                    n /= kinds.len();
                }
                texts.push(lines.join("\n"));
            }
        }
        texts
    }

    /// Collapsing copies runs of kept lines as pieces; it agrees with keeping or replacing the
    /// lines one by one, on every text of up to six lines of these kinds.
    #[test]
    fn collapsing_in_pieces_agrees_with_line_by_line() {
        fn line_by_line(text: &str, max: usize, whitespace_is_blank: bool) -> String {
            let blank = |line: &str| match whitespace_is_blank {
                true => line.trim().is_empty(),
                false => line.is_empty(),
            };
            let mut out: Vec<&str> = Vec::new();
            let mut run: Vec<&str> = Vec::new();
            for line in text.split('\n') {
                if blank(line) {
                    run.push(line);
                    continue;
                }
                if run.len() > max {
                    out.extend(std::iter::repeat_n("", max));
                    run.clear();
                }
                out.append(&mut run);
                out.push(line);
            }
            if run.len() > max {
                out.extend(std::iter::repeat_n("", max));
            } else {
                out.append(&mut run);
            }
            let mut joined = out.join("\n");
            if text.ends_with('\n') && !joined.ends_with('\n') {
                joined.push('\n');
            }
            joined
        }
        for text in every_text(&["", " ", "a", "\tb "]) {
            for max in 0..=2 {
                for whitespace_is_blank in [false, true] {
                    assert_eq!(
                        collapse_blank_lines(&text, max, whitespace_is_blank),
                        line_by_line(&text, max, whitespace_is_blank),
                        "{text:?} max {max} {whitespace_is_blank}"
                    );
                }
            }
        }
    }

    /// The one-pass rule for a separator with text agrees with the look-ahead one (which any
    /// separator can use) on every text of up to six lines of these kinds.
    #[test]
    fn dropping_separators_in_one_pass_agrees_with_looking_ahead() {
        let is_separator = |line: &str| line.trim() == "====";
        // An ideographic space is blank to `trim`; `A` lines one after another are handed on
        // as one piece.
        for text in every_text(&["", "  ", "====", " ==== ", "A", "=== x", "\u{3000}"]) {
            assert_eq!(
                drop_empty_sections(&text, "===="),
                drop_blank_separators(&text, is_separator),
                "{text:?}"
            );
        }
    }

    #[test]
    fn trims_with_or_without_a_final_newline() {
        assert_eq!(trim("\n\n  a\nb  \n\n", true), "a\nb\n");
        assert_eq!(trim("\n\n  a\nb  \n\n", false), "a\nb");
        assert_eq!(trim(" \n", true), "");
    }

    #[test]
    fn separators_get_one_blank_line_on_each_side() {
        let text = "A\n====\nB\n\n\n\n====\n\n\nC\n";
        assert_eq!(
            separator_spacing(text, "====", None),
            "A\n\n====\n\nB\n\n====\n\nC\n"
        );
        // None before one that opens the text, none after one that ends it.
        assert_eq!(
            separator_spacing("====\nA\n====\n", "====", None),
            "====\n\nA\n\n====\n"
        );
        // A guarded separator (inside a fenced example here) is left as it is.
        let text = "A\n```\n====\n```\n";
        let fence = guard(&["```"], 4, GuardSide::Both);
        assert_eq!(separator_spacing(text, "====", Some(&fence)), text);
    }

    #[test]
    fn a_separator_guard_on_the_before_side_spaces_a_separator_that_opens_a_diff() {
        // The first separator opens a section that starts with a diff; the second is text the
        // diff searches for.
        let text = "A\n====\n<<<<<<< SEARCH\n====\n=======\nB\n>>>>>>> REPLACE\n";
        let before = guard(&["<<<<<<< SEARCH"], 20, GuardSide::Before);
        assert_eq!(
            separator_spacing(text, "====", Some(&before)),
            "A\n\n====\n\n<<<<<<< SEARCH\n====\n=======\nB\n>>>>>>> REPLACE\n"
        );
        // Looking on both sides, the marker after the first separator protects it too.
        let both = guard(&["<<<<<<< SEARCH"], 20, GuardSide::Both);
        assert_eq!(separator_spacing(text, "====", Some(&both)), text);
    }

    #[test]
    fn empty_headings_are_dropped_and_titled_ones_kept() {
        let text = "# Title\n## \nText\n###\n#hashtag\n####### seven\n";
        assert_eq!(
            drop_empty_headings(text, None),
            "# Title\nText\n#hashtag\n####### seven\n"
        );
        // A guard keeps a lone `#` that is a comment in a fenced example.
        let text = "## \nRun:\n```sh\n#\nls\n```\n";
        let fence = guard(&["```"], 6, GuardSide::Before);
        assert_eq!(
            drop_empty_headings(text, Some(&fence)),
            "Run:\n```sh\n#\nls\n```\n"
        );
        assert_eq!(drop_empty_headings(text, None), "Run:\n```sh\nls\n```\n");
    }

    #[test]
    fn guarded_matches_are_left_alone() {
        let regex = "foo";
        let fence = guard(&["```"], 5, GuardSide::Both);
        let text = "foo and ```foo``` and far away foo";
        assert_eq!(
            replaced(text, regex, "bar", Some(&fence)),
            "bar and ```foo``` and far away bar"
        );
    }

    #[test]
    fn a_guarded_match_is_kept_whole_where_the_others_expand_their_groups() {
        let regex = r"f(o+)";
        let fence = guard(&["```"], 5, GuardSide::Both);
        let text = "foo and ```fooo``` and far away fooo";
        assert_eq!(
            replaced(text, regex, "b${1}r $$", Some(&fence)),
            "boor $ and ```fooo``` and far away booor $"
        );
    }

    #[test]
    fn a_guard_looks_on_its_side_only() {
        let regex = "X";
        // A diff marker before the match protects it; one after does not, with `before`.
        let before = guard(&["+"], 2, GuardSide::Before);
        assert_eq!(replaced("+ X", regex, "-", Some(&before)), "+ X");
        assert_eq!(replaced("X +", regex, "-", Some(&before)), "- +");
        let after = guard(&["+"], 2, GuardSide::After);
        assert_eq!(replaced("+ X", regex, "-", Some(&after)), "+ -");
        assert_eq!(replaced("X +", regex, "-", Some(&after)), "X +");
    }

    #[test]
    fn a_guard_of_zero_characters_protects_nothing() {
        let regex = "X";
        for marker in ["a", "b"] {
            let none = guard(&[marker], 0, GuardSide::Both);
            assert_eq!(replaced("aXb", regex, "-", Some(&none)), "a-b");
        }
        let one = guard(&["a"], 1, GuardSide::Both);
        assert_eq!(replaced("aXb", regex, "-", Some(&one)), "aXb");
    }

    #[test]
    fn rules_apply_in_order() {
        let rules = vec![
            PostprocessRule::Regex {
                pattern: r"(\w+)@".into(),
                replace: "$1 at ".into(),
                guard: None,
            },
            PostprocessRule::Trim {
                final_newline: true,
            },
        ];
        assert_eq!(
            Postprocessor::new(Some(&rules))
                .apply("  me@home  ", u64::MAX, DEFAULT_FUEL)
                .unwrap(),
            "me at home\n"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(400))]

        /// Rules whose matches start with a literal are searched forward from where the
        /// literal occurs: they replace what the regex crate replaces, over text where the
        /// literal occurs often, in words, at line starts, next to characters beyond ASCII.
        #[test]
        fn rules_that_start_with_a_literal_replace_as_the_regex_crate_does(
            text in "(a|a|a|b|b| |\n|:|\u{e9}|\u{4e2d}){0,60}",
            pattern in 0usize..10,
        ) {
            let patterns = [
                r"(?m)^a: (\w+)",
                r"a\w*b",
                r"ab|a",
                r"a(b|\u{e9})+",
                r"(?i)AB?",
                r"\u{e9}[^\n]*?b",
                r"(?m)a$",
                r"\ba\b",
                r"(?:ab|ba)\s*",
                r"(?:aa)+b",
            ];
            let pattern = patterns[pattern];
            let expected = regex::Regex::new(pattern)
                .unwrap()
                .replace_all(&text, "<$0>")
                .into_owned();
            proptest::prop_assert_eq!(replaced(&text, pattern, "<$0>", None), expected);
        }

        /// Lines are trimmed as `str::trim` trims them, whatever whitespace surrounds them.
        #[test]
        fn lines_are_trimmed_as_trim_trims_them(
            line in "[ \t\r\u{b}\u{c}\u{1c}\u{85}\u{a0}\u{2003}\u{3000}a\u{e9}-]{0,12}"
        ) {
            proptest::prop_assert_eq!(trimmed(&line), line.trim());
            proptest::prop_assert_eq!(is_blank(&line), line.trim().is_empty());
        }

        /// `collapse_blank_lines` is skipped only when it would leave the text as it is, and
        /// applying the rule gives what collapsing gives.
        #[test]
        fn blank_lines_are_collapsed_only_where_a_run_is_too_long(
            picks in proptest::collection::vec(0usize..6, 0..24),
            final_line in proptest::bool::ANY,
            max in 0usize..3,
            whitespace_is_blank in proptest::bool::ANY,
        ) {
            let kinds = ["", " ", "\t", "\u{a0}", "text", "  indented"];
            let mut text = picks.iter().map(|&pick| kinds[pick]).collect::<Vec<_>>().join("\n");
            if final_line {
                text.push('\n');
            }
            let collapsed = collapse_blank_lines(&text, max, whitespace_is_blank);
            if !has_long_blank_run(&text, max, whitespace_is_blank) {
                proptest::prop_assert_eq!(&collapsed, &text);
            }
            let rule = [PostprocessRule::CollapseBlankLines { max, whitespace_is_blank }];
            let applied = Postprocessor::new(Some(&rule)).apply(&text, u64::MAX, DEFAULT_FUEL);
            proptest::prop_assert_eq!(applied, Ok(collapsed));
        }

        /// The default set made in one pass gives what its three rules give one after the
        /// other: lines that are separators (spaced or not), blank in several ways (Unicode
        /// whitespace too), or text, with or without a final newline.
        #[test]
        fn the_default_set_in_one_pass_is_its_rules_in_turn(
            picks in proptest::collection::vec(0usize..11, 0..24),
            final_line in proptest::bool::ANY,
            separator in 0usize..2,
            max in 0usize..3,
            whitespace_is_blank in proptest::bool::ANY,
            final_newline in proptest::bool::ANY,
        ) {
            let separator = ["---", "***"][separator];
            let kinds = [
                "", " ", "\t", "\u{a0}", "---", " --- ", "***", "text", "  indented",
                "\u{a0}text\u{2003}", "---x",
            ];
            let mut text = picks.iter().map(|&pick| kinds[pick]).collect::<Vec<_>>().join("\n");
            if final_line {
                text.push('\n');
            }
            let rules = vec![
                PostprocessRule::DropEmptySections { separator: separator.into() },
                PostprocessRule::CollapseBlankLines { max, whitespace_is_blank },
                PostprocessRule::Trim { final_newline },
            ];
            let fused = Postprocessor::new(Some(&rules));
            let one_step = matches!(fused.steps.as_slice(), [(0, Step::Tidy { .. })]);
            proptest::prop_assert!(one_step, "the three rules are one step");
            let in_turn = trim(
                &collapse_blank_lines(
                    &drop_empty_sections(&text, separator),
                    max,
                    whitespace_is_blank,
                ),
                final_newline,
            );
            let limit = u64::MAX;
            proptest::prop_assert_eq!(fused.apply(&text, limit, DEFAULT_FUEL), Ok(in_turn.clone()));
            // A limit the text outgrows blames the rule that outgrew it, as rule by rule.
            if !in_turn.is_empty() {
                let limit = in_turn.len() as u64 - 1;
                let apart: Vec<(usize, Step)> = rules
                    .iter()
                    .cloned()
                    .enumerate()
                    .map(|(index, rule)| (index, Step::Rule(rule)))
                    .collect();
                let apart = Postprocessor { steps: apart };
                proptest::prop_assert_eq!(
                    fused.apply(&text, limit, DEFAULT_FUEL),
                    apart.apply(&text, limit, DEFAULT_FUEL)
                );
            }
        }

        /// The sliding windows keep exactly the spans the windows walked afresh keep: text of
        /// one- to four-byte characters, markers that overlap themselves, any `within`, spans
        /// asked about in order as matches and lines are.
        #[test]
        fn a_sliding_guard_keeps_what_a_walked_window_keeps(
            text in "[ab\\n\u{e9}\u{4e2d}\u{1f600}]{0,40}",
            markers in proptest::collection::vec("[ab\u{e9}]{1,3}", 1..3),
            within in 0usize..12,
            side in 0usize..3,
            cuts in proptest::collection::vec(0usize..48, 0..12),
        ) {
            let side = [GuardSide::Before, GuardSide::After, GuardSide::Both][side];
            let markers: Vec<&str> = markers.iter().map(String::as_str).collect();
            let guard = guard(&markers, within, side);
            // Spans in order: pairs of sorted cut points, moved back to character boundaries.
            let mut points: Vec<usize> = cuts
                .into_iter()
                .map(|cut| {
                    let mut at = cut.min(text.len());
                    while !text.is_char_boundary(at) {
                        at -= 1;
                    }
                    at
                })
                .collect();
            points.sort_unstable();
            let mut sliding = GuardedText::new(&text, &guard);
            for pair in points.chunks(2) {
                let (start, end) = (pair[0], *pair.get(1).unwrap_or(&pair[0]));
                proptest::prop_assert_eq!(
                    sliding.keeps(start, end),
                    guarded(&text, start, end, &guard),
                    "span {}..{}", start, end
                );
            }
        }
    }

    #[test]
    fn a_replacement_stops_copying_groups_once_past_the_limit() {
        let text = "x".repeat(10_000);
        let regex = postprocess_regex("x+").unwrap();
        let mut captures = regex.create_captures();
        regex.captures(&text, &mut captures);
        let replace = "$0".repeat(3_000);
        let mut out = String::new();
        assert!(!expand_within(&text, &captures, &replace, 50_000, &mut out));
        // Five copies fit; the 2,995 others were never made (30 MB without the bound).
        assert_eq!(out.len(), 50_000);
        let mut out = String::new();
        assert!(expand_within(&text, &captures, "<$0>", 50_000, &mut out));
        assert_eq!(out, format!("<{text}>"));
    }

    /// A replacement that writes only the whole match needs no search for groups, and costs
    /// no fuel for one however long the match; one that writes a group is paid for as the
    /// search for it, and says so when the fuel runs out.
    #[test]
    fn only_groups_besides_the_whole_match_cost_fuel_to_find() {
        let text = "a".repeat(6 << 20);
        let apply = |replace: &str| {
            let rules = vec![PostprocessRule::Regex {
                pattern: "(?s)(a)a+".into(),
                replace: replace.into(),
                guard: None,
            }];
            Postprocessor::new(Some(&rules)).apply(&text, u64::MAX, DEFAULT_FUEL)
        };
        for (replace, around) in [("$0", 0), ("[${0}]", 2)] {
            let replaced =
                apply(replace).map(|out| (out.len(), out.starts_with("[a") == (around > 0)));
            assert_eq!(replaced, Ok((text.len() + around, true)), "{replace}");
        }
        assert!(!writes_groups("$0 ${0} $$1"));
        assert!(writes_groups("$1") && writes_groups("${name}"));
        assert!(
            matches!(apply("$1"), Err(Stopped::OutOfFuel { groups: true, .. })),
            "a group of a 6 MB match is found state by state"
        );
    }

    #[test]
    fn a_rule_that_grows_the_text_past_the_limit_is_named_and_stops_there() {
        let doubling = PostprocessRule::Regex {
            pattern: "x".into(),
            replace: "xx".into(),
            guard: None,
        };
        let rules: Vec<PostprocessRule> = std::iter::once(PostprocessRule::Trim {
            final_newline: false,
        })
        .chain(std::iter::repeat_n(doubling, 40))
        .collect();
        let postprocessor = Postprocessor::new(Some(&rules));
        // Ten doublings make 1,024 bytes: within a limit of 1,024, past one of 1,023 at the
        // tenth of them (rule 10, after the trim).
        let ten = Postprocessor::new(Some(&rules[..11]));
        let apply =
            |postprocessor: &Postprocessor, limit| postprocessor.apply("x", limit, DEFAULT_FUEL);
        assert_eq!(apply(&ten, 1024), Ok("x".repeat(1024)));
        assert_eq!(apply(&ten, 1023), Err(Stopped::Overgrown { rule: 10 }));
        // All forty would make a terabyte: the rule that passes 1 MB is named, and the text
        // is not built further.
        assert_eq!(
            apply(&postprocessor, 1 << 20),
            Err(Stopped::Overgrown { rule: 21 })
        );
    }
}
