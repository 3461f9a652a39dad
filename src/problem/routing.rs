//! Problems of choosing a variant: versions, labels, tags and model routing. Each has its own
//! code, named after it.

use std::fmt;

use super::Severity;

#[derive(Clone, Debug, PartialEq)]
pub enum RoutingProblem {
    /// Two variants serve one family at one version (or both at none).
    DuplicateVersion {
        family: String,
        version: Option<String>,
        other: String,
        /// The other's version, when spelled otherwise (`01.0` beside `1.0`).
        other_version: Option<String>,
    },
    /// `family@version` or a label names no version of the family.
    UnknownVersion {
        family: String,
        wanted: String,
        known: Vec<String>,
    },
    /// Two variants of a family give one label different versions.
    LabelConflict {
        family: String,
        label: String,
        version: String,
        other: String,
        other_version: String,
    },
    /// A label set to `true`: labels name versions.
    LabelWithoutVersion { label: String },
    /// A label the variant inherits (from `parent`, through `extends`) that names a version
    /// its own family does not have: a variant of another family, most likely, whose labels
    /// came along.
    InheritedLabelVersion {
        family: String,
        label: String,
        version: String,
        parent: String,
        known: Vec<String>,
    },
    /// A label no variant declares (`--label`, `routing.label`), or one a family lacks.
    UnknownLabel {
        label: String,
        family: Option<String>,
        suggestion: Option<String>,
        /// The labels there are: the family's, or every family's when none is named.
        known: Vec<String>,
    },
    /// Variants of one family whose `match` conditions differ.
    MatchConflict { family: String, other: String },
    /// A family with a `match` that `routing.order` does not list: it would never be tried.
    MatchNotRouted { family: String },
    /// A family in `routing.order` none of whose variants has a `match`.
    RoutedWithoutMatch { family: String },
    /// A family listed twice in `routing.order`.
    RoutedTwice { family: String },
    /// A family routing may choose (by its `match`, or as the fallback) that the build matrix
    /// does not compile: no check compiles its prompt before a model is routed to it.
    /// `version`: the family is built, but not the version routing chooses.
    RoutedNotBuilt {
        family: String,
        fallback: bool,
        version: Option<String>,
    },
    /// A `[[routing.expect]]` model routes elsewhere.
    RouteMismatch {
        model: String,
        expected: String,
        routed: String,
        /// The family whose `match` chose it; `None` when no rule matched (the fallback).
        rule: Option<String>,
    },
    /// A family's `match` holds for expected models only where an earlier family wins.
    NeverWins {
        family: String,
        /// Each model it matches, with the family that wins it.
        models: Vec<(String, String)>,
    },
    /// An expected model that several families match: only their order decides.
    RouteOverlap {
        model: String,
        winner: String,
        also: String,
    },
    /// `--tag` alone names variants of several families.
    AmbiguousTag { tag: String, families: Vec<String> },
    /// No variant carries the tag.
    UnknownTag {
        tag: String,
        suggestion: Option<String>,
        /// The tags the variants carry, sorted.
        known: Vec<String>,
    },
    /// No variant of the family carries the tag.
    NoTaggedVersion {
        family: String,
        tag: String,
        suggestion: Option<String>,
        /// The tags the family's variants carry, sorted.
        known: Vec<String>,
    },
}

impl RoutingProblem {
    pub fn code(&self) -> &'static str {
        match self {
            RoutingProblem::DuplicateVersion { .. } => "duplicate-version",
            RoutingProblem::UnknownVersion { .. } => "unknown-version",
            RoutingProblem::LabelConflict { .. } => "label-conflict",
            RoutingProblem::LabelWithoutVersion { .. } => "label-without-version",
            RoutingProblem::InheritedLabelVersion { .. } => "inherited-label-version",
            RoutingProblem::UnknownLabel { .. } => "unknown-label",
            RoutingProblem::MatchConflict { .. } => "match-conflict",
            RoutingProblem::MatchNotRouted { .. } => "match-not-routed",
            RoutingProblem::RoutedWithoutMatch { .. } => "routed-without-match",
            RoutingProblem::RoutedTwice { .. } => "routed-twice",
            RoutingProblem::RoutedNotBuilt { .. } => "routed-not-built",
            RoutingProblem::RouteMismatch { .. } => "route-mismatch",
            RoutingProblem::NeverWins { .. } => "never-wins",
            RoutingProblem::RouteOverlap { .. } => "route-overlap",
            RoutingProblem::AmbiguousTag { .. } => "ambiguous-tag",
            RoutingProblem::NoTaggedVersion { .. } => "no-tagged-version",
            RoutingProblem::UnknownTag { .. } => "unknown-tag",
        }
    }

    pub fn severity(&self) -> Severity {
        match self {
            RoutingProblem::NeverWins { .. }
            | RoutingProblem::RouteOverlap { .. }
            | RoutingProblem::RoutedNotBuilt { .. } => Severity::Warning,
            _ => Severity::Error,
        }
    }

    pub fn help(&self) -> Option<String> {
        Some(match self {
            RoutingProblem::DuplicateVersion { .. } => {
                "give each variant of the family its own `version`".into()
            }
            RoutingProblem::UnknownVersion { known, .. } if known.is_empty() => {
                "give the family's variants a `version`".into()
            }
            RoutingProblem::UnknownVersion { known, .. } => {
                format!("versions of the family: {}", known.join(", "))
            }
            RoutingProblem::LabelConflict { .. } => {
                "give the label one version in every variant of the family".into()
            }
            RoutingProblem::LabelWithoutVersion { .. } => {
                "write the version the label names, or `false` to drop an inherited label".into()
            }
            RoutingProblem::InheritedLabelVersion { label, known, .. } => format!(
                "drop it (`labels = {{ {label} = false }}`), or give it a version of the family ({})",
                known.join(", ")
            ),
            RoutingProblem::UnknownLabel {
                suggestion: Some(suggestion),
                ..
            } => format!("did you mean `{suggestion}`?"),
            RoutingProblem::UnknownLabel { known, family, .. } if !known.is_empty() => {
                let whose = if family.is_some() { "labels of the family" } else { "labels" };
                format!("{whose}: {}", known.join(", "))
            }
            RoutingProblem::UnknownLabel { .. } => {
                "labels are declared by the `labels` of a variant".into()
            }
            RoutingProblem::MatchConflict { .. } => {
                "set `match` in one variant of the family, or the same one in each".into()
            }
            RoutingProblem::MatchNotRouted { family } => {
                format!("add `{family}` to `routing.order` in promptc.toml, or remove the `match`")
            }
            RoutingProblem::RoutedWithoutMatch { .. } => {
                "give a variant of the family a `match`, or remove it from `routing.order`".into()
            }
            RoutingProblem::RoutedTwice { .. } => "list each family once".into(),
            RoutingProblem::RoutedNotBuilt {
                family,
                version: Some(version),
                ..
            } => format!(
                "add a `[[build.entries]]` of `{family}@{version}` (or of `{family}`, which compiles the version routing chooses) in promptc.toml, so that `validate` and `check` compile what routing may choose"
            ),
            RoutingProblem::RoutedNotBuilt { family, .. } => format!(
                "add `{family}` to `[build] families` in promptc.toml (or a `[[build.entries]]` of it), so that `validate` and `check` compile what routing may choose"
            ),
            RoutingProblem::RouteMismatch { .. } => {
                "change the families' `match` or `routing.order`, or the expected family if the change is intended".into()
            }
            RoutingProblem::NeverWins { .. } => {
                "narrow the earlier family's `match`, move this family before it in `routing.order`, or remove this `match`".into()
            }
            RoutingProblem::RouteOverlap { also, .. } => format!(
                "narrow one `match` so that only one holds for the model (e.g. `and not ...` in `{also}`'s)"
            ),
            RoutingProblem::AmbiguousTag { .. } => "name the family too (--family)".into(),
            RoutingProblem::UnknownTag {
                suggestion: Some(suggestion),
                ..
            }
            | RoutingProblem::NoTaggedVersion {
                suggestion: Some(suggestion),
                ..
            } => format!("did you mean `{suggestion}`?"),
            RoutingProblem::UnknownTag { known, .. } if !known.is_empty() => {
                format!("tags: {}", known.join(", "))
            }
            RoutingProblem::UnknownTag { .. } => "tags are declared by the `tags` of a variant".into(),
            RoutingProblem::NoTaggedVersion { known, .. } if !known.is_empty() => {
                format!("tags of the family: {}", known.join(", "))
            }
            RoutingProblem::NoTaggedVersion { .. } => {
                "the family's variants carry no tags: add the tag to one, or choose another family"
                    .into()
            }
        })
    }
}

impl fmt::Display for RoutingProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoutingProblem::DuplicateVersion {
                family,
                version: Some(version),
                other,
                other_version: Some(other_version),
            } if other_version != version => write!(
                f,
                "this variant serves family `{family}` at version `{version}`, as `{other}` does at \
                 `{other_version}`: versions compare part by part, numbers as numbers, so the two \
                 are one version"
            ),
            RoutingProblem::DuplicateVersion {
                family,
                version: Some(version),
                other,
                ..
            } => write!(
                f,
                "this variant serves family `{family}` at version `{version}`, as `{other}` does"
            ),
            RoutingProblem::DuplicateVersion {
                family,
                version: None,
                other,
                ..
            } => write!(
                f,
                "this variant serves family `{family}` with no version, as `{other}` does"
            ),
            RoutingProblem::UnknownVersion { family, wanted, .. } => {
                write!(f, "family `{family}` has no version `{wanted}`")
            }
            RoutingProblem::LabelConflict {
                family,
                label,
                version,
                other,
                other_version,
            } => write!(
                f,
                "label `{label}` of family `{family}` names `{version}` here but `{other_version}` in `{other}`"
            ),
            RoutingProblem::LabelWithoutVersion { label } => {
                write!(f, "label `{label}` is `true`, which names no version")
            }
            RoutingProblem::InheritedLabelVersion {
                family,
                label,
                version,
                parent,
                ..
            } => write!(
                f,
                "label `{label}`, inherited from `{parent}`, names version `{version}`, which family `{family}` does not have"
            ),
            RoutingProblem::UnknownLabel {
                label,
                family: Some(family),
                ..
            } => write!(f, "family `{family}` has no label `{label}`"),
            RoutingProblem::UnknownLabel {
                label,
                family: None,
                ..
            } => write!(f, "no variant declares label `{label}`"),
            RoutingProblem::MatchConflict { family, other } => write!(
                f,
                "this `match` of family `{family}` differs from the one in `{other}`"
            ),
            RoutingProblem::MatchNotRouted { family } => write!(
                f,
                "family `{family}` has a `match`, but `routing.order` does not list it, so it is never tried"
            ),
            RoutingProblem::RoutedNotBuilt {
                family,
                fallback,
                version,
            } => {
                let how = if *fallback {
                    "as the fallback family"
                } else {
                    "by its `match`"
                };
                match version {
                    Some(version) => write!(
                        f,
                        "version `{version}` of family `{family}` is the one routing chooses ({how}), but the build matrix compiles only other versions of the family: nothing compiles its prompt before a model is routed to it"
                    ),
                    None => write!(
                        f,
                        "family `{family}` is chosen by routing ({how}), but the build matrix does not compile it: nothing compiles its prompt before a model is routed to it"
                    ),
                }
            }
            RoutingProblem::RoutedWithoutMatch { family } => write!(
                f,
                "`routing.order` lists family `{family}`, but none of its variants has a `match`"
            ),
            RoutingProblem::RoutedTwice { family } => {
                write!(f, "`routing.order` lists family `{family}` twice")
            }
            RoutingProblem::RouteMismatch {
                model,
                expected,
                routed,
                rule,
            } => {
                write!(
                    f,
                    "model `{model}` routes to `{routed}`, not to the expected `{expected}`"
                )?;
                match rule {
                    Some(rule) => write!(f, " (the `match` of `{rule}` holds first)"),
                    None => write!(f, " (no `match` holds: the fallback family)"),
                }
            }
            RoutingProblem::NeverWins { family, models } => {
                let won: Vec<String> = models
                    .iter()
                    .map(|(model, winner)| format!("`{model}` by `{winner}`"))
                    .collect();
                write!(
                    f,
                    "the `match` of family `{family}` never wins: every expected model it holds for is taken first ({})",
                    won.join(", ")
                )
            }
            RoutingProblem::RouteOverlap {
                model,
                winner,
                also,
            } => write!(
                f,
                "model `{model}` matches both `{winner}` and `{also}`; only `routing.order` makes it `{winner}`"
            ),
            RoutingProblem::AmbiguousTag { tag, families } => write!(
                f,
                "tag `{tag}` is carried by variants of several families: {}",
                families.join(", ")
            ),
            RoutingProblem::UnknownTag { tag, .. } => write!(f, "no variant has tag `{tag}`"),
            RoutingProblem::NoTaggedVersion { family, tag, .. } => {
                write!(f, "no variant of family `{family}` has tag `{tag}`")
            }
        }
    }
}
