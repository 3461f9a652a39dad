//! Workspaces built in a temporary folder from (path, contents) pairs, and the `promptc` binary
//! run against them; the checked-in workspaces (the repository root, `tests/fixtures/`) and
//! the helpers the test files share to load, compile and run them.
//!
//! ```ignore
//! let report = Fixture::minimal()
//!     .file("components/intro.toml", "id = \"intro\"\nbogus = 1\n")
//!     .validate();
//! assert_eq!(report.diagnostics()[0].line, 2);
//! ```
//!
//! The workspace root is `<tmp>/ws`, so a path starting with `../` writes a file just outside
//! the workspace (to check that templates cannot reach it).

// Test support: each test crate uses a part of it, and a failed unwrap here is a failed test.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

/// The manifest of [`Fixture::minimal`].
pub const MANIFEST: &str = "\
name = \"fixture\"
fallback_family = \"generic\"
";

/// The one variant of [`Fixture::minimal`]: family `generic`, one component, one tool.
pub const VARIANT: &str = "\
id = \"generic\"
template_file = \"generic.md\"
components = [\"intro\"]
tools = [\"read_file\"]
";

/// The variant's base template: the tool list, then the `intro` slot. The working directory
/// and date (values that change per request) come last, so the prompt-cache warning stays
/// quiet.
pub const BASE_TEMPLATE: &str = "\
You are a careful agent.

{{ TOOLS }}

{{ INTRO_SECTION }}
";

pub const COMPONENT: &str = "\
id = \"intro\"
description = \"Where the agent works.\"
";

/// The component's template, `components/intro.md` beside `components/intro.toml`.
pub const COMPONENT_TEMPLATE: &str = "\
You work in {{ cwd }} on {{ CURRENT_DATE }}.
";

pub const TOOL: &str = "\
id = \"read_file\"
description = \"Read a file.\"

[[parameters]]
name = \"path\"
required = true
instruction = \"The file to read, relative to the working directory.\"
";

pub const CONTEXT: &str = "\
date = \"2026-11-01\"
";

/// The repository root: the shipped library's workspace.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace checked in as `tests/fixtures/NAME`.
pub fn fixture_dir(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(name)
}

/// Loads the workspace at `dir`, which must have no problems at all.
pub fn load(dir: &Path) -> promptc::Workspace {
    let loaded = promptc::load_workspace(dir).unwrap();
    let problems: Vec<String> = loaded
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.problem.code(), d.problem))
        .collect();
    assert!(
        problems.is_empty(),
        "{} has problems: {problems:#?}",
        dir.display()
    );
    loaded.workspace
}

/// Compiles `family` for the workspace's context `context`.
pub fn compile(workspace: &promptc::Workspace, family: &str, context: &str) -> promptc::Compiled {
    let values = workspace.context(context).unwrap().clone();
    let request = promptc::Request::new(promptc::Selection::family(family), values);
    match promptc::Compiler::new(workspace).compile(&request) {
        Ok(compiled) => compiled,
        Err(error) => panic!("{family}/{context} failed: {error:?}"),
    }
}

/// `promptc` as a plain process, for a test that spawns it or bounds its time: its git kept
/// to what the test makes ([`isolated_git`]), and no token-count cache, so that each test
/// counts afresh and the user's cache is left alone.
pub fn promptc_process() -> std::process::Command {
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("promptc"));
    isolated_git(&mut command).env("PROMPTC_NO_CACHE", "1");
    command
}

/// [`promptc_process`] without colour and without `SOURCE_DATE_EPOCH`, from wherever the
/// test runs.
pub fn promptc() -> Command {
    let mut command = Command::from_std(promptc_process());
    command.env_remove("SOURCE_DATE_EPOCH").env("NO_COLOR", "1");
    command
}

/// The stdout of a finished command, which must be UTF-8.
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The stderr of a finished command, which must be UTF-8.
pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Keeps a command's git (and promptc's, which runs git for `diff`) to the repository and
/// settings a test makes: no user or system configuration (a global `core.autocrlf`,
/// `commit.gpgsign` or hooks path would change what a test sees), no repository named by the
/// environment `cargo test` runs in (a git hook sets `GIT_DIR`), and git's messages in English.
pub fn isolated_git(command: &mut std::process::Command) -> &mut std::process::Command {
    command
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .env_remove("LANGUAGE")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
}

/// `git -C DIR ARGS` with a fixed author, which must succeed; its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = isolated_git(&mut std::process::Command::new("git"))
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// A workspace to be written to a temporary folder: workspace-relative paths and contents.
#[derive(Clone, Debug, Default)]
pub struct Fixture {
    files: BTreeMap<String, Vec<u8>>,
}

impl Fixture {
    /// A workspace with no files at all (not even `promptc.toml`).
    pub fn empty() -> Self {
        Self::default()
    }

    /// The smallest valid workspace: `promptc.toml`, the variant `generic` (base template
    /// `variants/generic.md` using the `intro` slot), the component `intro` (template
    /// `components/intro.md`), the tool `read_file`, and the context `basic` with a date.
    pub fn minimal() -> Self {
        Self::empty()
            .file("promptc.toml", MANIFEST)
            .file("variants/generic.toml", VARIANT)
            .file("variants/generic.md", BASE_TEMPLATE)
            .file("components/intro.toml", COMPONENT)
            .file("components/intro.md", COMPONENT_TEMPLATE)
            .file("tools/read_file.toml", TOOL)
            .file("examples/contexts/basic.toml", CONTEXT)
    }

    /// Every file under `dir` (a workspace checked in under `tests/fixtures/`), by its path
    /// relative to `dir`.
    pub fn from_dir(dir: &Path) -> Self {
        let mut fixture = Self::empty();
        for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let path = entry.path().strip_prefix(dir).unwrap();
                let path = path.to_str().unwrap().replace('\\', "/");
                fixture = fixture.file(&path, std::fs::read(entry.path()).unwrap());
            }
        }
        fixture
    }

    /// Adds a file, or replaces one of the same path. Contents may be text or raw bytes.
    #[must_use]
    pub fn file(mut self, path: &str, contents: impl AsRef<[u8]>) -> Self {
        self.files
            .insert(path.to_string(), contents.as_ref().to_vec());
        self
    }

    /// Leaves a file out.
    #[must_use]
    pub fn remove(mut self, path: &str) -> Self {
        assert!(
            self.files.remove(path).is_some(),
            "the fixture has no file {path}"
        );
        self
    }

    /// Every file, by workspace-relative path, in path order.
    pub fn files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files
            .iter()
            .map(|(path, contents)| (path.as_str(), contents.as_slice()))
    }

    /// The text of a file of the fixture, to compute expected positions from.
    pub fn text(&self, path: &str) -> &str {
        let bytes = self
            .files
            .get(path)
            .unwrap_or_else(|| panic!("the fixture has no file {path}"));
        std::str::from_utf8(bytes).unwrap()
    }

    /// Writes the files into a new temporary folder.
    pub fn write(&self) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        for (path, contents) in &self.files {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, contents).unwrap();
        }
        Workspace { dir, root }
    }

    /// `promptc validate --format json DIR` on a fresh copy of the workspace.
    pub fn validate(&self) -> Validation {
        self.write().validate()
    }
}

/// A fixture written to disk; the folder is deleted when this is dropped.
pub struct Workspace {
    dir: TempDir,
    root: PathBuf,
}

impl Workspace {
    /// The workspace root (the folder holding `promptc.toml`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where this workspace's commands keep their token counts: outside the workspace.
    pub fn cache_dir(&self) -> PathBuf {
        self.dir.path().join("promptc-cache")
    }

    /// The temporary folder around the workspace root.
    pub fn tmp(&self) -> &Path {
        self.dir.path()
    }

    /// `promptc` with the given arguments, run from the workspace root, with a clean
    /// environment for the things promptc reads (colour, dates), and a token-count cache of
    /// its own beside the workspace.
    pub fn command(&self) -> Command {
        let mut command = Command::from_std(promptc_process());
        command
            .current_dir(&self.root)
            .env("PROMPTC_CACHE_DIR", self.cache_dir())
            .env_remove("PROMPTC_NO_CACHE")
            .env_remove("SOURCE_DATE_EPOCH")
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE");
        command
    }

    /// Runs `promptc ARGS` within a memory limit (`PROMPTC_MEMORY_LIMIT`), checks that it
    /// succeeded, and gives its standard output.
    pub fn succeeds_within_memory(&self, limit: &str, args: &[&str]) -> String {
        let output = self
            .command()
            .env("PROMPTC_MEMORY_LIMIT", limit)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Runs `promptc ARGS` and checks that it did not panic or crash.
    pub fn run(&self, args: &[&str]) -> Run {
        let output = self.command().args(args).output().unwrap();
        Run::checked(output)
    }

    /// `promptc validate --format json -C DIR`, parsed.
    pub fn validate(&self) -> Validation {
        let root = self.root.to_str().unwrap();
        let run = self.run(&["validate", "--format", "json", "-C", root]);
        let json: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|error| {
            panic!(
                "validate did not print JSON ({error}):\nstdout:\n{}\nstderr:\n{}",
                run.stdout, run.stderr
            )
        });
        Validation::new(json, run)
    }

    /// `promptc --color never validate -C DIR`: the human-readable report, on stderr.
    pub fn validate_human(&self) -> Run {
        let root = self.root.to_str().unwrap();
        self.run(&["--color", "never", "validate", "-C", root])
    }
}

/// One finished run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Checks the things every run must satisfy: it exited (no signal), with one of the
    /// documented codes (0 ok, 1 problems, 2 usage), and did not panic.
    pub fn checked(output: Output) -> Self {
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let code = output.status.code().unwrap_or_else(|| {
            panic!("promptc was killed by a signal:\nstdout:\n{stdout}\nstderr:\n{stderr}")
        });
        assert!(
            !stderr.contains("panicked"),
            "promptc panicked (exit code {code}):\n{stderr}"
        );
        assert!(
            matches!(code, 0..=2),
            "unexpected exit code {code}:\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        Self {
            code,
            stdout,
            stderr,
        }
    }
}

/// One diagnostic of the JSON report, reduced to what the tests compare: where, what, how bad.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    pub severity: String,
    pub code: String,
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub message: String,
}

impl Diag {
    pub fn error(code: &str, file: &str, line: u64, column: u64, message: &str) -> Self {
        Self::new("error", code, file, (line, column), message)
    }

    pub fn warning(code: &str, file: &str, line: u64, column: u64, message: &str) -> Self {
        Self::new("warning", code, file, (line, column), message)
    }

    fn new(
        severity: &str,
        code: &str,
        file: &str,
        (line, column): (u64, u64),
        message: &str,
    ) -> Self {
        Self {
            severity: severity.into(),
            code: code.into(),
            file: file.into(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// The parsed output of `promptc validate --format json`, with its exit code.
#[derive(Debug)]
pub struct Validation {
    pub json: Value,
    pub code: i32,
    pub stderr: String,
}

impl Validation {
    fn new(json: Value, run: Run) -> Self {
        let validation = Self {
            json,
            code: run.code,
            stderr: run.stderr,
        };
        // The counts agree with the list (a `more-problems` record stands for those it counts),
        // and the exit code with the counts.
        let (errors, warnings) = validation.counts();
        let items = validation.items();
        let count = |severity: &str, plural: &str| {
            items
                .iter()
                .map(|d| match d.get("not_shown") {
                    Some(not_shown) => not_shown[plural].as_u64().unwrap_or(0),
                    None => u64::from(d["severity"] == severity),
                })
                .sum::<u64>()
        };
        assert_eq!(errors, count("error", "errors"), "{:#}", validation.json);
        assert_eq!(
            warnings,
            count("warning", "warnings"),
            "{:#}",
            validation.json
        );
        let expected_code = if errors > 0 { 1 } else { 0 };
        assert_eq!(
            validation.code, expected_code,
            "exit code does not match {errors} error(s); stderr:\n{}",
            validation.stderr
        );
        validation
    }

    /// The raw JSON diagnostics.
    pub fn items(&self) -> &[Value] {
        self.json["diagnostics"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_else(|| panic!("no `diagnostics` array in {:#}", self.json))
    }

    /// Every diagnostic, in the order printed.
    pub fn diagnostics(&self) -> Vec<Diag> {
        self.items()
            .iter()
            .map(|d| Diag {
                severity: str_field(d, "severity"),
                code: str_field(d, "code"),
                file: str_field(d, "file"),
                line: d["line"].as_u64().unwrap(),
                column: d["column"].as_u64().unwrap(),
                message: str_field(d, "message"),
            })
            .collect()
    }

    /// The one diagnostic of the run; fails when there are none or several.
    pub fn single(&self) -> Diag {
        let all = self.diagnostics();
        assert_eq!(all.len(), 1, "expected exactly one diagnostic: {all:#?}");
        all.into_iter().next().unwrap()
    }

    /// The `help` of the `index`th diagnostic, if it has one.
    pub fn help(&self, index: usize) -> Option<&str> {
        self.items()[index]["help"].as_str()
    }

    /// The raw JSON of the `index`th diagnostic (labels, notes, end positions).
    pub fn item(&self, index: usize) -> &Value {
        &self.items()[index]
    }

    /// `(errors, warnings)` as counted by promptc.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.json["errors"].as_u64().unwrap(),
            self.json["warnings"].as_u64().unwrap(),
        )
    }

    pub fn codes(&self) -> Vec<String> {
        self.diagnostics().into_iter().map(|d| d.code).collect()
    }
}

fn str_field(diagnostic: &Value, field: &str) -> String {
    diagnostic[field]
        .as_str()
        .unwrap_or_else(|| panic!("no string `{field}` in {diagnostic:#}"))
        .to_string()
}

/// 1-based (line, column in characters) of the first occurrence of `needle` in `text`, for
/// cross-checking hand-computed positions against the fixture text.
pub fn position_of(text: &str, needle: &str) -> (u64, u64) {
    let offset = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` is not in the text"));
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    (line as u64, column as u64)
}

/// Runs `command` (its stderr piped) and waits for it at most `limit`: a command that does not
/// end in time is killed and the test fails with `what`. Returns the status and stderr.
pub fn run_within(
    command: &mut std::process::Command,
    limit: std::time::Duration,
    what: &str,
) -> (std::process::ExitStatus, String) {
    let mut child = command
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read as it comes: a command that writes more than a pipe holds would wait for it.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut pipe, &mut stderr).unwrap();
        stderr
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("{what}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    (status, reader.join().unwrap())
}

/// `len` characters drawn from `alphabet` by a fixed-seed xorshift: text in no order a pattern
/// would know, the same on every run.
pub fn irregular_text(len: usize, alphabet: &[char]) -> String {
    let mut seed = 1u32;
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            alphabet[seed as usize % alphabet.len()]
        })
        .collect()
}

/// Makes a named pipe (FIFO) at `path`: a file promptc must refuse rather than block on.
#[cfg(unix)]
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}
