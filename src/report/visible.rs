//! Text from a workspace (a file's name above all) as it is safe to print to a terminal or a
//! CI log: a name may hold escape sequences that move the cursor, clear the screen or retitle
//! the window, or a line break that starts a line of its own (`::error …` is a workflow
//! command to GitHub Actions). Each control character is shown as its Unicode picture (`␛`
//! for escape, `␊` for a line break), and so is each character that reorders text (bidi).

use std::borrow::Cow;

/// `text` (one line: a message, a name) with every control character shown as its picture.
pub fn visible(text: &str) -> Cow<'_, str> {
    shown(text, |c| c.is_control() || is_bidi(c) || is_invisible(c))
}

/// `text` of many lines (a report, a diff of prompts) as [`visible`] shows a line: its line
/// breaks and tabs are kept, every other control character is shown. A prompt under review
/// may hold a carriage return or an escape sequence that would hide, on a terminal or in a
/// CI log, the very line that changed.
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    shown(text, |c| {
        (c.is_control() && c != '\n' && c != '\t') || is_bidi(c) || is_invisible(c)
    })
}

/// A file's lines as a diagnostic quotes them: each character that takes no room (see
/// [`visible`]) shown as a replacement mark, which the renderer of snippets leaves as it is;
/// with a map from a byte offset of `text` to the same place in what is shown.
pub fn visible_source(text: &str) -> (Cow<'_, str>, impl Fn(usize) -> usize) {
    // Each replaced character's offset, and how many bytes longer the text is after it.
    let mut shifts: Vec<(usize, isize)> = Vec::new();
    let shown = if text.chars().any(is_invisible) {
        let mut shown = String::with_capacity(text.len());
        let mut delta = 0isize;
        for (at, c) in text.char_indices() {
            if is_invisible(c) {
                shown.push('\u{fffd}');
                delta += '\u{fffd}'.len_utf8() as isize - c.len_utf8() as isize;
                shifts.push((at, delta));
            } else {
                shown.push(c);
            }
        }
        Cow::Owned(shown)
    } else {
        Cow::Borrowed(text)
    };
    let map = move |offset: usize| {
        // The shift of the replaced characters before `offset`.
        let before = shifts.partition_point(|(at, _)| *at < offset);
        let delta = before.checked_sub(1).map_or(0, |last| shifts[last].1);
        offset.saturating_add_signed(delta)
    };
    (shown, map)
}

/// Appends one line of a text report: `line` as [`visible`] shows it, then a line break. A
/// report writes each of its lines so, whatever text of the workspace it quotes (a file's
/// name, a condition, a description), so that quoted text cannot start a line of its own.
pub fn push_line(out: &mut String, line: &str) {
    out.push_str(&visible(line));
    out.push('\n');
}

fn shown(text: &str, hidden: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&hidden) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                c if !hidden(c) => c,
                '\u{7f}' => '\u{2421}',
                c if is_bidi(c) || is_invisible(c) => '\u{fffd}',
                // C0 controls have pictures at U+2400 on; others (C1) a replacement mark.
                c => char::from_u32(0x2400 + u32::from(c))
                    .filter(|_| u32::from(c) < 0x20)
                    .unwrap_or('\u{fffd}'),
            })
            .collect(),
    )
}

/// The characters that reorder the text around them (embeddings, overrides, isolates), and
/// the line and paragraph separators, which some viewers break a line at: each is shown as a
/// replacement mark.
fn is_bidi(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{061c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Characters that take no room where they stand: zero-width spaces and joiners, the word
/// joiner and invisible operators, the byte-order mark, the soft hyphen, fillers, and the tag
/// characters (U+E0000 on, which can spell hidden text). A name or a changed line holding one
/// looks like one without it; each is shown as a replacement mark.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200d}'
            | '\u{2060}'..='\u{2064}'
            | '\u{3164}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{e0000}'..='\u{e007f}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_that_take_no_room_are_shown() {
        assert_eq!(visible("use_a\u{200b}"), "use_a\u{fffd}");
        // The Arabic letter mark reorders text as the other bidi marks do.
        assert_eq!(visible("ef\u{61c}gh"), "ef\u{fffd}gh");
        assert_eq!(
            visible_lines("x\u{feff}y\n\u{e0041}\u{2060}z\t"),
            "x\u{fffd}y\n\u{fffd}\u{fffd}z\t"
        );
        assert!(matches!(
            visible("caf\u{e9} \u{65e5}\u{672c}"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_quoted_source_shows_what_takes_no_room_and_keeps_its_places() {
        // A 2-byte soft hyphen and a 4-byte tag character become 3-byte marks.
        let text = "a\u{ad}b\u{e0041}c";
        let (shown, map) = visible_source(text);
        assert_eq!(shown, "a\u{fffd}b\u{fffd}c");
        let c = text.find('c').unwrap();
        assert_eq!(&shown[map(c)..], "c");
        assert_eq!(map(0), 0);
        assert_eq!(&shown[map(text.find('b').unwrap())..map(c)], "b\u{fffd}");
    }

    #[test]
    fn control_characters_are_shown_as_pictures_and_lines_stay_lines() {
        assert!(matches!(visible("plain/path.md"), Cow::Borrowed(_)));
        assert_eq!(
            visible("a\tb\n::error title=x::y\u{202e}"),
            "a\u{2409}b\u{240a}::error title=x::y\u{fffd}"
        );
        // Separators some viewers break a line at, and NEL (a C1 control).
        assert_eq!(
            visible("a\u{2028}::b\u{2029}c\u{85}d"),
            "a\u{fffd}::b\u{fffd}c\u{fffd}d"
        );
        assert_eq!(
            visible("components/a\u{1b}[2J\u{1b}]0;title\u{7}b\u{7f}\u{9b}.toml"),
            "components/a\u{241b}[2J\u{241b}]0;title\u{2407}b\u{2421}\u{fffd}.toml"
        );
    }

    #[test]
    fn a_text_of_many_lines_keeps_its_lines_and_tabs_and_shows_the_rest() {
        assert!(matches!(visible_lines("a\tb\nc\n"), Cow::Borrowed(_)));
        assert_eq!(
            visible_lines("+ safe line\r- hidden\n+ \u{1b}[1A\u{1b}[2Kerased\u{2067}\n"),
            "+ safe line\u{240d}- hidden\n+ \u{241b}[1A\u{241b}[2Kerased\u{fffd}\n"
        );
    }
}
