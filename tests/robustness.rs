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
    // A prompt of 1 MiB and more: far beyond what a pipe buffers (64 KiB on Linux), so promptc
    // is still writing when the reader goes away, and its write fails with a broken pipe.
    let filler = "Keep every line of this long component.\n".repeat(1 << 15);
    let workspace = Fixture::minimal()
        .file(
            "components/intro.md",
            format!("{filler}{}", common::COMPONENT_TEMPLATE),
        )
        .write();
    let whole = workspace.run(&["build", "--context", "basic"]);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    assert!(whole.stdout.len() > 1 << 20, "{}", whole.stdout.len());
    assert_eq!(whole.stderr, "");

    let mut child = common::promptc_process()
        .current_dir(workspace.root())
        .env_remove("SOURCE_DATE_EPOCH")
        .args(["build", "--context", "basic"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 4];
    stdout.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"You ");
    // The reader is gone; the rest of the prompt has nowhere to go.
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr, "", "a closed stdout is not an error to report");
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

// An undefined name was placed at the first time its word appears in the text, prose
// included ("Use the widget here: {{ widget }}" pointed at the prose); it is placed where an
// expression reads it.
#[test]
fn a_name_is_placed_where_an_expression_reads_it_not_in_the_prose() {
    let report = Fixture::minimal()
        .file(
            "components/intro.md",
            "The gadget is great, and {{ 'gadget' }} too.\n{{ gadget }}\n",
        )
        .validate();
    let found = report.single();
    assert_eq!(
        (
            found.code.as_str(),
            found.file.as_str(),
            found.line,
            found.column
        ),
        ("undefined-placeholder", "components/intro.md", 2, 4),
        "{found:?}"
    );
}

/// A null the user wrote as a value (a placeholder, a `model.extra` setting, an item of a
/// list) is what the variant holds: YAML and JSON show it, TOML, which has no null, refuses
/// it by name (as `context` does). They were left out, without a word; the variant's unset
/// fields still are.
#[test]
fn show_keeps_the_nulls_the_user_wrote_or_names_them() {
    let workspace = Fixture::minimal()
        .file(
            "variants/child.yaml",
            "id: child\nextends: generic\nplaceholders:\n  EMPTY: ~\n  NAME: Ada\n  LIST: [1, {y: null}]\nmodel:\n  extra:\n    n: null\n",
        )
        .write();
    let run = workspace.run(&["show", "child", "--format", "yaml"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for kept in ["EMPTY: null", "NAME: Ada", "- \"y\": null", "\"n\": null"] {
        assert!(run.stdout.contains(kept), "{kept}: {}", run.stdout);
    }
    // The unset fields of the variant (`match`, `description`, …) are not printed as null.
    assert_eq!(run.stdout.matches(": null").count(), 3, "{}", run.stdout);
    let json = workspace.run(&["show", "child", "--format", "json"]);
    assert!(json.stdout.contains("\"EMPTY\": null"), "{}", json.stdout);
    let toml = workspace.run(&["show", "child", "--format", "toml"]);
    assert_eq!(toml.code, 2, "{}", toml.stdout);
    assert!(
        toml.stderr.contains(
            "`placeholders.EMPTY` is null, which TOML cannot write: ask for `--format json`"
        ),
        "{}",
        toml.stderr
    );
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
    assert_eq!(diagnostic.code, "not-yet-defined");
    assert_eq!(
        diagnostic.message,
        "`second` is not defined here: predicates see only the predicates declared before them"
    );
    // Line 5 `first = "second"`: the name at 10.
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line, diagnostic.column),
        ("promptc.toml", 5, 10)
    );
    // One that reads itself is told so: no order of the predicates fixes it, which the help
    // to reorder them suggested.
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[predicates]\nplan = \"plan\"\n", common::MANIFEST),
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(
        diagnostic.message,
        "`plan` is not defined here: it is the predicate being defined, which cannot read itself"
    );
    let run = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[predicates]\nplan = \"plan\"\n", common::MANIFEST),
        )
        .write()
        .run(&["validate"]);
    assert!(
        run.stderr.contains("help: write what it stands for"),
        "{}",
        run.stderr
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
    // At the name that repeats.
    let diagnostic = report.single();
    assert_eq!(
        (
            diagnostic.code.as_str(),
            diagnostic.line,
            diagnostic.column,
            diagnostic.message.as_str()
        ),
        ("duplicate-id", 10, 8, "duplicate parameter name `path`")
    );

    // `intro-x` and `intro_x` would both fill INTRO_X_SECTION.
    let report = Fixture::minimal()
        .file("components/a.toml", "id = \"intro-x\"\ntemplate = \"A\"\n")
        .file("components/b.toml", "id = \"intro_x\"\ntemplate = \"B\"\n")
        .validate();
    // Beside it, that no variant lists either (warnings).
    assert_eq!(
        report.codes(),
        ["duplicate-slot", "unused-component", "unused-component"]
    );
    let diagnostic = report.diagnostics().remove(0);
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
        "invalid value `squash`: expected one of trim_trailing_whitespace, collapse_blank_lines, drop_empty_sections, trim, separator_spacing, drop_empty_headings, regex"
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

// The outputs never land on the workspace's own files.
#[test]
fn an_output_folder_that_overlaps_the_sources_is_refused() {
    let fixture = Fixture::minimal().file(
        "promptc.toml",
        format!("{}[build]\nout = \"variants\"\n", common::MANIFEST),
    );
    let report = fixture.validate();
    let found = report.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str(), found.line),
        ("output-overlaps-sources", "promptc.toml", 4)
    );
    assert!(
        found.message.contains("overlaps `paths.variants`"),
        "{}",
        found.message
    );
    // A folder of the paths set over the default outputs: the help is about that setting,
    // not the outputs' folder, which it named as the fix.
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[paths]\nschema = \"examples\"\n", common::MANIFEST),
        )
        .write();
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "help: keep the two folders apart: point `paths.schema` at a folder outside `examples/prompts`"
        ),
        "{}",
        run.stderr
    );

    // `--out` is the caller's folder, but not over a template.
    let workspace = Fixture::minimal().write();
    let run = workspace.run(&["build", "--context", "basic", "--out", "variants"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("variants/generic.md is one of the workspace's own files"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(workspace.root().join("variants/generic.md")).unwrap(),
        common::BASE_TEMPLATE
    );
}

#[test]
fn a_context_file_name_must_be_a_plain_name() {
    let report = Fixture::minimal()
        .file("examples/contexts/.promptc-tmp-evil.toml", common::CONTEXT)
        .file("examples/contexts/a b.toml", common::CONTEXT)
        .validate();
    let found: Vec<_> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file, d.line))
        .collect();
    assert_eq!(
        found,
        [
            (
                "bad-context-name".to_string(),
                "examples/contexts/.promptc-tmp-evil.toml".to_string(),
                1
            ),
            (
                "bad-context-name".to_string(),
                "examples/contexts/a b.toml".to_string(),
                1
            ),
        ]
    );
}

#[test]
fn a_slot_cannot_take_a_name_the_scope_has() {
    for slot in ["CWD", "TOOLS", "os", "family"] {
        let report = Fixture::minimal()
            .file(
                "components/intro.toml",
                format!("id = \"intro\"\nslot = \"{slot}\"\n"),
            )
            .validate();
        let found = report
            .diagnostics()
            .into_iter()
            .find(|d| d.code == "name-taken")
            .unwrap_or_else(|| panic!("{slot}: {:?}", report.diagnostics()));
        assert_eq!(
            (found.file.as_str(), found.line),
            ("components/intro.toml", 2)
        );
        assert!(
            found.message.contains(&format!("`{slot}`")),
            "{}",
            found.message
        );
    }
}

#[test]
fn a_template_file_that_is_a_folder_is_reported_at_the_field() {
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            "id = \"intro\"\ntemplate_file = \".\"\n",
        )
        .validate();
    let found = report.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str(), found.line),
        ("template-file-missing", "components/intro.toml", 2)
    );
}

#[test]
fn yaml_messages_do_not_mention_parser_options() {
    let report = Fixture::minimal()
        .remove("examples/contexts/basic.toml")
        .file(
            "examples/contexts/basic.yaml",
            "date: \"2026-11-01\"\ncwd: /a\ncwd: /b\n",
        )
        .validate();
    let found = report.single();
    assert_eq!(
        (found.file.as_str(), found.line),
        ("examples/contexts/basic.yaml", 3)
    );
    assert!(
        !found.message.contains("DuplicateKeyPolicy"),
        "{}",
        found.message
    );
    // Worded as TOML's duplicate is, the first line named (and labelled).
    assert!(
        found
            .message
            .contains("duplicate key `cwd`: it is set already on line 2; keep one"),
        "{}",
        found.message
    );
    // A JSON context the same: at the second key, whole, with the first named (serde_json
    // placed it at the second's closing quote, and named no first).
    let report = Fixture::minimal()
        .remove("examples/contexts/basic.toml")
        .file(
            "examples/contexts/basic.json",
            "{\n  \"date\": \"2026-11-01\",\n  \"cwd\": \"/a\",\n  \"cwd\": \"/b\"\n}\n",
        )
        .validate();
    let found = report.single();
    assert_eq!(
        (
            found.code.as_str(),
            found.file.as_str(),
            found.line,
            found.column
        ),
        ("json-syntax", "examples/contexts/basic.json", 4, 3)
    );
    assert!(
        found
            .message
            .contains("duplicate key `cwd`: it is set already on line 3; keep one"),
        "{}",
        found.message
    );
}

#[test]
fn init_and_the_index_name_what_went_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let output = common::promptc()
        .arg("init")
        .arg(file.join("x"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}", file.join("x").display())),
        "{stderr}"
    );

    // An index line no file system can hold is a foreign line, skipped like the others.
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let index = workspace.root().join("examples/prompts/.promptc-outputs");
    let mut text = std::fs::read_to_string(&index).unwrap();
    text.push_str(&format!("examples/prompts/{}/b.md\n", "a".repeat(300)));
    std::fs::write(&index, text).unwrap();
    assert_eq!(workspace.run(&["check"]).code, 0);
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
}

#[test]
fn a_family_with_two_variants_is_reported_at_the_variants_once() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}default_context = \"basic\"\n", common::MANIFEST),
        )
        .file("examples/contexts/second.toml", common::CONTEXT)
        .file(
            "variants/other.toml",
            "id = \"other\"\nfamily = \"generic\"\nextends = \"generic\"\n",
        )
        .validate();
    let found: Vec<_> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file, d.line))
        .collect();
    assert_eq!(
        found,
        [(
            "duplicate-version".to_string(),
            "variants/other.toml".to_string(),
            1
        )]
    );
}

// `2.01` and `2.1` compare equal as versions, but were taken for two: which of the variants
// `next-gen@2` chose then depended on their ids.
#[test]
fn versions_that_compare_equal_are_one_version() {
    let report = Fixture::minimal()
        .file(
            "variants/early.toml",
            "id = \"early\"\nfamily = \"g2\"\nextends = \"generic\"\nversion = \"2.01\"\n",
        )
        .file(
            "variants/late.toml",
            "id = \"late\"\nfamily = \"g2\"\nextends = \"generic\"\nversion = \"2.1\"\n",
        )
        .validate();
    let found: Vec<_> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file, d.line))
        .collect();
    assert_eq!(
        found,
        [(
            "duplicate-version".to_string(),
            "variants/late.toml".to_string(),
            4
        )]
    );
}

#[test]
fn a_condition_that_fails_names_no_internal_place() {
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            format!("{}when = \"(1 + 'a') > 0\"\n", common::COMPONENT),
        )
        .validate();
    let found = report.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str(), found.line),
        ("condition-failed", "components/intro.toml", 3)
    );
    assert_eq!(
        found.message,
        "condition could not be evaluated: invalid operation: tried to use + operator on unsupported types number and string"
    );
}

#[test]
fn a_tool_condition_cannot_read_the_enabled_tools() {
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            common::TOOL.replace(
                "description = \"Read a file.\"\n",
                "description = \"Read a file.\"\nwhen = \"'x' in enabled_tools\"\n",
            ),
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "not-yet-defined", "{diagnostic:?}");
    assert!(
        diagnostic
            .message
            .starts_with("`enabled_tools` is not defined here")
    );
}

/// A SOURCE_DATE_EPOCH that is no date a context could hold is said, and stops only a compile
/// that reads it: one whose context sets no `date` and whose template uses the date. With
/// every context dated, it failed every build, though no compile would have read it.
#[test]
fn source_date_epoch_must_be_a_date_a_context_could_hold() {
    let workspace = Fixture::minimal()
        .file("examples/contexts/undated.toml", "cwd = \"/srv\"\n")
        .write();
    let run = |args: &[&str], value: &str| {
        let output = workspace
            .command()
            .args(args)
            .env("SOURCE_DATE_EPOCH", value)
            .output()
            .unwrap();
        (
            output.status.code(),
            common::stderr(&output),
            common::stdout(&output),
        )
    };
    for (value, what) in [
        ("9223372036854775807", "is outside 1970-01-01 to 9999-12-31"),
        ("-1", "is outside 1970-01-01 to 9999-12-31"),
        ("yesterday", "is not a number of seconds"),
    ] {
        let warning = format!(
            "warning: SOURCE_DATE_EPOCH `{value}` {what}: it is ignored, and a compile whose context sets no `date` has none; set it to the seconds since 1970-01-01 (as `date +%s` prints them), or unset it\n"
        );
        // The context dates itself: the build goes on, with the warning.
        let (code, stderr, stdout) = run(&["build", "--context", "basic"], value);
        assert_eq!(
            (code, stderr.as_str()),
            (Some(0), warning.as_str()),
            "{value}"
        );
        assert!(stdout.contains("on 2026-11-01."), "{stdout}");
        // A context without a date, whose template reads it: the error names the variable.
        let (code, stderr, _) = run(&["build", "--context", "undated"], value);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.starts_with(&warning), "{stderr}");
        assert!(
            stderr.contains(
                "error[no-date]: the date is not known: the context sets no `date`, and SOURCE_DATE_EPOCH, which would give it, is not a number of seconds from 1970-01-01 to 9999-12-31"
            ),
            "{stderr}"
        );
        assert!(
            stderr.contains("set SOURCE_DATE_EPOCH to the seconds since 1970-01-01"),
            "{stderr}"
        );
        // Commands that render say it; those that render nothing never read it.
        for args in [
            &["tools", "--context", "basic"][..],
            &["explain", "--context", "basic"],
        ] {
            let (_, stderr, _) = run(args, value);
            assert!(stderr.starts_with(&warning), "{args:?}: {stderr}");
        }
        for args in [
            &["route", "--model", "any-model", "--context", "undated"][..],
            &["context", "--context", "undated"],
        ] {
            let (code, stderr, _) = run(args, value);
            assert_eq!((code, stderr.as_str()), (Some(0), ""), "{args:?}");
        }
    }
}

#[test]
fn a_json_context_in_the_contexts_folder_is_a_named_context() {
    let workspace = Fixture::minimal()
        .file(
            "examples/contexts/machine.json",
            "{\"date\": \"2026-11-02\", \"cwd\": \"/from/json\"}\n",
        )
        .write();
    let run = workspace.run(&["build", "--context", "machine"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("/from/json"), "{}", run.stdout);
    // A JSON file elsewhere is still not a data file, and a warning says so (it was skipped
    // without a word).
    let report = Fixture::minimal()
        .file("tools/extra.json", "{\"id\": 1}\n")
        .validate();
    assert_eq!(report.counts(), (0, 1), "{:?}", report.diagnostics());
    let d = report.single();
    assert_eq!(
        (d.code.as_str(), d.file.as_str(), d.line),
        ("not-read-as-data", "tools/extra.json", 1)
    );
    // Not when another folder reads it, or holds promptc's own files: contexts, schemas and
    // outputs inside the tools' folder.
    let manifest = format!(
        "{}[paths]\ntools = \"defs\"\ncontexts = \"defs/contexts\"\nschema = \"defs/schema\"\n\
         [build]\nout = \"defs/out\"\n",
        common::MANIFEST
    );
    let report = Fixture::minimal()
        .file("promptc.toml", manifest)
        .file("defs/read_file.toml", common::TOOL)
        .file("defs/contexts/machine.json", "{\"cwd\": \"/from/json\"}\n")
        .file("defs/schema/tool.schema.json", "{}\n")
        .file("defs/out/generic/basic.tools.json", "[]\n")
        .validate();
    let not_read: Vec<_> = report
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "not-read-as-data")
        .collect();
    assert!(not_read.is_empty(), "{not_read:?}");
}

// A link is told of as what it leads to: a link named `.json` to a file of the workspace, and
// one named `.toml` to a folder, were skipped without a word where the file and the folder
// themselves were told of.
#[cfg(unix)]
#[test]
fn a_link_not_read_as_data_is_told_of_as_its_target_is() {
    let workspace = Fixture::minimal()
        .file("shared/extra.json", "{\"id\": 1}\n")
        .file("shared/more/read_file.toml", common::TOOL)
        .write();
    let tools = workspace.root().join("tools");
    std::os::unix::fs::symlink("../shared/extra.json", tools.join("linked.json")).unwrap();
    std::os::unix::fs::symlink("../shared/more", tools.join("more.toml")).unwrap();
    let report = workspace.validate();
    let told: Vec<(String, String)> = report
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "not-read-as-data")
        .map(|d| (d.file, d.message))
        .collect();
    assert_eq!(told.len(), 2, "{told:?}");
    assert_eq!(told[0].0, "tools/linked.json", "{told:?}");
    assert!(
        told[0].1.contains("JSON is read for contexts only"),
        "{told:?}"
    );
    assert_eq!(told[1].0, "tools/more.toml", "{told:?}");
    assert!(
        told[1].1.contains("a folder named like a data file"),
        "{told:?}"
    );
}

// minijinja negates and adds slice and range steps unchecked: a debug build (this test's)
// panicked on a step of i64::MIN, where a release build wraps. Debug builds now wrap too, and
// such templates render as in release, whatever they give.
#[test]
fn extreme_steps_in_slices_and_ranges_do_not_crash_a_debug_build() {
    let min = i64::MIN;
    let template = format!(
        "{{{{ 'abc'[::{min}] }}}}|{{{{ [1, 2][{min}:{min}:{min}] }}}}|\
         {{{{ range(0, {min}, {min}) | list }}}}|{{{{ ({min}) // -1 }}}}\n"
    );
    let workspace = Fixture::minimal()
        .file("components/intro.md", &template)
        .write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(
        run.code == 0 || run.code == 1,
        "exit {}: {}",
        run.code,
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

// A template that fails for one context of the matrix and renders for the others was reported
// by `validate` at the template alone: which of nine contexts lacked the value was left to
// guess. The diagnostic names the compile that met it first.
#[test]
fn a_matrix_error_names_the_compile_that_met_it() {
    let validation = Fixture::minimal()
        .file("components/intro.md", "Team {{ extra.team.name }}.\n")
        .file(
            "examples/contexts/basic.toml",
            format!("{}[extra.team]\nname = \"core\"\n", common::CONTEXT),
        )
        .file("examples/contexts/solo.toml", common::CONTEXT)
        .validate();
    let found = validation.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str(), found.line),
        ("render-failed", "components/intro.md", 1)
    );
    assert_eq!(
        validation.item(0)["notes"],
        serde_json::json!(["first met compiling generic × solo"])
    );
}

// A name longer than a file name may be passed `validate`, and the build failed on writing
// it (exit 2, no place to fix): it is an error where the name is written.
#[test]
fn a_name_too_long_for_a_file_is_refused_where_it_is_written() {
    let long = "x".repeat(300);
    let validation = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[[build.entries]]\nvariant = \"generic\"\ncontext = \"basic\"\noutput = \"a/{long}.md\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/wide.toml",
            format!("id = \"wide\"\nextends = \"generic\"\nfamily = \"{long}\"\n"),
        )
        .validate();
    let found: Vec<(String, String, u64)> = validation
        .diagnostics()
        .into_iter()
        .filter(|d| d.message.contains("would name an output file or folder"))
        .map(|d| (d.code, d.file, d.line))
        .collect();
    assert_eq!(
        found,
        [
            ("invalid-value".to_string(), "promptc.toml".to_string(), 7),
            (
                "invalid-value".to_string(),
                "variants/wide.toml".to_string(),
                3
            ),
        ]
    );
}

/// promptc runs under valgrind (a user chasing a crash of their own may run it there): its
/// vDSO lookup once read the kernel's aux vector, whose vDSO valgrind does not map, and the
/// process crashed at its first `sched_getcpu`. Needs valgrind on the PATH, which CI does not
/// install: run it with `cargo test --test robustness -- --ignored`.
#[test]
#[ignore = "needs valgrind"]
fn a_build_runs_under_valgrind() {
    let workspace = Fixture::minimal().write();
    let output = std::process::Command::new("valgrind")
        .args(["--error-exitcode=99", "-q"])
        .arg(assert_cmd::cargo::cargo_bin("promptc"))
        .args(["build", "--all"])
        .current_dir(workspace.root())
        .env("PROMPTC_NO_CACHE", "1")
        .output()
        .expect("valgrind is installed");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(workspace.root().join(OUTPUT).exists());
}

/// Two names that differ only by how an accented letter is encoded (a composed `é`, or `e` and
/// a combining accent) are two files on Linux and one on macOS, whose file systems ignore the
/// difference: a clone there held one of them, compiled other prompts, and `check` failed
/// there alone. As names that differ only by case, the second of each pair is an error: a
/// workspace file, and a context (whose output is named after it). The files are written by
/// the test, not committed: a clone of this repository on macOS could not hold them either.
#[test]
fn names_that_differ_only_by_how_accents_are_encoded_are_one_file_on_macos() {
    let composed = "caf\u{e9}";
    let decomposed = "cafe\u{301}";
    let workspace = common::Fixture::minimal()
        .file(&format!("partials/{composed}.md"), "A")
        .file(&format!("partials/{decomposed}.md"), "B")
        .file(
            "components/intro.md",
            format!(
                "{{% include \"partials/{composed}.md\" %}}{{% include \"partials/{decomposed}.md\" %}}\n"
            ),
        )
        .file(
            &format!("examples/contexts/{composed}.toml"),
            common::CONTEXT,
        )
        .file(
            &format!("examples/contexts/{decomposed}.toml"),
            common::CONTEXT,
        )
        .write();
    let run = workspace.run(&["--color", "never", "validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    // The second of each pair in the order of their paths' bytes: `e` before `é`.
    let accents = "only by how its accented letters are encoded (a composed letter, or a letter and a combining accent): a clone of the repository on macOS (whose file systems ignore how accents are encoded) holds one file for both";
    for (second, first) in [
        (
            format!("partials/{composed}.md"),
            format!("partials/{decomposed}.md"),
        ),
        (
            format!("examples/contexts/{composed}.toml"),
            format!("examples/contexts/{decomposed}.toml"),
        ),
    ] {
        assert!(
            run.stderr.contains(&format!(
                "the file `{second}` differs from `{first}` {accents}\n"
            )),
            "{second}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains(&format!("--> {second}:1:1")),
            "{}",
            run.stderr
        );
    }
    // Case and encoding together: `CAFÉ` (composed) and `cafe` with a combining accent.
    let workspace = common::Fixture::minimal()
        .file("partials/CAF\u{c9}.md", "A")
        .file(&format!("partials/{decomposed}.md"), "B")
        .write();
    let run = workspace.run(&["--color", "never", "validate"]);
    assert!(
        run.stderr
            .contains("only by case and how its accented letters are encoded"),
        "{}",
        run.stderr
    );
}

// A file the workspace reads that lies in the output folder is refused by `validate`, where
// `build` would refuse to write over it with no place to show: as the folders really lie too
// (`build.out` a link to the folder), and only for an output folder inside the workspace.
#[cfg(unix)]
#[test]
fn a_workspace_file_in_the_output_folder_is_refused_however_the_folder_is_named() {
    let component = format!(
        "{}template_file = \"../gen/generic/basic.md\"\n",
        common::COMPONENT
    );
    let linked = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[build]\nout = \"lnk\"\n", common::MANIFEST),
        )
        .file("components/intro.toml", &component)
        .file("gen/generic/basic.md", "You work in {{ cwd }}.\n")
        .write();
    std::os::unix::fs::symlink("gen", linked.root().join("lnk")).unwrap();
    let report = linked.validate();
    let refused: Vec<(String, String)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file))
        .collect();
    assert!(
        refused.contains(&("path-refused".into(), "gen/generic/basic.md".into())),
        "{refused:?}"
    );
    // Outside the workspace, the output folder is refused at its setting alone: a file of
    // the workspace's own `gen` folder is not in it.
    let outside = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[build]\nout = \"../gen\"\n", common::MANIFEST),
        )
        .file("components/intro.toml", &component)
        .file("gen/generic/basic.md", "You work in {{ cwd }}.\n")
        .write();
    let codes: Vec<String> = outside
        .validate()
        .diagnostics()
        .into_iter()
        .map(|d| d.code)
        .collect();
    assert!(!codes.contains(&"path-refused".to_string()), "{codes:?}");
    assert!(!codes.is_empty(), "the setting is refused");
}

// A partial no template names is left unchecked only where no template computes a name: one
// reached by a computed include has its undefined names said, as a render would meet them.
#[test]
fn a_partial_a_computed_include_may_reach_is_still_checked() {
    let report = Fixture::minimal()
        .file(
            "components/intro.md",
            "{% set n = \"p\" %}{% include \"partials/\" ~ n ~ \".md\" %}\n",
        )
        .file("partials/p.md", "{{ undefned }}\n")
        .validate();
    let errors: Vec<(String, String)> = report
        .diagnostics()
        .into_iter()
        .filter(|d| d.severity == "error")
        .map(|d| (d.code, d.file))
        .collect();
    assert!(
        errors.contains(&("undefined-placeholder".into(), "partials/p.md".into())),
        "{errors:?}"
    );
}
