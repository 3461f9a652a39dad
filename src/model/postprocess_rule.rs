use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One normalisation step applied to a compiled prompt.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "rule", rename_all = "snake_case", deny_unknown_fields)]
pub enum PostprocessRule {
    /// Remove spaces and tabs at the end of every line.
    TrimTrailingWhitespace,
    /// Replace runs of more than `max` blank lines with `max` empty lines. A run no longer
    /// than `max` is left as it is (a whitespace-only line between two lines of text keeps its
    /// spaces).
    CollapseBlankLines {
        #[serde(default = "default_max_blank_lines")]
        max: usize,
        /// Whether a line of only spaces and tabs counts as blank. Default true.
        #[serde(default = "default_true")]
        whitespace_is_blank: bool,
    },
    /// Remove a separator line when only blank lines stand between it and the next separator
    /// (or the end of the text), so a section that rendered empty leaves no trace.
    DropEmptySections {
        #[serde(default = "default_separator")]
        #[schemars(length(min = 1))]
        separator: String,
    },
    /// Remove leading and trailing whitespace from the whole text.
    Trim {
        /// End a text that is not empty with one newline. Default true.
        #[serde(default = "default_true")]
        final_newline: bool,
    },
    /// Exactly one blank line before and after each separator line (none before one that
    /// opens the text, none after one that ends it).
    SeparatorSpacing {
        #[serde(default = "default_separator")]
        #[schemars(length(min = 1))]
        separator: String,
        /// Leave a separator alone when one of the markers is near it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guard: Option<Guard>,
    },
    /// Remove Markdown headings left without a title (`## ` alone on its line).
    DropEmptyHeadings {
        /// Leave such a line alone when one of the markers is near it (a lone `#` in a fenced
        /// shell example is a comment).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guard: Option<Guard>,
    },
    /// Replace every match of a regular expression (Rust `regex` syntax; `$1` in `replace`
    /// refers to a group).
    Regex {
        /// Must not be empty: an empty pattern matches between every two characters.
        #[schemars(length(min = 1))]
        pattern: String,
        #[serde(default)]
        replace: String,
        /// Skip a match when one of the markers appears near it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guard: Option<Guard>,
    },
}

/// Protects regions of text from a rule: a match is left alone when any marker string lies
/// within `within` characters of it, on the `side` given.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Guard {
    /// At most 32 markers of at most 256 characters each: every match is checked against
    /// each of them.
    // 50,000 markers over a million matches ran for minutes.
    #[schemars(length(max = 32), inner(length(min = 1, max = 256)))]
    pub markers: Vec<String>,
    pub within: usize,
    /// Where to look: `before` the match (the window ends at its start), `after` it, or
    /// `both` (the default).
    #[serde(default)]
    pub side: GuardSide,
}

/// The side of a match a guard looks at.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum GuardSide {
    Before,
    After,
    #[default]
    Both,
}

fn default_true() -> bool {
    true
}

fn default_max_blank_lines() -> usize {
    1
}

fn default_separator() -> String {
    "====".into()
}

impl PostprocessRule {
    /// The `rule` names, for messages.
    pub const NAMES: [&str; 7] = [
        "trim_trailing_whitespace",
        "collapse_blank_lines",
        "drop_empty_sections",
        "trim",
        "separator_spacing",
        "drop_empty_headings",
        "regex",
    ];

    /// The rules used when the manifest declares none.
    pub fn default_set() -> Vec<PostprocessRule> {
        // Dropping a separator leaves the blank lines around it side by side, so blank
        // lines are collapsed after it.
        vec![
            PostprocessRule::DropEmptySections {
                separator: default_separator(),
            },
            PostprocessRule::CollapseBlankLines {
                max: 1,
                whitespace_is_blank: true,
            },
            PostprocessRule::Trim {
                final_newline: true,
            },
        ]
    }
}
