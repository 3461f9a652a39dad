//! Shared template fragments (issue 12, item 1): the files of the partials folder are templates
//! named by their workspace-relative path, which any template may include, import (macros) or
//! extend; validation, `inputs`, `explain`, `diff` and the unslotted-component check follow
//! those tags.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use common::{Fixture, compile, stderr, stdout};

/// The minimal workspace whose base template extends a layout partial, whose component
/// includes a partial (that includes another) and imports macros from a third.
fn with_partials() -> Fixture {
    Fixture::minimal()
        .file(
            "partials/layout.md",
            "You are a careful agent.\n\n{{ TOOLS }}\n\n{% block sections %}{% endblock %}\n",
        )
        .file(
            "variants/generic.md",
            "{% extends \"partials/layout.md\" %}\n\
             {% block sections %}{{ INTRO_SECTION }}{% endblock %}\n",
        )
        .file(
            "components/intro.md",
            "{% import \"partials/macros.md\" as say %}\
             {% from \"partials/macros.md\" import rule %}\
             You work in {{ cwd }}.\n\
             {% include \"partials/verify.md\" %}\
             {{ say.rule(\"Ask before deleting.\") }}\n\
             {{ rule(\"Never guess a path.\") }}\n",
        )
        .file(
            "partials/verify.md",
            "Check every step.\n{% include \"partials/verify/tests.md\" %}",
        )
        .file("partials/verify/tests.md", "Run the tests last.\n")
        .file(
            "partials/macros.md",
            "{% macro rule(text) %}- Rule: {{ text }}{% endmacro %}",
        )
}

fn assert_no_findings(validation: &common::Validation) {
    assert_eq!(
        validation.diagnostics(),
        Vec::new(),
        "{}",
        validation.stderr
    );
}

#[test]
fn included_imported_and_extended_partials_render() {
    let workspace = with_partials().write();
    let loaded = common::load(workspace.root());
    let compiled = compile(&loaded, "generic", "basic");
    let intro = &compiled
        .sections
        .iter()
        .find(|s| s.id == "intro")
        .unwrap()
        .text;
    assert!(
        intro.contains("Check every step.\nRun the tests last.\n"),
        "{intro}"
    );
    assert!(intro.contains("- Rule: Ask before deleting.\n- Rule: Never guess a path."));
    // The layout's text around the block is the prompt's start.
    assert!(
        compiled.prompt.starts_with("You are a careful agent.\n\n"),
        "{}",
        compiled.prompt
    );
    assert!(
        compiled.prompt.contains(intro.trim()),
        "{}",
        compiled.prompt
    );
}

#[test]
fn a_valid_workspace_with_partials_has_no_findings() {
    // The base template's slot lives in the layout it extends: no unslotted warning; every
    // partial is named by a tag: no unused-partial warning.
    let validation = with_partials().validate();
    assert_no_findings(&validation);
}

#[test]
fn a_slot_only_in_a_partial_that_nothing_reaches_is_still_unslotted() {
    // The layout still holds the slot, but the base template no longer extends it.
    let validation = with_partials()
        .file(
            "variants/generic.md",
            "{% include \"partials/verify.md\" %}{% include \"partials/macros.md\" %}",
        )
        .validate();
    assert_eq!(
        validation.codes(),
        // The layout held `{{ TOOLS }}` too: the listed tools are written nowhere.
        vec![
            "unslotted-component",
            "tools-never-written",
            "unused-partial"
        ],
        "{}",
        validation.stderr
    );
}

#[test]
fn build_json_lists_every_partial_used_transitively() {
    let workspace = with_partials().write();
    let run = workspace.run(&["build", "--family", "generic", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let inputs: Vec<&str> = json["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for partial in [
        "partials/layout.md",
        "partials/macros.md",
        "partials/verify.md",
        "partials/verify/tests.md",
    ] {
        assert!(inputs.contains(&partial), "{partial} not in {inputs:?}");
    }
}

#[test]
fn explain_names_the_partials_of_a_component() {
    let workspace = with_partials().write();
    let run = workspace.run(&["explain", "--family", "generic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "    with partials/macros.md, partials/verify.md, partials/verify/tests.md\n"
        ),
        "{}",
        run.stdout
    );
    let run = workspace.run(&["explain", "--family", "generic", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        json["components"][0]["partials"],
        serde_json::json!([
            "partials/macros.md",
            "partials/verify.md",
            "partials/verify/tests.md"
        ])
    );
}

#[test]
fn the_partials_folder_is_configurable() {
    let validation = Fixture::minimal()
        .file(
            "promptc.toml",
            "name = \"fixture\"\n[paths]\npartials = \"shared/fragments\"\n",
        )
        .file("shared/fragments/note.md", "A shared note.\n")
        .file(
            "components/intro.md",
            "You work in {{ cwd }}.\n{% include \"shared/fragments/note.md\" %}",
        )
        .validate();
    assert_no_findings(&validation);
}

#[test]
fn a_file_outside_the_partials_folder_cannot_be_included() {
    // Only registered templates can be named: a stray file is not read because a tag names it.
    let validation = Fixture::minimal()
        .file("notes/stray.md", "Not a partial.\n")
        .file(
            "components/intro.md",
            "You work in {{ cwd }}.\n{% include \"notes/stray.md\" %}",
        )
        .validate();
    assert_eq!(validation.codes(), vec!["unknown-template"]);
}

#[test]
fn a_partial_sees_the_variables_of_its_includer_and_a_tool_format_sees_tool() {
    let validation = Fixture::minimal()
        .file(
            "components/intro.md",
            "{% for step in ['read', 'edit'] %}{% include \"partials/step.md\" %}{% endfor %}",
        )
        .file("partials/step.md", "- {{ step }} in {{ cwd }}\n")
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\"]\n\
             tools = [\"read_file\"]\ntool_format = '{% include \"partials/tool.md\" %}'\n",
        )
        .file("partials/tool.md", "## {{ tool.name }}\n")
        .validate();
    assert_no_findings(&validation);
}

#[test]
fn a_misspelt_name_in_a_partial_is_still_reported() {
    let fixture = Fixture::minimal()
        .file(
            "components/intro.md",
            "You work here.\n{% include \"partials/where.md\" %}",
        )
        .file("partials/where.md", "You work in {{ cwdd }}.\n");
    let validation = fixture.validate();
    let found = validation.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str(), found.line),
        ("undefined-placeholder", "partials/where.md", 1)
    );
}

#[test]
fn diff_attributes_a_changed_partial_to_the_outputs_it_alters() {
    let workspace = with_partials()
        .file(
            "examples/contexts/other.toml",
            "date = \"2026-11-02\"\ncwd = \"/elsewhere\"\n",
        )
        .write();
    let root = workspace.root();
    common::git(root, &["init", "-q", "-b", "main"]);
    let built = workspace.run(&["build", "--all"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "initial"]);

    std::fs::write(
        root.join("partials/verify/tests.md"),
        "Run the whole test suite last.\n",
    )
    .unwrap();
    let diffed = workspace
        .command()
        .args(["diff", "--base", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(diffed.status.code(), Some(0), "{}", stderr(&diffed));
    let out = stdout(&diffed);
    assert!(out.contains("+Run the whole test suite last."), "{out}");
    assert!(
        out.contains(
            "partials/verify/tests.md (modified): examples/prompts/generic/basic.md, examples/prompts/generic/other.md"
        ),
        "{out}"
    );
}

#[cfg(unix)]
#[test]
fn a_partial_that_links_out_of_the_workspace_is_refused() {
    let workspace = Fixture::minimal().write();
    let secret = workspace.tmp().join("secret.md");
    std::fs::write(&secret, "outside text\n").unwrap();
    std::fs::create_dir_all(workspace.root().join("partials")).unwrap();
    std::os::unix::fs::symlink(&secret, workspace.root().join("partials/leak.md")).unwrap();
    let validation = workspace.validate();
    let found = validation.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str()),
        ("path-refused", "partials/leak.md"),
        "{}",
        validation.stderr
    );
}

#[test]
fn a_family_template_extends_the_default_component_template_by_its_path() {
    let workspace = Fixture::minimal()
        .file(
            "components/intro.md",
            "You work in {{ cwd }}.{% block advice %} Take your time.{% endblock %}\n",
        )
        .file(
            "variants/xs.toml",
            "id = \"xs\"\nextends = \"generic\"\n\n\
             [overrides.components.intro]\ntemplate_file = \"xs/intro.md\"\n",
        )
        .file(
            "variants/xs/intro.md",
            "{% extends \"components/intro.md\" %}{% block advice %} Be brief.{% endblock %}",
        )
        .write();
    let validation = workspace.validate();
    assert_no_findings(&validation);
    let loaded = common::load(workspace.root());
    let section = |family: &str| {
        compile(&loaded, family, "basic")
            .sections
            .into_iter()
            .find(|s| s.id == "intro")
            .unwrap()
            .text
    };
    assert!(section("generic").ends_with(". Take your time.\n"));
    assert!(
        section("xs").ends_with(". Be brief.\n"),
        "{}",
        section("xs")
    );
}
