use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A variant: the prompt for one model family.
///
/// With `extends`, a variant starts from another and changes only what it sets: fields that
/// hold one value or a list (`template`, `components`, `tools`, `tags`, …) replace the parent's;
/// `add_components` and `add_tools` append to the inherited lists; tables (`placeholders`,
/// `labels`, `model`, `overrides`) merge key by key, the child's entry winning, and an
/// override merges field by field.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Unique id of the variant: letters, digits, `_`, `.` and `-`.
    #[schemars(pattern(super::ID_PATTERN))]
    pub id: String,
    /// The model family this variant serves. Defaults to the id. Letters, digits, `_`, `.`
    /// and `-`: it names output files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(super::ID_PATTERN))]
    pub family: Option<String>,
    /// Id of a variant to inherit from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(super::ID_PATTERN))]
    pub extends: Option<String>,
    /// Version of this variant's prompt, e.g. "1.2.0". Several variants may serve one family
    /// with different versions; `family@version` selects one, and a family's highest version
    /// (numeric parts compared as numbers) is used when nothing else decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(super::VERSION_PATTERN))]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Free tags, e.g. "production", "experimental".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Names for versions of this variant's family, e.g. `stable = "1.0.0"`, `beta = "2"` (a
    /// version or the start of one: its highest match). `--label` selects by them, and
    /// routing uses the manifest's `routing.label`. `false` drops a label inherited through
    /// `extends`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("propertyNames" = { "pattern": super::ID_PATTERN }))]
    pub labels: Option<IndexMap<String, Label>>,
    /// The models this family serves: a condition over the context (`model.id`,
    /// `model.provider`, any field, the manifest's predicates), tried in the order of the
    /// manifest's `routing.order`. Not inherited: it belongs to the family, and every variant
    /// of the family that sets it must set the same one.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub route_match: Option<String>,
    /// The base template, inline. It lays out the prompt through section slots such as
    /// `{{ RULES_SECTION }}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// The base template, as a path relative to this file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_file: Option<String>,
    /// Component ids, in the order they are rendered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub components: Option<Vec<String>>,
    /// Tool ids, in the order they are documented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Component ids appended to the inherited list (after `components`, if also set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_components: Option<Vec<String>>,
    /// Tool ids appended to the inherited list; `order` in an override places them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_tools: Option<Vec<String>>,
    /// Template that documents one tool (variable `tool`), inline. Replaces the built-in
    /// format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_format: Option<String>,
    /// Template that documents one tool, as a path relative to this file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_format_file: Option<String>,
    /// Default placeholder values; runtime placeholders (`--set`, the context) replace them.
    /// Names: letters, digits and `_`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(extend("propertyNames" = { "pattern": super::NAME_PATTERN }))]
    pub placeholders: IndexMap<String, Value>,
    /// Changes to listed components and tools.
    #[serde(default, skip_serializing_if = "Overrides::is_empty")]
    pub overrides: Overrides,
    /// The most tokens this variant's compiled prompt may have (counted with the family's
    /// encoding); `validate`, `build` and `check` fail above it. Replaces the manifest's
    /// `tokens.max_prompt_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_prompt_tokens: Option<usize>,
    /// The model calls tools natively: each compile also gives the provider-shaped tool
    /// definitions (`tool_definitions` in JSON output, `<output>.tools.json` in the build
    /// matrix, `promptc tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_tools: Option<bool>,
    /// Settings passed to the model with this prompt.
    #[serde(default, skip_serializing_if = "ModelConfig::is_empty")]
    pub model: ModelConfig,
}

/// A label's value: the version it names, or `false` to drop an inherited label.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(untagged)]
pub enum Label {
    /// A version of the family, or the start of one (`"2"` names the highest `2.x`).
    Version(#[schemars(pattern(super::VERSION_PATTERN))] String),
    /// `false` drops the label; `true` means nothing and is reported.
    Dropped(bool),
}

impl Variant {
    /// The labels in effect: those naming a version (a dropped one is gone).
    pub fn label_versions(&self) -> impl Iterator<Item = (&str, &str)> {
        self.labels
            .iter()
            .flatten()
            .filter_map(|(name, label)| match label {
                Label::Version(version) => Some((name.as_str(), version.as_str())),
                Label::Dropped(_) => None,
            })
    }

    /// The family this variant serves: `family`, or its id when it names none.
    pub fn family_or_id(&self) -> &str {
        self.family.as_deref().unwrap_or(&self.id)
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub components: IndexMap<String, ComponentOverride>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub tools: IndexMap<String, ToolOverride>,
}

impl Overrides {
    pub fn is_empty(&self) -> bool {
        self.components.is_empty() && self.tools.is_empty()
    }
}

/// A variant's change to one component.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ComponentOverride {
    /// `false` leaves the component out (its slot renders "").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Moves the component to this 1-based position in the rendering order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub order: Option<usize>,
    /// Replaces the component's template, inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Replaces the component's template with a file, relative to the variant file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_file: Option<String>,
}

/// A variant's change to one tool.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolOverride {
    /// `false` leaves the tool out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Moves the tool to this 1-based position in the tool list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub order: Option<usize>,
}

/// Model settings carried with the prompt.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub temperature: Option<f64>,
    /// Nucleus sampling: the probability mass kept, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1))]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u64>,
    /// Any other setting the agent passes to its model (`reasoning_effort = "high"`, a
    /// thinking budget, a model name), carried as it is into the JSON output. Merged key by
    /// key through `extends`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub extra: IndexMap<String, Value>,
}

impl ModelConfig {
    pub fn is_empty(&self) -> bool {
        *self == ModelConfig::default()
    }
}
