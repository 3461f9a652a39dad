//! The command line's memory ceiling: a template that keeps a new text of 16 MB at every turn
//! of a loop (each within the byte limits, all of them far beyond) stops the process at
//! `PROMPTC_MEMORY_LIMIT` instead of taking the machine's memory: at what it maps past the
//! limit, which the allocator's first arena (1 GiB, reserved before the limit is set) puts at
//! about 1 GiB plus the limit (770 MB at `256M` when measured, 1.16 GB at `1G`). The default
//! fuel stops it after five turns, as building each text costs a million; the workspace
//! raises its fuel.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;

use common::Fixture;

const GROWING: &str = "{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = ns.x + [\"ab\" * 8000000] %}{% endfor %}{{ ns.x | length }}\n";

#[test]
fn a_template_that_keeps_growing_stops_at_the_memory_limit() {
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}fuel = 100000000\n", common::MANIFEST),
        )
        .file("components/intro.md", GROWING)
        .write();
    let (status, stderr) = common::run_within(
        common::promptc_process()
            .current_dir(workspace.root())
            .args(["build", "--context", "basic"])
            .env("PROMPTC_MEMORY_LIMIT", "256M")
            .env_remove("RUST_BACKTRACE")
            .stdout(Stdio::null()),
        Duration::from_secs(60),
        "the template ran on past its memory limit",
    );
    assert_eq!(status.signal(), Some(6), "{status:?}: {stderr}");
    assert!(stderr.contains("memory allocation of"), "{stderr}");
}

#[test]
fn a_malformed_limit_is_a_usage_error() {
    let workspace = Fixture::minimal().write();
    let output = workspace
        .command()
        .args(["validate"])
        .env("PROMPTC_MEMORY_LIMIT", "lots")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("PROMPTC_MEMORY_LIMIT: `lots` is not a size (e.g. 4G, 512M, or `none`)"),
        "{stderr}"
    );
}

/// The allocator reserves its first arena (1 GiB of address space) before `main` sets the
/// limit. A limit below that still leaves an ordinary build what it maps later (threads'
/// stacks, the allocator's bookkeeping): the limit counts from what the process holds when
/// it is set. Counted from nothing, the shipped library's build failed about one run in six.
#[test]
fn a_low_limit_leaves_an_ordinary_build_room_every_time() {
    let workspace = Fixture::empty().write();
    let init = workspace.run(&["init", "-q", "."]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    for _ in 0..16 {
        workspace.succeeds_within_memory("64M", &["build", "--all", "-q"]);
    }
}
