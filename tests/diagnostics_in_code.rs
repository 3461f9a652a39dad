//! Bad input that a folder of `tests/fixtures/diagnostics/` cannot hold (see
//! `tests/diagnostics.rs`): a file just outside the workspace, and bytes that are not UTF-8,
//! which are built here so that they stay exactly as written.

mod common;

use common::{Diag, Fixture};

#[test]
fn context_file_given_on_the_command_line_is_checked_too() {
    // A `--context FILE` outside the workspace gets the checks of the workspace's contexts.
    let workspace = Fixture::minimal().write();
    let outside = workspace.tmp().join("ctx.toml");
    std::fs::write(
        &outside,
        "date = \"2026-11-01\"\n\n[placeholders]\nyolo = true\n",
    )
    .unwrap();
    let run = workspace.run(&["build", "--context", outside.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("context placeholder `yolo` has the name of a context field"),
        "{}",
        run.stderr
    );
}

#[test]
fn template_file_escaping_the_workspace() {
    // The file exists, just outside the workspace root: it must still be refused.
    let report = Fixture::minimal()
        .file("../outside.md", "Secret.\n")
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"../../outside.md\"\ncomponents = [\"intro\"]\n",
        )
        .remove("tools/read_file.toml")
        .validate();
    // Line 2 `template_file = "../../outside.md"`: `template_file = ` is 16, the value at 17.
    assert_eq!(
        report.single(),
        Diag::error(
            "path-escapes-workspace",
            "variants/generic.toml",
            2,
            17,
            "path `../../outside.md` leaves the workspace"
        )
    );
    assert_eq!(
        report.help(0),
        Some("use a path relative to the file that stays inside the workspace")
    );
}

#[test]
fn non_utf8_data_file() {
    let report = Fixture::minimal()
        .file("components/extra.toml", b"id = \"caf\xe9\"\n")
        .validate();
    // `id = "caf` is 9 valid bytes; the bad byte is column 10.
    assert_eq!(
        report.single(),
        Diag::error(
            "not-utf8",
            "components/extra.toml",
            1,
            10,
            "the file is not valid UTF-8"
        )
    );
    assert_eq!(report.help(0), Some("save the file as UTF-8"));
}

#[test]
fn non_utf8_template_file() {
    let report = Fixture::minimal()
        .file("components/intro.md", b"Line one.\nCaf\xe9 {{ cwd }}\n")
        .validate();
    // Line 2 `Caf\xe9`: three valid characters, the bad byte at column 4.
    assert_eq!(
        report.single(),
        Diag::error(
            "not-utf8",
            "components/intro.md",
            2,
            4,
            "the file is not valid UTF-8"
        )
    );
}

// A file's name is the workspace's to choose: escape sequences in it reached the terminal (or
// the CI log) whole, able to clear the screen or retitle the window. They are shown as their
// Unicode pictures, in the diagnostic's location as in messages.
#[cfg(unix)]
#[test]
fn control_characters_in_a_file_name_are_shown_not_sent() {
    let workspace = Fixture::minimal()
        .file(
            "components/a\u{1b}[2J\u{1b}]0;pwned\u{7}b.toml",
            "id = \"ab\"\nx = 1\n",
        )
        .write();
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        !run.stderr.contains('\u{1b}') && !run.stderr.contains('\u{7}'),
        "{:?}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("--> components/a\u{241b}[2J\u{241b}]0;pwned\u{2407}b.toml:"),
        "{}",
        run.stderr
    );
}
