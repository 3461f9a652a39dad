//! Token counts with OpenAI's BPE encodings, offline, through GitHub's `bpe-openai` (the
//! fastest to load and count of the offline implementations measured in
//! `benches/pipeline.rs`). The tables are loaded once per process, and only when a count is
//! not already known. A budget check asks first whether a bound on the count is within the
//! budget ([`Encoding::within`], [`Encoding::at_most`]), which needs no tables: only a prompt
//! whose bound passes its budget is counted.
//!
//! Every count is remembered by the SHA-256 of its text, for the process; the command line
//! also keeps them in a cache file of its own between runs ([`open_cache`], [`save_cache`]),
//! outside any workspace, so that an unchanged prompt is never counted twice and a run whose
//! counts are all known never loads the tables. A count is only ever computed from the text
//! itself: nothing a workspace holds can supply one.
//!
//! No faithful offline tokenizer exists for every model family, so counts for a family whose
//! real tokenizer differs are estimates; callers label them so.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::bounded_memo::BoundedMemo;

pub(crate) mod pieces;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// GPT-4o and later.
    #[default]
    O200k,
    /// GPT-4 and GPT-3.5.
    Cl100k,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200k => "o200k",
            Encoding::Cl100k => "cl100k",
        }
    }

    fn named(name: &str) -> Option<Self> {
        [Encoding::O200k, Encoding::Cl100k]
            .into_iter()
            .find(|encoding| encoding.name() == name)
    }

    /// The number of tokens in `text`; special-token text is counted as ordinary text.
    pub fn count(self, text: &str) -> usize {
        // A long text is not hashed whole: its parts are remembered instead.
        if text.len() > KEYED_BYTES {
            return self.whole_count(text);
        }
        let key = Key::of(self, text);
        if let Some(count) = counts().get(&key, text.len()) {
            return count;
        }
        // Counted without holding the lock: other threads may count meanwhile.
        let count = self.whole_count(text);
        learn(key, count);
        count
    }

    /// The count of `text`, in parts when it is long (see [`Encoding::count_in_parts`]).
    fn whole_count(self, text: &str) -> usize {
        // No count passes `usize::MAX`: the sum is always found.
        self.count_in_parts(text, COUNTED_PART, usize::MAX)
            .unwrap_or(usize::MAX)
    }

    /// The number of tokens in `text` if it is at most `limit`, else `None`, found reading
    /// about as much of the text as `limit` tokens take (the tokenizer stops once past it):
    /// a budget check needs to know how far over its budget a prompt is only up to a point,
    /// and a prompt of megabytes took a third of a second to count.
    pub fn count_within(self, text: &str, limit: usize) -> Option<usize> {
        // A token is at least one byte.
        if text.len() <= limit {
            return Some(self.count(text));
        }
        if let Some(count) = self.known_count(text) {
            return (count <= limit).then_some(count);
        }
        let total = self.count_in_parts(text, COUNTED_PART, limit)?;
        if text.len() <= KEYED_BYTES {
            learn(Key::of(self, text), total);
        }
        Some(total)
    }

    /// The count of `text` if it is at most `limit`.
    fn count_till(self, text: &str, limit: usize) -> Option<usize> {
        let tokenizer = self.tokenizer();
        tokenizer.count_till_limit(&tokenizer.normalize(text), limit)
    }

    /// The count of `text` if it is at most `limit`, as the sum of its parts' counts: its
    /// runs (whose pieces do not depend on the text around them, see [`pieces::runs`]) taken
    /// together up to `part` bytes, and a longer run cut into parts where a piece starts
    /// whatever precedes it, each such part's count remembered by its text for the process.
    /// A prompt that repeats a long text the prompts before it held (a section of megabytes
    /// in every prompt of a matrix) counts only what is new: each prompt of 15 MB was counted
    /// whole, 0.4 s each.
    fn count_in_parts(self, text: &str, part: usize, limit: usize) -> Option<usize> {
        let mut total = 0usize;
        for (cut, long_run) in pieces::counted_parts(text, part) {
            let left = limit - total;
            total += if long_run {
                self.remembered_count_within(cut, left)?
            } else {
                self.count_till(cut, left)?
            };
        }
        Some(total)
    }

    /// The count of one part of a long run, remembered by its text, if it is at most
    /// `limit`; a count found is remembered.
    fn remembered_count_within(self, part: &str, limit: usize) -> Option<usize> {
        if let Some(count) = self.part_counts().get(part) {
            return (count <= limit).then_some(count);
        }
        let count = self.count_till(part, limit)?;
        self.part_counts().insert(part.into(), count, part.len());
        Some(count)
    }

    fn part_counts(self) -> &'static BoundedMemo<Box<str>, usize> {
        &PART_COUNTS.get_or_init(|| [BoundedMemo::new(PART_BYTES), BoundedMemo::new(PART_BYTES)])
            [usize::from(self == Encoding::Cl100k)]
    }

    /// An upper bound on the number of tokens in `text`, found without loading the tables:
    /// the number of the encoding's pre-tokenizer pieces that are tokens, plus the bytes of
    /// the others (see [`pieces`]). A budget this fits needs no count.
    pub fn at_most(self, text: &str) -> usize {
        // Part by part (see [`pieces::remembered_parts`]): a prompt repeats most of the parts
        // of the prompts compiled before it, and each part's bound is remembered by its text
        // for the process.
        self.at_most_remembering(text, self.run_bounds())
    }

    fn at_most_remembering(self, text: &str, bounds: &BoundedMemo<Box<str>, usize>) -> usize {
        let (pattern, tokens) = self.pieces();
        let mut bounding = Bounding::new(tokens, bounds, text.len());
        let parts: Vec<&str> = pieces::remembered_parts(text).collect();
        for (run, known) in parts.iter().zip(bounds.get_each(&parts)) {
            match known {
                Some(bound) => bounding.total += bound,
                None => bounding.add_run(pattern, run),
            }
        }
        bounding.finish()
    }

    /// Whether [`Encoding::at_most`]'s bound on `text` is within `budget`: the same answer,
    /// found cutting no more of the text into pieces than it takes. A run's bound is at most
    /// its bytes, so the runs whose bounds are remembered, plus the bytes of the others, are
    /// already a bound: the others are cut, a few kilobytes at a time, only while that is
    /// above the budget, and not at all once what they have added passes it. A budget check
    /// asks only this: the first prompts of a run, whose runs are all new, are cut about two
    /// thirds of the way at a budget of twice their tokens, and a later prompt whose new
    /// runs fit the budget's room is not cut at all.
    pub fn within(self, text: &str, budget: usize) -> bool {
        self.within_remembering(text, budget, self.run_bounds())
    }

    fn within_remembering(
        self,
        text: &str,
        budget: usize,
        bounds: &BoundedMemo<Box<str>, usize>,
    ) -> bool {
        if text.len() <= budget {
            return true;
        }
        let mut known = 0usize;
        let mut unknown = Vec::new();
        let mut unknown_bytes = 0usize;
        let parts: Vec<&str> = pieces::remembered_parts(text).collect();
        for (run, bound) in parts.iter().zip(bounds.get_each(&parts)) {
            match bound {
                Some(bound) => known += bound,
                None => {
                    unknown.push(*run);
                    unknown_bytes += run.len();
                }
            }
        }
        let (pattern, tokens) = self.pieces();
        let mut bounding = Bounding::new(tokens, bounds, unknown_bytes);
        let mut since_settled = 0;
        for run in unknown {
            // Everything settled so far, and the rest at its bytes: a bound either way.
            if since_settled == 0 {
                let cut = known + bounding.total;
                if cut > budget {
                    return false;
                }
                if cut + unknown_bytes <= budget {
                    return true;
                }
            }
            bounding.add_run(pattern, run);
            unknown_bytes -= run.len();
            since_settled += run.len();
            if since_settled >= SETTLED_EVERY {
                bounding.look_up(false);
                since_settled = 0;
            }
        }
        known + bounding.finish() <= budget
    }

    /// Each run's bound remembered, for this encoding.
    fn run_bounds(self) -> &'static BoundedMemo<Box<str>, usize> {
        &RUN_BOUNDS.get_or_init(|| [BoundedMemo::new(BOUND_BYTES), BoundedMemo::new(BOUND_BYTES)])
            [usize::from(self == Encoding::Cl100k)]
    }

    fn pieces(self) -> (pieces::Pattern, &'static PieceSet) {
        match self {
            Encoding::O200k => (pieces::Pattern::O200k, &O200K_PIECES),
            Encoding::Cl100k => (pieces::Pattern::Cl100k, &CL100K_PIECES),
        }
    }

    /// The count of `text` when it is already known, without loading the tables.
    pub fn known_count(self, text: &str) -> Option<usize> {
        if text.len() > KEYED_BYTES {
            return None;
        }
        // The key (a hash of the whole text) is made before the lock is taken: the compile
        // threads of a matrix ask at the same time.
        let key = Key::of(self, text);
        counts().get(&key, text.len())
    }

    /// Starts loading the tables on another thread, so that the counts needed later wait for
    /// less of it (or none). Does nothing once they are loaded or loading.
    pub fn preload(self) {
        static STARTED: [OnceLock<()>; 2] = [OnceLock::new(), OnceLock::new()];
        let slot = match self {
            Encoding::O200k => &STARTED[0],
            Encoding::Cl100k => &STARTED[1],
        };
        slot.get_or_init(|| {
            // Without a thread (a low memory limit), the tables load when first needed.
            let _ = crate::cores::started(crate::cores::builder().spawn(move || {
                self.tokenizer();
            }));
        });
    }

    fn tokenizer(self) -> &'static bpe_openai::Tokenizer {
        match self {
            Encoding::O200k => bpe_openai::o200k_base(),
            Encoding::Cl100k => bpe_openai::cl100k_base(),
        }
    }
}

/// The pieces that are tokens (two bytes or more: every byte is a token), by encoding.
static O200K_PIECES: PieceSet = include!(concat!(env!("OUT_DIR"), "/o200k_pieces.rs"));
static CL100K_PIECES: PieceSet = include!(concat!(env!("OUT_DIR"), "/cl100k_pieces.rs"));

/// The most pieces [`Bounding`] keeps waiting for their lookup and the most runs it keeps
/// begun; the pieces looked up are forgotten once there are as many, so it holds fewer than
/// twice as many of those: what a bound holds does not grow with the prompt.
const BOUNDING_BATCH: usize = 1 << 14;

/// How many bytes of new runs [`Encoding::within`] cuts before it settles their bounds and
/// asks again whether the budget is met: enough for a batch of lookups to wait on memory
/// together, few enough that little is cut past the point where the answer is known.
const SETTLED_EVERY: usize = 4 * 1024;

/// The longest run whose bound is remembered: longer ones, as long as a prompt can be, are
/// not worth the copy, and would not repeat.
const LONGEST_REMEMBERED_RUN: usize = 64 * 1024;

/// The bounds of a prompt's runs not known yet, found in batches. A run's bound is the sum of
/// its pieces' bytes, less the bytes above one of each piece that is a token. Each piece of
/// two bytes or more (a single byte is always a token) that might be a token is looked up
/// once per batch, however often the prompt repeats it, since the static set is large enough
/// that each lookup waits on memory; a batch's lookups are made together (see
/// [`PieceSet::contains_each`]). A piece already looked up is counted as it is cut, so each
/// run is cut once and each piece hashed once (cutting and hashing twice, a 22 KB prompt
/// took 400 µs in a warm process, about 250 µs now); the batches keep what waits bounded
/// whatever the prompt holds.
struct Bounding<'t> {
    tokens: &'static PieceSet,
    memo: &'t BoundedMemo<Box<str>, usize>,
    /// The prompt's length, which sizes the tables.
    bytes: usize,
    /// Each piece asked about, by its text: its index in `asked`.
    lookup_of: rustc_hash::FxHashMap<&'t str, usize>,
    asked: Vec<&'t str>,
    /// Whether each of the first pieces of `asked` is a token: those looked up so far.
    is_token: Vec<bool>,
    /// The runs begun since the last lookups, each with its bound so far.
    runs: Vec<(&'t str, usize)>,
    /// Pieces waiting for their lookup: their run's index in `runs`, the bytes a token
    /// spares, and the index in `asked`.
    waiting: Vec<(usize, usize, usize)>,
    /// The bounds of the runs finished.
    total: usize,
}

impl<'t> Bounding<'t> {
    /// For a prompt of `bytes`: its tables are sized when the first run whose bound is not
    /// remembered begins (a prompt whose runs are all remembered needs none).
    fn new(
        tokens: &'static PieceSet,
        memo: &'t BoundedMemo<Box<str>, usize>,
        bytes: usize,
    ) -> Self {
        Self {
            tokens,
            memo,
            bytes,
            lookup_of: rustc_hash::FxHashMap::default(),
            asked: Vec::new(),
            is_token: Vec::new(),
            runs: Vec::new(),
            waiting: Vec::new(),
            total: 0,
        }
    }

    fn begin(&mut self, run: &'t str) {
        if self.asked.capacity() == 0 {
            // Sized for prose, within a batch: a piece every four or five bytes, a new one
            // every twenty or so.
            let new_pieces = (self.bytes / 16).min(BOUNDING_BATCH);
            self.lookup_of.reserve(new_pieces);
            self.asked.reserve(new_pieces);
            self.is_token.reserve(new_pieces);
            self.waiting.reserve(new_pieces);
        }
        self.runs.push((run, 0));
    }

    /// A run whose bound is not remembered, cut into its pieces: `Err` is text whose pieces
    /// are not known, which counts its bytes.
    fn add_run(&mut self, pattern: pieces::Pattern, run: &'t str) {
        self.begin(run);
        for piece in pieces::pieces(pattern, run) {
            match piece {
                Ok(range) if range.len() > 1 => match run.get(range.clone()) {
                    Some(piece) => self.may_be_a_token(piece),
                    None => self.not_a_token(range.len()),
                },
                Ok(range) | Err(range) => self.not_a_token(range.len()),
            }
        }
        self.end_run();
    }

    /// A piece that counts its bytes.
    fn not_a_token(&mut self, bytes: usize) {
        debug_assert!(!self.runs.is_empty(), "a piece outside a run");
        if let Some((_, bound)) = self.runs.last_mut() {
            *bound += bytes;
        }
    }

    /// A piece of two bytes or more that counts one if it is a token, else its bytes.
    fn may_be_a_token(&mut self, piece: &'t str) {
        let Some(run) = self.runs.len().checked_sub(1) else {
            return;
        };
        self.not_a_token(piece.len());
        let spared = piece.len() - 1;
        let asked = &mut self.asked;
        let lookup = *self.lookup_of.entry(piece).or_insert_with(|| {
            asked.push(piece);
            asked.len() - 1
        });
        match self.is_token.get(lookup) {
            Some(&true) => spare(&mut self.runs, run, spared),
            Some(&false) => {}
            None => {
                self.waiting.push((run, spared, lookup));
                if self.waiting.len() >= BOUNDING_BATCH {
                    self.look_up(true);
                }
            }
        }
    }

    fn end_run(&mut self) {
        if self.runs.len() >= BOUNDING_BATCH {
            self.look_up(false);
        }
    }

    /// Looks up the pieces waiting and settles every run but, `within_a_run`, the one being
    /// cut.
    fn look_up(&mut self, within_a_run: bool) {
        debug_assert!(self.waiting.len() <= BOUNDING_BATCH);
        debug_assert!(self.runs.len() <= BOUNDING_BATCH);
        debug_assert!(self.asked.len() < 2 * BOUNDING_BATCH);
        let asked = self.asked.get(self.is_token.len()..).unwrap_or_default();
        let found = self.tokens.contains_each(asked);
        self.is_token.extend(found);
        // Drained in place: the list keeps its capacity for the next batch.
        let Self {
            waiting,
            runs,
            is_token,
            ..
        } = self;
        for (run, spared, lookup) in waiting.drain(..) {
            if is_token.get(lookup) == Some(&true) {
                spare(runs, run, spared);
            }
        }
        let open = if within_a_run { self.runs.pop() } else { None };
        self.total += self.runs.iter().map(|&(_, bound)| bound).sum::<usize>();
        self.memo.insert_each(
            self.runs
                .drain(..)
                .filter(|(run, _)| run.len() <= LONGEST_REMEMBERED_RUN)
                .map(|(run, bound)| (run.into(), bound, run.len())),
        );
        self.runs.extend(open);
        if self.asked.len() >= BOUNDING_BATCH {
            self.lookup_of.clear();
            self.asked.clear();
            self.is_token.clear();
        }
    }

    /// The bounds of every run, once the last is cut.
    fn finish(mut self) -> usize {
        self.look_up(false);
        self.total
    }
}

/// Takes off a run's bound the bytes a piece that is a token spares.
fn spare(runs: &mut [(&str, usize)], run: usize, bytes: usize) {
    if let Some((_, bound)) = runs.get_mut(run) {
        *bound = bound.saturating_sub(bytes);
    }
}

/// A set of strings built with the binary (see build.rs): phf's perfect hash of them, and the
/// strings in its order in one text, each ending at its `ends`.
struct PieceSet {
    key: phf_shared::HashKey,
    disps: &'static [(u32, u32)],
    ends: &'static [u32],
    text: &'static str,
}

impl PieceSet {
    /// Whether each of `pieces` is in the set, in their order.
    ///
    /// A lookup is three loads from tables larger than the processor's caches (the
    /// displacement, the piece's bounds, its text), each needing the one before. Looked up one
    /// by one, a prompt's pieces waited on memory for each load in turn (half of the budget
    /// bound's time); a batch goes through the lookup stage by stage, and a stage's loads,
    /// independent of one another, are waited for together.
    fn contains_each(&self, pieces: &[&str]) -> Vec<bool> {
        const BATCH: usize = 16;
        let mut found = Vec::with_capacity(pieces.len());
        if self.ends.is_empty() || self.disps.is_empty() {
            found.resize(pieces.len(), false);
            return found;
        }
        let slots = u32::try_from(self.disps.len()).unwrap_or(u32::MAX);
        let len = u32::try_from(self.ends.len()).unwrap_or(u32::MAX);
        for batch in pieces.chunks(BATCH) {
            let mut hashes = [(0u32, 0u32, 0u32); BATCH];
            for (hash, piece) in hashes.iter_mut().zip(batch) {
                let phf_shared::Hashes { g, f1, f2, .. } = phf_shared::hash(*piece, &self.key);
                *hash = (g % slots, f1, f2);
            }
            let mut indexes = [0usize; BATCH];
            for (index, &(slot, f1, f2)) in indexes.iter_mut().zip(&hashes).take(batch.len()) {
                let (d1, d2) = self.disps.get(slot as usize).copied().unwrap_or_default();
                *index = (phf_shared::displace(f1, f2, d1, d2) % len) as usize;
            }
            let mut bounds = [(0usize, 0usize); BATCH];
            for (bound, &index) in bounds.iter_mut().zip(&indexes).take(batch.len()) {
                let start = index
                    .checked_sub(1)
                    .and_then(|before| self.ends.get(before))
                    .map_or(0, |&end| end as usize);
                let end = self.ends.get(index).map_or(0, |&end| end as usize);
                *bound = (start, end);
            }
            found.extend(
                batch
                    .iter()
                    .zip(&bounds)
                    .map(|(piece, &(start, end))| self.text.get(start..end) == Some(*piece)),
            );
        }
        found
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.ends.len()
    }
}

/// Each run's bound by its text, by encoding, o200k first (see [`Encoding::at_most`]): a
/// long-lived process (an agent) forgets what it learnt rather than grow.
static RUN_BOUNDS: OnceLock<[BoundedMemo<Box<str>, usize>; 2]> = OnceLock::new();

/// Keeps a count this process made, for the rest of the process and the cache file.
fn learn(key: Key, count: usize) {
    let mut counts = counts();
    counts.learnt.insert(key, count);
    counts.unsaved = true;
    // A long-lived process (an agent) forgets its oldest counts rather than grow.
    if counts.learnt.len() > 2 * CACHE_ENTRIES {
        counts.learnt.drain(..CACHE_ENTRIES);
    }
}

/// The counts of the parts of long runs, by their text, by encoding, o200k first (see
/// [`Encoding::count_in_parts`]).
static PART_COUNTS: OnceLock<[BoundedMemo<Box<str>, usize>; 2]> = OnceLock::new();

/// How many bytes of parts a process remembers the counts of, per encoding.
const PART_BYTES: usize = 32 * 1024 * 1024;

/// The longest text whose count is kept by the hash of its whole text (in the process and in
/// the cache file). A longer one is counted in parts, whose counts the process remembers:
/// hashing a prompt of megabytes whole, to look its count up, then again to keep it, and
/// again for each section as long, took a third of what counting it took.
const KEYED_BYTES: usize = 1024 * 1024;

/// A text longer than this is counted in parts (see [`Encoding::count_in_parts`]).
const COUNTED_PART: usize = 64 * 1024;

/// How many bytes of runs a process remembers the bounds of, per encoding.
const BOUND_BYTES: usize = 16 * 1024 * 1024;

/// A text's identity for its count: the encoding and the first 16 bytes of its SHA-256.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    encoding: Encoding,
    digest: u128,
}

impl Key {
    fn of(encoding: Encoding, text: &str) -> Self {
        let hash = Sha256::digest(text.as_bytes());
        let mut first = [0u8; 16];
        first.copy_from_slice(&hash[..16]);
        Key {
            encoding,
            digest: u128::from_be_bytes(first),
        }
    }
}

/// The counts known to this process, and the cache file they are read from (when first
/// needed) and saved to, if any.
#[derive(Default)]
struct Counts {
    /// The counts this process made, in the order it made them.
    learnt: IndexMap<Key, usize>,
    /// The counts looked up in the cache file so far, or all of its counts once it is indexed.
    found: HashMap<Key, usize>,
    file: Option<PathBuf>,
    /// The cache file's text, read the first time any count is asked for (a run that counts
    /// nothing does not read it). Its lines are searched as counts are asked for: a run asks
    /// for a few dozen, and a full cache holds 100,000, which take longer to parse than a
    /// dozen searches. Past [`SEARCHES`] searches, it is parsed whole instead (`indexed`), so
    /// a matrix of thousands of outputs does not search it once for each.
    text: Option<String>,
    searches: usize,
    indexed: bool,
    unsaved: bool,
}

/// How many counts are searched for in the cache file's text before it is parsed whole.
const SEARCHES: usize = 32;

impl Counts {
    /// The count of `key`, the key of a text of `len` bytes, made by this process or found in
    /// the cache file. A count the file gives that no text of `len` bytes can have (a line
    /// not written by promptc: a count past the text's length overflowed the sums made with
    /// it, and one far below passed a prompt over its budget) is not taken: the text is
    /// counted again, and the line replaced when the cache is saved.
    fn get(&mut self, key: &Key, len: usize) -> Option<usize> {
        if let Some(count) = self.learnt.get(key) {
            return Some(*count);
        }
        let found = if let Some(count) = self.found.get(key) {
            Some(*count)
        } else if self.indexed {
            None
        } else if self.searches >= SEARCHES {
            self.index();
            self.found.get(key).copied()
        } else {
            self.searches += 1;
            let count = find_line(self.file_text(), key)?;
            self.found.insert(*key, count);
            Some(count)
        };
        found.filter(|count| plausible(*count, len))
    }

    /// Learns every count of the cache file; the first of a key's lines counts.
    fn index(&mut self) {
        let mut found = std::mem::take(&mut self.found);
        found.extend(file_counts(self.file_text()).rev());
        self.found = found;
        self.indexed = true;
    }

    /// The cache file's text, read once. A missing, unreadable or oversized file is the same
    /// as an empty one.
    fn file_text(&mut self) -> &str {
        let file = self.file.as_deref();
        self.text.get_or_insert_with(|| {
            file.and_then(|file| {
                std::fs::metadata(file)
                    .ok()
                    .filter(|meta| meta.is_file() && meta.len() <= CACHE_BYTES)
                    .and_then(|_| std::fs::read_to_string(file).ok())
            })
            .unwrap_or_default()
        })
    }
}

/// The counts of a cache file's text, line by line, damaged lines left out.
fn file_counts(text: &str) -> impl DoubleEndedIterator<Item = (Key, usize)> + '_ {
    text.lines().filter_map(parse_line)
}

/// The count the first well-formed line for `key` in the cache file's `text` gives: a line
/// that is damaged is skipped, and lines end as [`str::lines`] ends them, so that a search
/// finds what parsing the whole file finds.
fn find_line(text: &str, key: &Key) -> Option<usize> {
    let needle = format!("{} {:032x} ", key.encoding.name(), key.digest);
    memchr::memmem::find_iter(text.as_bytes(), needle.as_bytes())
        .filter(|&start| start == 0 || text.as_bytes()[start - 1] == b'\n')
        .find_map(|start| {
            let line = text[start..].lines().next()?;
            parse_line(line).map(|(_, count)| count)
        })
}

/// The process's counts.
fn counts() -> MutexGuard<'static, Counts> {
    static COUNTS: OnceLock<Mutex<Counts>> = OnceLock::new();
    COUNTS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// The most bytes one token holds, in either encoding (a test reads the tables): a text's
/// count is at least its length over this.
const MAX_TOKEN_BYTES: usize = 128;

/// Whether `count` can be the count of a text of `len` bytes: each token holds at least one
/// byte and at most [`MAX_TOKEN_BYTES`].
fn plausible(count: usize, len: usize) -> bool {
    count <= len && count >= len.div_ceil(MAX_TOKEN_BYTES)
}

/// The name of the cache file in its folder; the version changes with its format or the
/// tables.
const CACHE_FILE: &str = "token-counts-v1";
/// The most counts the cache file keeps: the most recently learnt.
const CACHE_ENTRIES: usize = 100_000;
/// A cache file larger than this is ignored (and replaced).
const CACHE_BYTES: u64 = 8 << 20;

/// The folder the command line keeps its cache in: `PROMPTC_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/promptc`, else `~/.cache/promptc`. `None` with `PROMPTC_NO_CACHE=1`, or
/// when no home is known. A relative path is passed over, as the XDG specification asks:
/// taken from the current folder, the cache would lie in the workspace, where a pull request
/// could commit its counts.
pub fn default_cache_dir() -> Option<PathBuf> {
    cache_dir_from(|name| std::env::var_os(name))
}

/// [`default_cache_dir`] with the environment's variables read by `var`.
fn cache_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|value| !value.is_empty());
    if set("PROMPTC_NO_CACHE").is_some_and(|value| value != "0") {
        return None;
    }
    let absolute = |name: &str| set(name).map(PathBuf::from).filter(|dir| dir.is_absolute());
    if let Some(dir) = absolute("PROMPTC_CACHE_DIR") {
        return Some(dir);
    }
    if let Some(dir) = absolute("XDG_CACHE_HOME") {
        return Some(dir.join("promptc"));
    }
    absolute("HOME").map(|home| home.join(".cache").join("promptc"))
}

/// Uses the cache file in `dir`: its counts are learnt when a count is first asked for, and
/// new ones are saved there by [`save_cache`]. Call before the first count.
pub fn open_cache(dir: &Path) {
    let file = dir.join(CACHE_FILE);
    let mut counts = counts();
    counts.file = Some(file);
    counts.text = None;
    counts.found.clear();
    counts.searches = 0;
    counts.indexed = false;
}

/// `o200k <32 hex digits> <count>`, exactly as [`save_cache`] writes it (lowercase digits, no
/// sign): the only form [`find_line`] searches for.
fn parse_line(line: &str) -> Option<(Key, usize)> {
    let mut parts = line.split(' ');
    let encoding = Encoding::named(parts.next()?)?;
    let digest = parts.next().filter(|hex| {
        hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })?;
    let digest = u128::from_str_radix(digest, 16).ok()?;
    let count = parts
        .next()
        .filter(|count| !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()))?
        .parse()
        .ok()?;
    parts
        .next()
        .is_none()
        .then_some((Key { encoding, digest }, count))
}

/// Writes the cache file's counts and those learnt since [`open_cache`] to its file, the
/// latest [`CACHE_ENTRIES`] of them (a temporary file renamed over it, so a reader never sees
/// half of one). Failing to write a cache is not an error: the
/// next run counts again.
pub fn save_cache() {
    let mut counts = counts();
    let Some(file) = counts.file.clone().filter(|_| counts.unsaved) else {
        return;
    };
    // The file's counts first, in their order (the first of a key's lines counts, damaged
    // ones are dropped), then this process's.
    let mut kept: IndexMap<Key, usize> = IndexMap::new();
    for (key, count) in file_counts(counts.file_text()) {
        kept.entry(key).or_insert(count);
    }
    for (key, count) in &counts.learnt {
        kept.insert(*key, *count);
    }
    let skip = kept.len().saturating_sub(CACHE_ENTRIES);
    let mut text = String::new();
    for (key, count) in kept.iter().skip(skip) {
        text.push_str(&format!(
            "{} {:032x} {count}\n",
            key.encoding.name(),
            key.digest
        ));
    }
    let written = (|| -> std::io::Result<()> {
        let dir = file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut temporary = tempfile::NamedTempFile::new_in(dir)?;
        temporary.write_all(text.as_bytes())?;
        temporary.persist(&file).map_err(|error| error.error)?;
        Ok(())
    })();
    if written.is_ok() {
        counts.unsaved = false;
        counts.text = Some(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of `o200k-pieces.txt`, as `build.rs` reads it back.
    fn escape(piece: &[u8]) -> String {
        let mut line = String::new();
        for &byte in piece {
            match byte {
                b'\\' => line.push_str("\\\\"),
                b' ' => line.push_str("\\s"),
                b'\n' => line.push_str("\\n"),
                b'\r' => line.push_str("\\r"),
                b'\t' => line.push_str("\\t"),
                0x00..=0x1f | 0x7f => line.push_str(&format!("\\x{byte:02x}")),
                _ => line.push(char::from(byte)),
            }
        }
        line
    }

    /// Each table is its encoding's ASCII tokens of two bytes or more that are a piece on
    /// their own and count 1 (each piece of a prompt is counted alone), sorted. Regenerate
    /// them with `PROMPTC_UPDATE_TABLE=1 cargo test --lib tokens`.
    #[test]
    fn the_piece_tables_are_current() {
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let tokenizer = encoding.tokenizer();
            let bpe = &tokenizer.bpe;
            let (pattern, set) = encoding.pieces();
            let mut tokens: Vec<&str> = (0..u32::try_from(bpe.num_tokens()).unwrap())
                .filter_map(|id| std::str::from_utf8(bpe.token_bytes(id)).ok())
                .filter(|token| token.len() > 1 && token.is_ascii())
                .filter(|token| {
                    pieces::pieces(pattern, token).eq([Ok(0..token.len())])
                        && tokenizer.count(*token) == 1
                })
                .collect();
            tokens.sort_unstable();
            let expected: String = tokens
                .iter()
                .map(|token| escape(token.as_bytes()) + "\n")
                .collect();
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("src/tokens/{}-pieces.txt", encoding.name()));
            if std::env::var_os("PROMPTC_UPDATE_TABLE").is_some() {
                std::fs::write(&path, &expected).unwrap();
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == expected,
                "{} is stale: regenerate it with PROMPTC_UPDATE_TABLE=1 cargo test --lib tokens",
                path.display()
            );
            // What build.rs made of it: every line, and nothing else.
            assert_eq!(set.len(), tokens.len());
            // Looked up together, in batches, with pieces that are not tokens among them.
            let others = ["", "a", " promptc's", "the the", "\u{e9}t\u{e9}"];
            let mut asked: Vec<&str> = tokens.clone();
            for (at, other) in others.iter().enumerate() {
                asked.insert(at * 7 + 3, other);
            }
            let found = set.contains_each(&asked);
            assert_eq!(found.len(), asked.len());
            for (piece, found) in asked.iter().zip(found) {
                assert_eq!(found, !others.contains(piece), "{piece:?}");
            }
        }
    }

    /// The bound found with the pieces looked up in batches is the sum, piece by piece, of 1
    /// for a piece that is a token and its bytes for any other: on text with repeated
    /// pieces, more distinct pieces than a batch, and characters outside ASCII.
    #[test]
    fn a_bound_is_the_sum_over_its_pieces() {
        let text = "Read the file, then edit the file: the editor reads files again.\n\
                    Läuft der Übersetzer? 日本語のテキスト, naïve café déjà-vu 123456 \
                    alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu \
                    xi omicron pi rho sigma tau upsilon phi chi psi omega qwzxv\n\
                    - [ ] a list item\n    indented code();\n";
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let expected = sum_over_pieces(encoding, text);
            assert_eq!(encoding.at_most(text), expected, "{}", encoding.name());
            assert!(expected < text.len());
        }
    }

    /// A prompt whose pieces and runs outnumber a batch is bounded in several: one run with
    /// more distinct pieces than two batches hold (looked up part-way through the run), then
    /// more runs than a batch holds, repeating pieces of the first, then more runs than a
    /// batch holds with no piece to look up. The batches' limits are asserted as they are
    /// looked up (in a test build).
    #[test]
    fn a_bound_found_in_batches_is_the_sum_over_its_pieces() {
        let word = |mut i: usize| {
            let mut word = String::new();
            for _ in 0..4 {
                word.push(char::from(b'a' + (i % 26) as u8));
                i /= 26;
            }
            word
        };
        let mut text = String::from("Words:");
        for i in 0..3 * BOUNDING_BATCH {
            text.push(' ');
            text.push_str(&word(i * 7));
        }
        text.push('\n');
        for i in 0..2 * BOUNDING_BATCH {
            text.push_str(&format!("{} the {} file {i}\n", word(i), word(i * 7)));
        }
        // Runs of single bytes only, none of which waits for a lookup: the runs themselves
        // fill a batch.
        for i in 0..2 * BOUNDING_BATCH {
            text.push_str(&format!("q{}q{}q{}\n", i % 10, i / 10 % 10, i / 100 % 10));
        }
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let expected = sum_over_pieces(encoding, &text);
            // Once finding every run's bound, once with the runs remembered (all but the
            // first, too long to be).
            assert_eq!(encoding.at_most(&text), expected, "{}", encoding.name());
            assert_eq!(encoding.at_most(&text), expected, "{}", encoding.name());
            assert!(expected < text.len());
            // And whether it is within a budget, cut in batches with nothing remembered.
            for (budget, within) in [(expected, true), (expected - 1, false)] {
                let bounds = BoundedMemo::new(BOUND_BYTES);
                assert_eq!(
                    encoding.within_remembering(&text, budget, &bounds),
                    within,
                    "{}",
                    encoding.name()
                );
            }
        }
    }

    proptest::proptest! {
        /// Whether a text is within a budget, found cutting only part of it, is whether its
        /// whole bound is: at budgets around the bound, each asked with a memory of its own
        /// that holds the runs of an earlier text (some of this one's), so that the others are
        /// new, repeated, long enough to be settled several times, or not starting with a
        /// letter.
        #[test]
        fn within_a_budget_is_the_whole_bound_within_it(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    "[A-Za-z][a-z ,.]{0,40}\n",
                    "[-#0-9 ][A-Za-z0-9 ]{0,30}\n",
                    "[a-zé日 ]{1,12}\n",
                    proptest::strategy::Just("Repeated line of the prompt, the same each time.\n".to_string()),
                    "[A-Za-z]{1,8}( [a-z]{2,9}){300,400}\n",
                ],
                1..40,
            ),
            remembered in 0usize..40,
            offset in -3i64..=3,
            cl100k in proptest::bool::ANY,
        ) {
            let encoding = if cl100k { Encoding::Cl100k } else { Encoding::O200k };
            let text: String = lines.concat();
            let earlier: String = lines.iter().take(remembered).cloned().collect();
            let bound = sum_over_pieces(encoding, &text);
            for budget in [
                bound.saturating_add_signed(offset as isize),
                bound / 2,
                bound,
                text.len().saturating_sub(1),
                0,
            ] {
                let bounds = BoundedMemo::new(BOUND_BYTES);
                encoding.at_most_remembering(&earlier, &bounds);
                proptest::prop_assert_eq!(
                    encoding.within_remembering(&text, budget, &bounds),
                    bound <= budget,
                    "{}",
                    budget
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// A text counted in parts (runs taken together, long runs cut where a piece starts
        /// whatever precedes it, their counts remembered) counts what the tokenizer counts for
        /// it whole: on lines of words, digits, punctuation, spaces, letters outside ASCII and
        /// marks, and lines that repeat, cut into parts of a few bytes.
        #[test]
        fn a_text_counted_in_parts_counts_as_it_does_whole(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    "[A-Za-z][a-z ,.'!]{0,40}\n",
                    "[-#0-9 ]['A-Za-z0-9 \t]{0,30}\r?\n",
                    "[a-zé日ü\u{301} ]{1,12}\n?",
                    " {0,3}[a-zA-Z]{1,8}( {1,3}[a-z]{2,9}[.,]?){3,40}",
                    proptest::strategy::Just("Repeated line of the prompt, the same each time.\n".to_string()),
                ],
                1..30,
            ),
            part in 1usize..64,
            cl100k in proptest::bool::ANY,
        ) {
            let encoding = if cl100k { Encoding::Cl100k } else { Encoding::O200k };
            let text: String = lines.concat();
            proptest::prop_assert_eq!(
                encoding.count_in_parts(&text, part, usize::MAX),
                Some(encoding.tokenizer().count(&text))
            );
        }
    }

    /// A count within a limit is the count, and `None` past it: on a short text, one of many
    /// runs, and one long run with and without places to cut it.
    #[test]
    fn a_count_within_a_limit_is_the_count_or_none() {
        let runs: String = (0..20_000)
            .map(|i| format!("Line {i} of the rules.\n"))
            .collect();
        let long: String = (0..30_000).map(|i| format!("w{} ", i % 89)).collect();
        let uncut = "é".repeat(100_000);
        for text in [
            "A short prompt.",
            runs.as_str(),
            long.as_str(),
            uncut.as_str(),
        ] {
            for encoding in [Encoding::O200k, Encoding::Cl100k] {
                let count = encoding.tokenizer().count(text);
                assert_eq!(encoding.count_within(text, count), Some(count));
                assert_eq!(encoding.count_within(text, count + 5), Some(count));
                assert_eq!(encoding.count_within(text, count - 1), None);
                assert_eq!(encoding.count_within(text, count / 3), None);
            }
        }
    }

    /// A long run repeated by later prompts is counted once: its parts are remembered.
    #[test]
    fn the_parts_of_a_long_run_are_counted_once() {
        let long: String = (0..40_000).map(|i| format!("word{} ", i % 97)).collect();
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let first = format!("Intro line.\n{long}\nOutro.\n");
            let second = format!("Another intro, longer than the first.\n{long}\nEnd.\n");
            let whole = |text: &str| encoding.tokenizer().count(text);
            assert_eq!(encoding.whole_count(&first), whole(&first));
            let part = pieces::parts(&long, COUNTED_PART)
                .next()
                .unwrap_or_default();
            let counts = &PART_COUNTS.get().unwrap()[usize::from(encoding == Encoding::Cl100k)];
            assert!(counts.get(part).is_some());
            assert_eq!(encoding.whole_count(&second), whole(&second));
        }
    }

    /// A text far over its budget is refused once the runs cut pass the budget, and one far
    /// within it is accepted with the runs remembered and the others at their bytes: neither
    /// cuts the text to its end, and the answers are those of the whole bound.
    #[test]
    fn within_stops_cutting_once_the_answer_is_known() {
        let line = |i: usize| format!("Line {i} of a long prompt, with words that are tokens.\n");
        let text: String = (0..2_000).map(line).collect();
        let last = line(1_999);
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let bound = sum_over_pieces(encoding, &text);
            assert!(bound < text.len() / 3, "{bound}");
            // Over: refused after the first few kilobytes.
            let bounds = BoundedMemo::new(BOUND_BYTES);
            assert!(!encoding.within_remembering(&text, bound / 4, &bounds));
            assert_eq!(bounds.get(last.as_str()), None);
            assert!(bounds.get(line(0).as_str()).is_some());
            // Within: the first half remembered, the second at its bytes, nothing cut.
            let bounds = BoundedMemo::new(BOUND_BYTES);
            let half: String = (0..1_000).map(line).collect();
            encoding.at_most_remembering(&half, &bounds);
            let room = encoding.at_most_remembering(&half, &bounds) + (text.len() - half.len());
            assert!(encoding.within_remembering(&text, room, &bounds));
            assert_eq!(bounds.get(last.as_str()), None);
            // Just under what the whole text bounds to: cut to its end, and refused.
            assert!(!encoding.within_remembering(&text, bound - 1, &bounds));
            assert!(bounds.get(last.as_str()).is_some());
            assert!(encoding.within_remembering(&text, bound, &bounds));
        }
    }

    /// A long line is remembered in parts cut by what the text says where they end, not by
    /// where the line starts: one-line JSON of tool definitions holding some of the same
    /// tools as an earlier one, in other company, finds most of their bounds remembered, and
    /// its bound is still the sum over its pieces. (Remembered by whole runs, the second line
    /// was one run never seen, and none of it was found.)
    #[test]
    fn a_long_line_repeating_parts_of_another_finds_their_bounds_remembered() {
        let tool = |name: &str, words: usize| {
            let description: Vec<String> = (0..words)
                .map(|i| format!("{name}{} does the work asked", i % 7))
                .collect();
            format!(
                r#"{{"type":"function","name":"{name}","description":"{}","parameters":{{"type":"object"}}}}"#,
                description.join(" and ")
            )
        };
        let (read, edit, search, run) = (
            tool("read", 40),
            tool("edit", 60),
            tool("search", 50),
            tool("run", 45),
        );
        let first = format!("[{read},{edit},{search}]");
        let second = format!("[{run},{edit},{read}]");
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let bounds = BoundedMemo::new(BOUND_BYTES);
            encoding.at_most_remembering(&first, &bounds);
            let parts: Vec<&str> = pieces::remembered_parts(&second).collect();
            assert_eq!(parts.concat(), second);
            let found: usize = parts
                .iter()
                .zip(bounds.get_each(&parts))
                .filter_map(|(part, bound)| bound.map(|_| part.len()))
                .sum();
            // Of `edit` and `read`, all but the parts where their company differs.
            assert!(
                found * 10 >= (edit.len() + read.len()) * 7,
                "{} of {} bytes found",
                found,
                edit.len() + read.len()
            );
            assert_eq!(
                encoding.at_most_remembering(&second, &bounds),
                sum_over_pieces(encoding, &second),
                "{}",
                encoding.name()
            );
        }
    }

    /// The bound, piece by piece, with a lookup of its own for each: one for a piece of two
    /// bytes or more that is a token, its bytes for any other.
    fn sum_over_pieces(encoding: Encoding, text: &str) -> usize {
        let (pattern, set) = encoding.pieces();
        pieces::runs(text)
            .flat_map(|run| {
                pieces::pieces(pattern, run).map(move |piece| match piece {
                    Ok(range) if range.len() > 1 => {
                        let piece = &run[range.clone()];
                        if set.contains_each(&[piece]) == [true] {
                            1
                        } else {
                            range.len()
                        }
                    }
                    Ok(range) | Err(range) => range.len(),
                })
            })
            .sum()
    }

    #[test]
    fn counts_known_strings() {
        assert_eq!(Encoding::O200k.count(""), 0);
        assert_eq!(Encoding::O200k.count("hello world"), 2);
        assert_eq!(Encoding::Cl100k.count("hello world"), 2);
        // The encodings differ on real text.
        let text = "Läuft der Übersetzer? 日本語のテキスト";
        assert_ne!(Encoding::O200k.count(text), Encoding::Cl100k.count(text));
    }

    #[test]
    fn a_count_is_remembered_by_its_text_and_encoding() {
        let text = "a text counted once in this test, and only here";
        assert_eq!(Encoding::Cl100k.known_count(text), None);
        let count = Encoding::Cl100k.count(text);
        assert_eq!(Encoding::Cl100k.known_count(text), Some(count));
        assert_eq!(Encoding::O200k.known_count(text), None);
    }

    #[test]
    fn a_count_is_found_on_the_first_well_formed_line_of_its_key() {
        let key = Key {
            encoding: Encoding::O200k,
            digest: 7,
        };
        let hex = format!("{:032x}", 7u128);
        let text = format!(
            "cl100k {hex} 1\nxo200k {hex} 2\no200k {hex} 3 extra\no200k {hex} 4\no200k {hex} 5\n"
        );
        // Another encoding, the key in the middle of a line and a damaged line do not count.
        assert_eq!(find_line(&text, &key), Some(4));
        assert_eq!(find_line(&format!("o200k {hex} 9"), &key), Some(9));
        assert_eq!(find_line(&format!("o200k {hex} 9\n"), &key), Some(9));
        assert_eq!(find_line(&format!("o200k {:032x} 9\n", 8u128), &key), None);
        assert_eq!(find_line("", &key), None);
    }

    #[test]
    fn a_search_finds_what_parsing_the_whole_file_finds() {
        let hex = |digest: u128| format!("{digest:032x}");
        let text = format!(
            "o200k {} 1\r\no200k {} 2\no200k {} 3\no200k {} 4\r\no200k {} 5\r",
            hex(1),
            hex(0xab).to_uppercase(),
            hex(0xab),
            hex(3),
            hex(4)
        );
        let key = |digest| Key {
            encoding: Encoding::O200k,
            digest,
        };
        // Line ends as `str::lines` ends them; uppercase digits are not how a count is written.
        let expected = [
            (1, Some(1)),
            (0xab, Some(3)),
            (3, Some(4)),
            (4, None),
            (5, None),
        ];
        for (digest, count) in expected {
            assert_eq!(find_line(&text, &key(digest)), count, "searched: {digest}");
        }
        let mut indexed = Counts {
            text: Some(text.clone()),
            searches: SEARCHES,
            ..Counts::default()
        };
        for (digest, count) in expected {
            assert_eq!(indexed.get(&key(digest), 4), count, "indexed: {digest}");
        }
        assert!(indexed.indexed);
        let mut searched = Counts {
            text: Some(text),
            ..Counts::default()
        };
        for (digest, count) in expected {
            assert_eq!(searched.get(&key(digest), 4), count, "searched: {digest}");
        }
        assert!(!searched.indexed);
    }

    /// The cache folder is an absolute path: a relative one (which would lie in the folder
    /// promptc runs in, the workspace) is passed over for the next.
    #[test]
    fn a_relative_cache_folder_is_passed_over() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| std::ffi::OsString::from(value))
            }
        };
        let found = |pairs| cache_dir_from(env(pairs));
        assert_eq!(
            found(&[("PROMPTC_CACHE_DIR", "/c"), ("HOME", "/h")]),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            found(&[("PROMPTC_CACHE_DIR", ".cache"), ("XDG_CACHE_HOME", "/x")]),
            Some(PathBuf::from("/x/promptc"))
        );
        assert_eq!(
            found(&[("XDG_CACHE_HOME", "cache"), ("HOME", "/h")]),
            Some(PathBuf::from("/h/.cache/promptc"))
        );
        assert_eq!(found(&[("HOME", "home")]), None);
        assert_eq!(found(&[("PROMPTC_NO_CACHE", "1"), ("HOME", "/h")]), None);
    }

    /// No token of either encoding holds more than [`MAX_TOKEN_BYTES`], the bound a cached
    /// count is held to; and a count no text of its length can have is not taken.
    #[test]
    fn a_cached_count_is_held_to_what_the_text_s_length_allows() {
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let bpe = &encoding.tokenizer().bpe;
            let longest = (0..u32::try_from(bpe.num_tokens()).unwrap())
                .map(|id| bpe.token_bytes(id).len())
                .max()
                .unwrap();
            assert!(longest <= MAX_TOKEN_BYTES, "{}: {longest}", encoding.name());
        }
        let key = Key {
            encoding: Encoding::O200k,
            digest: 9,
        };
        let line = |count: &str| format!("o200k {:032x} {count}\n", 9u128);
        for (count, len, taken) in [
            ("300", 1000, Some(300)),
            ("1000", 1000, Some(1000)),
            ("8", 1000, Some(8)),
            ("1001", 1000, None),
            ("18446744073709551615", 1000, None),
            ("7", 1000, None),
            ("0", 1000, None),
            ("0", 0, Some(0)),
        ] {
            let mut counts = Counts {
                text: Some(line(count)),
                ..Counts::default()
            };
            assert_eq!(counts.get(&key, len), taken, "{count} of {len} bytes");
        }
    }

    #[test]
    fn cache_lines_are_read_strictly() {
        let good = format!("o200k {:032x} 12", 7u128);
        assert_eq!(
            parse_line(&good),
            Some((
                Key {
                    encoding: Encoding::O200k,
                    digest: 7
                },
                12
            ))
        );
        for bad in [
            "o200k 07 12",
            "p50k 00000000000000000000000000000007 12",
            "o200k 00000000000000000000000000000007 -1",
            "o200k 00000000000000000000000000000007 12 extra",
            "o200k 0000000000000000000000000000000A 12",
            "o200k 00000000000000000000000000000007 +12",
            "",
        ] {
            assert_eq!(parse_line(bad), None, "{bad}");
        }
    }
}
