//! Hostile and unusual input: nothing is written or deleted outside the workspace, nothing
//! panics, and every mistake gets a diagnostic. Each test answers a defect found in review.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::io::Read;
use std::process::Stdio;

use common::Fixture;

const OUTPUT: &str = "examples/prompts/generic/basic.md";

#[test]
fn an_edited_output_index_cannot_delete_files_outside_the_output_folder() {
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let victim = workspace.tmp().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    std::fs::write(workspace.root().join("notes.md"), "keep me too").unwrap();
    let index = workspace.root().join("examples/prompts/.promptc-outputs");
    std::fs::write(
        &index,
        format!(
            "{OUTPUT}\n{}\n../victim.txt\nexamples/prompts/../notes.md\npromptc.toml\n",
            victim.display()
        ),
    )
    .unwrap();
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !run.stderr.lines().any(|line| line.starts_with("removed")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("0 removed"), "{}", run.stderr);
    assert!(victim.exists());
    assert!(workspace.root().join("notes.md").exists());
    assert!(workspace.root().join("promptc.toml").exists());
}

#[test]
fn names_and_paths_cannot_reach_outside_the_workspace() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!("{}family = \"../../escape\"\n", common::VARIANT),
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "invalid-value");
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line),
        ("variants/generic.toml", 5)
    );

    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}[paths]\ncontexts = \"/etc\"\n\n[build]\nout = \"../elsewhere\"\n",
                common::MANIFEST
            ),
        )
        .validate();
    let codes: Vec<(String, u64)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.line))
        .collect();
    assert!(
        codes.contains(&("path-escapes-workspace".into(), 4)),
        "{codes:?}"
    );
    assert!(
        codes.contains(&("path-escapes-workspace".into(), 7)),
        "{codes:?}"
    );
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let workspace = Fixture::minimal().write();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_promptc"))
        .current_dir(workspace.root())
        .args(["build", "--context", "basic", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 4];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The reader is gone; promptc must not panic writing the rest.
    let output = child.wait_with_output().unwrap();
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(matches!(output.status.code(), Some(0 | 2)));
}

#[test]
fn a_template_cannot_exhaust_memory_with_indent() {
    let report = Fixture::minimal()
        .file("components/intro.md", "{{ cwd | indent(999999999999) }}\n")
        .validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "render-failed");
    assert!(
        diagnostic
            .message
            .contains("indent width 999999999999 is above the limit of 256"),
        "{}",
        diagnostic.message
    );
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line),
        ("components/intro.md", 1)
    );
}

#[test]
fn show_effective_leaves_out_null_placeholders() {
    let workspace = Fixture::minimal()
        .file(
            "variants/child.yaml",
            "id: child\nextends: generic\nplaceholders:\n  EMPTY: ~\n  NAME: Ada\n",
        )
        .write();
    let run = workspace.run(&["show", "--effective", "child"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("NAME = \"Ada\""), "{}", run.stdout);
    assert!(!run.stdout.contains("EMPTY"), "{}", run.stdout);
}

#[test]
fn a_predicate_cannot_read_a_later_one() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[predicates]\nfirst = \"second\"\nsecond = \"true\"\n",
                common::MANIFEST
            ),
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "unknown-context-field");
    // Line 5 `first = "second"`: the name at 10.
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line, diagnostic.column),
        ("promptc.toml", 5, 10)
    );
}

#[test]
fn json_context_problems_point_at_their_line() {
    let workspace = Fixture::minimal().write();
    let context = workspace.tmp().join("ctx.json");
    std::fs::write(
        &context,
        "{\n  \"date\": \"2026-01-01\",\n  \"cwd\": 5,\n  \"bogus\": 1\n}\n",
    )
    .unwrap();
    let run = workspace.run(&[
        "--color",
        "never",
        "build",
        "--context",
        context.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("ctx.json:3:10"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("wrong type: expected a string, found an integer")
    );
    assert!(run.stderr.contains("ctx.json:4:3"), "{}", run.stderr);
    assert!(run.stderr.contains("unknown key `bogus`"));
}

#[test]
fn repeated_ids_are_reported() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\"]\ntools = [\"read_file\", \"read_file\"]\n",
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(
        (
            diagnostic.code.as_str(),
            diagnostic.line,
            diagnostic.column,
            diagnostic.message.as_str()
        ),
        ("duplicate-id", 4, 23, "duplicate tool id `read_file`")
    );

    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            format!(
                "{}\n[[parameters]]\nname = \"path\"\ninstruction = \"Again.\"\n",
                common::TOOL
            ),
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(
        (diagnostic.code.as_str(), diagnostic.message.as_str()),
        ("duplicate-id", "duplicate parameter id `path`")
    );

    // `intro-x` and `intro_x` would both fill INTRO_X_SECTION.
    let report = Fixture::minimal()
        .file("components/a.toml", "id = \"intro-x\"\ntemplate = \"A\"\n")
        .file("components/b.toml", "id = \"intro_x\"\ntemplate = \"B\"\n")
        .validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "duplicate-slot");
    assert_eq!(diagnostic.file, "components/b.toml");
    assert_eq!(
        diagnostic.message,
        "component `intro_x` fills slot `INTRO_X_SECTION`, which `intro-x` already fills"
    );
}

#[test]
fn token_settings_name_known_families() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[tokens]\nexact = [\"gtp\"]\n", common::MANIFEST),
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(
        (
            diagnostic.code.as_str(),
            diagnostic.line,
            diagnostic.message.as_str()
        ),
        ("unknown-reference", 4, "unknown family `gtp`")
    );
    let workspace = Fixture::minimal().write();
    let run = workspace.run(&["stats", "--family", "nope"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no variant has family `nope`"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_text() {
    let workspace = Fixture::minimal()
        .file("components/intro.md", "\u{feff}Intro in {{ cwd }}.\n")
        .write();
    let run = workspace.run(&["build", "--context", "basic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains('\u{feff}'));
    assert!(run.stdout.contains("\nIntro in ."), "{}", run.stdout);
}

#[test]
fn an_unknown_postprocess_rule_lists_the_rules() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[[postprocess]]\nrule = \"squash\"\n", common::MANIFEST),
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(
        (diagnostic.code.as_str(), diagnostic.line, diagnostic.column),
        ("invalid-value", 5, 8)
    );
    assert_eq!(
        diagnostic.message,
        "invalid value `squash`: expected one of trim_trailing_whitespace, collapse_blank_lines, drop_empty_sections, trim, regex"
    );
}

#[test]
fn conditions_may_call_the_template_functions() {
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            "id = \"intro\"\nwhen = \"range(3) | length > 2 and dict(a=1).a == 1\"\n",
        )
        .validate();
    assert_eq!(report.counts(), (0, 0), "{:?}", report.diagnostics());
}
