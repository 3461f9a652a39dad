use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the templates treat the white space around their block tags (`{% if %}`, `{% for %}`,
/// `{% endfor %}`, …), as Jinja2's environment options of the same names do: a registry
/// ported from an environment that set them renders the same bytes. Both are off by default,
/// as in Jinja2; a tag's own `-` (`{%- … -%}`) trims whatever these say.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TemplateSettings {
    /// Remove the first line end after a block tag, so that a tag on a line of its own leaves
    /// no empty line (Jinja2's `trim_blocks`). Default false.
    #[serde(default)]
    pub trim_blocks: bool,
    /// Remove the spaces and tabs before a block tag that starts a line (Jinja2's
    /// `lstrip_blocks`). Default false.
    #[serde(default)]
    pub lstrip_blocks: bool,
}

impl TemplateSettings {
    /// Both off, as Jinja2's defaults are.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}
