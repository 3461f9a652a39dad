use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A component: one section of the prompt.
///
/// Its template is given inline (`template`), by path (`template_file`), or, when neither is
/// set, read from the file next to this one with the same stem and `.md` extension.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Component {
    /// Unique id of the component: letters, digits, `_`, `.` and `-`.
    #[schemars(pattern(super::ID_PATTERN))]
    pub id: String,
    /// Placeholder the base template uses for this section. Defaults to the id in upper case,
    /// `-` and `.` as `_`, followed by `_SECTION` (`rules` → `RULES_SECTION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(super::NAME_PATTERN))]
    pub slot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A condition over the context; when false the section renders "".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Path to the template, relative to this file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_file: Option<String>,
    /// Alternative templates for some families, keyed by family.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub families: IndexMap<String, FamilyTemplate>,
}

/// A family's own template for a component.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FamilyTemplate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_file: Option<String>,
}

impl Component {
    pub fn slot(&self) -> String {
        self.slot.clone().unwrap_or_else(|| default_slot(&self.id))
    }
}

/// The slot of a component that names none: its id in upper case, with `-` and `.` (which
/// a template cannot spell in a name) as `_`, followed by `_SECTION`.
pub fn default_slot(id: &str) -> String {
    format!("{}_SECTION", id.to_uppercase().replace(['-', '.'], "_"))
}
