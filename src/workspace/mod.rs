//! A workspace after loading and validation: every file's spec with its compiled templates.

mod definitions;

pub use definitions::{
    ComponentDef, FamilyTexts, ManifestDef, ParameterTexts, ToolDef, ToolTexts, VariantDef,
    VariantTemplates,
};

use std::collections::BTreeSet;
use std::path::PathBuf;

use indexmap::IndexMap;

use crate::diagnostic::Diagnostics;
use crate::entry::Entry;
use crate::model::{Context, Manifest};
use crate::problem::RefKind;
use crate::source::Sources;
use crate::templates::Templates;

pub struct Workspace {
    pub root: PathBuf,
    pub sources: Sources,
    /// `promptc.toml`; its defaults (and an empty document) when it is missing or invalid,
    /// which was reported.
    pub manifest: Entry<ManifestDef>,
    pub variants: IndexMap<String, Entry<VariantDef>>,
    pub components: IndexMap<String, Entry<ComponentDef>>,
    pub tools: IndexMap<String, Entry<ToolDef>>,
    /// Named contexts, by file stem.
    pub contexts: IndexMap<String, Entry<Context>>,
    pub templates: Templates,
    /// Ids declared by files that failed validation.
    pub invalid: InvalidIds,
    /// Whether loading found no errors: only then can the workspace be compiled.
    pub(crate) valid: bool,
}

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
    /// A variant is invalid: its placeholders, which component and tool templates may use,
    /// are unknown.
    pub placeholders_unknown: bool,
}

impl InvalidIds {
    pub fn insert(&mut self, kind: RefKind, id: String, slot: Option<String>) {
        if kind == RefKind::Component {
            self.slots
                .insert(slot.unwrap_or_else(|| crate::model::default_slot(&id)));
        }
        self.ids.insert((kind, id));
    }

    pub fn contains(&self, kind: RefKind, id: &str) -> bool {
        self.ids.contains(&(kind, id.to_string()))
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
    /// The manifest's settings (defaults when it is missing or invalid).
    pub fn settings(&self) -> &Manifest {
        &self.manifest.value.spec
    }

    /// The manifest, unless it failed to load (reported): checks of what it declares are
    /// skipped then, rather than run against its defaults.
    pub fn valid_manifest(&self) -> Option<&Entry<ManifestDef>> {
        (!self.invalid.manifest_invalid).then_some(&self.manifest)
    }

    /// Whether loading found no errors: only a valid workspace compiles.
    pub fn is_valid(&self) -> bool {
        self.valid
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
            let family = entry.value.family_or_id();
            if !families.iter().any(|known| known == family) {
                families.push(family.to_string());
            }
        }
        families
    }
}
