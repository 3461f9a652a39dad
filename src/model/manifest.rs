use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    ContextField, Limits, Parameter, PostprocessRule, TemplateSettings, TokenSettings,
    ToolDefinitionSettings,
};

/// The workspace manifest, `promptc.toml`, at the root of a workspace.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// A name for the prompt library, shown in JSON output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The family compiled when none is asked for. Defaults to `generic`.
    #[serde(default = "default_fallback_family")]
    pub fallback_family: String,
    /// The context (a file stem under `paths.contexts`) used when a build names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_context: Option<String>,
    /// Where the kinds of files live, relative to the workspace root.
    #[serde(default)]
    pub paths: Paths,
    /// Named conditions, usable by name in every condition and template. Each may use the
    /// context and the predicates declared before it. Names: letters, digits and `_`, and
    /// none of the names templates already see (context fields, standard placeholders, …).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(extend("propertyNames" = { "pattern": super::NAME_PATTERN }))]
    pub predicates: IndexMap<String, String>,
    /// The keys of the contexts' `extra` table, each with a type and a default. Once any is
    /// declared, contexts are checked against them (an undeclared key or a wrong type is an
    /// error) and conditions and templates see the default of a key a context leaves out.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(extend("propertyNames" = { "pattern": super::NAME_PATTERN }))]
    pub context_fields: IndexMap<String, ContextField>,
    /// Parameter definitions shared by several tools; a tool's parameter refers to one with
    /// `use = "<name>"`. A definition's key, at most 128 characters, is its `name` unless it
    /// sets one.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(extend("propertyNames" = { "minLength": 1, "maxLength": 128 }))]
    pub parameters: IndexMap<String, Parameter>,
    /// Normalisation applied to every compiled prompt, in order. When absent, the default set
    /// is used: empty sections between `====`
    /// separators dropped, runs of blank lines collapsed to one, and the whole text trimmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postprocess: Option<Vec<PostprocessRule>>,
    /// The families and contexts compiled by `promptc build --all` and compared by
    /// `promptc check`.
    #[serde(default)]
    pub build: BuildMatrix,
    /// Native tool definitions: which provider's shape a compile uses, how MCP tools are
    /// named.
    #[serde(default, skip_serializing_if = "ToolDefinitionSettings::is_default")]
    pub tool_definitions: ToolDefinitionSettings,
    /// Model routing: which family serves a model id.
    #[serde(default, skip_serializing_if = "Routing::is_empty")]
    pub routing: Routing,
    /// Token accounting: encodings per family, budgets, prompt-cache stability.
    #[serde(default)]
    pub tokens: TokenSettings,
    /// How many template instructions one compile (one family × context) may run, over all
    /// its templates, before it is stopped. Guards against runaway loops. Default 5 000 000,
    /// at most 100 000 000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::model::limits::MAX_FUEL))]
    pub fuel: Option<u64>,
    /// How much text templates may build.
    #[serde(default)]
    pub limits: Limits,
    /// The white space around the templates' block tags (Jinja2's `trim_blocks` and
    /// `lstrip_blocks`).
    #[serde(default, skip_serializing_if = "TemplateSettings::is_default")]
    pub templates: TemplateSettings,
}

fn default_fallback_family() -> String {
    "generic".into()
}

/// Folders of a workspace, relative to its root.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Paths {
    #[serde(default = "Paths::default_variants")]
    pub variants: String,
    #[serde(default = "Paths::default_components")]
    pub components: String,
    #[serde(default = "Paths::default_tools")]
    pub tools: String,
    #[serde(default = "Paths::default_contexts")]
    pub contexts: String,
    /// Shared template fragments: every `.md`, `.txt`, `.j2` and `.jinja` file below it is a
    /// template, named by its workspace-relative path (`partials/rules/intro.md`), that any
    /// template may `{% include %}`, `{% import %}` or `{% extends %}`.
    #[serde(default = "Paths::default_partials")]
    pub partials: String,
    #[serde(default = "Paths::default_schema")]
    pub schema: String,
}

impl Paths {
    fn default_variants() -> String {
        "variants".into()
    }
    fn default_components() -> String {
        "components".into()
    }
    fn default_tools() -> String {
        "tools".into()
    }
    fn default_contexts() -> String {
        "examples/contexts".into()
    }
    fn default_partials() -> String {
        "partials".into()
    }
    fn default_schema() -> String {
        "schema".into()
    }
}

impl Default for Paths {
    fn default() -> Self {
        Self {
            variants: Self::default_variants(),
            components: Self::default_components(),
            tools: Self::default_tools(),
            contexts: Self::default_contexts(),
            partials: Self::default_partials(),
            schema: Self::default_schema(),
        }
    }
}

/// The build matrix: every family × context pair is one compiled output.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildMatrix {
    /// Families to compile. Defaults to every family a variant declares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub families: Option<Vec<String>>,
    /// Context names (file stems under `paths.contexts`). Defaults to all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contexts: Option<Vec<String>>,
    /// Where compiled outputs are written, as `<out>/<family>/<context>.md`.
    #[serde(default = "BuildMatrix::default_out")]
    pub out: String,
    /// The outputs one by one: each names a variant (or a family, or `family@version`), a
    /// context and, optionally, its path under `out`. Alone, they are the whole matrix; with
    /// `families` or `contexts`, they are added to that product (a version in review beside
    /// the released prompts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<BuildEntry>>,
}

/// One output of the build matrix.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BuildEntry {
    /// A variant id, a family (compiled with the version `routing.label` names, or its
    /// highest), or `family@version` (a version or the start of one: its highest match).
    #[schemars(pattern(super::VARIANT_REF_PATTERN))]
    pub variant: String,
    /// A context name (a file stem under `paths.contexts`).
    #[schemars(pattern(super::ID_PATTERN))]
    pub context: String,
    /// Where it is written under `out`, as `<folder>/<name>.md`. Defaults to
    /// `<family>/<context>.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(super::OUTPUT_PATTERN))]
    pub output: Option<String>,
}

impl BuildMatrix {
    fn default_out() -> String {
        "examples/prompts".into()
    }
}

impl Default for BuildMatrix {
    fn default() -> Self {
        Self {
            families: None,
            contexts: None,
            out: Self::default_out(),
            entries: None,
        }
    }
}

/// Which family serves a model: the families' `match` conditions, tried in order.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// The families whose `match` is tried, first to last; the first that holds wins, and
    /// `fallback_family` serves a model none matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    /// The label whose version a routed family compiles with; a family without it uses its
    /// highest version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(super::ID_PATTERN))]
    pub label: Option<String>,
    /// Known models and the family each must route to, checked by `validate`, so a change
    /// that re-routes one fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<RouteExpectation>,
}

impl Routing {
    pub fn is_empty(&self) -> bool {
        *self == Routing::default()
    }
}

/// A model and the family it must route to.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouteExpectation {
    /// The model id, as the agent's provider names it.
    #[schemars(length(min = 1))]
    pub model: String,
    /// The provider, when rules read it (empty when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The family it must route to.
    #[schemars(pattern(super::ID_PATTERN))]
    pub family: String,
    /// The context the rules see (a name under `paths.contexts`). Defaults to
    /// `default_context`, or an empty context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(super::ID_PATTERN))]
    pub context: Option<String>,
}
