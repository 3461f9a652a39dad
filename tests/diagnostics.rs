//! Bad input: every kind of problem a workspace can have is reported by `promptc validate`
//! with the right file (workspace-relative), line, column (1-based, in characters), code and
//! message, and nothing panics.
//!
//! Each test starts from `Fixture::minimal()` (see `tests/common/mod.rs`) and breaks one
//! thing. Expected positions are counted by hand from the text written in the test; the
//! comment above each expectation shows the count.

mod common;

use common::{Diag, Fixture};

#[test]
fn minimal_fixture_is_valid() {
    let report = Fixture::minimal().validate();
    assert_eq!(report.diagnostics(), vec![], "{:#}", report.json);
    assert_eq!(report.counts(), (0, 0));
    assert_eq!(report.code, 0);
}

#[test]
fn minimal_fixture_is_valid_in_human_form() {
    let run = Fixture::minimal().write().validate_human();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.starts_with("ok: "), "{}", run.stderr);
}

// ---------------------------------------------------------------------------------------------
// Syntax

#[test]
fn toml_syntax_error() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file \"generic.md\"\ncomponents = [\"intro\"]\n",
        )
        .validate();
    // Line 2 `template_file "generic.md"`: the key is 13 characters, a space, and the `"` where
    // `=` was expected is column 15.
    assert_eq!(
        report.single(),
        Diag::error(
            "toml-syntax",
            "variants/generic.toml",
            2,
            15,
            "TOML syntax error: key with no value, expected `=`"
        )
    );
}

#[test]
fn yaml_syntax_error() {
    let report = Fixture::minimal()
        .file("components/notes.yaml", "id: notes\ndescription: a: b\n")
        .file("components/notes.md", "Notes.\n")
        .validate();
    // Line 2 `description: a: b`: `description` is 11 characters, `:` 12, space 13, `a` 14,
    // the second `:` (a mapping value where none is allowed) 15.
    // The position is the diagnostic's; the message does not repeat it (nor say "error"
    // twice).
    assert_eq!(
        report.single(),
        Diag::error(
            "yaml-syntax",
            "components/notes.yaml",
            2,
            15,
            "YAML syntax error: mapping values are not allowed in this context"
        )
    );
}

// ---------------------------------------------------------------------------------------------
// Schema

// The schema tests break a file nothing refers to, so that the one diagnostic is the
// schema's; `schema_error_in_a_referenced_*` below cover files that are referred to.

#[test]
fn wrong_type_in_toml() {
    let report = Fixture::minimal()
        .file(
            "tools/list_files.toml",
            "id = \"list_files\"\ndescription = 42\n",
        )
        .validate();
    // Line 2 `description = 42`: `description = ` is 14 characters, the value is column 15.
    assert_eq!(
        report.single(),
        Diag::error(
            "wrong-type",
            "tools/list_files.toml",
            2,
            15,
            "wrong type: expected a string, found an integer"
        )
    );
}

#[test]
fn wrong_type_in_yaml() {
    let report = Fixture::minimal()
        .file("tools/list_files.yaml", "id: list_files\ndescription: 42\n")
        .validate();
    // Line 2 `description: 42`: `description:` is 12 characters, a space, the value at 14.
    assert_eq!(
        report.single(),
        Diag::error(
            "wrong-type",
            "tools/list_files.yaml",
            2,
            14,
            "wrong type: expected a string, found an integer"
        )
    );
}

#[test]
fn wrong_type_nested_in_toml() {
    // A list item of the wrong type points at the item.
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\", 7]\n",
        )
        .validate();
    // Line 3 `components = ["intro", 7]`: `components = [` is 14 characters, `"intro"` 15-21,
    // `,` 22, space 23, `7` 24.
    assert_eq!(
        report.single(),
        Diag::error(
            "wrong-type",
            "variants/generic.toml",
            3,
            24,
            "wrong type: expected a string, found an integer"
        )
    );
}

#[test]
fn unknown_top_level_key_in_toml() {
    let report = Fixture::minimal()
        .file(
            "components/notes.toml",
            "id = \"notes\"\ndescription = \"Notes.\"\ncolour = \"blue\"\n",
        )
        .file("components/notes.md", "Notes.\n")
        .validate();
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "components/notes.toml",
            3,
            1,
            "unknown key `colour`"
        )
    );
    assert_eq!(
        report.help(0),
        Some("expected one of: id, slot, description, when, template, template_file, families")
    );
}

#[test]
fn unknown_top_level_key_in_yaml() {
    let report = Fixture::minimal()
        .file(
            "components/notes.yaml",
            "id: notes\ndescription: Notes.\ncolour: blue\n",
        )
        .file("components/notes.md", "Notes.\n")
        .validate();
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "components/notes.yaml",
            3,
            1,
            "unknown key `colour`"
        )
    );
    assert_eq!(
        report.help(0),
        Some("expected one of: id, slot, description, when, template, template_file, families")
    );
}

#[test]
fn unknown_nested_key_in_toml() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[overrides.components.intro]\nbogus = 1\n",
                common::VARIANT
            ),
        )
        .validate();
    // The variant is 4 lines, then a blank line 5, the table header on 6, `bogus` on 7.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "variants/generic.toml",
            7,
            1,
            "unknown key `bogus`"
        )
    );
    assert_eq!(
        report.help(0),
        Some("expected one of: enabled, order, template, template_file")
    );
}

#[test]
fn unknown_nested_key_in_yaml() {
    let report = Fixture::minimal()
        .remove("variants/generic.toml")
        .file(
            "variants/generic.yaml",
            "id: generic\n\
             template_file: generic.md\n\
             components: [intro]\n\
             tools: [read_file]\n\
             overrides:\n  \
               components:\n    \
                 intro:\n      \
                   bogus: 1\n",
        )
        .validate();
    // Line 8 `      bogus: 1`: six spaces, the key at column 7.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "variants/generic.yaml",
            8,
            7,
            "unknown key `bogus`"
        )
    );
}

#[test]
fn unknown_key_in_inline_table() {
    // An inline table's keys have positions of their own.
    let report = Fixture::minimal()
        .file(
            "examples/contexts/basic.toml",
            "date = \"2026-11-01\"\nbrowser = { enabled = true, zoom = 2 }\n",
        )
        .validate();
    // Line 2: `browser = { enabled = true, ` is 28 characters, `zoom` at 29.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "examples/contexts/basic.toml",
            2,
            29,
            "unknown key `zoom`"
        )
    );
    assert_eq!(report.help(0), Some("expected one of: enabled, viewport"));
}

#[test]
fn unknown_key_in_the_manifest() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            "name = \"fixture\"\nfallback_familly = \"generic\"\n",
        )
        .validate();
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "promptc.toml",
            2,
            1,
            "unknown key `fallback_familly`"
        )
    );
}

#[test]
fn columns_count_characters_not_bytes_in_toml() {
    let report = Fixture::minimal()
        .file(
            "tools/list_files.toml",
            "id = \"list_files\"\n\
             description = \"List files.\"\n\
             parameters = [{ name = \"é\", instruction = \"ü\", bogus = 1 }]\n",
        )
        .validate();
    // Line 3: `parameters = [{ ` 16, `name = "é", ` 12 more (28), `instruction = "ü", ` 19 more
    // (47): `bogus` is character 48 (byte 50).
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "tools/list_files.toml",
            3,
            48,
            "unknown key `bogus`"
        )
    );
}

#[test]
fn columns_count_characters_not_bytes_in_yaml() {
    let report = Fixture::minimal()
        .file(
            "tools/list_files.yaml",
            "id: list_files\n\
             description: List files.\n\
             parameters: [{name: é, instruction: ü, bogus: 1}]\n",
        )
        .validate();
    // Line 3: `parameters: [{` 14, `name: é, ` 9 more (23), `instruction: ü, ` 16 more (39):
    // `bogus` is character 40 (byte 42).
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "tools/list_files.yaml",
            3,
            40,
            "unknown key `bogus`"
        )
    );
}

#[test]
fn missing_required_field() {
    // A second tool, listed nowhere, without its `description`.
    let report = Fixture::minimal()
        .file("tools/list_files.toml", "id = \"list_files\"\n")
        .validate();
    // A field missing from the top level is reported at the start of the file.
    assert_eq!(
        report.single(),
        Diag::error(
            "missing-field",
            "tools/list_files.toml",
            1,
            1,
            "missing required field `description`"
        )
    );
    assert_eq!(report.help(0), Some("add `description`"));
}

#[test]
fn missing_required_field_of_a_parameter() {
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            "id = \"read_file\"\n\
             description = \"Read a file.\"\n\
             \n\
             [[parameters]]\n\
             name = \"path\"\n\
             required = true\n",
        )
        .validate();
    // The parameter's table starts with `[[parameters]]` on line 4.
    assert_eq!(
        report.single(),
        Diag::error(
            "missing-field",
            "tools/read_file.toml",
            4,
            1,
            "missing required field `instruction`"
        )
    );
    assert_eq!(report.help(0), Some("add `instruction`"));
}

#[test]
fn schema_error_in_a_referenced_tool_is_reported_once() {
    // `read_file` is listed by the variant. Its file has a problem, but the tool is not
    // unknown: the variant's reference to it is not a second problem.
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            "id = \"read_file\"\ndescription = 42\n",
        )
        .validate();
    assert_eq!(
        report.diagnostics(),
        vec![Diag::error(
            "wrong-type",
            "tools/read_file.toml",
            2,
            15,
            "wrong type: expected a string, found an integer"
        )]
    );
}

#[test]
fn schema_error_in_a_referenced_component_is_reported_once() {
    // `intro` is listed by the variant and its slot is in the base template. Neither the list
    // entry nor the slot is a problem of its own when the component's file has an unknown key.
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            format!("{}colour = \"blue\"\n", common::COMPONENT),
        )
        .validate();
    assert_eq!(
        report.diagnostics(),
        vec![Diag::error(
            "unknown-key",
            "components/intro.toml",
            3,
            1,
            "unknown key `colour`"
        )]
    );
}

// ---------------------------------------------------------------------------------------------
// Root causes first (issue 8, item 11): a file that cannot be parsed, or fails its schema, is
// reported once; nothing that depends on it is reported as a problem of its own.

/// A child of `generic` that relies on it for its template, its component list (the override
/// is of an inherited component) and a placeholder its component's template reads; the
/// manifest names `generic` as its fallback family and in its build matrix.
fn family_tree() -> common::Fixture {
    Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[build]\nfamilies = [\"generic\", \"child\"]\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[placeholders]\nAGENT_NAME = \"Forge\"\n",
                common::VARIANT
            ),
        )
        .file(
            "variants/child.toml",
            "id = \"child\"\nextends = \"generic\"\n\n[overrides.components.intro]\norder = 1\n",
        )
        .file(
            "components/intro.md",
            "{{ AGENT_NAME }} works in {{ cwd }} on {{ CURRENT_DATE }}.\n",
        )
}

#[test]
fn family_tree_is_valid() {
    let report = family_tree().validate();
    assert_eq!(report.diagnostics(), vec![], "{:#}", report.json);
}

#[test]
fn syntax_error_in_a_parent_variant_does_not_cascade() {
    // One missing quote. Before: the family `generic` was unknown (manifest, twice), the
    // variant `generic` unknown, the child had no template and an unused override, and
    // `AGENT_NAME` was not defined by anything.
    let report = family_tree()
        .file(
            "variants/generic.toml",
            "id = \"generic\ntemplate_file = \"generic.md\"\n",
        )
        .validate();
    // Line 1 `id = "generic`: the string opens at 6 and the line ends after column 13.
    assert_eq!(
        report.diagnostics(),
        vec![Diag::error(
            "toml-syntax",
            "variants/generic.toml",
            1,
            14,
            "TOML syntax error: invalid basic string, expected `\"`"
        )],
        "{:#}",
        report.json
    );
}

#[test]
fn schema_error_in_a_parent_variant_does_not_cascade() {
    let report = family_tree()
        .file(
            "variants/generic.toml",
            format!("{}colour = \"blue\"\n", common::VARIANT),
        )
        .validate();
    // Line 5, after the four lines of the fixture's variant.
    assert_eq!(
        report.diagnostics(),
        vec![Diag::error(
            "unknown-key",
            "variants/generic.toml",
            5,
            1,
            "unknown key `colour`"
        )],
        "{:#}",
        report.json
    );
}

#[test]
fn empty_parent_variant_does_not_cascade() {
    let report = family_tree().file("variants/generic.toml", "").validate();
    assert_eq!(report.codes(), vec!["empty-file"], "{:#}", report.json);
}

#[test]
fn syntax_error_in_a_component_does_not_cascade() {
    // The variant lists `intro` and the base template uses `INTRO_SECTION`: neither is a
    // problem of its own while `intro.toml` cannot be parsed (its id comes from its name).
    let report = Fixture::minimal()
        .file("components/intro.toml", "id = \"intro\"\ndescription = \n")
        .validate();
    assert_eq!(report.codes(), vec!["toml-syntax"], "{:#}", report.json);
}

#[test]
fn syntax_error_in_the_default_context_does_not_cascade() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}default_context = \"basic\"\n", common::MANIFEST),
        )
        .file("examples/contexts/basic.toml", "date = \"2026-11-01\n")
        .validate();
    assert_eq!(report.codes(), vec!["toml-syntax"], "{:#}", report.json);
}

#[test]
fn syntax_error_in_the_manifest_does_not_cascade() {
    // The predicate `has_mcp` is declared by the broken manifest: the condition that uses it
    // is not blamed.
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[predicates\nhas_mcp = \"true\"\n", common::MANIFEST),
        )
        .file(
            "components/intro.toml",
            format!("{}when = \"has_mcp\"\n", common::COMPONENT),
        )
        .validate();
    assert_eq!(report.codes(), vec!["toml-syntax"], "{:#}", report.json);
}

#[test]
fn schema_error_in_the_manifest_does_not_cascade() {
    // The tool uses a shared parameter the (invalid) manifest declares.
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}colour = 1\n\n[parameters.task_progress]\nname = \"task_progress\"\ninstruction = \"The checklist.\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "tools/read_file.toml",
            format!("{}\n[[parameters]]\nuse = \"task_progress\"\n", common::TOOL),
        )
        .validate();
    assert_eq!(report.codes(), vec!["unknown-key"], "{:#}", report.json);
}

#[test]
fn invalid_id_is_still_known_by_its_file_name() {
    // The variant lists `read_file`; the file `read_file.toml` gives a broken id.
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            common::TOOL.replace("id = \"read_file\"", "id = \"read file\""),
        )
        .validate();
    assert_eq!(report.codes(), vec!["invalid-value"], "{:#}", report.json);
}

#[test]
fn misspelt_required_key_is_one_problem() {
    // Not also "missing required field `description`".
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            common::TOOL.replace("description =", "descriptoin ="),
        )
        .validate();
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "tools/read_file.toml",
            2,
            1,
            "unknown key `descriptoin`"
        )
    );
    assert_eq!(report.help(0), Some("did you mean `description`?"));
}

#[test]
fn slots_read_by_an_invalid_component_are_not_blamed() {
    // `intro` assembles `notes` (listed, but absent from the base template). While
    // `intro.toml` is broken, its template is unknown: `notes` is not reported as unslotted.
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            common::VARIANT.replace("[\"intro\"]", "[\"notes\", \"intro\"]"),
        )
        .file("components/notes.toml", "id = \"notes\"\n")
        .file("components/notes.md", "Notes.\n")
        .file(
            "components/intro.toml",
            format!("{}colour = 1\n", common::COMPONENT),
        )
        .file("components/intro.md", "{{ NOTES_SECTION }} in {{ cwd }}\n")
        .validate();
    assert_eq!(report.codes(), vec!["unknown-key"], "{:#}", report.json);
}

#[test]
fn unknown_component_in_a_parent_list_is_one_problem() {
    // The parent lists `intor` (for `intro`): its slot in the base template is not undefined,
    // and the child's override of `intro` is not "unused".
    let report = family_tree()
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[placeholders]\nAGENT_NAME = \"Forge\"\n",
                common::VARIANT.replace("[\"intro\"]", "[\"intor\"]")
            ),
        )
        .file(
            "variants/generic.md",
            common::BASE_TEMPLATE.replace("INTRO_SECTION", "INTOR_SECTION"),
        )
        .validate();
    assert_eq!(
        report.diagnostics(),
        vec![Diag::error(
            "unknown-reference",
            "variants/generic.toml",
            3,
            15,
            "unknown component `intor`"
        )],
        "{:#}",
        report.json
    );
}

#[test]
fn unknown_id_whose_file_declares_another_suggests_that_id() {
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            common::TOOL.replace("id = \"read_file\"", "id = \"rd\""),
        )
        .validate();
    // Line 4 `tools = ["read_file"]`: the item at 10.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "variants/generic.toml",
            4,
            10,
            "unknown tool `read_file`"
        )
    );
    assert_eq!(report.help(0), Some("did you mean `rd`?"));
}

#[test]
fn template_syntax_error_is_the_first_and_only_problem_of_its_component() {
    // `intro` assembles `notes`, which the base template does not use. While intro.md does not
    // compile, `notes` is not reported as unslotted; and the syntax error comes before a
    // problem of the manifest (read first).
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[build]\nfamilies = [\"gneric\"]\n", common::MANIFEST),
        )
        .file(
            "variants/generic.toml",
            common::VARIANT.replace("[\"intro\"]", "[\"notes\", \"intro\"]"),
        )
        .file("components/notes.toml", "id = \"notes\"\n")
        .file("components/notes.md", "Notes.\n")
        .file("components/intro.md", "{{ NOTES_SECTION }} {% if %}\n")
        .validate();
    assert_eq!(
        report.codes(),
        vec!["template-syntax", "unknown-reference"],
        "{:#}",
        report.json
    );
}

#[test]
fn the_cause_is_reported_first() {
    // A semantic problem in the manifest (read first) and a syntax error in a tool file (read
    // last): the syntax error comes first, then the rest.
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[build]\nfamilies = [\"gneric\"]\n", common::MANIFEST),
        )
        .file("tools/zz.toml", "id = \"zz\"\ndescription = \"x\n")
        .file(
            "tools/yy.toml",
            "id = \"yy\"\ndescription = \"x\"\ncolour = 1\n",
        )
        .validate();
    assert_eq!(
        report.codes(),
        vec!["toml-syntax", "unknown-key", "unknown-reference"],
        "{:#}",
        report.json
    );
}

// ---------------------------------------------------------------------------------------------
// Messages that say what is allowed (issue 8, item 12): every kind of schema error reads
// without "null" and suggests the closest allowed value or key where one is close.

/// The fixture's tool with one more line in its parameter (line 8).
fn tool_with(line: &str) -> String {
    format!("{}{line}\n", common::TOOL)
}

#[test]
fn unknown_parameter_type_lists_the_types_and_suggests_the_closest() {
    let report = Fixture::minimal()
        .file("tools/read_file.toml", tool_with("type = \"strng\""))
        .validate();
    // Line 8 `type = "strng"`: `type = ` is 7 characters, the value at 8.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "tools/read_file.toml",
            8,
            8,
            "invalid value `strng`: expected one of string, integer, number, boolean, array, object"
        )
    );
    assert_eq!(report.help(0), Some("did you mean `string`?"));
}

#[test]
fn wrong_type_of_an_optional_field_does_not_mention_null() {
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            common::TOOL.replace("required = true", "required = \"no\""),
        )
        .validate();
    // Line 6 `required = "no"`: `required = ` is 11 characters, the value at 12.
    assert_eq!(
        report.single(),
        Diag::error(
            "wrong-type",
            "tools/read_file.toml",
            6,
            12,
            "wrong type: expected a boolean, found a string"
        )
    );
}

#[test]
fn yaml_null_for_an_optional_field_says_to_leave_the_key_out() {
    let report = Fixture::minimal()
        .file(
            "components/notes.yaml",
            "id: notes\ndescription: Notes.\nwhen: ~\n",
        )
        .file("components/notes.md", "Notes.\n")
        .validate();
    // Line 3 `when: ~`: the value at 7.
    assert_eq!(
        report.single(),
        Diag::error(
            "wrong-type",
            "components/notes.yaml",
            3,
            7,
            "wrong type: expected a string, found null"
        )
    );
    assert_eq!(
        report.help(0),
        Some(
            "leave the key out to use its default (TOML has no null, and YAML's `~` is not a value here)"
        )
    );
}

#[test]
fn schemas_do_not_offer_null() {
    // Editors complete from these files: an optional field is left out, never null.
    for file in ["component", "context", "manifest", "tool", "variant"] {
        let text = std::fs::read_to_string(format!(
            "{}/schema/{file}.schema.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert!(
            !text.contains("null"),
            "schema/{file}.schema.json offers null"
        );
    }
}

#[test]
fn unknown_key_close_to_a_valid_one_suggests_it() {
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            "id = \"intro\"\ndescripton = \"Where the agent works.\"\n",
        )
        .validate();
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-key",
            "components/intro.toml",
            2,
            1,
            "unknown key `descripton`"
        )
    );
    assert_eq!(report.help(0), Some("did you mean `description`?"));
}

#[test]
fn unknown_postprocess_rule_suggests_the_closest() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[[postprocess]]\nrule = \"trimm\"\n", common::MANIFEST),
        )
        .validate();
    // Line 5 `rule = "trimm"`: the value at 8.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "promptc.toml",
            5,
            8,
            "invalid value `trimm`: expected one of trim_trailing_whitespace, collapse_blank_lines, drop_empty_sections, trim, regex"
        )
    );
    assert_eq!(report.help(0), Some("did you mean `trim`?"));
}

#[test]
fn postprocess_rule_without_its_name() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[[postprocess]]\nmax = 2\n", common::MANIFEST),
        )
        .validate();
    // `[[postprocess]]` is line 4; the entry's value starts there.
    let diagnostic = report.single();
    assert_eq!(
        (diagnostic.code.as_str(), diagnostic.message.as_str()),
        ("missing-field", "missing required field `rule`"),
        "{:#}",
        report.json
    );
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line),
        ("promptc.toml", 4)
    );
}

#[test]
fn unknown_encoding_suggests_the_closest() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[tokens]\nencoding = \"o300k\"\n", common::MANIFEST),
        )
        .validate();
    // Line 5 `encoding = "o300k"`: the value at 12.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "promptc.toml",
            5,
            12,
            "invalid value `o300k`: expected one of o200k, cl100k"
        )
    );
    assert_eq!(report.help(0), Some("did you mean `o200k`?"));
}

#[test]
fn postprocess_rule_that_is_not_a_table() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}postprocess = [\"trim\"]\n", common::MANIFEST),
        )
        .validate();
    // Line 3 `postprocess = ["trim"]`: the item at 16.
    assert_eq!(
        report.single(),
        Diag::error(
            "wrong-type",
            "promptc.toml",
            3,
            16,
            "wrong type: expected a table, found a string"
        )
    );
}

#[test]
fn id_with_a_space_says_what_an_id_may_hold() {
    let report = Fixture::minimal()
        .file(
            "tools/list.toml",
            "id = \"list files\"\ndescription = \"List.\"\n",
        )
        .validate();
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "tools/list.toml",
            1,
            6,
            "invalid value `list files`: expected ASCII letters, digits, `_`, `.` and `-`, starting with a letter or a digit"
        )
    );
}

#[test]
fn empty_parameter_name() {
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            common::TOOL.replace("name = \"path\"", "name = \"\""),
        )
        .validate();
    // Line 5 `name = ""`: the value at 8.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "tools/read_file.toml",
            5,
            8,
            "the value is empty"
        )
    );
    assert_eq!(report.help(0), Some("write a value, or leave the key out"));
}

#[test]
fn predicate_name_that_templates_cannot_spell() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[predicates]\nhas-mcp = \"true\"\n", common::MANIFEST),
        )
        .validate();
    // Line 5 `has-mcp = "true"`: the key at 1.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "promptc.toml",
            5,
            1,
            "invalid name `has-mcp`: expected ASCII letters, digits and `_`, not starting with a digit (a name templates can use)"
        )
    );
}

#[test]
fn percentage_above_100() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[tokens]\nstable_prefix_percent = 150\n",
                common::MANIFEST
            ),
        )
        .validate();
    // Line 5 `stable_prefix_percent = 150`: `stable_prefix_percent = ` is 24 characters.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "promptc.toml",
            5,
            25,
            "invalid value `150`: the largest allowed is 100"
        )
    );
}

#[test]
fn number_too_large_for_its_field() {
    let report = Fixture::minimal()
        .file(
            "examples/contexts/basic.toml",
            format!(
                "{}focus_chain = {{ enabled = true, remind_every = 5000000000 }}\n",
                common::CONTEXT
            ),
        )
        .validate();
    // Line 2: `focus_chain = { enabled = true, remind_every = ` is 47 characters.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "examples/contexts/basic.toml",
            2,
            48,
            "invalid value `5000000000`: the largest allowed is 4294967295"
        )
    );
}

#[test]
fn float_where_an_integer_is_expected_is_located() {
    // JSON Schema counts `100000.0` as an integer; the conversion to a count then failed with
    // a message pointing at the whole file. Floats stay fine where numbers or any value are
    // expected.
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}fuel = 100000.0\n", common::MANIFEST),
        )
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[placeholders]\nRATIO = 2.0\n\n[model]\ntemperature = 1.0\n",
                common::VARIANT
            ),
        )
        .validate();
    // Line 3 `fuel = 100000.0`: the value at 8.
    assert_eq!(
        report.single(),
        Diag::error(
            "wrong-type",
            "promptc.toml",
            3,
            8,
            "wrong type: expected an integer, found a number with a decimal point"
        )
    );
}

#[test]
fn unclosed_if_points_at_the_opening_tag() {
    let report = Fixture::minimal()
        .file(
            "components/intro.md",
            "You work in {{ cwd }}.\n{% if yolo %}\nCareful.\n",
        )
        .validate();
    assert_eq!(
        report.single(),
        Diag::error(
            "template-syntax",
            "components/intro.md",
            2,
            1,
            "template syntax error: unexpected end of input, expected end of block"
        )
    );
    // The underline covers `{% if yolo %}` (13 characters) and nothing after it.
    let item = report.item(0);
    assert_eq!(
        (item["end_line"].as_u64(), item["end_column"].as_u64()),
        (Some(2), Some(14))
    );
}

#[test]
fn unclosed_for_around_a_closed_if_points_at_the_for() {
    let report = Fixture::minimal()
        .file(
            "components/intro.md",
            "You work in {{ cwd }}.\n{% for root in workspace_roots %}{% if yolo %}!{% endif %}\n",
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(
        (diagnostic.line, diagnostic.column),
        (2, 1),
        "{:#}",
        report.json
    );
    // `{% for root in workspace_roots %}` is 33 characters.
    let item = report.item(0);
    assert_eq!(
        (item["end_line"].as_u64(), item["end_column"].as_u64()),
        (Some(2), Some(34))
    );
}

// ---------------------------------------------------------------------------------------------
// Values that must be rejected (issue 8, item 13)

#[test]
fn context_date_that_does_not_exist() {
    let report = Fixture::minimal()
        .file("examples/contexts/basic.toml", "date = \"2026-13-45\"\n")
        .validate();
    // `date = ` is 7 characters, the value at 8.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "examples/contexts/basic.toml",
            1,
            8,
            "invalid value `2026-13-45`: expected a date that exists, written YYYY-MM-DD"
        )
    );
}

#[test]
fn context_date_of_a_february_30() {
    let report = Fixture::minimal()
        .file("examples/contexts/basic.yaml", "date: \"2026-02-30\"\n")
        .remove("examples/contexts/basic.toml")
        .validate();
    assert_eq!(report.codes(), vec!["invalid-value"], "{:#}", report.json);
}

#[test]
fn context_date_as_a_toml_date_is_accepted() {
    let workspace = Fixture::minimal()
        .file("examples/contexts/basic.toml", "date = 2026-11-01\n")
        .write();
    assert_eq!(workspace.validate().diagnostics(), vec![]);
    let run = workspace.run(&["build", "--context", "basic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("on 2026-11-01."), "{}", run.stdout);
}

#[test]
fn override_order_zero() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[overrides.components.intro]\norder = 0\n",
                common::VARIANT
            ),
        )
        .validate();
    // Line 7 `order = 0`: the value at 9.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "variants/generic.toml",
            7,
            9,
            "invalid value `0`: the smallest allowed is 1"
        )
    );
}

#[test]
fn zero_budget_fuel_and_viewport_are_rejected() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}fuel = 0\n\n[tokens]\nmax_prompt_tokens = 0\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/generic.toml",
            format!("{}max_prompt_tokens = 0\n", common::VARIANT),
        )
        .file(
            "examples/contexts/basic.toml",
            format!(
                "{}browser = {{ enabled = true, viewport = {{ width = 0, height = 600 }} }}\n",
                common::CONTEXT
            ),
        )
        .validate();
    let found: Vec<(String, u64, String)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.file, d.line, d.message))
        .collect();
    let smallest = "invalid value `0`: the smallest allowed is 1".to_string();
    assert_eq!(
        found,
        vec![
            ("promptc.toml".into(), 3, smallest.clone()),
            ("promptc.toml".into(), 6, smallest.clone()),
            ("variants/generic.toml".into(), 5, smallest.clone()),
            ("examples/contexts/basic.toml".into(), 2, smallest),
        ],
        "{:#}",
        report.json
    );
}

#[test]
fn empty_id_is_an_empty_value() {
    let report = Fixture::minimal()
        .file("tools/list.toml", "id = \"\"\ndescription = \"List.\"\n")
        .validate();
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-value",
            "tools/list.toml",
            1,
            6,
            "the value is empty"
        )
    );
}

#[test]
fn empty_regex_pattern_and_out_of_range_model_settings() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[[postprocess]]\nrule = \"regex\"\npattern = \"\"\nreplace = \"x\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[model]\ntop_p = 1.5\nmax_tokens = 0\n",
                common::VARIANT
            ),
        )
        .validate();
    let found: Vec<(String, u64, String)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.file, d.line, d.message))
        .collect();
    assert_eq!(
        found,
        vec![
            ("promptc.toml".into(), 6, "the value is empty".into()),
            (
                "variants/generic.toml".into(),
                7,
                "invalid value `1.5`: the largest allowed is 1".into()
            ),
            (
                "variants/generic.toml".into(),
                8,
                "invalid value `0`: the smallest allowed is 1".into()
            ),
        ],
        "{:#}",
        report.json
    );
}

#[test]
fn component_id_with_a_dot_has_a_slot_templates_can_spell() {
    // `my.notes` once had the slot `MY.NOTES_SECTION`, which a template reads as an
    // attribute of `MY`.
    let workspace = Fixture::minimal()
        .file(
            "variants/generic.toml",
            common::VARIANT.replace("[\"intro\"]", "[\"intro\", \"my.notes\"]"),
        )
        .file(
            "variants/generic.md",
            format!("{}{{{{ MY_NOTES_SECTION }}}}\n", common::BASE_TEMPLATE),
        )
        .file("components/my.notes.toml", "id = \"my.notes\"\n")
        .file("components/my.notes.md", "Take notes.\n")
        .write();
    let report = workspace.validate();
    assert_eq!(report.diagnostics(), vec![], "{:#}", report.json);
    let run = workspace.run(&["build", "--context", "basic"]);
    assert!(run.stdout.ends_with("Take notes.\n"), "{}", run.stdout);
}

#[test]
fn predicate_named_like_a_context_field() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[predicates]\nyolo = \"true\"\n", common::MANIFEST),
        )
        .validate();
    // Line 5 `yolo = "true"`: the key at 1.
    assert_eq!(
        report.single(),
        Diag::error(
            "name-taken",
            "promptc.toml",
            5,
            1,
            "predicate `yolo` has the name of a context field: one would hide the other in templates and conditions"
        )
    );
    assert_eq!(report.help(0), Some("rename the predicate"));
}

#[test]
fn predicates_named_like_other_names_of_the_scope() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[predicates]\nCWD = \"true\"\ntools = \"true\"\nINTRO_SECTION = \"true\"\nAGENT = \"true\"\nok = \"true\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/generic.toml",
            format!("{}\n[placeholders]\nAGENT = \"Forge\"\n", common::VARIANT),
        )
        .validate();
    let found: Vec<(u64, String)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.line, d.message))
        .collect();
    let taken = |name: &str, by: &str| {
        format!(
            "predicate `{name}` has the name of {by}: one would hide the other in templates and conditions"
        )
    };
    assert_eq!(
        found,
        vec![
            (5, taken("CWD", "a standard placeholder")),
            (
                6,
                taken("tools", "a name promptc defines for every compile")
            ),
            (7, taken("INTRO_SECTION", "the slot of component `intro`")),
            (8, taken("AGENT", "a placeholder of variant `generic`")),
        ],
        "{:#}",
        report.json
    );
}

#[test]
fn variant_placeholder_named_like_a_context_field() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[placeholders]\nyolo = true\nCWD = \"/\"\n",
                common::VARIANT
            ),
        )
        .validate();
    let found: Vec<(String, u64, u64, String)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.file, d.line, d.column, d.message))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                "variants/generic.toml".into(),
                7,
                1,
                "variant placeholder `yolo` has the name of a context field: one would hide the other in templates and conditions".into()
            ),
            (
                "variants/generic.toml".into(),
                8,
                1,
                "variant placeholder `CWD` has the name of a standard placeholder: one would hide the other in templates and conditions".into()
            ),
        ],
        "{:#}",
        report.json
    );
}

#[test]
fn context_placeholder_named_like_a_context_field_or_a_predicate() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[predicates]\nhas_mcp = \"true\"\n", common::MANIFEST),
        )
        .file(
            "examples/contexts/basic.toml",
            format!(
                "{}\n[placeholders]\nmode = \"plan\"\nhas_mcp = false\nCWD = \"/srv\"\n",
                common::CONTEXT
            ),
        )
        .validate();
    // A runtime `CWD` replaces the standard placeholder by design; `mode` and `has_mcp`
    // would hide a context field and a predicate.
    let found: Vec<(u64, String)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.line, d.message))
        .collect();
    assert_eq!(
        found,
        vec![
            (4, "context placeholder `mode` has the name of a context field: one would hide the other in templates and conditions".into()),
            (5, "context placeholder `has_mcp` has the name of a predicate: one would hide the other in templates and conditions".into()),
        ],
        "{:#}",
        report.json
    );
}

#[test]
fn context_file_given_on_the_command_line_is_checked_too() {
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

// ---------------------------------------------------------------------------------------------
// References

#[test]
fn unknown_component_in_a_variant() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\n\
             template_file = \"generic.md\"\n\
             components = [\"intro\", \"rules\"]\n\
             tools = [\"read_file\"]\n",
        )
        .validate();
    // Line 3 `components = ["intro", "rules"]`: `components = [` 14, `"intro"` 15-21, `,` 22,
    // space 23, `"rules"` 24.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "variants/generic.toml",
            3,
            24,
            "unknown component `rules`"
        )
    );
}

#[test]
fn unknown_tool_in_a_variant_suggests_the_closest() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\n\
             template_file = \"generic.md\"\n\
             components = [\"intro\"]\n\
             tools = [\"read_file\", \"read_fiel\"]\n",
        )
        .validate();
    // Line 4 `tools = ["read_file", "read_fiel"]`: `tools = [` 9, `"read_file"` 10-20, `,` 21,
    // space 22, `"read_fiel"` 23.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "variants/generic.toml",
            4,
            23,
            "unknown tool `read_fiel`"
        )
    );
    assert_eq!(report.help(0), Some("did you mean `read_file`?"));
}

#[test]
fn unknown_family_in_a_component() {
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            format!(
                "{}\n[families.gpt]\ntemplate = \"Short intro.\"\n",
                common::COMPONENT
            ),
        )
        .validate();
    // The component is 2 lines, blank line 3, `[families.gpt]` on 4: `[families.` is 10
    // characters, `gpt` at 11.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "components/intro.toml",
            4,
            11,
            "unknown family `gpt`"
        )
    );
    assert_eq!(
        report.help(0),
        Some("families are declared by the `family` of a variant")
    );
}

#[test]
fn unknown_family_in_a_tool() {
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            format!("{}\n[families.xs]\ndescription = \"Read.\"\n", common::TOOL),
        )
        .validate();
    // The tool is 7 lines, blank line 8, `[families.xs]` on 9, `xs` at column 11.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "tools/read_file.toml",
            9,
            11,
            "unknown family `xs`"
        )
    );
}

#[test]
fn unknown_extends_target() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!("{}extends = \"base\"\n", common::VARIANT),
        )
        .validate();
    // Line 5 `extends = "base"`: `extends = ` is 10 characters, the value at 11.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "variants/generic.toml",
            5,
            11,
            "unknown variant `base`"
        )
    );
}

#[test]
fn depends_on_an_unknown_tool() {
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            format!("{}depends_on = [\"focus_chain\"]\n", common::TOOL),
        )
        .validate();
    // Line 8 `depends_on = ["focus_chain"]`: `depends_on = [` is 14 characters, the item at 15.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "tools/read_file.toml",
            8,
            15,
            "unknown tool `focus_chain`"
        )
    );
}

#[test]
fn use_of_an_unknown_shared_parameter() {
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            format!(
                "{}\n[[parameters]]\nuse = \"task_progress\"\n",
                common::TOOL
            ),
        )
        .validate();
    // Blank line 8, `[[parameters]]` 9, line 10 `use = "task_progress"`: the value at 7.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "tools/read_file.toml",
            10,
            7,
            "unknown shared parameter `task_progress`"
        )
    );
}

#[test]
fn unknown_based_on_family() {
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            format!("{}\n[families.generic]\nbased_on = \"gpt\"\n", common::TOOL),
        )
        .validate();
    // Blank line 8, `[families.generic]` 9, line 10 `based_on = "gpt"`: `based_on = ` is 11
    // characters, the value at 12.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "tools/read_file.toml",
            10,
            12,
            "unknown family `gpt`"
        )
    );
}

// ---------------------------------------------------------------------------------------------
// Cycles

#[test]
fn extends_cycle_between_two_variants() {
    let report = Fixture::minimal()
        .file(
            "variants/a.toml",
            "id = \"a\"\nextends = \"b\"\ntemplate = \"A\"\n",
        )
        .file(
            "variants/b.toml",
            "id = \"b\"\nextends = \"a\"\ntemplate = \"B\"\n",
        )
        .validate();
    // Reported once, at the variant whose id sorts first. Line 2 `extends = "b"`: value at 11.
    assert_eq!(
        report.single(),
        Diag::error(
            "cycle",
            "variants/a.toml",
            2,
            11,
            "`extends` forms a cycle: a -> b -> a"
        )
    );
    assert_eq!(report.help(0), Some("remove one of the `extends` links"));
}

#[test]
fn extends_cycle_is_reported_once_and_only_on_its_members() {
    // `0x` and `c` extend members of the cycle without being in it; `0x` sorts before every
    // member, and was once blamed for a cycle `0x -> a -> b -> a`.
    let report = Fixture::minimal()
        .file(
            "variants/a.toml",
            "id = \"a\"\nextends = \"b\"\ntemplate = \"A\"\n",
        )
        .file(
            "variants/b.toml",
            "id = \"b\"\nextends = \"a\"\ntemplate = \"B\"\n",
        )
        .file(
            "variants/0x.toml",
            "id = \"0x\"\nextends = \"a\"\n\n[overrides.components.intro]\norder = 1\n",
        )
        .file("variants/c.toml", "id = \"c\"\nextends = \"b\"\n")
        .validate();
    assert_eq!(
        report.diagnostics(),
        vec![Diag::error(
            "cycle",
            "variants/a.toml",
            2,
            11,
            "`extends` forms a cycle: a -> b -> a"
        )],
        "{:#}",
        report.json
    );
}

#[test]
fn based_on_cycle_is_reported_once_and_only_on_its_members() {
    // The tool's family `a1` is based on `xs`, a member of the cycle `generic -> xs ->
    // generic`, and sorts before both.
    let report = Fixture::minimal()
        .file("variants/xs.toml", "id = \"xs\"\nextends = \"generic\"\n")
        .file("variants/a1.toml", "id = \"a1\"\nextends = \"generic\"\n")
        .file(
            "tools/read_file.toml",
            format!(
                "{}\n[families.a1]\nbased_on = \"xs\"\n\n[families.generic]\nbased_on = \"xs\"\n\n[families.xs]\nbased_on = \"generic\"\n",
                common::TOOL
            ),
        )
        .validate();
    // Line 13 `based_on = "xs"` under `[families.generic]`: the value at 12.
    assert_eq!(
        report.diagnostics(),
        vec![Diag::error(
            "cycle",
            "tools/read_file.toml",
            13,
            12,
            "`based_on` forms a cycle: generic -> xs -> generic"
        )],
        "{:#}",
        report.json
    );
}

#[test]
fn based_on_cycle_in_a_tool() {
    let report = Fixture::minimal()
        // A second family, so that both of the tool's families are known.
        .file("variants/xs.toml", "id = \"xs\"\nextends = \"generic\"\n")
        .file(
            "tools/read_file.toml",
            format!(
                "{}\n[families.generic]\nbased_on = \"xs\"\n\n[families.xs]\nbased_on = \"generic\"\n",
                common::TOOL
            ),
        )
        .validate();
    // Reported once, at the family that sorts first. Blank line 8, `[families.generic]` 9,
    // line 10 `based_on = "xs"`: the value at 12.
    // The message names the link the user wrote: `based_on`, not `extends`.
    assert_eq!(
        report.single(),
        Diag::error(
            "cycle",
            "tools/read_file.toml",
            10,
            12,
            "`based_on` forms a cycle: generic -> xs -> generic"
        )
    );
    assert_eq!(report.help(0), Some("remove one of the `based_on` links"));
}

// ---------------------------------------------------------------------------------------------
// Duplicates

#[test]
fn two_components_with_the_same_id() {
    let report = Fixture::minimal()
        .file("components/intro2.toml", "id = \"intro\"\n")
        .file("components/intro2.md", "Again.\n")
        .validate();
    // Files load in name order: `intro.toml` before `intro2.toml`. Line 1 `id = "intro"`:
    // the value at 6, in both files.
    assert_eq!(
        report.single(),
        Diag::error(
            "duplicate-id",
            "components/intro2.toml",
            1,
            6,
            "duplicate component id `intro`"
        )
    );
    let label = &report.item(0)["labels"][0];
    assert_eq!(label["message"], "first defined here");
    assert_eq!(label["file"], "components/intro.toml");
    assert_eq!(
        (label["line"].as_u64(), label["column"].as_u64()),
        (Some(1), Some(6))
    );
}

#[test]
fn context_in_toml_and_yaml_with_the_same_name() {
    let report = Fixture::minimal()
        .file("examples/contexts/basic.yaml", "date: \"2026-11-02\"\n")
        .validate();
    // A context's name is its file stem; the whole file is the duplicate.
    assert_eq!(
        report.single(),
        Diag::error(
            "duplicate-id",
            "examples/contexts/basic.yaml",
            1,
            1,
            "duplicate context id `basic`"
        )
    );
    let label = &report.item(0)["labels"][0];
    assert_eq!(label["message"], "first defined here");
    assert_eq!(label["file"], "examples/contexts/basic.toml");
}

// ---------------------------------------------------------------------------------------------
// Templates

#[test]
fn template_syntax_error_in_a_template_file() {
    let report = Fixture::minimal()
        .file(
            "components/intro.md",
            "You work in {{ cwd }}.\nToday is {{ CURRENT_DATE ) }}.\n",
        )
        .validate();
    // Line 2 `Today is {{ CURRENT_DATE ) }}.`: `Today is ` 9, `{{` 10-11, space 12,
    // `CURRENT_DATE` 13-24, space 25, `)` 26. The file is the template, not the .toml.
    assert_eq!(
        report.single(),
        Diag::error(
            "template-syntax",
            "components/intro.md",
            2,
            26,
            "template syntax error: unexpected `)`, expected end of variable block"
        )
    );
}

#[test]
fn template_syntax_error_in_an_inline_template() {
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            format!(
                "{}template = \"You work in {{{{ cwd ) }}}}.\"\n",
                common::COMPONENT
            ),
        )
        .validate();
    // Line 3 `template = "You work in {{ cwd ) }}."`: `template = "` 12, `You work in ` 13-24,
    // `{{` 25-26, space 27, `cwd` 28-30, space 31, `)` 32.
    assert_eq!(
        report.single(),
        Diag::error(
            "template-syntax",
            "components/intro.toml",
            3,
            32,
            "template syntax error: unexpected `)`, expected end of variable block"
        )
    );
}

#[test]
fn undefined_placeholder_in_the_base_template() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.md",
            "You are {{ AGENT_NAME }}, a careful agent.\n\n{{ INTRO_SECTION }}\n\n{{ TOOLS }}\n",
        )
        .validate();
    // Line 1 `You are {{ AGENT_NAME }}`: `You are ` 8, `{{` 9-10, space 11, the name at 12.
    assert_eq!(
        report.single(),
        Diag::error(
            "undefined-placeholder",
            "variants/generic.md",
            1,
            12,
            "`AGENT_NAME` is not defined by anything"
        )
    );
    assert_eq!(
        report.help(0),
        Some(
            "define it in the variant's `placeholders` (a context's `placeholders` or `--set` can then replace it), or list the component that provides it"
        )
    );
    assert_eq!(report.code, 1);
}

#[test]
fn listed_component_without_a_slot_is_a_warning() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\n\
             template_file = \"generic.md\"\n\
             components = [\"intro\", \"rules\"]\n\
             tools = [\"read_file\"]\n",
        )
        .file("components/rules.toml", "id = \"rules\"\n")
        .file("components/rules.md", "Be careful.\n")
        .validate();
    // Line 3 `components = ["intro", "rules"]`: `"rules"` at 24.
    assert_eq!(
        report.single(),
        Diag::warning(
            "unslotted-component",
            "variants/generic.toml",
            3,
            24,
            "component `rules` is listed but the base template has no `RULES_SECTION` slot"
        )
    );
    assert_eq!(
        report.help(0),
        Some("add `{{ RULES_SECTION }}` to the base template, or remove the component")
    );
    assert_eq!(report.counts(), (0, 1));
    assert_eq!(report.code, 0, "warnings alone do not fail validate");
}

#[test]
fn override_of_a_component_the_variant_does_not_use_is_a_warning() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[overrides.components.rules]\nenabled = false\n",
                common::VARIANT
            ),
        )
        .file("components/rules.toml", "id = \"rules\"\n")
        .file("components/rules.md", "Be careful.\n")
        .validate();
    // Blank line 5, line 6 `[overrides.components.rules]`: `[overrides.components.` is 22
    // characters, `rules` at 23.
    assert_eq!(
        report.single(),
        Diag::warning(
            "unused-override",
            "variants/generic.toml",
            6,
            23,
            "override of component `rules`, which variant `generic` does not use"
        )
    );
    assert_eq!(
        report.help(0),
        Some("add the id to the variant's list, or delete the override")
    );
    assert_eq!(report.code, 0, "warnings alone do not fail validate");
}

#[test]
fn override_of_an_unknown_component() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}\n[overrides.components.intrO]\nenabled = false\n",
                common::VARIANT
            ),
        )
        .validate();
    // Line 6 `[overrides.components.intrO]`: the id at 23.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-reference",
            "variants/generic.toml",
            6,
            23,
            "unknown component `intrO`"
        )
    );
    assert_eq!(report.help(0), Some("did you mean `intro`?"));
}

// ---------------------------------------------------------------------------------------------
// Conditions

#[test]
fn condition_that_does_not_compile() {
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            format!("{}when = \"mode == == 'plan'\"\n", common::COMPONENT),
        )
        .validate();
    // Line 3 `when = "mode == == 'plan'"`: `when = "` 8, `mode == ` 9-16, the second `==` 17.
    assert_eq!(
        report.single(),
        Diag::error(
            "condition-syntax",
            "components/intro.toml",
            3,
            17,
            "condition does not compile: unexpected `==`"
        )
    );
}

#[test]
fn condition_reading_an_unknown_context_field() {
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            format!("{}when = \"browser.enabeld\"\n", common::COMPONENT),
        )
        .validate();
    // Line 3 `when = "browser.enabeld"`: `when = "` 8, the path at 9.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-context-field",
            "components/intro.toml",
            3,
            9,
            "condition reads `browser.enabeld`, which the context does not have"
        )
    );
    assert_eq!(report.help(0), Some("did you mean `browser.enabled`?"));
}

#[test]
fn condition_in_a_yaml_tool_reading_an_unknown_name() {
    let report = Fixture::minimal()
        .remove("tools/read_file.toml")
        .file(
            "tools/read_file.yaml",
            "id: read_file\ndescription: Read a file.\nwhen: yolo and not has_mpc\n",
        )
        .validate();
    // Line 3 `when: yolo and not has_mpc`: `when: ` 6, `yolo and not ` 7-19, `has_mpc` 20.
    assert_eq!(
        report.single(),
        Diag::error(
            "unknown-context-field",
            "tools/read_file.yaml",
            3,
            20,
            "condition reads `has_mpc`, which the context does not have"
        )
    );
}

// ---------------------------------------------------------------------------------------------
// Files

#[test]
fn template_file_escaping_the_workspace() {
    // The file exists, just outside the workspace root: it must still be refused.
    let report = Fixture::minimal()
        .file("../outside.md", "Secret.\n")
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"../../outside.md\"\ncomponents = [\"intro\"]\n",
        )
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
fn missing_template_file() {
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"missing.md\"\ncomponents = [\"intro\"]\n",
        )
        .validate();
    // Line 2 `template_file = "missing.md"`: the value at 17. The path is shown from the root.
    assert_eq!(
        report.single(),
        Diag::error(
            "template-file-missing",
            "variants/generic.toml",
            2,
            17,
            "template file `variants/missing.md` does not exist or is not a file"
        )
    );
}

#[test]
fn empty_file() {
    let report = Fixture::minimal()
        .file("components/extra.toml", "")
        .validate();
    assert_eq!(
        report.single(),
        Diag::error(
            "empty-file",
            "components/extra.toml",
            1,
            1,
            "the file is empty"
        )
    );
    assert_eq!(
        report.help(0),
        Some("write the file's fields, or delete the file")
    );
}

#[test]
fn whitespace_only_yaml_file_is_empty() {
    let report = Fixture::minimal()
        .file("tools/extra.yaml", "\n   \n")
        .validate();
    assert_eq!(
        report.single(),
        Diag::error("empty-file", "tools/extra.yaml", 1, 1, "the file is empty")
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

#[test]
fn invalid_regex_in_a_postprocess_rule() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[[postprocess]]\nrule = \"regex\"\npattern = \"(unclosed\"\n",
                common::MANIFEST
            ),
        )
        .validate();
    // The manifest is 2 lines, blank 3, `[[postprocess]]` 4, `rule` 5, line 6
    // `pattern = "(unclosed"`: `pattern = ` is 10, the value at 11.
    assert_eq!(
        report.single(),
        Diag::error(
            "invalid-regex",
            "promptc.toml",
            6,
            11,
            "invalid regular expression: unclosed group"
        )
    );
}

// ---------------------------------------------------------------------------------------------
// Everything at once

#[test]
fn several_problems_are_all_reported_in_one_run() {
    let report = Fixture::minimal()
        // 1. unknown component in the variant (line 3, `"rules"` at 24)
        .file(
            "variants/generic.toml",
            "id = \"generic\"\n\
             template_file = \"generic.md\"\n\
             components = [\"intro\", \"rules\"]\n\
             tools = [\"read_file\"]\n",
        )
        // 2. template syntax error in the component's template file (line 1,
        //    `You work in {{ cwd ) }}.`: `You work in ` 12, `{{` 13-14, space 15, `cwd` 16-18,
        //    space 19, `)` at 20)
        .file("components/intro.md", "You work in {{ cwd ) }}.\n")
        // 3. unknown key in a second tool (line 3, column 1)
        .file(
            "tools/list_files.toml",
            "id = \"list_files\"\ndescription = \"List files.\"\ncolour = 1\n",
        )
        // 4. an empty file
        .file("tools/empty.toml", "")
        // 5. condition reading an unknown field in a second component (line 2, at 9)
        .file(
            "components/later.toml",
            "id = \"later\"\nwhen = \"yolos\"\n",
        )
        .file("components/later.md", "Later.\n")
        // 6. invalid regex in the manifest (line 6, at 11)
        .file(
            "promptc.toml",
            format!(
                "{}\n[[postprocess]]\nrule = \"regex\"\npattern = \"[z-a]\"\n",
                common::MANIFEST
            ),
        )
        .validate();
    let mut found: Vec<(String, String, u64, u64)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file, d.line, d.column))
        .collect();
    found.sort();
    let owned = |(code, file, line, column): (&str, &str, u64, u64)| {
        (code.to_string(), file.to_string(), line, column)
    };
    let mut expected: Vec<_> = [
        ("unknown-reference", "variants/generic.toml", 3, 24),
        ("template-syntax", "components/intro.md", 1, 20),
        ("unknown-key", "tools/list_files.toml", 3, 1),
        ("empty-file", "tools/empty.toml", 1, 1),
        ("unknown-context-field", "components/later.toml", 2, 9),
        ("invalid-regex", "promptc.toml", 6, 11),
    ]
    .into_iter()
    .map(owned)
    .collect();
    expected.sort();
    assert_eq!(found, expected, "{:#}", report.json);
    assert_eq!(report.counts(), (6, 0));
    assert_eq!(report.code, 1);
}

// ---------------------------------------------------------------------------------------------
// The human-readable report

#[test]
fn human_report_of_three_errors() {
    let workspace = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\n\
             template_file = \"generic.md\"\n\
             components = [\"intro\"]\n\
             tools = [\"read_file\", \"read_fiel\"]\n",
        )
        .file(
            "components/intro.toml",
            format!("{}when = \"browser.enabeld\"\n", common::COMPONENT),
        )
        .file(
            "components/intro.md",
            "You work in {{ cwd }}.\nToday is {{ CURRENT_DATE ) }}.\n",
        )
        .write();
    let run = workspace.validate_human();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let tmp = workspace.tmp().to_str().unwrap();
    assert!(!run.stderr.contains(tmp), "{}", run.stderr);
    insta::assert_snapshot!(run.stderr);
}
