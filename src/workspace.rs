//! A workspace after loading and validation: the library API's entry point.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use crate::diagnostic::Diagnostics;
use crate::entry::Entry;
use crate::model::{Component, Context, Manifest, ToolSpec, Variant};
use crate::problem::RefKind;
use crate::source::Sources;
use crate::templates::Templates;

pub struct Workspace {
    pub root: PathBuf,
    pub sources: Sources,
    pub manifest: Manifest,
    pub manifest_entry: Option<Entry<Manifest>>,
    pub variants: IndexMap<String, Entry<Variant>>,
    pub components: IndexMap<String, Entry<Component>>,
    pub tools: IndexMap<String, Entry<ToolSpec>>,
    /// Named contexts, by file stem.
    pub contexts: IndexMap<String, Entry<Context>>,
    pub templates: Templates,
    /// Ids declared by files that failed validation.
    pub invalid: InvalidIds,
}

/// What files that failed to parse or failed their schema check would have declared: their
/// ids (from the file, else from the file name), component slots and variant families. They
/// were reported once; references to them are not reported again, and checks that need their
/// contents are skipped.
#[derive(Debug, Default)]
pub struct InvalidIds {
    ids: BTreeSet<(u8, String)>,
    /// Slots of invalid components, so base templates that use them are not blamed.
    pub slots: BTreeSet<String>,
    /// The manifest is invalid: what it declares (predicates, which templates and conditions
    /// may use; shared parameters, which tools may `use`) is unknown.
    pub manifest_invalid: bool,
    /// A variant is invalid: its placeholders, which component and tool templates may use,
    /// are unknown.
    pub placeholders_unknown: bool,
}

impl InvalidIds {
    fn key(kind: RefKind) -> u8 {
        match kind {
            RefKind::Component => 0,
            RefKind::Tool => 1,
            RefKind::Variant => 2,
            RefKind::Family => 3,
            RefKind::Context => 4,
            _ => 5,
        }
    }

    pub fn insert(&mut self, kind: RefKind, id: String, slot: Option<String>) {
        if kind == RefKind::Component {
            self.slots
                .insert(slot.unwrap_or_else(|| crate::model::default_slot(&id)));
        }
        self.ids.insert((Self::key(kind), id));
    }

    pub fn contains(&self, kind: RefKind, id: &str) -> bool {
        self.ids.contains(&(Self::key(kind), id.to_string()))
    }

    /// Whether a name that looks undefined may be one an invalid file declares.
    pub fn names_unknown(&self) -> bool {
        self.manifest_invalid || self.placeholders_unknown
    }
}

/// A workspace together with everything validation found. The workspace holds every file
/// that could be read, so a run can report all problems at once.
pub struct Loaded {
    pub workspace: Workspace,
    pub diagnostics: Diagnostics,
}

impl Workspace {
    /// Loads and validates the workspace rooted at `root` (the folder holding
    /// `promptc.toml`). Only I/O failures are errors; problems in the files are diagnostics.
    pub fn load(root: &Path) -> io::Result<Loaded> {
        crate::validate::load_workspace(root)
    }

    /// Whether `id`'s `extends` chain reaches its root through valid variants only. A chain
    /// that reaches an invalid or unknown variant, or loops, was reported where it breaks;
    /// whatever depends on the merged variant (its template, lists, slots) is not checked.
    pub fn ancestry_is_sound(&self, id: &str) -> bool {
        let mut seen: Vec<&str> = vec![id];
        let mut current = self.variants.get(id);
        while let Some(entry) = current {
            let Some(parent) = entry.value.extends.as_deref() else {
                return true;
            };
            if seen.contains(&parent) {
                return false;
            }
            seen.push(parent);
            current = self.variants.get(parent);
        }
        false
    }

    /// Whether a family is declared, by a valid variant or by one that failed validation.
    pub fn knows_family(&self, families: &BTreeSet<String>, family: &str) -> bool {
        families.contains(family) || self.invalid.contains(RefKind::Family, family)
    }

    /// Families declared by the variants, in first-seen order.
    pub fn families(&self) -> Vec<String> {
        let mut families: Vec<String> = Vec::new();
        for entry in self.variants.values() {
            let family = entry.value.family.as_ref().unwrap_or(&entry.value.id);
            if !families.contains(family) {
                families.push(family.clone());
            }
        }
        families
    }
}
