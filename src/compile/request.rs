//! What to compile: a selection of variant and a runtime context.

use indexmap::IndexMap;

use crate::load::mcp_places::McpPlaces;
use crate::model::{Context, Dialect};

/// Which variant to compile: a family, a variant, or the family routing picks for the
/// context's model; then, within the family, a label or a tag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub by: SelectBy,
    /// The version this label names (an error when the family has no such label). Without
    /// it, the manifest's `routing.label`, when the family has it, else the highest version.
    pub label: Option<String>,
    /// Only variants carrying this tag. With [`SelectBy::Fallback`], the one family whose
    /// variants carry it.
    pub tag: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SelectBy {
    /// The family whose `match` holds first for the context (its `model.id`,
    /// `model.provider`, …), in the manifest's `routing.order`; the fallback family when
    /// none does.
    #[default]
    Route,
    /// The manifest's `fallback_family`.
    Fallback,
    Family(String),
    /// A variant id, or `family@version` (a version or the start of one: its highest match).
    Variant(String),
}

impl Selection {
    /// The family routing picks for the context's model.
    pub fn route() -> Self {
        Self::default()
    }

    /// The manifest's fallback family.
    pub fn fallback() -> Self {
        Self::by(SelectBy::Fallback)
    }

    pub fn family(family: impl Into<String>) -> Self {
        Self::by(SelectBy::Family(family.into()))
    }

    /// A variant id or `family@version`.
    pub fn variant(variant: impl Into<String>) -> Self {
        Self::by(SelectBy::Variant(variant.into()))
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn with_tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = Some(tag.into());
        self
    }

    fn by(by: SelectBy) -> Self {
        Self {
            by,
            label: None,
            tag: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Request {
    pub selection: Selection,
    pub context: Context,
    /// `--set KEY=VALUE` pairs: runtime placeholders that win over everything.
    pub set: IndexMap<String, String>,
    /// SOURCE_DATE_EPOCH, used when the context has no date.
    pub source_date_epoch: Option<i64>,
    /// The provider shape of native tool definitions, instead of the manifest's rules.
    pub dialect: Option<Dialect>,
    /// Where the context's MCP tools are written, for the problems found with them; empty
    /// for a context with no file behind it.
    pub mcp_places: McpPlaces,
}

impl Request {
    pub fn new(selection: Selection, context: Context) -> Self {
        Self {
            selection,
            context,
            set: IndexMap::new(),
            source_date_epoch: None,
            dialect: None,
            mcp_places: McpPlaces::default(),
        }
    }
}
