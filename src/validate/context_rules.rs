//! A named context's rules as the build matrix decides them: a rule left out because its
//! globs cost too much to match against the context's active files, and a `rule_toggles` key
//! that no rule read is called, change the committed prompts without a word unless they are
//! told here (a single build tells them too, but CI runs `validate` and `check`).

use std::collections::BTreeSet;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::rules::RuleDecision;
use crate::pointer::child_pointer;
use crate::problem::{Problem, RulesProblem};
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    // A context that inherits what is told (its active files, a toggle) from the one it
    // extends meets the same problem there: it is told once, at the file that writes it.
    let mut told = BTreeSet::new();
    for (name, entry) in &workspace.contexts {
        let Some((_, report)) = workspace.decide_matrix_context(name) else {
            continue;
        };
        if !report.assembled {
            continue;
        }
        let chain: Vec<_> = crate::load::contexts::chain(entry, &workspace.contexts).collect();
        for (rule, decision) in &report.rules {
            if *decision != RuleDecision::TooCostlyToMatch {
                continue;
            }
            let Some(writer) = chain
                .iter()
                .find(|entry| entry.document.value.pointer("/active_files").is_some())
            else {
                continue;
            };
            let span = writer.value_span("/active_files");
            if told.insert((span.source, span.start, rule.name.clone())) {
                out.push(Diagnostic::new(
                    Problem::Rules(RulesProblem::GlobsTooCostly {
                        rule: rule.name.clone(),
                        active_files: entry.value.active_files.len(),
                    }),
                    span,
                ));
            }
        }
        let known = report.names();
        for name in entry.value.rule_toggles.keys() {
            if known.contains(name) {
                continue;
            }
            let pointer = child_pointer("/rule_toggles", name);
            let Some(writer) = chain
                .iter()
                .find(|entry| entry.document.value.pointer(&pointer).is_some())
            else {
                continue;
            };
            let span = writer.key_span(&pointer);
            if told.insert((span.source, span.start, name.clone())) {
                out.push(Diagnostic::new(
                    Problem::Rules(RulesProblem::ToggleNamesNoRule {
                        name: name.clone(),
                        suggestion: crate::namespace::closest(name, &known),
                    }),
                    span,
                ));
            }
        }
    }
}
