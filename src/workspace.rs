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

/// Ids (and component slots) declared by files that failed their schema check. They were
/// reported once; references to them are not reported again as dangling.
#[derive(Debug, Default)]
pub struct InvalidIds {
    ids: BTreeSet<(u8, String)>,
    /// Slots of invalid components, so base templates that use them are not blamed.
    pub slots: BTreeSet<String>,
}

impl InvalidIds {
    fn key(kind: RefKind) -> u8 {
        match kind {
            RefKind::Component => 0,
            RefKind::Tool => 1,
            RefKind::Variant => 2,
            _ => 3,
        }
    }

    pub fn insert(&mut self, kind: RefKind, id: String, slot: Option<String>) {
        if kind == RefKind::Component {
            self.slots.insert(
                slot.unwrap_or_else(|| format!("{}_SECTION", id.to_uppercase().replace('-', "_"))),
            );
        }
        self.ids.insert((Self::key(kind), id));
    }

    pub fn contains(&self, kind: RefKind, id: &str) -> bool {
        self.ids.contains(&(Self::key(kind), id.to_string()))
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
