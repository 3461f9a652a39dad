//! Native tool definitions: the tools a prompt shows and the MCP tools of the servers that
//! count, in each provider's shape, chosen by the manifest's dialect rules; every lint.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::Value;

const DIALECTS: [&str; 4] = ["openai", "openai-responses", "anthropic", "gemini"];

/// `promptc tools` in the repository's own workspace.
fn shipped_tools(args: &[&str]) -> String {
    let output = common::promptc()
        .current_dir(common::repo_root())
        .arg("tools")
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
    common::stdout(&output)
}

#[test]
fn the_shipped_native_variant_in_every_dialect() {
    for dialect in DIALECTS {
        let json = shipped_tools(&[
            "--family",
            "native-next-gen",
            "--context",
            "native-tools",
            "--dialect",
            dialect,
        ]);
        insta::assert_snapshot!(format!("shipped-native-tools-{dialect}"), json);
    }
}

#[test]
fn the_manifest_rules_choose_the_dialect_from_provider_and_model() {
    let dialect_of = |model: &str, provider: &str| {
        let output = common::promptc()
            .current_dir(common::repo_root())
            .args([
                "build",
                "--family",
                "native-next-gen",
                "--format",
                "json",
                "--model",
                model,
                "--provider",
                provider,
            ])
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&output.stdout).unwrap();
        json["dialect"].as_str().unwrap().to_string()
    };
    assert_eq!(dialect_of("gemini-2.5-pro", "vertex"), "gemini");
    assert_eq!(
        dialect_of("claude-sonnet-4-5@20250929", "vertex"),
        "anthropic"
    );
    assert_eq!(dialect_of("claude-sonnet-4-5", "anthropic"), "anthropic");
    assert_eq!(
        dialect_of("anthropic.claude-opus-4-1-v1:0", "bedrock"),
        "anthropic"
    );
    assert_eq!(dialect_of("gemini-2.5-flash", "gemini"), "gemini");
    assert_eq!(dialect_of("gpt-5", "openai"), "openai");
    assert_eq!(dialect_of("google/gemini-2.5-pro", "openrouter"), "openai");
}

#[test]
fn build_json_keeps_its_keys_and_adds_the_definitions() {
    let output = common::promptc()
        .current_dir(common::repo_root())
        .args(["build", "--family", "native-next-gen", "--format", "json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "family",
            "variant",
            "version",
            "prompt",
            "sections",
            "tools",
            "model",
            "inputs",
            "dialect",
            "tool_definitions"
        ]
    );
    // A variant whose tools are documented in the prompt has no definitions, and `tools`
    // says so.
    let output = common::promptc()
        .current_dir(common::repo_root())
        .args(["tools", "--family", "next-gen"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(common::stderr(&output).contains("does not use native tool calls"));
}

const SEARCH: &str = r#"
id = "search"
description = "Search the code base for {{ cwd }}."

[[parameters]]
name = "query"
required = true
instruction = "What to look for."

[[parameters]]
name = "scope"
type = "string"
enum = ["code", "docs", "tests"]
instruction = "Where to look."

[[parameters]]
name = "filters"
type = "object"
properties = { language = { type = "string" }, paths = { type = "array", items = { type = "string" } } }
schema = { required = ["language"] }
instruction = "Narrow the search."
"#;

/// Servers that count, one disabled, one disconnected, and a tool whose qualified name is
/// too long for every provider.
const MCP_CONTEXT: &str = r#"
date = "2026-11-01"
cwd = "/srv/app"

[[mcp_servers]]
name = "tracker"
uid = "trk"

[[mcp_servers.tools]]
name = "create_issue"
description = "Open an issue."
input_schema = { "$schema" = "http://json-schema.org/draft-07/schema#", type = "object", properties = { title = { type = "string" }, priority = { type = "string", enum = ["low", "high"] }, meta = { type = "object", properties = { labels = { type = "array", items = { type = "string" } } } } }, required = ["title"], additionalProperties = false }

[[mcp_servers.tools]]
name = "a_tool_whose_name_goes_on_and_on_past_what_any_provider_accepts_as_a_name"
description = "Too long a name."

[[mcp_servers]]
name = "paused"
disabled = true

[[mcp_servers.tools]]
name = "hidden"
description = "Never offered."

[[mcp_servers]]
name = "away"
status = "disconnected"

[[mcp_servers.tools]]
name = "also_hidden"
description = "Never offered."
"#;

fn native_fixture() -> Fixture {
    Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}native_tools = true\n",
                common::VARIANT.replace(
                    "tools = [\"read_file\"]",
                    "tools = [\"read_file\", \"search\"]"
                )
            ),
        )
        .file("tools/search.toml", SEARCH)
        .file("examples/contexts/mcp.toml", MCP_CONTEXT)
}

#[test]
fn a_context_with_mcp_servers_in_every_dialect() {
    let workspace = native_fixture().write();
    for dialect in DIALECTS {
        let run = workspace.run(&["tools", "--context", "mcp", "--dialect", dialect]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        insta::assert_snapshot!(format!("mcp-context-{dialect}"), run.stdout);
        // Only the counting server's tools are offered, and not the one with a long name.
        assert!(run.stdout.contains("trk__create_issue"));
        assert!(!run.stdout.contains("hidden") && !run.stdout.contains("goes_on_and_on"));
        // Printed as a warning at the context's tool, and the definitions still come out.
        assert!(
            run.stderr.contains("warning[mcp-tool-skipped]")
                && run.stderr.contains("examples/contexts/mcp.toml:15:"),
            "{}",
            run.stderr
        );
    }
}

// An MCP tool whose input schema is not an object schema was dropped from Gemini's form
// without a word (its `parameters` left out), and passed as it was to the others, whose
// providers refuse the request. It is left out of every dialect, with a warning at the tool.
#[test]
fn an_mcp_tool_whose_schema_is_not_an_object_is_left_out_with_a_warning() {
    let workspace = native_fixture().write();
    for (schema, found) in [
        ("{\"type\": \"string\"}", "of type \"string\""),
        (
            "{\"type\": [\"string\", \"null\"]}",
            "of type [\"string\",\"null\"]",
        ),
        (
            "{\"type\": \"object\", \"properties\": \"q\"}",
            "an object whose `properties` is a string",
        ),
        ("\"text\"", "a string"),
        // No `type` at the top (Anthropic requires it; OpenAI refuses the schema).
        ("{}", "a schema with no `type`"),
        (
            "{\"properties\": {\"q\": {\"type\": \"string\"}}}",
            "a schema with no `type`",
        ),
    ] {
        let context = format!(
            "{{\"extends\": \"basic\", \"mcp_servers\": [{{\"name\": \"w\", \"tools\": [\n  {{\"name\": \"bad\", \"input_schema\": {schema}}},\n  {{\"name\": \"good\", \"input_schema\": {{\"type\": \"object\", \"properties\": {{\"q\": {{\"type\": \"string\"}}}}}}}}\n]}}]}}\n"
        );
        let path = workspace.tmp().join("schema.json");
        std::fs::write(&path, context).unwrap();
        for dialect in DIALECTS {
            let run = workspace.run(&[
                "tools",
                "--context",
                path.to_str().unwrap(),
                "--dialect",
                dialect,
            ]);
            assert_eq!(run.code, 0, "{dialect}: {}", run.stderr);
            assert!(
                run.stderr.contains(&format!(
                    "warning[mcp-schema-not-an-object]: MCP tool `w__bad` is left out of the {dialect} tool definitions: its input schema is {found}, where providers take an object of named arguments"
                )) && run.stderr.contains(&format!("{}:2:", path.display())),
                "{dialect} {schema}: {}",
                run.stderr
            );
            assert!(!run.stdout.contains("w__bad"), "{}", run.stdout);
            assert!(run.stdout.contains("w__good"), "{}", run.stdout);
        }
    }
}

/// A server's schema that a provider refuses the whole request for (a property that is no
/// schema, a `required` that is no list, an array without `items` for OpenAI and Gemini, an
/// object without `properties` for Gemini) failed every request of the agent that sent it: the
/// tool is left out of that dialect, with a warning at the tool that says where and why, and
/// kept where the provider takes it.
#[test]
fn an_mcp_tool_whose_schema_a_provider_refuses_is_left_out_of_that_dialect() {
    let workspace = native_fixture().write();
    let context = r#"{"extends": "basic", "mcp_servers": [{"name": "w", "tools": [
  {"name": "nul", "input_schema": {"type": "object", "properties": {"a": null}}},
  {"name": "req", "input_schema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": "a"}},
  {"name": "arr", "input_schema": {"type": "object", "properties": {"f": {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "array"}}}}}}}}},
  {"name": "obj", "input_schema": {"type": "object", "properties": {"o": {"type": "object"}}}},
  {"name": "one", "input_schema": {"type": "object", "properties": {"v": {"oneOf": [{"type": "string"}, 3]}}}},
  {"name": "boo", "input_schema": {"type": "object", "properties": {"a": {"type": "array", "items": true}}}},
  {"name": "any", "input_schema": {"type": "object", "properties": {"a": {"anyOf": [{"type": "object"}, {"type": "string"}]}}}},
  {"name": "add", "input_schema": {"type": "object", "properties": {"a": {"type": "object", "additionalProperties": null}}}},
  {"name": "def", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "$defs": {"t": {"type": "array"}}}},
  {"name": "good", "input_schema": {"type": "object", "properties": {"q": {"type": "array", "items": {"type": "string"}}}}}
]}]}
"#;
    let path = workspace.tmp().join("refused.json");
    std::fs::write(&path, context).unwrap();
    let nul = "`a` in its input schema is null, where a schema is an object";
    let req =
        "its input schema has a `required` that is a string, where it is a list of property names";
    let arr = "`f.rows[].x` in its input schema is an array without `items`";
    let obj = "`o` in its input schema is an object without `properties`";
    let one = "`v` in its input schema is an integer, where a schema is an object";
    let boo = "`a[]` in its input schema is a boolean, where a schema is an object";
    let any = "`a` in its input schema is an object without `properties`";
    let obj_a = "`a` in its input schema is an object without `properties`";
    let add = "`a.additionalProperties` in its input schema is null, where a schema is an object";
    let def = "`$defs.t` in its input schema is an array without `items`";
    // Both of OpenAI's APIs take the same schemas.
    let openai = vec![
        ("nul", 2, nul),
        ("req", 3, req),
        ("arr", 4, arr),
        ("one", 6, one),
        ("add", 9, add),
        ("def", 10, def),
    ];
    for (dialect, provider, left_out) in [
        ("openai", "OpenAI", openai.clone()),
        ("openai-responses", "OpenAI", openai),
        (
            "anthropic",
            "Anthropic",
            vec![
                ("nul", 2, nul),
                ("req", 3, req),
                ("one", 6, one),
                ("add", 9, add),
            ],
        ),
        // Gemini's form drops `oneOf`, `$defs`, `additionalProperties` and a `required` of
        // the wrong shape, with a warning; what is left must be a schema it takes.
        (
            "gemini",
            "Gemini",
            vec![
                ("nul", 2, nul),
                ("arr", 4, arr),
                ("obj", 5, obj),
                ("boo", 7, boo),
                ("any", 8, any),
                ("add", 9, obj_a),
            ],
        ),
    ] {
        let run = workspace.run(&[
            "tools",
            "--context",
            path.to_str().unwrap(),
            "--dialect",
            dialect,
        ]);
        assert_eq!(run.code, 0, "{dialect}: {}", run.stderr);
        for tool in [
            "nul", "req", "arr", "obj", "one", "boo", "any", "add", "def", "good",
        ] {
            let out = left_out.iter().find(|(name, ..)| *name == tool);
            let listed = run.stdout.contains(&format!("\"w__{tool}\""));
            assert_eq!(listed, out.is_none(), "{dialect} {tool}: {}", run.stdout);
            if let Some((_, line, why)) = out {
                let warning = format!(
                    "warning[mcp-schema-refused]: MCP tool `w__{tool}` is left out of the {dialect} tool definitions, as {provider} refuses any request that holds it: {why}\n{:>width$} {}:{line}:",
                    "-->",
                    path.display(),
                    // The arrow is indented by the width of the line's number.
                    width = 3 + line.to_string().len()
                );
                assert!(run.stderr.contains(&warning), "{warning}\n{}", run.stderr);
            }
        }
        assert_eq!(
            run.stderr.matches("mcp-schema-refused").count(),
            left_out.len(),
            "{dialect}: {}",
            run.stderr
        );
    }
}

// A schema nested past what promptc looks into (64 levels, or names 1024 characters long in
// all) was passed on unchecked: an error 70 levels down reached the provider, which refused
// every request. Such a tool is left out of every dialect, saying why.
#[test]
fn an_mcp_tool_whose_schema_is_too_deep_to_check_is_left_out() {
    let workspace = native_fixture().write();
    let mut deep = "null".to_string();
    for _ in 0..70 {
        deep = format!("{{\"type\": \"array\", \"items\": {deep}}}");
    }
    let long = "x".repeat(1100);
    let context = format!(
        "{{\"extends\": \"basic\", \"mcp_servers\": [{{\"name\": \"w\", \"tools\": [\n  {{\"name\": \"deep\", \"input_schema\": {{\"type\": \"object\", \"properties\": {{\"a\": {deep}}}}}}},\n  {{\"name\": \"long\", \"input_schema\": {{\"type\": \"object\", \"properties\": {{\"{long}\": {{\"type\": \"object\", \"properties\": {{\"b\": {{\"type\": \"array\"}}}}}}}}}}}},\n  {{\"name\": \"good\", \"input_schema\": {{\"type\": \"object\", \"properties\": {{\"q\": {{\"type\": \"string\"}}}}}}}}\n]}}]}}\n"
    );
    let path = workspace.tmp().join("deep.json");
    std::fs::write(&path, context).unwrap();
    for dialect in DIALECTS {
        let run = workspace.run(&[
            "tools",
            "--context",
            path.to_str().unwrap(),
            "--dialect",
            dialect,
        ]);
        assert_eq!(run.code, 0, "{dialect}: {}", run.stderr);
        assert!(!run.stdout.contains("w__deep"), "{dialect}: {}", run.stdout);
        assert!(!run.stdout.contains("w__long"), "{dialect}: {}", run.stdout);
        assert!(run.stdout.contains("w__good"), "{dialect}: {}", run.stdout);
        // The long name alone is refused first where the provider limits argument names.
        let deeper = run
            .stderr
            .matches("is nested deeper than promptc checks a schema")
            .count();
        assert!(
            deeper == 2 || (deeper == 1 && run.stderr.contains("MCP tool `w__long` is left out")),
            "{dialect}: {}",
            run.stderr
        );
    }
}

// `--dialect` for a variant without native tool calls changed nothing without a word (`tools`
// refuses such a variant): a warning says so, and the prompt is the same.
#[test]
fn a_dialect_for_a_variant_without_native_tools_is_a_warning() {
    let workspace = Fixture::minimal().write();
    let plain = workspace.run(&["build", "--context", "basic"]);
    let run = workspace.run(&["build", "--context", "basic", "--dialect", "gemini"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, plain.stdout);
    assert!(
        run.stderr.contains(
            "warning: `--dialect gemini` changes nothing: variant `generic` does not use native tool calls"
        ),
        "{}",
        run.stderr
    );
    // A native variant takes it without a word.
    let native = native_fixture().write();
    let run = native.run(&["build", "--context", "basic", "--dialect", "gemini"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("--dialect"), "{}", run.stderr);
    // `explain` says it as `build` does, where it took the dialect without a word.
    let run = workspace.run(&["explain", "--context", "basic", "--dialect", "gemini"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "warning: `--dialect gemini` changes nothing: variant `generic` does not use native tool calls"
        ),
        "{}",
        run.stderr
    );
    let run = native.run(&["explain", "--context", "basic", "--dialect", "gemini"]);
    assert!(!run.stderr.contains("--dialect"), "{}", run.stderr);
}

/// Gemini's schema subset lists only text in `enum`, and takes only the formats it names for
/// each type: a request with another was refused whole. Such keywords are dropped, with the
/// warning that names them; a format Gemini takes stays.
#[test]
fn gemini_drops_an_enum_of_numbers_and_a_format_it_does_not_take() {
    let workspace = native_fixture()
        .file(
            "tools/search.toml",
            "id = \"search\"\ndescription = \"Search.\"\n\n[[parameters]]\nname = \"level\"\ntype = \"integer\"\nenum = [1, 2, 3]\ninstruction = \"How hard.\"\n\n[[parameters]]\nname = \"link\"\ninstruction = \"Where.\"\nschema = { format = \"uri\" }\n\n[[parameters]]\nname = \"since\"\ninstruction = \"From when.\"\nschema = { format = \"date-time\" }\n\n[[parameters]]\nname = \"mode\"\ninstruction = \"Which.\"\nenum = [\"fast\", \"slow\"]\n",
        )
        .write();
    let run = workspace.run(&["tools", "--context", "basic", "--dialect", "gemini"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let search = json[0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "search")
        .unwrap();
    let properties = &search["parameters"]["properties"];
    assert_eq!(properties["level"].get("enum"), None, "{search}");
    assert_eq!(properties["link"].get("format"), None, "{search}");
    assert_eq!(properties["since"]["format"], "date-time", "{search}");
    assert_eq!(
        properties["mode"]["enum"],
        serde_json::json!(["fast", "slow"])
    );
    for dropped in ["`enum` (values that are not text)", "`format` (`uri`)"] {
        assert!(run.stderr.contains(dropped), "{dropped}: {}", run.stderr);
    }
    // Other dialects keep them.
    let run = workspace.run(&["tools", "--context", "basic", "--dialect", "anthropic"]);
    assert!(
        run.stdout.contains("\"uri\"") && run.stdout.contains("\"enum\": [\n"),
        "{}",
        run.stdout
    );
}

/// Anthropic refuses a request whose tool takes an argument named other than 1 to 64
/// letters, digits, `_`, `.` and `-`: a parameter of the workspace's own tool so named is an
/// error at the parameter, an MCP tool with such an argument is left out with a warning.
/// Other dialects take both.
#[test]
fn an_argument_name_anthropic_refuses_is_an_error_or_leaves_the_mcp_tool_out() {
    let context = MCP_CONTEXT.replace(
        "description = \"Too long a name.\"",
        "description = \"Too long a name.\"\n\n[[mcp_servers.tools]]\nname = \"filter\"\ndescription = \"Filter.\"\ninput_schema = { type = \"object\", properties = { \"filter[id]\" = { type = \"string\" } } }",
    );
    let mcp = native_fixture()
        .file("examples/contexts/mcp.toml", &context)
        .write();
    let run = mcp.run(&["tools", "--context", "mcp", "--dialect", "anthropic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("warning[mcp-property-rejected]: MCP tool `trk__filter` is left out of the anthropic tool definitions: its argument `filter[id]`"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("trk__filter") && run.stdout.contains("trk__create_issue"));
    let run = mcp.run(&["tools", "--context", "mcp", "--dialect", "openai"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("trk__filter"), "{}", run.stdout);

    let spaced = native_fixture()
        .file(
            "tools/search.toml",
            "id = \"search\"\ndescription = \"Search.\"\n\n[[parameters]]\nname = \"file path\"\ninstruction = \"Where.\"\n",
        )
        .write();
    let run = spaced.run(&["tools", "--context", "basic", "--dialect", "anthropic"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains("error[property-name-rejected]: parameter `file path` of tool `search` is not 1 to 64 letters, digits, `_`, `.` and `-`, which the anthropic dialect rejects")
            && run.stderr.contains("tools/search.toml:5:8"),
        "{}",
        run.stderr
    );
    assert_eq!(
        spaced
            .run(&["tools", "--context", "basic", "--dialect", "openai"])
            .code,
        0
    );
}

#[test]
fn every_lint_is_located() {
    // The workspace's own context with MCP tools: `validate` lints what it compiles.
    let report = native_fixture()
        .file(
            "promptc.toml",
            format!(
                "{}\n[tool_definitions]\ndialect = \"gemini\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "tools/ask.toml",
            "id = \"ask\"\nname = \"ask.user\"\ndescription = \"Ask.\"\n\n[[parameters]]\nname = \"options\"\ntype = \"array\"\ninstruction = \"Choices.\"\n\n[[parameters]]\nname = \"settings\"\ntype = \"object\"\ninstruction = \"More.\"\n\n[[parameters]]\nname = \"nested\"\ntype = \"object\"\ninstruction = \"Deeper.\"\nproperties = { inner = { type = \"object\" }, list = { type = \"array\", items = { type = \"object\" } }, tags = { type = \"array\" } }\n",
        )
        .file(
            "variants/generic.toml",
            format!(
                "{}native_tools = true\n",
                common::VARIANT
                    .replace("tools = [\"read_file\"]", "tools = [\"read_file\", \"search\", \"ask\"]")
            ),
        )
        .validate();
    let found: Vec<(String, String, u64)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.file, d.line))
        .collect();
    assert!(
        found.contains(&("array-without-items".into(), "tools/ask.toml".into(), 7)),
        "{found:?}"
    );
    // An array nested in an object parameter, which providers refuse as well, at its
    // parameter, named by its path.
    assert!(
        found.contains(&("array-without-items".into(), "tools/ask.toml".into(), 17)),
        "{found:?}"
    );
    assert!(
        report.diagnostics().iter().any(|d| d.message
            == "parameter `nested.tags` of tool `ask.user` is an array without `items`"),
        "{found:?}"
    );
    // Gemini refuses an object without properties.
    assert!(
        found.contains(&(
            "object-without-properties".into(),
            "tools/ask.toml".into(),
            12
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "mcp-tool-skipped".into(),
            "examples/contexts/mcp.toml".into(),
            15
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "keywords-dropped".into(),
            "examples/contexts/mcp.toml".into(),
            10
        )),
        "{found:?}"
    );
    let messages: Vec<String> = report
        .diagnostics()
        .into_iter()
        .map(|d| d.message)
        .collect();
    // At any depth, named by its path.
    for path in ["nested.inner", "nested.list[]"] {
        assert!(
            messages.iter().any(|m| m.starts_with(&format!(
                "`{path}` of tool `ask.user` is an object without `properties`"
            ))),
            "{messages:#?}"
        );
    }
    assert!(
        messages.iter().any(|m| m
            == "the gemini dialect cannot carry `$schema`, `additionalProperties` in the schema of tool `trk__create_issue`: dropped"),
        "{messages:#?}"
    );

    // A spec tool name the provider rejects is an error, at the tool's name.
    let workspace = native_fixture()
        .file(
            "tools/ask.toml",
            "id = \"ask\"\nname = \"ask.user\"\ndescription = \"Ask.\"\n",
        )
        .file(
            "variants/generic.toml",
            format!(
                "{}native_tools = true\n",
                common::VARIANT.replace(
                    "tools = [\"read_file\"]",
                    "tools = [\"read_file\", \"ask\"]"
                )
            ),
        )
        .write();
    let run = workspace.run(&["tools", "--context", "basic", "--dialect", "openai"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("error[tool-name-rejected]: tool name `ask.user` is not made of letters, digits, `_` and `-` alone, which the openai dialect rejects")
            && run.stderr.contains("tools/ask.toml:2:8"),
        "{}",
        run.stderr
    );
    // Gemini takes dots.
    assert_eq!(
        workspace
            .run(&["tools", "--context", "basic", "--dialect", "gemini"])
            .code,
        0
    );

    // Over-long MCP names can be an error instead of a skip; a qualified name that meets
    // another tool's is an error.
    let strict = native_fixture().file(
        "promptc.toml",
        format!(
            "{}\n[tool_definitions]\nlong_names = \"error\"\nmcp_name = \"{{{{ tool }}}}\"\n",
            common::MANIFEST
        ),
    );
    let workspace = strict
        .file(
            "examples/contexts/mcp.toml",
            MCP_CONTEXT.replace("name = \"create_issue\"", "name = \"search\""),
        )
        .write();
    let run = workspace.run(&["tools", "--context", "mcp"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("error[tool-name-rejected]: tool name `a_tool_whose"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "error[tool-name-taken]: tool name `search` is already taken in the tool definitions (by `search`)"
        ) && run.stderr.contains("rename the server in the context's `mcp_servers`, change `mcp_name`"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_build_matrix_writes_and_checks_the_definitions_beside_each_prompt() {
    let workspace = native_fixture().write();
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let root = workspace.root();
    let definitions = root.join("examples/prompts/generic/mcp.tools.json");
    let text = std::fs::read_to_string(&definitions).unwrap();
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed[0]["function"]["name"], "read_file");
    assert_eq!(workspace.run(&["check"]).code, 0);
    // A changed tool description makes the definitions stale, and `check` says which file.
    std::fs::write(
        root.join("tools/search.toml"),
        SEARCH.replace("Search the code base", "Search the repository"),
    )
    .unwrap();
    let check = workspace.run(&["check"]);
    assert_eq!(check.code, 1);
    assert!(
        check.stderr.contains("generic/mcp.tools.json"),
        "{}",
        check.stderr
    );
    // Removing `native_tools` removes the files the build wrote.
    std::fs::write(root.join("variants/generic.toml"), common::VARIANT).unwrap();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    assert!(!definitions.exists());
}

#[test]
fn a_broken_mcp_name_template_is_located_at_the_setting() {
    let workspace = native_fixture()
        .file(
            "promptc.toml",
            format!(
                "{}\n[tool_definitions]\nmcp_name = \"{{{{ server }}}}__{{{{ nope }}}}\"\n",
                common::MANIFEST
            ),
        )
        .write();
    let run = workspace.run(&["tools", "--context", "mcp"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("error[mcp-name-failed]") && run.stderr.contains("promptc.toml:5:12"),
        "{}",
        run.stderr
    );
}

// minijinja's code generator panicked on an import whose alias is not a name; the setting is
// refused instead, at its place.
#[test]
fn an_mcp_name_template_that_would_crash_the_renderer_is_refused_at_the_setting() {
    let workspace = native_fixture()
        .file(
            "promptc.toml",
            format!(
                "{}\n[tool_definitions]\nmcp_name = \"{{% import 'a' as 1 %}}{{{{ tool }}}}\"\n",
                common::MANIFEST
            ),
        )
        .write();
    let run = workspace.run(&["tools", "--context", "mcp"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("error[mcp-name-failed]")
            && run.stderr.contains("write a name after `as`")
            && run.stderr.contains("promptc.toml:5:12"),
        "{}",
        run.stderr
    );
}

#[test]
fn diff_shows_changed_tool_definitions_like_prompts() {
    let workspace = native_fixture().write();
    let root = workspace.root();
    common::git(root, &["init", "-q", "-b", "main"]);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "base"]);
    std::fs::write(
        root.join("tools/search.toml"),
        SEARCH.replace("What to look for.", "The words to look for."),
    )
    .unwrap();
    let run = workspace.run(&["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let paths: Vec<&str> = json["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    // The instruction is in the prompt and in the definitions: both files of each context.
    assert!(
        paths.contains(&"examples/prompts/generic/mcp.tools.json"),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"examples/prompts/generic/mcp.md"),
        "{paths:?}"
    );
    // Told apart wherever a change is one line: the definitions' change is not the prompt's.
    let what = |path: &str| {
        json["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["path"] == path)
            .map(|p| p["what"].clone())
    };
    assert_eq!(
        what("examples/prompts/generic/mcp.md"),
        Some("prompt".into())
    );
    assert_eq!(
        what("examples/prompts/generic/mcp.tools.json"),
        Some("tool definitions".into())
    );
    // Their tokens are counted as a request carries them, compact, as `stats` counts them
    // (the pretty file's whitespace counted about a third more).
    let diffed = json["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"] == "examples/prompts/generic/mcp.tools.json")
        .unwrap()["tokens"]
        .clone();
    let stats = workspace.run(&[
        "stats",
        "--family",
        "generic",
        "--context",
        "mcp",
        "--format",
        "json",
    ]);
    assert_eq!(stats.code, 0, "{}", stats.stderr);
    let stats: Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(
        diffed[1], stats["prompts"][0]["tool_definition_tokens"],
        "{diffed} {stats}"
    );
    let stat = workspace.run(&["diff", "--base", "HEAD", "--stat"]);
    assert!(
        stat.stdout.contains("generic × mcp (modified): "),
        "{}",
        stat.stdout
    );
    assert!(
        stat.stdout
            .contains("generic × mcp tool definitions (modified): "),
        "{}",
        stat.stdout
    );
}

#[test]
fn diff_exit_code_tells_a_change_apart() {
    let workspace = native_fixture().write();
    let root = workspace.root();
    common::git(root, &["init", "-q", "-b", "main"]);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "base"]);
    assert_eq!(
        workspace
            .run(&["diff", "--base", "HEAD", "--exit-code"])
            .code,
        0
    );
    std::fs::write(
        root.join("tools/search.toml"),
        SEARCH.replace("What to look for.", "The words to look for."),
    )
    .unwrap();
    assert_eq!(workspace.run(&["diff", "--base", "HEAD"]).code, 0);
    assert_eq!(
        workspace
            .run(&["diff", "--base", "HEAD", "--exit-code"])
            .code,
        1
    );
}

// A tool from `--mcp` settings is not in the context file: its warning was placed at the
// nearest part of the file that is, an unrelated server of the context, then at the manifest's
// naming rule. It is placed where the listing beside the settings names it.
#[test]
fn a_tool_from_mcp_settings_is_placed_in_the_listing() {
    let workspace = native_fixture().write();
    let root = workspace.root();
    std::fs::create_dir_all(root.join("mcp")).unwrap();
    std::fs::write(
        root.join("mcp/settings.json"),
        r#"{"mcpServers":{"s0":{"command":"x"}}}"#,
    )
    .unwrap();
    let long = "t".repeat(200);
    std::fs::write(
        root.join("mcp/settings.listing.json"),
        format!(
            "{{\"servers\": {{\"s0\": {{\"tools\": [\n  {{\"name\": \"fine\"}},\n  {{\"name\": \"{long}\", \"input_schema\": {{\"type\": \"object\"}}}}\n]}}}}}}"
        ),
    )
    .unwrap();
    let run = workspace.run(&[
        "tools",
        "--context",
        "mcp",
        "--dialect",
        "anthropic",
        "--mcp",
        "mcp/settings.json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let warning = run
        .stderr
        .split("\n\n")
        .find(|block| block.contains("warning[mcp-tool-skipped]") && block.contains("s0__"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(
        warning.contains("--> mcp/settings.listing.json:3:12"),
        "{warning}"
    );
    // The context's own tool with a long name is still placed in the context.
    assert!(
        run.stderr.contains("examples/contexts/mcp.toml:15:"),
        "{}",
        run.stderr
    );
}

// A context given by path (or on standard input), and a context that inherits its servers:
// the problem with an MCP tool was placed at the manifest's `[tool_definitions]`, far from
// the tool. It is placed at the tool's name, in the file that writes it.
#[test]
fn an_mcp_tool_problem_points_at_the_file_that_names_the_tool() {
    let workspace = native_fixture()
        .file(
            "examples/contexts/child.toml",
            "extends = \"mcp\"\ncwd = \"/srv/other\"\n",
        )
        .write();
    let root = workspace.root();
    let outside = workspace.tmp().join("given.toml");
    std::fs::write(&outside, format!("# given by path\n{MCP_CONTEXT}")).unwrap();
    let given = outside.to_str().unwrap();
    for (context, place) in [
        ("child", "examples/contexts/mcp.toml:15:8".to_string()),
        (given, format!("{given}:16:8")),
    ] {
        let run = workspace.run(&["tools", "--context", context, "--dialect", "openai"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stderr.contains("warning[mcp-tool-skipped]")
                && run.stderr.contains(&format!("--> {place}")),
            "{context}: {}",
            run.stderr
        );
    }
    let output = workspace
        .command()
        .args(["tools", "--context", "-", "--dialect", "openai"])
        .write_stdin(MCP_CONTEXT)
        .output()
        .unwrap();
    let run = common::Run::checked(output);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("--> <stdin>:15:8"), "{}", run.stderr);
    // A name with a space is not too long: the help is about the characters, which the
    // naming rule can replace (the server's `uid` is no help).
    let output = workspace
        .command()
        .args(["tools", "--context", "-", "--dialect", "openai"])
        .write_stdin(MCP_CONTEXT.replace(
            "a_tool_whose_name_goes_on_and_on_past_what_any_provider_accepts_as_a_name",
            "a b",
        ))
        .output()
        .unwrap();
    let run = common::Run::checked(output);
    assert!(
        run.stderr
            .contains("its name is not made of letters, digits, `_` and `-` alone")
            && run.stderr.contains(
                "help: make `tool_definitions.mcp_name` write only letters, digits, `_` and `-`"
            )
            && !run.stderr.contains("uid"),
        "{}",
        run.stderr
    );
    // Gemini's names also start with a letter or `_`: a server whose uid starts with a
    // digit names its tools so, and is told that, not that its characters are wrong.
    let output = workspace
        .command()
        .args(["tools", "--context", "-", "--dialect", "gemini"])
        .write_stdin(MCP_CONTEXT.replace("uid = \"trk\"", "uid = \"1trk\""))
        .output()
        .unwrap();
    let run = common::Run::checked(output);
    assert!(
        run.stderr.contains(
            "MCP tool `1trk__create_issue` is left out of the gemini tool definitions: its name is not made of letters, digits, `_`, `-`, `.` and `:` alone, starting with a letter or `_`"
        ) && run.stderr.contains("starting with a letter or `_` (e.g. `mcp_{{ server }}__"),
        "{}",
        run.stderr
    );
    // Made an error, it stops the compile at the same place.
    std::fs::write(
        root.join("promptc.toml"),
        format!(
            "{}\n[tool_definitions]\nlong_names = \"error\"\n",
            common::MANIFEST
        ),
    )
    .unwrap();
    let run = workspace.run(&["tools", "--context", "child", "--dialect", "openai"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("--> examples/contexts/mcp.toml:15:8"),
        "{}",
        run.stderr
    );
}

/// An agent asks one compiler for the definitions of request after request: each request gets
/// the definitions a compiler of its own gives, however the requests differ (the dialect asked
/// for, the provider the dialect rules read, an MCP server's tools) and in whatever order they
/// come, the second time round as the first.
#[test]
fn requests_that_differ_get_their_own_definitions_from_one_compiler() {
    use promptc::model::Dialect;
    use promptc::{Request, Selection};

    let workspace = promptc::load_workspace(&common::repo_root())
        .unwrap()
        .workspace;
    let compiler = promptc::Compiler::new(&workspace);
    let context = workspace.context("native-tools").unwrap().clone();
    let base = Request::new(Selection::family("native-next-gen"), context);
    let mut asked_openai = base.clone();
    asked_openai.dialect = Some(Dialect::Openai);
    let mut on_gemini = base.clone();
    on_gemini.context.model.id = "gemini-2.5-pro".into();
    on_gemini.context.model.provider = "gemini".into();
    let mut one_tool_fewer = base.clone();
    let server = one_tool_fewer
        .context
        .mcp_servers
        .iter_mut()
        .find(|server| !server.tools.is_empty())
        .expect("the native-tools context has an MCP server with tools");
    server.tools.pop();
    let requests = [&base, &asked_openai, &on_gemini, &one_tool_fewer];
    let mut made = Vec::new();
    for request in requests.iter().chain(&requests) {
        let shared = compiler.compile(request).unwrap();
        let own = promptc::Compiler::new(&workspace).compile(request).unwrap();
        assert_eq!(shared.dialect, own.dialect);
        assert_eq!(shared.tool_definitions, own.tool_definitions);
        made.push((shared.dialect, shared.tool_definitions));
    }
    let first_round: Vec<String> = made[..4]
        .iter()
        .map(|made| serde_json::to_string(made).unwrap())
        .collect();
    let distinct: std::collections::BTreeSet<&String> = first_round.iter().collect();
    assert_eq!(distinct.len(), 4, "each request has definitions of its own");
    assert_eq!(made[0].0, Some("anthropic"));
    assert_eq!(made[1].0, Some("openai"));
    assert_eq!(made[2].0, Some("gemini"));
}

// Two native families that call two providers' APIs, in one context: the dialect rules could
// read only the context, so the committed definitions of one family had the other's shape.
// A rule may read `family`, and each family's definitions are its own (not shared through
// the memo of definitions for the same tools and context).
#[test]
fn a_dialect_rule_may_choose_by_family() {
    let workspace = native_fixture()
        .file(
            "promptc.toml",
            format!(
                "{}[tool_definitions]\ndialect = \"anthropic\"\ndialects = [{{ when = \"family == 'gpt'\", dialect = \"openai\" }}]\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/gpt.toml",
            "id = \"gpt\"\nextends = \"generic\"\n",
        )
        .write();
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let read = |path: &str| -> Value {
        let text = std::fs::read_to_string(workspace.root().join(path)).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    // OpenAI's shape wraps each tool in `function`; Anthropic's has `input_schema`.
    assert_eq!(
        read("examples/prompts/gpt/basic.tools.json")[0]["function"]["name"],
        "read_file"
    );
    assert_eq!(
        read("examples/prompts/generic/basic.tools.json")[0]["name"],
        "read_file"
    );
    assert!(read("examples/prompts/generic/basic.tools.json")[0]["input_schema"].is_object());
    // A name of the variant other than its family is not there when a rule runs.
    let placeholder = native_fixture()
        .file(
            "promptc.toml",
            format!(
                "{}[tool_definitions]\ndialects = [{{ when = \"AGENT == 'x'\", dialect = \"openai\" }}]\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/generic.toml",
            format!(
                "{}native_tools = true\n[placeholders]\nAGENT = \"x\"\n",
                common::VARIANT
            ),
        )
        .write();
    let validated = placeholder.run(&["validate"]);
    assert_eq!(validated.code, 1, "{}", validated.stderr);
    assert!(
        validated.stderr.contains(
            "`AGENT` is not defined here: a `tool_definitions.dialects` rule sees the context, the predicates and `family` only"
        ),
        "{}",
        validated.stderr
    );
}

// `build --out DIR` wrote a native variant's prompt alone: its tool definitions, without
// which the prompt is of no use, go beside it as `build --all` writes them.
#[test]
fn build_out_writes_a_native_variant_s_definitions_beside_its_prompt() {
    let workspace = native_fixture().write();
    let out = workspace.tmp().join("out");
    let run = workspace.run(&[
        "build",
        "--context",
        "basic",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(out.join("generic.md").is_file());
    let all = workspace.run(&["build", "--all", "-q"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    assert_eq!(
        std::fs::read_to_string(out.join("generic.tools.json")).unwrap(),
        std::fs::read_to_string(
            workspace
                .root()
                .join("examples/prompts/generic/basic.tools.json")
        )
        .unwrap()
    );
    assert!(run.stderr.contains("generic.tools.json"), "{}", run.stderr);
}

// The prompt and its definitions are written together or not at all: a folder where the
// definitions belong stopped the write after the prompt was in place.
#[test]
fn build_out_writes_neither_file_when_the_definitions_cannot_be_written() {
    let workspace = native_fixture().write();
    let out = workspace.tmp().join("out");
    std::fs::create_dir_all(out.join("generic.tools.json/inside")).unwrap();
    std::fs::write(out.join("generic.md"), "the prompt before").unwrap();
    let run = workspace.run(&[
        "build",
        "--context",
        "basic",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("generic.tools.json is a folder, where a file belongs"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(out.join("generic.md")).unwrap(),
        "the prompt before"
    );
    let mut names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["generic.md", "generic.tools.json"]);
}

/// The names of a context's MCP tools share one compile's fuel: each name rendered with fuel
/// of its own let a costly `mcp_name` run once per tool, and a context of ten thousand tools
/// ran the process out of time with no diagnostic. Within the fuel, every name is made.
#[test]
fn mcp_names_share_one_compiles_fuel() {
    let context = |tools: usize| {
        let mut text = String::from("date = \"2026-11-01\"\n\n[[mcp_servers]]\nname = \"srv\"\n");
        for tool in 0..tools {
            text.push_str(&format!("\n[[mcp_servers.tools]]\nname = \"t{tool}\"\n"));
        }
        text
    };
    // Tens of thousands of instructions a name: sixty fit in the compile's 5 000 000, two
    // hundred do not.
    let costly = "{% for i in range(20000) %}{% endfor %}{{ server }}_{{ tool }}";
    for (tools, fits) in [(60, true), (200, false)] {
        let workspace = native_fixture()
            .file(
                "promptc.toml",
                format!(
                    "{}\n[tool_definitions]\nmcp_name = '{costly}'\n",
                    common::MANIFEST
                ),
            )
            .file("examples/contexts/many.toml", context(tools))
            .write();
        let run = workspace.run(&["tools", "--context", "many"]);
        if fits {
            assert_eq!(run.code, 0, "{}", run.stderr);
            assert!(run.stdout.contains("srv_t59"), "{}", run.stdout);
        } else {
            assert_eq!(run.code, 1, "{}", run.stderr);
            assert!(
                run.stderr.contains("error[mcp-name-failed]")
                    && run.stderr.contains(
                        "the names of the context's MCP tools spent a compile's fuel (5000000) together"
                    )
                    && run.stderr.contains("promptc.toml:5:12"),
                "{}",
                run.stderr
            );
        }
    }
}
