//! The review workflow end to end in temporary git repositories: `build --all`, `check`,
//! `diff --base`, `explain`, `show --effective`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{fixture_dir, stderr, stdout};

struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

impl Repo {
    /// A git repository holding the expressive fixture, its compiled outputs committed.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        copy_dir(&fixture_dir("expressive"), &root);
        let repo = Repo { _dir: dir, root };
        repo.git(&["init", "-q", "-b", "main"]);
        let built = repo.promptc(&["build", "--all"]);
        assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));
        repo.commit("initial");
        repo
    }

    fn git(&self, args: &[&str]) -> String {
        common::git(&self.root, args)
    }

    fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    fn promptc(&self, args: &[&str]) -> Output {
        common::promptc()
            .current_dir(&self.root)
            .args(args)
            .output()
            .unwrap()
    }

    fn write(&self, path: &str, text: &str) {
        std::fs::write(self.root.join(path), text).unwrap();
    }

    fn edit(&self, path: &str, from: &str, to: &str) {
        let text = std::fs::read_to_string(self.root.join(path)).unwrap();
        assert!(text.contains(from), "{path} has no `{from}`");
        self.write(path, &text.replace(from, to));
    }
}

const MODE_LINE: &str = "components/mode_line.yaml";

#[test]
fn check_fails_on_a_changed_component_and_names_the_stale_outputs() {
    let repo = Repo::new();
    let clean = repo.promptc(&["check"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert!(stderr(&clean).contains("ok: 4 outputs are up to date"));

    repo.edit(
        MODE_LINE,
        "after the user approves each one",
        "once the user says yes",
    );
    let stale = repo.promptc(&["check"]);
    assert_eq!(stale.status.code(), Some(1));
    let err = stderr(&stale);
    assert!(
        err.contains("stale: examples/prompts/base/full.md"),
        "{err}"
    );
    assert!(
        err.contains("stale: examples/prompts/compact/full.md"),
        "{err}"
    );
    // bare runs in yolo mode: the changed branch of the condition does not show there.
    assert!(!err.contains("bare.md"), "{err}");
    let diff = stdout(&stale);
    assert!(diff.contains("--- a/examples/prompts/base/full.md"));
    assert!(diff.contains("-Run commands after the user approves each one; you are in act mode."));
    assert!(diff.contains("+Run commands once the user says yes; you are in act mode."));
    // check never writes.
    assert_eq!(
        repo.git(&["status", "--porcelain"]).trim(),
        format!("M {MODE_LINE}")
    );

    let rebuilt = repo.promptc(&["build", "--all"]);
    assert!(stderr(&rebuilt).contains("4 outputs: 2 written, 2 unchanged, 0 removed"));
    assert_eq!(repo.promptc(&["check"]).status.code(), Some(0));
}

// An output whose lines only end in CRLF (a checkout with git's `core.autocrlf`) is stale,
// and said to differ in its line endings alone, with what keeps them: not a diff of every line.
#[test]
fn check_says_when_only_the_line_endings_of_an_output_differ() {
    let repo = Repo::new();
    let path = "examples/prompts/base/full.md";
    let text = std::fs::read_to_string(repo.root.join(path)).unwrap();
    repo.write(path, &text.replace('\n', "\r\n"));
    let stale = repo.promptc(&["check"]);
    assert_eq!(stale.status.code(), Some(1));
    assert!(
        stderr(&stale).contains(&format!("stale: {path}")),
        "{}",
        stderr(&stale)
    );
    let diff = stdout(&stale);
    assert!(diff.contains("only the line endings differ"), "{diff}");
    assert!(
        diff.contains("`examples/prompts/** -text` in .gitattributes"),
        "{diff}"
    );
    assert!(diff.lines().count() < 5, "{diff}");
    // A template whose lines end in CRLF makes promptc write them: said from that side.
    repo.write(path, &text);
    let template = std::fs::read_to_string(repo.root.join("components/tool_use.md")).unwrap();
    repo.write("components/tool_use.md", &template.replace('\n', "\r\n"));
    let diff = stdout(&repo.promptc(&["check"]));
    assert!(
        diff.contains("only the line endings differ: promptc now writes lines ending in CRLF"),
        "{diff}"
    );
    repo.write("components/tool_use.md", &template);
    // A change besides the line endings is shown as a diff.
    repo.write(path, &text.replacen('\n', "\r\n", 1).replacen("a", "b", 1));
    let diff = stdout(&repo.promptc(&["check"]));
    assert!(!diff.contains("only the line endings differ"), "{diff}");
}

#[test]
fn check_reports_an_entry_that_does_not_compile_not_its_outputs_as_unexpected() {
    let repo = Repo::new();
    // A filter that does not exist, in the one family that overrides tool_use.
    repo.edit(
        "variants/compact.toml",
        "{{ TOOL_LIST_SECTION }}",
        "{{ TOOL_LIST_SECTION | uppr }}",
    );
    repo.edit(
        MODE_LINE,
        "after the user approves each one",
        "once the user says yes",
    );
    let checked = repo.promptc(&["check"]);
    assert_eq!(checked.status.code(), Some(1));
    let err = stderr(&checked);
    assert!(err.contains("compact × full does not compile"), "{err}");
    assert!(err.contains("compact × bare does not compile"), "{err}");
    // The committed outputs of compact are what the errors are about: not "no longer in the
    // build matrix", and `build --all` alone would not fix them.
    assert!(!err.contains("unexpected"), "{err}");
    assert!(
        err.contains("stale: examples/prompts/base/full.md"),
        "{err}"
    );
    assert!(
        err.contains(
            "error: the committed outputs differ (1 stale), and 2 entries did not compile: fix \
             the errors above, then run `promptc build --all`"
        ),
        "{err}"
    );
    let json = repo.promptc(&["check", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["compiled"], false);
    assert_eq!(
        json["files"],
        serde_json::json!([{
            "status": "stale",
            "path": "examples/prompts/base/full.md",
            "diff": json["files"][0]["diff"],
        }])
    );
}

#[test]
fn build_all_removes_only_the_outputs_it_owns() {
    let repo = Repo::new();
    repo.write(
        "examples/prompts/base/notes.md",
        "kept: promptc did not write this\n",
    );
    repo.edit(
        "promptc.toml",
        "[paths]",
        "[build]\ncontexts = [\"full\"]\n\n[paths]",
    );
    let built = repo.promptc(&["build", "--all"]);
    assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));
    let err = stderr(&built);
    assert!(
        err.contains("removed examples/prompts/base/bare.md"),
        "{err}"
    );
    assert!(
        err.contains("removed examples/prompts/compact/bare.md"),
        "{err}"
    );
    assert!(!repo.root.join("examples/prompts/base/bare.md").exists());
    assert!(repo.root.join("examples/prompts/base/full.md").exists());
    assert!(repo.root.join("examples/prompts/base/notes.md").exists());
    // check reports the stray file as unexpected, but does not touch it, and does not send
    // the user to `build --all`, which leaves it alone.
    let checked = repo.promptc(&["check"]);
    assert_eq!(checked.status.code(), Some(1));
    let err = stderr(&checked);
    assert!(
        err.contains("unexpected: examples/prompts/base/notes.md"),
        "{err}"
    );
    assert!(
        err.contains(
            "error: the output folder holds 1 file(s) promptc did not write; move or delete them"
        ),
        "{err}"
    );
    assert!(!err.contains("run `promptc build --all`"), "{err}");
}

/// A family no longer built leaves no empty folder where its outputs were; the folders of
/// the families still built, and one holding a file promptc did not write, stay.
#[test]
fn build_all_removes_the_folders_its_removals_leave_empty() {
    let repo = Repo::new();
    let prompts = repo.root.join("examples/prompts");
    assert!(prompts.join("compact").is_dir());
    std::fs::create_dir_all(prompts.join("other")).unwrap();
    repo.write("examples/prompts/other/notes.md", "mine\n");
    repo.edit(
        "promptc.toml",
        "[paths]",
        "[build]\nfamilies = [\"base\"]\n\n[paths]",
    );
    let built = repo.promptc(&["build", "--all"]);
    assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));
    assert!(
        stderr(&built).contains("removed examples/prompts/compact/full.md"),
        "{}",
        stderr(&built)
    );
    assert!(!prompts.join("compact").exists());
    assert!(prompts.join("base/full.md").is_file());
    assert!(prompts.join("other/notes.md").is_file());
}

/// An output no longer built that cannot be removed (its folder made read-only, a file another
/// program holds open) was dropped from the index of the outputs promptc wrote: once it could
/// be removed, `build --all` left it for good and `check` called it someone else's file. It
/// stays in the index until it is removed. Run as a user whom permissions bind: root's
/// removals do not fail, so under root the commands run as `nobody`.
#[cfg(unix)]
#[test]
fn an_output_that_could_not_be_removed_is_removed_by_the_next_build() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let repo = Repo::new();
    repo.edit(
        "promptc.toml",
        "[paths]",
        "[build]\nfamilies = [\"base\"]\n\n[paths]",
    );
    let root_user = std::fs::metadata(&repo.root).unwrap().uid() == 0;
    if root_user {
        let status = std::process::Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(repo._dir.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
    let run = |args: &[&str]| {
        let mut command = if root_user {
            let mut command = std::process::Command::new("setpriv");
            command
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(assert_cmd::cargo::cargo_bin("promptc"));
            command
        } else {
            common::promptc_process()
        };
        common::isolated_git(&mut command)
            .env("PROMPTC_NO_CACHE", "1")
            .env("NO_COLOR", "1")
            .current_dir(&repo.root)
            .args(args)
            .output()
            .unwrap()
    };
    let compact = repo.root.join("examples/prompts/compact");
    std::fs::set_permissions(&compact, std::fs::Permissions::from_mode(0o555)).unwrap();
    let built = run(&["build", "--all"]);
    assert_ne!(built.status.code(), Some(0), "{}", stderr(&built));
    assert!(compact.join("full.md").is_file());
    std::fs::set_permissions(&compact, std::fs::Permissions::from_mode(0o755)).unwrap();
    let checked = run(&["check"]);
    assert_eq!(checked.status.code(), Some(1), "{}", stderr(&checked));
    assert!(
        !stderr(&checked).contains("did not write"),
        "{}",
        stderr(&checked)
    );
    let built = run(&["build", "--all"]);
    assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));
    assert!(
        stderr(&built).contains("removed examples/prompts/compact/full.md"),
        "{}",
        stderr(&built)
    );
    assert!(!compact.exists());
    let checked = run(&["check"]);
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
}

#[test]
fn diff_shows_each_changed_output_with_its_source_file() {
    let repo = Repo::new();
    repo.edit(
        MODE_LINE,
        "after the user approves each one",
        "once the user says yes",
    );
    let diffed = repo.promptc(&["diff", "--base", "HEAD"]);
    assert_eq!(diffed.status.code(), Some(0), "{}", stderr(&diffed));
    let out = stdout(&diffed);
    assert!(
        out.contains("base × full (modified): -10 characters, -1 tokens"),
        "{out}"
    );
    assert!(out.contains("+Run commands once the user says yes; you are in act mode."));
    assert!(out.contains(
        "components/mode_line.yaml (modified): examples/prompts/base/full.md, examples/prompts/compact/full.md"
    ), "{out}");
    assert!(!out.contains("bare"), "{out}");
    // The working tree is untouched.
    assert_eq!(
        repo.git(&["status", "--porcelain"]).trim(),
        format!("M {MODE_LINE}")
    );

    let stat = stdout(&repo.promptc(&["diff", "--base", "HEAD", "--stat"]));
    assert!(
        stat.contains("base × full (modified)") && !stat.contains("@@"),
        "{stat}"
    );

    // Between two commits, the same.
    repo.commit("reword the mode line");
    let committed = stdout(&repo.promptc(&["diff", "--base", "HEAD~1", "--head", "HEAD"]));
    assert!(committed.contains("base × full (modified): -10 characters, -1 tokens"));

    let json: serde_json::Value = serde_json::from_str(&stdout(&repo.promptc(&[
        "diff", "--base", "HEAD~1", "--head", "HEAD", "--format", "json",
    ])))
    .unwrap();
    assert_eq!(json["prompts"].as_array().unwrap().len(), 2);
    assert_eq!(json["prompts"][0]["path"], "examples/prompts/base/full.md");
    assert_eq!(json["sources"][0]["path"], MODE_LINE);
}

#[test]
fn diff_markdown_is_a_pull_request_comment() {
    let repo = Repo::new();
    repo.edit(
        MODE_LINE,
        "after the user approves each one",
        "once the user says yes",
    );
    repo.edit(
        "tools/shell.toml",
        "Seconds before giving up.",
        "Seconds to wait.",
    );
    let diffed = repo.promptc(&["diff", "--base", "HEAD", "--format", "markdown"]);
    assert_eq!(diffed.status.code(), Some(0), "{}", stderr(&diffed));
    insta::with_settings!({
        description => "expressive fixture; mode_line.yaml and tools/shell.toml reworded; promptc diff --base HEAD --format markdown",
        omit_expression => true,
    }, {
        insta::assert_snapshot!("diff-markdown", stdout(&diffed));
    });
}

// A repository with no commit yet has nothing to compare with, and the reason says so.
#[test]
fn diff_in_a_repository_without_a_commit_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    copy_dir(&fixture_dir("expressive"), &root);
    let repo = Repo { _dir: dir, root };
    repo.git(&["init", "-q", "-b", "main"]);
    let diffed = repo.promptc(&["diff", "--base", "main"]);
    assert_eq!(diffed.status.code(), Some(1));
    let out = stdout(&diffed);
    assert!(
        out.contains("unknown revision `main`: the repository has no commit yet"),
        "{out}"
    );
}

#[test]
fn diff_says_which_side_failed_and_why() {
    let repo = Repo::new();
    let unknown = repo.promptc(&["diff", "--base", "no-such-branch"]);
    assert_eq!(unknown.status.code(), Some(1));
    let out = stdout(&unknown);
    assert!(out.contains("error: the base side (no-such-branch) cannot be compiled:\nunknown revision `no-such-branch`"), "{out}");
    assert!(
        out.contains("note: the head side (working tree) compiles: 4 outputs"),
        "{out}"
    );
    // A misspelt branch: the one meant is named.
    let misspelt = stdout(&repo.promptc(&["diff", "--base", "mian"]));
    assert!(
        misspelt.contains("unknown revision `mian`: did you mean `main`?"),
        "{misspelt}"
    );

    // A file or a folder at a revision is an object of the repository, but no commit.
    for object in ["HEAD:components/mode_line.yaml", "HEAD^{tree}"] {
        let out = stdout(&repo.promptc(&["diff", "--base", object]));
        assert!(
            out.contains(&format!(
                "`{object}` names a file or a folder of the repository, not a commit"
            )),
            "{out}"
        );
    }

    // A search of the commit messages names a commit (its `^{commit}` was read as part of the
    // text searched for).
    let searched = repo.promptc(&["diff", "--base", ":/initial", "--stat"]);
    assert_eq!(
        stdout(&searched),
        "no compiled prompt differs between :/initial and working tree\n",
        "{}",
        stderr(&searched)
    );

    // A revision from before the workspace existed.
    repo.git(&["checkout", "-q", "--orphan", "empty"]);
    repo.git(&["rm", "-r", "-q", "--cached", "."]);
    repo.write("README", "nothing yet\n");
    repo.git(&["add", "README"]);
    repo.git(&["commit", "-q", "-m", "empty"]);
    repo.git(&["checkout", "-q", "-f", "main"]);
    let missing = stdout(&repo.promptc(&["diff", "--base", "empty"]));
    assert!(
        missing.contains("revision `empty` has no workspace at \".\" (no promptc.toml)"),
        "{missing}"
    );

    // A base whose workspace has an error: the diagnostics say where.
    repo.edit("variants/base.toml", "tools = [", "tools = [\"nope\", ");
    repo.commit("break it");
    repo.edit("variants/base.toml", "tools = [\"nope\", ", "tools = [");
    let broken = repo.promptc(&["diff", "--base", "HEAD"]);
    assert_eq!(broken.status.code(), Some(1));
    let out = stdout(&broken);
    assert!(
        out.contains("the base side (HEAD) cannot be compiled"),
        "{out}"
    );
    assert!(
        out.contains("error[unknown-reference]: unknown tool `nope`"),
        "{out}"
    );
    assert!(out.contains("variants/base.toml:14:"), "{out}");
    assert!(
        out.contains("the head side (working tree) compiles"),
        "{out}"
    );
    // The comment keeps to the least limit with a failure in it: the failure is cut to its
    // share, and says so.
    let comment = stdout(&repo.promptc(&[
        "diff",
        "--base",
        "HEAD",
        "--format",
        "markdown",
        "--max-chars",
        "1000",
    ]));
    assert!(comment.chars().count() <= 1000, "{comment}");
    assert!(comment.contains("(cut at "), "{comment}");
    // As JSON, a failure holds its diagnostics as data, each located, as `validate --format
    // json` gives them: the message alone was the text report's rendering.
    let json: serde_json::Value = serde_json::from_str(&stdout(
        &repo.promptc(&["diff", "--base", "HEAD", "--format", "json"]),
    ))
    .unwrap();
    let failure = &json["failures"][0];
    assert_eq!(failure["side"], "base", "{json}");
    let record = &failure["diagnostics"][0];
    assert_eq!(
        (
            record["severity"].as_str(),
            record["code"].as_str(),
            record["file"].as_str(),
            record["line"].as_u64(),
        ),
        (
            Some("error"),
            Some("unknown-reference"),
            Some("variants/base.toml"),
            Some(14)
        ),
        "{json}"
    );
    assert!(record["column"].as_u64().is_some(), "{json}");
    assert_eq!(record["message"], "unknown tool `nope`", "{json}");
    let unknown: serde_json::Value = serde_json::from_str(&stdout(&repo.promptc(&[
        "diff",
        "--base",
        "no-such-branch",
        "--format",
        "json",
    ])))
    .unwrap();
    assert_eq!(
        unknown["failures"][0]["diagnostics"][0]["code"], "revision-unreadable",
        "{unknown}"
    );
}

// A committed link out of the workspace is refused; the base side's copy lies in a temporary
// folder of its own, beside files of the copy's (git's `index`), and a link to one of them was
// told of by its real path, which named the folder and changed from run to run. The target
// beside the workspace is now named relative to it.
#[cfg(unix)]
#[test]
fn a_committed_link_out_of_the_workspace_is_told_alike_on_every_run() {
    let repo = Repo::new();
    std::fs::remove_file(repo.root.join("components/mcp.md")).unwrap();
    std::os::unix::fs::symlink("../../index", repo.root.join("components/mcp.md")).unwrap();
    repo.commit("link out");
    let runs: Vec<String> = (0..2)
        .map(|_| stdout(&repo.promptc(&["diff", "--base", "HEAD", "--format", "json"])))
        .collect();
    assert_eq!(runs[0], runs[1]);
    assert!(
        runs[0]
            .contains("components/mcp.md` is a symbolic link to ../index, outside the workspace"),
        "{}",
        runs[0]
    );
    assert!(!runs[0].contains(".promptc-tmp-"), "{}", runs[0]);
}

#[test]
fn explain_gives_the_reason_and_the_place() {
    let repo = Repo::new();
    let explained = repo.promptc(&["explain", "--family", "compact", "--context", "bare"]);
    assert_eq!(explained.status.code(), Some(0), "{}", stderr(&explained));
    let out = stdout(&explained);
    assert!(
        out.contains(
            "variant `compact` (family `compact`), from variants/compact.toml <- variants/base.toml"
        ),
        "{out}"
    );
    assert!(
        out.contains("- todo: disabled by an override at variants/compact.toml:16:1"),
        "{out}"
    );
    assert!(
        out.contains("- browser: condition `browser.enabled` is false  [tools/browser.toml:2]"),
        "{out}"
    );
    assert!(
        out.contains("when `browser.enabled` is false with browser.enabled = false"),
        "{out}"
    );
    // The parameters of a tool not offered are shown nowhere, whatever their own conditions.
    assert!(out.contains("- action: its tool is not offered"), "{out}");
    assert!(!out.contains("+ action"), "{out}");
    assert!(
        out.contains("- progress: depends on tools that are not enabled: todo"),
        "{out}"
    );
    assert!(out.contains("uses the `compact` spec"), "{out}");
    assert!(out.contains("- mcp: not listed by the variant"), "{out}");
    assert!(
        out.contains("+ intro: included")
            && out.contains("the component's template for this family"),
        "{out}"
    );

    let one = stdout(&repo.promptc(&[
        "explain",
        "--family",
        "base",
        "--context",
        "full",
        "--component",
        "mcp",
    ]));
    assert!(one.contains("+ mcp: included"), "{one}");
    assert!(
        one.contains("when `has_mcp` is true with has_mcp = true"),
        "{one}"
    );
    assert!(!one.contains("tools, in documentation order"), "{one}");

    let json: serde_json::Value = serde_json::from_str(&stdout(&repo.promptc(&[
        "explain", "--family", "compact", "--tool", "shell", "--format", "json",
    ])))
    .unwrap();
    assert_eq!(json["tools"][0]["id"], "shell");
    assert_eq!(json["tools"][0]["source"]["file"], "tools/shell.toml");
}

#[test]
fn show_effective_prints_the_merged_variant_as_toml() {
    let repo = Repo::new();
    let shown = repo.promptc(&["show", "--effective", "compact"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let text = stdout(&shown);
    let value: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(value["id"].as_str(), Some("compact"));
    assert!(value.get("extends").is_none());
    assert_eq!(value["template_file"].as_str(), Some("base.md"));
    assert_eq!(value["placeholders"]["AGENT"].as_str(), Some("Atlas"));
    assert_eq!(value["model"]["temperature"].as_float(), Some(0.3));
    assert_eq!(value["model"]["max_tokens"].as_integer(), Some(2048));
    assert_eq!(value["tools"].as_array().unwrap().len(), 4);
    assert_eq!(
        value["overrides"]["tools"]["todo"]["enabled"].as_bool(),
        Some(false)
    );
    assert_eq!(
        repo.promptc(&["show", "--effective", "nope"]).status.code(),
        Some(2)
    );
}

/// A git repository holding the shipped library (as `promptc init` writes it), committed.
fn library_repo() -> Repo {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let repo = Repo { _dir: dir, root };
    std::fs::create_dir_all(&repo.root).unwrap();
    let init = repo.promptc(&["init", "-q"]);
    assert_eq!(init.status.code(), Some(0), "{}", stderr(&init));
    repo.git(&["init", "-q", "-b", "main"]);
    repo.commit("library");
    repo
}

#[test]
fn the_pr_comment_shows_a_change_shared_by_many_outputs_once_and_fits_github() {
    let repo = library_repo();
    // A two-line edit to a section every output has: 48 outputs change.
    let role = "components/agent_role.md";
    let text = std::fs::read_to_string(repo.root.join(role)).unwrap();
    repo.write(
        role,
        &format!("{text}\nKeep answers brief.\nName the files you change.\n"),
    );
    let diffed = repo.promptc(&["diff", "--base", "main", "--format", "markdown"]);
    assert_eq!(diffed.status.code(), Some(0), "{}", stderr(&diffed));
    let comment = stdout(&diffed);
    assert!(
        comment.chars().count() <= 60_000,
        "{} characters",
        comment.len()
    );
    assert!(comment.contains("48 outputs changed, in "), "{comment}");
    assert!(comment.contains(" outputs, the same change: "), "{comment}");
    // Each output is still listed with its own counts, once.
    for family in [
        "generic",
        "next-gen",
        "xs",
        "gpt",
        "gemini",
        "native-next-gen",
    ] {
        let line = format!("- {family} × basic (modified): +");
        assert_eq!(comment.matches(&line).count(), 1, "{line}\n{comment}");
    }
    // The diff itself appears once per group, not once per output.
    let groups = comment.matches("<summary><b>Change ").count();
    assert_eq!(comment.matches("+Keep answers brief.").count(), groups);
    assert!(groups < 48 / 4, "{groups} groups");
    assert!(!comment.contains("cut to"), "{comment}");
}

#[test]
fn a_comment_past_its_limit_keeps_every_change_named_and_says_what_it_left_out() {
    let repo = library_repo();
    let role = "components/agent_role.md";
    let text = std::fs::read_to_string(repo.root.join(role)).unwrap();
    repo.write(role, &format!("{text}\nKeep answers brief.\n"));
    // The small family's prompts change in a second way: more than one distinct change.
    let xs = std::fs::read_to_string(repo.root.join("variants/xs.md")).unwrap();
    repo.write("variants/xs.md", &format!("{xs}\nSay when you are done.\n"));
    let full = stdout(&repo.promptc(&["diff", "--base", "main", "--format", "markdown"]));
    let groups = full.matches("<summary><b>Change ").count();
    assert!(groups > 1, "{full}");
    let cut = stdout(&repo.promptc(&[
        "diff",
        "--base",
        "main",
        "--format",
        "markdown",
        "--max-chars",
        "6000",
    ]));
    assert!(
        cut.chars().count() <= 6000,
        "{} characters",
        cut.chars().count()
    );
    assert!(
        cut.contains("**This comment is cut to 6000 characters**"),
        "{cut}"
    );
    assert!(
        cut.contains("`promptc diff --base main` prints the whole report"),
        "{cut}"
    );
    // Every change is still there: with its diff, or as a line of its own.
    for number in 1..=groups {
        assert!(
            cut.contains(&format!("<b>Change {number}</b>")),
            "{number}\n{cut}"
        );
    }
    // The least limit is kept to as well; one too small for the heading and the note is
    // refused (a comment of 317 characters said it was cut to 100).
    let least = stdout(&repo.promptc(&[
        "diff",
        "--base",
        "main",
        "--format",
        "markdown",
        "--max-chars",
        "1000",
    ]));
    assert!(least.chars().count() <= 1000, "{least}");
    assert!(
        least.contains("**This comment is cut to 1000 characters**"),
        "{least}"
    );
    let refused = repo.promptc(&["diff", "--base", "main", "--max-chars", "999"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("a comment needs at least 1000 characters"),
        "{}",
        stderr(&refused)
    );
    // `--max-chars 0` is no limit at all.
    let unlimited = stdout(&repo.promptc(&[
        "diff",
        "--base",
        "main",
        "--format",
        "markdown",
        "--max-chars",
        "0",
    ]));
    assert_eq!(unlimited, full);
}

#[test]
fn a_new_tool_and_the_variant_that_lists_it_are_one_cause() {
    let repo = library_repo();
    let new = repo.promptc(&["new", "tool", "web_probe"]);
    assert_eq!(new.status.code(), Some(0), "{}", stderr(&new));
    repo.edit(
        "variants/next-gen.toml",
        "add_tools = [\"web_fetch\"]",
        "add_tools = [\"web_fetch\", \"web_probe\"]",
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(
        &repo.promptc(&["diff", "--base", "main", "--format", "json"]),
    ))
    .unwrap();
    let sources = json["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2, "{sources:?}");
    let tool = &sources[0];
    let variant = &sources[1];
    assert_eq!(tool["path"], "tools/web_probe.toml");
    assert_eq!(
        tool["together_with"],
        serde_json::json!(["variants/next-gen.toml"])
    );
    assert_eq!(
        variant["together_with"],
        serde_json::json!(["tools/web_probe.toml"])
    );
    // What they change together is exactly what changed: every next-gen prompt.
    let changed: Vec<&str> = json["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(tool["affects"], variant["affects"]);
    let affects: Vec<&str> = tool["affects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(affects, changed);
    assert!(affects.contains(&"examples/prompts/next-gen/basic.md"));

    let text = stdout(&repo.promptc(&["diff", "--base", "main", "--stat"]));
    assert!(
        text.contains("tools/web_probe.toml (added), only together with variants/next-gen.toml: "),
        "{text}"
    );
    assert!(!text.contains("no compiled prompt changed"), "{text}");

    // A file whose change alters nothing, alone or with others (a tool no variant lists), is
    // still said to change nothing.
    let spare = repo.promptc(&["new", "tool", "spare_tool"]);
    assert_eq!(spare.status.code(), Some(0), "{}", stderr(&spare));
    let text = stdout(&repo.promptc(&["diff", "--base", "main", "--stat"]));
    assert!(
        text.contains("tools/spare_tool.toml (added): no compiled prompt changed"),
        "{text}"
    );
}

/// `diff --base main --format json`, which must succeed.
fn diff_json(repo: &Repo) -> serde_json::Value {
    let diffed = repo.promptc(&["diff", "--base", "main", "--format", "json"]);
    assert_eq!(diffed.status.code(), Some(0), "{}", stderr(&diffed));
    serde_json::from_str(&stdout(&diffed)).unwrap()
}

/// A diff report's changed source files, by path.
fn sources_by_path(json: &serde_json::Value) -> BTreeMap<&str, &serde_json::Value> {
    json["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|source| (source["path"].as_str().unwrap(), source))
        .collect()
}

/// Two features in one change, each of files that act only together (a new component, the
/// variant that lists it and its base template that writes its slot; a new tool and the
/// variant that adds it) are two causes, each with the outputs it changes: they were said to
/// act together, all five, each on every output either changed.
#[test]
fn two_features_of_one_change_are_two_causes() {
    let repo = library_repo();
    let new = repo.promptc(&["new", "component", "tips"]);
    assert_eq!(new.status.code(), Some(0), "{}", stderr(&new));
    repo.edit(
        "variants/xs.toml",
        "  \"agent_role\",\n",
        "  \"agent_role\",\n  \"tips\",\n",
    );
    let base = std::fs::read_to_string(repo.root.join("variants/xs.md")).unwrap();
    repo.write(
        "variants/xs.md",
        &format!("{base}\n{{{{ TIPS_SECTION }}}}\n"),
    );
    let new = repo.promptc(&["new", "tool", "lint"]);
    assert_eq!(new.status.code(), Some(0), "{}", stderr(&new));
    repo.edit(
        "variants/gpt.toml",
        "extends = \"generic\"\n",
        "extends = \"generic\"\nadd_tools = [\"lint\"]\n",
    );
    let json = diff_json(&repo);
    let sources = sources_by_path(&json);
    let strings = |value: &serde_json::Value| -> Vec<String> {
        value
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|item| item.as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let features = [
        (
            vec![
                "components/tips.md",
                "components/tips.toml",
                "variants/xs.md",
                "variants/xs.toml",
            ],
            "examples/prompts/xs/",
        ),
        (
            vec!["tools/lint.toml", "variants/gpt.toml"],
            "examples/prompts/gpt/",
        ),
    ];
    for (files, outputs) in features {
        for file in &files {
            let Some(source) = sources.get(file) else {
                continue;
            };
            let others: Vec<String> = files
                .iter()
                .filter(|other| *other != file && sources.contains_key(*other))
                .map(|other| other.to_string())
                .collect();
            assert_eq!(
                strings(&source["together_with"]),
                others,
                "{file}: {source}"
            );
            let affects = strings(&source["affects"]);
            assert!(!affects.is_empty(), "{file}: {source}");
            assert!(
                affects.iter().all(|path| path.starts_with(outputs)),
                "{file}: {source}"
            );
        }
    }
}

/// A template renamed (its file moved, the component naming the new one) beside an edit that
/// changes every prompt: the rename's files fail alone but change nothing together, and are
/// said to change nothing, together. Each was said to affect every output that read it.
#[test]
fn a_renamed_template_beside_another_change_is_said_to_change_nothing() {
    let repo = library_repo();
    repo.git(&["mv", "components/agent_role.md", "components/role.md"]);
    let toml = repo.root.join("components/agent_role.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, format!("{text}template_file = \"role.md\"\n")).unwrap();
    repo.edit(
        "components/capabilities.md",
        "CAPABILITIES",
        "CAPABILITIES (edited)",
    );
    let json = diff_json(&repo);
    let sources = sources_by_path(&json);
    let rename = [
        "components/agent_role.md",
        "components/agent_role.toml",
        "components/role.md",
    ];
    for path in rename {
        let source = sources[path];
        assert_eq!(source["affects"], serde_json::json!([]), "{path}: {source}");
        let others: Vec<&str> = rename.into_iter().filter(|other| *other != path).collect();
        assert_eq!(source["together_with"], serde_json::json!(others), "{path}");
    }
    let edited = sources["components/capabilities.md"];
    assert_eq!(
        edited["affects"].as_array().unwrap().len(),
        json["prompts"].as_array().unwrap().len()
    );
    let text = stdout(&repo.promptc(&["diff", "--base", "main", "--stat"]));
    assert!(
        text.contains("components/role.md (added), only together with components/agent_role.md, components/agent_role.toml: no compiled prompt changed"),
        "{text}"
    );
}

/// Past sixteen changed files, each file affects the changed outputs that read it: finding a
/// file's own effects compiles the whole workspace once more, and a change of a few hundred
/// files compiled it a few hundred times (and synced every file of every copy to the disk).
#[test]
fn past_sixteen_changed_files_each_affects_the_outputs_that_read_it() {
    let repo = library_repo();
    let new = repo.promptc(&["new", "tool", "web_probe"]);
    assert_eq!(new.status.code(), Some(0), "{}", stderr(&new));
    repo.edit(
        "variants/next-gen.toml",
        "add_tools = [\"web_fetch\"]",
        "add_tools = [\"web_fetch\", \"web_probe\"]",
    );
    for n in 0..15 {
        let spare = repo.promptc(&["new", "tool", &format!("spare_{n}")]);
        assert_eq!(spare.status.code(), Some(0), "{}", stderr(&spare));
    }
    // The manifest, which every output reads, affects every changed one.
    let manifest = std::fs::read_to_string(repo.root.join("promptc.toml")).unwrap();
    repo.write("promptc.toml", &format!("# reviewed\n{manifest}"));
    let json: serde_json::Value = serde_json::from_str(&stdout(
        &repo.promptc(&["diff", "--base", "main", "--format", "json"]),
    ))
    .unwrap();
    let sources = json["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 18, "{sources:?}");
    let changed: Vec<&str> = json["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert!(changed.contains(&"examples/prompts/next-gen/basic.md"));
    let affects = |path: &str| -> Vec<&str> {
        let source = sources.iter().find(|s| s["path"] == path).unwrap();
        // Never found together: that takes the compiles this leaves out.
        assert!(
            source["together_with"].as_array().is_none_or(Vec::is_empty),
            "{source}"
        );
        source["affects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect()
    };
    assert_eq!(affects("tools/web_probe.toml"), changed);
    assert_eq!(affects("variants/next-gen.toml"), changed);
    assert_eq!(affects("tools/spare_0.toml"), Vec::<&str>::new());
    assert_eq!(affects("promptc.toml"), changed);
    // Said, in every format: the report reads the same otherwise.
    assert_eq!(json["sources_by_readers"], true);
    let note = "more than 16 source files changed: each names the changed outputs that read it, not those its change alone alters";
    let text = stdout(&repo.promptc(&["diff", "--base", "main", "--stat"]));
    assert!(
        text.contains(&format!("source files changed:\n  ({note})\n")),
        "{text}"
    );
    let markdown = stdout(&repo.promptc(&["diff", "--base", "main", "--format", "markdown"]));
    assert!(
        markdown.contains("More than 16 source files changed: each names"),
        "{markdown}"
    );
}

// `diff` held both sides' whole matrices of prompt texts: 10 × 10 prompts of 5 MB, one
// context changed, took over a gigabyte (and was refused at the memory limit). Each side now
// keeps a digest per output, and only the outputs that differ are compiled again to be
// compared, a few at a time.
#[test]
fn diff_holds_the_texts_of_the_changed_outputs_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "promptc.toml",
        "name = \"large\"\nfallback_family = \"f0\"\ndefault_context = \"c0\"\n\n[paths]\ncontexts = \"contexts\"\n\n[tokens]\nmax_prompt_tokens = 100000000\n",
    );
    // Each prompt is 5 MB: the context's value, then (past a diff's context lines) one long
    // line.
    write(
        "variants/f0.toml",
        "id = \"f0\"\ntemplate = \"{{ extra.v }}\\none\\ntwo\\nthree\\nfour\\n{{ ('word ab ' * 625000) ~ family }}\\n\"\n",
    );
    for n in 1..10 {
        write(
            &format!("variants/f{n}.toml"),
            &format!("id = \"f{n}\"\nextends = \"f0\"\n"),
        );
    }
    let context =
        |n: usize, value: &str| format!("date = \"2026-01-01\"\n\n[extra]\nv = \"{value} {n}\"\n");
    for n in 0..10 {
        write(&format!("contexts/c{n}.toml"), &context(n, "before"));
    }
    let repo = Repo { _dir: dir, root };
    repo.git(&["init", "-q", "-b", "main"]);
    repo.commit("initial");
    repo.write("contexts/c3.toml", &context(3, "after"));

    let output = common::promptc()
        .current_dir(&repo.root)
        .env("PROMPTC_MEMORY_LIMIT", "256M")
        .args(["diff", "--base", "main", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let prompts = json["prompts"].as_array().unwrap();
    let paths: Vec<&str> = prompts
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (0..10)
        .map(|n| format!("examples/prompts/f{n}/c3.md"))
        .collect();
    assert_eq!(paths, expected);
    for prompt in prompts {
        let diff = prompt["diff"].as_str().unwrap();
        assert!(
            diff.contains("@@ -1,4 +1,4 @@\n-before 3\n+after 3\n one\n two\n three\n"),
            "{}",
            &diff[diff.len().saturating_sub(200)..]
        );
        let characters = &prompt["characters"];
        let (old, new) = (characters[0].as_u64(), characters[1].as_u64());
        assert_eq!(
            old,
            new.map(|n| n + 1),
            "`before` is `after` and one character"
        );
        assert!(new.unwrap() > 5_000_000, "{new:?}");
    }
    let sources = json["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1, "{sources:?}");
    assert_eq!(sources[0]["path"], "contexts/c3.toml");
    assert_eq!(sources[0]["affects"].as_array().unwrap().len(), 10);
}

// A workspace in a folder of its repository was never found at a revision: git read
// `<commit>:<folder>^{tree}` as the path `<folder>^{tree}`, and `diff` said "revision `main`
// has no workspace at ws".
#[test]
fn diff_finds_a_workspace_in_a_folder_of_its_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    copy_dir(&fixture_dir("expressive"), &root.join("ws"));
    let repo = Repo { _dir: dir, root };
    repo.git(&["init", "-q", "-b", "main"]);
    repo.commit("initial");
    repo.edit(
        &format!("ws/{MODE_LINE}"),
        "after the user approves each one",
        "once the user says yes",
    );
    let diffed = common::promptc()
        .current_dir(repo.root.join("ws"))
        .args(["diff", "--base", "main", "--stat"])
        .output()
        .unwrap();
    assert_eq!(diffed.status.code(), Some(0), "{}", stderr(&diffed));
    let out = stdout(&diffed);
    assert!(
        out.contains("base × full (modified): -10 characters, -1 tokens"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{MODE_LINE} (modified): examples/prompts/base/full.md"
        )),
        "{out}"
    );
}

// A workspace whose folder's name holds a line break: git's answers about it, a line each,
// were cut at the break, and the base compiled was a sibling folder named like the first
// line, outside the workspace. Each question is asked alone now: the base is this folder's.
#[cfg(unix)]
#[test]
fn diff_compiles_the_base_of_a_folder_whose_name_holds_a_line_break() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    copy_dir(&fixture_dir("expressive"), &root.join("ws\nx"));
    // A decoy where the name's first line leads.
    copy_dir(&fixture_dir("expressive"), &root.join("ws"));
    let decoy = root.join(format!("ws/{MODE_LINE}"));
    let text = std::fs::read_to_string(&decoy).unwrap();
    std::fs::write(&decoy, format!("DECOY {text}")).unwrap();
    let repo = Repo { _dir: dir, root };
    repo.git(&["init", "-q", "-b", "main"]);
    repo.commit("initial");
    let diffed = common::promptc()
        .current_dir(repo.root.join("ws\nx"))
        .args(["diff", "--base", "main", "--stat"])
        .output()
        .unwrap();
    assert_eq!(diffed.status.code(), Some(0), "{}", stderr(&diffed));
    let out = stdout(&diffed);
    assert!(out.contains("no compiled prompt differs"), "{out}");
    assert!(!out.contains("DECOY"), "{out}");
}

// The base has no workspace where a folder whose name holds a line break and a CI workflow
// command stands now: the error quoted the name as it is, and the command stood on a line
// of its own in the log.
#[cfg(unix)]
#[test]
fn a_base_without_the_workspace_quotes_the_folder_s_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    let repo = Repo { _dir: dir, root };
    repo.git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.root.join("README"), "empty\n").unwrap();
    repo.commit("initial");
    let name = "w\n::error title=pwned::x";
    copy_dir(&fixture_dir("expressive"), &repo.root.join(name));
    repo.commit("workspace");
    let diffed = common::promptc()
        .current_dir(repo.root.join(name))
        .args(["diff", "--base", "HEAD~1"])
        .output()
        .unwrap();
    let out = format!("{}{}", stdout(&diffed), stderr(&diffed));
    assert!(
        out.contains("has no workspace at \"w\\n::error title=pwned::x\""),
        "{out}"
    );
    assert!(
        !out.lines().any(|line| line.starts_with("::error")),
        "{out}"
    );
}

/// A family released at 1.0.0 (its `stable` label) and a version 2 under review beside it,
/// as the README's `[[build.entries]]` shows: both compile for the `basic` context.
fn review_repo() -> common::Workspace {
    let workspace = common::Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}[build]\nfamilies = [\"generic\"]\nout = \"out\"\n\n\
                 [[build.entries]]\nvariant = \"generic@2\"\ncontext = \"basic\"\n\
                 output = \"generic-review/basic.md\"\n\n[routing]\nlabel = \"stable\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/generic.toml",
            format!(
                "{}version = \"1.0.0\"\nlabels = {{ stable = \"1.0.0\" }}\n\n\
                 [placeholders]\nAGENT = \"Atlas\"\n",
                common::VARIANT
            ),
        )
        .file(
            "variants/generic.md",
            format!("{{{{ AGENT }}}} here.\n{}", common::BASE_TEMPLATE),
        )
        .file(
            "variants/generic-2.toml",
            "id = \"generic-2\"\nfamily = \"generic\"\nextends = \"generic\"\nversion = \"2.0.0\"\n",
        )
        .write();
    common::git(workspace.root(), &["init", "-q", "-b", "main"]);
    let built = workspace.run(&["build", "--all"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    common::git(workspace.root(), &["add", "-A"]);
    common::git(workspace.root(), &["commit", "-q", "-m", "initial"]);
    workspace
}

/// An output of a version under review is named as that version, not as the released
/// family it belongs to; and a file is said to change only outputs whose bytes changed: a
/// variant whose change its child undoes for itself changes its own output only.
#[test]
fn diff_names_a_version_under_review_and_only_outputs_that_changed() {
    let workspace = review_repo();
    let root = workspace.root();
    let edit = |path: &str, from: &str, to: &str| {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        assert!(text.contains(from), "{path} has no `{from}`");
        std::fs::write(root.join(path), text.replace(from, to)).unwrap();
    };
    // The review version says something of its own.
    edit(
        "variants/generic-2.toml",
        "version = \"2.0.0\"\n",
        "version = \"2.0.0\"\n\n[placeholders]\nAGENT = \"Nova\"\n",
    );
    let run = workspace.run(&["diff", "--base", "main", "--stat"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("generic@2 × basic (modified): "),
        "{}",
        run.stdout
    );
    let json = workspace.run(&["diff", "--base", "main", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["prompts"][0]["family"], "generic");
    assert_eq!(report["prompts"][0]["variant"], "generic@2");
    // In one change, the released family renames its agent and the review version keeps the
    // old name for itself: the review output's bytes do not change, though the parent's
    // change alone would change them.
    let workspace = review_repo();
    let root = workspace.root();
    let edit = |path: &str, from: &str, to: &str| {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        assert!(text.contains(from), "{path} has no `{from}`");
        std::fs::write(root.join(path), text.replace(from, to)).unwrap();
    };
    edit(
        "variants/generic.toml",
        "AGENT = \"Atlas\"",
        "AGENT = \"Orion\"",
    );
    edit(
        "variants/generic-2.toml",
        "version = \"2.0.0\"\n",
        "version = \"2.0.0\"\n\n[placeholders]\nAGENT = \"Atlas\"\n",
    );
    let run = workspace.run(&["diff", "--base", "main", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let changed: Vec<&str> = report["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(changed, ["out/generic/basic.md"]);
    let affects: Vec<(&str, &serde_json::Value)> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap(), &s["affects"]))
        .collect();
    assert_eq!(
        affects,
        [
            ("variants/generic-2.toml", &serde_json::json!([])),
            (
                "variants/generic.toml",
                &serde_json::json!(["out/generic/basic.md"])
            ),
        ]
    );
}

/// A side whose outputs compile over their token budget fails, as `build --all` and `check`
/// would, and is still compared: the comment shows the change and why the job is red.
#[test]
fn a_head_over_its_budget_is_compared_and_fails() {
    let repo = library_repo();
    let rules = "variants/xs/rules.md";
    let original = std::fs::read_to_string(repo.root.join(rules)).unwrap();
    let long = "Always check every file path twice before you write. ".repeat(80);
    repo.write(rules, &format!("{original}{long}\n"));
    let run = repo.promptc(&["diff", "--base", "main", "--format", "json"]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let failures = json["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{json}");
    assert_eq!(failures[0]["side"], "head");
    assert_eq!(failures[0]["compiled"], true);
    assert_eq!(failures[0]["diagnostics"][0]["code"], "over-budget");
    let changed: Vec<&str> = json["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["path"].as_str())
        .collect();
    assert!(
        changed.contains(&"examples/prompts/xs/with-rules.md"),
        "{changed:?}"
    );
    let text = stdout(&repo.promptc(&["diff", "--base", "main", "--stat"]));
    assert!(
        text.starts_with(
            "error: the head side (working tree) compiles, and fails as `build --all` and `check` would (its outputs are compared below):\nerror[over-budget]: xs is over its budget"
        ),
        "{text}"
    );
    // Within the budget again, nothing fails.
    repo.write(rules, &original);
    let run = repo.promptc(&["diff", "--base", "main", "--exit-code"]);
    assert_eq!(run.status.code(), Some(0), "{}", stdout(&run));
}

/// A full commit hash the repository does not hold is an unknown revision, with how to fetch
/// more of a shallow clone's history: the base of a pull request in CI's shallow checkout was
/// said to name a file or a folder. An empty revision is a usage error.
#[test]
fn a_hash_the_repository_lacks_is_an_unknown_revision() {
    let repo = Repo::new();
    let missing = "0123456789abcdef0123456789abcdef01234567";
    let out = stdout(&repo.promptc(&["diff", "--base", missing]));
    assert!(
        out.contains(&format!("unknown revision `{missing}`")),
        "{out}"
    );
    // A shallow clone of one commit: the one before it is not there.
    repo.edit(MODE_LINE, "Run commands", "Run the commands");
    repo.commit("second");
    let parent = repo.git(&["rev-parse", "HEAD~1"]).trim().to_string();
    let shallow = repo.root.parent().unwrap().join("shallow");
    let url = format!("file://{}", repo.root.display());
    common::git(
        repo.root.parent().unwrap(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    let run = common::promptc()
        .current_dir(&shallow)
        .args(["diff", "--base", &parent])
        .output()
        .unwrap();
    let out = stdout(&run);
    assert_eq!(run.status.code(), Some(1), "{out}");
    assert!(
        out.contains(&format!(
            "unknown revision `{parent}`: the repository is a shallow clone"
        )),
        "{out}"
    );
    let empty = repo.promptc(&["diff", "--base", ""]);
    assert_eq!(empty.status.code(), Some(2), "{}", stderr(&empty));
    // What names no one object (a commit excluded, a range) is no revision to compare with.
    for spec in ["^HEAD", "HEAD~1..HEAD"] {
        let out = stdout(&repo.promptc(&["diff", "--base", spec]));
        assert!(out.contains(&format!("unknown revision `{spec}`")), "{out}");
    }
}
