use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Limits, Parameter, PostprocessRule, TokenSettings};

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
    /// Parameter definitions shared by several tools; a tool's parameter refers to one with
    /// `use = "<name>"`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
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
    /// Token accounting: encodings per family, budgets, prompt-cache stability.
    #[serde(default)]
    pub tokens: TokenSettings,
    /// How many template instructions one compile (one family × context) may run, over all
    /// its templates, before it is stopped. Guards against runaway loops. Default 5 000 000,
    /// at most 100 000 000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100_000_000))]
    pub fuel: Option<u64>,
    /// How much text templates may build.
    #[serde(default)]
    pub limits: Limits,
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
    /// The outputs one by one, instead of every family with every context: each names a
    /// variant (or a family), a context and, optionally, its path under `out`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<BuildEntry>>,
}

/// One output of the build matrix.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BuildEntry {
    /// A variant id, or a family (compiled with its one variant).
    #[schemars(pattern(super::ID_PATTERN))]
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
