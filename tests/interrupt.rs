//! Ctrl-C (or SIGTERM) during `diff` leaves none of its temporary copies of the workspace
//! behind, and stops the git process that was writing into one; what a killed `diff` left, the
//! next one removes.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Fixture, git};

/// Whether `dir` holds a folder promptc made for a revision.
fn has_checkout(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().any(|entry| {
        entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".promptc-tmp-")
    })
}

/// The git that `PATH` names, for the stand-in to call.
fn real_git() -> PathBuf {
    let path = std::env::var_os("PATH").expect("PATH is set");
    std::env::split_paths(&path)
        .map(|dir| dir.join("git"))
        .find(|candidate| candidate.is_file())
        .expect("git is on PATH")
}

/// Quotes `path` for a POSIX shell.
fn shell_quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// A `git` that behaves as the real one, except that `checkout-index` writes the files and
/// then stays alive (as a large checkout would) after leaving `marker`: the interrupt then
/// lands while git is writing into the temporary copy, on every run, however fast the copy.
fn install_stalling_git(bin: &Path, marker: &Path) {
    let script = format!(
        "#!/bin/sh\n\
         for arg in \"$@\"; do\n\
         \tif [ \"$arg\" = checkout-index ]; then\n\
         \t\t{real} \"$@\" || exit $?\n\
         \t\techo $$ > {partial} && mv {partial} {marker}\n\
         \t\texec sleep 120\n\
         \tfi\n\
         done\n\
         exec {real} \"$@\"\n",
        real = shell_quoted(&real_git()),
        marker = shell_quoted(marker),
        // Written whole, then renamed: the test reads the marker as soon as it exists.
        partial = shell_quoted(&marker.with_extension("partial")),
    );
    let path = bin.join("git");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn an_interrupted_diff_removes_its_temporary_copies() {
    interrupt_a_diff(false, rustix::process::Signal::INT);
}

// A terminal's Ctrl-C reaches the whole process group: git may end of it before promptc's
// handler has begun, and the failure that looks like must not be reported nor win the exit.
#[test]
fn a_ctrl_c_to_the_whole_group_ends_the_diff_as_an_interrupt() {
    interrupt_a_diff(true, rustix::process::Signal::INT);
}

// A cancelled CI job sends SIGTERM.
#[test]
fn a_terminated_diff_removes_its_temporary_copies() {
    interrupt_a_diff(false, rustix::process::Signal::TERM);
}

// A process killed outright (SIGKILL, out of processor time or memory) runs nothing: the next
// `diff` removes what it left.
#[cfg(target_os = "linux")]
#[test]
fn the_copies_a_killed_diff_left_are_removed_by_the_next() {
    let (workspace, tmp, _scratch, marker) = interrupt_a_diff(false, rustix::process::Signal::KILL);
    // The stalled git of the killed run is stopped here, as nothing else would.
    let git_pid: i32 = std::fs::read_to_string(&marker)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(git_pid).unwrap(),
        rustix::process::Signal::KILL,
    );
    assert!(git_was_stopped(&marker));
    assert!(has_checkout(tmp.path()), "the killed diff left its copy");
    let next = common::promptc_process()
        .args(["diff", "--base", "HEAD", "--head", "HEAD"])
        .current_dir(workspace.root())
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(next.status.code(), Some(0), "{}", common::stderr(&next));
    assert!(!has_checkout(tmp.path()), "the left copy is still there");
}

/// Signals a `diff` while git writes its copy: promptc alone, or its whole process group.
/// Gives the workspace, the temporary folder, the folder of the stalling git and its marker,
/// for a test to go on.
fn interrupt_a_diff(
    whole_group: bool,
    signal: rustix::process::Signal,
) -> (
    common::Workspace,
    tempfile::TempDir,
    tempfile::TempDir,
    PathBuf,
) {
    use std::os::unix::process::CommandExt;
    let workspace = Fixture::minimal()
        .file("notes/a.txt", "kept in the revision")
        .write();
    let root = workspace.root();
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);

    let tmp = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let bin = scratch.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let marker = scratch.path().join("checkout-index.pid");
    install_stalling_git(&bin, &marker);
    let mut path = vec![bin];
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));

    let mut command = common::promptc_process();
    if whole_group {
        command.process_group(0);
    }
    let mut child = command
        .args(["diff", "--base", "HEAD", "--head", "HEAD"])
        .current_dir(root)
        .env("TMPDIR", tmp.path())
        .env("PATH", std::env::join_paths(path).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !marker.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            panic!("the diff ended ({status}) before git wrote the copy: {stderr}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "git never reached checkout-index"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        has_checkout(tmp.path()),
        "git is writing, so the temporary copy exists"
    );

    // Signalled directly: starting a `kill` process would take longer.
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    if whole_group {
        rustix::process::kill_process_group(pid, signal).unwrap();
    } else {
        rustix::process::kill_process(pid, signal).unwrap();
    }
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    if signal == rustix::process::Signal::KILL {
        return (workspace, tmp, scratch, marker);
    }
    assert_eq!(
        status.code(),
        Some(130),
        "an interrupt exits with 130: {stderr}"
    );
    assert!(!stderr.contains("failed"), "{stderr}");
    assert!(
        !has_checkout(tmp.path()),
        "a temporary copy was left behind"
    );

    // The stalled git was stopped, not left to write on: it is gone (or a zombie awaiting
    // its new parent) shortly after promptc exits.
    if cfg!(target_os = "linux") {
        assert!(
            git_was_stopped(&marker),
            "the git writing the copy is still running"
        );
    }
    (workspace, tmp, scratch, marker)
}

/// Whether the process whose id `marker` holds has ended, waiting a little for it.
fn git_was_stopped(marker: &Path) -> bool {
    let git_pid: i32 = std::fs::read_to_string(marker)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (0..400).any(|_| {
        let gone = !Path::new(&format!("/proc/{git_pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{git_pid}/stat"))
                .map(|stat| {
                    stat.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
                .unwrap_or(true);
        if !gone {
            std::thread::sleep(Duration::from_millis(5));
        }
        gone
    })
}

/// The temporary files in `dir`, by name.
fn temporary_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".promptc-tmp-"))
        .collect()
}

// Ctrl-C (or a cancelled CI job's SIGTERM) while `build --all` writes its outputs left its
// temporary files in the output folder, where `check` then failed on them as strays until
// the next build. The interrupt removes them; what was in place stays as it was, or (if the
// renames had begun) the whole new set is in place.
#[test]
fn an_interrupted_build_leaves_no_temporary_files() {
    interrupt_a_build(rustix::process::Signal::INT);
}

#[test]
fn a_terminated_build_leaves_no_temporary_files() {
    interrupt_a_build(rustix::process::Signal::TERM);
}

fn interrupt_a_build(signal: rustix::process::Signal) {
    const CONTEXTS: usize = 60;
    // About 600 KB a prompt, each written and synced in turn: the interrupt lands while the
    // first ones are staged.
    let mut fixture = Fixture::minimal().file(
        "components/intro.md",
        "{% for i in range(20000) %}Line {{ i }} of a long section.\n{% endfor %}",
    );
    for context in 0..CONTEXTS {
        fixture = fixture.file(
            &format!("examples/contexts/c{context:02}.toml"),
            "date = \"2026-11-01\"\n",
        );
    }
    let workspace = fixture.write();
    let outputs = workspace.root().join("examples/prompts/generic");
    let mut child = common::promptc_process()
        .args(["build", "--all", "-q"])
        .current_dir(workspace.root())
        .env("PROMPTC_NO_CACHE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while temporary_files(&outputs).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            panic!("the build ended ({status}) before a temporary file was seen: {stderr}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the build wrote no temporary file"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "an interrupt exits with 130: {stderr}"
    );
    assert_eq!(temporary_files(&outputs), Vec::<String>::new());
    let written = std::fs::read_dir(&outputs)
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert!(
        written == 0 || written == CONTEXTS + 1,
        "{written} outputs of {} in place",
        CONTEXTS + 1
    );
    // Nothing is left for `check` to call stray: it fails only on the outputs not written.
    let check = workspace.run(&["check"]);
    assert!(!check.stderr.contains("stray"), "{}", check.stderr);
}
