//! Choosing a request's variant: routing the context's model to a family (the families'
//! `match` conditions in `routing.order`), then the family's version by label, tag or the
//! highest; and checking the manifest's routing table.

use serde::Serialize;

use super::{Compiler, SelectBy, Selection};
use crate::compiled::{CompileError, SourceRange};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::entry::Entry;
use crate::model::Context;
use crate::problem::{Problem, RefKind, RoutingProblem};
use crate::resolve::conditions::ConditionFuel;
use crate::resolve::scope::Scope;
use crate::workspace::VariantDef;
use crate::workspace::catalog::{Catalog, Narrowing};

/// How many `[[routing.expect]]` models validation tests the routing rules on together (see
/// [`Compiler::routing_diagnostics`]).
const EXPECTED_AT_ONCE: usize = 16;
use crate::workspace::inheritance::EffectiveVariant;

/// The family routing picked for a model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Route {
    pub family: String,
    /// The rule that chose it; `None` when none held and the fallback family serves.
    pub rule: Option<RouteRule>,
}

/// A family's `match`, where it is written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RouteRule {
    /// The variant whose `match` it is.
    pub variant: String,
    pub condition: String,
    pub source: SourceRange,
}

/// The variant a request compiles with, and how it was chosen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Choice {
    pub family: String,
    pub variant: String,
    pub version: Option<String>,
    /// The label whose version was taken, if one decided.
    pub label: Option<String>,
    /// How routing chose the family, when the selection routed.
    pub route: Option<Route>,
}

/// One family's `match`: the first variant of the family (in file order) that sets one.
pub(super) struct Rule<'w> {
    pub(super) family: &'w str,
    entry: &'w Entry<VariantDef>,
    condition: &'w str,
}

impl<'w> Compiler<'w> {
    /// The variant a selection names for a context, after inheritance, with the route taken.
    pub(crate) fn select(
        &self,
        selection: &Selection,
        context: &Context,
    ) -> Result<(&EffectiveVariant, Option<Route>), CompileError> {
        self.select_written(selection, context, None)
    }

    /// `select`, for a context the caller has written out as JSON already (`written`), which
    /// a route is remembered by.
    pub(crate) fn select_written(
        &self,
        selection: &Selection,
        context: &Context,
        written: Option<&[u8]>,
    ) -> Result<(&EffectiveVariant, Option<Route>), CompileError> {
        let settings = self.workspace.settings();
        let unknown = |problem: Problem| CompileError::Selection(problem);
        let mut route = None;
        let family = match &selection.by {
            SelectBy::Variant(name) => {
                let variant = match name.split_once('@') {
                    Some((family, wanted)) => self
                        .family_catalog(family)
                        .version(family, wanted)
                        .map_err(unknown)?,
                    None => self
                        .variants
                        .get(name)
                        .map(|effective| &effective.variant)
                        .ok_or_else(|| {
                            unknown(Problem::UnknownReference {
                                kind: RefKind::Variant,
                                name: name.clone(),
                                suggestion: crate::namespace::closest(name, self.variants.keys()),
                            })
                        })?,
                };
                return Ok((self.effective(&variant.id)?, None));
            }
            SelectBy::Family(family) => family.clone(),
            SelectBy::Fallback => match &selection.tag {
                Some(tag) => self
                    .catalog()
                    .family_with_tag(tag)
                    .map_err(unknown)?
                    .to_string(),
                None => settings.fallback_family.clone(),
            },
            SelectBy::Route => {
                let routed = match written {
                    Some(written) => self.route_written(context, Some(written))?,
                    None => self.route(context)?,
                };
                let family = routed.family.clone();
                route = Some(routed);
                family
            }
        };
        let narrowing = Narrowing {
            tag: selection.tag.as_deref(),
            label: selection.label.as_deref(),
            preferred_label: settings.routing.label.as_deref(),
        };
        let variant = self
            .family_catalog(&family)
            .pick(&family, narrowing)
            .map_err(unknown)?;
        Ok((self.effective(&variant.id)?, route))
    }

    /// The variants by family, ancestors first (as validation orders them, so both read a
    /// family's labels alike).
    fn catalog(&self) -> Catalog<'_> {
        let mut variants: Vec<&EffectiveVariant> = self.variants.values().collect();
        variants.sort_by_key(|variant| variant.chain.len());
        Catalog::new(variants.into_iter().map(|variant| &variant.variant))
    }

    /// The catalog of one family, in the whole one's order: all a selection of the family
    /// asks.
    fn family_catalog(&self, family: &str) -> Catalog<'_> {
        let ids = self.family_ids.get(family).into_iter().flatten();
        Catalog::new(
            ids.filter_map(|id| self.variants.get(id))
                .map(|variant| &variant.variant),
        )
    }

    fn effective(&self, id: &str) -> Result<&EffectiveVariant, CompileError> {
        self.variant(id).ok_or(CompileError::InvalidWorkspace)
    }

    /// A variant after inheritance, by id (the `variant` of a compiled prompt).
    pub(crate) fn variant(&self, id: &str) -> Option<&EffectiveVariant> {
        self.variants.get(id)
    }

    /// The variant a request compiles with, after inheritance, and its `extends` chain (its
    /// own id first): what `promptc show --effective` prints.
    pub fn effective_variant(
        &self,
        request: &super::Request,
    ) -> Result<(&crate::model::Variant, &[String]), CompileError> {
        let (effective, _) = self.select(&request.selection, &request.context)?;
        Ok((&effective.variant, &effective.chain))
    }

    /// The variant a request compiles with, and how it was chosen: what `promptc route`
    /// prints and an agent logs.
    pub fn choose(&self, request: &super::Request) -> Result<Choice, CompileError> {
        if !self.workspace.is_valid() {
            return Err(CompileError::InvalidWorkspace);
        }
        let (variant, route) = self.select(&request.selection, &request.context)?;
        let label = request.selection.label.clone().or_else(|| {
            let label = self.workspace.settings().routing.label.as_ref()?;
            let named = self
                .family_catalog(variant.family())
                .label(variant.family(), label)?;
            let version = variant.variant.version.as_deref()?;
            crate::model::version::is_named_by(version, named).then(|| label.clone())
        });
        Ok(Choice {
            family: variant.family().to_string(),
            variant: variant.id().to_string(),
            version: variant.variant.version.clone(),
            label,
            route,
        })
    }

    /// The family whose `match` holds first for the context, or the fallback family.
    pub fn route(&self, context: &Context) -> Result<Route, CompileError> {
        let written = serde_json::to_vec(context).ok();
        self.route_written(context, written.as_deref())
    }

    /// `route`, by the context written out as JSON (`None`: it could not be).
    fn route_written(
        &self,
        context: &Context,
        written: Option<&[u8]>,
    ) -> Result<Route, CompileError> {
        // A context routes as it did before: an agent routes the same context request after
        // request, and making it into template values costs more than writing it out.
        if let Some(route) = written.and_then(|key| self.routes.get(key)) {
            return Ok(route);
        }
        let route = self.route_afresh(context)?;
        if let Some(key) = written {
            let bytes = 2 * key.len();
            self.routes.insert(key.into(), route.clone(), bytes);
        }
        Ok(route)
    }

    fn route_afresh(&self, context: &Context) -> Result<Route, CompileError> {
        let mut diagnostics = Diagnostics::default();
        let fuel = self.conditions().fuel();
        let scope = self.routing_scope(context, &fuel, &mut diagnostics);
        let values = scope.values();
        for rule in self.rules() {
            match self.holds(&rule, &values, &fuel) {
                Ok(false) => {}
                Ok(true) => {
                    return Ok(Route {
                        family: rule.family.to_string(),
                        rule: Some(self.describe(&rule)),
                    });
                }
                Err(diagnostic) => diagnostics.push(diagnostic),
            }
        }
        if diagnostics.has_errors() {
            return Err(CompileError::Diagnostics(diagnostics));
        }
        Ok(Route {
            family: self.workspace.settings().fallback_family.clone(),
            rule: None,
        })
    }

    /// What a `match` sees: the context's fields and the predicates, nothing of a variant
    /// (none is chosen yet).
    fn routing_scope(
        &self,
        context: &Context,
        fuel: &ConditionFuel,
        diagnostics: &mut Diagnostics,
    ) -> Scope {
        let mut scope = Scope::for_routing(context, &self.workspace.settings().context_fields);
        self.insert_predicates(&mut scope, fuel, diagnostics);
        scope
    }

    /// The predicates' values for a context, as routing finds them (in declaration order);
    /// what the stable-prefix check compares between a request and its probe.
    pub(crate) fn predicate_values(&self, context: &Context) -> Vec<bool> {
        let fuel = self.conditions.fuel();
        let mut ignored = Diagnostics::default();
        let mut scope = Scope::for_routing(context, &self.workspace.settings().context_fields);
        self.insert_predicates(&mut scope, &fuel, &mut ignored)
    }

    fn holds(
        &self,
        rule: &Rule<'_>,
        values: &minijinja::Value,
        fuel: &ConditionFuel,
    ) -> Result<bool, Diagnostic> {
        self.conditions.evaluate(
            rule.condition,
            values,
            rule.entry.value_span("/match"),
            fuel,
        )
    }

    /// The variant whose file a rule is shown from: the one the family serves by default
    /// when it sets the `match`, else the first that does.
    fn stated_by(&self, rule: &Rule<'w>) -> &'w Entry<VariantDef> {
        let workspace = self.workspace;
        self.select(&Selection::family(rule.family), &Context::default())
            .ok()
            .and_then(|(variant, _)| workspace.variants.get(variant.id()))
            .filter(|entry| entry.value.route_match.is_some())
            .unwrap_or(rule.entry)
    }

    /// The rule as the family states it. Every variant of a family that sets a `match` sets
    /// the same one; it is shown from the variant the family serves by default when that one
    /// sets it (not from a beta version that happens to come first among the files).
    pub(super) fn describe(&self, rule: &Rule<'_>) -> RouteRule {
        let workspace = self.workspace;
        let entry = self.stated_by(rule);
        RouteRule {
            variant: entry.value.id.clone(),
            condition: rule.condition.to_string(),
            source: SourceRange::of(entry.value_span("/match"), &workspace.sources),
        }
    }

    /// The rules of `routing.order`, in order; a family without a `match` has none
    /// (reported by validation).
    pub(super) fn rules(&self) -> Vec<Rule<'w>> {
        let workspace = self.workspace;
        let mut rules = Vec::new();
        for family in &workspace.settings().routing.order {
            if rules.iter().any(|rule: &Rule<'_>| rule.family == family) {
                continue;
            }
            let first = workspace.variants.values().find_map(|entry| {
                let condition = entry.value.route_match.as_deref()?;
                (entry.value.family_or_id() == family).then_some((entry, condition))
            });
            if let Some((entry, condition)) = first {
                rules.push(Rule {
                    family: entry.value.family_or_id(),
                    entry,
                    condition,
                });
            }
        }
        rules
    }

    /// Checks `[[routing.expect]]`: each model must route to its family (an error), and no
    /// rule should win only by its place in the order (warnings).
    pub(crate) fn routing_diagnostics(&self) -> Diagnostics {
        let workspace = self.workspace;
        let mut out = Diagnostics::default();
        let manifest = &workspace.manifest;
        let rules = self.rules();
        // For each rule, the expected models it holds for, with the family that wins each.
        let mut held: Vec<Vec<(String, String)>> = vec![Vec::new(); rules.len()];
        let expectations = &workspace.settings().routing.expect;
        // A few expected models at a time, each rule tested on all of them in turn: a rule's
        // pattern is built once for them, where every rule tested for one model after
        // another went round more patterns than the process keeps, building each again for
        // every model (65 routing patterns and 80 models took 20 s). A few, not all: each
        // holds its context's values.
        for (chunk, group) in expectations.chunks(EXPECTED_AT_ONCE).enumerate() {
            // Each model's conditions have their own fuel: thousands of models with costly
            // rules could run past the process's time limit, which ends it without a word.
            let stop = |out: &mut Diagnostics, spent_ms| {
                out.error(
                    Problem::ProcessorTimeSpent {
                        spent_ms,
                        stopped: crate::problem::StoppedWork::RoutingExpectations,
                    },
                    manifest.value_span(&format!("/routing/expect/{}", chunk * EXPECTED_AT_ONCE)),
                );
            };
            if let Some(spent_ms) = crate::deadline::passed() {
                stop(&mut out, spent_ms);
                return out;
            }
            let prepared: Vec<(Diagnostics, minijinja::Value, ConditionFuel)> = group
                .iter()
                .map(|expected| {
                    let mut context = expected
                        .context
                        .as_deref()
                        .or(workspace.settings().default_context.as_deref())
                        .and_then(|name| workspace.context(name))
                        .cloned()
                        .unwrap_or_default();
                    context.model.id.clone_from(&expected.model);
                    context.model.provider = expected.provider.clone().unwrap_or_default();
                    let mut diagnostics = Diagnostics::default();
                    let fuel = self.conditions().fuel();
                    let values = self
                        .routing_scope(&context, &fuel, &mut diagnostics)
                        .values();
                    (diagnostics, values, fuel)
                })
                .collect();
            let mut outcomes: Vec<Vec<Result<bool, Diagnostic>>> = prepared
                .iter()
                .map(|_| Vec::with_capacity(rules.len()))
                .collect();
            for rule in &rules {
                for ((_, values, fuel), outcome) in prepared.iter().zip(&mut outcomes) {
                    outcome.push(self.holds(rule, values, fuel));
                    if let Some(spent_ms) = crate::deadline::passed() {
                        stop(&mut out, spent_ms);
                        return out;
                    }
                }
            }
            for (offset, ((expected, (mut diagnostics, _, _)), outcome)) in
                group.iter().zip(prepared).zip(outcomes).enumerate()
            {
                let pointer = format!("/routing/expect/{}", chunk * EXPECTED_AT_ONCE + offset);
                let mut matching = Vec::new();
                for (rule_index, outcome) in outcome.into_iter().enumerate() {
                    match outcome {
                        Ok(true) => matching.push(rule_index),
                        Ok(false) => {}
                        Err(diagnostic) => diagnostics.push(diagnostic),
                    }
                }
                if diagnostics.has_errors() {
                    out.extend(diagnostics);
                    continue;
                }
                let routed = matching
                    .first()
                    .map_or(workspace.settings().fallback_family.as_str(), |&first| {
                        rules[first].family
                    });
                if routed != expected.family {
                    out.error(
                        Problem::Routing(RoutingProblem::RouteMismatch {
                            model: expected.model.clone(),
                            expected: expected.family.clone(),
                            routed: routed.to_string(),
                            rule: matching
                                .first()
                                .map(|&first| rules[first].family.to_string()),
                        }),
                        manifest.value_span(&format!("{pointer}/family")),
                    );
                }
                for &rule_index in &matching {
                    held[rule_index].push((expected.model.clone(), routed.to_string()));
                }
            }
        }
        for (rule, models) in rules.iter().zip(held) {
            let lost: Vec<(String, String)> = models
                .iter()
                .filter(|(_, winner)| winner != rule.family)
                .cloned()
                .collect();
            let span = self.stated_by(rule).value_span("/match");
            if !models.is_empty() && lost.len() == models.len() {
                out.push(Diagnostic::new(
                    Problem::Routing(RoutingProblem::NeverWins {
                        family: rule.family.to_string(),
                        models: lost,
                    }),
                    span,
                ));
                continue;
            }
            for (model, winner) in lost {
                out.push(Diagnostic::new(
                    Problem::Routing(RoutingProblem::RouteOverlap {
                        model,
                        winner,
                        also: rule.family.to_string(),
                    }),
                    span,
                ));
            }
        }
        out
    }
}

/// Each family's variant ids in [`Compiler::catalog`]'s order: by the length of their chains
/// (ancestors first), then in file order.
pub(super) fn family_ids(
    variants: &indexmap::IndexMap<String, EffectiveVariant>,
) -> std::collections::HashMap<String, Vec<String>> {
    let mut ordered: Vec<&EffectiveVariant> = variants.values().collect();
    ordered.sort_by_key(|variant| variant.chain.len());
    let mut families: std::collections::HashMap<String, Vec<String>> =
        std::collections::HashMap::new();
    for variant in ordered {
        families
            .entry(variant.family().to_string())
            .or_default()
            .push(variant.id().to_string());
    }
    families
}

#[cfg(test)]
mod tests {
    /// Seventy families each routed by a pattern of its own, more than the process keeps
    /// built, and forty expected models: each pattern is built once for every few models,
    /// where testing every rule for one model after another built each for every model.
    #[test]
    fn validation_builds_each_routing_pattern_once_per_few_expected_models() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let families = 70;
        let models = 40;
        let pattern = |family: usize| format!("^routed-once-{family}-[0-9]+$");
        let order: Vec<String> = (0..families).map(|f| format!("\"f{f}\"")).collect();
        let expect: Vec<String> = (0..models)
            .map(|m| {
                format!(
                    "{{ model = \"routed-once-{}-{m}\", family = \"f{}\" }}",
                    m % families,
                    m % families
                )
            })
            .collect();
        write(
            "promptc.toml",
            &format!(
                "fallback_family = \"base\"\n[routing]\norder = [{}]\nexpect = [{}]\n",
                order.join(", "),
                expect.join(", ")
            ),
        );
        write("variants/base.toml", "id = \"base\"\ntemplate = \"x\\n\"\n");
        for family in 0..families {
            write(
                &format!("variants/f{family}.toml"),
                &format!(
                    "id = \"f{family}\"\nextends = \"base\"\nmatch = \"model.id is matching('{}')\"\n",
                    pattern(family)
                ),
            );
        }
        let root = dir.path().canonicalize().unwrap();
        let loaded = crate::loader::load_workspace(&root).unwrap();
        assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
        let diagnostics = super::Compiler::new(&loaded.workspace).routing_diagnostics();
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        // Once per group of sixteen models (three); and perhaps once more ahead, while
        // loading, and when another test's patterns pushed it out of the process's few
        // within a group. Once per model would be forty.
        assert_eq!(super::EXPECTED_AT_ONCE, 16);
        let most = 7;
        for family in 0..families {
            let built = crate::templates::model_id::times_regex_built(&pattern(family));
            assert!(
                (1..=most).contains(&built),
                "{} built {built} times",
                pattern(family)
            );
        }
    }
}
