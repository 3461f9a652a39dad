//! Patterns built once per process. A pattern (a post-processing regex, a routing glob) is
//! checked by validation and used by every compile after it, and building one costs far more
//! than running it: a regex with a Unicode class takes about a millisecond to build.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use regex_automata::{hybrid, meta};

/// The most memory the patterns a [`Built`] keeps may hold together (each at its
/// [`Weight`]); the oldest go first past it, so that a workspace with endless patterns cannot
/// grow the process. Each regex counts what it compiled to and the search caches its searches
/// may grow ([`search_caches`]): about 70 `matching` patterns (a lazy DFA of 1 MiB each way),
/// or some 500 sets of a rule's globs, which are searched on paths with a smaller cache.
const KEPT_BYTES: usize = 160 << 20;
/// The most patterns a [`Built`] keeps, however small.
const KEPT_PATTERNS: usize = 4096;
/// What keeping one pattern costs besides its text and what it built: the entries of the
/// map and of the queue.
const ENTRY_BYTES: usize = 128;

/// The memory a built pattern holds, which [`Built`] counts against [`KEPT_BYTES`].
pub trait Weight {
    fn weight(&self) -> usize;
}

/// What a regex's search caches may hold beside what it compiled to, which `memory_usage`
/// does not count, by the engines its configuration lets it search with: the lazy DFA's cache
/// each way at the capacity it was given, the bounded backtracker's visited set, and the
/// PikeVM's sets of states and tables of capture positions, which grow with the compiled
/// pattern and its groups.
/// Counted whether or not a search has grown them: a `matching` pattern searched over long
/// texts holds about 2.2 MB. Counted at one fixed size for every regex, this kept 64 of them
/// whatever they were: a project of more rules with globs than that, compiled request after
/// request, built every rule's globs again on each compile (the oldest went first, and each
/// was asked for again before it came round).
fn search_caches(regex: &meta::Regex) -> usize {
    let config = regex.get_config();
    let lazy = if config.get_hybrid() {
        config.get_hybrid_cache_capacity().saturating_mul(2)
    } else {
        0
    };
    let backtrack = if config.get_backtrack() {
        BACKTRACK_VISITED
    } else {
        0
    };
    let pikevm = regex.memory_usage().saturating_add(capture_table(regex));
    lazy.saturating_add(backtrack).saturating_add(pikevm)
}

/// The bounded backtracker's visited set at its largest: regex-automata's default capacity,
/// which `meta` does not let a regex change.
const BACKTRACK_VISITED: usize = 256 << 10;

impl Weight for meta::Regex {
    fn weight(&self) -> usize {
        self.memory_usage().saturating_add(search_caches(self))
    }
}

impl<T: Weight> Weight for Arc<T> {
    fn weight(&self) -> usize {
        (**self).weight()
    }
}

/// Patterns and what building each gave, error included, so a bad pattern is not built again.
/// A pattern is built by the first thread that asks for it; another that asks meanwhile
/// waits for that build rather than doing it again.
pub struct Built<T, E = String> {
    kept: Mutex<Kept<T, E>>,
    /// Every pattern built so far. Tests run side by side in one process and share the
    /// process's patterns: another test's builds may drop one from `kept` as soon as it
    /// is built, so whether it was built is asked of this list.
    #[cfg(test)]
    built: Mutex<Vec<String>>,
}

/// One pattern's build: empty until the thread building it is done.
type Cell<T, E> = Arc<OnceLock<Result<T, E>>>;

/// The patterns kept, by text, and the order they came in.
struct Kept<T, E> {
    cells: BTreeMap<String, (Cell<T, E>, usize)>,
    order: VecDeque<String>,
    bytes: usize,
}

impl<T, E> Kept<T, E> {
    /// Drops the oldest patterns until those left are within the bounds.
    fn trim(&mut self) {
        while self.bytes > KEPT_BYTES || self.cells.len() > KEPT_PATTERNS {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some((_, weight)) = self.cells.remove(&oldest) {
                self.bytes = self.bytes.saturating_sub(weight);
            }
        }
    }
}

impl<T: Clone + Weight, E: Clone> Built<T, E> {
    pub const fn new() -> Self {
        Self {
            kept: Mutex::new(Kept {
                cells: BTreeMap::new(),
                order: VecDeque::new(),
                bytes: 0,
            }),
            #[cfg(test)]
            built: Mutex::new(Vec::new()),
        }
    }

    /// What `build` gave for `pattern`, built on its first use in the process.
    pub fn get(&self, pattern: &str, build: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let cell = {
            let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            match kept.cells.get(pattern) {
                Some((cell, _)) => Arc::clone(cell),
                None => {
                    let cell = Arc::new(OnceLock::new());
                    // The text is held twice, in the map and in the queue.
                    let weight = pattern.len().saturating_mul(2).saturating_add(ENTRY_BYTES);
                    kept.cells
                        .insert(pattern.to_string(), (Arc::clone(&cell), weight));
                    kept.order.push_back(pattern.to_string());
                    kept.bytes = kept.bytes.saturating_add(weight);
                    kept.trim();
                    cell
                }
            }
        };
        let mut built_here = None;
        let result = cell
            .get_or_init(|| {
                let result = build();
                #[cfg(test)]
                self.built
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(pattern.to_string());
                built_here = Some(result.as_ref().map_or(0, Weight::weight));
                result
            })
            .clone();
        // What the build holds counts once it is known, if the pattern is still kept.
        if let Some(weight) = built_here {
            let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((kept_cell, kept_weight)) = kept.cells.get_mut(pattern)
                && Arc::ptr_eq(kept_cell, &cell)
            {
                *kept_weight = kept_weight.saturating_add(weight);
                kept.bytes = kept.bytes.saturating_add(weight);
                kept.trim();
            }
        }
        result
    }

    /// Whether `pattern` has been built in this process, whether or not it is still kept.
    #[cfg(test)]
    pub fn was_built(&self, pattern: &str) -> bool {
        self.times_built(pattern) > 0
    }

    /// How many times `pattern` has been built in this process.
    #[cfg(test)]
    pub fn times_built(&self, pattern: &str) -> usize {
        self.built
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|built| *built == pattern)
            .count()
    }
}

/// A post-processing rule's regex (`[[postprocess]] rule = "regex"`), as validation checks it
/// and the compiler applies it; the error is the regex crate's message.
///
/// It matches as `regex::Regex` does (the regex crate's own configuration and limits), built
/// without the one-pass engine: that engine only speeds up reading the capture groups of a
/// match that is already found, and building it took about 45% of a rule's build time (a
/// rule with `\w` takes about half a millisecond), paid again by every run of a workspace.
/// Nor is a full DFA tried: the rule's matches are found by its lazy DFA, and trying one
/// compiled the pattern a second time, backwards, which only patterns small enough for a full
/// DFA used, to search a little faster (a rule with `\w`: 0.47 against 0.25 ms, medians of
/// 300 builds; a dozen such rules were most of the registry shape's build thread). The regex
/// crate refuses a pattern whose backward form passes the size limit: that form is compiled,
/// and such a pattern refused alike, only for a large pattern (see
/// [`refuse_large_backward_form`]). Fuel and the workspace's total count the regex at
/// [`rule_size`], twice what it now compiles to.
pub fn postprocess_regex(pattern: &str) -> Result<meta::Regex, String> {
    static REGEXES: Built<meta::Regex> = Built::new();
    REGEXES.get(pattern, || {
        let config = meta::Config::new()
            .nfa_size_limit(Some(POSTPROCESS_NFA_LIMIT))
            .hybrid_cache_capacity(POSTPROCESS_CACHE)
            .match_kind(regex_automata::MatchKind::LeftmostFirst)
            .utf8_empty(true)
            .onepass(false)
            // The matches are found by the rule's own lazy DFA (`postprocess_lazy_dfa`), which
            // says when it gives up; this regex finds the groups within a match, or searches a
            // text the lazy DFA gave up on, paid for.
            .hybrid(false)
            .dfa(false);
        let regex = meta::Builder::new()
            .configure(config)
            .syntax(rule_syntax())
            .build(pattern)
            .map_err(|error| {
                // The regex crate words the same failure for users: its message, when the
                // crate agrees that the pattern fails.
                regex::Regex::new(pattern)
                    .map_or_else(|error| regex_message(&error), |_| error.to_string())
            })?;
        if regex.memory_usage() > POSTPROCESS_NFA_LIMIT / 8 {
            refuse_large_backward_form(pattern)?;
        }
        refuse_large_capture_table(&regex)?;
        Ok(regex)
    })
}

/// The most the clean-up regexes of a workspace count together, each at its [`rule_size`]:
/// each may compile to up to [`POSTPROCESS_NFA_LIMIT`], and three hundred rules near it took
/// gigabytes.
const POSTPROCESS_TOTAL_LIMIT: usize = 32 << 20;

/// The clean-up rules' regexes, in their order, each as [`postprocess_regex`] builds it; once
/// those before one count more than [`POSTPROCESS_TOTAL_LIMIT`] together, it and the rest are
/// refused unbuilt.
pub fn postprocess_regexes<'p>(
    patterns: impl IntoIterator<Item = &'p str>,
) -> Vec<Result<meta::Regex, String>> {
    let mut total = 0usize;
    patterns
        .into_iter()
        .map(|pattern| {
            if total > POSTPROCESS_TOTAL_LIMIT {
                return Err(format!(
                    "the clean-up regexes before it count more than {} MiB together (each twice the memory it compiles to), the most a workspace's rules may take: simplify them, or merge rules into one pattern",
                    POSTPROCESS_TOTAL_LIMIT >> 20
                ));
            }
            let built = postprocess_regex(pattern);
            if let Ok(regex) = &built {
                total = total.saturating_add(rule_size(regex));
            }
            built
        })
        .collect()
}

/// The memory a post-processing rule's pattern may compile to.
const POSTPROCESS_NFA_LIMIT: usize = 10 << 20;
/// The lazy DFA's cache of a post-processing rule, as the regex crate sizes it.
const POSTPROCESS_CACHE: usize = 2 << 20;

/// A post-processing rule's regex as the lazy DFA alone: it finds the rule's matches in time
/// proportional to the prompt's length, or gives up. It gives up, as the regex crate's own
/// engine does before it falls back to one that steps through the pattern's states for each
/// byte, when it keeps clearing its cache of states (a pattern such as
/// `(?:[0-9]{0,200}[0-4]){5}[a-z]` over a long text), or meets a Unicode word boundary next
/// to a non-ASCII byte. `None` for a pattern whose forward automaton cannot be built: every
/// search is then paid for as slow (see [`search_fuel`]). A rule whose backward automaton
/// cannot be built (it may be larger than the forward one) still finds matches that start at
/// its literal with the forward one; a search that needs both is paid for as slow.
pub fn postprocess_lazy_dfa(pattern: &str) -> Option<Arc<LazyRule>> {
    static LAZY: Built<Arc<LazyRule>, ()> = Built::new();
    LAZY.get(pattern, || LazyRule::build(pattern).map(Arc::new).ok_or(()))
        .ok()
}

/// A clean-up rule's lazy DFA: the forward automaton, built with the rule, and the forward
/// and backward pair a search that cannot start at the rule's literal needs, built the first
/// time one does. Most rules start with a literal and never need the backward automaton, and
/// building it (of `\w`, thousands of states over UTF-8, backwards) took about half of
/// what the lazy DFA of such a rule took to build, for every run of a workspace.
pub struct LazyRule {
    pattern: String,
    forward: hybrid::dfa::DFA,
    /// A fresh cache of the forward automaton, holding the states of the rule's literal start
    /// (see [`LazyRule::warmed_cache`]), copied for each prompt the rule searches: making one
    /// adds its first states one by one (about four times as long as copying them, for each
    /// rule of each compile), and every copy is the same, so what a search builds and pays
    /// depends on the prompt alone. Only a rule with a literal start searches with the
    /// forward automaton alone; the others have none.
    fresh_forward: Option<hybrid::dfa::Cache>,
    both: OnceLock<Option<(hybrid::regex::Regex, hybrid::regex::Cache)>>,
}

/// What the rule holds once built: the forward automaton, its warmed cache, and the pair of
/// automata of a rule that needs them for every search (built with it). The pair a search
/// builds later is not counted.
impl Weight for LazyRule {
    fn weight(&self) -> usize {
        let both = self
            .both
            .get()
            .and_then(Option::as_ref)
            .map_or(0, |(regex, cache)| {
                regex.forward().memory_usage()
                    + regex.reverse().memory_usage()
                    + cache.memory_usage()
            });
        self.forward.memory_usage()
            + self
                .fresh_forward
                .as_ref()
                .map_or(0, hybrid::dfa::Cache::memory_usage)
            + both
    }
}

impl LazyRule {
    fn build(pattern: &str) -> Option<Self> {
        let syntax = rule_syntax();
        let hir = regex_automata::util::syntax::parse_with(pattern, &syntax).ok();
        // The literal a match starts with, searched for first as the regex crate does: most
        // rules start with one, and the prompt is read at the speed of `memchr`.
        let prefilter = hir.as_ref().and_then(|hir| {
            regex_automata::util::prefilter::Prefilter::from_hir_prefix(
                regex_automata::MatchKind::LeftmostFirst,
                hir,
            )
        });
        let config = lazy_dfa_config().prefilter(prefilter);
        let forward = hybrid::dfa::Builder::new()
            .syntax(syntax)
            .thompson(lazy_nfa_config())
            .configure(config)
            .build(pattern)
            .ok()?;
        let mut rule = Self {
            pattern: pattern.to_string(),
            forward,
            fresh_forward: None,
            both: OnceLock::new(),
        };
        if rule.literal_starts().is_some() {
            rule.fresh_forward = Some(rule.warmed_cache(hir.as_ref()));
        } else {
            // A rule whose matches cannot be found from a literal needs both automata for
            // every search: they are built with it, on the thread building the workspace's
            // rules.
            rule.both();
        }
        Some(rule)
    }

    /// A fresh cache of the forward automaton that already holds the states the rule's
    /// searches start through: every search of a rule with a literal start is anchored where
    /// the literal occurs, and its first states, built in every compile, were most of what
    /// finding one match cost (`(?m)^NOTE0: (\w+)`: 7.8 µs a search from an empty cache, 4.6
    /// from one that holds its literal's states, in a scratch crate). They are built here,
    /// once, by anchored searches of each literal the pattern starts with, at the start of a
    /// text, of a line and after a space: the states come from the pattern alone, so a copy
    /// is the same fresh cache for every prompt and what a search pays still depends on the
    /// prompt alone; it no longer pays for those states. Nothing is built ahead for a pattern
    /// larger than [`WARM_NFA_BYTES`] (whose states take longest to build); a warming search
    /// that clears the cache, or leaves it holding more than [`WARM_STATE_BYTES`] or the
    /// pattern's own size, is not kept.
    fn warmed_cache(&self, hir: Option<&regex_syntax::hir::Hir>) -> hybrid::dfa::Cache {
        use regex_automata::{Anchored, Input};
        use regex_syntax::hir::literal::{ExtractKind, Extractor};

        let empty = hybrid::dfa::Cache::new(&self.forward);
        let pattern_bytes = self.forward.get_nfa().memory_usage();
        let Some(hir) = hir.filter(|_| pattern_bytes <= WARM_NFA_BYTES) else {
            return empty;
        };
        // The states kept take no more than the pattern compiled to (nor than
        // `WARM_STATE_BYTES`), so that what bounds the workspace's patterns together bounds them
        // too: a small pattern whose classes make every state wide would otherwise keep many
        // times its own size.
        let most = WARM_STATE_BYTES.min(pattern_bytes);
        let starts = Extractor::new()
            .kind(ExtractKind::Prefix)
            .limit_literal_len(WARM_LITERAL_BYTES)
            .limit_total(WARM_LITERALS)
            .extract(hir);
        let Some(literals) = starts.literals() else {
            return empty;
        };
        // Kept as copies, which is what each search starts from: a copy leaves out the scratch
        // space the searches grew, which the memory a cache counts includes.
        let mut kept = empty.clone();
        let mut text = Vec::with_capacity(WARM_LITERAL_BYTES + 1);
        for literal in literals.iter().take(WARM_LITERALS) {
            for before in [&b""[..], b"\n", b" "] {
                text.clear();
                text.extend_from_slice(before);
                text.extend_from_slice(literal.as_bytes());
                let input = Input::new(&text)
                    .span(before.len()..text.len())
                    .anchored(Anchored::Yes);
                let mut cache = kept.clone();
                let _ = self.forward.try_search_fwd(&mut cache, &input);
                let grown = cache.memory_usage().saturating_sub(empty.memory_usage());
                // A search that cleared the cache or passed the most is not kept: what the
                // searches before it built is.
                if cache.clear_count() > 0 || grown > most {
                    return kept;
                }
                kept = cache.clone();
            }
        }
        kept
    }

    /// Where the rule's matches may start, for a pattern that starts with a literal and
    /// matches no empty text: each match starts where the literal does.
    pub fn literal_starts(&self) -> Option<&regex_automata::util::prefilter::Prefilter> {
        self.forward
            .get_config()
            .get_prefilter()
            .filter(|_| !self.forward.get_nfa().has_empty())
    }

    /// The forward automaton, which finds where a match ends.
    pub fn forward(&self) -> &hybrid::dfa::DFA {
        &self.forward
    }

    /// A fresh cache for the forward automaton: a copy of the rule's own, or one made for a
    /// rule without (which searches with the forward automaton alone only in tests).
    pub fn forward_cache(&self) -> hybrid::dfa::Cache {
        self.fresh_forward
            .clone()
            .unwrap_or_else(|| hybrid::dfa::Cache::new(&self.forward))
    }

    /// The forward automaton with the backward one that finds where a match starts, as
    /// `hybrid::regex::Builder` makes them; `None` when the backward one cannot be built (a
    /// search then goes to the regex crate's engine, paid for).
    pub fn both(&self) -> Option<&hybrid::regex::Regex> {
        self.both_built().map(|(both, _)| both)
    }

    /// A fresh cache for [`LazyRule::both`], copied as the forward one is.
    pub fn both_cache(&self) -> Option<hybrid::regex::Cache> {
        self.both_built().map(|(_, fresh)| fresh.clone())
    }

    fn both_built(&self) -> Option<&(hybrid::regex::Regex, hybrid::regex::Cache)> {
        self.both
            .get_or_init(|| {
                // The backward automaton as `hybrid::regex::Builder::build` configures it:
                // the forward one's settings, reversed, with every match kept and no
                // prefilter.
                let reverse = hybrid::dfa::Builder::new()
                    .syntax(rule_syntax())
                    .thompson(lazy_nfa_config().reverse(true))
                    .configure(
                        lazy_dfa_config()
                            .prefilter(None)
                            .specialize_start_states(false)
                            .match_kind(regex_automata::MatchKind::All),
                    )
                    .build(&self.pattern)
                    .ok()?;
                let both =
                    hybrid::regex::Builder::new().build_from_dfas(self.forward.clone(), reverse);
                let fresh = both.create_cache();
                Some((both, fresh))
            })
            .as_ref()
    }
}

#[cfg(test)]
impl LazyRule {
    /// Whether a search has needed the backward automaton, which built it.
    pub fn built_backward(&self) -> bool {
        self.both.get().is_some()
    }

    /// A fresh cache of the forward automaton made again as the rule made its own.
    #[cfg(test)]
    pub fn fresh_made_again(&self) -> hybrid::dfa::Cache {
        if self.literal_starts().is_none() {
            return hybrid::dfa::Cache::new(&self.forward);
        }
        let syntax = rule_syntax();
        let hir = regex_automata::util::syntax::parse_with(&self.pattern, &syntax).ok();
        self.warmed_cache(hir.as_ref())
    }
}

impl std::fmt::Debug for LazyRule {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("LazyRule")
            .field("pattern", &self.pattern)
            .finish_non_exhaustive()
    }
}

/// The largest forward automaton whose first states [`LazyRule::warmed_cache`] builds
/// ahead: a state of a larger one may hold thousands of the pattern's states, and take long
/// to build, for a rule whose literal no prompt may hold.
const WARM_NFA_BYTES: usize = 64 << 10;
/// The most bytes of each literal start, and the most literals, warmed with.
const WARM_LITERAL_BYTES: usize = 16;
const WARM_LITERALS: usize = 8;
/// The most memory of states kept ahead (and no more than the pattern's own).
const WARM_STATE_BYTES: usize = 32 << 10;

/// How a clean-up rule's patterns are parsed, by every engine that searches them.
fn rule_syntax() -> regex_automata::util::syntax::Config {
    regex_automata::util::syntax::Config::new().utf8(true)
}

/// How a clean-up rule's patterns compile for the lazy DFA: without capture states, which it
/// does not use.
fn lazy_nfa_config() -> regex_automata::nfa::thompson::Config {
    regex_automata::nfa::thompson::Config::new()
        .utf8(true)
        .nfa_size_limit(Some(POSTPROCESS_NFA_LIMIT))
        .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
}

/// A clean-up rule's lazy DFA: it gives up as the regex crate's does (see
/// [`postprocess_lazy_dfa`]).
fn lazy_dfa_config() -> hybrid::dfa::Config {
    hybrid::dfa::Config::new()
        .match_kind(regex_automata::MatchKind::LeftmostFirst)
        .cache_capacity(POSTPROCESS_CACHE)
        .minimum_cache_clear_count(Some(3))
        .minimum_bytes_per_state(Some(10))
        .unicode_word_boundary(true)
}

/// What a clean-up rule's regex counts as, in bytes, for its fuel and for the workspace's
/// [`POSTPROCESS_TOTAL_LIMIT`]: twice the memory it compiles to. The fuel was calibrated when
/// the regex compiled the pattern forwards and backwards, the backward one for a full DFA
/// (see [`postprocess_regex`]); the regex now holds the forward one alone, which is what a
/// search that steps through the pattern steps through, and on the calibrating pattern
/// (`(?:[0-9]{0,200}[0-4]){5}[a-z]`) the two took 1.93 times what it takes alone.
/// Patterns whose backward form was larger still (Unicode classes, 3.1 times for
/// `(?m)^NOTE: (\w+)`) or that had a full DFA (6.5 times for `(?m)^#+\s*$`) were charged above
/// the rate of that stepping; now every pattern is charged at it.
pub fn rule_size(regex: &meta::Regex) -> usize {
    regex.memory_usage().saturating_mul(2)
}

/// What building a regex costs, in fuel: one per [`BYTES_PER_FUEL`] bytes it compiled to.
/// Building a pattern takes far longer than a template instruction (a regular expression of
/// 1 MiB, such as `(?i)\w{20}`, about 5 ms): 1 MiB is 262 144 fuel, a model-id pattern or
/// glob a few thousand.
pub fn build_fuel(regex: &meta::Regex) -> u64 {
    size_fuel(regex.memory_usage())
}

/// The fuel of a pattern that counts as `size` bytes: see [`build_fuel`].
fn size_fuel(size: usize) -> u64 {
    (size as u64 / BYTES_PER_FUEL).max(1)
}

const BYTES_PER_FUEL: u64 = 4;

/// What searching `len` bytes with a pattern that counts as `size` bytes (its memory, or a
/// clean-up rule's [`rule_size`]) may cost, in fuel: the text's length times the pattern's
/// fuel (see [`build_fuel`]), over [`SEARCH_COST_DIVISOR`], for a text longer than
/// [`FREE_SEARCH_BYTES`]. That is the search that steps through the pattern's states for each
/// byte: the clean-up rule `(?:[0-9]{0,200}[0-4]){5}[a-z]` (26 135 fuel) reads about 120 KB a
/// second so, and costs about 51 fuel a byte. Most patterns search far faster than this
/// (`(?i)browser` given to `matching`, 481, at hundreds of megabytes a second): a search of
/// a 2 KB text with it costs about 1 900.
pub fn search_fuel(len: usize, size: usize) -> u64 {
    if len <= FREE_SEARCH_BYTES {
        return 0;
    }
    stepped_fuel(len, size)
}

/// What stepping through the states of a pattern that counts as `size` bytes for each of
/// `len` bytes may cost, in fuel, however short the text: see [`search_fuel`]. Finding the
/// groups of a match is such a search of the match, and a pattern of ten thousand repetitions
/// took 50 ms over 255 bytes.
pub fn stepped_fuel(len: usize, size: usize) -> u64 {
    (len.max(1) as u64).saturating_mul(size_fuel(size)) / SEARCH_COST_DIVISOR
}

const SEARCH_COST_DIVISOR: u64 = 512;

/// Texts up to this long (model ids, names, short values, short matches) are searched for
/// free: whatever the pattern, searching them takes less than building it, which is paid for.
const FREE_SEARCH_BYTES: usize = 256;

/// At most this many bytes for the table of capture positions a rule's matcher keeps while it
/// searches.
const MAX_CAPTURE_TABLE: usize = 128 << 20;

/// Refuses a regex whose matcher would keep too large a table of capture positions. To find
/// the groups of a match, the regex engine keeps, for each state of the pattern, a position
/// for both ends of every group, in two tables (the positions at the byte it reads and at the
/// next): `(a)?` repeated 8000 times within the size limit asked for gigabytes at its first
/// search, and the process aborted. The states are bounded by the memory the pattern compiled
/// to (each takes at least 16 bytes of it).
fn refuse_large_capture_table(regex: &meta::Regex) -> Result<(), String> {
    let groups = regex.captures_len();
    let table = capture_table(regex);
    if groups > 1 && table > MAX_CAPTURE_TABLE {
        return Err(format!(
            "its {} capture groups would need about {} MB to match over a pattern this large (at most {} MB): write the groups the replacement does not use as `(?:…)`",
            groups - 1,
            table >> 20,
            MAX_CAPTURE_TABLE >> 20
        ));
    }
    Ok(())
}

/// The bytes of the tables of capture positions the regex's PikeVM may keep (see
/// [`refuse_large_capture_table`]), at least a position for each end of the whole match.
fn capture_table(regex: &meta::Regex) -> usize {
    (regex.memory_usage() / 16)
        .saturating_mul(regex.captures_len().max(1).saturating_mul(2))
        .saturating_mul(size_of::<usize>())
        .saturating_mul(2)
}

/// Refuses, with the regex crate's message, a pattern whose backward form compiles to more
/// than [`POSTPROCESS_NFA_LIMIT`] and that the regex crate refuses for it (`\w{300}`): the
/// regex crate compiles a pattern backwards too, within the same limit. A clean-up rule's
/// regex compiles only the forward form (see [`postprocess_regex`]), and compiling the
/// backward one costs about as much, so it is compiled only for a pattern whose forward form
/// passes an eighth of the limit: the backward form of repeated Unicode classes, `.`, `\d` or
/// `[^a]` took 1.6 to 3.2 times the forward one's memory. A pattern under that whose backward
/// form alone passes the limit (a class of thousands of characters that share their last
/// byte, repeated, took a hundred times) is accepted where the regex crate refuses it; its
/// matches are found forwards from its literal, or searched state by state and paid for.
fn refuse_large_backward_form(pattern: &str) -> Result<(), String> {
    regex_automata::nfa::thompson::Compiler::new()
        .syntax(rule_syntax())
        .configure(lazy_nfa_config().reverse(true))
        .build(pattern)
        .map(drop)
        .or_else(|_| {
            // The regex crate need not compile the pattern backwards at all (a list of
            // literals is searched without): it decides.
            regex::Regex::new(pattern)
                .map(drop)
                .map_err(|error| regex_message(&error))
        })
}

/// How deep a glob's `{…}` alternatives may nest. globset turns a glob into a regex with one
/// call per level: braces nested some tens of thousands deep (a few hundred kilobytes of a
/// rules file's `globs`, or a `glob` test's pattern) overflowed the stack and the process
/// aborted. Real globs nest one or two deep.
pub const GLOB_NESTING: usize = 32;

/// Refuses a glob whose braces nest deeper than [`GLOB_NESTING`], before globset parses it.
/// Every `{` and `}` counts, escaped or in a `[…]` class: globset's own rules for those differ
/// by platform and position (a `\` in a class is a character, not an escape), and a guard that
/// follows them wrongly lets the braces past. Counting them all refuses only globs no one
/// writes.
pub fn refuse_deep_glob(pattern: &str) -> Result<(), String> {
    let mut depth = 0usize;
    for c in pattern.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth > GLOB_NESTING {
                    return Err(format!(
                        "its `{{…}}` alternatives nest more than {GLOB_NESTING} deep"
                    ));
                }
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// A glob's matcher: the regex globset makes of it, matched against a path's bytes as
/// `GlobMatcher` matches, but built to return its error. globset's own `compile_matcher`
/// panics when the regex of a glob it parsed does not build, and a glob of a few hundred
/// thousand character classes does not; `limit` bounds what the regex may compile to.
pub fn glob_regex(glob: &globset::Glob, limit: usize) -> Result<meta::Regex, String> {
    let syntax = regex_automata::util::syntax::Config::new()
        .utf8(false)
        .dot_matches_new_line(true);
    // Only whether it matches is asked: without capture states, the engine keeps no table
    // of their positions (see `refuse_large_capture_table`). A glob is matched against a
    // model id: its lazy DFA alone, as for `matching` (see `model_id::build_regex`).
    let config = meta::Config::new()
        .utf8_empty(false)
        .nfa_size_limit(Some(limit))
        .hybrid_cache_capacity(limit)
        .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
        .dfa(false)
        .auto_prefilter(false);
    meta::Builder::new()
        .syntax(syntax)
        .configure(config)
        .build(glob.regex())
        .map_err(|error| match error.size_limit() {
            Some(limit) => format!("it compiles to more than {limit} bytes"),
            None => error.to_string(),
        })
}

/// The lazy DFA's cache of a rule's globs, each way.
const GLOB_SET_CACHE: usize = 128 << 10;

/// Globs matched together: one regex of all their patterns, which tells which of them match
/// a path (as `GlobSet::matches` does), without capture states. globset's own set keeps a
/// position per state for each pattern while it searches: a rule of a thousand globs of
/// ninety `?` each, matched against a long path, asked for gigabytes and the process aborted.
/// `limit` bounds what the patterns may compile to.
pub fn glob_set_regex(globs: &[globset::Glob], limit: usize) -> Result<meta::Regex, String> {
    let syntax = regex_automata::util::syntax::Config::new()
        .utf8(false)
        .dot_matches_new_line(true);
    // Searched on the paths of active files, a few states each: a lazy DFA of 128 KiB holds
    // those of many searches (the default of 2 MiB each way is made for long texts, and is
    // what a rule would be counted at among the patterns kept, see `search_caches`). The
    // backtracker finds no overlapping matches, which are all this set is asked for.
    let config = meta::Config::new()
        .utf8_empty(false)
        .match_kind(regex_automata::MatchKind::All)
        .nfa_size_limit(Some(limit))
        .hybrid_cache_capacity(GLOB_SET_CACHE)
        .backtrack(false)
        .which_captures(regex_automata::nfa::thompson::WhichCaptures::None);
    let patterns: Vec<&str> = globs.iter().map(globset::Glob::regex).collect();
    meta::Builder::new()
        .syntax(syntax)
        .configure(config)
        .build_many(&patterns)
        .map_err(|error| match error.size_limit() {
            Some(limit) => format!("the rule's globs compile to more than {limit} bytes"),
            None => error.to_string(),
        })
}

/// The regex crate's message without its quoted pattern and `error:` prefix.
fn regex_message(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text.lines().last().unwrap_or_default().trim();
    last.strip_prefix("error:")
        .unwrap_or(last)
        .trim()
        .to_string()
}

/// Builds a workspace's post-processing regexes on another thread, while the rest of the
/// workspace loads: validation and the first compile then find them built (a dozen regexes
/// with Unicode classes take several milliseconds). Without a thread, they are built when
/// first needed.
pub fn build_ahead(patterns: Vec<String>) {
    /// The most rules built ahead: a real workspace has a dozen.
    const AHEAD: usize = 64;

    if patterns.is_empty() {
        return;
    }
    crate::ahead::run(move || {
        let built = postprocess_regexes(patterns.iter().take(AHEAD).map(String::as_str));
        for (pattern, regex) in patterns.iter().zip(built) {
            if regex.is_ok() {
                let _ = postprocess_lazy_dfa(pattern);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glob_is_refused_only_for_braces_that_nest_too_deep() {
        let nested = |depth: usize| format!("{}a{}", "{".repeat(depth), "}".repeat(depth));
        assert_eq!(refuse_deep_glob(&nested(GLOB_NESTING)), Ok(()));
        assert!(refuse_deep_glob(&nested(GLOB_NESTING + 1)).is_err());
        // Side by side is not nested.
        assert_eq!(refuse_deep_glob(&"{a,b}".repeat(10_000)), Ok(()));
        assert_eq!(refuse_deep_glob(&"\\{a\\}[{}]".repeat(10_000)), Ok(()));
        // A class or an escape before the braces does not hide them: in globset, `[\]` is a
        // class holding `\`, and the braces after it nest.
        assert!(refuse_deep_glob(&format!("[\\]{}", nested(GLOB_NESTING + 1))).is_err());
        assert!(refuse_deep_glob(&format!("\\{}", nested(GLOB_NESTING + 1))).is_err());
    }

    /// A clean-up rule's regex counts twice what it compiles to (see [`rule_size`]): the
    /// pattern the fuel was calibrated on, when it compiled forwards and backwards (25 238 fuel
    /// to build), costs at least the fuel a byte it was calibrated at.
    #[test]
    fn the_calibrating_rule_costs_at_least_its_calibrated_fuel() {
        let regex = postprocess_regex(r"(?:[0-9]{0,200}[0-4]){5}[a-z]").unwrap();
        assert!(stepped_fuel(1024, rule_size(&regex)) >= 1024 * 25_238 / SEARCH_COST_DIVISOR);
        // Not far above it either: rules that searched within their fuel still do.
        assert!(stepped_fuel(1024, rule_size(&regex)) <= 1024 * 27_000 / SEARCH_COST_DIVISOR);
    }

    /// A copy of the rule's fresh cache searches as the same cache made again (for a rule
    /// with no literal start, a cache made for the search) does: the same matches, and the
    /// same states built, memory and bytes read after each search, which is what a search
    /// pays for. That depends on regex-automata counting only what a copy keeps (lengths, and
    /// the capacity of buffers a new cache has not used yet): this test is what tells when an
    /// upgrade changes that.
    #[test]
    fn a_copied_cache_searches_as_a_fresh_one() {
        use regex_automata::Input;
        let cases = [
            (
                r"(?m)^NOTE: (\w+)",
                "NOTE: héllo wörld\nnote: x\nNOTE: y\n".repeat(40),
            ),
            (
                r"(?:[0-9]{0,20}[0-4]){5}[a-z]",
                format!("{}a", "0123456789".repeat(300)),
            ),
            (r"(?m)[ \t]+$", "a  \nb\t\nc\n".repeat(50)),
        ];
        let state = |cache: &hybrid::dfa::Cache| {
            (
                cache.memory_usage(),
                cache.clear_count(),
                cache.search_total_len(),
            )
        };
        for (pattern, text) in cases {
            let rule = postprocess_lazy_dfa(pattern).unwrap();
            let mut made = rule.fresh_made_again();
            let mut copied = rule.forward_cache();
            assert_eq!(state(&made), state(&copied), "{pattern}");
            for (start, _) in text.char_indices().step_by(37) {
                let input = Input::new(&text).range(start..);
                let found = rule.forward().try_search_fwd(&mut made, &input);
                let again = rule.forward().try_search_fwd(&mut copied, &input);
                assert_eq!(found, again, "{pattern} at {start}");
                assert_eq!(state(&made), state(&copied), "{pattern} at {start}");
            }
            let both = rule.both().unwrap();
            let mut made = both.create_cache();
            let mut copied = rule.both_cache().unwrap();
            for (start, _) in text.char_indices().step_by(53) {
                let input = Input::new(&text).range(start..);
                assert_eq!(
                    both.try_search(&mut made, &input),
                    both.try_search(&mut copied, &input),
                    "{pattern} at {start}"
                );
                let (made_forward, made_reverse) = made.as_parts_mut();
                let (made_forward, made_reverse) = (state(made_forward), state(made_reverse));
                let (forward, reverse) = copied.as_parts_mut();
                assert_eq!(
                    (made_forward, made_reverse),
                    (state(forward), state(reverse))
                );
            }
        }
        // A search that fills the cache until it is cleared, then gives up, does so alike.
        let pattern = r"(?:[0-9]{0,200}[0-4]){5}[a-z]";
        let rule = postprocess_lazy_dfa(pattern).unwrap();
        // Digits in no period, so that the states do not repeat.
        let mut seed = 7u32;
        let text: String = (0..100_000)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from(b'0' + u8::try_from((seed >> 16) % 10).unwrap_or(0))
            })
            .collect();
        let mut made = hybrid::dfa::Cache::new(rule.forward());
        let mut copied = rule.forward_cache();
        let input = Input::new(&text);
        let found = rule.forward().try_search_fwd(&mut made, &input);
        assert_eq!(found, rule.forward().try_search_fwd(&mut copied, &input));
        assert!(found.is_err(), "the lazy DFA gives up on {pattern}");
        assert!(made.clear_count() > 0);
        assert_eq!(state(&made), state(&copied));
    }

    /// A rule that starts with a literal keeps a fresh cache that holds the states its
    /// searches start through, the same at every build: a search from a copy finds what a
    /// search from an empty cache finds, and builds less. A pattern too large to warm keeps
    /// an empty one.
    #[test]
    fn a_fresh_cache_holds_the_states_of_the_rule_s_literal_start() {
        use regex_automata::{Anchored, Input};
        let state = |cache: &hybrid::dfa::Cache| (cache.memory_usage(), cache.clear_count());
        let rule = LazyRule::build(r"(?m)^(?:NOTE|TODO): (\w+)").unwrap();
        let empty = hybrid::dfa::Cache::new(rule.forward());
        let fresh = rule.forward_cache();
        assert!(fresh.memory_usage() > empty.memory_usage());
        assert_eq!(fresh.clear_count(), 0);
        assert_eq!(state(&rule.fresh_made_again()), state(&fresh));
        let text = "text\nNOTE: first words\nTODO: ünïcode\nNOTE:  none\n";
        for start in [5, 23, 40] {
            let input = Input::new(text).range(start..).anchored(Anchored::Yes);
            let (mut from_empty, mut from_fresh) = (empty.clone(), fresh.clone());
            let found = rule.forward().try_search_fwd(&mut from_empty, &input);
            let again = rule.forward().try_search_fwd(&mut from_fresh, &input);
            assert_eq!(found, again, "at {start}");
            let built_from_empty = from_empty.memory_usage() - empty.memory_usage();
            let built_from_fresh = from_fresh.memory_usage() - fresh.memory_usage();
            assert!(built_from_fresh < built_from_empty, "at {start}");
        }
        // What the states kept take, on a 64-bit machine: the same in every process, and what
        // tells when an upgrade of regex-automata changes what is built ahead.
        assert_eq!(fresh.memory_usage() - empty.memory_usage(), 6_140);
        // A small pattern whose classes make every state wide keeps no more than its size
        // (here nothing: its literal's states alone take several times that).
        let class: String = (0u8..128).map(|byte| format!("\\x{byte:02x}")).collect();
        let wide = LazyRule::build(&format!("qwertyuiopasdfgh[{class}]")).unwrap();
        let kept = wide.forward_cache().memory_usage()
            - hybrid::dfa::Cache::new(wide.forward()).memory_usage();
        assert!(kept <= wide.forward().get_nfa().memory_usage());
        let large = LazyRule::build(r"NOTE: \w{40}").unwrap();
        assert!(large.forward().get_nfa().memory_usage() > WARM_NFA_BYTES);
        assert_eq!(
            large.forward_cache().memory_usage(),
            hybrid::dfa::Cache::new(large.forward()).memory_usage()
        );
    }

    /// A pattern the regex crate refuses because its backward form is too large is refused
    /// alike, with the crate's message, though the rule's regex compiles only the forward form;
    /// one just under it is built.
    #[test]
    fn a_pattern_too_large_backwards_is_refused_as_the_regex_crate_refuses_it() {
        let refused = regex::Regex::new(r"\w{300}").unwrap_err();
        assert_eq!(
            postprocess_regex(r"\w{300}").unwrap_err(),
            regex_message(&refused)
        );
        assert!(regex::Regex::new(r"\w{200}").is_ok());
        assert!(postprocess_regex(r"\w{200}").is_ok());
    }

    /// The table of capture positions counts both of the engine's tables: a long pattern with
    /// many groups whose one table fits under the limit, and whose two do not, is refused.
    #[test]
    fn a_capture_table_counts_both_of_the_engine_s_tables() {
        let pattern = format!("a{{100000}}{}", "(a)?".repeat(54));
        let error = postprocess_regex(&pattern).unwrap_err();
        assert!(error.contains("capture groups would need"), "{error}");
    }

    /// A test's build "holds" as many bytes as the number it gives.
    impl Weight for usize {
        fn weight(&self) -> usize {
            *self
        }
    }

    #[test]
    fn a_pattern_is_built_once_and_the_oldest_goes_past_the_bounds() {
        let built: Built<usize> = Built::new();
        let builds = std::cell::Cell::new(0);
        let get = |pattern: &str, weight: usize| {
            built.get(pattern, || {
                builds.set(builds.get() + 1);
                Ok(weight)
            })
        };
        assert_eq!(get("abc", 3), Ok(3));
        assert_eq!(get("abc", 3), Ok(3));
        assert_eq!(builds.get(), 1);
        // Patterns asked for in turn again and again (as a runtime routes over a registry's
        // patterns) are each built once, as many as their weights allow.
        for _ in 0..3 {
            for n in 0..300 {
                get(&n.to_string(), 1000).ok();
            }
        }
        assert_eq!(builds.get(), 301);
        // Two that together hold more than the bound: the older ones go, "abc" and the
        // small ones among them, and the first large one with them.
        get("large", KEPT_BYTES / 2).ok();
        get("larger", KEPT_BYTES / 2 + 1).ok();
        assert_eq!(builds.get(), 303);
        // Dropped, and still known to have been built: what the tests of building ahead ask,
        // while the other tests' patterns push theirs out.
        assert!(built.was_built("abc") && !built.was_built("never asked for"));
        get("abc", 3).ok();
        get("large", KEPT_BYTES / 2).ok();
        assert_eq!(builds.get(), 305);
        get("abc", 3).ok();
        assert_eq!(builds.get(), 305);
        // Past the count, however small each one is.
        for n in 0..KEPT_PATTERNS {
            get(&format!("small {n}"), 0).ok();
        }
        let before = builds.get();
        get("abc", 3).ok();
        get(&format!("small {}", KEPT_PATTERNS - 1), 0).ok();
        assert_eq!(builds.get(), before + 1);
    }

    #[test]
    fn a_regex_weighs_the_caches_its_engines_may_grow() {
        let glob = |pattern: &str| globset::Glob::new(pattern).unwrap();
        // A routing glob may be searched on any text: its lazy DFA may grow to 1 MiB each way.
        let routing = glob_regex(&glob("openrouter/*"), 1 << 20).unwrap();
        assert!(routing.weight() > 2 << 20, "{}", routing.weight());
        assert!((60..=80).contains(&(KEPT_BYTES / routing.weight())));
        // A rule's globs are searched on paths, with a smaller cache and no backtracker: a
        // large project's rules are all kept.
        let rule = glob_set_regex(
            &[glob("src/area7/**/*.ts"), glob("lib/area7/*.rs")],
            10 << 20,
        )
        .unwrap();
        assert!(rule.weight() < 400 << 10, "{}", rule.weight());
        assert!(KEPT_BYTES / rule.weight() >= 400);
        // Smaller, and still matching as before.
        let mut matched = regex_automata::PatternSet::new(rule.pattern_len());
        rule.which_overlapping_matches(
            &regex_automata::Input::new("src/area7/deep/er/main.ts"),
            &mut matched,
        );
        assert_eq!(
            matched.iter().map(|id| id.as_usize()).collect::<Vec<_>>(),
            [0]
        );
    }

    #[test]
    fn a_pattern_asked_for_on_two_threads_at_once_is_built_once() {
        let built: Built<usize> = Built::new();
        let builds = std::sync::atomic::AtomicUsize::new(0);
        let barrier = std::sync::Barrier::new(4);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    barrier.wait();
                    built.get("slow", || {
                        builds.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        Ok(4)
                    })
                });
            }
        });
        assert_eq!(builds.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_bad_pattern_keeps_its_error() {
        assert!(postprocess_regex("(").is_err());
        assert!(postprocess_regex("(").is_err());
        assert!(postprocess_regex("a+").is_ok_and(|regex| regex.is_match("aa")));
    }

    #[test]
    fn a_failing_pattern_is_worded_as_the_regex_crate_words_it() {
        assert_eq!(
            postprocess_regex("a(").err().as_deref(),
            Some("unclosed group")
        );
        // Over the regex crate's default size limit, as `regex::Regex` is.
        assert!(regex::Regex::new(r"\w{1000}{1000}").is_err());
        assert!(postprocess_regex(r"\w{1000}{1000}").is_err());
    }
}
