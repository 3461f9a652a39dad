//! The pieces the o200k and cl100k pre-tokenizers cut ASCII text into, found without their
//! regexes or tables.
//!
//! A BPE encoding counts each piece of its pre-tokenizer apart: a piece that is itself a
//! token counts 1 (tiktoken looks a piece up whole before merging), and no piece counts more
//! than its bytes (merging starts from single bytes). Knowing the pieces and which ones are
//! tokens (`o200k-pieces.txt`, `cl100k-pieces.txt`: static sets built with the binary)
//! bounds a prompt's count from above without loading the tables: the budget check needs only
//! that.
//!
//! The pre-tokenizers are leftmost-first regexes; o200k's is
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! | [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//! ```
//!
//! and cl100k's
//!
//! ```text
//! (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n]*
//! | \s*[\r\n]+ | \s+(?!\S) | \s+
//! ```
//!
//! followed here branch by branch for ASCII characters. Where a character outside ASCII
//! could change a piece (it may be a letter, a mark, a digit or a space), the text up to the
//! next place a piece certainly starts is left unknown, and counts as its bytes.

use std::ops::Range;

/// Whose pre-tokenizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    O200k,
    Cl100k,
}

/// The pieces of `text`: `Ok` for a piece, `Err` for text whose pieces are not known.
pub fn pieces(
    pattern: Pattern,
    text: &str,
) -> impl Iterator<Item = Result<Range<usize>, Range<usize>>> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        let start = at;
        match piece_end(pattern, bytes, start) {
            Some(end) => {
                at = end;
                Some(Ok(start..end))
            }
            None => {
                at = next_certain_start(bytes, start + 1);
                Some(Err(start..at))
            }
        }
    })
}

/// Regex `\s` among ASCII bytes.
fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn is_line_break(byte: u8) -> bool {
    matches!(byte, b'\r' | b'\n')
}

/// `[^\s\p{L}\p{N}]` among ASCII bytes.
fn is_other(byte: u8) -> bool {
    byte.is_ascii() && !byte.is_ascii_alphanumeric() && !is_space(byte)
}

/// The byte at `at` when it is ASCII, `Some(None)` at the end of the text, `None` when it is
/// not ASCII: its class is not known here.
fn peek(bytes: &[u8], at: usize) -> Option<Option<u8>> {
    match bytes.get(at) {
        None => Some(None),
        Some(&byte) if byte.is_ascii() => Some(Some(byte)),
        Some(_) => None,
    }
}

/// The end of the run of bytes of `class` from `at`; `None` if a byte outside ASCII ends it.
fn run_end(bytes: &[u8], mut at: usize, class: impl Fn(u8) -> bool) -> Option<usize> {
    loop {
        match peek(bytes, at)? {
            Some(byte) if class(byte) => at += 1,
            _ => return Some(at),
        }
    }
}

/// Where `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `at` ends.
fn contraction_end(bytes: &[u8], at: usize) -> Option<usize> {
    if peek(bytes, at)? != Some(b'\'') {
        return Some(at);
    }
    // Case-insensitive beyond ASCII too: 'ſ' (long s) matches 's'.
    let lower = |i: usize| Some(peek(bytes, i)?.map(|byte| byte.to_ascii_lowercase()));
    Some(match lower(at + 1)? {
        Some(b's' | b't' | b'm' | b'd') => at + 2,
        Some(b'r' | b'v') if lower(at + 2)? == Some(b'e') => at + 3,
        Some(b'l') if lower(at + 2)? == Some(b'l') => at + 3,
        _ => at,
    })
}

/// The end of the piece that starts at `start`, or `None` when text outside ASCII could
/// decide it.
fn piece_end(pattern: Pattern, bytes: &[u8], start: usize) -> Option<usize> {
    let first = peek(bytes, start)??;
    if pattern == Pattern::Cl100k {
        let contraction = contraction_end(bytes, start)?;
        if contraction > start {
            return Some(contraction);
        }
    }
    // The letter branches: an optional prefix (neither letter, digit nor line break), then
    // letters. Without the prefix taken, a piece starting with a non-letter has no letters,
    // so only the prefixed try can match.
    let letters = if first.is_ascii_alphanumeric() || is_line_break(first) {
        start
    } else {
        start + 1
    };
    if let Some(end) = letters_end(pattern, bytes, letters)? {
        return Some(end);
    }
    if first.is_ascii_digit() {
        let mut end = start + 1;
        while end < start + 3 && peek(bytes, end)?.is_some_and(|byte| byte.is_ascii_digit()) {
            end += 1;
        }
        // A non-ASCII digit would join the piece.
        peek(bytes, end)?;
        return Some(end);
    }
    // ` ?[^\s\p{L}\p{N}]+` then line breaks (and, for o200k, slashes).
    let others = if first == b' ' { start + 1 } else { start };
    if peek(bytes, others)?.is_some_and(is_other) {
        let others_end = run_end(bytes, others, is_other)?;
        return run_end(bytes, others_end, |byte| {
            is_line_break(byte) || (byte == b'/' && pattern == Pattern::O200k)
        });
    }
    if !is_space(first) {
        return None;
    }
    let spaces_end = run_end(bytes, start, is_space)?;
    // `\s*[\r\n]+`: to the run's last line break.
    if let Some(last) = (start..spaces_end).rev().find(|&i| is_line_break(bytes[i])) {
        return Some(last + 1);
    }
    // `\s+(?!\S)` leaves the last space to the next piece, unless the run ends the text or
    // is one space long (then `\s+`).
    if spaces_end == bytes.len() || spaces_end - start == 1 {
        Some(spaces_end)
    } else {
        Some(spaces_end - 1)
    }
}

/// Where the letters from `at` end the piece, `Some(None)` if there are none; `None` when a
/// character outside ASCII could decide it. o200k splits capitals followed by lower case
/// (`[\p{Lu}…]*[\p{Ll}…]+`, else `[\p{Lu}…]+[\p{Ll}…]*`) and takes a contraction after
/// them; cl100k takes every letter (`\p{L}+`).
fn letters_end(pattern: Pattern, bytes: &[u8], at: usize) -> Option<Option<usize>> {
    match pattern {
        Pattern::O200k => {
            let capitals_end = run_end(bytes, at, |byte| byte.is_ascii_uppercase())?;
            let lower_end = run_end(bytes, capitals_end, |byte| byte.is_ascii_lowercase())?;
            if lower_end > capitals_end {
                return contraction_end(bytes, lower_end).map(Some);
            }
            if capitals_end > at {
                return contraction_end(bytes, capitals_end).map(Some);
            }
            Some(None)
        }
        Pattern::Cl100k => {
            let end = run_end(bytes, at, |byte| byte.is_ascii_alphabetic())?;
            Some((end > at).then_some(end))
        }
    }
}

/// The first position from `from` where a piece starts whatever precedes it: a space before
/// an ASCII letter (no branch takes a space followed by a letter but the letter branches,
/// which start at it), or a letter after a line break (no branch runs on from a line break
/// into a letter). The end of the text if there is none.
fn next_certain_start(bytes: &[u8], from: usize) -> usize {
    (from..bytes.len())
        .find(|&i| {
            let letter_next = bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic);
            (bytes[i] == b' ' && letter_next)
                || (bytes[i].is_ascii_alphabetic() && is_line_break(bytes[i - 1]))
        })
        .unwrap_or(bytes.len())
}

/// Cuts `text` into runs whose pieces do not depend on the text around them: each run but
/// the last ends with a line break that a letter follows. A piece that holds such a line
/// break ends with it and the next starts at the letter, whatever the texts before and after,
/// so a run's bound, remembered by its text, is the same wherever the run appears.
pub fn runs(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let end = memchr::memchr_iter(b'\n', &bytes[start..])
            .map(|i| start + i + 1)
            .find(|&end| bytes.get(end).is_some_and(u8::is_ascii_alphabetic))
            .unwrap_or(bytes.len());
        let run = &text[start..end];
        start = end;
        Some(run)
    })
}

/// Cuts `text` into the parts whose bounds are remembered: its runs, and a run of
/// [`LONG_RUN`] bytes or more cut further where a piece starts whatever precedes it (a space
/// before a letter), at the places the text there marks (see [`marks_a_cut`]) rather than at
/// a distance from the run's start. The same stretch of text is then cut the same way
/// wherever it stands, and its parts' bounds are found once: each tool's entry in the
/// one-line JSON of a native variant's definitions, which every context repeats in another
/// company, or a long paragraph whose first line differs from one prompt to the next. Cut at
/// runs alone, each of those was a run never seen before, bounded again piece by piece.
pub fn remembered_parts(text: &str) -> impl Iterator<Item = &str> {
    runs(text).flat_map(marked_parts)
}

/// A run at least this long is cut into marked parts ([`remembered_parts`]).
const LONG_RUN: usize = 512;

/// The fewest bytes a marked part holds, but the run's last: a part's lookup costs about
/// what bounding a hundred bytes does.
const SHORTEST_PART: usize = 128;

/// The parts of `run` that [`remembered_parts`] gives: the run itself if it is shorter than
/// [`LONG_RUN`].
fn marked_parts(run: &str) -> impl Iterator<Item = &str> {
    let bytes = run.as_bytes();
    let long = bytes.len() >= LONG_RUN;
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let end = if long {
            next_marked_cut(bytes, start + SHORTEST_PART)
        } else {
            bytes.len()
        };
        // `end` is a space or the end: a character boundary.
        let part = run.get(start..end)?;
        start = end;
        Some(part)
    })
}

/// The first place from `from` where a piece starts whatever precedes it (a space before an
/// ASCII letter, see [`next_certain_start`]) and [`marks_a_cut`]; the end if there is none.
fn next_marked_cut(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(found) = bytes.get(at..).and_then(|rest| memchr::memchr(b' ', rest)) {
        let space = at + found;
        if bytes.get(space + 1).is_some_and(u8::is_ascii_alphabetic) && marks_a_cut(bytes, space) {
            return space;
        }
        at = space + 1;
    }
    bytes.len()
}

/// Whether the eight bytes from `at` choose it as a place to cut: about one place in eight,
/// decided by the text there alone (FNV-1a), so that the choice is the same in every text
/// that holds them, on every machine.
fn marks_a_cut(bytes: &[u8], at: usize) -> bool {
    let window = bytes.get(at..).unwrap_or_default();
    let hash = window
        .iter()
        .take(8)
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    hash >> 61 == 0
}

/// Cuts `text` into the parts it is counted in: its runs (whose pieces do not depend on the
/// text around them) taken together up to `part` bytes, and a run longer than that cut by
/// [`parts`], each such part marked `true` (a part of a long run, worth remembering by its
/// text: a long section repeated by every prompt of a matrix). The parts' counts add up to
/// the text's.
pub fn counted_parts(text: &str, part: usize) -> impl Iterator<Item = (&str, bool)> {
    let mut runs = runs(text).peekable();
    let mut long: Option<std::vec::IntoIter<&str>> = None;
    // Where the next run starts in `text`.
    let mut at = 0;
    std::iter::from_fn(move || {
        loop {
            if let Some(cut) = long.as_mut().and_then(Iterator::next) {
                return Some((cut, true));
            }
            long = None;
            let first = runs.next()?;
            let start = at;
            at += first.len();
            if first.len() >= part {
                long = Some(parts(first, part).collect::<Vec<_>>().into_iter());
                continue;
            }
            // Short runs taken together, up to `part` bytes.
            while let Some(next) = runs.peek() {
                if next.len() >= part || at + next.len() - start > part {
                    break;
                }
                at += next.len();
                runs.next();
            }
            return Some((&text[start..at], false));
        }
    })
}

/// Cuts a run into parts of at least `part` bytes (the last may be shorter), each ending where
/// a piece starts whatever precedes it (see [`next_certain_start`]): a part's pieces are the
/// run's pieces there, so its count is the same wherever it appears. A run with no such
/// place past `part` bytes is one part.
pub fn parts(run: &str, part: usize) -> impl Iterator<Item = &str> {
    let bytes = run.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let from = start.saturating_add(part.max(1));
        let end = if from >= bytes.len() {
            bytes.len()
        } else {
            next_certain_start(bytes, from)
        };
        let cut = &run[start..end];
        start = end;
        Some(cut)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;
    use crate::tokens::Encoding;

    const PATTERNS: [(Pattern, Encoding); 2] = [
        (Pattern::O200k, Encoding::O200k),
        (Pattern::Cl100k, Encoding::Cl100k),
    ];

    fn tokenizer(pattern: Pattern) -> &'static bpe_openai::Tokenizer {
        match pattern {
            Pattern::O200k => bpe_openai::o200k_base(),
            Pattern::Cl100k => bpe_openai::cl100k_base(),
        }
    }

    /// The pieces bpe-openai's pre-tokenizer (the regex itself) cuts `text` into.
    fn regex_pieces(pattern: Pattern, text: &str) -> Vec<Range<usize>> {
        let tokenizer = tokenizer(pattern);
        let base = text.as_ptr() as usize;
        tokenizer
            .split(text)
            .map(|piece| {
                let start = piece.as_ptr() as usize - base;
                start..start + piece.len()
            })
            .collect()
    }

    /// Every piece found is one of the regex's, and text left unknown starts and ends where
    /// the regex's pieces do; the pieces of the runs, found apart, are those of the text.
    fn agrees_with_the_regex(pattern: Pattern, text: &str) -> Result<(), TestCaseError> {
        let expected = regex_pieces(pattern, text);
        let starts: BTreeSet<usize> = expected
            .iter()
            .map(|piece| piece.start)
            .chain([text.len()])
            .collect();
        let found: Vec<_> = pieces(pattern, text).collect();
        let mut at = 0;
        for piece in &found {
            match piece {
                Ok(piece) => prop_assert!(
                    expected.contains(piece),
                    "{:?} is not a piece of {text:?}: {expected:?}",
                    &text[piece.clone()]
                ),
                Err(unknown) => prop_assert!(
                    starts.contains(&unknown.start) && starts.contains(&unknown.end),
                    "{:?} does not start and end with pieces of {text:?}",
                    &text[unknown.clone()]
                ),
            }
            let range = piece.clone().unwrap_or_else(|unknown| unknown);
            prop_assert_eq!(range.start, at);
            at = range.end;
        }
        prop_assert_eq!(at, text.len());
        let mut by_runs = Vec::new();
        let mut offset = 0;
        for run in runs(text) {
            let shift = |range: Range<usize>| range.start + offset..range.end + offset;
            by_runs.extend(pieces(pattern, run).map(|piece| piece.map(shift).map_err(shift)));
            offset += run.len();
        }
        prop_assert_eq!(by_runs, found);
        Ok(())
    }

    /// Characters each branch of the regex turns on, ASCII and not: capitals and lower case,
    /// the letters of contractions, digits, spaces and line breaks, `/` after a line break,
    /// and outside ASCII a capital, a title-case letter, a combining mark, a digit, spaces,
    /// a long s (a case-insensitive `'s`), an ideograph, a dash and an emoji.
    const ALPHABET: &[char] = &[
        'a', 'Z', 'b', 'Q', 's', 't', 'r', 'e', 'v', 'm', 'l', 'd', 'S', 'L', '1', '7', ' ', ' ',
        ' ', '\t', '\n', '\r', '\u{b}', '\u{c}', '\'', '/', '.', '*', '-', '"', '(', 'é', 'Σ', 'ǅ',
        '\u{301}', '٣', '\u{a0}', '\u{2003}', '\u{85}', 'ſ', '日', '—', '😀',
    ];

    /// Fragments of prompts, for runs of text longer than one character would make.
    const FRAGMENTS: &[&str] = &[
        " the",
        " don't",
        "We'LL",
        "HTTPServer",
        " x2",
        "1234",
        "  - ",
        "\n\n",
        ".\n/",
        "**",
        " (see",
        "):\n",
        "\t\tif",
        " \"type\": ",
        "\r\n",
        "   \n  ",
        "café",
        " naïve",
        "'ve",
        "'RE",
        "'Ll",
        "'d",
        "'m",
        "'s",
        "'t",
        "'x",
    ];

    fn text() -> impl Strategy<Value = String> {
        let part = prop_oneof![
            proptest::sample::select(ALPHABET).prop_map(String::from),
            proptest::sample::select(FRAGMENTS).prop_map(String::from),
        ];
        proptest::collection::vec(part, 0..40).prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn pieces_are_the_pre_tokenizers(text in text()) {
            for (pattern, _) in PATTERNS {
                agrees_with_the_regex(pattern, &text)?;
            }
        }

        #[test]
        fn the_bound_is_never_below_the_count(text in text()) {
            for (pattern, encoding) in PATTERNS {
                let count = tokenizer(pattern).count(text.as_str());
                let bound = encoding.at_most(&text);
                prop_assert!(bound >= count, "{encoding:?} {text:?}: bound {bound}, count {count}");
            }
        }
    }

    #[test]
    fn a_few_pieces_spelled_out() {
        let cut = |pattern, text: &'static str| -> Vec<&'static str> {
            pieces(pattern, text)
                .map(|piece| &text[piece.unwrap_or_else(|unknown| unknown)])
                .collect()
        };
        let o200k = |text| cut(Pattern::O200k, text);
        let cl100k = |text| cut(Pattern::Cl100k, text);
        // The second of two spaces goes with the word; o200k keeps a contraction with its
        // word, cl100k cuts it off.
        assert_eq!(
            o200k("Hello  world's\n\n"),
            ["Hello", " ", " world's", "\n\n"]
        );
        assert_eq!(
            cl100k("Hello  world's\n\n"),
            ["Hello", " ", " world", "'s", "\n\n"]
        );
        // o200k: capitals then lower case are one piece, lower case then capitals two.
        assert_eq!(o200k("HTTPServer fooBar"), ["HTTPServer", " foo", "Bar"]);
        assert_eq!(cl100k("HTTPServer fooBar"), ["HTTPServer", " fooBar"]);
        // Digits go by three; punctuation takes the line breaks after it (and slashes, in
        // o200k).
        assert_eq!(
            o200k("12345 **x**.\n/y"),
            ["123", "45", " **", "x", "**.\n/", "y"]
        );
        assert_eq!(
            cl100k("12345 **x**.\n/y"),
            ["123", "45", " **", "x", "**.\n", "/y"]
        );
        // A letter outside ASCII could join the word: unknown up to the next space before
        // a letter.
        assert_eq!(o200k("a café au lait"), ["a", " café", " au", " lait"]);
        assert!(
            pieces(Pattern::O200k, "a café")
                .nth(1)
                .is_some_and(|piece| piece.is_err())
        );
    }

    #[test]
    fn the_shipped_prompts_are_cut_as_the_regex_cuts_them() {
        let prompts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/prompts");
        let mut checked = 0;
        for entry in walkdir::WalkDir::new(prompts) {
            let entry = entry.unwrap();
            if entry
                .path()
                .extension()
                .is_some_and(|extension| extension == "md")
            {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                for (pattern, _) in PATTERNS {
                    agrees_with_the_regex(pattern, &text).unwrap();
                }
                checked += 1;
            }
        }
        assert!(checked > 40, "{checked} prompts");
    }
}
