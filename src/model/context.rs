use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The runtime inputs of one compile. Every field is optional; templates and conditions see
/// every field, with its default when the file does not set it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Context {
    /// A context (by name, a file stem under `paths.contexts`) this one starts from, setting
    /// only what differs: tables merge key by key (nested tables too), lists and single
    /// values replace. Not part of the assembled context.
    #[serde(skip_serializing)]
    #[schemars(pattern(super::ID_PATTERN))]
    pub extends: Option<String>,
    /// The agent's working directory.
    pub cwd: String,
    /// Operating system name, e.g. "Linux".
    pub os: String,
    /// The default shell, e.g. "/bin/bash".
    pub shell: String,
    /// The user's home directory.
    pub home: String,
    /// The editor or IDE the agent runs in, e.g. "VS Code".
    pub ide: String,
    /// The date of the compile, `YYYY-MM-DD`. When absent, SOURCE_DATE_EPOCH gives it; the
    /// wall clock never does. A TOML date (`date = 2026-11-01`, unquoted) is accepted too.
    #[schemars(extend("format" = "date"))]
    pub date: Option<String>,
    pub model: Model,
    /// Plan mode (discuss and plan) or act mode (carry out).
    pub mode: Mode,
    pub browser: Browser,
    /// MCP servers connected to the agent.
    pub mcp_servers: Vec<McpServer>,
    pub focus_chain: FocusChain,
    /// The user's rules, inserted as data: one text, or a list of rules (what rules files
    /// give: `rules_from`, `--rules`).
    pub rules: super::Rules,
    /// Workflows (`.clinerules/workflows/`): kept apart from the rules, never in them.
    pub workflows: Vec<super::Rule>,
    /// Folders of the workspace to read rules files from (`.clinerules`, `.cursorrules`,
    /// `.cursor/rules`, `.windsurfrules`, `AGENTS.md`), relative to the workspace root.
    pub rules_from: Vec<String>,
    /// Files the user is working on, relative to the project: a rule with `globs` applies
    /// only when one of them matches. At most 10,000: each rule's globs are matched against
    /// each of them.
    #[schemars(length(max = super::limits::MAX_ACTIVE_FILES))]
    pub active_files: Vec<String>,
    /// Rules switched on or off by name (or path): `false` leaves the rule out.
    pub rule_toggles: IndexMap<String, bool>,
    /// The language the agent should answer in; empty for the user's own.
    pub preferred_language: String,
    /// When true, actions run without asking the user for approval.
    pub yolo: bool,
    /// Folders of a multi-root workspace.
    pub workspace_roots: Vec<WorkspaceRoot>,
    /// Runtime placeholders: they replace variant placeholders of the same name. Names:
    /// letters, digits and `_`, and not the name of a context field or a predicate.
    #[schemars(extend("propertyNames" = { "pattern": super::NAME_PATTERN }))]
    pub placeholders: IndexMap<String, Value>,
    /// Free-form values for a workspace's own templates (`extra.<key>`).
    pub extra: IndexMap<String, Value>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Model {
    /// The API provider, e.g. "anthropic", "openai", "ollama".
    pub provider: String,
    /// The model id as the provider names it.
    pub id: String,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Act,
    Plan,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Browser {
    /// Whether the agent can drive a browser.
    pub enabled: bool,
    pub viewport: Viewport,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Viewport {
    #[schemars(range(min = 1))]
    pub width: u32,
    #[schemars(range(min = 1))]
    pub height: u32,
}

impl Default for Viewport {
    fn default() -> Self {
        Self {
            width: 900,
            height: 600,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FocusChain {
    /// Whether the agent keeps a task progress checklist.
    pub enabled: bool,
    /// How many requests pass between reminders to update the checklist; 0 for none.
    pub remind_every: u32,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WorkspaceRoot {
    pub name: String,
    pub path: String,
    /// Version control system, e.g. "git".
    pub vcs: String,
}

/// An MCP server and what it offers. It counts (its section in the prompt, its tools among
/// the native tool definitions) when it is not disabled and is connected.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpServer {
    /// Its name, shown in the prompt and the first part of its tools' native names.
    #[schemars(length(min = 1))]
    pub name: String,
    /// A stable identifier, used in native tool names. Defaults to the name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub uid: Option<String>,
    /// Switched off in the user's settings.
    pub disabled: bool,
    /// Whether the agent is connected to it now. Missing means connected.
    pub status: McpStatus,
    /// How the server is started or reached, e.g. a command line or URL.
    pub command: String,
    pub tools: Vec<McpTool>,
    pub resources: Vec<McpResource>,
    pub resource_templates: Vec<McpResourceTemplate>,
    pub prompts: Vec<McpPrompt>,
}

/// The connection state of an MCP server.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum McpStatus {
    #[default]
    Connected,
    Connecting,
    Disconnected,
}

impl McpServer {
    /// Whether the server counts: not disabled, and connected. The one rule for the prompt
    /// and the native tool definitions alike.
    pub fn counts(&self) -> bool {
        !self.disabled && self.status == McpStatus::Connected
    }

    /// The identifier native tool names use: `uid`, else the name.
    pub fn uid_or_name(&self) -> &str {
        self.uid.as_deref().unwrap_or(&self.name)
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpTool {
    /// The name the server gives it, the last part of its native name.
    #[schemars(length(min = 1))]
    pub name: String,
    pub description: String,
    /// JSON Schema of the tool's arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpResource {
    pub uri: String,
    pub name: String,
    pub mime_type: String,
    pub description: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpResourceTemplate {
    pub uri_template: String,
    pub name: String,
    pub mime_type: String,
    pub description: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpPrompt {
    pub name: String,
    pub description: String,
    pub arguments: Vec<McpPromptArgument>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpPromptArgument {
    pub name: String,
    pub description: String,
    pub required: bool,
}
