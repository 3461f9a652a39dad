use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The user's rules in a context: one text (as before rules files were read), or a list of
/// rules, each saying where it came from.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum Rules {
    /// Rules text, inserted as data.
    Text(String),
    /// Rules one by one, in the order they reach the prompt.
    List(Vec<Rule>),
}

impl Default for Rules {
    fn default() -> Self {
        Rules::Text(String::new())
    }
}

/// One rule (or workflow) read from a rules file.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Rule {
    /// Where it came from: `clinerules`, `cursorrules`, `cursor`, `windsurfrules`, `agents`,
    /// `global`, `workflow` or `context`.
    pub kind: String,
    /// Its file, relative to the rules folder it was read from (`.clinerules/testing.md`).
    pub path: String,
    /// Its name: the file name without `.md` or `.mdc`. `--disable-rule` and `rule_toggles`
    /// switch a rule off by this name (or by its path).
    pub name: String,
    /// The rule's text, without its frontmatter.
    pub text: String,
    /// The frontmatter (description, globs, tags, author, version, and anything else).
    pub metadata: IndexMap<String, Value>,
}

/// Rules text, as a context held it before rules became a list.
impl From<&str> for Rules {
    fn from(text: &str) -> Self {
        Rules::Text(text.to_string())
    }
}

impl From<String> for Rules {
    fn from(text: String) -> Self {
        Rules::Text(text)
    }
}
