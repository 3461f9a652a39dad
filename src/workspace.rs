//! A workspace after loading and validation: the library API's entry point.

use std::io;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use crate::diagnostic::Diagnostics;
use crate::entry::Entry;
use crate::model::{Component, Context, Manifest, ToolSpec, Variant};
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
