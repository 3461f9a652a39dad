//! What became of the user's rules in `promptc explain`: each rule, `+` when it applies and
//! `-` when it does not, with the reason; then the workflows read.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::visible::push_line;
use crate::load::rules::{RuleDecision, RulesReport};

/// The rules in prompt order, each with why it applies or not.
pub fn text(report: &RulesReport) -> String {
    let mut out = String::from("\nrules, in prompt order:\n");
    if report.rules.is_empty() {
        out.push_str("  (none found)\n");
    }
    let mut folders: std::collections::BTreeMap<&str, BTreeSet<&str>> = Default::default();
    for rule in report
        .rules
        .iter()
        .map(|(rule, _)| rule)
        .chain(report.skipped.iter().map(|(rule, _)| rule))
        .filter(|rule| !rule.path.is_empty())
    {
        folders
            .entry(rule.path.as_str())
            .or_default()
            .insert(rule.folder.as_str());
    }
    let shared: BTreeSet<&str> = folders
        .into_iter()
        .filter(|(_, folders)| folders.len() > 1)
        .map(|(path, _)| path)
        .collect();
    for (rule, decision) in &report.rules {
        let mark = if decision.applies() { '+' } else { '-' };
        push_line(
            &mut out,
            &format!(
                "  {mark} {}: {} ({})",
                rule.name,
                reason(decision),
                source(rule, &shared)
            ),
        );
    }
    if !report.skipped.is_empty() {
        out.push_str("\nrules files skipped (see the warnings):\n");
        for (rule, why) in &report.skipped {
            push_line(
                &mut out,
                &format!("  - {}: {why} ({})", rule.name, source(rule, &shared)),
            );
        }
    }
    if !report.workflows.is_empty() {
        out.push_str("\nworkflows (kept apart from the rules):\n");
        for workflow in &report.workflows {
            push_line(
                &mut out,
                &format!("  {} ({})", workflow.name, workflow.path),
            );
        }
    }
    out
}

/// Where a rule comes from: its kind and file (with its folder when another folder gives a
/// file of the same path), or the context that lists it.
fn source(rule: &crate::model::Rule, shared: &BTreeSet<&str>) -> String {
    // The folder is named only where two folders give a rule of the same path.
    let path = if shared.contains(rule.path.as_str()) {
        rule.qualified_path()
    } else {
        rule.path.clone()
    };
    match (rule.kind.as_str(), path.as_str()) {
        ("", "") => "a rule the context lists".to_string(),
        ("", path) => format!("rule {path}"),
        (kind, "") => format!("{kind} rule"),
        (kind, path) => format!("{kind} rule {path}"),
    }
}

/// The same as JSON: `rules` (name, kind, path, applies, reason), `workflows` (name, kind,
/// path) and `skipped` (name, kind, path, reason), each with what the text form says of it.
pub fn json(report: &RulesReport) -> Value {
    let rules: Vec<Value> = report
        .rules
        .iter()
        .map(|(rule, decision)| {
            json!({
                "name": rule.name,
                "kind": rule.kind,
                "path": rule.path,
                "folder": rule.folder,
                "applies": decision.applies(),
                "reason": reason(decision),
            })
        })
        .collect();
    let workflows: Vec<Value> = report
        .workflows
        .iter()
        .map(|w| json!({ "name": w.name, "kind": w.kind, "path": w.path }))
        .collect();
    let skipped: Vec<Value> = report
        .skipped
        .iter()
        .map(|(rule, why)| {
            json!({
                "name": rule.name,
                "kind": rule.kind,
                "path": rule.path,
                "folder": rule.folder,
                "reason": why,
            })
        })
        .collect();
    json!({ "rules": rules, "workflows": workflows, "skipped": skipped })
}

fn reason(decision: &RuleDecision) -> String {
    match decision {
        RuleDecision::Always => "applies: it has no globs".into(),
        RuleDecision::AlwaysByMetadata => {
            "applies: `alwaysApply` or globs that match every file".into()
        }
        RuleDecision::Matched { file, glob } => {
            format!("applies: active file `{file}` matches `{glob}`")
        }
        RuleDecision::OnRequest => "left out: `alwaysApply: false` without globs applies only when asked for; `rule_toggles = { NAME = true }` in the context switches it on".into(),
        RuleDecision::SwitchedOnByToggle => "applies: switched on in the context's rule_toggles (`alwaysApply: false` and no globs)".into(),
        RuleDecision::DisabledByFlag => "left out: switched off by --disable-rule".into(),
        RuleDecision::DisabledByToggle => {
            "left out: switched off in the context's rule_toggles".into()
        }
        RuleDecision::NoActiveFileMatches { globs } if globs.is_empty() => {
            "left out: no active file matches its globs".into()
        }
        RuleDecision::NoActiveFileMatches { globs } => format!(
            "left out: no active file matches {}",
            globs
                .iter()
                .map(|glob| format!("`{glob}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        RuleDecision::BrokenGlobs => "left out: its globs do not parse (see the warning)".into(),
        RuleDecision::TooManyGlobs => {
            "left out: the rules before it hold as many globs as a context's rules may".into()
        }
        RuleDecision::TooCostlyToMatch => {
            "left out: matching its globs against the active files costs more than is left of what a context's rules may (fewer or simpler globs, or fewer active files)".into()
        }
    }
}
