//! Stage 2: check the workspace as a whole: references, cycles, shadowed names, templates
//! and conditions. Every problem is collected; nothing stops at the first.

mod conditions;
mod context_fields;
mod references;
mod routing;
mod rules_from;
mod shadowing;
mod template_names;
mod template_references;

use crate::diagnostic::Diagnostics;
use crate::load::entry::Entry;
use crate::model::Context;
use crate::workspace::Workspace;

/// The checks, in the order their findings are reported.
const CHECKS: [fn(&Workspace, &mut Diagnostics); 8] = [
    references::check,
    routing::check,
    context_fields::check,
    conditions::check,
    shadowing::check,
    template_references::check,
    template_names::check,
    rules_from::check,
];

pub fn check(workspace: &Workspace, diagnostics: &mut Diagnostics) {
    for check in CHECKS {
        check(workspace, diagnostics);
    }
}

/// Checks a context the caller gives (`--context FILE`) against the workspace.
pub fn check_context(workspace: &Workspace, entry: &Entry<Context>, diagnostics: &mut Diagnostics) {
    shadowing::check_context(workspace, entry, diagnostics);
    context_fields::check_context(workspace, entry, diagnostics);
    rules_from::check_context(workspace, entry, diagnostics);
}
