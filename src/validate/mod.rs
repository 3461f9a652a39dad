//! Stage 2: check the workspace as a whole: references, cycles, shadowed names, templates
//! and conditions. Every problem is collected; nothing stops at the first.

mod conditions;
mod context_fields;
mod context_rules;
mod filters_and_tests;
mod references;
pub(crate) use crate::load::read::ENTRIES_LOOKED_AT;
#[cfg(feature = "cli")]
pub(crate) use references::not_portable;
mod routing;
mod rules_from;
mod shadowing;
pub(crate) mod template_names;
pub(crate) use template_names::context_paths;
pub use template_names::readable_names;
mod template_references;

use crate::diagnostic::Diagnostics;
use crate::load::entry::Entry;
use crate::model::Context;
use crate::templates::TemplateId;
use crate::workspace::Workspace;

/// The checks, in the order their findings are reported.
const CHECKS: [fn(&Workspace, &mut Diagnostics); 9] = [
    references::check,
    routing::check,
    context_fields::check,
    conditions::check,
    shadowing::check,
    template_references::check,
    template_names::check,
    rules_from::check,
    context_rules::check,
];

/// The order the threads take the checks in (indexes into `CHECKS`): the longest first, so
/// that neither thread is left with a long one while the other has nothing more to take.
/// In `CHECKS`' order, one thread took the two template checks (which read every template's
/// facts) last, after the other had run out: the shipped library's checks took 1.6-1.8 ms
/// where an even split of them takes about 1.
const LONGEST_FIRST: [usize; CHECKS.len()] = [0, 5, 6, 3, 1, 4, 2, 8, 7];

/// Runs every check; their findings are reported in `CHECKS`' order. The checks only read
/// the workspace, so a second thread shares them out with this one: at this point of a load
/// the machine's other core has nothing else to do (the shipped library's checks took about
/// 1.4 ms on one thread). Each check's findings are kept apart and joined in order, so what is
/// reported does not depend on which thread ran which check.
pub fn check(workspace: &Workspace, diagnostics: &mut Diagnostics) {
    let checks = Checks::new(workspace);
    std::thread::scope(|scope| {
        // A thread that cannot be started (a low memory limit counts every thread's stack)
        // leaves every check to this one.
        let _ = crate::cores::started(
            crate::cores::builder()
                .name("checks".into())
                .spawn_scoped(scope, || checks.run(workspace)),
        );
        checks.run(workspace);
    });
    checks.report(diagnostics);
}

/// The checks of one workspace, shared out between the threads that call [`Checks::run`],
/// each check run by one of them; [`Checks::report`] gives their findings in `CHECKS`' order.
/// A thread the load has already started can take its share (see the loader), where
/// [`check`] starts one of its own.
pub struct Checks {
    templates: Vec<TemplateId>,
    next_template: std::sync::atomic::AtomicUsize,
    next: std::sync::atomic::AtomicUsize,
    found: [std::sync::OnceLock<Diagnostics>; CHECKS.len()],
}

impl Checks {
    pub fn new(workspace: &Workspace) -> Self {
        Self {
            templates: workspace.templates.ids().collect(),
            next_template: std::sync::atomic::AtomicUsize::new(0),
            next: std::sync::atomic::AtomicUsize::new(0),
            found: [const { std::sync::OnceLock::new() }; CHECKS.len()],
        }
    }

    /// Takes checks until none is left.
    pub fn run(&self, workspace: &Workspace) {
        use std::sync::atomic::Ordering;

        // Both template checks read every template's facts (its names and references), which
        // each template finds once, when first asked. Left to the checks, the thread that came
        // second waited on each template the first was reading, one after another (in a
        // profile of the shipped library, 1.6 ms of checks on one thread and 0.5 on the
        // other): the threads share the templates out first, then the checks.
        while let Some(&template) = self
            .templates
            .get(self.next_template.fetch_add(1, Ordering::Relaxed))
        {
            workspace.templates.read_facts(template);
        }
        while let Some(&index) = LONGEST_FIRST.get(self.next.fetch_add(1, Ordering::Relaxed)) {
            let mut own = Diagnostics::default();
            CHECKS[index](workspace, &mut own);
            let _ = self.found[index].set(own);
        }
    }

    /// Every check's findings, in `CHECKS`' order, once the threads running them are done.
    pub fn report(self, diagnostics: &mut Diagnostics) {
        for cell in self.found {
            diagnostics.extend(cell.into_inner().unwrap_or_default());
        }
    }
}

/// Checks a context the caller gives (`--context FILE`) against the workspace.
pub fn check_context(workspace: &Workspace, entry: &Entry<Context>, diagnostics: &mut Diagnostics) {
    shadowing::check_context(workspace, entry, diagnostics);
    context_fields::check_context(workspace, entry, diagnostics);
    rules_from::check_context(workspace, entry, diagnostics);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threads_take_every_check_once() {
        let mut taken = LONGEST_FIRST.to_vec();
        taken.sort_unstable();
        assert_eq!(taken, (0..CHECKS.len()).collect::<Vec<_>>());
    }

    /// The checks share two threads, and their findings still come out as one thread running
    /// them in order gives them, for every workspace of the diagnostics fixtures.
    #[test]
    fn findings_come_in_the_order_of_the_checks_whichever_thread_ran_them() {
        let fixtures =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diagnostics");
        let mut with_several_checks = 0;
        for dir in std::fs::read_dir(&fixtures).unwrap() {
            let root = dir.unwrap().path();
            if !root.join(crate::load::MANIFEST_FILE).is_file() {
                continue;
            }
            let workspace = crate::load_workspace(&root).unwrap().workspace;
            let mut in_order = Diagnostics::default();
            let mut checks_that_found = 0;
            for check in CHECKS {
                let before = in_order.len();
                check(&workspace, &mut in_order);
                checks_that_found += usize::from(in_order.len() > before);
            }
            with_several_checks += usize::from(checks_that_found > 1);
            for _ in 0..3 {
                let mut shared = Diagnostics::default();
                super::check(&workspace, &mut shared);
                let shared: Vec<_> = shared.iter().collect();
                let in_order: Vec<_> = in_order.iter().collect();
                assert_eq!(shared, in_order, "{}", root.display());
            }
        }
        assert!(
            with_several_checks > 0,
            "no fixture has findings from two checks"
        );
    }
}
