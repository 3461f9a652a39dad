//! Rules from a real project folder (issue 11, items 1 and 2): `.clinerules` (files with the
//! frontmatter shapes of real rules files, a workflow), `.cursorrules`, `.cursor/rules/*.mdc`,
//! `.windsurfrules` and `AGENTS.md`, read from `tests/fixtures/rules-project/`; rules with
//! `globs` against active files; rules switched off by name; and the trust boundary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, fixture_dir, promptc, repo_root, stderr, stdout};

/// The project folder holding every rules format.
fn project() -> String {
    fixture_dir("rules-project").to_str().unwrap().to_string()
}

/// The shipped library's user-instructions section for the project, from its heading to the
/// end of the prompt.
fn user_instructions(args: &[&str]) -> String {
    let root = repo_root();
    let mut command = promptc();
    command.args(["build", "--workspace", root.to_str().unwrap()]);
    command.args(["--family", "next-gen", "--context", "basic"]);
    let output = command.args(args).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    let prompt = stdout(&output);
    let at = prompt.find("USER'S CUSTOM INSTRUCTIONS").unwrap();
    prompt[at..].to_string()
}

#[test]
fn the_shipped_prompt_says_where_each_rule_came_from() {
    let project = project();
    let section = user_instructions(&[
        "--rules",
        &project,
        "--files",
        "src/ui/app.tsx",
        "--disable-rule",
        "legacy-style",
    ]);
    // Frontmatter never reaches the prompt; the workflow is not a rule.
    assert!(!section.contains("description:"), "{section}");
    assert!(!section.contains("CHANGELOG"), "{section}");
    assert!(!section.contains("Wrap lines at 80"), "{section}");
    insta::assert_snapshot!(section);
}

#[test]
fn an_active_file_named_by_its_absolute_path_matches_below_a_folder_named_relatively() {
    // An editor passes the open files' absolute paths; the rules folder is often `.`, the
    // folder the agent runs in. The globs are written from the folder, whatever its name.
    let project = tempfile::tempdir().unwrap();
    let folder = project.path().canonicalize().unwrap();
    std::fs::create_dir(folder.join(".clinerules")).unwrap();
    std::fs::write(
        folder.join(".clinerules/db.md"),
        "---\nglobs: [\"src/db/**\"]\n---\nMigrations go through the schema tool.\n",
    )
    .unwrap();
    let active = folder.join("src/db/a.sql");
    let root = repo_root();
    let explained = |from: &std::path::Path, rules: &str, active: &std::path::Path| {
        let output = promptc()
            .current_dir(from)
            .args(["explain", "--workspace", root.to_str().unwrap()])
            .args([
                "--family",
                "next-gen",
                "--context",
                "basic",
                "--rules",
                rules,
            ])
            .arg("--files")
            .arg(active)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    for rules in [".", folder.to_str().unwrap()] {
        let out = explained(&folder, rules, &active);
        let line = out.lines().find(|line| line.contains(" db:")).unwrap();
        assert!(line.contains("+ db:"), "--rules {rules}: {out}");
    }
    // Named through a link to the project (a home folder that is one), run from there: the
    // rules folder's real path is the project's, the file's is found through the link, a
    // file not written yet too.
    let link = folder.with_file_name(format!(
        "{}-link",
        folder.file_name().unwrap().to_str().unwrap()
    ));
    std::os::unix::fs::symlink(&folder, &link).unwrap();
    for file in ["src/db/a.sql", "src/db/new/b.sql"] {
        let out = explained(&link, ".", &link.join(file));
        let line = out.lines().find(|line| line.contains(" db:")).unwrap();
        assert!(line.contains("+ db:"), "{file}: {out}");
    }
    std::fs::remove_file(&link).unwrap();
}

#[test]
fn a_glob_scoped_rule_needs_a_matching_active_file() {
    let project = project();
    let without = user_instructions(&["--rules", &project]);
    assert!(!without.contains("Use function components"), "{without}");
    assert!(!without.contains("never use `any`"), "{without}");
    // `globs: ["*"]` matches every file: always applies.
    assert!(without.contains("Rule `architecture`"), "{without}");
    // A CSS file matches the web rule's `*.css`, not the TypeScript rule.
    let css = user_instructions(&["--rules", &project, "--files", "styles/site.css"]);
    assert!(css.contains("Use function components"), "{css}");
    assert!(!css.contains("never use `any`"), "{css}");
}

/// A rules folder named twice (as given and with `./`, or by another path to it) is read
/// once: its rules were in the prompt twice. An active file matches a rule's globs whatever
/// its separators, a leading `./`, or the rules folder before it.
#[test]
fn a_folder_named_twice_is_read_once_and_an_active_file_matches_as_written() {
    let project = project();
    let once = user_instructions(&["--rules", &project, "--files", "src/ui/app.tsx"]);
    let dotted = format!("{project}/./");
    let twice = user_instructions(&[
        "--rules",
        &project,
        "--rules",
        &dotted,
        "--files",
        "src/ui/app.tsx",
    ]);
    assert_eq!(once, twice);
    assert_eq!(once.matches("Use function components").count(), 1, "{once}");
    for file in [
        "./src/ui/app.tsx".to_string(),
        "src\\ui\\app.tsx".to_string(),
        format!("{project}/src/ui/app.tsx"),
    ] {
        let section = user_instructions(&["--rules", &project, "--files", &file]);
        assert_eq!(section, once, "{file}");
    }
}

#[test]
fn explain_says_which_rules_applied_and_why_the_others_did_not() {
    let output = promptc()
        .args(["explain", "--workspace", repo_root().to_str().unwrap()])
        .args(["--family", "next-gen", "--context", "basic", "--rules"])
        .arg(project())
        .args([
            "--disable-rule",
            "legacy-style",
            "--files",
            "src/ui/app.tsx",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let at = text.find("rules, in prompt order:").unwrap();
    insta::assert_snapshot!(&text[at..]);
}

/// A workspace whose component prints each rule's structured fields, with the project folder
/// inside it at `project/`.
fn workspace_with_project(context: &str) -> common::Workspace {
    let mut fixture = Fixture::minimal()
        .file(
            "components/intro.md",
            "{% for rule in rules %}[{{ rule.kind }}] {{ rule.name }} ({{ rule.path }}) \
             version={{ rule.metadata.version | default('-') }} \
             tags={{ rule.metadata.tags | default([]) | join(',') }} \
             extra={{ rule.metadata.reviewed_by | default('-') }}\n{{ rule.text }}\n\
             {% endfor %}workflows: {{ workflows | map(attribute='name') | join(', ') }}\n",
        )
        .file("examples/contexts/project.toml", context);
    for (path, contents) in Fixture::from_dir(&fixture_dir("rules-project")).files() {
        fixture = fixture.file(&format!("project/{path}"), contents);
    }
    fixture.write()
}

#[test]
fn rules_from_a_context_reach_templates_as_structured_items() {
    let workspace = workspace_with_project(
        "date = \"2026-11-01\"\n\
         rules_from = [\"project\"]\n\
         active_files = [\"src/ui/app.tsx\"]\n\
         rule_toggles = { \"legacy-style\" = false, AGENTS = true }\n",
    );
    let run = workspace.run(&["build", "--context", "project"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
}

/// Cursor applies a rule with `alwaysApply: false` and no globs only when it is asked for
/// (by the agent from its description, or by the user); promptc applied it always. It is now
/// left out, and `explain` says why and how to switch it on; a context's `rule_toggles`
/// with the rule's name set to `true` switches it on. A rule with globs and
/// `alwaysApply: false` still applies when an active file matches them.
#[test]
fn a_cursor_rule_that_is_not_always_applied_and_has_no_globs_applies_on_request() {
    for (toggles, applied) in [("", false), ("rule_toggles = { review = true }\n", true)] {
        let workspace = workspace_with_project(&format!(
            "date = \"2026-11-01\"\nrules_from = [\"project\"]\nactive_files = [\"src/ui/app.tsx\"]\n{toggles}"
        ));
        std::fs::write(
            workspace.root().join("project/.cursor/rules/review.mdc"),
            "---\ndescription: How to review a pull request\nalwaysApply: false\n---\nRead the whole diff first.\n",
        )
        .unwrap();
        let build = workspace.run(&["build", "--context", "project"]);
        assert_eq!(build.code, 0, "{}", build.stderr);
        assert_eq!(
            build.stdout.contains("Read the whole diff first."),
            applied,
            "{toggles}: {}",
            build.stdout
        );
        // The rule with globs and `alwaysApply: false` applies by its globs either way.
        assert!(
            build.stdout.contains("[cursor] typescript"),
            "{}",
            build.stdout
        );
        let explain = workspace.run(&["explain", "--context", "project"]);
        assert_eq!(explain.code, 0, "{}", explain.stderr);
        let says = if applied {
            "+ review: applies: switched on in the context's rule_toggles (`alwaysApply: false` and no globs)"
        } else {
            "- review: left out: `alwaysApply: false` without globs applies only when asked for; `rule_toggles = { NAME = true }` in the context switches it on"
        };
        assert!(explain.stdout.contains(says), "{}", explain.stdout);
        assert!(
            !explain.stderr.contains("toggle-names-no-rule"),
            "{}",
            explain.stderr
        );
    }
}

/// A rule switched off under a name no rule has (a typo) stays on: said, with the name meant,
/// for `--disable-rule` and for a context's `rule_toggles` alike. Names that exist say nothing.
#[test]
fn a_rule_switched_off_by_a_name_no_rule_has_is_said() {
    let workspace = workspace_with_project(
        "date = \"2026-11-01\"\n\
         rules_from = [\"project\"]\n\
         rule_toggles = { \"legacy-styel\" = false, AGENTS = true }\n",
    );
    let run = workspace.run(&["build", "--context", "project", "--disable-rule", "testin"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "warning: `--disable-rule` names `testin`, but no rule read is called so (by name or \
             path); did you mean `testing`?"
        ),
        "{}",
        run.stderr
    );
    // A toggle of a context file is placed at its key there.
    assert!(
        run.stderr.contains(
            "warning[toggle-names-no-rule]: `rule_toggles` names `legacy-styel`, but no rule read \
             is called so (by name or path)"
        ) && run
            .stderr
            .contains("--> examples/contexts/project.toml:3:18")
            && run.stderr.contains("help: did you mean `legacy-style`?"),
        "{}",
        run.stderr
    );
    // Both rules stay on; `AGENTS` names a rule, and is not warned about.
    assert!(run.stdout.contains("] legacy-style ("), "{}", run.stdout);
    assert!(run.stdout.contains("] testing ("), "{}", run.stdout);
    assert!(!run.stderr.contains("`AGENTS`"), "{}", run.stderr);
}

/// A named context's toggle that names no rule is told by `validate`, which CI runs, at its
/// key; a build of the context tells it once, not again.
#[test]
fn validate_tells_a_named_context_s_toggle_that_names_no_rule() {
    let workspace = workspace_with_project(
        "date = \"2026-11-01\"\n\
         rules_from = [\"project\"]\n\
         rule_toggles = { \"legacy-styel\" = false }\n",
    );
    let validation = workspace.validate();
    let diagnostic = validation.single();
    assert_eq!(
        (
            diagnostic.code.as_str(),
            diagnostic.file.as_str(),
            diagnostic.line,
            diagnostic.column
        ),
        (
            "toggle-names-no-rule",
            "examples/contexts/project.toml",
            3,
            18
        ),
        "{diagnostic:?}"
    );
    assert_eq!(validation.help(0), Some("did you mean `legacy-style`?"));
    let run = workspace.run(&["build", "--context", "project"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr
            .matches("`rule_toggles` names `legacy-styel`")
            .count(),
        1,
        "{}",
        run.stderr
    );
}

/// The contexts of a workspace share what matching may cost: two hundred contexts extending
/// one whose rule had tangled globs over a thousand long active files each had the whole of
/// it, and every command ran past the process's time limit. A rule that one context may match
/// is left out when eight contexts share the cost, told once at the file that lists the files.
#[test]
fn many_contexts_share_what_matching_their_rules_may_cost() {
    // About 181 million of the 268 million a lone context may spend: within it, and within a
    // quarter of the workspace's, but not within an eighth. The glob matches every file.
    let glob = format!("y/{}/**", "b".repeat(3000));
    let files: Vec<String> = (0..20)
        .map(|i| format!("\"y/{}/f{i}.ts\"", "b".repeat(3000)))
        .collect();
    let workspace_of = |contexts: usize| {
        let mut fixture = common::Fixture::minimal()
            .file(
                "components/intro.md",
                "{% for rule in rules %}{{ rule.name }};{% endfor %}\n",
            )
            .file(
                "project/.clinerules/wide.md",
                format!("---\nglobs: [\"{glob}\"]\n---\nRule text.\n"),
            )
            .file(
                "examples/contexts/basic.toml",
                format!(
                    "date = \"2026-11-01\"\nrules_from = [\"project\"]\nactive_files = [{}]\n",
                    files.join(", ")
                ),
            );
        for index in 1..contexts {
            fixture = fixture.file(
                &format!("examples/contexts/more{index}.toml"),
                "extends = \"basic\"\n",
            );
        }
        fixture.write()
    };
    let applied = |workspace: &common::Workspace| {
        let run = workspace.run(&["build", "--context", "basic"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout.contains("wide;")
    };
    let few = workspace_of(4);
    let validation = few.validate();
    assert!(
        validation.diagnostics().is_empty(),
        "{:?}",
        validation.diagnostics()
    );
    assert!(applied(&few));
    // A build of the one context decides as the matrix does: the rule is left out of both.
    let many = workspace_of(8);
    assert!(!applied(&many));
    let many = many.validate();
    let diagnostic = many.single();
    assert_eq!(
        (
            diagnostic.code.as_str(),
            diagnostic.file.as_str(),
            diagnostic.line
        ),
        ("globs-too-costly", "examples/contexts/basic.toml", 3),
        "{diagnostic:?}"
    );
}

/// A rule whose globs cost more to match against the active files than a context's rules may
/// is left out: `validate` says so at the context's `active_files`, and a build whose own flags
/// make it so says so in a line.
#[test]
fn a_rule_left_out_for_the_cost_of_its_globs_is_told() {
    // One glob of 3 KB against forty paths of 3 KB: past the matching a context may cost.
    let glob = format!("x/{}/**", "a".repeat(3000));
    let files: Vec<String> = (0..40)
        .map(|i| format!("\"y/{}/f{i}.ts\"", "b".repeat(3000)))
        .collect();
    let workspace = common::Fixture::minimal()
        .file(
            "components/intro.md",
            "{% for rule in rules %}{{ rule.name }};{% endfor %}\n",
        )
        .file(
            "project/.clinerules/wide.md",
            format!("---\nglobs: [\"{glob}\"]\n---\nRule text.\n"),
        )
        .file(
            "examples/contexts/project.toml",
            format!(
                "date = \"2026-11-01\"\nrules_from = [\"project\"]\nactive_files = [{}]\n",
                files.join(", ")
            ),
        )
        .write();
    let validation = workspace.validate();
    let diagnostic = validation.single();
    assert_eq!(
        (
            diagnostic.code.as_str(),
            diagnostic.file.as_str(),
            diagnostic.line
        ),
        ("globs-too-costly", "examples/contexts/project.toml", 3),
        "{diagnostic:?}"
    );
    assert_eq!(
        diagnostic.message,
        "rule `wide` is left out: matching its globs against the 40 active files costs more than a context's rules may"
    );
    // A build of the named context tells it once (validation's), and leaves the rule out.
    let named = workspace.run(&["build", "--context", "project"]);
    assert_eq!(named.code, 0, "{}", named.stderr);
    assert_eq!(
        named.stderr.matches("is left out").count(),
        1,
        "{}",
        named.stderr
    );
    assert!(!named.stdout.contains("wide;"), "{}", named.stdout);
    let file_context = workspace.root().join("solo.toml");
    std::fs::write(
        &file_context,
        "date = \"2026-11-01\"\nrules_from = [\"project\"]\n",
    )
    .unwrap();
    let mut run = vec!["build", "--context", "solo.toml", "--files"];
    let flagged: Vec<String> = (0..40)
        .map(|i| format!("y/{}/f{i}.ts", "b".repeat(3000)))
        .collect();
    run.extend(flagged.iter().map(String::as_str));
    let flagged = workspace.run(&run);
    assert_eq!(flagged.code, 0, "{}", flagged.stderr);
    assert!(
        flagged.stderr.contains(
            "warning: rule `wide` is left out: matching its globs against the 40 active files costs more than a context's rules may; give the rule fewer or simpler globs"
        ),
        "{}",
        flagged.stderr
    );
    assert!(!flagged.stdout.contains("wide;"), "{}", flagged.stdout);
}

// Cursor writes every new rule with its frontmatter keys left empty (`globs:`): a null, which
// TOML cannot write, so `context` refused the whole context in a TOML workspace. Such a key
// says nothing and is left out of the TOML; the JSON keeps it; saved, the context compiles as
// the one it came from.
#[test]
fn a_printed_context_leaves_out_frontmatter_keys_left_empty() {
    let workspace = workspace_with_project("date = \"2026-11-01\"\nrules_from = [\"project\"]\n");
    let root = workspace.root();
    std::fs::write(
        root.join("project/.cursor/rules/short.mdc"),
        "---\ndescription: Keep answers short\nglobs:\nalwaysApply: true\n---\nKeep it short.\n",
    )
    .unwrap();
    let original = workspace.run(&["build", "--context", "project"]);
    assert_eq!(original.code, 0, "{}", original.stderr);
    assert!(
        original.stdout.contains("Keep it short."),
        "{}",
        original.stdout
    );
    let json = workspace.run(&["context", "--context", "project", "--format", "json"]);
    assert!(json.stdout.contains("\"globs\": null"), "{}", json.stdout);
    let printed = workspace.run(&["context", "--context", "project", "--format", "toml"]);
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    let short = printed
        .stdout
        .split("[[rules]]")
        .find(|rule| rule.contains("short.mdc"));
    assert!(
        short
            .is_some_and(|rule| rule.contains("description = \"Keep answers short\"")
                && !rule.contains("globs")),
        "{}",
        printed.stdout
    );
    std::fs::write(root.join("examples/contexts/saved.toml"), &printed.stdout).unwrap();
    let again = workspace.run(&["build", "--context", "saved"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, original.stdout);
}

// `promptc context` prints a context to save and use again: it kept `rules_from` beside the
// rules already read from those folders, so the saved context had every rule twice, and its
// JSON wrote an unset date as `null`, which a context may not hold. Saved, in either format,
// it now compiles as the context it came from. Its toggles, applied already, are left out
// too: kept, they named rules the saved context no longer holds, and were warned of.
#[test]
fn a_printed_context_used_again_compiles_as_the_one_it_came_from() {
    let workspace = workspace_with_project(
        "date = \"2026-11-01\"\n\
         rules_from = [\"project\"]\n\
         active_files = [\"src/ui/app.tsx\"]\n\
         rule_toggles = { \"legacy-style\" = false }\n",
    );
    let root = workspace.root();
    let original = workspace.run(&["build", "--context", "project"]);
    assert_eq!(original.code, 0, "{}", original.stderr);
    for (format, file) in [("toml", "saved.toml"), ("json", "saved.json")] {
        let printed = workspace.run(&["context", "--context", "project", "--format", format]);
        assert_eq!(printed.code, 0, "{}", printed.stderr);
        std::fs::write(root.join("examples/contexts").join(file), &printed.stdout).unwrap();
        let name = file.split('.').next().unwrap();
        let again = workspace.run(&["build", "--context", name]);
        assert_eq!(again.code, 0, "{format}: {}", again.stderr);
        assert_eq!(again.stdout, original.stdout, "{format}");
        assert!(
            !again.stderr.contains("warning"),
            "{format}: {}",
            again.stderr
        );
        assert!(
            !printed.stdout.contains("rule_toggles"),
            "{}",
            printed.stdout
        );
        std::fs::remove_file(root.join("examples/contexts").join(file)).unwrap();
    }
    // Active files given on the command line decide which rules apply: the printed context
    // keeps them.
    let printed = workspace.run(&[
        "context",
        "--context",
        "project",
        "--files",
        "styles/site.css",
        "--format",
        "json",
    ]);
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    let value: serde_json::Value = serde_json::from_str(&printed.stdout).unwrap();
    assert_eq!(
        value["active_files"],
        serde_json::json!(["src/ui/app.tsx", "styles/site.css"])
    );
    // Without a date, the JSON leaves it out rather than write `null`.
    std::fs::write(
        root.join("examples/contexts/undated.toml"),
        "mode = \"plan\"\n",
    )
    .unwrap();
    let printed = workspace.run(&["context", "--context", "undated", "--format", "json"]);
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    assert!(!printed.stdout.contains("null"), "{}", printed.stdout);
    // A null the user wrote in a table of their own is not dropped from the TOML: refused.
    std::fs::write(
        root.join("examples/contexts/nulls.json"),
        "{\"date\": \"2026-11-01\", \"extra\": {\"a\": null}}\n",
    )
    .unwrap();
    let printed = workspace.run(&["context", "--context", "nulls"]);
    assert_eq!(printed.code, 2, "{}", printed.stdout);
    assert!(
        printed
            .stderr
            .contains("`extra.a` is null, which TOML cannot write"),
        "{}",
        printed.stderr
    );
    // Nor from the JSON, wherever it is: a tool schema's `default` stays.
    std::fs::write(
        root.join("examples/contexts/nulls.json"),
        "{\"date\": \"2026-11-01\", \"mcp_servers\": [{\"name\": \"s\", \"tools\": [{\"name\": \"t\", \
         \"input_schema\": {\"type\": \"object\", \"properties\": {\"x\": {\"default\": null}}}}]}]}\n",
    )
    .unwrap();
    let printed = workspace.run(&["context", "--context", "nulls", "--format", "json"]);
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    assert!(
        printed.stdout.contains("\"default\": null"),
        "{}",
        printed.stdout
    );
}

// `alwaysApply: "true"` (quoted) is text, not a boolean: the rule was left to its globs
// without a word. It is a warning at the key, and the rule is still decided by its globs.
#[test]
fn an_always_apply_that_is_not_a_boolean_is_said() {
    let workspace = Fixture::minimal().write();
    let project = workspace.tmp().join("project");
    let rules = project.join(".cursor/rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("style.mdc"),
        "---\ndescription: House style\nalwaysApply: \"true\"\nglobs: \"*.css\"\n---\nKeep selectors flat.\n",
    )
    .unwrap();
    let run = workspace.run(&["explain", "--rules", project.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "warning[always-apply-not-a-boolean]: `alwaysApply` is the text `true`, not `true` or `false`"
        ) && run.stderr.contains("style.mdc:3:1"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout
            .contains("- style: left out: no active file matches `*.css`"),
        "{}",
        run.stdout
    );
}

/// The build matrix compiles a workspace context with its rules, as a single build of it
/// does: the committed outputs agree with `build --context`.
#[test]
fn the_build_matrix_reads_a_contexts_rules_folders_too() {
    let workspace = workspace_with_project(
        "date = \"2026-11-01\"\n\
         rules_from = [\"project\"]\n\
         active_files = [\"src/ui/app.tsx\"]\n",
    );
    let single = workspace.run(&["build", "--context", "project"]);
    assert_eq!(single.code, 0, "{}", single.stderr);
    assert!(
        single.stdout.contains("[clinerules] architecture"),
        "{}",
        single.stdout
    );
    let all = workspace.run(&["build", "--all"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    let written =
        std::fs::read_to_string(workspace.root().join("examples/prompts/generic/project.md"))
            .unwrap();
    assert_eq!(written, single.stdout);
    assert_eq!(workspace.run(&["check"]).code, 0);
}

#[test]
fn a_plain_rules_string_stays_first_among_read_rules() {
    let workspace = workspace_with_project(
        "date = \"2026-11-01\"\nrules = \"Say hello first.\"\nrules_from = [\"project\"]\n",
    );
    let run = workspace.run(&["build", "--context", "project"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let first = run
        .stdout
        .find("[context] context () version=- tags= extra=-\nSay hello first.\n");
    let read = run.stdout.find("[clinerules] architecture");
    assert!(first.is_some() && first < read, "{}", run.stdout);
}

#[test]
fn the_library_assembles_rules_from_a_folder_anywhere() {
    let workspace = workspace_with_project("date = \"2026-11-01\"\n");
    let mut loaded = promptc::load_workspace(workspace.root()).unwrap().workspace;
    let mut context = loaded.context("project").unwrap().clone();
    let request = promptc::RulesRequest {
        folders: vec![fixture_dir("rules-project")],
        disabled: vec!["AGENTS".into()],
        ..promptc::RulesRequest::default()
    };
    let (report, diagnostics) = promptc::assemble_rules(&mut loaded, &mut context, &request, None);
    assert!(diagnostics.is_empty());
    let promptc::model::Rules::List(rules) = &context.rules else {
        panic!("rules stay text: {:?}", context.rules);
    };
    let names: Vec<&str> = rules.iter().map(|rule| rule.name.as_str()).collect();
    // Sorted paths within a kind; kinds in the documented order; glob-scoped rules out.
    assert_eq!(
        names,
        [
            "architecture",
            "legacy-style",
            "testing",
            ".cursorrules",
            ".windsurfrules"
        ]
    );
    let architecture = &rules[0];
    assert_eq!(architecture.kind, "clinerules");
    assert_eq!(architecture.path, ".clinerules/architecture.md");
    assert!(architecture.text.starts_with("# Architecture"));
    // `version: 1.0` is a number; the inline comment after `globs` is a comment.
    assert_eq!(architecture.metadata["version"], serde_json::json!(1.0));
    assert_eq!(architecture.metadata["globs"], serde_json::json!(["*"]));
    assert_eq!(context.workflows.len(), 1);
    assert_eq!(
        context.workflows[0].path,
        ".clinerules/workflows/release.md"
    );
    let agents = report.rules.iter().find(|(rule, _)| rule.name == "AGENTS");
    assert_eq!(
        agents.map(|(_, decision)| decision),
        Some(&promptc::RuleDecision::DisabledByFlag)
    );
}

#[test]
fn global_rules_are_read_only_when_named() {
    let global = tempfile::tempdir().unwrap();
    std::fs::write(global.path().join("house-style.md"), "Be brief.\n").unwrap();
    std::fs::create_dir(global.path().join("workflows")).unwrap();
    std::fs::write(global.path().join("workflows/deploy.md"), "Deploy.\n").unwrap();
    let workspace = workspace_with_project("date = \"2026-11-01\"\n");
    let run = workspace.run(&[
        "build",
        "--context",
        "project",
        "--global-rules",
        global.path().to_str().unwrap(),
        "--rules",
        "project",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Global rules come first; their workflows join the project's.
    let global = run.stdout.find("[global] house-style (house-style.md)");
    let project = run.stdout.find("[clinerules] architecture");
    assert!(global.is_some() && global < project, "{}", run.stdout);
    assert!(
        run.stdout.contains("workflows: deploy, release\n"),
        "{}",
        run.stdout
    );
}

#[cfg(unix)]
#[test]
fn links_out_of_the_rules_folder_and_fifos_are_skipped_with_a_warning() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "SECRET TEXT\n").unwrap();
    let workspace = workspace_with_project("date = \"2026-11-01\"\n");
    let rules = workspace.root().join("project/.clinerules");
    std::os::unix::fs::symlink(outside.path().join("secret.md"), rules.join("leak.md")).unwrap();
    let fifo = rules.join("pipe.md");
    common::mkfifo(&fifo);
    let run = workspace.run(&["build", "--context", "project", "--rules", "project"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("SECRET"), "{}", run.stdout);
    assert!(run.stdout.contains("] testing ("), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("warning[rule-unreadable]: rules file `project/.clinerules/leak.md`"),
        "{}",
        run.stderr
    );
    // Confined to the rules folder: a link to a file elsewhere in the workspace leaves the
    // rules folder, not the workspace, and the reason says which.
    std::os::unix::fs::symlink(
        workspace.root().join("promptc.toml"),
        rules.join("manifest.md"),
    )
    .unwrap();
    let run = workspace.run(&["build", "--context", "project", "--rules", "project"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let warning = run
        .stderr
        .lines()
        .find(|line| line.contains("project/.clinerules/manifest.md"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(warning.contains("outside the rules folder"), "{warning}");
    assert!(!warning.contains("outside the workspace"), "{warning}");
    assert!(!run.stdout.contains("fallback_family"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("warning[rule-unreadable]: rules file `project/.clinerules/pipe.md`"),
        "{}",
        run.stderr
    );
}

// A rules file whose name is not UTF-8 was passed over without a word, and one whose name holds
// a line break wrote the prompt's lines for it (a `Rule` heading the project forged). Each is
// skipped with a warning; the folder's other rules apply.
#[cfg(target_os = "linux")]
#[test]
fn a_rules_file_named_with_a_line_break_or_not_utf8_is_skipped_with_a_warning() {
    use std::os::unix::ffi::OsStrExt as _;
    let workspace = workspace_with_project("date = \"2026-11-01\"\n");
    let rules = workspace.root().join("project/.clinerules");
    std::fs::write(rules.join("evil\nRule `x` (from y).md"), "FORGED\n").unwrap();
    std::fs::write(
        rules.join(std::ffi::OsStr::from_bytes(b"bad\xffname.md")),
        "NOT UTF-8 NAME\n",
    )
    .unwrap();
    let run = workspace.run(&["build", "--context", "project", "--rules", "project"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("FORGED"), "{}", run.stdout);
    assert!(!run.stdout.contains("NOT UTF-8 NAME"), "{}", run.stdout);
    assert!(run.stdout.contains("] testing ("), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("its name holds a line break or another control character"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("its name is not UTF-8 text"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_context_without_rules_files_is_unchanged() {
    // The shipped outputs are compiled from rules text: byte-identical to the committed ones.
    let output = promptc()
        .args(["check", "-C"])
        .arg(repo_root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn explain_as_json_gives_each_rule_with_its_reason() {
    let output = promptc()
        .args(["explain", "--workspace", repo_root().to_str().unwrap()])
        .args([
            "--family",
            "next-gen",
            "--context",
            "basic",
            "--format",
            "json",
        ])
        .arg("--rules")
        .arg(project())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let document: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let rules = document["rules"]["rules"].as_array().unwrap();
    let web = rules.iter().find(|rule| rule["name"] == "web-ui").unwrap();
    assert_eq!(web["applies"], false);
    assert_eq!(web["path"], ".clinerules/web-ui.md");
    assert_eq!(
        web["reason"],
        "left out: no active file matches `src/ui/**/*.tsx`, `*.css`"
    );
    // Each workflow with its path, as the text form gives it.
    assert_eq!(
        document["rules"]["workflows"],
        serde_json::json!([{
            "name": "release",
            "kind": "workflow",
            "path": ".clinerules/workflows/release.md",
        }])
    );
}

#[test]
fn a_folder_of_too_many_rules_files_is_read_up_to_the_limit() {
    let workspace = workspace_with_project("date = \"2026-11-01\"\n");
    let many = workspace.root().join("many/.clinerules");
    std::fs::create_dir_all(&many).unwrap();
    for index in 0..300 {
        std::fs::write(many.join(format!("rule-{index:03}.md")), "x\n").unwrap();
    }
    let run = workspace.run(&["build", "--context", "project", "--rules", "many"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.matches("[clinerules] rule-").count(), 256);
    // The first 256 by path: the limit cuts deterministically.
    assert!(run.stdout.contains("rule-255 "), "{}", run.stdout);
    assert!(!run.stdout.contains("rule-256 "), "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "warning[too-many-rule-files]: more than 256 rules files; the rest are skipped"
        ),
        "{}",
        run.stderr
    );
}

// Each rule's globs are built into a matcher and matched against every active file: 256 rules
// files of 1000 globs each, with 3000 active files, took 26 s to validate. The rules read may
// hold 10,000 globs in all; a rule that would go past that is skipped with a warning at its
// globs, and a later rule that still fits is not.
#[test]
fn the_rules_read_hold_at_most_ten_thousand_globs_in_all() {
    let workspace = workspace_with_project(
        "date = \"2026-11-01\"\nrules_from = [\"many\"]\n\
         active_files = [\"gen/9/998/a.ts\", \"gen/10/0/a.ts\", \"late/a.ts\"]\n",
    );
    let many = workspace.root().join("many/.clinerules");
    std::fs::create_dir_all(&many).unwrap();
    let globs = |rule: usize, count: usize| {
        (0..count)
            .map(|index| format!("\"gen/{rule}/{index}/**\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // Ten rules of 999 globs: 9,990. The eleventh's eleven would make 10,001.
    for rule in 0..10 {
        let text = format!("---\nglobs: [{}]\n---\nrule {rule}\n", globs(rule, 999));
        std::fs::write(many.join(format!("rule-{rule:02}.md")), text).unwrap();
    }
    let text = format!("---\nglobs: [{}]\n---\nrule 10\n", globs(10, 11));
    std::fs::write(many.join("rule-10.md"), text).unwrap();
    // Ten more make exactly 10,000.
    let late = (0..10)
        .map(|index| {
            format!(
                "\"late{}/**\"",
                if index == 9 {
                    String::new()
                } else {
                    index.to_string()
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    std::fs::write(
        many.join("rule-11.md"),
        format!("---\nglobs: [{late}]\n---\nrule 11\n"),
    )
    .unwrap();

    let run = workspace.run(&["build", "--context", "project"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("] rule-09 "), "{}", run.stdout);
    assert!(!run.stdout.contains("] rule-10 "), "{}", run.stdout);
    assert!(run.stdout.contains("] rule-11 "), "{}", run.stdout);

    let report = workspace.validate();
    let warning = report.single();
    assert_eq!(
        (
            warning.code.as_str(),
            warning.file.as_str(),
            warning.line,
            warning.column
        ),
        ("too-many-globs", "many/.clinerules/rule-10.md", 2, 10),
        "{}",
        warning.message
    );
    assert_eq!(
        warning.message,
        "with this rule's globs the rules read hold more than 10000 globs in all; the rule is skipped"
    );

    let output = workspace
        .command()
        .args(["explain", "--context", "project", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let document: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let rules = document["rules"]["rules"].as_array().unwrap();
    let reason = |name: &str| {
        rules
            .iter()
            .find(|rule| rule["name"] == name)
            .map(|rule| rule["reason"].clone())
    };
    assert_eq!(
        reason("rule-10"),
        Some("left out: the rules before it hold as many globs as a context's rules may".into())
    );
    assert_eq!(
        reason("rule-11"),
        Some("applies: active file `late/a.ts` matches `late/**`".into())
    );
}

/// A context lists at most 10,000 active files (its schema says so).
#[test]
fn a_context_lists_at_most_ten_thousand_active_files() {
    let files = (0..10_001)
        .map(|index| format!("\"f{index}\""))
        .collect::<Vec<_>>()
        .join(",");
    let workspace = workspace_with_project(&format!(
        "date = \"2026-11-01\"\nactive_files = [{files}]\n"
    ));
    let error = workspace.validate().single();
    assert_eq!(
        (error.code.as_str(), error.file.as_str(), error.line),
        ("invalid-value", "examples/contexts/project.toml", 2),
        "{}",
        error.message
    );
}

/// The project compiled end to end, as an agent would: its rules and its MCP settings (one
/// server disabled, one disconnected), into the shipped library's prompt.
#[test]
fn a_real_project_compiles_end_to_end() {
    let project = project();
    let settings = format!("{project}/.vscode/mcp_settings.json");
    let root = repo_root();
    let output = promptc()
        .args(["build", "--workspace", root.to_str().unwrap()])
        .args(["--family", "next-gen", "--context", "no-mcp"])
        .args(["--rules", &project, "--files", "src/ui/app.tsx"])
        .args(["--mcp", &settings])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let prompt = stdout(&output);
    // Only the server that counts is described; settings the prompt has no use for stay out.
    assert!(
        prompt.contains("## issues (`npx -y issues-mcp --repo acme/shop`)"),
        "{prompt}"
    );
    assert!(!prompt.contains("## design") && !prompt.contains("## metrics"));
    assert!(!prompt.contains("kept out of the prompt"));
    let mcp = prompt.find("\n\nMCP SERVERS\n").unwrap() + 2;
    let mcp_end = prompt[mcp..]
        .find("\n====\n")
        .map_or(prompt.len(), |end| mcp + end);
    let rules = prompt.find("USER'S CUSTOM INSTRUCTIONS").unwrap();
    insta::assert_snapshot!(format!("{}\n\n{}", &prompt[mcp..mcp_end], &prompt[rules..]));
}

/// A glob that parses but whose matcher cannot be built (too large) is named, and pointed
/// at, as the pattern it is: not as an empty glob at the `globs` key.
#[test]
fn a_glob_too_large_to_build_is_named_and_located() {
    let huge = format!("src/{}", "[a-z]".repeat(200_000));
    let rule = format!(
        "---\ndescription: globs naming `s` and `src/` in a key and the text\nglobs:\n  - \"src/**/*.tsx\"\n  - \"{huge}\"\n---\nUse src/ and {huge} here.\n"
    );
    let workspace = Fixture::minimal()
        .file("examples/contexts/project.toml", "date = \"2026-11-01\"\n")
        .file("project/.clinerules/web.md", &rule)
        .write();
    let run = workspace.run(&["build", "--context", "project", "--rules", "project"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (line, column) = common::position_of(&rule, &huge);
    assert_eq!((line, column), (5, 6));
    // Named by its start and end: the message does not repeat a megabyte the location
    // already points at.
    let head: String = huge.chars().take(40).collect();
    let tail: String = huge.chars().skip(huge.chars().count() - 20).collect();
    assert!(
        run.stderr.contains(&format!(
            "warning[bad-glob]: glob `{head}…{tail}` does not parse: error building NFA"
        )),
        "{}",
        &run.stderr[..run.stderr.len().min(400)]
    );
    assert!(run.stderr.len() < 2_000, "{}", run.stderr.len());
    assert!(
        run.stderr.contains(&format!(
            " --> project/.clinerules/web.md:{line}:{column}\n"
        )),
        "{}",
        &run.stderr[..run.stderr.len().min(400)]
    );
    assert!(!run.stderr.contains("glob ``"), "an empty glob is named");
}

// Braces nested tens of thousands deep in a rule's glob, or in a `glob` test's pattern,
// overflowed the stack while globset built the glob's regex: the process aborted.
#[test]
fn a_glob_whose_braces_nest_too_deep_is_named_not_a_crash() {
    let deep = format!("{}a{}", "{".repeat(60_000), "}".repeat(60_000));
    let rule = format!("---\nglobs: [\"{deep}\"]\n---\nA rule.\n");
    let component = format!("{{% if cwd is glob(\"{deep}\") %}}x{{% endif %}}\n");
    let workspace = Fixture::minimal()
        .file("examples/contexts/project.toml", "date = \"2026-11-01\"\n")
        .file("project/.clinerules/deep.md", &rule)
        .file("components/intro.md", &component)
        .write();
    let run = workspace.run(&["build", "--context", "project", "--rules", "project"]);
    assert_eq!(run.code, 1, "{}", &run.stderr[..run.stderr.len().min(600)]);
    assert!(
        run.stderr.contains(
            "does not parse: its `{…}` alternatives nest more than 32 deep; the rule is skipped"
        ),
        "{}",
        &run.stderr[..run.stderr.len().min(600)]
    );
    assert!(
        run.stderr.contains("error[render-failed]")
            && run.stderr.contains("alternatives nest more than 32 deep"),
        "{}",
        &run.stderr[..run.stderr.len().min(600)]
    );
}

// A context inheriting `rules_from` through `extends` reported every problem of those folders
// again, at its own first line (1:1), and a missing folder was located at the folder's own
// name, not at the setting. Each is reported once, at the value of the context that names it.
#[test]
fn rules_folder_problems_are_reported_once_at_the_context_that_names_the_folder() {
    let base = format!(
        "{}rules_from = [\"gone\", \"../outside\"]\n",
        common::CONTEXT
    );
    let workspace = Fixture::minimal()
        .file("examples/contexts/basic.toml", &base)
        .file("examples/contexts/child.toml", "extends = \"basic\"\n")
        .file("examples/contexts/grandchild.toml", "extends = \"child\"\n")
        .write();
    let found: Vec<(String, String, u64, u64)> = workspace
        .validate()
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file, d.line, d.column))
        .collect();
    let at = |needle: &str| common::position_of(&base, needle);
    let here = |code: &str, needle: &str| {
        let (line, column) = at(needle);
        (
            code.to_string(),
            "examples/contexts/basic.toml".to_string(),
            line,
            column,
        )
    };
    assert_eq!(
        found,
        [
            here("rules-folder-missing", "\"gone\""),
            here("rules-from-outside", "\"../outside\""),
        ]
    );
}

// Contexts that name the same rules folders share one reading of them: the folders were read
// again for each context (a hundred contexts of two lines naming a folder of 4 MB held it a
// hundred times), and a problem in them was reported once per context. Each context still
// gets the folder's rules.
#[test]
fn contexts_naming_the_same_rules_folder_share_one_reading() {
    let context = format!("{}rules_from = [\"proj\"]\n", common::CONTEXT);
    let workspace = Fixture::minimal()
        .file(
            "components/intro.md",
            "{% for rule in rules %}{{ rule.text }}{% endfor %}\n",
        )
        .file("examples/contexts/basic.toml", &context)
        .file("examples/contexts/other.toml", &context)
        .file(
            "examples/contexts/third.toml",
            format!(
                "{}rules_from = [\"proj\"]\nmode = \"plan\"\n",
                common::CONTEXT
            ),
        )
        .file("proj/.clinerules/style.md", "Indent with tabs.\n")
        .file(
            "proj/.clinerules/broken.md",
            "---\ntags: [\"web\"\nglobs: [\"*\"]\n---\nNever applies.\n",
        )
        .write();
    let found: Vec<(String, String)> = workspace
        .validate()
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file))
        .collect();
    assert_eq!(
        found,
        [(
            "frontmatter-syntax".to_string(),
            "proj/.clinerules/broken.md".to_string()
        )]
    );
    for name in ["basic", "other", "third"] {
        let run = workspace.run(&["build", "--context", name]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(
            run.stdout.contains("Indent with tabs."),
            "{name}: {}",
            run.stdout
        );
        assert!(!run.stdout.contains("Never applies."), "{name}");
    }
}

// Rules deeper than the walk goes, and a rules folder that is a link, were left out without
// a word (a `.clinerules` file that is a link was told of): each is a warning at its path.
// Deep folders elsewhere in the project are none of the rules' business.
#[cfg(unix)]
#[test]
fn rules_left_out_of_a_folder_are_told_of() {
    let workspace = Fixture::minimal()
        .file(
            "examples/contexts/basic.toml",
            format!("{}rules_from = [\"proj\"]\n", common::CONTEXT),
        )
        .file("proj/.clinerules/a/b/c/d/five.md", "Five levels down.\n")
        .file("proj/.clinerules/a/b/c/d/e/six.md", "Six levels down.\n")
        .file("proj/src/a/b/c/d/e/f/g/code.md", "Not a rule.\n")
        .file("elsewhere/rule.mdc", "Outside the project.\n")
        .write();
    std::fs::create_dir_all(workspace.root().join("proj/.cursor")).unwrap();
    std::os::unix::fs::symlink(
        workspace.root().join("elsewhere"),
        workspace.root().join("proj/.cursor/rules"),
    )
    .unwrap();
    let found: Vec<(String, String)> = workspace
        .validate()
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file))
        .collect();
    assert_eq!(
        found,
        [
            (
                "rule-unreadable".to_string(),
                "proj/.cursor/rules".to_string()
            ),
            (
                "rule-unreadable".to_string(),
                "proj/.clinerules/a/b/c/d/e/six.md".to_string()
            ),
        ]
    );
}

// A rule with two globs that do not parse told of the first alone: each is a warning at its
// place.
#[test]
fn every_glob_of_a_rule_that_does_not_parse_is_told() {
    let workspace = Fixture::minimal()
        .file(
            "proj/.cursor/rules/x.mdc",
            "---\nglobs: [\"src/[ui/**/*.tsx\", \"ok/*.ts\", \"src/{a,b/*.css\"]\n---\nA rule.\n",
        )
        .write();
    let run = workspace.run(&["explain", "--rules", "proj"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for (glob, place) in [("src/[ui/**/*.tsx", "2:10"), ("src/{a,b/*.css", "2:41")] {
        assert!(
            run.stderr
                .contains(&format!("warning[bad-glob]: glob `{glob}` does not parse"))
                && run
                    .stderr
                    .contains(&format!("proj/.cursor/rules/x.mdc:{place}")),
            "{glob}: {}",
            run.stderr
        );
    }
    assert_eq!(
        run.stderr.matches("warning[bad-glob]").count(),
        2,
        "{}",
        run.stderr
    );
    // Unquoted, each is placed at its own item: `[ab` is not the one inside `src/[ab`.
    let workspace = Fixture::minimal()
        .file(
            "proj/.cursor/rules/a.mdc",
            "---\nglobs: src/[ab, [ab, ok/**\n---\nBody\n",
        )
        .write();
    let run = workspace.run(&["explain", "--rules", "proj"]);
    for place in ["2:8", "2:17"] {
        assert!(
            run.stderr
                .contains(&format!("proj/.cursor/rules/a.mdc:{place}")),
            "{place}: {}",
            run.stderr
        );
    }
}

// What stands at a rules location but is not what rules are read from was skipped without a
// word, where a link to a folder was told of: `.cursor` as a link to a folder, a link to
// nothing, or a file; `.cursor/rules` as a file; `AGENTS.md` and `.cursorrules` as folders.
#[cfg(unix)]
#[test]
fn what_stands_at_a_rules_location_but_holds_no_rules_is_told_of() {
    use std::os::unix::fs::symlink;
    let workspace = Fixture::minimal()
        .file(
            "real/rules/style.mdc",
            "---\nalwaysApply: true\n---\nA rule.\n",
        )
        .file("p3/.cursor", "")
        .file("p4/.cursor/rules", "")
        .file("p5/AGENTS.md/x.md", "In a folder.\n")
        .file("p5/.cursorrules/y.md", "In a folder.\n")
        .write();
    let root = workspace.root();
    for project in ["p1", "p2"] {
        std::fs::create_dir_all(root.join(project)).unwrap();
    }
    symlink(root.join("real"), root.join("p1/.cursor")).unwrap();
    symlink(root.join("nowhere"), root.join("p2/.cursor")).unwrap();
    for (project, paths, says) in [
        (
            "p1",
            &["p1/.cursor"][..],
            "it is a link to a folder: links are not followed into folders",
        ),
        ("p2", &["p2/.cursor"], "it is a link to nothing"),
        (
            "p3",
            &["p3/.cursor"],
            "it is a file, where a folder is read: Cursor's rules are `.mdc` files in `.cursor/rules/`",
        ),
        (
            "p4",
            &["p4/.cursor/rules"],
            "it is a file, where a folder is read",
        ),
        (
            "p5",
            &["p5/.cursorrules", "p5/AGENTS.md"],
            "it is a folder, where a rules file is read",
        ),
    ] {
        let run = workspace.run(&["explain", "--rules", project]);
        assert_eq!(run.code, 0, "{project}: {}", run.stderr);
        for path in paths {
            assert!(
                run.stderr.contains(&format!(
                    "warning[rule-unreadable]: rules file `{path}` cannot be read ({says}"
                )),
                "{project}: {}",
                run.stderr
            );
        }
        assert_eq!(
            run.stderr.matches("warning[").count(),
            paths.len(),
            "{project}: {}",
            run.stderr
        );
        // `explain` lists each beside the rules, as it lists a file it could not read.
        let skipped = run
            .stdout
            .split("rules files skipped (see the warnings):\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{project}: {}", run.stdout));
        for path in paths {
            let in_project = path.strip_prefix(&format!("{project}/")).unwrap();
            assert!(
                skipped.contains(&format!("{in_project}) "))
                    || skipped.contains(&format!("{in_project})\n")),
                "{project}: {}",
                run.stdout
            );
        }
        assert!(skipped.contains(says), "{project}: {}", run.stdout);
    }
}

// globset's set of a rule's globs kept, while it searched a path, a position per state of all
// the globs for each glob: a rule of a thousand globs of ninety `?` each, matched against a
// long active file, asked for gigabytes and the process aborted. The globs are now matched
// together without those positions.
#[test]
fn many_long_globs_match_a_long_path_within_the_memory_limit() {
    // An irregular path, so that the engine's lazy automaton gives up and it searches state by
    // state: 3000 characters of `a`, `b` and `/`, from a fixed seed.
    let long_path = common::irregular_text(3000, &['a', 'b', '/']);
    let workspace = workspace_with_project(&format!(
        "date = \"2026-11-01\"\nrules_from = [\"many\"]\nactive_files = [\"{long_path}/x\"]\n"
    ));
    let many = workspace.root().join("many/.clinerules");
    std::fs::create_dir_all(&many).unwrap();
    let globs = (0..500)
        .map(|index| format!("\"**/{}{index}\"", "?".repeat(90)))
        .chain(["\"**/x\"".to_string()])
        .collect::<Vec<_>>()
        .join(", ");
    std::fs::write(
        many.join("long.md"),
        format!("---\nglobs: [{globs}]\n---\nThe long rule.\n"),
    )
    .unwrap();
    let stdout = workspace.succeeds_within_memory(
        "256M",
        &["build", "--family", "generic", "--context", "project"],
    );
    // The last glob matches the path; the others, each wanting 91 characters after a slash,
    // do not.
    assert!(stdout.contains("The long rule."), "{stdout}");
}

// `explain` lists every rules file it found: one whose frontmatter does not parse or is never
// closed was told of as a warning and left out of the list, as if it were not there; a rule
// the context lists itself (no kind, no file) was shown as `( rule)`.
#[test]
fn explain_lists_the_rules_files_it_skipped_and_the_context_s_own_rules() {
    let workspace = Fixture::minimal()
        .file(
            "examples/contexts/listed.toml",
            "date = \"2026-11-01\"\n\n[[rules]]\nname = \"go-style\"\ntext = \"Tabs.\"\nmetadata = { globs = [\"*.go\"] }\n",
        )
        .write();
    let project = workspace.tmp().join("project");
    let rules = project.join(".clinerules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(rules.join("good.md"), "Write tests.\n").unwrap();
    std::fs::write(rules.join("broken.md"), "---\nglobs: [\n---\nText.\n").unwrap();
    std::fs::write(
        rules.join("open.md"),
        "---\ndescription: never closed\nText.\n",
    )
    .unwrap();
    let run = workspace.run(&[
        "explain",
        "--context",
        "listed",
        "--rules",
        project.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "- go-style: left out: no active file matches `*.go` (a rule the context lists)"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("+ good: ") && run.stdout.contains(".clinerules/good.md)"),
        "{}",
        run.stdout
    );
    let skipped = run
        .stdout
        .split("rules files skipped (see the warnings):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        skipped.contains("- broken: rule frontmatter does not parse")
            && skipped.contains("(clinerules rule .clinerules/broken.md)"),
        "{skipped}"
    );
    assert!(
        skipped.contains("- open: ") && skipped.contains(".clinerules/open.md"),
        "{skipped}"
    );
    let json = workspace.run(&[
        "explain",
        "--context",
        "listed",
        "--rules",
        project.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let names: Vec<&str> = value["rules"]["skipped"]
        .as_array()
        .unwrap_or_else(|| panic!("{value}"))
        .iter()
        .map(|rule| rule["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["broken", "open"]);
}

// Rules of the same name from two folders (a global `AGENTS.md` and the project's) could not
// be told apart, in `explain` or a template, nor switched off one at a time: a rule carries
// the folder it was read from, and `FOLDER/PATH` names it alone.
#[test]
fn rules_of_one_name_from_two_folders_are_told_apart_and_switched_off_apart() {
    let workspace = Fixture::minimal()
        .file(
            "components/intro.md",
            "{% for rule in rules %}[{{ rule.folder }}] {{ rule.name }}: {{ rule.text }}\n{% endfor %}",
        )
        .write();
    let root = workspace.tmp();
    for (folder, text) in [("global", "Global advice."), ("project", "Project advice.")] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
        std::fs::write(root.join(folder).join("AGENTS.md"), text).unwrap();
    }
    let global = root.join("global");
    let project = root.join("project");
    let (global, project) = (global.to_str().unwrap(), project.to_str().unwrap());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "build",
            "--context",
            "basic",
            "--global-rules",
            global,
            "--rules",
            project,
        ];
        args.extend_from_slice(extra);
        let run = workspace.run(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run
    };
    let both = run(&[]);
    assert!(
        both.stdout.contains(&format!(
            "[{global}] AGENTS: Global advice.\n[{project}] AGENTS: Project advice."
        )),
        "{}",
        both.stdout
    );
    // By name, both go; by folder and path, only that one.
    let none = run(&["--disable-rule", "AGENTS"]);
    assert!(!none.stdout.contains("advice"), "{}", none.stdout);
    let qualified = format!("{project}/AGENTS.md");
    let one = run(&["--disable-rule", &qualified]);
    assert!(
        one.stdout.contains("Global advice.") && !one.stdout.contains("Project advice."),
        "{}",
        one.stdout
    );
    assert!(!one.stderr.contains("warning"), "{}", one.stderr);
    // `explain` names the folder where two folders give the same path.
    let explained = workspace.run(&[
        "explain",
        "--context",
        "basic",
        "--global-rules",
        global,
        "--rules",
        project,
        "--disable-rule",
        &qualified,
    ]);
    assert!(
        explained.stdout.contains(&format!(
            "+ AGENTS: applies: it has no globs (global rule {global}/AGENTS.md)"
        )) && explained.stdout.contains(&format!(
            "- AGENTS: left out: switched off by --disable-rule (agents rule {project}/AGENTS.md)"
        )),
        "{}",
        explained.stdout
    );
}

// The output folder named through a link into a rules folder's `.clinerules` passed the check
// made on the path as written: the first build wrote its outputs where the next read rules.
#[cfg(unix)]
#[test]
fn an_output_folder_linked_into_a_rules_location_is_refused() {
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[build]\nout = \"lnk\"\n", common::MANIFEST),
        )
        .file(
            "examples/contexts/basic.toml",
            "date = \"2026-11-01\"\nrules_from = [\"proj\"]\n",
        )
        .file("proj/.clinerules/style.md", "Keep it short.\n")
        .write();
    std::os::unix::fs::symlink("proj/.clinerules", workspace.root().join("lnk")).unwrap();
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "error[outputs-read-as-rules]: `lnk` lies where context `basic` reads rules files"
        ),
        "{}",
        run.stderr
    );
}

// A frontmatter's keys are judged as a YAML file's are: a second `<<` was merged without a
// word, and `0x1` beside `1` was judged by the reader alone; each is a duplicate, at the
// second key, the first's line (of the file, not of the frontmatter) named.
#[test]
fn a_frontmatter_s_keys_are_judged_as_a_yaml_file_s() {
    let context = format!("{}rules_from = [\"proj\"]\n", common::CONTEXT);
    let workspace = Fixture::minimal()
        .file("examples/contexts/basic.toml", &context)
        .file(
            "proj/.clinerules/merged.md",
            "---\na: &a {x: 1}\nb: &b {y: 2}\n<<: *a\n<<: *b\n---\nNever applies.\n",
        )
        .file(
            "proj/.clinerules/numbered.md",
            "---\nextra:\n  0x1: a\n  1: b\n---\nNever applies.\n",
        )
        .file(
            "proj/.clinerules/fine.md",
            "---\nbase: &base {description: Kept.}\n<<: *base\n---\nIndent with tabs.\n",
        )
        .write();
    let found: Vec<(String, String, u64, String)> = workspace
        .validate()
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file, d.line, d.message))
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found
            .iter()
            .any(|(code, file, line, message)| code == "frontmatter-syntax"
                && file == "proj/.clinerules/merged.md"
                && *line == 5
                && message.contains("duplicate key `<<`: line 4 merges")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(code, file, line, message)| code == "frontmatter-syntax"
                && file == "proj/.clinerules/numbered.md"
                && *line == 4
                && message.contains("duplicate key `1`: `0x1` on line 3")),
        "{found:?}"
    );
}

// A rules file past a byte limit is told which limit and what would fix it: the file's own
// (`limits.file_bytes`, which the workspace may raise), or what is left of the bytes one
// compile's rules may hold together (which it may not). It was told to be a "readable
// regular file", as a FIFO is.
#[test]
fn a_rules_file_too_large_is_told_which_limit_it_passes() {
    let three_mib = "Rule text.\n".repeat(3 * 1024 * 1024 / 11);
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[limits]\nfile_bytes = 1024\n", common::MANIFEST),
        )
        .file("small/AGENTS.md", "Rule text.\n".repeat(200))
        .file("big/.clinerules/a.md", &three_mib)
        .file("big/.clinerules/b.md", &three_mib)
        .file("big/.clinerules/c.md", &three_mib)
        .write();
    let run = workspace.run(&["explain", "--rules", "small"]);
    assert!(
        run.stderr.contains(
            "warning[rule-too-large]: rules file `small/AGENTS.md` is larger than the limit of a data file (1024 bytes); it is skipped"
        ) && run.stderr.contains("raise `limits.file_bytes` in promptc.toml"),
        "{}",
        run.stderr
    );
    // With the file limit raised past each file, the third passes what the rules may hold
    // together (8 MiB): the first two are read.
    std::fs::write(
        workspace.root().join("promptc.toml"),
        format!("{}[limits]\nfile_bytes = 4194304\n", common::MANIFEST),
    )
    .unwrap();
    let run = workspace.run(&["explain", "--rules", "big"]);
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("warning["))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(
        warnings[0].starts_with(
            "warning[rule-too-large]: rules file `big/.clinerules/c.md` is larger than what is left of the bytes the rules read may hold together"
        ) && run.stderr.contains("move rules you do not use out of the folder"),
        "{}",
        run.stderr
    );
}
