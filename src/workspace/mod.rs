//! A workspace after loading and validation: every file's spec with its compiled templates.

pub mod catalog;
mod definitions;
pub mod inheritance;
pub mod register;
pub mod template_choice;

pub use definitions::{
    ComponentDef, FamilyTexts, ManifestDef, ParameterTexts, ToolDef, ToolTexts, VariantDef,
    VariantTemplates,
};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use crate::follow::follow;
use crate::load::entry::Entry;
use crate::load::invalid_ids::InvalidIds;
use crate::model::{Component, Context, Manifest, ToolSpec, Variant};
use crate::problem::RefKind;
use crate::source::Sources;
use crate::templates::Templates;

pub struct Workspace {
    pub(crate) root: PathBuf,
    pub(crate) sources: Sources,
    /// `promptc.toml`; its defaults (and an empty document) when it is missing or invalid,
    /// which was reported.
    pub(crate) manifest: Entry<ManifestDef>,
    pub(crate) variants: IndexMap<String, Entry<VariantDef>>,
    pub(crate) components: IndexMap<String, Entry<ComponentDef>>,
    pub(crate) tools: IndexMap<String, Entry<ToolDef>>,
    /// Named contexts, by file stem.
    pub(crate) contexts: IndexMap<String, Entry<Context>>,
    /// What each named context's `rules_from` folders hold, read once at load.
    pub(crate) context_rules: IndexMap<String, std::sync::Arc<crate::load::rules::ReadRules>>,
    /// Each named context as the build matrix compiles it, assembled on first use (see
    /// [`Workspace::matrix_context`]).
    pub(crate) matrix_contexts: IndexMap<String, std::sync::OnceLock<Context>>,
    pub(crate) templates: Templates,
    /// The templates of the partials folder, in path order.
    pub(crate) partials: Vec<crate::templates::TemplateId>,
    /// Ids declared by files that failed validation.
    pub(crate) invalid: InvalidIds,
    /// Whether loading found no errors: only then can the workspace be compiled.
    pub(crate) valid: bool,
}

impl Workspace {
    /// A named context as every compile of the build matrix sees it: with its `rules_from`
    /// rules, and its rules decided by its own active files and toggles. Assembled once per
    /// process: the decisions are the same for every family, and a rules folder of many
    /// globs made deciding them again for each compile the matrix's largest cost.
    pub(crate) fn matrix_context(&self, name: &str) -> Option<&Context> {
        let context = &self.contexts.get(name)?.value;
        let assembled = self.matrix_contexts.get(name)?.get_or_init(|| {
            let mut context = context.clone();
            crate::load::rules::assemble_preread(
                &mut context,
                self.context_rules.get(name).map(AsRef::as_ref),
            );
            context
        });
        Some(assembled)
    }

    /// The folder holding `promptc.toml` (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The text of every file read, for rendering diagnostics.
    pub fn sources(&self) -> &Sources {
        &self.sources
    }

    /// A named context of the workspace (a file of its contexts folder, by stem).
    pub fn context(&self, name: &str) -> Option<&Context> {
        self.contexts.get(name).map(|entry| &entry.value)
    }

    /// The names of the workspace's contexts, in file order.
    pub fn context_names(&self) -> impl Iterator<Item = &str> {
        self.contexts.keys().map(String::as_str)
    }

    /// The variants as their files give them (before inheritance), in file order.
    pub fn variants(&self) -> impl Iterator<Item = &Variant> {
        self.variants.values().map(|entry| &entry.value.spec)
    }

    /// The components, in file order.
    pub fn components(&self) -> impl Iterator<Item = &Component> {
        self.components.values().map(|entry| &entry.value.spec)
    }

    /// The tool specs, in file order.
    pub fn tools(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.values().map(|entry| &entry.value.spec)
    }

    /// The manifest's settings (defaults when it is missing or invalid).
    pub fn settings(&self) -> &Manifest {
        &self.manifest.value.spec
    }

    /// The manifest, unless it failed to load (reported): checks of what it declares are
    /// skipped then, rather than run against its defaults.
    pub(crate) fn valid_manifest(&self) -> Option<&Entry<ManifestDef>> {
        (!self.invalid.manifest_invalid).then_some(&self.manifest)
    }

    /// Whether loading found no errors: only a valid workspace compiles.
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Whether `id`'s `extends` chain reaches its root through valid variants only. A chain
    /// that reaches an invalid or unknown variant, or loops, was reported where it breaks;
    /// whatever depends on the merged variant (its template, lists, slots) is not checked.
    pub(crate) fn ancestry_is_sound(&self, id: &str) -> bool {
        let chain = follow(id, |variant| {
            self.variants.get(variant)?.value.extends.as_deref()
        });
        chain.cycle.is_none() && !chain.too_long && self.variants.contains_key(chain.last())
    }

    /// Whether a family is declared, by a valid variant or by one that failed validation.
    pub(crate) fn knows_family(&self, families: &BTreeSet<String>, family: &str) -> bool {
        families.contains(family) || self.invalid.contains(RefKind::Family, family)
    }

    /// The family a variant reference names: the family of `family@version`, the family of
    /// a variant id, or else the reference itself (a family).
    pub fn family_of<'a>(&'a self, reference: &'a str) -> &'a str {
        if let Some((family, _)) = reference.split_once('@') {
            return family;
        }
        self.variants
            .get(reference)
            .map_or(reference, |entry| entry.value.family_or_id())
    }

    /// Families declared by the variants, in first-seen order.
    pub fn families(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        self.variants
            .values()
            .map(|entry| entry.value.family_or_id())
            .filter(|family| seen.insert(*family))
            .map(str::to_string)
            .collect()
    }
}
