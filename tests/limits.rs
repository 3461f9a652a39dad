//! Bounded resources (issue 8, items 5-7): what a template may cost in time and memory, and
//! how large templates and their errors are handled. Limits are lowered through settings where
//! the defaults would make a test slow.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::time::{Duration, Instant};

use common::Fixture;

/// A component template of `lines` lines, each reading a name nothing defines.
fn many_undefined_names(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("Line {i} reads {{{{ cwd }}}} and {{{{ nope_{i} }}}}, then some text.\n"))
        .collect()
}

// Item 7: every undefined name was looked up by copying and scanning the whole template, and
// each diagnostic was rendered from the whole file: 20 000 errors in a 1 MB template took over
// 30 seconds.
#[test]
fn many_errors_in_a_large_template_are_reported_in_linear_time() {
    let lines = 20_000;
    let workspace = Fixture::minimal()
        .file("components/intro.md", many_undefined_names(lines))
        .write();
    let started = Instant::now();
    let run = workspace.validate_human();
    let took = started.elapsed();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("error: {lines} errors")),
        "{}",
        &run.stderr[run.stderr.len().saturating_sub(500)..]
    );
    let last = lines - 1;
    let message = format!("error[undefined-placeholder]: `nope_{last}` is not defined by anything");
    let column = format!("Line {last} reads {{{{ cwd }}}} and {{{{ ").len() + 1;
    let at = run
        .stderr
        .find(&message)
        .expect("the last name is reported");
    assert!(
        run.stderr[at..].contains(&format!(" --> components/intro.md:{lines}:{column}\n")),
        "{}",
        &run.stderr[at..]
    );
    assert!(took < Duration::from_secs(15), "validate took {took:?}");
}
