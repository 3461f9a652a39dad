//! The run-time API (`promptc::Runtime`), as an agent and the language bindings use it: a
//! request as JSON in, the compiled prompt or located diagnostics out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, repo_root};
use promptc::{AgentRequest, Failure, Runtime};
use serde_json::{Value, json};

fn shipped() -> Runtime {
    Runtime::load(&repo_root()).unwrap()
}

fn request(value: Value) -> AgentRequest {
    AgentRequest::from_json(value).unwrap()
}

fn failure(result: Result<impl std::fmt::Debug, Failure>) -> Failure {
    result.expect_err("the request should fail")
}

#[test]
fn a_runtime_is_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Runtime>();
}

#[test]
fn each_shipped_family_compiles_as_the_command_line_builds_it() {
    let runtime = shipped();
    for family in [
        "generic",
        "next-gen",
        "native-next-gen",
        "xs",
        "gpt",
        "gemini",
    ] {
        let response = runtime
            .compile(&request(json!({ "family": family, "context": "basic" })))
            .unwrap();
        let committed = std::fs::read_to_string(
            repo_root().join(format!("examples/prompts/{family}/basic.md")),
        )
        .unwrap();
        assert_eq!(response.value.family, family);
        assert_eq!(response.value.prompt, committed, "{family}");
        assert!(response.warnings.is_empty(), "{:?}", response.warnings);
    }
}

#[test]
fn a_model_is_routed_and_becomes_the_contexts_model() {
    let runtime = shipped();
    let routed = |id: &str, provider: &str| {
        runtime
            .compile(&request(json!({
                "model": { "id": id, "provider": provider },
                "context": { "cwd": "/srv/app", "date": "2026-11-22" },
            })))
            .unwrap()
            .value
    };
    assert_eq!(routed("claude-sonnet-4-5", "anthropic").family, "next-gen");
    assert_eq!(
        routed("claude-3-7-sonnet-20250219", "anthropic").family,
        "generic"
    );
    assert_eq!(routed("gemini-1.5-pro", "gemini").family, "gemini");
    let choice = runtime
        .route(&request(
            json!({ "model": { "id": "gpt-5.1-codex", "provider": "openai" } }),
        ))
        .unwrap()
        .value;
    assert_eq!(choice.family, "next-gen");
}

#[test]
fn native_tools_come_in_the_dialect_of_the_provider() {
    let runtime = shipped();
    let compiled = runtime
        .compile(&request(json!({
            "family": "native-next-gen",
            "model": { "id": "claude-sonnet-4-5", "provider": "anthropic" },
            "context": "basic",
        })))
        .unwrap()
        .value;
    assert_eq!(compiled.dialect, Some("anthropic"));
    let definitions = compiled.tool_definitions.unwrap();
    let first = &definitions[0];
    assert!(first["input_schema"]["properties"].is_object(), "{first}");
    let openai = runtime
        .compile(&request(json!({
            "family": "native-next-gen",
            "context": "basic",
            "dialect": "openai",
        })))
        .unwrap()
        .value;
    assert_eq!(openai.dialect, Some("openai"));
}

/// A dialect asked for a variant that sends no tool definitions is said, as `promptc build
/// --dialect` says it; the prompt is compiled all the same.
#[test]
fn a_dialect_for_a_variant_without_native_tools_is_a_warning() {
    let runtime = shipped();
    let response = runtime
        .compile(&request(json!({
            "family": "next-gen",
            "context": "basic",
            "dialect": "anthropic",
        })))
        .unwrap();
    assert_eq!(response.value.tool_definitions, None);
    let warning = response
        .warnings
        .iter()
        .find(|warning| warning.code == "dialect-unused")
        .expect("a dialect-unused warning");
    assert_eq!(warning.severity, "warning");
    assert!(
        warning.message.contains("`anthropic`")
            && warning
                .message
                .contains(&format!("`{}`", response.value.variant)),
        "{}",
        warning.message
    );
    assert!(
        warning
            .help
            .as_deref()
            .unwrap()
            .contains("native_tools = true"),
        "{warning:?}"
    );
    // A variant with native tools uses the dialect, and says nothing of it.
    let native = runtime
        .compile(&request(json!({
            "family": "native-next-gen",
            "context": "basic",
            "dialect": "anthropic",
        })))
        .unwrap();
    assert!(
        native.warnings.iter().all(|w| w.code != "dialect-unused"),
        "{:?}",
        native.warnings
    );
}

/// `variant` names one variant: with `family`, `label` or `tag` the compile followed one of
/// them and left the other out, where the command line refuses the flags together.
#[test]
fn a_variant_with_another_choice_of_variant_is_refused() {
    let runtime = shipped();
    for other in [
        json!({ "family": "gpt" }),
        json!({ "label": "stable" }),
        json!({ "tag": "beta" }),
    ] {
        let mut fields = json!({ "variant": "next-gen@1", "context": "basic" });
        let name = other.as_object().unwrap().keys().next().unwrap().clone();
        fields[&name] = other[&name].clone();
        let refused = failure(runtime.compile(&request(fields)));
        assert_eq!(refused.diagnostics.len(), 1, "{:?}", refused.diagnostics);
        let diagnostic = &refused.diagnostics[0];
        assert_eq!(diagnostic.code, "conflicting-request-fields");
        assert_eq!(
            diagnostic.message,
            format!(
                "`variant` and `{name}` cannot both be given: the compile would follow one and leave the other out"
            )
        );
        assert!(
            diagnostic
                .help
                .as_deref()
                .unwrap()
                .contains("give it alone")
        );
    }
    // Alone, it compiles.
    runtime
        .compile(&request(
            json!({ "variant": "next-gen@1", "context": "basic" }),
        ))
        .unwrap();
}

#[test]
fn a_bad_context_value_is_located_in_the_context_as_given() {
    let runtime = shipped();
    let failed = failure(runtime.compile(&request(json!({
        "context": { "cwd": "/srv/app", "mode": "fly" },
    }))));
    let error = &failed.diagnostics[0];
    assert!(error.is_error());
    let at = error.location.as_ref().unwrap();
    assert_eq!(at.file, "<context>");
    // Pretty-printed: `{`, then `cwd`, then `mode` on line 3.
    assert_eq!(at.line, 3, "{error:?}");
    assert!(error.message.contains("fly"), "{}", error.message);
    assert!(failed.to_string().starts_with("<context>:3:"), "{failed}");
}

/// A problem with one of the context's MCP tools is located at the tool's name in the context
/// as given, not at the workspace's naming rule.
#[test]
fn an_mcp_tool_problem_is_located_in_the_context_as_given() {
    let runtime = shipped();
    let long = "t".repeat(80);
    let response = runtime
        .compile(&request(json!({
            "family": "native-next-gen",
            "context": {
                "date": "2026-11-01",
                "mcp_servers": [{ "name": "s", "tools": [{ "name": long }] }],
            },
        })))
        .unwrap();
    let warning = response
        .warnings
        .iter()
        .find(|w| w.code == "mcp-tool-skipped")
        .unwrap_or_else(|| panic!("{:?}", response.warnings));
    let at = warning.location.as_ref().unwrap();
    // Pretty-printed: the tool's name is on line 8, after its key.
    assert_eq!(
        (at.file.as_str(), at.line, at.column),
        ("<context>", 8, 19),
        "{warning:?}"
    );
}

/// A `set` value naming a context field that is not text is read as the field's type, as on
/// the command line: `"yolo": "false"` is not a text that reads as true.
#[test]
fn a_set_context_field_takes_its_type() {
    let runtime = shipped();
    let compile = |set: Value| {
        runtime.compile(&request(json!({
            "family": "next-gen",
            "context": "basic",
            "set": set,
        })))
    };
    let plain = compile(json!({})).unwrap().value.prompt;
    assert_eq!(
        compile(json!({ "yolo": "false" })).unwrap().value.prompt,
        plain
    );
    assert_ne!(
        compile(json!({ "yolo": "true" })).unwrap().value.prompt,
        plain
    );
    let failed = failure(compile(json!({ "yolo": "maybe" })));
    assert!(
        failed.to_string().contains(
            "`set.yolo` (\"maybe\"): `yolo` is a context field that holds `true` or `false`"
        ),
        "{failed}"
    );
    // Worded as the request writes it, not as the command line would.
    let not_set = failure(compile(json!({ "rule_toggles": "x" })));
    assert!(
        not_set.to_string().contains(
            "`set.rule_toggles`: `rule_toggles` is not given by `set`: give it in the request's `context`"
        ),
        "{not_set}"
    );
    for failed in [&failed, &not_set] {
        assert!(!failed.to_string().contains("--set"), "{failed}");
        assert!(!failed.to_string().contains("command line"), "{failed}");
    }
}

/// A `set` value under a name no template or condition reads changes nothing: a warning with
/// the near name, as `promptc build --set` gives; it compiled without a word.
#[test]
fn a_set_name_no_template_reads_is_a_warning_with_the_near_name() {
    let runtime = shipped();
    let compiled = runtime
        .compile(&request(json!({
            "family": "next-gen",
            "context": "basic",
            "set": { "AGENT_NAM": "Ada", "AGENT_NAME": "Ada", "extra.teem": "core" },
        })))
        .unwrap();
    let unread: Vec<(&str, &str, Option<&str>)> = compiled
        .warnings
        .iter()
        .filter(|warning| warning.code == "set-name-unread")
        .map(|warning| {
            (
                warning.message.as_str(),
                warning.severity,
                warning.help.as_deref(),
            )
        })
        .collect();
    // The shipped library reads no key of `extra`: no near one to name.
    assert_eq!(
        unread,
        [
            (
                "`set.AGENT_NAM` changes nothing: no template or condition reads `AGENT_NAM`",
                "warning",
                Some("did you mean `AGENT_NAME`?")
            ),
            (
                "`set.extra.teem` changes nothing: no template or condition reads `extra.teem`",
                "warning",
                Some("leave it out of `set`, or read it in a template")
            )
        ],
        "{:?}",
        compiled.warnings
    );
}

#[test]
fn a_request_as_json_text_reads_as_the_same_request_as_a_value() {
    let runtime = shipped();
    let text = r#"{ "family": "xs", "context": "basic", "set": { "PROJECT": "atlas" } }"#;
    let from_text = runtime
        .compile(&AgentRequest::from_json_text(text).unwrap())
        .unwrap();
    let from_value = runtime
        .compile(&request(serde_json::from_str(text).unwrap()))
        .unwrap();
    assert_eq!(from_text.value.family, "xs");
    assert_eq!(from_text.value.prompt, from_value.value.prompt);

    // Its problems read as a value's do: no position in a text the caller never wrote.
    for text in [
        r#"{ "familly": "gpt" }"#,
        "{ \"family\": ",
        &"[".repeat(200),
    ] {
        let failed = failure(AgentRequest::from_json_text(text));
        assert_eq!(failed.diagnostics[0].code, "invalid-request");
        assert!(!failed.to_string().contains(" at line "), "{failed}");
    }
    // A key given twice is refused, not the last of them taken.
    let twice = failure(AgentRequest::from_json_text(
        r#"{ "family": "xs", "family": "gpt" }"#,
    ));
    assert_eq!(twice.diagnostics[0].code, "invalid-request");
    assert!(
        twice.to_string().contains("duplicate key `family`"),
        "{twice}"
    );
    let unknown = failure(AgentRequest::from_json_text(r#"{ "familly": "gpt" }"#));
    let same = failure(AgentRequest::from_json(json!({ "familly": "gpt" })));
    assert_eq!(unknown.to_string(), same.to_string());
}

/// A request with an MCP tool whose `input_schema` nests `levels` tables below its
/// `properties`.
fn deep_schema_request(levels: usize) -> Value {
    let mut schema = json!({ "type": "string" });
    for _ in 0..levels {
        schema = json!({ "type": "object", "properties": { "a": schema } });
    }
    json!({
        "family": "xs",
        "context": {
            "cwd": "/srv/app",
            "date": "2026-11-22",
            "mcp_servers": [{ "name": "notes", "tools": [{ "name": "add", "description": "Add.", "input_schema": schema }] }],
        },
    })
}

/// Nested past what a request may hold, a request is refused at its place (the server and
/// tool), with the limit and what would fix it, whether it came as a value or as JSON text;
/// one level less is read.
#[test]
fn a_request_nested_too_deep_is_refused_where_it_is_with_the_limit() {
    // The request, its context, mcp_servers, the server, tools, the tool: six levels above
    // the schema, whose each level is two (itself and its `properties`).
    let too_deep = deep_schema_request(61);
    let from_value = failure(AgentRequest::from_json(too_deep.clone()));
    let from_text = failure(AgentRequest::from_json_text(&too_deep.to_string()));
    for refused in [&from_value, &from_text] {
        assert_eq!(refused.diagnostics.len(), 1, "{:?}", refused.diagnostics);
        let diagnostic = &refused.diagnostics[0];
        assert_eq!(diagnostic.code, "invalid-request");
        assert_eq!(
            diagnostic.message,
            "invalid request: `context.mcp_servers[0].tools[0].input_schema.properties.a…` \
             nests lists and tables 128 levels deep (the request counted as one), or holds itself"
        );
        let help = diagnostic.help.as_deref().unwrap();
        assert!(
            help.starts_with("a request nests fewer than 128 levels: flatten or shorten `context.mcp_servers[0].tools[0]"),
            "{help}"
        );
        assert!(!help.contains("`family`"), "{help}");
    }
    assert_eq!(from_value.to_string(), from_text.to_string());
    // A level less is read; a schema as deep as real ones are compiles.
    let within = deep_schema_request(60);
    AgentRequest::from_json(within.clone()).unwrap();
    AgentRequest::from_json_text(&within.to_string()).unwrap();
    shipped()
        .compile(&request(deep_schema_request(10)))
        .unwrap();
}

/// A caller's thread may have little stack (a Rust or tokio thread has 2 MiB): a request
/// nested as deep as a request may be is compiled all the same, where the process aborted
/// at 35 levels of a tool's schema (a debug build's stack overflowed reading the context).
#[test]
fn a_deep_request_compiles_on_a_thread_with_little_stack() {
    let runtime = shipped();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn_scoped(scope, || {
                for levels in [35, 60] {
                    // Native tool definitions, which carry the schema whole.
                    let mut deep = deep_schema_request(levels);
                    deep["family"] = json!("native-next-gen");
                    let compiled = runtime.compile(&request(deep)).unwrap();
                    let definitions = compiled.value.tool_definitions.unwrap().to_string();
                    let (_, server_tool) = definitions.split_once("notes__add").unwrap();
                    let depth = server_tool.matches("\"properties\"").count();
                    assert_eq!(depth, levels, "{server_tool}");
                }
            })
            .unwrap()
            .join()
            .unwrap();
    });
}

/// What JSON cannot carry, which the Node package marks in place, is refused there.
#[test]
fn a_value_that_is_not_data_is_refused_at_its_place() {
    let marked = |what: &str| {
        let request = json!({
            "family": "xs",
            "set": { "LIMIT": { (promptc::NOT_DATA_MARK): what } },
        });
        let from_text = failure(AgentRequest::from_json_text(&request.to_string()));
        let from_value = failure(AgentRequest::from_json(request));
        assert_eq!(from_text.to_string(), from_value.to_string());
        let diagnostic = from_value.diagnostics[0].clone();
        assert_eq!(diagnostic.code, "invalid-request");
        assert!(
            diagnostic
                .help
                .as_deref()
                .unwrap()
                .starts_with("a request holds data only"),
            "{diagnostic:?}"
        );
        diagnostic.message
    };
    assert_eq!(
        marked("bigint"),
        "invalid request: `set.LIMIT` is a value of kind `bigint`, which is not data a request can carry"
    );
    assert_eq!(
        marked("NaN"),
        "invalid request: `set.LIMIT` is `NaN`, a number a request cannot carry as written"
    );
    let path = [
        promptc::Step::Key("context".into()),
        promptc::Step::Key("extra".into()),
        promptc::Step::Key("a b".into()),
        promptc::Step::Index(2),
    ];
    assert_eq!(
        Failure::not_data(&path, promptc::NotData::Key("int".into())).to_string(),
        "invalid request: `context.extra[\"a b\"][2]` has a key of kind `int`; a table's keys are strings"
    );
}

#[test]
fn request_problems_name_what_would_fix_them() {
    let runtime = shipped();
    let unknown = failure(AgentRequest::from_json(json!({ "familly": "gpt" })));
    assert_eq!(unknown.diagnostics[0].code, "invalid-request");
    assert!(unknown.to_string().contains("familly"), "{unknown}");

    let no_context = failure(runtime.compile(&request(json!({ "context": "nope" }))));
    assert_eq!(no_context.diagnostics[0].code, "unknown-context");
    let help = no_context.diagnostics[0].help.as_deref().unwrap();
    assert!(help.contains("basic"), "{help}");

    // A problem below the request's top gets help about that place, not the list of the
    // request's fields.
    let rules_from = failure(runtime.compile(&request(json!({ "context": { "rules_from": 7 } }))));
    assert_eq!(rules_from.diagnostics[0].code, "invalid-request");
    assert_eq!(
        rules_from.diagnostics[0].help.as_deref(),
        Some("give `rules_from` as a list of folders, each a path as a string")
    );
    let set = failure(runtime.compile(&request(
        json!({ "family": "xs", "set": { "yolo": "maybe" } }),
    )));
    assert_eq!(set.diagnostics[0].code, "invalid-request");
    let help = set.diagnostics[0].help.as_deref().unwrap();
    assert!(!help.contains("`family`"), "{help}");

    let not_table = failure(runtime.compile(&request(json!({ "context": 7 }))));
    assert_eq!(not_table.diagnostics[0].code, "context-not-table");

    let dialect = failure(runtime.compile(&request(json!({ "dialect": "klingon" }))));
    assert_eq!(dialect.diagnostics[0].code, "unknown-dialect");

    // A family the workspace lacks: a near one, else the families there are.
    let family = failure(runtime.compile(&request(json!({ "family": "nope" }))));
    assert!(family.to_string().contains("nope"), "{family}");
    let last = family.diagnostics.last().unwrap();
    assert_eq!(last.code, "no-variant");
    let help = last.help.as_deref().unwrap();
    assert!(
        help.starts_with("families: ") && help.contains("next-gen"),
        "{help}"
    );
    let typo = failure(runtime.compile(&request(json!({ "family": "nex-gen" }))));
    let help = typo.diagnostics.last().unwrap().help.as_deref().unwrap();
    assert_eq!(help, "did you mean `next-gen`?");
}

#[test]
fn rules_folders_of_the_caller_may_lie_outside_the_workspace() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join(".clinerules"),
        "Answer in haiku when asked about the weather.\n",
    )
    .unwrap();
    let runtime = shipped();
    let compiled = runtime
        .compile(&request(json!({
            "family": "next-gen",
            "context": { "cwd": "/srv/app", "date": "2026-11-22", "rules_from": [project.path()] },
        })))
        .unwrap()
        .value;
    assert!(
        compiled.prompt.contains("Answer in haiku"),
        "the project's rules are in the prompt"
    );
    let missing = failure(runtime.compile(&request(json!({
        "context": { "rules_from": [project.path().join("absent")] },
    }))));
    assert_eq!(missing.diagnostics[0].code, "rules-folder-missing");
}

// A project's rules are read at each request, their front matter remembered by its text once
// parsed: each request applies the same rules, and front matter that does not parse is told
// at its place each time.
#[test]
fn rules_read_again_at_each_request_apply_and_are_told_alike() {
    let project = tempfile::tempdir().unwrap();
    let rules = project.path().join(".cursor/rules");
    std::fs::create_dir_all(&rules).unwrap();
    let front = "---\ndescription: Web code.\nglobs: [\"web/**\"]\n---\n";
    std::fs::write(rules.join("a.mdc"), format!("{front}Rule A applies.\n")).unwrap();
    // The same front matter after a byte-order mark, and a broken one.
    std::fs::write(
        rules.join("b.mdc"),
        format!("\u{feff}{front}Rule B applies.\n"),
    )
    .unwrap();
    let broken = "---\nglobs: [web/**\n---\nRule C never applies.\n";
    std::fs::write(rules.join("c.mdc"), broken).unwrap();
    let runtime = shipped();
    let ask = |file: &str| {
        runtime
            .compile(&request(json!({
                "family": "next-gen",
                "context": {
                    "cwd": "/srv/app", "date": "2026-11-22", "rules_from": [project.path()],
                    "active_files": [file],
                },
            })))
            .unwrap()
    };
    let mut seen = Vec::new();
    for file in ["web/app.ts", "web/app.ts", "api/main.rs"] {
        let response = ask(file);
        let applies = |rule: &str| response.value.prompt.contains(rule);
        let told: Vec<(String, usize)> = response
            .warnings
            .iter()
            .filter(|warning| warning.code == "frontmatter-syntax")
            .map(|warning| {
                let at = warning.location.as_ref().unwrap();
                (at.file.clone(), at.line)
            })
            .collect();
        seen.push((
            applies("Rule A"),
            applies("Rule B"),
            applies("Rule C"),
            told,
        ));
    }
    let broken_at = vec![(".cursor/rules/c.mdc".to_string(), 2)];
    let told_where = |told: &[(String, usize)]| -> Vec<(String, usize)> {
        told.iter()
            .map(|(file, line)| {
                let name = file.rsplit('/').next().unwrap_or(file);
                (format!(".cursor/rules/{name}"), *line)
            })
            .collect()
    };
    assert_eq!(
        seen.iter()
            .map(|(a, b, c, told)| (*a, *b, *c, told_where(told)))
            .collect::<Vec<_>>(),
        [
            (true, true, false, broken_at.clone()),
            (true, true, false, broken_at.clone()),
            (false, false, false, broken_at),
        ]
    );
}

#[test]
fn a_request_leaves_the_shared_workspace_as_it_was() {
    let runtime = shipped();
    let basic = request(json!({ "family": "gpt", "context": "basic" }));
    let before = runtime.compile(&basic).unwrap().value.prompt;
    // A failed request reads a context of its own; the next ones do not see it.
    failure(runtime.compile(&request(json!({ "context": { "mode": 1 } }))));
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("AGENTS.md"), "Prefer small commits.\n").unwrap();
    runtime
        .compile(&request(
            json!({ "context": { "date": "2026-11-22", "rules_from": [project.path()] } }),
        ))
        .unwrap();
    assert_eq!(runtime.compile(&basic).unwrap().value.prompt, before);
}

#[test]
fn compiles_on_many_threads_give_the_prompts_of_one_thread() {
    let runtime = shipped();
    let requests: Vec<AgentRequest> = ["claude-sonnet-4-5", "gpt-4.1", "gemini-1.5-pro", "qwen3"]
        .iter()
        .map(|id| request(json!({ "model": { "id": id }, "context": "basic" })))
        .collect();
    let alone: Vec<String> = requests
        .iter()
        .map(|r| runtime.compile(r).unwrap().value.prompt)
        .collect();
    let together: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = requests
            .iter()
            .map(|r| scope.spawn(|| runtime.compile(r).unwrap().value.prompt))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(alone, together);
}

/// At run time a user's project can make the prompt longer than the registry planned: a
/// request may take the prompt with an `over-budget` warning rather than fail. By default,
/// and with `error`, it fails as `build` does; any other value is refused by name.
#[test]
fn a_prompt_over_its_budget_fails_or_warns_as_the_request_asks() {
    let workspace = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!("{}max_prompt_tokens = 20\n", common::VARIANT),
        )
        .write();
    let runtime = Runtime::load(workspace.root()).unwrap();
    for asked in [
        json!({"context": "basic"}),
        json!({"context": "basic", "over_budget": "error"}),
    ] {
        let failed = failure(runtime.compile(&request(asked.clone())));
        assert_eq!(failed.diagnostics[0].code, "over-budget", "{asked}");
        assert!(failed.diagnostics[0].is_error(), "{asked}");
    }
    let warned = runtime
        .compile(&request(json!({"context": "basic", "over_budget": "warn"})))
        .unwrap();
    assert!(warned.value.prompt.contains("You are a careful agent."));
    let over: Vec<_> = warned
        .warnings
        .iter()
        .filter(|w| w.code == "over-budget")
        .collect();
    assert_eq!(over.len(), 1, "{:?}", warned.warnings);
    assert_eq!(over[0].severity, "warning");
    assert!(over[0].message.contains("20"), "{}", over[0].message);

    let refused = failure(AgentRequest::from_json(json!({"over_budget": "ignore"})));
    assert!(
        refused.to_string().contains("`error`") && refused.to_string().contains("`warn`"),
        "{refused}"
    );
}

#[test]
fn a_workspace_with_errors_does_not_load_and_says_where() {
    let workspace = Fixture::minimal()
        .file("components/intro.toml", "id = \"intro\"\nbogus = 1\n")
        .write();
    let failed = failure(Runtime::load(workspace.root()));
    let error = failed.diagnostics.iter().find(|d| d.is_error()).unwrap();
    let at = error.location.as_ref().unwrap();
    assert_eq!(
        (at.file.as_str(), at.line, at.column),
        ("components/intro.toml", 2, 1)
    );
    assert!(
        failed
            .to_string()
            .starts_with("components/intro.toml:2:1: ")
    );

    let empty = tempfile::tempdir().unwrap();
    let not_one = failure(Runtime::load(empty.path()));
    assert_eq!(not_one.diagnostics[0].code, "not-a-workspace");
}

#[test]
fn explain_and_stats_answer_for_the_same_request() {
    let runtime = shipped();
    let basic = request(json!({ "family": "xs", "context": "basic" }));
    let explanation = runtime.explain(&basic).unwrap().value;
    assert_eq!(explanation.family, "xs");
    assert!(explanation.components.iter().any(|item| item.included));
    let stats = runtime.stats(&basic).unwrap().value;
    assert_eq!(stats.family, "xs");
    assert_eq!(stats.context, "basic");
    assert!(stats.tokens > 0 && stats.characters > stats.tokens);
    assert_eq!(stats.tool_definition_tokens, None);
    // A native variant's definitions are counted, and its headroom is what prompt and
    // definitions leave under the budget, as in `promptc stats`.
    let native = request(json!({ "family": "native-next-gen", "context": "basic" }));
    let stats = runtime.stats(&native).unwrap().value;
    let definitions = stats.tool_definition_tokens.unwrap();
    assert!(definitions > 0);
    assert_eq!(
        stats.headroom,
        stats
            .budget
            .map(|budget| budget as i64 - (stats.tokens + definitions) as i64)
    );
    let families = runtime.families();
    assert!(families.iter().any(|listing| listing.family == "gemini"));
}

#[test]
fn shared_results_hold_the_same_parts_only_when_they_are_the_same() {
    let runtime = shipped();
    let basic = request(json!({ "family": "native-next-gen", "context": "basic" }));
    let other = request(json!({
        "family": "native-next-gen",
        "context": { "cwd": "/srv/other", "date": "2026-11-22", "mode": "plan" },
    }));
    let first = runtime.compile_shared(&basic).unwrap().value;
    let second = runtime.compile_shared(&basic).unwrap().value;
    let changed = runtime.compile_shared(&other).unwrap().value;
    let again = runtime.compile_shared(&basic).unwrap().value;

    // A repeat shares every part and holds nothing of its own.
    assert!(first.fresh_bytes > 0);
    assert_eq!(second.prompt.number(), first.prompt.number());
    assert_eq!(second.sections.number(), first.sections.number());
    assert_eq!(second.tools.number(), first.tools.number());
    let definitions = |compiled: &promptc::SharedCompiled| {
        compiled.tool_definitions.as_ref().map(|part| part.number())
    };
    assert!(definitions(&first).is_some());
    assert_eq!(definitions(&second), definitions(&first));
    assert_eq!(second.fresh_bytes, 0);
    // Another context makes another prompt; going back makes a new part again, equal in value.
    assert_ne!(changed.prompt.number(), first.prompt.number());
    assert_ne!(again.prompt.number(), changed.prompt.number());

    // Whatever is shared, each result is what `compile` gives for its request.
    for (shared, request) in [(&first, &basic), (&changed, &other), (&again, &basic)] {
        let alone = runtime.compile(request).unwrap().value;
        assert_eq!(shared.prompt.value(), &alone.prompt);
        assert_eq!(
            serde_json::to_string(shared.sections.value()).unwrap(),
            serde_json::to_string(&alone.sections).unwrap()
        );
        assert_eq!(
            serde_json::to_string(shared.tools.value()).unwrap(),
            serde_json::to_string(&alone.tools).unwrap()
        );
        assert_eq!(shared.inputs.value(), &alone.inputs);
        assert_eq!(
            shared
                .tool_definitions
                .as_ref()
                .map(|part| part.value().to_string()),
            alone.tool_definitions.as_ref().map(Value::to_string)
        );
    }
}

/// One request whose MCP tool schema makes a template build more text than a render may does
/// not fail the requests after it: the same variant compiles again for a context of ordinary
/// size. Before, the template was remembered as exhausted and every later compile of the
/// variant failed with the first request's `too-much-text`.
#[test]
fn a_request_that_runs_out_of_text_does_not_fail_the_next() {
    let runtime = shipped();
    let with_schema = |schema: Value| {
        request(json!({
            "family": "native-next-gen",
            "context": {
                "date": "2026-11-01",
                "mcp_servers": [{ "name": "s", "tools": [{ "name": "t", "input_schema": schema }] }],
            },
        }))
    };
    let small = with_schema(json!({ "type": "object" }));
    let before = runtime.compile(&small).unwrap().value.prompt;
    let properties: serde_json::Map<String, Value> = (0..20_000)
        .map(|i| {
            (
                format!("p{i}"),
                json!({ "type": "string", "description": "x".repeat(1000) }),
            )
        })
        .collect();
    let huge = failure(runtime.compile(&with_schema(
        json!({ "type": "object", "properties": properties }),
    )));
    assert_eq!(huge.diagnostics[0].code, "too-much-text", "{huge}");
    let after = runtime
        .compile(&small)
        .unwrap_or_else(|failure| panic!("{failure}"));
    assert_eq!(after.value.prompt, before);
    // So do explain and stats, which compile the request too.
    runtime
        .stats(&small)
        .unwrap_or_else(|failure| panic!("{failure}"));
}
