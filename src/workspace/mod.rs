//! A workspace after loading and validation: every file's spec with its compiled templates.

mod definitions;
pub mod inheritance;
pub mod register;
pub mod template_choice;

pub use definitions::{
    ComponentDef, FamilyTexts, ManifestDef, ParameterTexts, ToolDef, ToolTexts, VariantDef,
    VariantTemplates,
};

use std::collections::BTreeSet;
use std::path::PathBuf;

use indexmap::IndexMap;

use crate::follow::follow;
use crate::load::entry::Entry;
use crate::load::invalid_ids::InvalidIds;
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
        let chain = follow(id, |variant| {
            self.variants.get(variant)?.value.extends.as_deref()
        });
        chain.cycle.is_none() && self.variants.contains_key(chain.last())
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
