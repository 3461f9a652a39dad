//! What a workspace offers to choose from: its families with their versions, labels, tags and
//! routing rules (`promptc list`).

use indexmap::IndexMap;
use serde::Serialize;

use super::Compiler;
use super::route::RouteRule;
use crate::model::version;

#[derive(Clone, Debug, Serialize)]
pub struct FamilyListing {
    pub family: String,
    /// Whether it is the manifest's `fallback_family`.
    pub fallback: bool,
    /// Its place in `routing.order`, with its `match`.
    pub routing: Option<FamilyRouting>,
    /// Its variants, lowest version first.
    pub variants: Vec<VariantListing>,
}

/// A family's routing rule as `list` gives it: its place in `routing.order` (1-based) and
/// its `match`, where it is written.
#[derive(Clone, Debug, Serialize)]
pub struct FamilyRouting {
    pub position: usize,
    #[serde(flatten)]
    pub rule: RouteRule,
}

#[derive(Clone, Debug, Serialize)]
pub struct VariantListing {
    pub id: String,
    pub version: Option<String>,
    /// Labels in effect (after inheritance), and the version each names.
    pub labels: IndexMap<String, String>,
    pub tags: Vec<String>,
    pub description: Option<String>,
}

impl Compiler<'_> {
    /// Every family, in the order its first variant appears.
    pub fn list(&self) -> Vec<FamilyListing> {
        let settings = self.workspace.settings();
        let rules = self.rules();
        let mut families: IndexMap<&str, FamilyListing> = IndexMap::new();
        for effective in self.variants.values() {
            let family = effective.family();
            let listing = families.entry(family).or_insert_with(|| FamilyListing {
                family: family.to_string(),
                fallback: settings.fallback_family == family,
                routing: rules
                    .iter()
                    .position(|rule| rule.family == family)
                    .map(|index| FamilyRouting {
                        position: index + 1,
                        rule: self.describe(&rules[index]),
                    }),
                variants: Vec::new(),
            });
            let variant = &effective.variant;
            listing.variants.push(VariantListing {
                id: variant.id.clone(),
                version: variant.version.clone(),
                labels: variant
                    .label_versions()
                    .map(|(name, version)| (name.to_string(), version.to_string()))
                    .collect(),
                tags: variant.tags.clone().unwrap_or_default(),
                description: variant.description.clone(),
            });
        }
        let mut listed: Vec<FamilyListing> = families.into_values().collect();
        for family in &mut listed {
            family.variants.sort_by(|a, b| {
                version::compare(
                    a.version.as_deref().unwrap_or_default(),
                    b.version.as_deref().unwrap_or_default(),
                )
            });
        }
        listed
    }
}
