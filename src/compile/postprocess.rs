//! Post-processing: the manifest's ordered normalisation rules applied to a rendered prompt.

use regex::Regex;

use crate::model::{Guard, PostprocessRule};

/// The manifest's rules (or the default set), ready to apply: regexes compiled once.
#[derive(Debug)]
pub struct Postprocessor {
    steps: Vec<Step>,
}

#[derive(Debug)]
enum Step {
    Rule(PostprocessRule),
    Regex {
        regex: Regex,
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
        let steps = rules
            .into_iter()
            .filter_map(|rule| match rule {
                PostprocessRule::Regex {
                    pattern,
                    replace,
                    guard,
                } => Regex::new(&pattern).ok().map(|regex| Step::Regex {
                    regex,
                    replace,
                    guard,
                }),
                other => Some(Step::Rule(other)),
            })
            .collect();
        Self { steps }
    }

    /// Applies the rules in order.
    pub fn apply(&self, text: &str) -> String {
        let mut text = text.to_string();
        for step in &self.steps {
            text = match step {
                Step::Rule(PostprocessRule::TrimTrailingWhitespace) => {
                    trim_trailing_whitespace(&text)
                }
                Step::Rule(PostprocessRule::CollapseBlankLines { max }) => {
                    collapse_blank_lines(&text, *max)
                }
                Step::Rule(PostprocessRule::DropEmptySections { separator }) => {
                    drop_empty_sections(&text, separator)
                }
                Step::Rule(PostprocessRule::Trim) => trim(&text),
                // Compiled into `Step::Regex` by `new`.
                Step::Rule(PostprocessRule::Regex { .. }) => text,
                Step::Regex {
                    regex,
                    replace,
                    guard,
                } => replace_guarded(&text, regex, replace, guard.as_ref()),
            };
        }
        text
    }
}

fn trim_trailing_whitespace(text: &str) -> String {
    text.split('\n')
        .map(|line| line.trim_end_matches([' ', '\t', '\r']))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

fn collapse_blank_lines(text: &str, max: usize) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut run = 0;
    for line in text.split('\n') {
        if is_blank(line) {
            run += 1;
            if run > max {
                continue;
            }
            out.push("");
        } else {
            run = 0;
            out.push(line);
        }
    }
    // A blank final line is the text's closing newline, not a line of its own.
    let mut joined = out.join("\n");
    if text.ends_with('\n') && !joined.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

/// Removes a separator line when nothing but blank lines follows it before the next separator
/// or the end, and a separator at the very start.
fn drop_empty_sections(text: &str, separator: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let is_separator = |line: &str| line.trim() == separator;
    let mut keep = vec![true; lines.len()];
    let mut seen_content = false;
    for (index, line) in lines.iter().enumerate() {
        if is_separator(line) {
            let next_content = lines[index + 1..].iter().find(|l| !is_blank(l));
            let empty_after = next_content.is_none_or(|l| is_separator(l));
            if empty_after || !seen_content {
                keep[index] = false;
            }
        } else if !is_blank(line) {
            seen_content = true;
        }
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(&keep)
        .filter(|(_, keep)| **keep)
        .map(|(line, _)| *line)
        .collect();
    kept.join("\n")
}

/// The whole text without surrounding whitespace, ending in exactly one newline.
fn trim(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("{trimmed}\n")
    }
}

fn replace_guarded(text: &str, regex: &Regex, replace: &str, guard: Option<&Guard>) -> String {
    let Some(guard) = guard else {
        return regex.replace_all(text, replace).into_owned();
    };
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for captures in regex.captures_iter(text) {
        let Some(whole) = captures.get(0) else {
            continue;
        };
        out.push_str(&text[last..whole.start()]);
        if guarded(text, whole.start(), whole.end(), guard) {
            out.push_str(whole.as_str());
        } else {
            captures.expand(replace, &mut out);
        }
        last = whole.end();
    }
    out.push_str(&text[last..]);
    out
}

/// Whether a marker lies within `within` characters before or after the match.
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
    guard
        .markers
        .iter()
        .any(|marker| before.contains(marker.as_str()) || after.contains(marker.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapses_blank_lines_including_whitespace_only_ones() {
        assert_eq!(collapse_blank_lines("a\n\n \n\t\nb\n", 1), "a\n\nb\n");
        assert_eq!(collapse_blank_lines("a\n\n\n\nb", 2), "a\n\n\nb");
    }

    #[test]
    fn drops_separators_of_empty_sections() {
        let text = "====\n\nA\n\n====\n\n\n====\nB\n====\n\n";
        assert_eq!(drop_empty_sections(text, "===="), "\nA\n\n\n\n====\nB\n\n");
    }

    #[test]
    fn trims_to_one_final_newline() {
        assert_eq!(trim("\n\n  a\nb  \n\n"), "a\nb\n");
        assert_eq!(trim(" \n"), "");
    }

    #[test]
    fn guarded_matches_are_left_alone() {
        let regex = Regex::new("foo").unwrap();
        let guard = Guard {
            markers: vec!["```".into()],
            within: 5,
        };
        let text = "foo and ```foo``` and far away foo";
        assert_eq!(
            replace_guarded(text, &regex, "bar", Some(&guard)),
            "bar and ```foo``` and far away bar"
        );
    }

    #[test]
    fn a_guard_of_zero_characters_protects_nothing() {
        let regex = Regex::new("X").unwrap();
        for marker in ["a", "b"] {
            let guard = Guard {
                markers: vec![marker.into()],
                within: 0,
            };
            assert_eq!(replace_guarded("aXb", &regex, "-", Some(&guard)), "a-b");
        }
        let guard = Guard {
            markers: vec!["a".into()],
            within: 1,
        };
        assert_eq!(replace_guarded("aXb", &regex, "-", Some(&guard)), "aXb");
    }

    #[test]
    fn rules_apply_in_order() {
        let rules = vec![
            PostprocessRule::Regex {
                pattern: r"(\w+)@".into(),
                replace: "$1 at ".into(),
                guard: None,
            },
            PostprocessRule::Trim,
        ];
        assert_eq!(
            Postprocessor::new(Some(&rules)).apply("  me@home  "),
            "me at home\n"
        );
    }
}
