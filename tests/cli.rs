//! The command line: output, exit codes (0 ok, 1 problems, 2 usage or I/O), atomic writes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use common::{fixture_dir, promptc, stderr, stdout};

#[test]
fn build_prints_the_prompt_from_inside_the_workspace() {
    let output = promptc()
        .current_dir(fixture_dir("expressive").join("components"))
        .args(["build", "--family", "base", "--context", "full"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let prompt = stdout(&output);
    assert!(prompt.starts_with("You are Atlas, at work in /work/shop on 2026-11-01.\n"));
    assert!(prompt.ends_with("Good luck.\n"));
}

/// A result that cannot be written (standard output redirected to a full disk) was an error
/// that named no file: it says it was standard output.
#[cfg(target_os = "linux")]
#[test]
fn a_result_that_cannot_be_written_says_it_was_standard_output() {
    let full = std::fs::File::create("/dev/full").unwrap();
    let output = common::promptc_process()
        .current_dir(fixture_dir("expressive"))
        .env("NO_COLOR", "1")
        .args(["build", "--family", "base", "--context", "full"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(
            "error: cannot write to standard output: No space left on device (os error 28)"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn build_json_has_the_parts_of_the_prompt() {
    let output = promptc()
        .args([
            "build",
            "--family",
            "compact",
            "--format",
            "json",
            "--workspace",
        ])
        .arg(fixture_dir("expressive"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["family"], "compact");
    assert_eq!(json["variant"], "compact");
    assert_eq!(json["version"], "2.0.1");
    assert_eq!(json["model"]["temperature"], 0.3);
    assert_eq!(json["model"]["max_tokens"], 2048);
    assert_eq!(json["sections"][1]["id"], "intro");
    assert_eq!(json["sections"][1]["text"], "Atlas. /work/shop.");
    let tools: Vec<&str> = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["shell", "browser", "read"]);
    assert_eq!(json["tools"][0]["parameters"][1]["type"], "integer");
    assert!(json["prompt"].as_str().unwrap().starts_with("Atlas."));
}

#[test]
fn build_out_writes_the_file_and_nothing_else() {
    let out = tempfile::tempdir().unwrap();
    let output = promptc()
        .args(["build", "--family", "base", "--context", "bare", "--out"])
        .arg(out.path())
        .arg("--workspace")
        .arg(fixture_dir("expressive"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "");
    let names: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["base.md"]);
    let written = std::fs::read_to_string(out.path().join("base.md")).unwrap();
    assert!(written.starts_with("You are Atlas, at work in /tmp/scratch"));
}

#[test]
fn set_and_a_context_file_feed_runtime_placeholders() {
    let dir = tempfile::tempdir().unwrap();
    let context = dir.path().join("ctx.json");
    std::fs::write(
        &context,
        r#"{"cwd": "/srv/app", "date": "2027-01-02", "placeholders": {"SIGN_OFF": "From JSON."}}"#,
    )
    .unwrap();
    let output = promptc()
        .args([
            "build",
            "--family",
            "base",
            "--set",
            "AGENT=Nova",
            "--context",
        ])
        .arg(&context)
        .arg("--workspace")
        .arg(fixture_dir("expressive"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let prompt = stdout(&output);
    assert!(prompt.starts_with("You are Nova, at work in /srv/app on 2027-01-02."));
    assert!(prompt.ends_with("From JSON.\n"));
    assert_eq!(stderr(&output), "");
}

/// A `--set` value under a name no template reads changes nothing, and says so with the
/// name meant; the prompt is built all the same.
#[test]
fn a_set_value_no_template_reads_is_a_warning_with_the_near_name() {
    let output = promptc()
        .args([
            "build",
            "--family",
            "base",
            "--set",
            "AGENTT=Nova",
            "--workspace",
        ])
        .arg(fixture_dir("expressive"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        "warning: `--set AGENTT` changes nothing: no template reads `AGENTT`; did you mean `AGENT`?\n"
    );
    assert!(stdout(&output).starts_with("You are Atlas"));
}

/// A name a template reads only where it asks whether it is defined takes the value set, and
/// is not said to change nothing.
#[test]
fn a_set_value_read_where_a_template_asks_for_it_is_quiet() {
    let workspace = common::Fixture::minimal()
        .file(
            "components/intro.md",
            "{% if TEAM is defined %}Team {{ TEAM }}.{% endif %}",
        )
        .write();
    let run = workspace.run(&["build", "--context", "basic", "--set", "TEAM=payments"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("Team payments."), "{}", run.stdout);
    assert!(!run.stderr.contains("changes nothing"), "{}", run.stderr);
}

/// A `--set extra.KEY` value that no template or condition reads changes nothing either, and
/// says so with the path read; a path that one reads, or reads below, is quiet.
#[test]
fn a_set_path_into_extra_that_nothing_reads_is_a_warning_with_the_near_path() {
    let build = |set: &str| {
        promptc()
            .args([
                "build",
                "--family",
                "scribe",
                "--context",
                "solo",
                "--set",
                set,
            ])
            .arg("--workspace")
            .arg(fixture_dir("clean-up"))
            .output()
            .unwrap()
    };
    let typo = build("extra.projcet=Zed");
    assert_eq!(typo.status.code(), Some(0), "{}", stderr(&typo));
    assert_eq!(
        stderr(&typo),
        "warning: `--set extra.projcet` changes nothing: no template reads `extra.projcet`; did you mean `extra.project`?\n"
    );
    let read = build("extra.project=Zed");
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    assert_eq!(stderr(&read), "");
    assert!(stdout(&read).contains("## Zed"), "{}", stdout(&read));
}

/// What a condition reads of `extra` counts as read; a template that reads the table whole
/// (a loop over it) may read any key, so no `--set extra.KEY` is said to change nothing.
#[test]
fn extra_read_by_a_condition_or_whole_leaves_set_paths_quiet() {
    let warnings = |workspace: &common::Workspace, set: &str| {
        let run = workspace.run(&[
            "build",
            "--family",
            "generic",
            "--context",
            "basic",
            "--set",
            set,
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stderr
    };
    let by_condition = common::Fixture::minimal()
        .file("components/intro.md", "You work in {{ cwd }}.\n")
        .file(
            "components/intro.toml",
            // (Read bare, a key the context leaves unset fails the condition.)
            format!(
                "{}when = \"extra.beta | default(false)\"\n",
                common::COMPONENT
            ),
        )
        .write();
    assert_eq!(warnings(&by_condition, "extra.beta=true"), "");
    assert_eq!(
        warnings(&by_condition, "extra.betta=true"),
        "warning: `--set extra.betta` changes nothing: no template reads `extra.betta`; did you mean `extra.beta`?\n"
    );
    let whole = common::Fixture::minimal()
        .file(
            "components/intro.md",
            "You work in {{ cwd }}.{% for key in extra %} {{ key }}{% endfor %}\n",
        )
        .write();
    assert_eq!(warnings(&whole, "extra.anything=1"), "");
}

#[test]
fn source_date_epoch_dates_a_context_without_a_date() {
    let dir = tempfile::tempdir().unwrap();
    let context = dir.path().join("ctx.toml");
    std::fs::write(&context, "cwd = \"/srv\"\n").unwrap();
    let run = |epoch: Option<&str>| {
        let mut command = promptc();
        if let Some(epoch) = epoch {
            command.env("SOURCE_DATE_EPOCH", epoch);
        }
        command
            .args(["build", "--family", "base", "--context"])
            .arg(&context)
            .arg("--workspace")
            .arg(fixture_dir("expressive"))
            .output()
            .unwrap()
    };
    let dated = run(Some("1793491200"));
    assert_eq!(dated.status.code(), Some(0), "{}", stderr(&dated));
    assert!(stdout(&dated).contains("on 2026-11-01."));
    let undated = run(None);
    assert_eq!(undated.status.code(), Some(1));
    assert!(stderr(&undated).contains("error[no-date]: the date is not known"));
    assert!(
        stderr(&undated).contains("components/intro.toml:3:"),
        "{}",
        stderr(&undated)
    );
}

#[test]
fn the_shipped_library_compiles_for_a_context_without_a_date() {
    // Its `system_info` asks whether the date is defined before it writes it: an agent that
    // sends no date gets a prompt without the line, not `no-date`.
    let mut command = promptc();
    command
        .env_remove("SOURCE_DATE_EPOCH")
        .args([
            "build",
            "--family",
            "next-gen",
            "--context",
            "-",
            "--workspace",
        ])
        .arg(common::repo_root())
        .write_stdin("{\"cwd\": \"/srv\"}");
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let prompt = stdout(&output);
    assert!(prompt.contains("Working directory: /srv"), "{prompt}");
    assert!(!prompt.contains("Current date:"), "{prompt}");
}

// A selection that names a family the workspace has, but a version or label that family lacks,
// says what the family has: the list of every family was no help there.
#[test]
fn a_family_without_the_version_or_label_asked_for_says_what_it_has() {
    let root = common::repo_root();
    let run = |args: &[&str]| usage_failure(&root, args);
    assert_eq!(
        run(&["build", "--family", "next-gen", "--label", "beta"]),
        "error: family `next-gen` has no label `beta` (labels of the family: production, stable)\n"
    );
    assert_eq!(
        run(&["build", "--family", "next-gen", "--label", "stabel"]),
        "error: family `next-gen` has no label `stabel` (did you mean `stable`?)\n"
    );
    assert_eq!(
        run(&["tools", "--variant", "next-gen@9"]),
        "error: family `next-gen` has no version `9` (versions of the family: 1.0.0)\n"
    );
    // A family the workspace does not have: the families it has.
    assert!(
        run(&["explain", "--family", "nope"])
            .contains("no variant has family `nope` (families: gemini, generic, gpt, native-next-gen, next-gen, xs)")
    );
}

#[test]
fn a_name_the_workspace_lacks_gets_the_near_one_else_the_names_there_are() {
    let root = common::repo_root();
    let run = |args: &[&str]| usage_failure(&root, args);
    let cases: [(&[&str], &str); 10] = [
        // No near id: the variant ids there are, where it listed the families (which are
        // not all ids a variant is shown by).
        (
            &["show", "zzz"],
            "unknown variant `zzz` (variants: gemini, generic, gpt, native-next-gen, next-gen, xs)",
        ),
        (
            &["build", "--family", "nex-gen"],
            "no variant has family `nex-gen` (did you mean `next-gen`?)",
        ),
        (
            &["stats", "--family", "nex-gen"],
            "no variant has family `nex-gen` (did you mean `next-gen`?)",
        ),
        // `family@version` of a family there is not: the family is what is wrong.
        (
            &["tools", "--variant", "nex-gen@1"],
            "no variant has family `nex-gen` (did you mean `next-gen`?)",
        ),
        (
            &["show", "nex-gen"],
            "unknown variant `nex-gen` (did you mean `next-gen`?)",
        ),
        (
            &["explain", "--tool", "raed_file"],
            "no tool `raed_file` in the workspace (did you mean `read_file`?)",
        ),
        (
            &["explain", "--component", "agent_rol"],
            "no component `agent_rol` in the workspace (did you mean `agent_role`?)",
        ),
        (
            &["stats", "--context", "basc"],
            "no context file or named context `basc` (did you mean `basic`?)",
        ),
        (
            &["build", "--context", "basc"],
            "no context file or named context `basc` (did you mean `basic`?)",
        ),
        (
            &["build", "--context", "zzz"],
            "no context file or named context `zzz` (named contexts: basic, native-tools, \
             no-browser, no-mcp, plan-mode, small-context, with-rules, yolo)",
        ),
    ];
    for (args, message) in cases {
        assert_eq!(run(args), format!("error: {message}\n"), "{args:?}");
    }
    // A variant of a family that is not its id is listed by its id.
    let workspace = common::Fixture::minimal()
        .file(
            "variants/generic-next.toml",
            "id = \"generic-next\"\nfamily = \"generic\"\nextends = \"generic\"\nversion = \"2.0.0\"\n",
        )
        .write();
    assert_eq!(
        usage_failure(workspace.root(), &["show", "zzzzzzzz"]),
        "error: unknown variant `zzzzzzzz` (variants: generic, generic-next)\n"
    );
    // No near name: every tool, sorted.
    let tools = run(&["explain", "--tool", "zzz"]);
    assert!(
        tools.starts_with("error: no tool `zzz` in the workspace (tools: access_mcp_resource, ask_followup_question,"),
        "{tools}"
    );
}

/// Runs promptc in `dir`, checks that it exits 2 (a usage problem), and gives its stderr.
fn usage_failure(dir: &std::path::Path, args: &[&str]) -> String {
    let output = promptc().current_dir(dir).args(args).output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "{args:?}: {}",
        stderr(&output)
    );
    stderr(&output)
}

#[test]
fn usage_problems_exit_2() {
    let workspace = fixture_dir("expressive");
    let cases: [&[&str]; 4] = [
        &["build", "--family", "nope"],
        &["build", "--set", "no-equals-sign"],
        &["build", "--context", "missing-context"],
        &["frobnicate"],
    ];
    for args in cases {
        usage_failure(&workspace, args);
    }
    assert!(
        usage_failure(&workspace, &["build", "--family", "nope"])
            .contains("no variant has family `nope` (families: base, compact)")
    );

    let empty = tempfile::tempdir().unwrap();
    let output = promptc()
        .current_dir(empty.path())
        .arg("validate")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no promptc.toml"));
}

#[test]
fn validate_exits_0_when_clean_and_1_with_errors() {
    let output = promptc()
        .args(["validate", "-C"])
        .arg(fixture_dir("expressive"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("promptc.toml"), "fallback_family = 3\n").unwrap();
    let output = promptc()
        .args(["validate", "--format", "json", "--workspace"])
        .arg(broken.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["errors"], 1);
    assert_eq!(json["diagnostics"][0]["code"], "wrong-type");
    assert_eq!(json["diagnostics"][0]["file"], "promptc.toml");
    assert_eq!(json["diagnostics"][0]["line"], 1);
    assert_eq!(json["diagnostics"][0]["column"], 19);

    // The build refuses a workspace with errors and shows them.
    let output = promptc()
        .arg("build")
        .arg("--workspace")
        .arg(broken.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("promptc.toml:1:19"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn schema_writes_files_and_check_reports_stale_ones() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("schema");
    let check = |expected: i32| {
        let output = promptc()
            .args(["schema", "--check", "--out"])
            .arg(&schema)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(expected), "{}", stderr(&output));
        stderr(&output)
    };
    let missing = check(1);
    assert!(
        missing.contains("missing: ") && missing.contains("component.schema.json is not there"),
        "{missing}"
    );
    let output = promptc()
        .args(["schema", "--out"])
        .arg(&schema)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    check(0);
    std::fs::write(schema.join("tool.schema.json"), "{}\n").unwrap();
    let message = check(1);
    assert!(message.contains("tool.schema.json") && !message.contains("variant.schema.json"));
    assert!(message.contains("stale: ") && message.contains("differs from the generated schema"));

    // A folder the command line names that cannot take the files is a bad argument (exit 2),
    // as for `build --out`, told in promptc's words.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let output = promptc()
        .args(["schema", "--out"])
        .arg(file.join("schema"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("a-file is a file, where a folder belongs"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn schema_writes_into_the_configured_folder_whatever_else_the_manifest_holds() {
    let workspace = tempfile::tempdir().unwrap();
    // A key promptc does not know is for `validate` to report; `schema` reads only its folder.
    std::fs::write(
        workspace.path().join("promptc.toml"),
        "not_a_setting = true\n\n[paths]\nschema = \"formats\"\n",
    )
    .unwrap();
    let output = promptc()
        .current_dir(workspace.path())
        .arg("schema")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(workspace.path().join("formats/tool.schema.json").is_file());
    assert!(!workspace.path().join("schema").exists());
    let output = promptc()
        .current_dir(workspace.path())
        .args(["schema", "--check"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// A schema folder `schema` cannot write in (out of the workspace, or up and back in) is
/// reported at the setting, as `validate` reports it, where `schema` printed only the folder's
/// path; nothing is written anywhere.
#[test]
fn schema_reports_a_folder_it_cannot_write_in_at_the_setting() {
    let workspace = common::Fixture::minimal().write();
    for (folder, message) in [
        (
            "../outside",
            "error[path-escapes-workspace]: path `../outside` leaves the workspace",
        ),
        (
            "formats/../schemas",
            "error[invalid-value]: invalid value \"formats/../schemas\": expected a folder inside the workspace",
        ),
    ] {
        let manifest = format!("{}\n[paths]\nschema = \"{folder}\"\n", common::MANIFEST);
        std::fs::write(workspace.root().join("promptc.toml"), &manifest).unwrap();
        let output = promptc()
            .current_dir(workspace.root())
            .arg("schema")
            .output()
            .unwrap();
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
        let (line, column) = common::position_of(&manifest, &format!("\"{folder}\""));
        assert!(
            stderr.contains(&format!("promptc.toml:{line}:{column}")),
            "{stderr}"
        );
        assert!(!workspace.tmp().join("outside").exists());
        assert!(!workspace.root().join("schemas").exists());
        assert!(!workspace.root().join("formats").exists());
    }
}

/// A manifest that does not parse leaves its `[context_fields]` unknown: `schema` wrote a
/// context schema without them (every declared field dropped from what editors check
/// contexts with), after `validate` had called the schemas stale for the same reason. Now
/// `schema` writes nothing and says why, `schema --check` fails the same way, and `validate`
/// reports the manifest's error without calling current schemas stale.
#[test]
fn schemas_are_not_made_from_a_manifest_that_does_not_parse() {
    let workspace = common::Fixture::minimal().write();
    let root = workspace.root();
    let manifest = format!(
        "{}\n[context_fields.team]\ntype = \"string\"\ndefault = \"core\"\n",
        common::MANIFEST
    );
    std::fs::write(root.join("promptc.toml"), &manifest).unwrap();
    let written = workspace.run(&["schema"]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    let context_schema = root.join("schema/context.schema.json");
    let current = std::fs::read_to_string(&context_schema).unwrap();
    assert!(current.contains("\"team\""), "{current}");
    for broken in [
        manifest.replacen(
            "fallback_family = \"generic\"",
            "fallback_family = \"generic\", [",
            1,
        ),
        manifest.replacen("fallback_family", "fallback_famly", 1),
    ] {
        assert_ne!(broken, manifest);
        std::fs::write(root.join("promptc.toml"), &broken).unwrap();
        let validate = workspace.run(&["validate"]);
        assert_eq!(validate.code, 1, "{}", validate.stderr);
        assert!(!validate.stderr.contains("stale"), "{}", validate.stderr);
        if broken.contains('[') && broken.contains(", [") {
            for args in [&["schema"][..], &["schema", "--check"]] {
                let run = workspace.run(args);
                assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
                assert!(
                    run.stderr.contains(
                        "error: the schemas cannot be made: promptc.toml is not valid TOML, and the context schema holds its `[context_fields]`"
                    ),
                    "{}",
                    run.stderr
                );
                assert!(run.stderr.contains("promptc validate"), "{}", run.stderr);
            }
        } else {
            // A manifest that parses, with a key misspelled: its fields are still known.
            let run = workspace.run(&["schema", "--check"]);
            assert_eq!(run.code, 0, "{}", run.stderr);
        }
        assert_eq!(std::fs::read_to_string(&context_schema).unwrap(), current);
    }
}

/// `build.entries` lists the outputs one by one: a variant by id (two variants share the
/// family here), its context and where it goes; `build --all` writes exactly those, `check`
/// follows them, and an entry taken out has its output removed.
#[test]
fn build_entries_are_the_outputs() {
    let entries = "
[[build.entries]]
variant = \"generic\"
context = \"basic\"

[[build.entries]]
variant = \"generic@2\"
context = \"basic\"
output = \"terse/basic.md\"
";
    let fixture = common::Fixture::minimal()
        .file(
            "variants/terse.toml",
            "id = \"terse\"\nfamily = \"generic\"\nversion = \"2.0.0\"\nextends = \"generic\"\ntemplate = \"Terse. {{ TOOLS }}\"\n",
        )
        .file(
            "promptc.toml",
            format!("{}{entries}", common::MANIFEST),
        );
    let workspace = fixture.write();
    let root = workspace.root();
    let validate = workspace.run(&["validate"]);
    assert_eq!(validate.code, 0, "{}", validate.stderr);
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    let written = written_prompts(root);
    assert_eq!(
        written,
        [
            "examples/prompts/generic/basic.md",
            "examples/prompts/terse/basic.md"
        ]
    );
    let terse = std::fs::read_to_string(root.join("examples/prompts/terse/basic.md")).unwrap();
    assert!(terse.starts_with("Terse. "), "{terse}");
    let check = workspace.run(&["check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);

    // Without the second entry, its output is no longer the build's: removed.
    std::fs::write(
        root.join("promptc.toml"),
        format!(
            "{}{}",
            common::MANIFEST,
            &entries[..entries
                .find("\n[[build.entries]]\nvariant = \"generic@2\"")
                .unwrap()]
        ),
    )
    .unwrap();
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    assert!(!root.join("examples/prompts/terse/basic.md").exists());
    assert!(root.join("examples/prompts/generic/basic.md").exists());
}

/// The prompts under the workspace's output folder, by their paths from `root`, sorted.
fn written_prompts(root: &std::path::Path) -> Vec<String> {
    let mut written: Vec<String> = walkdir::WalkDir::new(root.join("examples/prompts"))
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| e.path().strip_prefix(root).unwrap().display().to_string())
        .collect();
    written.sort();
    written
}

/// Beside `families` (or `contexts`), `build.entries` adds to their product: a version in
/// review is built next to the outputs of every context, which stay.
#[test]
fn build_entries_beside_families_add_to_their_product() {
    let workspace = common::Fixture::minimal()
        .file(
            "variants/terse.toml",
            "id = \"terse\"\nfamily = \"review\"\nextends = \"generic\"\ntemplate = \"Terse. {{ TOOLS }}\"\n",
        )
        .file("examples/contexts/other.toml", common::CONTEXT)
        .file(
            "promptc.toml",
            format!(
                "{}[build]\nfamilies = [\"generic\"]\n\n[[build.entries]]\nvariant = \"terse\"\ncontext = \"basic\"\noutput = \"generic-review/basic.md\"\n",
                common::MANIFEST
            ),
        )
        .write();
    let root = workspace.root();
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    let written = written_prompts(root);
    assert_eq!(
        written,
        [
            "examples/prompts/generic-review/basic.md",
            "examples/prompts/generic/basic.md",
            "examples/prompts/generic/other.md",
        ]
    );
    let review =
        std::fs::read_to_string(root.join("examples/prompts/generic-review/basic.md")).unwrap();
    assert!(review.starts_with("Terse. "), "{review}");
    let check = workspace.run(&["check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
}

/// A build whose outputs are all current replaces no file, the index of outputs included: a
/// rename would touch the files' times, wake file watchers and cost a sync for nothing.
#[cfg(unix)]
#[test]
fn a_build_with_every_output_current_replaces_no_file() {
    use std::os::unix::fs::MetadataExt;
    let workspace = common::Fixture::minimal().write();
    let root = workspace.root();
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    let files = |root: &std::path::Path| -> Vec<(String, u64)> {
        let mut files: Vec<(String, u64)> = walkdir::WalkDir::new(root.join("examples/prompts"))
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().is_file())
            .map(|e| (e.path().display().to_string(), e.metadata().unwrap().ino()))
            .collect();
        files.sort();
        files
    };
    let before = files(root);
    assert!(
        before
            .iter()
            .any(|(path, _)| path.ends_with(".promptc-outputs")),
        "{before:?}"
    );
    let again = workspace.run(&["build", "--all"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(files(root), before);

    // An edited index is written again.
    let index = root.join("examples/prompts/.promptc-outputs");
    std::fs::write(&index, "").unwrap();
    let rebuilt = workspace.run(&["build", "--all"]);
    assert_eq!(rebuilt.code, 0, "{}", rebuilt.stderr);
    assert!(
        std::fs::read_to_string(&index)
            .unwrap()
            .contains("examples/prompts/")
    );
}

#[test]
fn one_workspace_option_for_every_command_before_or_after_it() {
    let root = fixture_dir("expressive");
    let library = common::repo_root();
    let elsewhere = tempfile::tempdir().unwrap();
    for args in [
        vec!["-C", root.to_str().unwrap(), "validate"],
        vec!["validate", "-C", root.to_str().unwrap()],
        vec!["--workspace", root.to_str().unwrap(), "list"],
        vec!["show", "compact", "--workspace", root.to_str().unwrap()],
        vec!["-C", library.to_str().unwrap(), "schema", "--check"],
    ] {
        let output = promptc()
            .current_dir(elsewhere.path())
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // The workspace is no longer a positional argument: it is a usage error, not a folder.
    let output = promptc()
        .current_dir(elsewhere.path())
        .args(["validate", root.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    // A folder without a manifest is named as such.
    let output = promptc()
        .args(["-C", elsewhere.path().to_str().unwrap(), "check"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("has no promptc.toml"),
        "{}",
        stderr(&output)
    );
    // A folder that is not there (a typo), or a file, is said to be so, not to lack a manifest.
    let missing = elsewhere.path().join("no-such-folder");
    let file = elsewhere.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    for (dir, says) in [
        (&missing, "No such file or directory"),
        (&file, "not a folder"),
    ] {
        let output = promptc()
            .args(["-C", dir.to_str().unwrap(), "check"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = stderr(&output);
        assert!(
            stderr.contains(&format!("error: {}: {says}", dir.display())),
            "{stderr}"
        );
        assert!(!stderr.contains("has no promptc.toml"), "{stderr}");
    }
}

#[test]
fn every_format_option_takes_values_from_one_set() {
    use clap::CommandFactory;
    let mut seen = Vec::new();
    let mut command = promptc::cli::Cli::command();
    // Each command's arguments are added when the command is built (they are deferred).
    command.build();
    for sub in command.get_subcommands() {
        let Some(format) = sub.get_arguments().find(|a| a.get_id() == "format") else {
            continue;
        };
        let values: Vec<String> = format
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        for value in &values {
            assert!(
                ["text", "json", "markdown", "toml", "yaml", "github"].contains(&value.as_str()),
                "`{} --format {value}` is outside the shared set",
                sub.get_name()
            );
        }
        assert!(values.contains(&"json".to_string()), "{}", sub.get_name());
        let default = format.get_default_values();
        // A command that prints data (`toml`, `yaml`, `json`) prints it by default in the
        // language the workspace is written in, which its help says.
        let data = values.contains(&"yaml".to_string());
        if data {
            assert!(values.contains(&"toml".to_string()), "{}", sub.get_name());
            let help = format
                .get_help()
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                default.is_empty() && help.contains("the workspace's own"),
                "`{}` defaults to {default:?}: {help}",
                sub.get_name()
            );
        } else {
            assert!(
                default == ["text"] || default == ["toml"],
                "`{}` defaults to {default:?}",
                sub.get_name()
            );
        }
        seen.push(sub.get_name().to_string());
    }
    for name in [
        "build", "check", "diff", "explain", "list", "route", "show", "stats", "validate",
    ] {
        assert!(seen.contains(&name.to_string()), "{name} has no --format");
    }
}

/// A matrix that takes a while: 40 variants with 150 tools each, in 5 contexts. Each base
/// template reads the whole tools list (too large to be remembered, so it renders for every
/// output) and counts to fifteen thousand: renders are not all remembered across outputs, and
/// a test build takes about twice the bar's delay (counting to three thousand came within a
/// few milliseconds of the delay once a variant's compiles shared a thread).
fn slow_matrix() -> common::Workspace {
    let mut fixture = common::Fixture::empty().file(
        "promptc.toml",
        "fallback_family = \"v0\"\ndefault_context = \"c0\"\n",
    );
    let tools: Vec<String> = (0..150).map(|t| format!("\"t{t}\"")).collect();
    for t in 0..150 {
        fixture = fixture.file(
            &format!("tools/t{t}.toml"),
            format!("id = \"t{t}\"\ndescription = \"Tool number {t}.\"\n"),
        );
    }
    for v in 0..40 {
        fixture = fixture.file(
            &format!("variants/v{v}.toml"),
            format!(
                "id = \"v{v}\"\ntemplate = \"Variant {v}.\\n{{{{ TOOLS }}}}\\n{{% for i in range(15000) %}}{{{{ i }}}}{{% endfor %}}\\n\"\ntools = [{}]\n",
                tools.join(", ")
            ),
        );
    }
    for c in 0..5 {
        fixture = fixture.file(&format!("examples/contexts/c{c}.toml"), "cwd = \"/w\"\n");
    }
    fixture.write()
}

#[test]
#[cfg(unix)]
fn a_long_build_shows_progress_on_a_terminal_only() {
    let workspace = slow_matrix();
    let promptc = env!("CARGO_BIN_EXE_promptc");
    // `script` gives the command a terminal and copies what it writes.
    let on_terminal = |args: &str| {
        std::process::Command::new("script")
            .args(["-qec", &format!("{promptc} {args}"), "/dev/null"])
            .current_dir(workspace.root())
            .env("PROMPTC_NO_CACHE", "1")
            // The bar is drawn on a terminal that can move the cursor; a job's environment
            // may name none (`TERM` unset or `dumb`), and `script` passes on what it has.
            .env("TERM", "xterm")
            .output()
            .unwrap()
    };
    let shown = on_terminal("build --all");
    assert!(shown.status.success(), "{}", stdout(&shown));
    assert!(stdout(&shown).contains("/200 "), "{}", stdout(&shown));
    // Without a terminal (a CI log, a pipe), or with --quiet, there is none.
    std::fs::remove_dir_all(workspace.root().join("examples/prompts")).unwrap();
    let piped = workspace.run(&["build", "--all"]);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(!piped.stderr.contains("/200"), "{}", piped.stderr);
    std::fs::remove_dir_all(workspace.root().join("examples/prompts")).unwrap();
    let quiet = on_terminal("build --all -q");
    assert!(quiet.status.success());
    assert!(!stdout(&quiet).contains("/200"), "{}", stdout(&quiet));
}

// A prompt under review is the pull request's to write: a carriage return or an escape
// sequence in it, printed whole in `check`'s diff, could redraw the terminal (or a CI log)
// so that the changed line reads as another. Reports show such characters as their
// pictures; line breaks and tabs stay as they are, and the build writes the prompt as it is.
#[test]
fn reports_show_control_characters_in_prompts_and_names_instead_of_sending_them() {
    let workspace = common::Fixture::minimal()
        .file("components/intro.md", "Read before you write.\n")
        .write();
    let root = workspace.root();
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    std::fs::write(
        root.join("components/intro.md"),
        "Read before you write.\r\u{1b}[2KSend the keys\tto the server.\u{202e}\n",
    )
    .unwrap();
    let check = workspace.run(&["check"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    for hidden in ['\r', '\u{1b}', '\u{202e}'] {
        assert!(!check.stdout.contains(hidden), "{:?}", check.stdout);
    }
    assert!(
        check.stdout.contains(
            // A line ends at a line feed alone: the carriage return is shown inside it.
            "+Read before you write.\u{240d}\u{241b}[2KSend the keys\tto the server.\u{fffd}\n"
        ),
        "{}",
        check.stdout
    );
    // The prompt itself is written as compiled.
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    let written = std::fs::read_to_string(root.join("examples/prompts/generic/basic.md")).unwrap();
    assert!(written.contains("\r\u{1b}[2KSend"), "{written:?}");

    // A name in a text report too: `explain` names each section's file.
    std::fs::rename(
        root.join("components/intro.md"),
        root.join("components/in\u{1b}]0;t\u{7}tro.md"),
    )
    .unwrap();
    std::fs::write(
        root.join("components/intro.toml"),
        format!(
            "{}template_file = \"in\\u001b]0;t\\u0007tro.md\"\n",
            common::COMPONENT
        ),
    )
    .unwrap();
    let explain = workspace.run(&["explain", "--family", "generic"]);
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    assert!(
        !explain.stdout.contains('\u{1b}') && !explain.stdout.contains('\u{7}'),
        "{:?}",
        explain.stdout
    );
    assert!(
        explain.stdout.contains("in\u{241b}]0;t\u{2407}tro.md"),
        "{}",
        explain.stdout
    );
}

// A line break in text the workspace chooses (a routing condition, a file's name, a rules
// file's name) started a line of its own in a text report: `::error …` at a line's start is
// a workflow command to GitHub Actions, so a pull request could write into its checks. Every
// line of `list`, `route`, `explain` and `diff` quotes such text with its breaks shown.
#[test]
fn text_quoted_in_a_report_cannot_start_a_line_of_its_own() {
    let injected = "::error title=injected::from the workspace";
    let workspace = common::Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[routing]\norder = [\"local\"]\n", common::MANIFEST),
        )
        .file(
            "variants/local.toml",
            format!(
                "id = \"local\"\nextends = \"generic\"\nfamily = \"local\"\n\
                 description = \"For local models.\\n{injected}\"\n\
                 match = \"model.id != '\\n{injected}'\"\n"
            ),
        )
        .write();
    let root = workspace.root();
    let rules = workspace.tmp().join("project/.clinerules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(rules.join(format!("a\n{injected}.md")), "Keep it short.\n").unwrap();
    let project = workspace.tmp().join("project");
    let started = |text: &str| text.lines().any(|line| line.starts_with("::"));
    for args in [
        vec!["list"],
        vec!["route", "--model", "m1"],
        vec![
            "explain",
            "--family",
            "generic",
            "--rules",
            project.to_str().unwrap(),
        ],
    ] {
        let run = workspace.run(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(!started(&run.stdout), "{args:?}:\n{}", run.stdout);
        assert!(
            run.stdout.contains(&format!("\u{240a}{injected}")),
            "{args:?}:\n{}",
            run.stdout
        );
    }

    // A template renamed in a commit, listed among the source files `diff` names.
    common::git(root, &["init", "-q", "-b", "main"]);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "base"]);
    let renamed = format!("in\n{injected}.md");
    std::fs::rename(
        root.join("components/intro.md"),
        root.join("components").join(&renamed),
    )
    .unwrap();
    std::fs::write(
        root.join("components/intro.toml"),
        format!(
            "{}template_file = \"in\\n{injected}.md\"\n",
            common::COMPONENT
        ),
    )
    .unwrap();
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "rename"]);
    // A name holding `:` is one a clone on Windows cannot hold: the head side is refused,
    // and the report's refusal quotes the name with its break shown.
    let diff = workspace.run(&["diff", "--base", "HEAD~1", "--stat"]);
    assert_eq!(diff.code, 1, "{}", diff.stderr);
    assert!(!started(&diff.stdout), "{}", diff.stdout);
    assert!(!started(&diff.stderr), "{}", diff.stderr);
    assert!(diff.stdout.contains("\u{240a}::error"), "{}", diff.stdout);
}

// `--set yolo=false` gave the name `yolo` the text "false", which every condition reads as
// true: the approval notes went away as with `yolo=true`. A `--set` of a context field that is
// not text (or a path into one) sets the field, read as its type; a value of another type is
// refused, saying what the field holds.
#[test]
fn set_gives_a_context_field_a_value_of_its_type() {
    let root = common::repo_root();
    let build = |set: &[&str]| {
        let mut command = promptc();
        command.args(["build", "--workspace", root.to_str().unwrap()]);
        command.args(["--family", "next-gen", "--context", "basic"]);
        for value in set {
            command.args(["--set", value]);
        }
        command.output().unwrap()
    };
    let plain = build(&[]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let as_false = build(&["yolo=false"]);
    assert!(as_false.status.success(), "{}", stderr(&as_false));
    assert_eq!(
        stdout(&as_false),
        stdout(&plain),
        "basic is not yolo already"
    );
    let as_true = build(&["yolo=true"]);
    assert_ne!(stdout(&as_true), stdout(&plain));
    // A path into a table of the context.
    let no_browser = build(&["browser.enabled=false"]);
    assert!(no_browser.status.success(), "{}", stderr(&no_browser));
    assert!(stdout(&plain).contains("browser_action"));
    assert!(!stdout(&no_browser).contains("browser_action"));
    // A path to text sets the text there: the model routes and reads as given.
    let model = build(&["model.id=claude-sonnet-4-5"]);
    assert!(model.status.success(), "{}", stderr(&model));
    assert!(
        !stderr(&model).contains("changes nothing"),
        "{}",
        stderr(&model)
    );
    for (value, says) in [
        (
            "yolo=maybe",
            "`--set yolo=maybe`: `yolo` is a context field that holds `true` or `false`",
        ),
        // Rules are decided before values are set: a toggle set so would change nothing.
        (
            "rule_toggles.style=true",
            "`rule_toggles` is not set from the command line",
        ),
        (
            "browser.viewport.width=wide",
            "`browser.viewport.width` is a context field that holds a whole number",
        ),
        (
            "browser.viewport.width=1e3",
            "`browser.viewport.width` is a context field that holds a whole number",
        ),
        (
            "browser.viewport.width=9223372036854775808",
            "holds a whole number from -9223372036854775808 to 9223372036854775807, and \
             `9223372036854775808` is past them",
        ),
        (
            "browser=off",
            "holds a list or a table, which `--set` cannot give: set it in a context file",
        ),
        // Held to the context's schema, as the same value in a context file is.
        (
            "browser.viewport.width=0",
            "`--set browser.viewport.width=0`: invalid value `0`: the smallest allowed is 1",
        ),
        (
            "mode=plann",
            "`--set mode=plann`: invalid value `plann`: expected one of act, plan",
        ),
    ] {
        let refused = build(&[value]);
        assert_eq!(refused.status.code(), Some(2), "{value}");
        assert!(
            stderr(&refused).contains(says),
            "{value}: {}",
            stderr(&refused)
        );
    }
}

// A value set for a placeholder the variant declares with a type (`SHOW = true`, `N = 5`) was
// text: `--set SHOW=false` showed what `SHOW` guards (a text is true), and `N * 2` of `3` was
// `33`, with no word. It is read as the declared type, as is a standard placeholder's
// (`YOLO`); one that does not read as it is refused at the declaration.
#[test]
fn set_gives_a_placeholder_the_type_it_is_declared_with() {
    let workspace = common::Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\n\
             template = \"{% if SHOW %}shown {% endif %}n={{ N * 2 }} r={{ R * 2 }} \
             l={{ L | length }} t={{ T.k }} s={{ S }} {% if YOLO %}yolo{% else %}careful{% endif %}\"\n\
             [placeholders]\nSHOW = true\nN = 5\nR = 0.5\nL = [\"a\", \"b\"]\nT = { k = \"v\" }\nS = \"text\"\n",
        )
        // A placeholder of the context alone.
        .file(
            "examples/contexts/basic.toml",
            "date = \"2026-11-01\"\n[placeholders]\nTEAM = 5\n",
        )
        .write();
    let plain = workspace.run(&["build", "--context", "basic"]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert_eq!(
        plain.stdout.trim_end(),
        "shown n=10 r=1.0 l=2 t=v s=text careful"
    );
    let set = workspace.run(&[
        "build",
        "--context",
        "basic",
        "--set",
        "SHOW=false",
        "--set",
        "N=3",
        "--set",
        "R=2",
        "--set",
        "L=[\"x\"]",
        "--set",
        "T={\"k\": \"w\"}",
        "--set",
        "S=false",
        "--set",
        "YOLO=true",
    ]);
    assert_eq!(set.code, 0, "{}", set.stderr);
    assert_eq!(set.stdout.trim_end(), "n=6 r=4 l=1 t=w s=false yolo");
    for (value, says, at) in [
        (
            "SHOW=no",
            "error[set-value-does-not-fit]: `SHOW` is set to `no`, but the variant `generic` declares it as `true` or `false`",
            Some("variants/generic.toml:4:8"),
        ),
        (
            "N=3.5",
            "`N` is set to `3.5`, but the variant `generic` declares it as a whole number",
            Some("variants/generic.toml:5:5"),
        ),
        (
            "L=x",
            "help: set `L` to a list written as JSON, such as `[\"a\", \"b\"]`",
            Some("variants/generic.toml:7:5"),
        ),
        // JSON that stops short, or gives a key twice (the last was kept), says where.
        (
            "L=[\"x\",",
            "declares it as a list, and it does not read as JSON, EOF while parsing a value at line 1 column 5",
            Some("variants/generic.toml:7:5"),
        ),
        (
            "T={\"k\": \"w\", \"k\": \"v\"}",
            "declares it as a table, and it does not read as JSON, duplicate key `k`: an object gives each key once",
            Some("variants/generic.toml:8:5"),
        ),
        (
            "YOLO=nah",
            "`YOLO` is set to `nah`, but the standard placeholder holds `true` or `false`",
            None,
        ),
        (
            "TEAM=abc",
            "`TEAM` is set to `abc`, but the context gives it as a whole number",
            None,
        ),
    ] {
        let refused = workspace.run(&["build", "--context", "basic", "--set", value]);
        assert_ne!(refused.code, 0, "{value}");
        assert!(refused.stdout.is_empty(), "{value}: {}", refused.stdout);
        assert!(refused.stderr.contains(says), "{value}: {}", refused.stderr);
        if let Some(at) = at {
            assert!(refused.stderr.contains(at), "{value}: {}", refused.stderr);
        }
    }
}

/// A key of `extra` the workspace declares takes its declared type from `--set`, whatever the
/// context holds: `3.5` is no integer.
#[test]
fn set_gives_a_declared_extra_key_its_declared_type() {
    let workspace = common::Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}[context_fields]\nretries = {{ type = \"integer\" }}\nteam = {{ type = \"string\" }}\n",
                common::MANIFEST
            ),
        )
        .file(
            "components/intro.md",
            "Retries: {{ extra.retries }}; team: {{ extra.team }}.\n",
        )
        .write();
    let run = workspace.run(&[
        "build",
        "--set",
        "extra.retries=4",
        "--set",
        "extra.team=core",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("Retries: 4; team: core."),
        "{}",
        run.stdout
    );
    let run = workspace.run(&["build", "--set", "extra.retries=3.5"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("`extra.retries` is a context field that holds an integer"),
        "{}",
        run.stderr
    );
    // A key the workspace does not declare, and a path past a value, name nothing.
    for (set, says) in [
        (
            "extra.retrie=1",
            "`extra.retrie` is not a key `[context_fields]` declares; did you mean `extra.retries`?",
        ),
        ("yolo.x=1", "`yolo` holds a boolean, not a table of fields"),
    ] {
        let run = workspace.run(&["build", "--set", set]);
        assert_eq!(run.code, 2, "{set}: {}", run.stdout);
        assert!(run.stderr.contains(says), "{set}: {}", run.stderr);
    }
}

/// `--set` of a predicate's name gives the predicate that value: as text, `false` read as true
/// and changed nothing. `true` and `false` are the booleans.
#[test]
fn set_of_a_predicate_reads_true_and_false_as_booleans() {
    let workspace = common::Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}[predicates]\nplanning = \"mode == 'plan'\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "components/intro.md",
            "{% if planning %}Plan first.{% else %}Act.{% endif %}\n",
        )
        .write();
    for (set, says) in [
        (None, "Act."),
        (Some("planning=true"), "Plan first."),
        (Some("planning=false"), "Act."),
        (Some("mode=plan"), "Plan first."),
    ] {
        let mut args = vec!["build"];
        if let Some(set) = set {
            args.extend(["--set", set]);
        }
        if set == Some("planning=false") {
            args.extend(["--set", "mode=plan"]);
        }
        let run = workspace.run(&args);
        assert_eq!(run.code, 0, "{set:?}: {}", run.stderr);
        assert!(run.stdout.contains(says), "{set:?}: {}", run.stdout);
    }
}

/// A path into a declared `extra` table the context leaves out starts from the table's
/// default, which templates see: it was refused, the context having no such table.
#[test]
fn set_into_a_declared_table_starts_from_its_default() {
    let workspace = common::Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}[context_fields]\ncfg = {{ type = \"object\", default = {{ depth = 2, inner = {{ x = 1 }} }} }}\n",
                common::MANIFEST
            ),
        )
        .file(
            "components/intro.md",
            "Depth {{ extra.cfg.depth }}, x {{ extra.cfg.inner.x }}.\n",
        )
        .write();
    for (set, says) in [
        (None, "Depth 2, x 1."),
        (Some("extra.cfg.depth=5"), "Depth 5, x 1."),
        (Some("extra.cfg.inner.x=7"), "Depth 2, x 7."),
    ] {
        let mut args = vec!["build"];
        if let Some(set) = set {
            args.extend(["--set", set]);
        }
        let run = workspace.run(&args);
        assert_eq!(run.code, 0, "{set:?}: {}", run.stderr);
        assert!(run.stdout.contains(says), "{set:?}: {}", run.stdout);
    }
}

/// `--set` of a text field of the context sets the field, so its standard placeholder
/// follows (`cwd` and `CWD` alike); a date must be one that exists.
#[test]
fn set_of_a_text_field_sets_the_field_its_placeholder_reads() {
    let workspace = common::Fixture::minimal()
        .file(
            "components/intro.md",
            "{{ cwd }} {{ CWD }} {{ CURRENT_DATE }} {{ MODE }}\n",
        )
        .write();
    let run = workspace.run(&[
        "build",
        "--set",
        "cwd=/srv/z",
        "--set",
        "date=2030-01-02",
        "--set",
        "mode=plan",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("/srv/z /srv/z 2030-01-02 plan"),
        "{}",
        run.stdout
    );
    for set in ["date=2030-02-30", "mode=fly"] {
        let run = workspace.run(&["build", "--set", set]);
        assert_eq!(run.code, 2, "{set}: {}", run.stdout);
    }
}

/// `show` and `context` write TOML; a null in a list or an integer above TOML's largest (both
/// possible in YAML and JSON) has no TOML form: named, with the format that has one.
#[test]
fn a_value_toml_cannot_write_is_named_with_the_format_that_can() {
    let workspace = common::Fixture::minimal()
        .file(
            "variants/listed.yaml",
            "id: listed\nextends: generic\nplaceholders:\n  A: [1, ~]\n",
        )
        .file(
            "examples/contexts/large.yaml",
            "date: 2026-11-01\nextra:\n  big: 18446744073709551615\n",
        )
        .write();
    let show = workspace.run(&["show", "listed"]);
    assert_eq!(show.code, 2, "{}", show.stdout);
    assert_eq!(
        show.stderr,
        "error: `placeholders.A.1` is null, which TOML cannot write: ask for `--format json`\n"
    );
    let context = workspace.run(&["context", "--context", "large"]);
    assert_eq!(context.code, 2, "{}", context.stdout);
    assert_eq!(
        context.stderr,
        "error: `extra.big` is an integer above 9223372036854775807, which TOML cannot write: \
         ask for `--format json`\n"
    );
    let json = workspace.run(&["context", "--context", "large", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    assert!(
        json.stdout.contains("\"big\": 18446744073709551615"),
        "{}",
        json.stdout
    );
    let json = workspace.run(&["show", "listed", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
}

/// A table nested under more keys than a TOML key of promptc's may have parts would be written
/// under a header promptc refuses to read back: `context` names it, with the format that
/// holds it; one level less is written, and reads back.
#[test]
fn a_table_too_deep_for_a_toml_key_is_named_and_one_less_reads_back() {
    let nested = |keys: usize| {
        let mut value = serde_json::json!({ "leaf": 1 });
        for _ in 1..keys {
            value = serde_json::json!({ "a": value });
        }
        serde_json::json!({ "date": "2026-11-01", "extra": value }).to_string()
    };
    let workspace = common::Fixture::minimal()
        .file("deep.json", nested(81))
        .file("deepest.json", nested(80))
        .write();
    let refused = workspace.run(&["context", "--context", "deep.json"]);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(
        refused.stderr.starts_with("error: `extra.a.a.")
            && refused.stderr.ends_with(
                "` is a table nested more than 80 deep, under a key longer than promptc reads \
                 back, which TOML cannot write: ask for `--format json`\n"
            ),
        "{}",
        refused.stderr
    );
    let written = workspace.run(&["context", "--context", "deepest.json"]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    std::fs::write(workspace.root().join("again.toml"), &written.stdout).unwrap();
    let again = workspace.run(&["context", "--context", "again.toml", "--format", "json"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
}

/// TOML's reader reads values inside at most 80 lists and inline tables: a JSON context of
/// lists nested 120 deep was written as TOML that `validate` then refused. `context` names the
/// first list or inline table (a table inside a list) past it; 80 are written and read back.
#[test]
fn lists_and_inline_tables_too_deep_for_toml_are_named_and_80_read_back() {
    let lists = |depth: usize| {
        let mut value = serde_json::json!(1);
        for _ in 0..depth {
            value = serde_json::json!([value]);
        }
        serde_json::json!({ "date": "2026-11-01", "extra": { "x": value } }).to_string()
    };
    // A table inside a list is written inline: `[{ a = [{ a = … }] }]`.
    let tables = |depth: usize| {
        let mut value = serde_json::json!(1);
        for level in 0..depth {
            value = if level % 2 == 0 {
                serde_json::json!([value])
            } else {
                serde_json::json!({ "a": value })
            };
        }
        serde_json::json!({ "date": "2026-11-01", "extra": { "x": [1, value] } }).to_string()
    };
    let workspace = common::Fixture::minimal()
        .file("lists81.json", lists(81))
        .file("lists80.json", lists(80))
        .file("tables81.json", tables(80))
        .file("tables80.json", tables(79))
        .write();
    for (file, place) in [
        ("lists81", format!("extra.x{}", ".0".repeat(80))),
        ("tables81", format!("extra.x.1{}.a", ".a.0".repeat(39))),
    ] {
        let refused = workspace.run(&["context", "--context", &format!("{file}.json")]);
        assert_eq!(refused.code, 2, "{file}: {}", refused.stdout);
        assert_eq!(
            refused.stderr,
            format!(
                "error: `{place}` is a list or inline table inside 80 others, more than promptc \
                 reads back from TOML, which TOML cannot write: ask for `--format json`\n"
            ),
            "{file}"
        );
    }
    for file in ["lists80", "tables80"] {
        let written = workspace.run(&["context", "--context", &format!("{file}.json")]);
        assert_eq!(written.code, 0, "{file}: {}", written.stderr);
        std::fs::write(workspace.root().join("again.toml"), &written.stdout).unwrap();
        let again = workspace.run(&["context", "--context", "again.toml", "--format", "json"]);
        assert_eq!(again.code, 0, "{file}: {}", again.stderr);
    }
}

/// `--set` names a placeholder: a key templates could never read is refused, as it is in a
/// context's `placeholders`, rather than set to no effect.
#[test]
fn a_set_key_that_is_not_a_name_is_a_usage_error() {
    let root = common::repo_root();
    for key in ["AGENT NAME", "9LIVES", "agent-name"] {
        let message = usage_failure(&root, &["build", "--set", &format!("{key}=x")]);
        assert!(
            message.contains(&format!(
                "`{key}` is not a placeholder name: expected ASCII letters"
            )),
            "{message}"
        );
    }
    let run = promptc()
        .current_dir(&root)
        .args(["build", "--set", "_AGENT_NAME_2=x"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
}

/// A command asked for `--format json` that fails says so in JSON on stdout, in the shape of
/// `validate --format json`: its diagnostics with their places, and an error that has no
/// place (a family the workspace lacks, a folder that is no workspace) with its code. People
/// still read the same on stderr.
#[test]
fn a_command_asked_for_json_fails_in_json() {
    let broken = common::Fixture::minimal()
        .file(
            "components/intro.toml",
            "id = \"intro\"\ndescription = \"Where.\"\nwhen = \"mode = 'plan'\"\n",
        )
        .write();
    let json_of = |run: &common::Run| -> serde_json::Value {
        serde_json::from_str(&run.stdout).unwrap_or_else(|error| panic!("{error}: {}", run.stdout))
    };
    for args in [
        &["build", "--format", "json"][..],
        &["explain", "--format", "json"],
        &["stats", "--format", "json"],
        &["tools"],
    ] {
        let run = broken.run(args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        let json = json_of(&run);
        assert_eq!(json["errors"], 1, "{args:?}: {json}");
        let diagnostic = &json["diagnostics"][0];
        assert_eq!(diagnostic["code"], "condition-syntax", "{args:?}");
        assert_eq!(diagnostic["file"], "components/intro.toml");
        assert_eq!(diagnostic["line"], 3);
        assert_eq!(diagnostic["help"], "did you mean `mode == 'plan'`?");
        assert!(
            run.stderr.contains("error[condition-syntax]"),
            "{}",
            run.stderr
        );
    }
    // Without JSON asked for, stdout stays empty.
    let run = broken.run(&["build"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));

    let valid = common::Fixture::minimal().write();
    let run = valid.run(&["build", "--family", "genric", "--format", "json"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let json = json_of(&run);
    assert_eq!(json["diagnostics"][0]["code"], "no-variant");
    assert!(json["diagnostics"][0].get("file").is_none(), "{json}");
    assert!(
        json["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("generic"),
        "{json}"
    );
    let elsewhere = valid.tmp().join("not-a-workspace");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run = valid.run(&[
        "-C",
        elsewhere.to_str().unwrap(),
        "check",
        "--format",
        "json",
    ]);
    assert_eq!(json_of(&run)["diagnostics"][0]["code"], "not-a-workspace");
    // A result that says how it failed itself is the only document: `check` names what did
    // not compile in its own.
    let unrendered = common::Fixture::minimal()
        .file("components/intro.md", "You work in {{ cwd | uppper }}.\n")
        .write();
    let run = unrendered.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let json = json_of(&run);
    assert_eq!(json["compiled"], false, "{json}");
    let diagnostic = &json["diagnostics"][0];
    assert_eq!(diagnostic["code"], "render-failed", "{json}");
    assert_eq!(diagnostic["file"], "components/intro.md");
    assert_eq!(diagnostic["help"], "did you mean `upper`?");
}

/// `promptc new` builds a workspace from nothing: the fallback family's variant is a base
/// variant with a template of its own (not one that extends itself), another family's extends
/// it, and a component the base template already reads is written though the workspace has
/// that error meanwhile. An id or a slot the workspace has already, in any format or another
/// case, is refused.
#[test]
fn new_starts_a_workspace_from_its_manifest_and_never_takes_a_name_twice() {
    let workspace = common::Fixture::empty()
        .file("promptc.toml", common::MANIFEST)
        .write();
    let new = |args: &[&str]| workspace.run(&[&["new"][..], args].concat());
    let made = new(&["variant", "generic"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    assert!(workspace.validate().items().is_empty(), "{}", made.stderr);
    // Each file is told what it needs before it changes a prompt.
    assert!(
        made.stderr.contains(
            "next: `promptc new component ID` and `promptc new tool NAME`, list them in variants/generic.toml, then `promptc build --variant generic`"
        ),
        "{}",
        made.stderr
    );
    let variant = std::fs::read_to_string(workspace.root().join("variants/generic.toml")).unwrap();
    assert!(!variant.contains("extends"), "{variant}");
    // The base template reads a section before its component exists: an error, which the
    // component `new` writes is what fixes.
    let base = workspace.root().join("variants/generic.md");
    let text = std::fs::read_to_string(&base).unwrap();
    std::fs::write(&base, format!("{text}\n{{{{ INTRO_SECTION }}}}\n")).unwrap();
    // An error the new file fixes is not told as one the workspace still has; one it leaves is.
    std::fs::write(workspace.root().join("variants/broken.toml"), "id = 3\n").unwrap();
    let made = new(&["component", "intro"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    assert!(
        made.stderr.contains(
            "note: the workspace has 1 error(s) in other files; `promptc validate` lists them"
        ),
        "{}",
        made.stderr
    );
    assert!(
        made.stderr.contains(
            "next: list `intro` in `components` of a variant (variants/generic.toml, say), write `{{ INTRO_SECTION }}` in its template where the section belongs, then `promptc build --variant generic`"
        ),
        "{}",
        made.stderr
    );
    std::fs::remove_file(workspace.root().join("variants/broken.toml")).unwrap();
    let listed = variant.replace("components = []", "components = [\"intro\"]");
    std::fs::write(workspace.root().join("variants/generic.toml"), listed).unwrap();
    let made = new(&["variant", "claude"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    assert!(
        made.stderr.contains(
            "next: set in variants/claude.toml what differs from `generic` (`add_components`, `add_tools`, `placeholders`, …), then `promptc build --variant claude`"
        ),
        "{}",
        made.stderr
    );
    let quiet = workspace.run(&["-q", "new", "tool", "grep_quietly"]);
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
    std::fs::remove_file(workspace.root().join("tools/grep_quietly.toml")).unwrap();
    assert!(workspace.validate().items().is_empty());
    let built = workspace.run(&["build", "--family", "claude"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    assert!(built.stdout.contains("INTRO"), "{}", built.stdout);

    // Taken: an id written in YAML, a component's slot (`Intro` fills `INTRO_SECTION`).
    std::fs::create_dir_all(workspace.root().join("tools")).unwrap();
    std::fs::write(
        workspace.root().join("tools/read_file.yaml"),
        "id: read_file\ndescription: Read a file.\n",
    )
    .unwrap();
    for (args, said) in [
        (
            &["tool", "read_file"][..],
            "the workspace has a tool `read_file` already (tools/read_file.yaml)",
        ),
        (
            &["component", "Intro"],
            "would fill the slot `INTRO_SECTION`, which component `intro` fills already",
        ),
        (&["variant", "claude"], "a variant `claude` already"),
        // Only by case: one file where case is ignored.
        (
            &["variant", "Claude"],
            "a variant `claude` already (variants/claude.toml), whose id differs from `Claude` \
             only by case",
        ),
    ] {
        let refused = new(args);
        assert_eq!(refused.code, 2, "{args:?}");
        assert!(
            refused.stderr.contains(said),
            "{args:?}: {}",
            refused.stderr
        );
    }
    assert!(!workspace.root().join("tools/read_file.toml").exists());
    assert!(!workspace.root().join("components/Intro.toml").exists());
    assert!(!workspace.root().join("variants/Claude.toml").exists());
    // An id too long to name a file after is refused by promptc, not by the file system.
    let long = "a".repeat(300);
    let refused = new(&["tool", &long]);
    assert_eq!(refused.code, 2);
    assert!(
        refused
            .stderr
            .contains("an id of 300 characters is too long to name a file after"),
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("help: use an id of at most 200 characters"),
        "{}",
        refused.stderr
    );
    // A device's name on Windows, whatever its case or extension: no file is written that a
    // clone there could not hold.
    for (kind, id) in [("component", "nul"), ("variant", "Con"), ("tool", "lpt1.a")] {
        let refused = new(&[kind, id]);
        assert_eq!(refused.code, 2, "{kind} {id}: {}", refused.stderr);
        assert!(
            refused
                .stderr
                .contains(&format!("`{id}` is a device's name on Windows")),
            "{}",
            refused.stderr
        );
        let folder = format!("{kind}s");
        assert!(
            !workspace
                .root()
                .join(&folder)
                .join(format!("{id}.toml"))
                .exists(),
            "{folder}/{id}.toml"
        );
    }
    // An id ending with a dot names an output Windows cannot create (validation refused
    // the workspace `new` had just written).
    let refused = new(&["variant", "x."]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("`x.` ends with a dot"),
        "{}",
        refused.stderr
    );
    assert!(!workspace.root().join("variants/x..toml").exists());
    // A tool's id is the name models call it by: one validation would refuse is refused
    // before the file is written.
    let refused = new(&["tool", "9lives"]);
    assert_eq!(refused.code, 2);
    assert!(
        refused
            .stderr
            .contains("`9lives` is not a name a model can call a tool by")
            && refused
                .stderr
                .contains("help: start it with a letter or `_`"),
        "{}",
        refused.stderr
    );
    assert!(!workspace.root().join("tools/9lives.toml").exists());
    // What an id may be made of is said as help, below what is wrong.
    let refused = new(&["tool", "read file"]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("error: `read file` is not an id\n")
            && refused.stderr.contains(
                "help: use letters, digits, `_`, `.` and `-`, starting with a letter or digit"
            ),
        "{}",
        refused.stderr
    );
}

/// `debug()` without arguments prints the names a template sees, in name order, with their
/// values: the same bytes on every run (minijinja's own form listed the environment's
/// templates in the order of a hash map).
#[test]
fn debug_of_the_whole_context_is_the_same_on_every_run() {
    let workspace = common::Fixture::minimal()
        .file("components/intro.md", "{{ debug() }}\n")
        .file("variants/generic.md", "{{ INTRO_SECTION }}\n")
        .write();
    let outputs: Vec<String> = (0..4)
        .map(|_| {
            let run = workspace.run(&["build"]);
            assert_eq!(run.code, 0, "{}", run.stderr);
            run.stdout
        })
        .collect();
    assert!(outputs.iter().all(|output| *output == outputs[0]));
    let names: Vec<&str> = outputs[0]
        .lines()
        .filter_map(|line| line.split_once(": ").map(|(name, _)| name))
        .filter(|name| !name.starts_with(' '))
        .collect();
    assert!(
        names.contains(&"cwd") && names.contains(&"TOOLS"),
        "{names:?}"
    );
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
}

/// A new variant extends the fallback family's variant by its id, which may differ from the
/// family's name (`generic-1`, of family `generic`).
#[test]
fn a_new_variant_extends_the_fallback_familys_variant_by_its_id() {
    let workspace = common::Fixture::minimal()
        .remove("variants/generic.toml")
        .file(
            "variants/generic-1.toml",
            common::VARIANT
                .replace(
                    "id = \"generic\"",
                    "id = \"generic-1\"\nfamily = \"generic\"",
                )
                .replace("generic.md", "generic-1.md"),
        )
        .file("variants/generic-1.md", common::BASE_TEMPLATE)
        .remove("variants/generic.md")
        .write();
    let made = workspace.run(&["new", "variant", "small"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let text = std::fs::read_to_string(workspace.root().join("variants/small.toml")).unwrap();
    assert!(text.contains("extends = \"generic-1\""), "{text}");
    let validation = workspace.validate();
    assert!(validation.items().is_empty(), "{:#}", validation.json);
}

/// A build that names no context, in a workspace whose manifest names no `default_context`,
/// compiles an empty context: it says so, with the flag and the setting that would name one,
/// so that an error that follows (the date not known) is not a puzzle. Naming one, or a
/// default, or `-q`, leaves the note out.
#[test]
fn a_build_without_a_context_says_it_compiles_an_empty_one() {
    let workspace = common::Fixture::minimal().write();
    let note = "note: no context given, and promptc.toml sets no `default_context`";
    // The fixture's component reads the date, which only the context gives.
    let plain = workspace.run(&["build", "--family", "generic"]);
    assert_eq!(plain.code, 1, "{}", plain.stderr);
    assert!(plain.stderr.starts_with(note), "{}", plain.stderr);
    assert!(plain.stderr.contains("error[no-date]"), "{}", plain.stderr);
    assert!(
        plain
            .stderr
            .contains("pass `--context basic`, or set `default_context = \"basic\"`"),
        "{}",
        plain.stderr
    );
    for args in [
        &["build", "--family", "generic", "--context", "basic"][..],
        &["build", "--family", "generic", "-q"],
    ] {
        let run = workspace.run(args);
        assert!(!run.stderr.contains(note), "{args:?}: {}", run.stderr);
    }
    let manifest = format!("{}default_context = \"basic\"\n", common::MANIFEST);
    std::fs::write(workspace.root().join("promptc.toml"), manifest).unwrap();
    let defaulted = workspace.run(&["build", "--family", "generic"]);
    assert_eq!(defaulted.code, 0, "{}", defaulted.stderr);
    assert!(!defaulted.stderr.contains(note), "{}", defaulted.stderr);
}

/// Arguments refused before any command runs (a malformed `--set`, an unknown flag) printed
/// nothing on stdout, where a program asking for JSON always reads a JSON document: it gets
/// the usage error as one, besides the message on stderr. Without JSON, stdout stays empty.
#[test]
fn a_usage_error_is_a_json_document_when_json_is_asked_for() {
    let workspace = common::Fixture::minimal().write();
    for args in [
        &["build", "--format", "json", "--set", "x"][..],
        &["--format=json", "check", "--bogus"],
        &["-C", ".", "tools", "--bogus"],
    ] {
        let run = workspace.run(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        let json: serde_json::Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|error| panic!("{args:?}: {error}: {}", run.stdout));
        assert_eq!(json["diagnostics"][0]["code"], "usage", "{json}");
        assert_eq!(json["errors"], 1);
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    }
    let plain = workspace.run(&["build", "--bogus"]);
    assert_eq!(plain.code, 2);
    assert_eq!(plain.stdout, "");
    // After `--`, `--format json` and `tools` are values, not an option and the command.
    for args in [
        &["build", "--bogus", "--", "--format", "json"][..],
        &["build", "--bogus", "--", "--format=json"],
        &["--", "tools", "--bogus"],
    ] {
        let run = workspace.run(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
    }
    assert!(
        plain.stderr.contains("unexpected argument '--bogus'"),
        "{}",
        plain.stderr
    );
}

/// `build --all` compiles the requests the manifest names: a flag that shapes one request
/// (`--rules`, `--model`, `--dialect`, …) was accepted and ignored; it is refused, as
/// `--context` was.
#[test]
fn build_all_refuses_the_flags_of_a_single_request() {
    let workspace = common::Fixture::minimal().write();
    for flags in [
        &["--rules", "."][..],
        &["--global-rules", "."],
        &["--files", "a.ts"],
        &["--disable-rule", "x"],
        &["--model", "gpt-5"],
        &["--dialect", "openai"],
        &["--context", "basic"],
    ] {
        let run = workspace.run(&[&["build", "--all"][..], flags].concat());
        assert_eq!(run.code, 2, "{flags:?}: {}", run.stderr);
        assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
    }
    assert!(!workspace.root().join("examples/prompts").exists());
}

/// `new` in a workspace written in YAML wrote TOML: it writes YAML there (with the YAML
/// language server's schema line), TOML elsewhere, and `--as` chooses.
#[test]
fn new_writes_the_format_the_workspace_is_written_in() {
    let workspace = common::Fixture::empty()
        .file("promptc.toml", common::MANIFEST)
        .file(
            "variants/generic.yaml",
            "id: generic\ntemplate: \"{{ INTRO_SECTION }}\"\ncomponents: [intro]\n",
        )
        .file("components/intro.yaml", "id: intro\ntemplate: Hello.\n")
        .write();
    let made = workspace.run(&["new", "tool", "grep"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let text = std::fs::read_to_string(workspace.root().join("tools/grep.yaml")).unwrap();
    assert!(
        text.starts_with(
            "# yaml-language-server: $schema=../schema/tool.schema.json\nid: \"grep\"\n"
        ),
        "{text}"
    );
    let made = workspace.run(&["new", "component", "rules"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    assert!(workspace.root().join("components/rules.yaml").is_file());
    assert!(workspace.root().join("components/rules.md").is_file());
    let made = workspace.run(&["new", "tool", "find", "--as", "toml"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    assert!(workspace.root().join("tools/find.toml").is_file());
    // `yml`, the other extension of YAML files, names the language too.
    let made = workspace.run(&["new", "tool", "glob", "--as", "yml"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    assert!(workspace.root().join("tools/glob.yaml").is_file());
    // The files written are valid as they are; no variant lists them yet, which is said.
    assert_eq!(
        workspace.validate().codes(),
        [
            "unused-component",
            "unused-tool",
            "unused-tool",
            "unused-tool"
        ],
        "{:?}",
        workspace.validate().items()
    );
}

/// `new` with `paths.tools` naming the root (or a folder outside the workspace) wrote the
/// tool there, where no load reads it: refused, naming the setting, nothing written.
#[test]
fn new_refuses_a_folder_setting_the_load_does_not_read() {
    for (tools, written_at) in [(".", "t1.toml"), ("../outside", "../outside/t1.toml")] {
        let workspace = common::Fixture::empty()
            .file(
                "promptc.toml",
                format!("{}\n[paths]\ntools = \"{tools}\"\n", common::MANIFEST),
            )
            .file(
                "variants/generic.toml",
                "id = \"generic\"\ntemplate = \"Hi.\"\n",
            )
            .write();
        let made = workspace.run(&["new", "tool", "t1"]);
        assert_eq!(made.code, 2, "{}", made.stderr);
        assert!(
            made.stderr.contains(&format!(
                "`paths.tools` (\"{tools}\") names no folder promptc reads files from"
            )) && made
                .stderr
                .contains("help: set it to a folder below the workspace root"),
            "{}",
            made.stderr
        );
        assert!(!workspace.root().join(written_at).exists());
    }
}

/// A link to nothing where `new` would write was told of as a tool the workspace has already.
#[cfg(unix)]
#[test]
fn new_over_a_link_to_nothing_says_it_is_a_link() {
    let workspace = common::Fixture::empty()
        .file("promptc.toml", common::MANIFEST)
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate = \"Hi.\"\n",
        )
        .write();
    std::fs::create_dir_all(workspace.root().join("tools")).unwrap();
    std::os::unix::fs::symlink("../nowhere", workspace.root().join("tools/t2.toml")).unwrap();
    let made = workspace.run(&["new", "tool", "t2"]);
    assert_eq!(made.code, 1, "{}", made.stderr);
    assert!(
        made.stderr
            .contains("tools/t2.toml is a symbolic link to nothing"),
        "{}",
        made.stderr
    );
    assert!(!made.stderr.contains("has a tool"), "{}", made.stderr);
}

/// `show` and `context` printed TOML (or JSON) only: in a workspace written in YAML they print
/// YAML, which reads back as the JSON they print; elsewhere TOML; `--format` chooses.
#[test]
fn show_and_context_print_the_language_the_workspace_is_written_in() {
    let workspace = common::Fixture::empty()
        .file("promptc.toml", common::MANIFEST)
        .file(
            "variants/generic.yaml",
            "id: generic\nversion: 1.0.0\ntemplate: \"{{ INTRO_SECTION }}\\n\\n  indented: yes\\n\"\ncomponents: [intro]\n",
        )
        .file("components/intro.yaml", "id: intro\ntemplate: Hello.\n")
        .write();
    for command in ["show generic", "context"] {
        let args: Vec<&str> = command.split(' ').collect();
        let yaml = workspace.run(&args);
        assert_eq!(yaml.code, 0, "{command}: {}", yaml.stderr);
        assert!(!yaml.stdout.contains(" = "), "{command}: {}", yaml.stdout);
        let json = workspace.run(&[&args[..], &["--format", "json"]].concat());
        assert_eq!(json.code, 0, "{command}: {}", json.stderr);
        let read: serde_json::Value = serde_saphyr::from_str(&yaml.stdout)
            .unwrap_or_else(|error| panic!("{command}: {error}: {}", yaml.stdout));
        let expected: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert_eq!(read, expected, "{command}: {}", yaml.stdout);
        let toml = workspace.run(&[&args[..], &["--format", "toml"]].concat());
        assert_eq!(toml.code, 0, "{command}: {}", toml.stderr);
        let read: serde_json::Value = toml::from_str(&toml.stdout).unwrap();
        assert_eq!(read, expected, "{command}: {}", toml.stdout);
    }
    let show = workspace.run(&["show", "generic"]);
    assert!(
        show.stdout
            .contains("template: |\n  {{ INTRO_SECTION }}\n\n    indented: yes\n"),
        "{}",
        show.stdout
    );
    // A workspace of TOML prints TOML.
    let workspace = common::Fixture::minimal().write();
    let show = workspace.run(&["show", "generic"]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert!(show.stdout.contains("id = \"generic\""), "{}", show.stdout);
}

/// A variant in another folder than its parent: `show` printed the parent's `template_file`s
/// as the parent wrote them, relative to the parent's folder, so the variant it printed, saved
/// in place of the child, named files that are not there. They are named from the child's
/// folder, and the saved variant builds the same prompt.
#[test]
fn show_names_inherited_files_from_the_shown_variants_folder() {
    let fixture = common::Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\"]\ntools = [\"read_file\"]\n\n[overrides.components.intro]\ntemplate_file = \"../components/intro-generic.md\"\n",
        )
        .file("components/intro-generic.md", "Hello from the generic intro.\n")
        .file(
            "variants/more/compact.toml",
            "id = \"compact\"\nextends = \"generic\"\ntool_format_file = \"format.md\"\n",
        )
        .file("variants/more/format.md", "- {{ tool.name }}\n");
    let workspace = fixture.write();
    let built = workspace.run(&["build", "--family", "compact", "--context", "basic"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    assert!(
        built.stdout.contains("Hello from the generic intro."),
        "{}",
        built.stdout
    );
    for format in ["toml", "yaml", "json"] {
        let show = workspace.run(&["show", "compact", "--format", format]);
        assert_eq!(show.code, 0, "{format}: {}", show.stderr);
        assert!(
            show.stdout.contains("../generic.md"),
            "{format}: {}",
            show.stdout
        );
        assert!(
            show.stdout.contains("../../components/intro-generic.md"),
            "{format}: {}",
            show.stdout
        );
        // The child's own file is named as it wrote it.
        assert!(
            !show.stdout.contains("more/format.md"),
            "{format}: {}",
            show.stdout
        );
        std::fs::remove_file(workspace.root().join("variants/more/compact.toml")).ok();
        std::fs::remove_file(workspace.root().join("variants/more/compact.yaml")).ok();
        std::fs::remove_file(workspace.root().join("variants/more/compact.json")).ok();
        let saved = if format == "toml" { "toml" } else { "yaml" };
        std::fs::write(
            workspace
                .root()
                .join(format!("variants/more/compact.{saved}")),
            &show.stdout,
        )
        .unwrap();
        let rebuilt = workspace.run(&["build", "--family", "compact", "--context", "basic"]);
        assert_eq!(rebuilt.code, 0, "{format}: {}", rebuilt.stderr);
        assert_eq!(rebuilt.stdout, built.stdout, "{format}");
    }
}

/// `super()` in a partial included inside a block found no block of its own template and
/// panicked in minijinja; it is a render error at the call. A bare `super` is a name like any
/// other: undefined unless something defines it.
#[test]
fn super_in_an_included_partial_is_a_render_error_not_a_panic() {
    let fixture = common::Fixture::minimal()
        .file("partials/p.md", "{{ super() }}\n")
        .file(
            "components/intro.md",
            "X {% block b %}{% include 'partials/p.md' %}{% endblock %}\n",
        );
    let built = fixture.write().run(&["build"]);
    assert_eq!(built.code, 1, "{}", built.stderr);
    assert!(
        built.stderr.contains("error[render-failed]")
            && built.stderr.contains("cannot super here")
            && built.stderr.contains("partials/p.md:1:4"),
        "{}",
        built.stderr
    );
    let bare = fixture
        .file(
            "components/intro.md",
            "X {% block b %}[{{ super }}]{% endblock %}\n",
        )
        .write()
        .run(&["validate"]);
    assert!(
        bare.stderr
            .contains("error[undefined-placeholder]: `super` is not defined by anything"),
        "{}",
        bare.stderr
    );
}

/// What minijinja hands from one template to another is defined where it arrives: an
/// included partial sees its includer's loop variable and `loop`, through another include
/// too; an imported partial's macros see the importer's names; a layout's sets and macros
/// reach its child's blocks, which also see what the child sets after them. A name made with
/// `+` is computed, not the literal before it.
#[test]
fn names_an_include_an_import_or_a_layout_hands_over_are_defined() {
    let workspace = common::Fixture::minimal()
        .file("partials/row.md", "{{ loop.index }}.{{ t }};")
        .file("partials/outer.md", "<{% include 'partials/inner.md' %}>")
        .file("partials/inner.md", "{{- t -}}")
        .file(
            "partials/heading.md",
            "{% macro heading() %}## {{ title | upper }}{% endmacro %}",
        )
        .file(
            "partials/layout.md",
            "{% set label = 'L' %}{% macro star(s) %}*{{ s }}*{% endmacro %}[{% block b %}{% endblock %}]",
        )
        .file("partials/y.md", "Y")
        .file(
            "components/intro.md",
            "{% for t in ['a', 'b'] %}{% include 'partials/row.md' %}{% endfor %}\n\
             {% for t in ['c'] %}{% include 'partials/outer.md' %}{% endfor %}\n\
             {% set title = 'feedback' %}{% import 'partials/heading.md' as h %}{{ h.heading() }}\n\
             {% include 'partials/' + 'y.md' %}\n",
        )
        .file("components/rules.toml", "id = \"rules\"\n")
        .file(
            "components/rules.md",
            "{% extends 'partials/layout.md' %}{% block b %}{{ label }}-{{ mine }} {{ star('x') }}{% endblock %}{% set mine = 'M' %}",
        )
        .file(
            "variants/generic.toml",
            common::VARIANT.replace("[\"intro\"]", "[\"intro\", \"rules\"]"),
        )
        .file(
            "variants/generic.md",
            format!("{}\n{{{{ RULES_SECTION }}}}\n", common::BASE_TEMPLATE),
        )
        .write();
    let checked = workspace.run(&["validate"]);
    assert_eq!(checked.code, 0, "{}", checked.stderr);
    assert!(
        checked.stderr.contains("warning[computed-template-name]"),
        "{}",
        checked.stderr
    );
    let built = workspace.run(&["build"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    for expected in ["1.a;2.b;\n<c>\n## FEEDBACK\nY", "[L-M *x*]"] {
        assert!(
            built.stdout.contains(expected),
            "{expected}: {}",
            built.stdout
        );
    }
}

/// A name a macro reads that its template sets after defining it, and a name an included
/// partial sets (an include renders in the includer's frame), are there when the render
/// reads them: validation does not call them undefined. A name read before the partial that
/// sets it is included is the render's to report, at its place.
#[test]
fn a_name_set_for_a_macro_later_or_by_an_included_partial_is_defined() {
    let fixture = common::Fixture::minimal()
        .file("partials/sets.md", "{% set later = 'from the partial' %}")
        .file(
            "components/intro.md",
            "{% macro show() %}[{{ shown }}]{% endmacro %}{% set shown = 'set' %}{{ show() }}\n\
             {% include 'partials/sets.md' %}{{ later }}\n",
        );
    let workspace = fixture.write();
    let built = workspace.run(&["build"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    assert!(
        built.stdout.contains("[set]\nfrom the partial"),
        "{}",
        built.stdout
    );
    let checked = workspace.run(&["validate"]);
    assert_eq!(checked.code, 0, "{}", checked.stderr);

    let early = fixture
        .file(
            "components/intro.md",
            "{{ later }}{% include 'partials/sets.md' %}\n",
        )
        .write();
    let built = early.run(&["build"]);
    assert_eq!(built.code, 1, "{}", built.stderr);
    assert!(
        built.stderr.contains("error[render-failed]")
            && built.stderr.contains("components/intro.md:1:4"),
        "{}",
        built.stderr
    );

    let never = common::Fixture::minimal()
        .file(
            "components/intro.md",
            "{% for i in [1] %}{% macro m() %}{{ gone }}{% endmacro %}{{ m() }}{% endfor %}\n\
             {% set gone = 1 %}\n",
        )
        .write();
    let built = never.run(&["validate"]);
    assert_eq!(built.code, 1, "{}", built.stderr);
    assert!(
        built
            .stderr
            .contains("error[undefined-placeholder]: `gone`"),
        "{}",
        built.stderr
    );
}

/// A section's render is reused for another context only when every name it reads has the
/// same value there: a template that sets a name from itself, or reads one called `self`,
/// gives each context its own text, as a build of that context alone does.
#[test]
fn a_render_is_reused_only_where_every_name_it_reads_agrees() {
    let workspace = common::Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}[placeholders]\nself = \"base\"\n",
                common::VARIANT.replace("[\"intro\"]", "[\"intro\", \"place\"]")
            ),
        )
        .file(
            "components/intro.md",
            "{% set cwd = cwd | upper %}In {{ cwd }}; v={{ self }}; head={{ CWD[:4] }}.\n",
        )
        // A name a partial does not export is looked up in the importing render.
        .file("partials/m.md", "{% macro other() %}o{% endmacro %}")
        .file("components/place.toml", "id = \"place\"\n")
        .file(
            "components/place.md",
            "{% from 'partials/m.md' import cwd as where %}At {{ where }}.\n",
        )
        .file(
            "variants/generic.md",
            format!("{}\n{{{{ PLACE_SECTION }}}}\n", common::BASE_TEMPLATE),
        )
        // A condition's result is reused the same way: it reads what it slices.
        .file(
            "tools/read_file.toml",
            format!("when = \"cwd[:4] == '/one'\"\n{}", common::TOOL),
        )
        .file(
            "examples/contexts/basic.toml",
            "date = \"2026-11-01\"\ncwd = \"/one\"\n[placeholders]\nself = \"first\"\n",
        )
        .file(
            "examples/contexts/other.toml",
            "date = \"2026-11-01\"\ncwd = \"/two\"\n[placeholders]\nself = \"second\"\n",
        )
        .write();
    let built = workspace.run(&["build", "--all"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    for (context, expected, tool) in [
        ("basic", "In /ONE; v=first; head=/one.\n\nAt /one.", true),
        ("other", "In /TWO; v=second; head=/two.\n\nAt /two.", false),
    ] {
        let path = workspace
            .root()
            .join(format!("examples/prompts/generic/{context}.md"));
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(written.contains(expected), "{context}: {written}");
        assert_eq!(written.contains("read_file"), tool, "{context}: {written}");
        let alone = workspace.run(&["build", "--context", context]);
        assert_eq!(alone.code, 0, "{}", alone.stderr);
        assert_eq!(alone.stdout, written, "{context}");
    }
}

/// `build --all` and `check` in a workspace whose matrix holds nothing (no context file yet,
/// or a `[build]` that lists none) said only "0 outputs": they say why.
#[test]
fn an_empty_build_matrix_is_said_with_its_reason() {
    let no_contexts = common::Fixture::minimal()
        .remove("examples/contexts/basic.toml")
        .write();
    let none_listed = common::Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[build]\ncontexts = []\n", common::MANIFEST),
        )
        .write();
    for (workspace, why) in [
        (
            &no_contexts,
            "there is no context file in examples/contexts/ (each one there is compiled with every family)",
        ),
        (
            &none_listed,
            "`[build]` in promptc.toml lists no family or no context to compile",
        ),
    ] {
        // `check`, a CI gate, warns that it compared nothing (a misspelt contexts folder
        // would leave it checking nothing), and passes: a workspace may have no outputs.
        for (command, said) in [
            ("build --all", "note: the build matrix is empty"),
            (
                "check",
                "warning: `check` compared nothing: the build matrix is empty",
            ),
        ] {
            let args: Vec<&str> = command.split(' ').collect();
            let run = workspace.run(&args);
            assert_eq!(run.code, 0, "{command}: {}", run.stderr);
            assert!(
                run.stderr.contains(&format!("{said}: {why}\n")),
                "{command}: {}",
                run.stderr
            );
        }
    }
    // A matrix with entries says nothing of it.
    let built = common::Fixture::minimal().write().run(&["build", "--all"]);
    assert!(!built.stderr.contains("empty"), "{}", built.stderr);
}

/// `context --out` saves the context as an example, in the language of the file's extension:
/// the shell's `> examples/contexts/saved.toml` emptied the file before promptc read the
/// workspace, which refused it, and the command failed. A context file may be written again;
/// another file of the workspace is refused and left as it was.
#[test]
fn context_out_saves_an_example_context_the_workspace_reads_back() {
    let workspace = common::Fixture::minimal().write();
    let basic = workspace.run(&["build", "--context", "basic"]);
    assert_eq!(basic.code, 0, "{}", basic.stderr);
    // A TOML or YAML context in the contexts folder has the schema line `new` writes, for
    // the editor; JSON has no comment to hold one.
    for (file, starts) in [
        ("examples/contexts/saved.json", "{"),
        (
            "examples/contexts/saved.toml",
            "#:schema ../../schema/context.schema.json\ncwd = ",
        ),
        (
            "examples/contexts/deeper/saved.yaml",
            "# yaml-language-server: $schema=../../../schema/context.schema.json\ncwd: ",
        ),
    ] {
        // The second time, the file is a context of the workspace.
        for _ in 0..2 {
            let saved = workspace.run(&["context", "--context", "basic", "--out", file]);
            assert_eq!(saved.code, 0, "{file}: {}", saved.stderr);
            assert_eq!(saved.stdout, "", "{file}");
            assert!(
                saved.stderr.contains(&format!("wrote {file}")),
                "{}",
                saved.stderr
            );
        }
        let text = std::fs::read_to_string(workspace.root().join(file)).unwrap();
        assert!(text.starts_with(starts), "{file}: {text}");
        let name = std::path::Path::new(file)
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap();
        let built = workspace.run(&["build", "--context", name]);
        assert_eq!(built.code, 0, "{file}: {}", built.stderr);
        assert_eq!(built.stdout, basic.stdout, "{file}");
        std::fs::remove_file(workspace.root().join(file)).unwrap();
    }
    // A `--format` the extension contradicts would be read back as the extension says.
    let mismatch = workspace.run(&[
        "context",
        "--context",
        "basic",
        "--format",
        "json",
        "--out",
        "examples/contexts/x.toml",
    ]);
    assert_eq!(mismatch.code, 2, "{}", mismatch.stderr);
    assert!(
        mismatch
            .stderr
            .contains("give the file a `.json` name, or leave `--format` out"),
        "{}",
        mismatch.stderr
    );
    assert!(!workspace.root().join("examples/contexts/x.toml").exists());
    // No context named, none by default: the empty context is not written over a saved one.
    let basic = workspace.root().join("examples/contexts/basic.toml");
    let saved = std::fs::read_to_string(&basic).unwrap();
    let forgot = workspace.run(&["context", "--out", "examples/contexts/basic.toml"]);
    assert_eq!(forgot.code, 2, "{}", forgot.stderr);
    assert!(
        forgot
            .stderr
            .contains("the empty context would replace examples/contexts/basic.toml"),
        "{}",
        forgot.stderr
    );
    assert_eq!(std::fs::read_to_string(&basic).unwrap(), saved);
    let variant = workspace.root().join("variants/generic.toml");
    let before = std::fs::read_to_string(&variant).unwrap();
    let refused = workspace.run(&[
        "context",
        "--context",
        "basic",
        "--out",
        "variants/generic.toml",
    ]);
    assert_ne!(refused.code, 0);
    assert!(
        refused
            .stderr
            .contains("is one of the workspace's own files"),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::read_to_string(&variant).unwrap(), before);
}

/// `stats --context` takes a context file or standard input, as `build` does: it took a name
/// of the workspace's only. The counts are those of the same context by its name.
#[test]
fn stats_measures_a_context_file_or_standard_input() {
    // The build matrix pins a version of the family: measured as the matrix compiles it.
    let workspace = common::Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[[build.entries]]\nvariant = \"generic-old\"\ncontext = \"basic\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/generic.toml",
            format!("{}version = \"2.0.0\"\n", common::VARIANT),
        )
        .file(
            "variants/generic-old.toml",
            "id = \"generic-old\"\nfamily = \"generic\"\nextends = \"generic\"\nversion = \"1.0.0\"\n\
             template = \"An older layout, longer than the new one by some words.\\n{{ INTRO_SECTION }}\\n{{ TOOLS }}\"\n",
        )
        .write();
    let context = workspace.root().join("examples/contexts/basic.toml");
    let rows = |run: common::Run| -> Vec<serde_json::Value> {
        assert_eq!(run.code, 0, "{}", run.stderr);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        json["prompts"].as_array().unwrap().clone()
    };
    let named = rows(workspace.run(&["stats", "--context", "basic", "--format", "json"]));
    let path = context.to_str().unwrap();
    let from_file = rows(workspace.run(&["stats", "--context", path, "--format", "json"]));
    let mut command = workspace.command();
    command
        .args(["stats", "--context", "-", "--format", "json"])
        .write_stdin(std::fs::read(&context).unwrap());
    let from_stdin = rows(common::Run::checked(command.output().unwrap()));
    for (rows, shown) in [(&from_file, path), (&from_stdin, "<stdin>")] {
        assert_eq!(rows.len(), named.len(), "{shown}");
        for (row, by_name) in rows.iter().zip(&named) {
            assert_eq!(row["context"], shown);
            for field in ["family", "tokens", "characters", "stable_prefix"] {
                assert_eq!(row[field], by_name[field], "{shown} {field}");
            }
        }
    }
}

/// A schema file that is there but cannot be read as one (a FIFO, a link to a device or out
/// of the workspace) passed `validate` as current, where `schema --check` refused it: it is
/// told as stale, as `promptc schema` would replace it. A schema file not there is not told.
#[cfg(unix)]
#[test]
fn a_schema_file_that_cannot_be_read_is_told_as_stale() {
    let workspace = common::Fixture::minimal().write();
    assert_eq!(workspace.run(&["schema"]).code, 0);
    let schemas = workspace.root().join("schema");
    let context = schemas.join("context.schema.json");
    let stale = "stale: schema/context.schema.json differs from the generated schema";
    std::fs::remove_file(&context).unwrap();
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("stale:"), "{}", run.stderr);
    for special in ["fifo", "device", "outside"] {
        std::fs::remove_file(&context).ok();
        match special {
            "fifo" => {
                let made = std::process::Command::new("mkfifo")
                    .arg(&context)
                    .status()
                    .unwrap();
                assert!(made.success());
            }
            "device" => std::os::unix::fs::symlink("/dev/zero", &context).unwrap(),
            _ => std::os::unix::fs::symlink("/etc/hostname", &context).unwrap(),
        }
        let run = workspace.run(&["validate"]);
        assert_eq!(run.code, 0, "{special}: {}", run.stderr);
        assert!(run.stderr.contains(stale), "{special}: {}", run.stderr);
        // The other schema files are still read.
        assert_eq!(
            run.stderr.matches("stale:").count(),
            1,
            "{special}: {}",
            run.stderr
        );
    }
}

/// A link in a folder of data files to a folder above it (`components/up -> ..`) read the
/// manifest and the variants again as components, each with errors of a kind it is not: the
/// link is refused, and what it would lead to is read once, as what it is. A link to the
/// folder itself is walked once, and reads nothing more.
#[cfg(unix)]
#[test]
fn a_link_to_a_folder_above_is_refused_not_walked() {
    let workspace = common::Fixture::minimal().write();
    let components = workspace.root().join("components");
    std::os::unix::fs::symlink("..", components.join("up")).unwrap();
    std::fs::create_dir(components.join("sub")).unwrap();
    std::os::unix::fs::symlink("../..", components.join("sub/top")).unwrap();
    std::os::unix::fs::symlink(".", components.join("here")).unwrap();
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for link in ["up", "sub/top"] {
        assert!(
            run.stderr.contains(&format!(
                "`components/{link}` is a symbolic link to the workspace's root, which holds \
                 it: the files there would be read again, as files of this folder"
            )),
            "{}",
            run.stderr
        );
    }
    assert_eq!(run.stderr.matches("error[").count(), 2, "{}", run.stderr);
    // A link to a folder elsewhere in the workspace is still followed.
    std::fs::remove_file(components.join("up")).unwrap();
    std::fs::remove_file(components.join("sub/top")).unwrap();
    std::fs::remove_file(components.join("here")).unwrap();
    std::fs::create_dir_all(workspace.root().join("shared/more")).unwrap();
    std::fs::write(
        workspace.root().join("shared/more/outro.toml"),
        "id = \"outro\"\ntemplate = \"Bye.\"\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("../shared/more", components.join("more")).unwrap();
    let run = workspace.run(&["validate"]);
    assert!(run.stderr.contains("outro"), "{}", run.stderr);
    assert!(!run.stderr.contains("error["), "{}", run.stderr);
}

/// Two files declaring one variant id: which one the others extend is not known, and what
/// depends on it was judged against the first in name order: a child's overrides of the
/// other's components were called unused, its placeholders undefined. The duplicate is
/// reported alone, as the root cause.
#[test]
fn a_duplicate_variant_id_is_reported_without_what_follows_from_it() {
    let workspace = common::Fixture::minimal()
        .file(
            "variants/small.toml",
            "id = \"small\"\nextends = \"generic\"\n\n[overrides.components.intro]\norder = 1\n",
        )
        .file(
            "variants/another.toml",
            "id = \"generic\"\ntemplate = \"{{ OTHER }}\"\ncomponents = []\n",
        )
        .write();
    let run = workspace.run(&["validate", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let codes: Vec<&str> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["duplicate-id"], "{json}");
}

/// A template holding a NUL character (a file saved as UTF-16 reads so, a NUL beside each
/// letter) put NULs into the prompt, which the providers' APIs refuse and which makes git take
/// the output for a binary file: it is a template error at the first NUL.
#[test]
fn a_template_holding_a_nul_character_is_an_error_at_it() {
    let utf16: Vec<u8> = "Hi.\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let workspace = common::Fixture::minimal()
        .file("components/intro.md", utf16)
        .write();
    let run = workspace.run(&["build", "--context", "basic"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!run.stdout.contains('\0'));
    assert!(
        run.stderr.contains("error[template-syntax]")
            && run.stderr.contains("holds a NUL character (U+0000)")
            && run.stderr.contains("--> components/intro.md:1:2"),
        "{}",
        run.stderr
    );
}

/// `explain` names the file and place of a component's template override, also when the
/// variant inherits it: "overridden by the variant" sent the reader to a file that did not
/// hold it.
#[test]
fn github_annotations_name_files_from_the_repository_s_root_wherever_the_step_runs() {
    // GitHub resolves an annotation's file against the checkout: a workspace in a subfolder
    // of the repository, validated from within it, must still name `ws/components/…`.
    let workspace = common::Fixture::minimal()
        .file("components/intro.md", "You work in {{ cwdd }}.\n")
        .write();
    let annotated = |command: &mut assert_cmd::Command| -> String {
        let output = command
            .args(["validate", "--format", "github"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        let stdout = String::from_utf8(output.stdout).unwrap();
        let line = stdout
            .lines()
            .find(|line| line.starts_with("::error"))
            .unwrap();
        let file = line.split("file=").nth(1).unwrap();
        file.split(',').next().unwrap().to_string()
    };
    // Outside any repository: from the current folder, as before.
    let outside = annotated(workspace.command().env_remove("GITHUB_WORKSPACE"));
    assert_eq!(outside, "components/intro.md");
    // The checkout GitHub names, though no `.git` is there.
    let checkout = annotated(workspace.command().env("GITHUB_WORKSPACE", workspace.tmp()));
    assert_eq!(checkout, "ws/components/intro.md");
    // The repository the workspace lies in, found by its `.git`.
    std::fs::create_dir(workspace.tmp().join(".git")).unwrap();
    let repository = annotated(workspace.command().env_remove("GITHUB_WORKSPACE"));
    assert_eq!(repository, "ws/components/intro.md");
}

#[test]
fn a_control_character_in_a_file_s_name_does_not_hide_a_character_windows_keeps() {
    // A control character alone is shown by its picture and does not stop the load; beside a
    // `:`, it hid the `:` from the check of what a clone on Windows can hold.
    let validation = common::Fixture::minimal()
        .file("partials/c\u{1}:d.md", "x")
        .file("partials/e\u{1}f.md", "x")
        .validate();
    let refused: Vec<String> = validation
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "invalid-value")
        .map(|d| d.file)
        .collect();
    assert_eq!(refused, ["partials/c\u{1}:d.md"]);
}

#[test]
fn explain_finds_a_tool_by_the_name_the_prompt_gives_it() {
    let workspace = common::Fixture::minimal()
        .file(
            "tools/read_file.toml",
            common::TOOL.replacen(
                "id = \"read_file\"\n",
                "id = \"read_file\"\nname = \"open_file\"\n",
                1,
            ),
        )
        .write();
    for asked in ["read_file", "open_file"] {
        let run = workspace.run(&["explain", "--context", "basic", "--tool", asked]);
        assert_eq!(run.code, 0, "{asked}: {}", run.stderr);
        assert!(
            run.stdout
                .contains("+ read_file (named `open_file`): included"),
            "{asked}: {}",
            run.stdout
        );
    }
    let json = workspace.run(&["explain", "--context", "basic", "--format", "json"]);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["tools"][0]["name"], "open_file");
}

#[test]
fn explain_places_a_component_or_tool_at_its_first_line_of_content() {
    // The line a reader is sent to is where the file's keys begin, not its `#:schema`
    // comment or the blank lines and comments above them.
    let workspace = common::Fixture::minimal()
        .file(
            "components/intro.toml",
            format!(
                "#:schema ../schema/component.schema.json\n\n# The opening.\n{}",
                common::COMPONENT
            ),
        )
        .file(
            "tools/read_file.toml",
            format!("#:schema ../schema/tool.schema.json\n{}", common::TOOL),
        )
        .write();
    let run = workspace.run(&["explain", "--context", "basic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("+ intro: included  [components/intro.toml:4]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("+ read_file: included  [tools/read_file.toml:2]"),
        "{}",
        run.stdout
    );
}

#[test]
fn explain_locates_an_inherited_template_override() {
    let workspace = common::Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[overrides.components.intro]\ntemplate = \"Own intro.\"\n",
                common::VARIANT
            ),
        )
        .file(
            "variants/child.toml",
            "id = \"child\"\nextends = \"generic\"\n",
        )
        .write();
    for family in ["generic", "child"] {
        let run = workspace.run(&["explain", "--family", family, "--context", "basic"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout
                .contains("(overridden at variants/generic.toml:7:12)"),
            "{family}: {}",
            run.stdout
        );
    }
}

/// An empty model id or provider is refused where it is given, not routed as if unset.
#[test]
fn an_empty_model_or_provider_is_a_usage_error() {
    let workspace = common::Fixture::minimal().write();
    for args in [
        &["route", "--model", ""][..],
        &["route", "--model", "m", "--provider", ""],
        &["build", "--model", ""],
        &["context", "--provider", ""],
        &["stats", "--model", ""],
    ] {
        let run = workspace.run(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("a value is required for"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

/// `context --out` into the workspace's contexts folder refuses a file every later command
/// would refuse or not read: a second context of a name, a name no context may have, a file
/// with no data extension. The context's own file, a new name and a path elsewhere are
/// written.
#[test]
fn context_out_into_the_contexts_folder_keeps_the_workspace_loadable() {
    let workspace = common::Fixture::minimal().write();
    let out = |path: &str| workspace.run(&["context", "--context", "basic", "--out", path]);
    for (path, says) in [
        (
            "examples/contexts/basic.yaml",
            "would be a second context of its name, beside examples/contexts/basic.toml",
        ),
        ("examples/contexts/-bad.toml", "cannot name a context"),
        ("examples/contexts/plain", "has no data file's extension"),
        // A name only its case tells apart (one file on macOS and Windows), one in a
        // sub-folder (contexts are read from those too), and a Windows device's name.
        (
            "examples/contexts/Basic.toml",
            "would be a second context of its name, beside examples/contexts/basic.toml",
        ),
        (
            "examples/contexts/sub/basic.toml",
            "would be a second context of its name, beside examples/contexts/basic.toml",
        ),
        ("examples/contexts/con.json", "a name Windows cannot create"),
        (
            "examples/contexts/sub/aux.toml",
            "a name Windows cannot create",
        ),
    ] {
        let run = out(path);
        assert_eq!(run.code, 2, "{path}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{path}: {}", run.stderr);
        assert!(!workspace.root().join(path).exists(), "{path}");
    }
    for path in [
        "examples/contexts/basic.toml",
        "examples/contexts/again.yaml",
        "examples/contexts/sub/other.toml",
    ] {
        let run = out(path);
        assert_eq!(run.code, 0, "{path}: {}", run.stderr);
    }
    let elsewhere = workspace.tmp().join("basic.yaml");
    assert_eq!(out(elsewhere.to_str().unwrap()).code, 0);
    assert_eq!(workspace.validate().counts().0, 0);
}

/// `build --all` waits for another process that holds the workspace's outputs (a build, here
/// stood for by `flock`), saying so, then builds: two builds at once each removed what the
/// other renamed, and left outputs that neither manifest makes.
#[cfg(target_os = "linux")]
#[test]
fn a_build_waits_for_another_that_holds_the_outputs() {
    use std::io::BufRead as _;
    let workspace = common::Fixture::minimal().write();
    let mut holder = std::process::Command::new("flock")
        .arg("-x")
        .arg(workspace.root())
        .args(["-c", "echo held; sleep 1"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "held\n");
    let built = workspace.run(&["build", "--all"]);
    assert!(holder.wait().unwrap().success());
    assert_eq!(built.code, 0, "{}", built.stderr);
    assert!(
        built.stderr.starts_with(
            "note: another promptc process is building this workspace's outputs; waiting for it to finish\n"
        ),
        "{}",
        built.stderr
    );
    // Alone, it does not wait; and `check` reads the outputs it wrote.
    let again = workspace.run(&["build", "--all"]);
    assert!(!again.stderr.contains("waiting"), "{}", again.stderr);
    assert_eq!(workspace.run(&["check"]).code, 0);
}
