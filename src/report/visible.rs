//! Text from a workspace (a file's name above all) as it is safe to print to a terminal or a
//! CI log: a name may hold escape sequences that move the cursor, clear the screen or retitle
//! the window. Each control character is shown as its Unicode picture (`␛` for escape).

use std::borrow::Cow;

/// `text` with every control character but a line break or a tab shown as its picture.
pub fn visible(text: &str) -> Cow<'_, str> {
    let hidden = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                c if !hidden(c) => c,
                '\u{7f}' => '\u{2421}',
                // C0 controls have pictures at U+2400 on; others (C1) a replacement mark.
                c => char::from_u32(0x2400 + u32::from(c))
                    .filter(|_| u32::from(c) < 0x20)
                    .unwrap_or('\u{fffd}'),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_as_pictures_and_lines_stay_lines() {
        assert_eq!(visible("plain/path.md"), "plain/path.md");
        assert!(matches!(visible("a\tb\nc"), Cow::Borrowed(_)));
        assert_eq!(
            visible("components/a\u{1b}[2J\u{1b}]0;title\u{7}b\u{7f}\u{9b}.toml"),
            "components/a\u{241b}[2J\u{241b}]0;title\u{2407}b\u{2421}\u{fffd}.toml"
        );
    }
}
