//! A context's `rules_from` folders are workspace paths: like every path in a workspace file
//! they must stay inside the workspace (folders elsewhere come only from `--rules` or the
//! library), so `validate` reports one that leaves at its place in the context file.

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::entry::Entry;
use crate::load::read::resolve_inside;
use crate::model::Context;
use crate::pointer::child_pointer;
use crate::problem::{Problem, RulesProblem};
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    for entry in workspace.contexts.values() {
        check_context(workspace, entry, out);
    }
}

pub fn check_context(workspace: &Workspace, entry: &Entry<Context>, out: &mut Diagnostics) {
    // A context that inherits its `rules_from` (through `extends`) does not write it: the
    // context that does is told, once, at its own line.
    if !crate::load::rules::writes_rules_from(entry) {
        return;
    }
    for (index, path) in entry.value.rules_from.iter().enumerate() {
        let span = entry.value_span(&child_pointer("/rules_from", &index.to_string()));
        if resolve_inside(&workspace.root, &workspace.root, path).is_none() {
            out.push(Diagnostic::new(
                Problem::Rules(RulesProblem::RulesFromOutside { path: path.clone() }),
                span,
            ));
        } else if crate::confine::in_git_folder(&workspace.root, path) {
            out.push(Diagnostic::new(
                Problem::PathInGitFolder {
                    setting: "rules_from".into(),
                    path: path.clone(),
                },
                span,
            ));
        }
    }
}
