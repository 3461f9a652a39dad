//! Token counts with OpenAI's BPE encodings, offline, through GitHub's `bpe-openai` (the
//! fastest to load and count of the offline implementations measured in
//! `benches/pipeline.rs`). The tables are loaded once per process.
//!
//! No faithful offline tokenizer exists for every model family, so counts for a family whose
//! real tokenizer differs are estimates; callers label them so.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// GPT-4o and later.
    #[default]
    O200k,
    /// GPT-4 and GPT-3.5.
    Cl100k,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200k => "o200k",
            Encoding::Cl100k => "cl100k",
        }
    }

    /// The number of tokens in `text`; special-token text is counted as ordinary text.
    pub fn count(self, text: &str) -> usize {
        let tokenizer = match self {
            Encoding::O200k => bpe_openai::o200k_base(),
            Encoding::Cl100k => bpe_openai::cl100k_base(),
        };
        tokenizer.count(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        assert_eq!(Encoding::O200k.count(""), 0);
        assert_eq!(Encoding::O200k.count("hello world"), 2);
        assert_eq!(Encoding::Cl100k.count("hello world"), 2);
        // The encodings differ on real text.
        let text = "Läuft der Übersetzer? 日本語のテキスト";
        assert_ne!(Encoding::O200k.count(text), Encoding::Cl100k.count(text));
    }
}
