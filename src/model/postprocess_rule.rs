use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One normalisation step applied to a compiled prompt.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "rule", rename_all = "snake_case", deny_unknown_fields)]
pub enum PostprocessRule {
    /// Remove spaces and tabs at the end of every line.
    TrimTrailingWhitespace,
    /// Replace runs of more than `max` blank lines with `max` blank lines.
    CollapseBlankLines {
        #[serde(default = "default_max_blank_lines")]
        max: usize,
    },
    /// Remove a separator line when only blank lines stand between it and the next separator
    /// (or the end of the text), so a section that rendered empty leaves no trace.
    DropEmptySections {
        #[serde(default = "default_separator")]
        #[schemars(length(min = 1))]
        separator: String,
    },
    /// Remove leading and trailing whitespace from the whole text, keeping one final newline.
    Trim,
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

/// Protects regions of text from a regex rule: a match is left alone when any marker string
/// lies within `within` characters before or after it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Guard {
    #[schemars(inner(length(min = 1)))]
    pub markers: Vec<String>,
    pub within: usize,
}

fn default_max_blank_lines() -> usize {
    1
}

fn default_separator() -> String {
    "====".into()
}

impl PostprocessRule {
    /// The `rule` names, for messages.
    pub const NAMES: [&str; 5] = [
        "trim_trailing_whitespace",
        "collapse_blank_lines",
        "drop_empty_sections",
        "trim",
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
            PostprocessRule::CollapseBlankLines { max: 1 },
            PostprocessRule::Trim,
        ]
    }
}
