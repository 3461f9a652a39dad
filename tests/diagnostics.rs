//! Bad input: every kind of problem a workspace can have is reported by `promptc validate`
//! with the right file (workspace-relative), line, column (1-based, in characters), code,
//! message and help, and nothing panics.
//!
//! Each folder of `tests/fixtures/diagnostics/` is one case: a complete workspace (what
//! `Fixture::minimal()` in `tests/common/mod.rs` writes, with one thing changed) and a file
//! `cmd`. In `cmd`, lines starting with `#` describe the case; every other line is a command
//! (`promptc` arguments, split on spaces), run in order in one fresh copy of the workspace
//! with colours off. The snapshot `snapshots/diagnostics__case@<folder>.snap` holds each
//! command's exit code, stdout and stderr: the report a person reads, whose carets pin every
//! line and column.
//!
//! A new case is a new folder; `INSTA_UPDATE=always cargo test --test diagnostics` writes its
//! snapshot, to be read before it is committed. Cases that are not one workspace and its
//! commands (a file outside the workspace, bytes that are not UTF-8) are tests of their own in
//! `tests/diagnostics_in_code.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::{Fixture, Workspace};

#[test]
fn case() {
    insta::glob!("fixtures/diagnostics/*/cmd", |cmd| {
        let folder = cmd.parent().unwrap();
        let name = folder.file_name().unwrap().to_str().unwrap();
        let script = std::fs::read_to_string(cmd).unwrap();
        let (description, commands) = parse(&script);
        assert!(!commands.is_empty(), "{name}/cmd names no command");
        let workspace = Fixture::from_dir(folder).remove("cmd").write();

        let mut report = String::new();
        for command in &commands {
            let mut args = vec!["--color", "never"];
            args.extend(command.split_whitespace());
            let run = workspace.run(&args);
            writeln!(report, "$ promptc {command}\nexit code: {}", run.code).unwrap();
            for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
                if !text.is_empty() {
                    write!(report, "--- {stream}\n{text}").unwrap();
                    if !text.ends_with('\n') {
                        report.push_str("\n[no newline at the end]\n");
                    }
                }
            }
        }
        let report = workspace_relative(&report, &workspace);

        insta::with_settings!({
            description => description,
            snapshot_suffix => name,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(report);
        });
    });
}

/// Every folder is a case (a folder without `cmd` would be skipped silently), and every
/// snapshot of a case has its folder (a renamed or deleted case leaves none behind).
#[test]
fn cases_and_snapshots_match() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(tests.join("fixtures/diagnostics")).unwrap() {
        let path = entry.unwrap().path();
        assert!(path.join("cmd").is_file(), "{} has no cmd", path.display());
        folders.push(path.file_name().unwrap().to_str().unwrap().to_string());
    }
    for entry in std::fs::read_dir(tests.join("snapshots")).unwrap() {
        let name = entry.unwrap().file_name();
        let name = name.to_str().unwrap();
        if let Some(case) = name
            .strip_prefix("diagnostics__case@")
            .and_then(|rest| rest.strip_suffix(".snap"))
        {
            assert!(
                folders.iter().any(|folder| folder == case),
                "tests/snapshots/{name} has no case folder"
            );
        }
    }
}

/// The description (the `#` lines, without the `#`) and the commands of a `cmd` file.
fn parse(script: &str) -> (String, Vec<&str>) {
    let mut description = Vec::new();
    let mut commands = Vec::new();
    for line in script
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
    {
        match line.strip_prefix('#') {
            Some(text) => description.push(text.trim()),
            None => commands.push(line),
        }
    }
    (description.join(" "), commands)
}

/// The report with the workspace root (which `validate` names when all is well) written
/// `[workspace]`; no other path of the temporary folder may show.
fn workspace_relative(report: &str, workspace: &Workspace) -> String {
    let mut report = report.to_string();
    let root = workspace.root();
    for root in [root.canonicalize().unwrap(), root.to_path_buf()] {
        report = report.replace(root.to_str().unwrap(), "[workspace]");
    }
    let tmp = workspace.tmp();
    for tmp in [tmp.canonicalize().unwrap(), tmp.to_path_buf()] {
        let tmp = tmp.to_str().unwrap();
        assert!(!report.contains(tmp), "{report}");
    }
    report
}
