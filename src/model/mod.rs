//! The data model: what each kind of file may contain. These types are the single source of
//! the JSON Schemas in `schema/` (`promptc schema` writes them), so a doc comment here is the
//! hover text an editor shows.

mod component;
mod context;
mod context_field;
pub mod limits;
mod manifest;
mod parameter;
mod placeholder_kind;
mod postprocess_rule;
mod rule;
mod standard_placeholder;
mod template_settings;
mod token_settings;
mod tool;
mod tool_definitions;
mod variant;
pub mod version;

/// What an id (of a variant, component or tool) or a family may be: it names files and
/// templates.
pub const ID_PATTERN: &str = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$";

/// Whether `id` matches [`ID_PATTERN`]: a letter or digit, then letters, digits, `_`, `.`
/// and `-`.
pub fn is_valid_id(id: &str) -> bool {
    id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}
/// What a version may be: it is written after `@` in `family@version`.
pub const VERSION_PATTERN: &str = r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$";
/// What names a variant: its id, or `family@version` (a version or the start of one).
pub const VARIANT_REF_PATTERN: &str =
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*(@[A-Za-z0-9][A-Za-z0-9_.+-]*)?$";
/// What a name templates and conditions use (a predicate, a placeholder, a slot) may be: a
/// name an expression can spell.
pub const NAME_PATTERN: &str = r"^[A-Za-z_][A-Za-z0-9_]*$";
/// Where a build entry's output goes under `build.out`: one folder and a Markdown file, so
/// outputs stay where promptc looks after them.
pub const OUTPUT_PATTERN: &str = r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*\.md$";

pub use component::{Component, FamilyTemplate, default_slot};
pub use context::{
    Browser, Context, FocusChain, McpPrompt, McpPromptArgument, McpResource, McpResourceTemplate,
    McpServer, McpStatus, McpTool, Mode, Model, Viewport, WorkspaceRoot,
};
pub use context_field::ContextField;
pub use limits::Limits;
pub use manifest::{BuildEntry, BuildMatrix, Manifest, Paths, RouteExpectation, Routing};
pub use parameter::{Parameter, ParameterType};
pub use placeholder_kind::{KindFrom, PlaceholderKind};
pub use postprocess_rule::{Guard, GuardSide, PostprocessRule};
pub use rule::{Rule, Rules};
pub use standard_placeholder::StandardPlaceholder;
pub use template_settings::TemplateSettings;
pub use token_settings::{LintLevel, TokenSettings};
pub use tool::{ToolFamilySpec, ToolSpec, is_callable_name};
pub use tool_definitions::{Dialect, DialectRule, LongNames, ToolDefinitionSettings};
pub use variant::{ComponentOverride, Label, ModelConfig, Overrides, ToolOverride, Variant};
