use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Parameter;
use crate::pointer::child_pointer;

/// A tool the agent may call. The top-level fields are the generic spec, used by every family
/// that has no entry under `families`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// Unique id, used in variants' `tools` lists and in `depends_on`: letters, digits, `_`,
    /// `.` and `-`.
    #[schemars(pattern(super::ID_PATTERN))]
    pub id: String,
    /// The name the model calls. Defaults to the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// What the tool does and when to use it (a template).
    pub description: String,
    /// A condition over the context; the tool is offered only when it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// One tool per item of a list in the context (an expression such as
    /// `extra.subagents`), in the list's order: the item is in scope (as `item`, or the name
    /// `as` gives) for the tool's `name`, description and parameter texts, and `name` is then
    /// a template. A missing or empty list offers none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub for_each: Option<String>,
    /// The name of a `for_each` item in the tool's texts. Defaults to `item`.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(super::NAME_PATTERN))]
    pub item_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    /// Per-family specs. Each starts from the generic spec (or from another family's, with
    /// `based_on`) and replaces the fields it sets.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub families: IndexMap<String, ToolFamilySpec>,
}

/// One family's spec of a tool: the fields it sets replace those of its base.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolFamilySpec {
    /// Another family of this tool to start from, instead of the generic spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub based_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// Replaces the whole parameter list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Vec<Parameter>>,
}

impl ToolSpec {
    /// The name a `for_each` item has in the tool's texts.
    pub fn item_name(&self) -> &str {
        self.item_name.as_deref().unwrap_or("item")
    }

    /// Every parameter list the tool declares, with the JSON pointer it is written at: the
    /// generic `/parameters`, then `/families/<family>/parameters` of each family that
    /// replaces the list.
    pub fn parameter_lists(&self) -> impl Iterator<Item = (String, &[Parameter])> {
        let families = self.families.iter().filter_map(|(family, spec)| {
            let list = spec.parameters.as_deref()?;
            Some((
                format!("{}/parameters", child_pointer("/families", family)),
                list,
            ))
        });
        std::iter::once(("/parameters".to_string(), self.parameters.as_slice())).chain(families)
    }
}

/// Letters, digits, `_`, `.` and `-`, starting with a letter or `_`: a name every tool
/// format and provider accepts, so a tool's name (the tag of its calls in a prompt, the name
/// in native definitions) must be one.
pub fn is_callable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}
