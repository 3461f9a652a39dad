//! Ctrl-C during `diff` leaves none of its temporary copies of the workspace behind.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Fixture, git};

/// Whether `dir` holds a folder promptc made for a revision.
fn has_checkout(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).unwrap().any(|entry| {
        entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".promptc-tmp-")
    })
}

#[test]
fn an_interrupted_diff_removes_its_temporary_copies() {
    // Enough files that copying a revision takes a moment, so the interrupt lands during it.
    let mut fixture = Fixture::minimal();
    let padding = "x".repeat(4096);
    for index in 0..3000 {
        fixture = fixture.file(&format!("notes/{index}.txt"), padding.as_str());
    }
    let workspace = fixture.write();
    let root = workspace.root();
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    let tmp = tempfile::tempdir().unwrap();

    let mut interrupted = false;
    // The copy may finish before the signal in a fast run: try a few times.
    for _ in 0..10 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_promptc"))
            .args(["diff", "--base", "HEAD", "--head", "HEAD"])
            .current_dir(root)
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !has_checkout(tmp.path()) && start.elapsed() < Duration::from_secs(20) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if child.try_wait().unwrap().is_none() {
            // Signalled directly: starting a `kill` process could take longer than the copy.
            let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
            rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
            let status = child.wait().unwrap();
            if status.code() == Some(130) {
                interrupted = true;
                assert!(
                    !has_checkout(tmp.path()),
                    "a temporary copy was left behind"
                );
                break;
            }
        } else {
            child.wait().unwrap();
        }
        assert!(!has_checkout(tmp.path()));
    }
    assert!(interrupted, "the diff always finished before the interrupt");
}
