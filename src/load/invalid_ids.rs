//! What files that failed to load would have declared.

use std::collections::BTreeSet;

use crate::model::default_slot;
use crate::problem::RefKind;

/// What files that failed to parse or failed their schema check would have declared: their
/// ids (from the file, else from the file name), component slots and variant families. They
/// were reported once; references to them are not reported again, and checks that need their
/// contents are skipped.
#[derive(Debug, Default)]
pub struct InvalidIds {
    ids: BTreeSet<(RefKind, String)>,
    /// Slots of invalid components, so base templates that use them are not blamed.
    pub slots: BTreeSet<String>,
    /// The manifest is invalid: what it declares (predicates, which templates and conditions
    /// may use; shared parameters, which tools may `use`) is unknown.
    pub manifest_invalid: bool,
    /// A variant is invalid: what it declares (its placeholders, which component and tool
    /// templates may use; its labels, which `routing.label` may name) is unknown.
    pub variant_invalid: bool,
    /// An invalid variant's family cannot be told from its file (it could not be read, or
    /// its `family` or `id` is not text): it may be any family.
    pub variant_family_unknown: bool,
}

impl InvalidIds {
    pub fn insert(&mut self, kind: RefKind, id: String, slot: Option<String>) {
        if kind == RefKind::Component {
            self.slots.insert(slot.unwrap_or_else(|| default_slot(&id)));
        }
        self.ids.insert((kind, id));
    }

    pub fn contains(&self, kind: RefKind, id: &str) -> bool {
        self.ids.contains(&(kind, id.to_string()))
    }

    /// Whether an invalid variant file may be one of `family`'s variants.
    pub fn may_be_of_family(&self, family: &str) -> bool {
        self.variant_family_unknown || self.contains(RefKind::Family, family)
    }

    /// Whether a name that looks undefined may be one an invalid file declares.
    pub fn names_unknown(&self) -> bool {
        self.manifest_invalid || self.variant_invalid
    }
}
