//! A workspace after loading and validation: every file's spec with its compiled templates.

pub mod catalog;
mod definitions;
pub mod inheritance;
pub mod order;
pub mod register;
mod shared_parameter;
pub mod template_choice;

pub use definitions::{
    ComponentDef, FamilyTexts, ManifestDef, ParameterTexts, ToolDef, ToolTexts, VariantDef,
    VariantTemplates,
};
pub use shared_parameter::ParameterParts;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;

use crate::bounded_memo::BoundedMemo;
use crate::follow::follow;
use crate::load::entry::Entry;
use crate::load::invalid_ids::InvalidIds;
use crate::model::{Component, Context, Manifest, ToolSpec, Variant};
use crate::problem::RefKind;
use crate::source::Sources;
use crate::templates::Templates;

/// The most bytes of rules the contexts that [`Workspace::matrix_context`] keeps may hold
/// together: a few contexts of a full rules folder each (8 MiB), many small ones.
const MATRIX_CONTEXT_BYTES: usize = 32 * 1024 * 1024;

/// An empty memo for [`Workspace::matrix_contexts`].
pub(crate) fn matrix_contexts() -> BoundedMemo<String, Arc<Context>> {
    BoundedMemo::new(MATRIX_CONTEXT_BYTES)
}

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
    /// Named contexts as the build matrix compiles them, assembled on first use and kept up
    /// to a size (see [`Workspace::matrix_context`]).
    pub(crate) matrix_contexts: BoundedMemo<String, Arc<Context>>,
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
    /// process while the assembled contexts fit in [`MATRIX_CONTEXT_BYTES`]: the decisions are
    /// the same for every family, and a rules folder of many globs made deciding them again
    /// for each compile the matrix's largest cost. Past that they are assembled again: kept
    /// for the whole process, 200 contexts reading one 8 MB rules folder held 1.7 GB.
    pub(crate) fn matrix_context(&self, name: &str) -> Option<Arc<Context>> {
        if let Some(assembled) = self.matrix_contexts.get(name) {
            return Some(assembled);
        }
        self.decide_matrix_context(name)
            .map(|(assembled, _)| assembled)
    }

    /// [`Workspace::matrix_context`] assembled now, with why each of its rules applies or
    /// not; kept for the compiles as that one is (validation decides each context's rules,
    /// and the matrix takes them from there).
    pub(crate) fn decide_matrix_context(
        &self,
        name: &str,
    ) -> Option<(Arc<Context>, crate::load::rules::RulesReport)> {
        let mut context = self.contexts.get(name)?.value.clone();
        let report = crate::load::rules::assemble_preread(
            &mut context,
            self.context_rules.get(name).map(AsRef::as_ref),
            self.contexts.len(),
        );
        let bytes = crate::load::rules::rules_bytes(&context);
        let assembled = Arc::new(context);
        self.matrix_contexts
            .insert(name.to_string(), Arc::clone(&assembled), bytes);
        Some((assembled, report))
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
    /// Nor is it through an id two files declare: which of them is meant is not known.
    pub(crate) fn ancestry_is_sound(&self, id: &str) -> bool {
        let chain = follow(id, |variant| {
            self.variants.get(variant)?.value.extends.as_deref()
        });
        chain.cycle.is_none()
            && !chain.too_long
            && self.variants.contains_key(chain.last())
            && !chain
                .links
                .iter()
                .any(|link| self.invalid.contains(RefKind::Variant, link))
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
    /// The families and the contexts the build matrix pairs: those `[build]` names, else
    /// every one.
    pub(crate) fn build_product(&self) -> (Vec<String>, Vec<String>) {
        let build = &self.settings().build;
        let families = build.families.clone().unwrap_or_else(|| self.families());
        let contexts = build
            .contexts
            .clone()
            .unwrap_or_else(|| self.contexts.keys().cloned().collect());
        (families, contexts)
    }

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

#[cfg(test)]
mod tests {
    use super::MATRIX_CONTEXT_BYTES;

    /// Contexts that read one large rules folder are kept only while they fit: each holds
    /// the folder's rules, and a memo of every one grew with the number of contexts. One
    /// assembled again is the same as before.
    #[test]
    fn assembled_contexts_are_kept_within_a_size() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "promptc.toml",
            "fallback_family = \"a\"\ndefault_context = \"c0\"\n",
        );
        write(
            "variants/a.toml",
            "id = \"a\"\ntemplate = \"{{ rules | length }}\\n\"\n",
        );
        let text = "A line of a rule.\n".repeat(3 * 1024 * 1024 / 18);
        write("rules/.clinerules/one.md", &text);
        write("rules/.clinerules/two.md", &text);
        let contexts = 8;
        for index in 0..contexts {
            write(
                &format!("examples/contexts/c{index}.toml"),
                "rules_from = [\"rules\"]\n",
            );
        }
        let root = dir.path().canonicalize().unwrap();
        let loaded = crate::loader::load_workspace(&root).unwrap();
        assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
        let workspace = &loaded.workspace;
        let first = workspace.matrix_context("c0").unwrap();
        let bytes = crate::load::rules::rules_bytes(&first);
        assert!(bytes > 6 * 1024 * 1024, "{bytes}");
        for index in 0..contexts {
            let assembled = workspace.matrix_context(&format!("c{index}")).unwrap();
            assert_eq!(assembled.rules, first.rules);
            assert!(workspace.matrix_contexts.held_bytes() <= MATRIX_CONTEXT_BYTES);
        }
        assert!(
            contexts * bytes > MATRIX_CONTEXT_BYTES,
            "the contexts together outgrow the memo"
        );
        assert!(
            workspace.matrix_contexts.get("c0").is_none(),
            "c0 was let go"
        );
        let again = workspace.matrix_context("c0").unwrap();
        assert!(!std::sync::Arc::ptr_eq(&first, &again));
        assert_eq!(*again, *first);
    }
}
