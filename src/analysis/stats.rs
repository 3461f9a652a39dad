//! The figures of one compiled prompt: tokens in its family's encoding, characters, the
//! cacheable prefix, and tokens per section.

use serde::Serialize;

use crate::analysis::budget::{budget_of, definitions_sent};
use crate::analysis::stable_prefix::{StablePrefix, stable_prefix};
use crate::compile::{Compiler, Request};
use crate::compiled::Compiled;

/// What stats shows of one compiled prompt.
#[derive(Debug, Serialize)]
pub struct PromptStats {
    pub family: String,
    /// The variant compiled, and its version: a build entry (a family's beta beside its
    /// stable version) is told apart from the family's own row.
    pub variant: String,
    pub version: Option<String>,
    pub context: String,
    /// The build matrix's output for the prompt, when it is one of the matrix's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    pub encoding: &'static str,
    /// Whether the encoding is the family's real tokenizer; otherwise counts are estimates.
    pub exact: bool,
    /// The prompt's tokens.
    pub tokens: usize,
    /// For a variant with native tool calls: the tokens of its tool definitions, as a request
    /// carries them (see [`definitions_sent`]); they count toward the budget too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_definition_tokens: Option<usize>,
    /// The variant's token budget (its own `max_prompt_tokens`, or the manifest's), if any.
    pub budget: Option<usize>,
    /// Tokens left under the budget by the prompt and its tool definitions; negative when
    /// over it.
    pub headroom: Option<i64>,
    pub characters: usize,
    pub stable_prefix: Option<StablePrefix>,
    /// Tokens of each non-empty section, in prompt order.
    pub sections: Vec<SectionTokens>,
}

/// One section's tokens. A section shown inside another (its slot read by that one's
/// template) is counted in both: `inside` names the other, so that the counts are not added.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SectionTokens {
    pub id: String,
    pub tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inside: Option<String>,
}

/// The figures of `compiled`, the prompt `request` compiled to for the context named
/// `context`.
pub fn prompt_stats(
    compiler: &Compiler<'_>,
    request: &Request,
    compiled: &Compiled,
    context: &str,
) -> PromptStats {
    let settings = &compiler.workspace().settings().tokens;
    let encoding = settings.encoding_for(&compiled.family);
    let tokens = encoding.count(&compiled.prompt);
    let tool_definition_tokens =
        definitions_sent(compiled).map(|definitions| encoding.count(&definitions));
    let sent = tokens.saturating_add(tool_definition_tokens.unwrap_or(0));
    let budget = compiler
        .variant(&compiled.variant)
        .and_then(|variant| budget_of(compiler.workspace(), variant))
        .map(|(budget, _)| budget);
    PromptStats {
        encoding: encoding.name(),
        exact: settings.is_exact(&compiled.family),
        tokens,
        tool_definition_tokens,
        budget,
        headroom: budget.map(|budget| {
            i64::try_from(budget).unwrap_or(i64::MAX) - i64::try_from(sent).unwrap_or(i64::MAX)
        }),
        characters: compiled.prompt.chars().count(),
        stable_prefix: stable_prefix(compiler, request, compiled),
        sections: {
            let inside =
                crate::analysis::budget::containers(compiler.workspace(), &compiled.sections);
            compiled
                .sections
                .iter()
                .filter(|s| !s.text.is_empty())
                .map(|s| SectionTokens {
                    id: s.id.clone(),
                    tokens: encoding.count(&s.text),
                    inside: inside.get(s.id.as_str()).map(|id| (*id).to_string()),
                })
                .collect()
        },
        family: compiled.family.clone(),
        variant: compiled.variant.clone(),
        version: compiled.version.clone(),
        context: context.to_string(),
        output: None,
    }
}
