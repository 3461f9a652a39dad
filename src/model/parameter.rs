use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool parameter. Either a full definition (`name` and `instruction`) or a reference to a
/// shared definition in `promptc.toml` (`use`), whose fields the ones given here replace.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Parameter {
    /// Name of a shared parameter declared under `[parameters]` in `promptc.toml`.
    #[serde(default, rename = "use", skip_serializing_if = "Option::is_none")]
    pub use_shared: Option<String>,
    /// The parameter's name as the model writes it: at most 128 characters (providers refuse
    /// longer property names; a shared parameter's name is written into every tool that uses
    /// it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub name: Option<String>,
    /// Whether the model must always give it. Defaults to false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// The value's type. Defaults to string.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<ParameterType>,
    /// What the parameter means and how to fill it (a template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// For `type = "array"`: the JSON Schema of each item (`{ type = "string" }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Value>,
    /// For `type = "object"`: the JSON Schema of each property, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<IndexMap<String, Value>>,
    /// The values it may take.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub one_of: Option<Vec<Value>>,
    /// Any other JSON Schema keywords (`minimum`, `pattern`, an object's `required`, …),
    /// passed to the native tool definitions as they are (each dialect drops, with a
    /// warning, what its provider does not accept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<IndexMap<String, Value>>,
    /// An example value shown in the usage block (a template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
    /// A sentence added to the tool's description whenever this parameter is shown (a
    /// template): what the tool does differently when it has the parameter. Left out with
    /// the parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Tool ids that must all be enabled for this parameter to be shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<Vec<String>>,
    /// A condition over the context; the parameter is shown only when it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
}

/// The JSON type of a parameter's value.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ParameterType {
    #[default]
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
}

impl ParameterType {
    pub fn name(self) -> &'static str {
        match self {
            ParameterType::String => "string",
            ParameterType::Integer => "integer",
            ParameterType::Number => "number",
            ParameterType::Boolean => "boolean",
            ParameterType::Array => "array",
            ParameterType::Object => "object",
        }
    }
}
