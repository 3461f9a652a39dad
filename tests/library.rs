//! The shipped default library: valid, every family builds for every context, the committed
//! outputs are current, it stays within its token budgets, and `promptc init` reproduces it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use promptc::Encoding;

use common::{compile, load, promptc, repo_root, stderr, stdout};

const FAMILIES: [&str; 6] = [
    "generic",
    "next-gen",
    "native-next-gen",
    "xs",
    "gpt",
    "gemini",
];
const CONTEXTS: [&str; 8] = [
    "basic",
    "no-browser",
    "no-mcp",
    "plan-mode",
    "yolo",
    "with-rules",
    "small-context",
    "native-tools",
];

#[test]
fn the_library_validates_without_warnings_and_has_its_families_and_contexts() {
    let workspace = load(&repo_root());
    assert_eq!(workspace.families().len(), FAMILIES.len());
    for family in FAMILIES {
        assert!(workspace.families().iter().any(|f| f == family), "{family}");
    }
    for context in CONTEXTS {
        assert!(workspace.context(context).is_some(), "{context}");
    }
    assert_eq!(workspace.tools().count(), 17);

    // `promptc validate` itself: besides the files, it compiles the whole build matrix and
    // warns of budgets and of values that change per request early in a prompt.
    let json = promptc()
        .args(["validate", "--format", "json", "-C"])
        .arg(repo_root())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(
        (
            &report["errors"],
            &report["warnings"],
            &report["diagnostics"]
        ),
        (&0.into(), &0.into(), &serde_json::json!([])),
        "{report:#}"
    );
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let human = promptc()
        .args(["validate", "-C"])
        .arg(repo_root())
        .output()
        .unwrap();
    assert_eq!(human.status.code(), Some(0), "{}", stderr(&human));
    let said = stderr(&human);
    assert!(
        said.starts_with("ok: ") && said.ends_with(" is valid\n") && said.lines().count() == 1,
        "{said}"
    );
    assert_eq!(stdout(&human), "");
}

#[test]
fn committed_outputs_are_current() {
    let workspace = load(&repo_root());
    let run = promptc::compile_matrix(&promptc::Compiler::new(&workspace), None);
    assert!(run.failed.is_empty(), "{:?}", run.failed);
    assert_eq!(run.outputs.len(), FAMILIES.len() * CONTEXTS.len());
    let check = promptc()
        .arg("check")
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "stale compiled prompts: run `cargo run -- build --all`\n{}",
        stderr(&check)
    );
}

#[test]
fn prompts_stay_within_their_token_budgets() {
    let workspace = load(&repo_root());
    let budgets = [
        ("generic", 9_000),
        ("next-gen", 9_000),
        ("gpt", 9_000),
        ("gemini", 9_000),
        ("xs", 2_000),
        ("native-next-gen", 4_000),
    ];
    for (family, budget) in budgets {
        let tokens = Encoding::O200k.count(&compile(&workspace, family, "basic").prompt);
        assert!(
            tokens < budget,
            "{family}: {tokens} tokens, budget {budget}"
        );
        // A budget far above the count means the test no longer says much.
        assert!(tokens > budget / 5, "{family}: only {tokens} tokens?");
    }
}

#[test]
fn a_prompt_never_names_a_tool_it_does_not_offer() {
    let workspace = load(&repo_root());
    let all: Vec<String> = workspace
        .tools()
        .map(|tool| tool.name.clone().unwrap_or_else(|| tool.id.clone()))
        .collect();
    for family in FAMILIES {
        for context in CONTEXTS {
            let compiled = compile(&workspace, family, context);
            for name in &all {
                if compiled.tools.iter().any(|t| &t.name == name) {
                    continue;
                }
                assert!(
                    !compiled.prompt.contains(name.as_str()),
                    "{family} × {context} mentions `{name}`, which it does not offer"
                );
            }
        }
    }
}

#[test]
fn native_tool_families_leave_tool_documentation_to_the_api() {
    let workspace = load(&repo_root());
    let native = compile(&workspace, "native-next-gen", "basic");
    let text = compile(&workspace, "next-gen", "basic");
    for tool in &native.tools {
        let heading = format!("## {}", tool.name);
        assert!(
            text.prompt.contains(&heading),
            "next-gen documents {}",
            tool.name
        );
        assert!(
            !native.prompt.contains(&heading),
            "native documents {}",
            tool.name
        );
    }
    // The same tools are offered; they travel as definitions instead of prose.
    let ids = |c: &promptc::Compiled| c.tools.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&native), ids(&text));
    assert!(native.prompt.contains("TOOL USE"));
}

/// A `Compiler` remembers renders by the values they read and reuses them in later compiles:
/// whatever came before, each request gets the bytes a compiler of its own gives it.
#[test]
fn a_compile_gives_the_same_bytes_whatever_the_compiler_compiled_before() {
    let workspace = load(&repo_root());
    let shared = promptc::Compiler::new(&workspace);
    let mut requests = Vec::new();
    for family in FAMILIES {
        for context in CONTEXTS {
            requests.push((family, context));
        }
    }
    // Backwards, then forwards: every entry follows others that filled the memory.
    for (family, context) in requests.iter().rev().chain(requests.iter()) {
        let values = workspace.context(context).unwrap().clone();
        let request = promptc::Request::new(promptc::Selection::family(*family), values);
        let reused = shared.compile(&request).unwrap();
        let fresh = compile(&workspace, family, context);
        assert_eq!(reused.prompt, fresh.prompt, "{family} × {context}");
        let texts = |compiled: &promptc::Compiled| {
            compiled
                .sections
                .iter()
                .map(|section| section.text.clone())
                .chain(compiled.tools.iter().map(|tool| tool.description.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(&reused), texts(&fresh), "{family} × {context}");
    }
}

#[test]
fn context_switches_change_the_prompt() {
    let workspace = load(&repo_root());
    let basic = compile(&workspace, "next-gen", "basic");
    let no_browser = compile(&workspace, "next-gen", "no-browser");
    assert!(basic.tools.iter().any(|t| t.id == "browser_action"));
    assert!(!no_browser.tools.iter().any(|t| t.id == "browser_action"));
    let no_mcp = compile(&workspace, "next-gen", "no-mcp");
    assert!(!no_mcp.tools.iter().any(|t| t.id == "use_mcp_tool"));
    assert!(basic.prompt.contains("MCP SERVERS"));
    assert!(!no_mcp.prompt.contains("MCP SERVERS"));
    let rules = compile(&workspace, "next-gen", "with-rules");
    assert!(rules.prompt.contains("{{ not_a_template }}"));
    // next-gen adds web_fetch and feedback to generic.
    let generic = compile(&workspace, "generic", "basic");
    assert!(basic.tools.iter().any(|t| t.id == "web_fetch"));
    assert!(!generic.tools.iter().any(|t| t.id == "web_fetch"));
    assert!(
        basic
            .sections
            .iter()
            .any(|s| s.id == "feedback" && !s.text.is_empty())
    );
}

#[test]
fn init_writes_a_workspace_that_validates_and_builds() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("agent");
    let written = promptc::init(&target).unwrap();
    assert!(written.iter().any(|p| p.ends_with("promptc.toml")));
    assert!(
        written
            .iter()
            .any(|p| p.ends_with("schema/tool.schema.json"))
    );
    // The settings an editor's TOML formatter needs to leave the library as it is.
    assert!(written.iter().any(|p| p.ends_with(".taplo.toml")));
    let workspace = load(&target);
    let compiled = compile(&workspace, "next-gen", "basic");
    let shipped = compile(&load(&repo_root()), "next-gen", "basic");
    assert_eq!(compiled.prompt, shipped.prompt);

    // A second init refuses and writes nothing.
    std::fs::write(target.join("components/rules.md"), "mine").unwrap();
    match promptc::init(&target) {
        Err(promptc::InitError::WouldOverwrite(existing)) => {
            assert_eq!(existing.len(), written.len());
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(target.join("components/rules.md")).unwrap(),
        "mine"
    );
}

/// The outputs' folder is the build's after `init`: one already holding files (a prompt of
/// the user's own, an index naming files the build would remove) is refused like a library
/// file, with nothing written or removed; an empty one is taken, and so is one holding only
/// a hidden placeholder such as `.gitkeep`.
#[test]
fn init_leaves_a_folder_of_outputs_already_there_alone() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("agent");
    let prompts = target.join("examples/prompts");
    std::fs::create_dir_all(prompts.join("xs")).unwrap();
    std::fs::write(prompts.join("xs/basic.md"), "mine").unwrap();
    std::fs::write(prompts.join("xs/old.md"), "keep").unwrap();
    std::fs::write(
        prompts.join(".promptc-outputs"),
        "examples/prompts/xs/old.md\n",
    )
    .unwrap();
    let output = common::promptc().arg("init").arg(&target).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("examples/prompts"), "{stderr}");
    let read = |name: &str| std::fs::read_to_string(prompts.join(name)).unwrap();
    assert_eq!(read("xs/basic.md"), "mine");
    assert_eq!(read("xs/old.md"), "keep");
    assert_eq!(read(".promptc-outputs"), "examples/prompts/xs/old.md\n");
    assert!(!target.join("promptc.toml").exists());

    let empty = dir.path().join("empty");
    std::fs::create_dir_all(empty.join("examples/prompts")).unwrap();
    let output = common::promptc().arg("init").arg(&empty).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(empty.join("examples/prompts/next-gen/basic.md").exists());

    // A folder kept in git by a hidden placeholder is empty to the build, which leaves the
    // placeholder alone; an output index alone names files the build would remove.
    let kept = dir.path().join("kept");
    std::fs::create_dir_all(kept.join("examples/prompts")).unwrap();
    std::fs::write(kept.join("examples/prompts/.gitkeep"), "").unwrap();
    let output = common::promptc().arg("init").arg(&kept).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(kept.join("examples/prompts/next-gen/basic.md").exists());
    assert!(kept.join("examples/prompts/.gitkeep").exists());
    let indexed = dir.path().join("indexed");
    std::fs::create_dir_all(indexed.join("examples/prompts")).unwrap();
    std::fs::write(
        indexed.join("examples/prompts/.promptc-outputs"),
        "examples/prompts/xs/old.md\n",
    )
    .unwrap();
    let output = common::promptc()
        .arg("init")
        .arg(&indexed)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(!indexed.join("promptc.toml").exists());
}

/// `init` in a folder of a workspace (run from `components/`, say) would add a second library
/// to the files the outer workspace reads, and break it: refused, nothing written, the outer
/// workspace still valid.
#[test]
fn init_inside_a_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outer = dir.path().join("outer");
    promptc::init(&outer).unwrap();
    let files_before = walkdir::WalkDir::new(&outer).into_iter().count();
    for (cwd, args) in [
        ("components", vec!["init"]),
        (".", vec!["init", "partials/new"]),
        ("components", vec!["-C", "../tools", "init"]),
    ] {
        let output = common::promptc()
            .current_dir(outer.join(cwd))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("lies inside the workspace at")
                && stderr.contains("nothing was written"),
            "{stderr}"
        );
    }
    assert_eq!(
        walkdir::WalkDir::new(&outer).into_iter().count(),
        files_before
    );
    assert!(!outer.join("partials/new").exists());
    assert!(load(&outer).is_valid());
    // A folder beside the workspace is not inside it.
    let beside = dir.path().join("beside");
    assert!(promptc::init(&beside).is_ok());
}

/// `init` over a file exited 2 (the folder cannot be made) but over a folder holding a link
/// where the library goes 1, as a problem of a workspace there is not: both are the command
/// line's folder refused, exit 2, nothing written.
#[cfg(unix)]
#[test]
fn init_refusals_of_the_folder_named_exit_alike() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let linked = dir.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, linked.join("components")).unwrap();
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    // A repository's `.git` folder, named or reached through a link: a workspace written
    // there is among git's own files.
    let git = dir.path().join(".git");
    std::fs::create_dir(&git).unwrap();
    let in_git = git.join("agent");
    let to_git = dir.path().join("to_git");
    std::os::unix::fs::symlink(&git, &to_git).unwrap();
    let through_link = to_git.join("refs/agent");
    for (folder, said) in [
        (&file, "file is a file, where a folder belongs"),
        (&linked, "error"),
        (&dangling, "dangling is a symbolic link to nothing"),
        (&in_git, "agent is in a .git folder"),
        (&through_link, "refs/agent is in a .git folder"),
    ] {
        let output = common::promptc()
            .current_dir(dir.path())
            .arg("init")
            .arg(folder)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{folder:?}: {stderr}");
        assert!(stderr.starts_with("error"), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
    }
    assert!(!dir.path().join("nowhere").exists());
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&git).unwrap().count(), 0);
    // A path through `.git` that ends outside it is no place in it.
    let output = common::promptc()
        .current_dir(dir.path())
        .args(["init", ".git/../beside"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(dir.path().join("beside/promptc.toml").exists());
    assert!(!linked.join("promptc.toml").exists());
}

/// `promptc init` with no folder writes into the current one and builds the outputs, so the
/// new workspace passes `check` straight away.
#[test]
fn init_in_the_current_folder_ends_with_check_passing() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        common::promptc()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    let init = run(&["init"]);
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    assert!(dir.path().join("promptc.toml").is_file());
    // The editor's TOML formatter gets the settings the library is written in.
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".taplo.toml")).unwrap(),
        std::fs::read_to_string(common::repo_root().join(".taplo.toml")).unwrap()
    );
    let check = run(&["check"]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    // `--quiet` leaves out the progress lines; without it `check` says it is up to date.
    assert!(String::from_utf8_lossy(&check.stderr).starts_with("ok: "));
    let quiet = run(&["--quiet", "check"]);
    assert!(quiet.status.success());
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
    let quiet = run(&["build", "--all", "-q"]);
    assert!(quiet.status.success());
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
    // `-C DIR` names the folder `init` writes into, as it names the workspace elsewhere.
    let elsewhere = tempfile::tempdir().unwrap();
    let second = elsewhere.path().join("second");
    let second = second.to_str().unwrap();
    let other = run(&["-C", second, "init", "-q"]);
    assert!(
        other.status.success(),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
    assert!(run(&["-C", second, "check", "-q"]).status.success());
    // `check --format json` lists each file that differs, missing and stale apart.
    std::fs::remove_file(dir.path().join("examples/prompts/xs/basic.md")).unwrap();
    let checked = run(&["check", "--format", "json"]);
    assert_eq!(checked.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(json["up_to_date"], false);
    assert_eq!(
        json["files"],
        serde_json::json!([{ "status": "missing", "path": "examples/prompts/xs/basic.md" }])
    );
}

/// `CLICOLOR_FORCE` colours diagnostics written to a pipe; `NO_COLOR` still wins.
#[test]
fn clicolor_force_colours_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("promptc.toml"), "fallback_family = 3\n").unwrap();
    let validate = |vars: &[(&str, &str)]| {
        let mut command = assert_cmd::Command::cargo_bin("promptc").unwrap();
        command
            .env("PROMPTC_NO_CACHE", "1")
            .current_dir(dir.path())
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE");
        for (name, value) in vars {
            command.env(name, value);
        }
        let output = command.arg("validate").output().unwrap();
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    assert!(!validate(&[]).contains('\u{1b}'));
    assert!(validate(&[("CLICOLOR_FORCE", "1")]).contains('\u{1b}'));
    assert!(!validate(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\u{1b}'));
}

/// On a terminal, diagnostics are coloured unless the environment says otherwise, as
/// no-color.org and bixense.com/clicolors have it: a `TERM` of `dumb`, `CLICOLOR=0`, or a
/// non-empty `NO_COLOR` (an empty one says nothing). `TERM=dumb` and `CLICOLOR=0` were
/// coloured, and an empty `NO_COLOR` took colour away. In CI (`CI` set) a terminal without
/// `TERM` is coloured, as CI logs render it, but `TERM=dumb` still turns colour off; it was
/// coloured there, so this test failed in CI alone.
#[cfg(unix)]
#[test]
fn a_terminal_gets_colour_unless_the_environment_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("promptc.toml"), "fallback_family = 3\n").unwrap();
    let promptc = env!("CARGO_BIN_EXE_promptc");
    // `script` gives the command a terminal and copies what it writes.
    let on_terminal = |vars: &[(&str, &str)]| {
        let mut command = std::process::Command::new("script");
        command
            .args(["-qec", &format!("{promptc} validate"), "/dev/null"])
            .current_dir(dir.path())
            .env("PROMPTC_NO_CACHE", "1")
            .env("TERM", "xterm")
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("CI");
        for (name, value) in vars {
            // `unset:` takes the variable out of the environment.
            if *value == "unset:" {
                command.env_remove(name);
            } else {
                command.env(name, value);
            }
        }
        let output = command.output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(text.contains("fallback_family"), "{text}");
        text.contains('\u{1b}')
    };
    assert!(on_terminal(&[]));
    assert!(on_terminal(&[("NO_COLOR", "")]));
    assert!(!on_terminal(&[("NO_COLOR", "1")]));
    assert!(!on_terminal(&[("TERM", "dumb")]));
    assert!(!on_terminal(&[("CLICOLOR", "0")]));
    assert!(on_terminal(&[("CLICOLOR", "0"), ("CLICOLOR_FORCE", "1")]));
    assert!(!on_terminal(&[("CLICOLOR", "0"), ("CLICOLOR_FORCE", "0")]));
    assert!(!on_terminal(&[("TERM", "unset:")]));
    assert!(on_terminal(&[("TERM", "unset:"), ("CI", "true")]));
    assert!(!on_terminal(&[("TERM", "dumb"), ("CI", "true")]));
}

#[test]
fn families_share_text_through_partials() {
    // The plan-mode opening and the tool-call example are written once, in partials/, and
    // used by the default templates and by the gemini family's own.
    let workspace = load(&repo_root());
    for family in ["generic", "gemini"] {
        let compiled = compile(&workspace, family, "basic");
        for partial in ["partials/act_vs_plan.md", "partials/tool_call.md"] {
            assert!(
                compiled.inputs.iter().any(|input| input == partial),
                "{family}: {partial} not in {:?}",
                compiled.inputs
            );
        }
    }
    let gemini = compile(&workspace, "gemini", "basic");
    assert!(gemini.prompt.contains(
        "ACT MODE AND PLAN MODE\n\nThe user switches you between two modes; SYSTEM INFORMATION says which one is active. You cannot switch yourself.\n"
    ));
}

#[test]
fn the_readme_shows_current_stats() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let start = "<!-- promptc stats --context basic: kept current by tests/library.rs -->\n";
    let from = readme.find(start).expect("README has the stats marker") + start.len();
    let to = readme[from..].find("<!-- end of stats -->").unwrap() + from;
    let output = common::promptc()
        .args(["stats", "--context", "basic", "--workspace"])
        .arg(repo_root())
        .output()
        .unwrap();
    assert_eq!(
        &readme[from..to],
        String::from_utf8(output.stdout).unwrap(),
        "update the README's table with `promptc stats --context basic`"
    );
}

/// Completion scripts and the manual page come from the parser's own definition.
#[test]
fn completions_and_man_page_cover_the_commands() {
    let run = |args: &[&str]| {
        let output = common::promptc().args(args).output().unwrap();
        assert!(output.status.success(), "{args:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    for shell in ["bash", "zsh", "fish"] {
        let script = run(&["completions", shell]);
        assert!(
            script.contains("route") && script.contains("dialect"),
            "{shell}"
        );
    }
    let page = run(&["man"]);
    assert!(page.starts_with(".ie") && page.contains(".TH promptc 1"));
    assert!(page.contains("tools") && page.contains("context"));
}

/// `promptc new` writes files that validate as they are, with their schema line, and never
/// over an existing one.
#[test]
fn new_writes_minimal_files_that_validate() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        common::promptc()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&["init", "-q"]).status.success());
    for (kind, id, file) in [
        ("tool", "grep_logs", "tools/grep_logs.toml"),
        ("component", "safety", "components/safety.toml"),
        ("variant", "claude-5", "variants/claude-5.toml"),
    ] {
        let made = run(&["new", kind, id]);
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(
            text.starts_with(&format!(
                "#:schema ../schema/{kind}.schema.json\nid = \"{id}\"\n"
            )),
            "{text}"
        );
    }
    let validated = run(&["validate"]);
    assert!(
        validated.status.success(),
        "{}",
        String::from_utf8_lossy(&validated.stderr)
    );
    let again = run(&["new", "tool", "grep_logs"]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(run(&["new", "tool", "../escape"]).status.code(), Some(2));
}

/// What to run next after `init`: in the current folder, no `cd .` before it; elsewhere, a
/// `cd` to the folder written so that a shell reads it as one word.
#[test]
fn init_says_what_to_run_next_from_where_the_user_is() {
    let dir = tempfile::tempdir().unwrap();
    for (cwd, args, next) in [
        (
            "here",
            vec!["init"],
            "next: promptc check && promptc build --family next-gen",
        ),
        (
            "dot",
            vec!["init", "."],
            "next: promptc check && promptc build --family next-gen",
        ),
        (
            ".",
            vec!["init", "sub"],
            "next: cd sub && promptc check && promptc build --family next-gen",
        ),
        // Pasted into a shell: one word, never an option.
        (
            ".",
            vec!["init", "my prompts"],
            "next: cd 'my prompts' && promptc check && promptc build --family next-gen",
        ),
        (
            ".",
            vec!["init", "--", "-dash"],
            "next: cd ./-dash && promptc check && promptc build --family next-gen",
        ),
        // A line break no pasted command can carry as it is.
        (
            ".",
            vec!["init", "two\nlines"],
            "next: in the new folder, promptc check && promptc build --family next-gen",
        ),
    ] {
        std::fs::create_dir_all(dir.path().join(cwd)).unwrap();
        let output = common::promptc()
            .current_dir(dir.path().join(cwd))
            .args(&args)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.code(), Some(0), "{args:?}: {all}");
        assert!(all.lines().any(|line| line == next), "{args:?}: {all}");
    }
}

/// A checkout whose git writes CRLF line endings (`core.autocrlf`, the default of git for
/// Windows) compiled prompts with CRLF from every template, and `check` found all 56 outputs
/// stale: the repository's `.gitattributes` keeps its files LF on every checkout.
#[test]
fn a_checkout_that_writes_crlf_compiles_the_committed_prompts() {
    let root = repo_root();
    // A source package, not a checkout: there is no history to check out again.
    if !root.join(".git").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("clone");
    let cloned = common::isolated_git(&mut std::process::Command::new("git"))
        .args(["-c", "core.autocrlf=true", "clone", "-q"])
        .arg(&root)
        .arg(&clone)
        .output()
        .unwrap();
    assert!(cloned.status.success(), "{}", stderr(&cloned));
    let template = std::fs::read_to_string(clone.join("components/agent_role.md")).unwrap();
    assert!(!template.contains('\r'));
    let check = promptc().arg("check").current_dir(&clone).output().unwrap();
    assert!(check.status.success(), "{}", stderr(&check));
}
