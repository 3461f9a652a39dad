//! Helpers for conditions over model ids (routing's `match`, and any other condition):
//! case-insensitive containment and prefix, globs, regular expressions, and the version
//! number inside an id.

use std::collections::HashMap;
use std::sync::Arc;

use minijinja::value::{Rest, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind, State, Value};
use regex_automata::meta;
use sha2::{Digest, Sha256};

use crate::built::{Built, build_fuel, search_fuel};
use crate::templates::arguments::Arguments;

/// The most memory a `matching` pattern may compile to: a pattern from a workspace file must
/// not exhaust memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

pub fn install(env: &mut Environment<'static>) {
    env.add_test("icontaining", |text: &str, needle: &str| {
        text.to_lowercase().contains(&needle.to_lowercase())
    });
    env.add_test("istartingwith", |text: &str, prefix: &str| {
        text.to_lowercase().starts_with(&prefix.to_lowercase())
    });
    env.add_test("glob", glob);
    env.add_test("matching", matching);
    env.add_filter("model_version", model_version);
    env.add_filter("int", int);
    env.add_filter("float", float);
}

/// Jinja2's `int` ([`crate::templates::numbers::int`]), which also takes a model version: its
/// first part, the major version (4 for `claude-sonnet-4-5`, 5 for `gpt-5.1-codex`, 4 for
/// `model-4.10`).
fn int(state: &State, value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = args.into_values();
    let args = Arguments::new("int", &["default", "base"], &args)?;
    let Some(version) = value.downcast_object_ref::<ModelVersion>() else {
        return crate::templates::numbers::int(state, value, &args);
    };
    // A version always converts: `default` and `base` change nothing, but are taken as
    // Jinja2's `int` takes them.
    args.given(0)?;
    args.get::<u32>(1)?;
    args.done()?;
    version.major().map(Value::from).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "the version {version} has a major number too large for an integer; \
                 compare the version itself (`model_version >= 4`) instead"
            ),
        )
    })
}

/// Jinja2's `float` ([`crate::templates::numbers::float`]), which also takes a model version:
/// the version read as a decimal (2.5 for `gemini-2.5-pro`; 4.1 for `model-4.10`, which only
/// the version itself orders after 4.9).
fn float(state: &State, value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = args.into_values();
    let args = Arguments::new("float", &["default"], &args)?;
    let Some(version) = value.downcast_object_ref::<ModelVersion>() else {
        return crate::templates::numbers::float(state, value, &args);
    };
    args.given(0)?;
    args.done()?;
    Ok(Value::from(version.decimal()))
}

/// A shell-style glob over the whole text, case-insensitive: `*` and `?` also match `/`, as
/// in `openrouter/*`.
fn glob(state: &mut State, text: &str, pattern: &str) -> Result<bool, Error> {
    let regex = paid_for(state, "glob", pattern, || {
        GLOBS.get(pattern, || build_glob(pattern).map(Arc::new))
    })?;
    charge_search(state, "glob", pattern, text, &regex)?;
    Ok(regex.is_match(text.as_bytes()))
}

/// A regular expression found anywhere in the text (anchor it with `^…$`; `(?i)` for case).
fn matching(state: &mut State, text: &str, pattern: &str) -> Result<bool, Error> {
    let regex = paid_for(state, "regular expression", pattern, || {
        REGEXES.get(pattern, || build_regex(pattern).map(Arc::new))
    })?;
    charge_search(state, "regular expression", pattern, text, &regex)?;
    Ok(regex.is_match(text))
}

/// The patterns of the `glob` and `matching` tests, each built once per process. Shared
/// behind an `Arc`: a clone of a `meta::Regex` starts with no search cache of its own, and
/// each test would make one afresh.
static GLOBS: Built<Arc<meta::Regex>> = Built::new();
static REGEXES: Built<Arc<meta::Regex>> = Built::new();

fn build_glob(pattern: &str) -> Result<meta::Regex, String> {
    crate::built::refuse_deep_glob(pattern)
        .map_err(|error| format!("glob `{}`: {error}", shortened(pattern)))?;
    globset::GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(false)
        .build()
        .map_err(|error| error.kind().to_string())
        .and_then(|glob| crate::built::glob_regex(&glob, REGEX_SIZE_LIMIT))
        .map_err(|error| format!("glob `{}`: {error}", shortened(pattern)))
}

/// Which test a pattern is given to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tested {
    Glob,
    Regex,
}

/// How many patterns [`build_ahead`] builds at most: a real workspace routes on a few.
const AHEAD: usize = 16;

/// Builds on another thread the patterns that conditions give the `matching` and `glob` tests
/// as string literals, while the workspace's templates are registered and it is validated:
/// the first compiles of a matrix, one on each core, evaluate the same predicates at the same
/// time, and both waited for one of them to build each pattern (a quarter to half a
/// millisecond for a case-insensitive one). A pattern computed by the condition, or past the
/// first [`AHEAD`], is built when first needed, as is every pattern when no thread can be
/// started.
pub fn build_ahead<'a>(conditions: impl Iterator<Item = &'a str>) {
    let mut patterns: Vec<(Tested, String)> = Vec::new();
    for found in conditions.flat_map(literal_patterns) {
        if patterns.len() == AHEAD {
            break;
        }
        if !patterns.contains(&found) {
            patterns.push(found);
        }
    }
    if patterns.is_empty() {
        return;
    }
    crate::ahead::run(move || {
        for (tested, pattern) in patterns {
            let _ = match tested {
                Tested::Glob => GLOBS.get(&pattern, || build_glob(&pattern).map(Arc::new)),
                Tested::Regex => REGEXES.get(&pattern, || build_regex(&pattern).map(Arc::new)),
            };
        }
    });
}

/// The string literals a condition gives the `matching` and `glob` tests, as in
/// `model.id is matching('(?i)gpt-5')` or `model.id is glob "openrouter/*"`. A scan of the
/// text rather than a parse (minijinja keeps its parser private): it skips other string
/// literals, and a literal with an escape it does not know, which is then built when first
/// needed. What it finds in a condition that does not compile is built for nothing.
fn literal_patterns(condition: &str) -> Vec<(Tested, String)> {
    let bytes = condition.as_bytes();
    let is_word = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let skip_space = |mut at: usize| {
        while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        at
    };
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte == b'\'' || byte == b'"' {
            at = string_literal(condition, at).1;
        } else if is_word(byte) {
            let start = at;
            while bytes.get(at).copied().is_some_and(is_word) {
                at += 1;
            }
            let tested = match &condition[start..at] {
                "matching" => Tested::Regex,
                "glob" => Tested::Glob,
                _ => continue,
            };
            let mut argument = skip_space(at);
            if bytes.get(argument) == Some(&b'(') {
                argument = skip_space(argument + 1);
            }
            if matches!(bytes.get(argument), Some(b'\'' | b'"')) {
                let (literal, end) = string_literal(condition, argument);
                if let Some(pattern) = literal {
                    found.push((tested, pattern));
                }
                at = end;
            }
        } else {
            at += 1;
        }
    }
    found
}

/// The string literal that starts at `start` (a quote), unescaped, and where it ends; `None`
/// for one left open or holding an escape other than `\\`, `\'`, `\"`, `\/`, `\n`, `\r`, `\t`.
fn string_literal(text: &str, start: usize) -> (Option<String>, usize) {
    let Some(&quote) = text.as_bytes().get(start) else {
        return (None, text.len());
    };
    let quote = char::from(quote);
    let mut value = Some(String::new());
    let mut chars = text.get(start + 1..).unwrap_or_default().char_indices();
    while let Some((offset, c)) = chars.next() {
        let end = start + 1 + offset + c.len_utf8();
        match c {
            '\\' => {
                let escaped = chars.next().map(|(_, c)| c);
                let unescaped = match escaped {
                    Some(c @ ('\\' | '\'' | '"' | '/')) => Some(c),
                    Some('n') => Some('\n'),
                    Some('r') => Some('\r'),
                    Some('t') => Some('\t'),
                    _ => None,
                };
                match (unescaped, value.as_mut()) {
                    (Some(c), Some(text)) => text.push(c),
                    _ => value = None,
                }
            }
            c if c == quote => return (value, end),
            c => {
                if let Some(text) = value.as_mut() {
                    text.push(c);
                }
            }
        }
    }
    (None, text.len())
}

/// `pattern` as `regex::RegexBuilder` builds it with both size limits at
/// [`REGEX_SIZE_LIMIT`] (the same semantics), but as the engine that can say how much memory
/// it compiled to; the error is the regex crate's own wording.
///
/// Built for what a pattern here is asked, whether a model id (or another short text)
/// matches: its lazy DFA searches, without a full DFA or a literal prefilter beside it. Those
/// two only speed up long searches, and building them was most of a pattern's build: the
/// shipped library's two routing patterns, `(?i)(^|/)gpt-…` with their case-insensitive
/// literals, took 0.29 and 0.63 ms to build with them, 0.03 and 0.04 ms without (medians of
/// 300 builds), on the thread that builds them while a matrix loads. A search still costs
/// fuel by the automaton it steps through (see [`crate::built::search_fuel`]).
pub(crate) fn build_regex(pattern: &str) -> Result<meta::Regex, String> {
    // `matching` only asks whether the text matches: without capture states, the engine keeps
    // no table of their positions, which for `(a)?` repeated five thousand times asked for
    // gigabytes at the first search, and the process aborted.
    let config = meta::Config::new()
        .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
        .hybrid_cache_capacity(REGEX_SIZE_LIMIT)
        .match_kind(regex_automata::MatchKind::LeftmostFirst)
        .utf8_empty(true)
        .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
        .dfa(false)
        .auto_prefilter(false);
    meta::Builder::new()
        .configure(config)
        .syntax(regex_automata::util::syntax::Config::new().utf8(true))
        .build(pattern)
        .map_err(|error| {
            let message = regex::RegexBuilder::new(pattern)
                .size_limit(REGEX_SIZE_LIMIT)
                .dfa_size_limit(REGEX_SIZE_LIMIT)
                .build()
                .map_or_else(|error| error.to_string(), |_| error.to_string());
            format!("regular expression `{pattern}`: {message}")
        })
}

/// How many built patterns one render keeps (see [`PatternsPaid`]). Each may hold, beside
/// what it compiles to, a search cache of up to [`REGEX_SIZE_LIMIT`] that its fuel does not
/// count: a render keeping every pattern it paid for could hold gigabytes of them.
const KEPT_PER_RENDER: usize = 32;

/// The patterns one render (or one condition) has paid for, by digest, each as it was built:
/// one of the first [`KEPT_PER_RENDER`] used again in the same render is free, and is not
/// built again; any other is paid for at each use, as it may be built again. Kept with the
/// render's state, so what a render spends depends on the render alone, whichever patterns
/// the process built before. Paid once and not kept, as before, a loop over 65 patterns built
/// each of them at every turn (the process keeps only [`crate::built`]'s few), and a template
/// of a kilobyte ran for minutes within its fuel.
#[derive(Default)]
pub struct PatternsPaid {
    kept: HashMap<[u8; 16], Arc<meta::Regex>>,
    /// How many builds were paid for.
    builds: usize,
    pub fuel: u64,
}

impl PatternsPaid {
    /// Adds `cost` to what was paid, unless that would pass `left`.
    fn pay(&mut self, cost: u64, left: u64) -> bool {
        let fuel = self.fuel.saturating_add(cost);
        let paid = fuel <= left;
        if paid {
            self.fuel = fuel;
        }
        paid
    }
}

/// The fuel the render has not spent on instructions.
fn fuel_left(state: &State) -> u64 {
    state
        .fuel_levels()
        .map_or(u64::MAX, |(_, remaining)| remaining)
}

/// The pattern as the render paid for it: unless the render keeps it, `build` gives it (from
/// the process's patterns, or built afresh) and its cost is taken from the render's fuel; a
/// render whose instructions and patterns together pass its fuel stops, as one that runs out
/// of instructions does.
fn paid_for(
    state: &mut State,
    kind: &str,
    pattern: &str,
    build: impl FnOnce() -> Result<Arc<meta::Regex>, String>,
) -> Result<Arc<meta::Regex>, Error> {
    // The kind is part of the key: the same text can be a cheap glob and a costly regex.
    let digest = Sha256::new()
        .chain_update(kind.as_bytes())
        .chain_update([0])
        .chain_update(pattern.as_bytes())
        .finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    if let Some(regex) = state
        .get_extension::<PatternsPaid>()
        .and_then(|paid| paid.kept.get(&key))
    {
        return Ok(Arc::clone(regex));
    }
    let regex = build().map_err(invalid)?;
    let cost = build_fuel(&regex);
    let left = fuel_left(state);
    let paid = state.get_or_insert_extension_with(PatternsPaid::default);
    if !paid.pay(cost, left) {
        return Err(Error::new(
            ErrorKind::OutOfFuel,
            format!(
                "the {kind} `{}` costs {cost} fuel to build, more than is left \
                 ({} pattern builds so far cost {})",
                shortened(pattern),
                paid.builds,
                paid.fuel
            ),
        ));
    }
    paid.builds += 1;
    if paid.kept.len() < KEPT_PER_RENDER {
        paid.kept.insert(key, Arc::clone(&regex));
    }
    Ok(regex)
}

/// Takes what searching `text` with a pattern may cost (see [`search_fuel`]) from the render's
/// fuel, on every search, before it runs: the engine does not say beforehand whether it will
/// search fast.
fn charge_search(
    state: &mut State,
    kind: &str,
    pattern: &str,
    text: &str,
    regex: &meta::Regex,
) -> Result<(), Error> {
    let search = search_fuel(text.len(), regex.memory_usage());
    if search == 0 {
        return Ok(());
    }
    let left = fuel_left(state);
    let paid = state.get_or_insert_extension_with(PatternsPaid::default);
    if !paid.pay(search, left) {
        return Err(Error::new(
            ErrorKind::OutOfFuel,
            format!(
                "searching {} bytes with the {kind} `{}` costs {search} fuel, more than is left",
                text.len(),
                shortened(pattern),
            ),
        ));
    }
    Ok(())
}

/// A pattern as an error quotes it: a template can build one of megabytes.
fn shortened(pattern: &str) -> String {
    const SHOWN: usize = 60;
    match pattern.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &pattern[..end]),
        None => pattern.to_string(),
    }
}

/// How many times the `matching` test's `pattern` has been built in this process.
#[cfg(test)]
pub(crate) fn times_regex_built(pattern: &str) -> usize {
    REGEXES.times_built(pattern)
}

/// The fuel the patterns of a finished render cost, to be added to its instructions.
fn patterns_fuel(state: &State) -> u64 {
    state
        .get_extension::<PatternsPaid>()
        .map_or(0, |paid| paid.fuel)
}

/// The fuel a finished render or evaluation used: its instructions, and the patterns its
/// tests built, which cost fuel beside them.
pub fn used_fuel(state: &State) -> u64 {
    let instructions = state.fuel_levels().map_or(0, |(used, _)| used);
    instructions.saturating_add(patterns_fuel(state))
}

/// The `index`-th version number in a model id (0: the first), read as digits with an optional
/// `.` and more digits: 4 in `claude-sonnet-4-5`, 5.1 in `gpt-5.1-codex`, 2.5 in
/// `gemini-2.5-pro`, 4.10 in `model-4.10`. 0 when there is none, so
/// `model.id | model_version >= 4` is simply false.
///
/// A [`ModelVersion`]: it compares as a version, part by part, not as a decimal (4.10 is
/// above 4.9 and 4.2), with numbers and with texts such as `"4.10"`.
fn model_version(
    text: &str,
    index: Option<usize>,
    kwargs: minijinja::value::Kwargs,
) -> Result<Value, minijinja::Error> {
    // `n` by position (`model_version(1)`) or by name (`model_version(n=1)`), as documented.
    let named = kwargs.get::<Option<usize>>("n")?;
    kwargs.assert_all_used()?;
    let index = match (index, named) {
        (Some(_), Some(_)) => {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::TooManyArguments,
                "model_version takes `n` once: by position or as `n=`",
            ));
        }
        (index, named) => index.or(named).unwrap_or(0),
    };
    let version = numbers(text).get(index).map_or_else(
        || ModelVersion(vec![ZERO.clone()]),
        |number| ModelVersion::parse(number),
    );
    Ok(Value::from_object(version))
}

/// A version number read from a model id: its parts, as written between dots. Two versions
/// compare part by part, a missing part as 0 (`4` is `4.0`). A number it is compared with is
/// read as it is written (`4.2` is 4 then 2; an integer, one part); a text, as dotted digits
/// (`"4.10"`, the way to write a part of more than one digit or ending in 0, which a number
/// loses: `4.10` is the number 4.1).
///
/// A part is kept as its digits, without leading zeros, so that a model id's number of any
/// length compares by its value: `gpt-18446744073709551616` is above `gpt-18446744073709551615`
/// though neither fits a 64-bit number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelVersion(Vec<Part>);

/// One part of a [`ModelVersion`]: decimal digits without leading zeros (0 is no digits).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part(String);

impl Part {
    fn new(digits: &str) -> Self {
        Part(digits.trim_start_matches('0').to_owned())
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// The part as an integer, where one holds it.
    fn value(&self) -> Option<u128> {
        if self.is_zero() {
            return Some(0);
        }
        self.0.parse().ok()
    }
}

impl Ord for Part {
    /// Digits without leading zeros: the longer is the larger, and of two as long the first
    /// digit that differs decides.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.cmp(&other.0))
    }
}

impl PartialOrd for Part {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_zero() { "0" } else { &self.0 })
    }
}

static ZERO: Part = Part(String::new());

impl ModelVersion {
    /// Dotted digits.
    fn parse(text: &str) -> Self {
        ModelVersion(text.split('.').map(Part::new).collect())
    }

    /// A template value as a version: a number as it is written, a text of dotted digits.
    /// `None` for anything else (a negative number, a text that is no version).
    fn of(value: &Value) -> Option<Self> {
        if let Some(text) = value.as_str() {
            let dotted = !text.is_empty()
                && text
                    .split('.')
                    .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
            return dotted.then(|| Self::parse(text));
        }
        if !value.is_number() {
            return None;
        }
        if let Ok(whole) = u128::try_from(value.clone()) {
            return Some(Self::parse(&whole.to_string()));
        }
        let number = f64::try_from(value.clone()).ok()?;
        if !number.is_finite() || number < 0.0 {
            return None;
        }
        // Rust writes the shortest text that reads back as the same number: `4.2`, not
        // `4.2000000000000002`.
        let written = number.to_string();
        let written = written.strip_suffix(".0").unwrap_or(&written);
        written
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.')
            .then(|| Self::parse(written))
    }

    fn part(&self, index: usize) -> &Part {
        self.0.get(index).unwrap_or(&ZERO)
    }

    /// The first part, where an integer holds it.
    fn major(&self) -> Option<u128> {
        self.part(0).value()
    }

    /// The first two parts read as a decimal, as the number they were written as (the
    /// nearest a float holds).
    fn decimal(&self) -> f64 {
        format!("{}.{}", self.part(0), self.part(1))
            .parse()
            .unwrap_or(f64::MAX)
    }

    fn compare(&self, other: &Self) -> std::cmp::Ordering {
        let len = self.0.len().max(other.0.len());
        (0..len)
            .map(|index| self.part(index).cmp(other.part(index)))
            .find(|ordering| ordering.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    }
}

impl std::fmt::Display for ModelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (index, part) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(".")?;
            }
            write!(f, "{part}")?;
        }
        Ok(())
    }
}

impl minijinja::value::Object for ModelVersion {
    fn repr(self: &Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Plain
    }

    /// Written as read: `4`, `5.1`, `4.10`.
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.as_ref(), f)
    }

    /// 0 (no number in the id) is false, as the number 0 was.
    fn is_true(self: &Arc<Self>) -> bool {
        self.0.iter().any(|part| !part.is_zero())
    }

    /// Two versions keep an order of their own in `sort` and `max`.
    fn custom_cmp(
        self: &Arc<Self>,
        other: &minijinja::value::DynObject,
    ) -> Option<std::cmp::Ordering> {
        Some(self.compare(other.downcast_ref::<Self>()?))
    }

    /// Against a version, a number or a text of dotted digits; any version is above a
    /// number below 0. Anything else keeps the value order.
    fn compare_in_template(self: &Arc<Self>, other: &Value) -> Option<std::cmp::Ordering> {
        if let Some(version) = other.downcast_object_ref::<Self>() {
            return Some(self.compare(version));
        }
        if other.is_number() && f64::try_from(other.clone()).is_ok_and(|n| n < 0.0) {
            return Some(std::cmp::Ordering::Greater);
        }
        Some(self.compare(&Self::of(other)?))
    }
}

fn numbers(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        // One fraction: `5.1` in `gpt-5.1-codex`, not `1.2.3` as one number.
        if at + 1 < bytes.len() && bytes[at] == b'.' && bytes[at + 1].is_ascii_digit() {
            at += 1;
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
        }
        found.push(&text[start..at]);
    }
    found
}

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patterns_conditions_give_the_tests_are_found_as_written() {
        let found = |condition: &str| literal_patterns(condition);
        assert_eq!(
            found("model.id is matching('(?i)(^|/)gpt-([5-9]|[1-9][0-9])')"),
            [(Tested::Regex, "(?i)(^|/)gpt-([5-9]|[1-9][0-9])".to_string())]
        );
        assert_eq!(
            found("model.id is glob \"openrouter/*\" or x is not matching ( 'it\\'s\\\\' )"),
            [
                (Tested::Glob, "openrouter/*".to_string()),
                (Tested::Regex, "it's\\".to_string())
            ]
        );
        // A string that only spells a test, a name that only starts like one, a computed
        // pattern, and an escape the scan does not unescape.
        assert_eq!(
            found(
                "'is matching(\"x\")' == y or globbing('z') or a is matching(p) or a is matching('\\d')"
            ),
            []
        );
        // A literal left open ends the scan.
        assert_eq!(found("a is glob('open"), []);
    }

    #[test]
    fn a_pattern_a_condition_gives_is_built_ahead() {
        let pattern = "^built-ahead-[0-9]+$";
        build_ahead(["model.id is matching('^built-ahead-[0-9]+$')"].into_iter());
        let start = std::time::Instant::now();
        while !REGEXES.was_built(pattern) {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "not built ahead"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(holds(
            "id is matching('^built-ahead-[0-9]+$')",
            "built-ahead-12"
        ));
    }

    #[test]
    fn loading_a_workspace_builds_its_predicates_patterns_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            (
                "promptc.toml",
                "fallback_family = \"v\"\ndefault_context = \"c\"\n[predicates]\n\
                 routed = \"model.id is glob('loaded-ahead/*')\"\n",
            ),
            ("examples/contexts/c.toml", "cwd = \"/p\"\n"),
            ("variants/v.toml", "id = \"v\"\ntemplate = \"x\\n\"\n"),
        ];
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let loaded = crate::load_workspace(dir.path()).unwrap();
        assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
        let start = std::time::Instant::now();
        while !GLOBS.was_built("loaded-ahead/*") {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "not built ahead"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    fn holds(condition: &str, id: &str) -> bool {
        let mut env = Environment::new();
        install(&mut env);
        env.compile_expression(condition)
            .unwrap()
            .eval(minijinja::context! { id => id })
            .unwrap()
            .is_true()
    }

    #[test]
    fn model_ids_are_matched_as_routing_needs() {
        assert!(holds(
            "id is icontaining('Claude')",
            "anthropic/claude-sonnet-4"
        ));
        assert!(holds("id is istartingwith('GPT-5')", "gpt-5.1-codex"));
        assert!(!holds("id is istartingwith('gpt-5')", "openai/gpt-5"));
        assert!(holds(
            "id is glob('*/gemini-2.5-*')",
            "google/Gemini-2.5-Pro"
        ));
        assert!(holds("id is matching('^qwen[0-9]')", "qwen3-coder"));
        assert!(!holds("id is matching('^qwen[0-9]')", "myqwen3"));
    }

    #[test]
    fn the_version_number_in_an_id_compares_as_a_number() {
        assert!(holds("id | model_version >= 4", "claude-sonnet-4-5"));
        assert!(!holds(
            "id | model_version >= 4",
            "claude-3-7-sonnet-20250219"
        ));
        assert!(holds("id | model_version == 5.1", "gpt-5.1-codex"));
        assert!(holds("id | model_version == 2.5", "gemini-2.5-pro"));
        assert!(holds("id | model_version(1) == 5", "claude-sonnet-4-5"));
        // `n` by name, as the README writes it.
        assert!(holds("id | model_version(n=1) == 5", "claude-sonnet-4-5"));
        assert!(holds("id | model_version(n=0) == 4", "claude-sonnet-4-5"));
        let mut env = Environment::new();
        install(&mut env);
        for refused in ["id | model_version(1, n=1)", "id | model_version(m=1)"] {
            let evaluated = env
                .compile_expression(refused)
                .unwrap()
                .eval(minijinja::context! { id => "claude-sonnet-4-5" });
            assert!(evaluated.is_err(), "{refused}");
        }
        assert!(holds("id | model_version == 0", "grok-code-fast"));
        assert!(holds("id | model_version >= 10", "gpt-10"));
    }

    /// `int` gives a version's major number and `float` the version as a decimal, as a template
    /// author converts a number; other values convert as minijinja converts them.
    #[test]
    fn a_model_version_converts_to_its_major_number_and_to_a_decimal() {
        let mut env = Environment::new();
        install(&mut env);
        let value = |expression: &str, id: &str| {
            env.compile_expression(expression)
                .unwrap()
                .eval(minijinja::context! { id => id })
                .unwrap()
        };
        for (expression, id, expected) in [
            (
                "(id | model_version) | int",
                "claude-sonnet-4-5",
                Value::from(4),
            ),
            ("(id | model_version) | int", "model-4.10", Value::from(4)),
            (
                "(id | model_version(1)) | int",
                "claude-sonnet-4-5",
                Value::from(5),
            ),
            (
                "(id | model_version) | int + 1",
                "gpt-5.1-codex",
                Value::from(6),
            ),
            (
                "(id | model_version) | int(base=16)",
                "gpt-10",
                Value::from(10),
            ),
            (
                "(id | model_version) | int",
                "grok-code-fast",
                Value::from(0),
            ),
            (
                "(id | model_version) | float",
                "gemini-2.5-pro",
                Value::from(2.5),
            ),
            (
                "(id | model_version) | float",
                "claude-sonnet-4-5",
                Value::from(4.0),
            ),
            (
                "(id | model_version) | float",
                "model-4.10",
                Value::from(4.1),
            ),
            ("'12' | int + 1", "", Value::from(13)),
            ("'ff' | int(base=16)", "", Value::from(255)),
            ("'x' | int(default=7)", "", Value::from(7)),
            ("'2.5' | float", "", Value::from(2.5)),
        ] {
            assert_eq!(value(expression, id), expected, "{expression} for {id}");
        }
        // A text that is no number is Jinja2's default, 0, as for any other text.
        assert_eq!(value("'x' | int", ""), Value::from(0));
    }

    /// A model's version is a dotted version, not a decimal: 4.10 comes after 4.9 and 4.2,
    /// where read as a number it was 4.1.
    #[test]
    fn the_version_number_in_an_id_compares_as_a_version() {
        for (condition, id) in [
            ("id | model_version >= 4.2", "model-4.10"),
            ("id | model_version > 4.9", "model-4.10"),
            ("id | model_version is gt(4.9)", "model-4.10"),
            ("id | model_version < 5", "model-4.10"),
            ("id | model_version == '4.10'", "model-4.10"),
            ("id | model_version != 4.1", "model-4.10"),
            ("id | model_version > '4.9'", "model-4.10"),
            ("id | model_version >= 4", "claude-sonnet-4-5"),
            ("id | model_version == 4.0", "claude-sonnet-4-5"),
            ("id | model_version < 2.5", "gemini-1.5-pro"),
            ("id | model_version >= 2.5", "gemini-2.5-pro"),
            ("4.2 <= id | model_version", "model-4.10"),
            ("id | model_version > -1", "grok-code-fast"),
            ("not id | model_version", "grok-code-fast"),
            ("id | model_version", "gpt-4.1"),
            (
                "(id | model_version) > ('gpt-4.9' | model_version)",
                "gpt-4.10",
            ),
        ] {
            assert!(holds(condition, id), "{condition} for {id}");
        }
        for (condition, id) in [
            ("id | model_version < 4.2", "model-4.10"),
            ("id | model_version == 4.1", "model-4.10"),
            ("id | model_version == '4.1'", "model-4.10"),
        ] {
            assert!(!holds(condition, id), "{condition} for {id}");
        }
        // Written as read; sorted among versions as versions, and beside other values
        // without a panic (the value order stays total).
        let mut env = Environment::new();
        install(&mut env);
        let render = |template: &str| {
            env.render_str(template, minijinja::context! { id => "model-4.10" })
                .unwrap()
        };
        assert_eq!(render("{{ id | model_version }}"), "4.10");
        assert_eq!(render("{{ 'gpt-5.1' | model_version }}"), "5.1");
        assert_eq!(render("{{ 'no number' | model_version }}"), "0");
        assert_eq!(
            render("{{ ['m-4.10', 'm-4.9', 'm-4.2'] | map('model_version') | sort | join(' ') }}"),
            "4.2 4.9 4.10"
        );
        render("{{ [id | model_version, 4.2, 4.15, '4.3', 4] | sort | length }}");
    }

    /// A number too long for a 64-bit integer keeps its value: two ids with different such
    /// numbers do not compare equal, and `int` says it cannot hold one rather than giving a
    /// made-up number.
    #[test]
    fn a_version_number_of_any_length_compares_by_its_value() {
        let above = "m-18446744073709551616";
        let max = "m-18446744073709551615";
        assert!(holds(
            "(id | model_version) > ('m-18446744073709551615' | model_version)",
            above
        ));
        assert!(!holds(
            "(id | model_version) == ('m-18446744073709551616' | model_version)",
            max
        ));
        assert!(holds("id | model_version == 18446744073709551615", max));
        assert!(holds(
            "id | model_version > 99999999999999999999999999999999999999",
            "m-100000000000000000000000000000000000000000000"
        ));
        assert!(holds(
            "id | model_version(1) < '99999999999999999999999'",
            "m-1.99999999999999999999998"
        ));
        // Leading zeros count for nothing, as in a number.
        assert!(holds("id | model_version == 4.5", "m-004.05"));
        assert!(holds("id | model_version == '4.5'", "m-4.0005"));
        assert!(holds("not id | model_version", "m-000"));

        let mut env = Environment::new();
        install(&mut env);
        let render =
            |template: &str, id: &str| env.render_str(template, minijinja::context! { id => id });
        let huge = "m-123456789012345678901234567890123456789012";
        assert_eq!(
            render("{{ id | model_version }}", huge).unwrap(),
            "123456789012345678901234567890123456789012"
        );
        assert_eq!(render("{{ id | model_version }}", "m-007").unwrap(), "7");
        let refused = render("{{ (id | model_version) | int }}", huge).unwrap_err();
        assert!(
            refused.to_string().contains("too large for an integer"),
            "{refused}"
        );
        assert_eq!(
            render("{{ (id | model_version) | int }}", max).unwrap(),
            "18446744073709551615"
        );
    }

    /// Renders `template` with `fuel`, the helpers installed.
    fn render(template: &str, fuel: u64) -> Result<String, Error> {
        let mut env = Environment::new();
        install(&mut env);
        env.set_fuel(Some(fuel));
        env.render_str(template, minijinja::context! {})
    }

    /// A loop over `count` patterns of `prefix`, `rounds` times, rendered with `fuel`.
    fn loop_over_patterns(
        prefix: &str,
        count: usize,
        rounds: usize,
        fuel: u64,
    ) -> Result<String, Error> {
        let list = (0..count)
            .map(|n| format!("'^{prefix}-{n}$'"))
            .collect::<Vec<_>>()
            .join(", ");
        render(
            &format!(
                "{{% for i in range({rounds}) %}}{{% for p in [{list}] %}}\
                 {{% if '{prefix}-7' is matching(p) %}}.{{% endif %}}\
                 {{% endfor %}}{{% endfor %}}"
            ),
            fuel,
        )
    }

    /// A render keeps the first patterns it pays for, built, and pays for the others at each
    /// use: the process keeps only 64, and a loop over 65 patterns built every one again at
    /// every turn while paying once (a template of a kilobyte ran for minutes within its
    /// fuel).
    #[test]
    fn a_render_pays_for_each_build_of_a_pattern_it_does_not_keep() {
        assert_eq!(KEPT_PER_RENDER, 32);
        let kept = 32;
        assert_eq!(
            loop_over_patterns("kept-by-a-render", kept, 3, 1_000_000).unwrap(),
            "..."
        );
        for n in 0..kept {
            let pattern = format!("^kept-by-a-render-{n}$");
            assert_eq!(REGEXES.times_built(&pattern), 1, "{pattern}");
        }
        // The same loop with twice the patterns: within a fuel ten times what the kept ones
        // took, it runs out, paying for the others' builds at every turn.
        let fuel = 2_000_000;
        assert!(loop_over_patterns("kept-alone", kept, 200, fuel).is_ok());
        let error = loop_over_patterns("not-all-kept", 2 * kept, 200, fuel).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::OutOfFuel, "{error}");
    }

    #[test]
    fn each_distinct_pattern_costs_fuel_by_its_size_once_per_render() {
        let big = build_fuel(&build_regex(r"(?i)\w{20}").unwrap());
        let small = build_fuel(&build_regex(r"(?i)^gpt-5").unwrap());
        assert!(big > 100 * small, "{big} {small}");
        // Three large patterns, used ten times each, cost three times one.
        let three = "{% for i in range(10) %}\
                     {% for p in ['(?i)\\w{20}', '(?i)\\w{19}', '(?i)\\w{18}'] %}\
                     {% if 'x' is matching(p) %}{% endif %}{% endfor %}{% endfor %}";
        assert!(render(three, 3 * big + 10_000).is_ok());
        let error = render(three, 2 * big).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::OutOfFuel);
        assert!(
            error.to_string().contains("regular expression `(?i)\\w{1"),
            "{error}"
        );
        // The same text paid for as a glob is not thereby paid for as a regex.
        let both = "{% for i in range(100000) %}{% set p = '(?i)\\w{20}(' ~ i ~ ')?' %}\
                    {% if 'x' is glob(p) or 'x' is matching(p) %}{% endif %}{% endfor %}";
        let error = render(both, 3 * big).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::OutOfFuel);
        // Run out on the third regex, not hundreds of free regexes later on a glob.
        assert!(error.to_string().contains("regular expression"), "{error}");
        // A new pattern on each turn runs out after a few turns, not after the loop.
        let endless =
            "{% for i in range(100000) %}{% if 'x' is glob('*' ~ i) %}{% endif %}{% endfor %}";
        let error = render(endless, 1_000_000).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::OutOfFuel);
        assert!(error.to_string().contains("glob `*"), "{error}");
    }

    // globset's own matcher panics when the regex of a glob it parsed does not build.
    #[test]
    fn a_glob_too_large_to_build_is_an_error_not_a_panic() {
        let template = "{{ 'x' is glob('[a-z]' * 200000) }}";
        let error = render(template, 5_000_000).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidOperation);
        assert!(
            error
                .to_string()
                .contains("compiles to more than 1048576 bytes"),
            "{error}"
        );
        assert!(error.to_string().len() < 400, "{error}");
        // Matched as globset matches: case aside, `*` and `?` cross `/` and line breaks.
        let holds = |template: &str| render(template, 100_000).unwrap() == "y";
        assert!(holds("{% if 'A/b' is glob('a/*') %}y{% endif %}"));
        assert!(holds("{% if 'a\nb' is glob('a?b') %}y{% endif %}"));
        assert!(!holds("{% if 'ab/c' is glob('a?') %}y{% endif %}"));
    }

    #[test]
    fn a_bad_pattern_is_an_error_not_false() {
        let mut env = Environment::new();
        install(&mut env);
        let result = env
            .compile_expression("id is matching('(')")
            .unwrap()
            .eval(minijinja::context! { id => "x" });
        assert!(result.is_err());
    }
}
