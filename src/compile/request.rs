//! What to compile: a selection of variant and a runtime context.

use indexmap::IndexMap;

use crate::model::Context;

/// Which variant to compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// The manifest's fallback family.
    Default,
    Family(String),
    Variant(String),
}

#[derive(Clone, Debug)]
pub struct Request {
    pub selection: Selection,
    pub context: Context,
    /// `--set KEY=VALUE` pairs: runtime placeholders that win over everything.
    pub set: IndexMap<String, String>,
    /// SOURCE_DATE_EPOCH, used when the context has no date.
    pub source_date_epoch: Option<i64>,
}

impl Request {
    pub fn new(selection: Selection, context: Context) -> Self {
        Self {
            selection,
            context,
            set: IndexMap::new(),
            source_date_epoch: None,
        }
    }
}
