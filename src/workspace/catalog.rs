//! The variants by family: which one a family, `family@version`, a label or a tag names.
//! Built over variants after inheritance, so a version, label or tag set by an ancestor
//! counts; validation and selection both ask it, so they agree.

use indexmap::IndexMap;

use crate::model::Variant;
use crate::model::version;
use crate::namespace::closest;
use crate::problem::{Problem, RoutingProblem};

/// What narrows a family to one variant.
#[derive(Clone, Copy, Debug, Default)]
pub struct Narrowing<'s> {
    /// Only variants carrying this tag.
    pub tag: Option<&'s str>,
    /// The version this label names; an error when the family lacks it.
    pub label: Option<&'s str>,
    /// The version this label names when the family has it (routing's label).
    pub preferred_label: Option<&'s str>,
}

pub struct Catalog<'v> {
    /// Variants by family, each family's in file order.
    families: IndexMap<&'v str, Vec<&'v Variant>>,
}

impl<'v> Catalog<'v> {
    /// Variants after inheritance (their `family` set), in file order.
    pub fn new(variants: impl IntoIterator<Item = &'v Variant>) -> Self {
        let mut families: IndexMap<&str, Vec<&Variant>> = IndexMap::new();
        for variant in variants {
            families
                .entry(variant.family_or_id())
                .or_default()
                .push(variant);
        }
        Self { families }
    }

    /// A family's variants, in file order.
    pub fn members(&self, family: &str) -> &[&'v Variant] {
        self.families.get(family).map_or(&[], Vec::as_slice)
    }

    /// A family's versions, lowest first ("" for a variant without one).
    pub fn versions(&self, family: &str) -> Vec<String> {
        let mut versions: Vec<String> = self
            .members(family)
            .iter()
            .map(|variant| version_of(variant).to_string())
            .collect();
        versions.sort_by(|a, b| version::compare(a, b));
        versions
    }

    /// The version a label names in a family: the first variant (in file order) declaring it.
    pub fn label(&self, family: &str, label: &str) -> Option<&'v str> {
        self.members(family).iter().find_map(|variant| {
            variant
                .label_versions()
                .find(|(name, _)| *name == label)
                .map(|(_, version)| version)
        })
    }

    /// Every label some variant declares, sorted.
    pub fn all_labels(&self) -> Vec<String> {
        label_names(self.families.values().flatten())
    }

    /// The variant of `family` whose version `wanted` names (the highest of several).
    pub fn version(&self, family: &str, wanted: &str) -> Result<&'v Variant, Problem> {
        if self.members(family).is_empty() {
            return Err(Problem::NoVariant {
                family: family.to_string(),
            });
        }
        version::highest_named(
            self.members(family)
                .iter()
                .map(|variant| (version_of(variant), *variant)),
            wanted,
        )
        .map(|(_, variant)| variant)
        .ok_or_else(|| self.unknown_version(family, wanted))
    }

    fn unknown_version(&self, family: &str, wanted: &str) -> Problem {
        Problem::Routing(RoutingProblem::UnknownVersion {
            family: family.to_string(),
            wanted: wanted.to_string(),
            known: self
                .versions(family)
                .into_iter()
                .filter(|version| !version.is_empty())
                .collect(),
        })
    }

    /// The variant a family compiles with: among those carrying the tag, the version the
    /// label names, else the preferred label's, else the highest.
    pub fn pick(&self, family: &str, narrowing: Narrowing<'_>) -> Result<&'v Variant, Problem> {
        let members = self.members(family);
        if members.is_empty() {
            return Err(Problem::NoVariant {
                family: family.to_string(),
            });
        }
        let candidates: Vec<&Variant> = match narrowing.tag {
            Some(tag) => members
                .iter()
                .copied()
                .filter(|variant| has_tag(variant, tag))
                .collect(),
            None => members.to_vec(),
        };
        if let Some(tag) = narrowing.tag.filter(|_| candidates.is_empty()) {
            let known = tag_names(members.iter());
            return Err(Problem::Routing(RoutingProblem::NoTaggedVersion {
                family: family.to_string(),
                tag: tag.to_string(),
                suggestion: closest(tag, &known),
                known,
            }));
        }
        let versions = || {
            candidates
                .iter()
                .map(|variant| (version_of(variant), *variant))
        };
        if let Some(label) = narrowing.label {
            let Some(wanted) = self.label(family, label) else {
                let known = label_names(members.iter());
                return Err(Problem::Routing(RoutingProblem::UnknownLabel {
                    label: label.to_string(),
                    family: Some(family.to_string()),
                    suggestion: closest(label, &known),
                    known,
                }));
            };
            return version::highest_named(versions(), wanted)
                .map(|(_, variant)| variant)
                .ok_or_else(|| self.unknown_version(family, wanted));
        }
        let preferred = narrowing
            .preferred_label
            .and_then(|label| self.label(family, label))
            .and_then(|wanted| version::highest_named(versions(), wanted));
        preferred
            .or_else(|| version::highest(versions()))
            .map(|(_, variant)| variant)
            .ok_or_else(|| Problem::NoVariant {
                family: family.to_string(),
            })
    }

    /// The one family whose variants carry `tag`.
    pub fn family_with_tag(&self, tag: &str) -> Result<&'v str, Problem> {
        let tagged: Vec<&str> = self
            .families
            .iter()
            .filter(|(_, members)| members.iter().any(|variant| has_tag(variant, tag)))
            .map(|(family, _)| *family)
            .collect();
        match tagged.as_slice() {
            [family] => Ok(family),
            [] => {
                let known = tag_names(self.families.values().flatten());
                Err(Problem::Routing(RoutingProblem::UnknownTag {
                    tag: tag.to_string(),
                    suggestion: closest(tag, &known),
                    known,
                }))
            }
            _ => Err(Problem::Routing(RoutingProblem::AmbiguousTag {
                tag: tag.to_string(),
                families: tagged.iter().map(|family| family.to_string()).collect(),
            })),
        }
    }
}

/// A variant's version; "" when it has none, which sorts below every version.
pub fn version_of(variant: &Variant) -> &str {
    variant.version.as_deref().unwrap_or_default()
}

/// The labels the variants declare, sorted, each once.
fn label_names<'a>(variants: impl Iterator<Item = &'a &'a Variant>) -> Vec<String> {
    let mut labels: Vec<String> = variants
        .flat_map(|variant| variant.label_versions().map(|(name, _)| name.to_string()))
        .collect();
    labels.sort();
    labels.dedup();
    labels
}

/// The tags the variants carry, sorted, each once.
fn tag_names<'a>(variants: impl Iterator<Item = &'a &'a Variant>) -> Vec<String> {
    let mut tags: Vec<String> = variants
        .flat_map(|variant| variant.tags.iter().flatten().cloned())
        .collect();
    tags.sort();
    tags.dedup();
    tags
}

fn has_tag(variant: &Variant, tag: &str) -> bool {
    variant.tags.iter().flatten().any(|own| own == tag)
}
