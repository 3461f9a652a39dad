//! Text from a workspace (a file's name above all) as it is safe to print to a terminal or a
//! CI log: a name may hold escape sequences that move the cursor, clear the screen or retitle
//! the window, or a line break that starts a line of its own (`::error …` is a workflow
//! command to GitHub Actions). Each control character is shown as its Unicode picture (`␛`
//! for escape, `␊` for a line break), and so is each character that reorders text (bidi) or
//! takes no room where it stands (see [`unseen`]).

use std::borrow::Cow;

/// `text` (one line: a message, a name) with every control character shown as its picture.
pub fn visible(text: &str) -> Cow<'_, str> {
    shown(text, char::is_control)
}

/// `text` of many lines (a report, a diff of prompts) as [`visible`] shows a line: its line
/// breaks and tabs are kept, every other control character is shown. A prompt under review
/// may hold a carriage return or an escape sequence that would hide, on a terminal or in a
/// CI log, the very line that changed.
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    shown(text, |c| c.is_control() && c != '\n' && c != '\t')
}

/// A file's lines as a diagnostic quotes them: each character that takes no room (see
/// [`visible`]) shown as a replacement mark, which the renderer of snippets leaves as it is;
/// with a map from a byte offset of `text` to the same place in what is shown.
pub fn visible_source(text: &str) -> (Cow<'_, str>, impl Fn(usize) -> usize) {
    // Each replaced character's offset, and how many bytes longer the text is after it.
    let mut shifts: Vec<(usize, isize)> = Vec::new();
    let unseen = unseen(text);
    let shown = if unseen.is_empty() {
        Cow::Borrowed(text)
    } else {
        let mut shown = String::with_capacity(text.len());
        let mut delta = 0isize;
        let mut next = unseen.iter().peekable();
        for (at, c) in text.char_indices() {
            if next.next_if_eq(&&at).is_some() {
                shown.push('\u{fffd}');
                delta += '\u{fffd}'.len_utf8() as isize - c.len_utf8() as isize;
                shifts.push((at, delta));
            } else {
                shown.push(c);
            }
        }
        Cow::Owned(shown)
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

/// `text` with each character `control` picks shown as its picture, and each that reorders
/// the text or takes no room where it stands (see [`unseen`]) as a replacement mark.
fn shown(text: &str, control: impl Fn(char) -> bool) -> Cow<'_, str> {
    let unseen = unseen(text);
    if unseen.is_empty() && !text.chars().any(|c| control(c) || is_bidi(c)) {
        return Cow::Borrowed(text);
    }
    let mut unseen = unseen.iter().peekable();
    Cow::Owned(
        text.char_indices()
            .map(|(at, c)| match c {
                _ if unseen.next_if_eq(&&at).is_some() => '\u{fffd}',
                c if !control(c) && !is_bidi(c) => c,
                '\u{7f}' => '\u{2421}',
                c if is_bidi(c) => '\u{fffd}',
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

/// Characters that take no room wherever they stand: zero-width spaces, the word joiner and
/// invisible operators, the byte-order mark, the soft hyphen, the grapheme joiner, fillers.
/// A name or a changed line holding one looks like one without it.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}' | '\u{034f}' | '\u{115f}' | '\u{1160}' | '\u{180e}' | '\u{200b}' | '\u{2060}'
            ..='\u{2064}' | '\u{3164}' | '\u{feff}' | '\u{ffa0}'
    )
}

/// Characters that take no room and change the character before them, which text needs in
/// some places only: the joiners (an emoji sequence, a Persian or Indic word), the variation
/// selectors (an emoji's presentation, an ideograph's form), and the tag characters (the flag
/// of a region, after a black flag; elsewhere they can spell hidden text).
fn is_joining(c: char) -> bool {
    matches!(
        c,
        '\u{200c}' | '\u{200d}' | '\u{fe00}'..='\u{fe0f}' | '\u{e0000}'..='\u{e007f}' | '\u{e0100}'..='\u{e01ef}'
    )
}

fn may_take_no_room(c: char) -> bool {
    is_invisible(c) || is_joining(c)
}

/// The black flag that a run of tag characters, ended by the cancel tag, makes a region's flag.
const BLACK_FLAG: char = '\u{1f3f4}';
const CANCEL_TAG: char = '\u{e007f}';
/// The most tags a region's flag takes (its code, as `gbsct`, is at most six letters or digits).
const FLAG_TAGS: usize = 6;

/// The byte offsets, in order, of the characters of `text` that take no room where they
/// stand, each of which is shown as a replacement mark: every [`is_invisible`] one, and each
/// [`is_joining`] one that stands where no text needs it. A joiner is needed between two
/// characters outside ASCII that show (two emoji, two letters of a script that joins); a
/// variation selector after such a character (or after a digit, `#` or `*` that a keycap
/// mark follows); tag letters and digits only as a region's flag. So a tool name or a path
/// holding one shows it, and an emoji or a Persian word in a prompt under review does not
/// turn into marks.
fn unseen(text: &str) -> Vec<usize> {
    let mut found = Vec::new();
    if !text.chars().any(may_take_no_room) {
        return found;
    }
    // Whether the character before may take a variation selector (one that shows, outside
    // ASCII, not itself a selector: one selector to a character, as a second would carry
    // nothing but hidden bits), and whether a joiner may follow it (such a character, or
    // the selector it took).
    let mut takes_selector = false;
    let mut joins_before = false;
    let mut before = None;
    let mut chars = text.char_indices();
    while let Some((offset, c)) = chars.next() {
        let after = chars.clone().next().map(|(_, after)| after);
        if c == BLACK_FLAG {
            // The tags of a region's flag, if a cancel tag ends them.
            let tags = chars
                .clone()
                .take(FLAG_TAGS + 1)
                .take_while(|&(_, tag)| is_flag_tag(tag))
                .count();
            let ended = chars
                .clone()
                .nth(tags)
                .is_some_and(|(_, end)| end == CANCEL_TAG);
            if (1..=FLAG_TAGS).contains(&tags) && ended {
                chars.nth(tags);
                (takes_selector, joins_before) = (false, true);
                before = Some(CANCEL_TAG);
                continue;
            }
        }
        let needed = match c {
            '\u{200c}' | '\u{200d}' => joins_before && after.is_some_and(joins),
            '\u{fe00}'..='\u{fe0f}' => {
                takes_selector
                    || (matches!(c, '\u{fe0e}' | '\u{fe0f}')
                        && before.is_some_and(|base: char| {
                            base.is_ascii_digit() || base == '#' || base == '*'
                        })
                        && after == Some('\u{20e3}'))
            }
            // The ideographic variation selectors vary ideographs alone.
            '\u{e0100}'..='\u{e01ef}' => takes_selector && before.is_some_and(is_ideograph),
            c => !may_take_no_room(c),
        };
        if !needed {
            found.push(offset);
        }
        (takes_selector, joins_before) = match c {
            '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' => (false, needed && joins_before),
            c => (needed && joins(c), needed && joins(c)),
        };
        before = Some(c);
    }
    found
}

/// Whether a joiner may stand next to `c`: a character outside ASCII that shows.
fn joins(c: char) -> bool {
    !c.is_ascii() && !c.is_whitespace() && !c.is_control() && !is_bidi(c) && !may_take_no_room(c)
}

/// The unified and compatibility ideographs, which the ideographic variation selectors vary.
fn is_ideograph(c: char) -> bool {
    matches!(
        c,
        '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{20000}'..='\u{3ffff}'
    )
}

/// The tag characters a region's flag spells its code with: tag digits and small letters.
fn is_flag_tag(c: char) -> bool {
    matches!(c, '\u{e0030}'..='\u{e0039}' | '\u{e0061}'..='\u{e007a}')
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
    fn joiners_and_selectors_are_shown_only_where_no_text_needs_them() {
        // Emoji sequences: a joined family, a heart on fire (a selector, then a joiner), a
        // keycap digit, a skin tone, a region's flag (tags ended by the cancel tag).
        for text in [
            "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}",
            "\u{2764}\u{fe0f}\u{200d}\u{1f525} done",
            "step 1\u{fe0f}\u{20e3}",
            "\u{1f44d}\u{1f3fd}",
            "\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}!",
            // A Persian word with its non-joiner, an ideograph's variation.
            "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}",
            "\u{8fbb}\u{e0100}",
        ] {
            assert!(matches!(visible(text), Cow::Borrowed(_)), "{text:?}");
            assert!(
                matches!(visible_source(text).0, Cow::Borrowed(_)),
                "{text:?}"
            );
        }
        // The same characters where they join nothing: after a letter of ASCII, at the end,
        // a selector after a digit no keycap follows, tags after no flag or never ended.
        for (text, shown) in [
            ("read_file\u{200d}", "read_file\u{fffd}"),
            ("a\u{200c}b", "a\u{fffd}b"),
            ("\u{1f468}\u{200d}", "\u{1f468}\u{fffd}"),
            ("\u{1f468}\u{200d} x", "\u{1f468}\u{fffd} x"),
            ("tool\u{fe0f}", "tool\u{fffd}"),
            ("1\u{fe0f}", "1\u{fffd}"),
            ("x\u{e0100}", "x\u{fffd}"),
            ("a\u{e0067}\u{e007f}", "a\u{fffd}\u{fffd}"),
            ("\u{1f3f4}\u{e0067}\u{e0062}", "\u{1f3f4}\u{fffd}\u{fffd}"),
            (
                "\u{1f3f4}\u{e0061}\u{e0061}\u{e0061}\u{e0061}\u{e0061}\u{e0061}\u{e0061}\u{e007f}",
                "\u{1f3f4}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}",
            ),
            // Bytes hidden as selectors after an emoji: one selector to a character.
            (
                "\u{1f600}\u{fe0f}\u{fe01}\u{e0142}",
                "\u{1f600}\u{fe0f}\u{fffd}\u{fffd}",
            ),
            ("\u{1f600}\u{e0142}", "\u{1f600}\u{fffd}"),
            // Hidden text spelled in tags after a flag: a capital tag is no region's code.
            ("\u{1f3f4}\u{e0041}\u{e007f}", "\u{1f3f4}\u{fffd}\u{fffd}"),
        ] {
            assert_eq!(visible(text), shown, "{text:?}");
            assert_eq!(visible_lines(text), shown, "{text:?}");
            assert_eq!(visible_source(text).0, shown, "{text:?}");
        }
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
