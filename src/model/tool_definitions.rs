use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How native tool definitions are written (`[tool_definitions]` in the manifest).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolDefinitionSettings {
    /// The dialect when no rule of `dialects` holds.
    #[serde(default)]
    pub dialect: Dialect,
    /// Rules tried in order: the first whose condition holds for the context (`model.id`,
    /// `model.provider`, predicates) gives the dialect. `--dialect` overrides them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dialects: Vec<DialectRule>,
    /// How an MCP tool is named: a template over `server` (the server's `uid`, else its
    /// name) and `tool`.
    #[serde(default = "ToolDefinitionSettings::default_mcp_name")]
    pub mcp_name: String,
    /// What to do with an MCP tool whose name is longer than the provider allows: `skip` it
    /// with a warning, or fail with an `error`.
    #[serde(default)]
    pub long_names: LongNames,
}

impl ToolDefinitionSettings {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    fn default_mcp_name() -> String {
        "{{ server }}__{{ tool }}".into()
    }
}

impl Default for ToolDefinitionSettings {
    fn default() -> Self {
        Self {
            dialect: Dialect::default(),
            dialects: Vec::new(),
            mcp_name: Self::default_mcp_name(),
            long_names: LongNames::default(),
        }
    }
}

/// One rule of `tool_definitions.dialects`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DialectRule {
    /// A condition over the context, as in `when` and a variant's `match`.
    #[schemars(length(min = 1))]
    pub when: String,
    pub dialect: Dialect,
}

/// The shape of a provider's tool definitions.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// OpenAI Chat Completions: `{type: "function", function: {name, description, strict,
    /// parameters}}`.
    #[default]
    Openai,
    /// OpenAI Responses: `{type: "function", name, description, parameters, strict}`.
    OpenaiResponses,
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// Google Gemini and Vertex AI: `functionDeclarations` with the OpenAPI-subset schema.
    Gemini,
}

impl Dialect {
    pub const ALL: [Dialect; 4] = [
        Dialect::Openai,
        Dialect::OpenaiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Openai => "openai",
            Dialect::OpenaiResponses => "openai-responses",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
        }
    }

    /// The longest tool name the provider accepts: 64 characters for each of them.
    pub fn max_name_len(self) -> usize {
        64
    }

    /// The longest tool description the provider accepts, in characters, where it sets one:
    /// OpenAI's Chat Completions API refuses a request with a `function.description` longer
    /// than 1,024 (`string_above_max_length`), as MCP servers' long descriptions often are.
    pub fn max_description_len(self) -> Option<usize> {
        match self {
            Dialect::Openai => Some(1024),
            Dialect::OpenaiResponses | Dialect::Anthropic | Dialect::Gemini => None,
        }
    }

    /// Whether the provider accepts `name` as a tool name (its characters; length apart).
    pub fn accepts_name(self, name: &str) -> bool {
        match self {
            Dialect::Openai | Dialect::OpenaiResponses | Dialect::Anthropic => name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            Dialect::Gemini => {
                name.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
            }
        }
    }
}

impl Dialect {
    /// Whether the provider accepts `name` as the name of a tool's argument (a key of its
    /// input schema's `properties`): Anthropic refuses the whole request for a key that is
    /// not 1 to 64 of letters, digits, `_`, `.` and `-`.
    pub fn accepts_property(self, name: &str) -> bool {
        match self {
            Dialect::Anthropic => {
                (1..=64).contains(&name.len())
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            }
            Dialect::Openai | Dialect::OpenaiResponses | Dialect::Gemini => true,
        }
    }
}

/// What happens to an MCP tool whose name is too long for the provider.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LongNames {
    #[default]
    Skip,
    Error,
}
