//! A post-processing guard over one text: whether a marker lies within `within` characters of
//! a span, for spans asked about in order. Asking each span afresh walked `within` characters
//! and searched the whole window: with a large `within`, a text of many matches took time in
//! the square of its length. Here both windows slide along the text and each marker's next
//! place is searched for only past the last one found, so a whole text costs a few passes over
//! it, whatever `within` is.

use memchr::memmem::Finder;

use crate::model::{Guard, GuardSide};

pub struct GuardedText<'t> {
    text: &'t str,
    within: usize,
    look_before: bool,
    look_after: bool,
    markers: Vec<Marker<'t>>,
    /// The window before a span: from `back` to the span's start (`back_to`), holding
    /// `back_chars` characters.
    back: usize,
    back_to: usize,
    back_chars: usize,
    /// The window after a span: from its end (`ahead_from`) to `ahead`, holding `ahead_chars`
    /// characters.
    ahead_from: usize,
    ahead: usize,
    ahead_chars: usize,
}

struct Marker<'t> {
    finder: Finder<'t>,
    /// The first place at or after some position where the marker occurs (overlapping places
    /// count): `(from, found)`, for each window.
    before: Option<(usize, Option<usize>)>,
    after: Option<(usize, Option<usize>)>,
}

impl<'t> GuardedText<'t> {
    pub fn new(text: &'t str, guard: &'t Guard) -> Self {
        let (look_before, look_after) = match guard.side {
            GuardSide::Before => (true, false),
            GuardSide::After => (false, true),
            GuardSide::Both => (true, true),
        };
        Self {
            text,
            within: guard.within,
            look_before,
            look_after,
            markers: guard
                .markers
                .iter()
                .map(|marker| Marker {
                    finder: Finder::new(marker.as_bytes()),
                    before: None,
                    after: None,
                })
                .collect(),
            back: 0,
            back_to: 0,
            back_chars: 0,
            ahead_from: 0,
            ahead: 0,
            ahead_chars: 0,
        }
    }

    /// Whether a marker lies within `within` characters of `start..end`, on the guard's side.
    /// Each span must start and end no earlier than the one asked about before it.
    pub fn keeps(&mut self, start: usize, end: usize) -> bool {
        let text = self.text;
        // The window before: the `within` characters before `start`, or all there are.
        self.back_chars += text[self.back_to..start].chars().count();
        self.back_to = start;
        while self.back_chars > self.within {
            self.back += text[self.back..].chars().next().map_or(1, char::len_utf8);
            self.back_chars -= 1;
        }
        // The window after: the `within` characters after `end`, or all there are.
        if end >= self.ahead {
            self.ahead = end;
            self.ahead_chars = 0;
        } else {
            self.ahead_chars -= text[self.ahead_from..end].chars().count();
        }
        self.ahead_from = end;
        while self.ahead_chars < self.within && self.ahead < text.len() {
            self.ahead += text[self.ahead..].chars().next().map_or(1, char::len_utf8);
            self.ahead_chars += 1;
        }
        let (back, ahead, look_before, look_after) =
            (self.back, self.ahead, self.look_before, self.look_after);
        self.markers.iter_mut().any(|marker| {
            let length = marker.finder.needle().len();
            let fits = |found: Option<usize>, to: usize| found.is_some_and(|at| at + length <= to);
            (look_before && fits(next(&marker.finder, &mut marker.before, text, back), start))
                || (look_after && fits(next(&marker.finder, &mut marker.after, text, end), ahead))
        })
    }
}

/// The first place at or after `from` where the marker occurs, searched for only when the
/// place found last lies before `from`.
fn next(
    finder: &Finder<'_>,
    cached: &mut Option<(usize, Option<usize>)>,
    text: &str,
    from: usize,
) -> Option<usize> {
    if let Some((searched_from, found)) = *cached
        && searched_from <= from
        && found.is_none_or(|at| at >= from)
    {
        return found;
    }
    let found = finder
        .find(&text.as_bytes()[from..])
        .map(|offset| from + offset);
    *cached = Some((from, found));
    found
}
