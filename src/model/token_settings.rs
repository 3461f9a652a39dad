use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::StandardPlaceholder;
use crate::tokens::Encoding;

/// Token accounting: which encoding counts each family, budgets, and prompt-cache stability.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TokenSettings {
    /// Encoding for every family not listed in `families`.
    #[serde(default)]
    pub encoding: Encoding,
    /// Per-family encodings.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub families: IndexMap<String, Encoding>,
    /// Families whose models really use the encoding they are counted with. Counts for every
    /// other family are estimates, and are labelled `≈`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exact: Vec<String>,
    /// Budget of every variant that sets no `max_prompt_tokens` of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_prompt_tokens: Option<usize>,
    /// Names whose values change from one request to the next (standard placeholders,
    /// context fields or runtime placeholders). Text after the first of them cannot be served
    /// from a provider's prompt cache.
    #[serde(default = "TokenSettings::default_volatile")]
    pub volatile: Vec<String>,
    /// `promptc validate` warns when a volatile value appears within the first this-many
    /// percent of a prompt. 0 turns the warning off.
    #[serde(default = "TokenSettings::default_stable_percent")]
    #[schemars(range(max = 100))]
    pub stable_prefix_percent: u8,
    /// What that finding is: `warning` (the default), `error` (fails `validate`), or `off`.
    #[serde(default)]
    pub stable_prefix_level: LintLevel,
}

/// How a lint reports what it finds.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LintLevel {
    Off,
    #[default]
    Warning,
    Error,
}

impl TokenSettings {
    fn default_volatile() -> Vec<String> {
        StandardPlaceholder::VOLATILE_BY_DEFAULT
            .map(|placeholder| placeholder.name().to_string())
            .to_vec()
    }

    fn default_stable_percent() -> u8 {
        50
    }

    pub fn encoding_for(&self, family: &str) -> Encoding {
        self.families.get(family).copied().unwrap_or(self.encoding)
    }

    pub fn is_exact(&self, family: &str) -> bool {
        self.exact.iter().any(|f| f == family)
    }
}

impl Default for TokenSettings {
    fn default() -> Self {
        Self {
            encoding: Encoding::default(),
            families: IndexMap::new(),
            exact: Vec::new(),
            max_prompt_tokens: None,
            volatile: Self::default_volatile(),
            stable_prefix_percent: Self::default_stable_percent(),
            stable_prefix_level: LintLevel::default(),
        }
    }
}
