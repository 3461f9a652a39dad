//! The GitHub Actions recipe in `examples/ci/promptc.yml`, run offline: each step's script in
//! a git repository holding the shipped library, with the built `promptc` on the `PATH` and a
//! stand-in for `gh` that records what it was asked and answers as GitHub would (a comment
//! already posted, none yet, or a fork's read-only token).

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::git;

const RECIPE: &str = include_str!("../examples/ci/promptc.yml");

/// The recipe's steps, by name, with their `run` script and `env`.
struct Step {
    name: String,
    run: Option<String>,
    env: Vec<(String, String)>,
}

fn steps() -> Vec<Step> {
    let recipe: serde_json::Value = serde_saphyr::from_str(RECIPE).unwrap();
    recipe["jobs"]["prompts"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| Step {
            name: step["name"].as_str().unwrap_or_default().to_string(),
            run: step["run"].as_str().map(str::to_string),
            env: step["env"]
                .as_object()
                .map(|env| {
                    env.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

fn step(name: &str) -> Step {
    steps()
        .into_iter()
        .find(|step| step.name == name)
        .unwrap_or_else(|| panic!("the recipe has no step `{name}`"))
}

/// A stand-in for the GitHub CLI: logs its arguments (and a posted body) to `gh.log`; its
/// mode decides the answers.
const FAKE_GH: &str = r#"#!/usr/bin/env bash
log="$FAKE_GH_DIR/gh.log"
echo "gh $*" >> "$log"
for arg in "$@"; do
  case "$arg" in
    body=@*) cp "${arg#body=@}" "$FAKE_GH_DIR/posted.md" ;;
  esac
done
previous=""
for arg in "$@"; do
  if [ "$previous" = --body-file ]; then cp "$arg" "$FAKE_GH_DIR/posted.md"; fi
  previous="$arg"
done
case "$FAKE_GH_MODE" in
  existing) if [ "$1" = api ] && [ "$2" = "repos/acme/agent/issues/7/comments" ]; then echo 4242; fi ;;
  fresh) ;;
  fork) if [ "$1" = pr ] || [ "$2" = --method ]; then echo "HTTP 403: Resource not accessible by integration" >&2; exit 1; fi ;;
esac
exit 0
"#;

struct Job {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    bin: PathBuf,
}

impl Job {
    /// The shipped library in a repository whose `origin/main` is its first commit, with an
    /// edit in the working tree, as a pull request's checkout has.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let init = common::promptc()
            .current_dir(&repo)
            .args(["init", "-q"])
            .output()
            .unwrap();
        assert!(init.status.success(), "{}", common::stderr(&init));
        git(&repo, &["init", "-q", "-b", "main"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "library"]);
        git(&repo, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let gh = bin.join("gh");
        std::fs::write(&gh, FAKE_GH).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
        Job {
            _dir: dir,
            repo,
            bin,
        }
    }

    fn edit(&self, path: &str, text: &str) {
        let file = self.repo.join(path);
        let old = std::fs::read_to_string(&file).unwrap();
        std::fs::write(file, format!("{old}{text}")).unwrap();
    }

    fn summary(&self) -> PathBuf {
        self.bin.parent().unwrap().join("summary.md")
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.bin.parent().unwrap().join(name)).unwrap_or_default()
    }

    /// Runs a step's script with bash (`-e`, as Actions does), its `env` with GitHub's
    /// expressions filled in for pull request 7 of acme/agent.
    fn run(&self, name: &str, gh_mode: &str) -> std::process::Output {
        let step = step(name);
        let script = step.run.unwrap();
        let promptc = PathBuf::from(env!("CARGO_BIN_EXE_promptc"));
        let path = format!(
            "{}:{}:{}",
            self.bin.display(),
            promptc.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new("bash");
        common::isolated_git(&mut command)
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
            .current_dir(&self.repo)
            .env("PATH", path)
            .env("NO_COLOR", "1")
            .env("PROMPTC_NO_CACHE", "1")
            .env_remove("SOURCE_DATE_EPOCH")
            .env("GITHUB_STEP_SUMMARY", self.summary())
            .env("FAKE_GH_DIR", self.bin.parent().unwrap())
            .env("FAKE_GH_MODE", gh_mode);
        for (key, value) in step.env {
            command.env(key, github_expression(&value));
        }
        command.output().unwrap()
    }
}

/// The values GitHub gives the recipe's expressions in a pull request's run.
fn github_expression(value: &str) -> String {
    value
        .replace("${{ github.base_ref }}", "main")
        .replace("${{ github.token }}", "token")
        .replace("${{ github.event.pull_request.number }}", "7")
        .replace("${{ github.repository }}", "acme/agent")
        .replace("${{ github.server_url }}", "https://github.com")
        .replace("${{ github.run_id }}", "99")
}

fn exists(path: &Path) -> bool {
    path.is_file()
}

#[test]
fn scripts_take_event_values_from_env_only() {
    // `${{ … }}` spliced into a script would run a branch name as shell code.
    for step in steps() {
        if let Some(run) = &step.run {
            assert!(
                !run.contains("${{"),
                "step `{}` splices an expression",
                step.name
            );
        }
    }
    // Every expression the steps' env uses is one this test knows how to fill.
    for step in steps() {
        for (key, value) in &step.env {
            assert!(
                !github_expression(value).contains("${{"),
                "{}: {key} = {value}",
                step.name
            );
        }
    }
}

#[test]
fn validate_annotates_the_lines_and_fails_the_job() {
    let job = Job::new();
    let clean = job.run("Validate", "fresh");
    assert!(clean.status.success(), "{}", common::stderr(&clean));
    std::fs::write(
        job.repo.join("variants/xs.toml"),
        std::fs::read_to_string(job.repo.join("variants/xs.toml"))
            .unwrap()
            .replacen("tools = [", "tools = [\"no_such_tool\", ", 1),
    )
    .unwrap();
    let broken = job.run("Validate", "fresh");
    assert_eq!(broken.status.code(), Some(1));
    let out = common::stdout(&broken);
    assert!(out.contains("::error file=variants/xs.toml,line="), "{out}");
    assert!(out.contains("title=promptc unknown-reference::"), "{out}");
    // The stale-output check fails too once a source changed without `build --all`.
    job.edit("components/agent_role.md", "\nKeep answers brief.\n");
    let stale = job.run("Committed prompts are current", "fresh");
    assert_eq!(stale.status.code(), Some(1));
}

#[test]
fn the_diff_is_posted_once_then_updated_and_shown_in_the_summary_on_a_fork() {
    let job = Job::new();
    job.edit("components/agent_role.md", "\nKeep answers brief.\n");
    let diff = job.run("Prompt diff", "fresh");
    assert!(diff.status.success(), "{}", common::stderr(&diff));
    let markdown = std::fs::read_to_string(job.repo.join("prompt-diff.md")).unwrap();
    assert!(markdown.contains("outputs changed, in"), "{markdown}");
    let text = std::fs::read_to_string(job.repo.join("prompt-diff.txt")).unwrap();
    assert!(
        text.contains("components/agent_role.md (modified)"),
        "{text}"
    );

    // No comment of ours yet: a new one, starting with the marker.
    let fresh = job.run("Comment on the pull request", "fresh");
    assert!(fresh.status.success(), "{}", common::stderr(&fresh));
    let log = job.read("gh.log");
    assert!(
        log.contains("gh pr comment 7 --repo acme/agent --body-file comment.md"),
        "{log}"
    );
    let posted = job.read("posted.md");
    assert!(
        posted.starts_with("<!-- promptc diff -->\n### Compiled prompt changes"),
        "{posted}"
    );
    assert!(posted.contains("[this run](https://github.com/acme/agent/actions/runs/99)"));
    assert!(posted.chars().count() < 65_536);
    assert!(!exists(&job.summary()));

    // Our comment found by its marker: updated in place, no second comment.
    std::fs::remove_file(job.bin.parent().unwrap().join("gh.log")).unwrap();
    let again = job.run("Comment on the pull request", "existing");
    assert!(again.status.success(), "{}", common::stderr(&again));
    let log = job.read("gh.log");
    assert!(
        log.contains(
            "gh api --method PATCH repos/acme/agent/issues/comments/4242 -F body=@comment.md"
        ),
        "{log}"
    );
    assert!(!log.contains("gh pr comment"), "{log}");

    // A fork's token cannot comment: the job summary gets the diff, and the step passes.
    std::fs::remove_file(job.bin.parent().unwrap().join("gh.log")).unwrap();
    let fork = job.run("Comment on the pull request", "fork");
    assert!(fork.status.success(), "{}", common::stderr(&fork));
    assert!(
        common::stdout(&fork).contains("::notice::cannot comment"),
        "{}{}",
        common::stdout(&fork),
        common::stderr(&fork)
    );
    let summary = std::fs::read_to_string(job.summary()).unwrap();
    assert!(summary.contains("### Compiled prompt changes"), "{summary}");
}

#[test]
fn the_install_step_is_skipped_when_the_cache_holds_the_binary() {
    let recipe: serde_json::Value = serde_saphyr::from_str(RECIPE).unwrap();
    let steps = recipe["jobs"]["prompts"]["steps"].as_array().unwrap();
    let cache = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/cache@"))
        })
        .expect("a cache step");
    let paths = cache["with"]["path"].as_str().unwrap();
    assert!(paths.contains("~/.cargo/bin/promptc"), "{paths}");
    assert!(paths.contains("~/.cargo/registry"), "{paths}");
    // The key names the version installed, so a new version is installed, not restored.
    assert!(
        cache["with"]["key"]
            .as_str()
            .unwrap()
            .contains("PROMPTC_VERSION")
    );
    let install = steps
        .iter()
        .find(|s| s["name"] == "Install promptc")
        .unwrap();
    assert_eq!(
        install["if"],
        format!(
            "steps.{}.outputs.cache-hit != 'true'",
            cache["id"].as_str().unwrap()
        )
    );
    assert!(
        install["run"]
            .as_str()
            .unwrap()
            .contains("cargo install --locked promptc-cli")
    );
    // The version the recipe pins is this package's.
    assert_eq!(recipe["env"]["PROMPTC_VERSION"], env!("CARGO_PKG_VERSION"));
}
