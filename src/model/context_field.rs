use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ParameterType;

/// A key of the context's `extra` table that the workspace declares: contexts are checked
/// against its type, and conditions and templates see its default when a context leaves it
/// out. Once a workspace declares one, every key of `extra` must be declared.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ContextField {
    /// The value's type.
    #[serde(rename = "type")]
    pub kind: ParameterType,
    /// The value when a context does not set it. Defaults to the type's empty value: "",
    /// 0, false, [] or {}.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// What the field means, shown by editors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl ContextField {
    /// The value a context that leaves the field out has.
    pub fn default_value(&self) -> Value {
        self.default.clone().unwrap_or(match self.kind {
            ParameterType::String => Value::String(String::new()),
            ParameterType::Integer | ParameterType::Number => Value::from(0),
            ParameterType::Boolean => Value::Bool(false),
            ParameterType::Array => Value::Array(Vec::new()),
            ParameterType::Object => Value::Object(serde_json::Map::new()),
        })
    }

    /// Whether a value has the field's type.
    pub fn accepts(&self, value: &Value) -> bool {
        match self.kind {
            ParameterType::String => value.is_string(),
            ParameterType::Integer => value.is_i64() || value.is_u64(),
            ParameterType::Number => value.is_number(),
            ParameterType::Boolean => value.is_boolean(),
            ParameterType::Array => value.is_array(),
            ParameterType::Object => value.is_object(),
        }
    }
}
