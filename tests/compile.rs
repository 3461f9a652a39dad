//! Compiling the fixture workspaces: every expressiveness promise of the format, shown on a
//! real compile, plus golden snapshots of the compiled prompts.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use promptc::Compiled;
use promptc::Workspace;
use promptc::model::PostprocessRule;
use promptc::{Request, Selection};

use common::{compile, fixture_dir};

/// The fixture `tests/fixtures/NAME`, which must have no problems.
fn load(name: &str) -> Workspace {
    common::load(&fixture_dir(name))
}

fn section<'a>(compiled: &'a Compiled, id: &str) -> &'a str {
    &compiled
        .sections
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no section {id}"))
        .text
}

/// `request` compiled by `shared`, a compiler that has compiled other requests before, after
/// checking that it is what a compiler of its own gives (every field, `label` on failure).
fn compiled_as_alone(
    shared: &promptc::Compiler<'_>,
    workspace: &Workspace,
    request: &Request,
    label: &str,
) -> Compiled {
    let compiled = shared.compile(request).unwrap();
    let own = promptc::Compiler::new(workspace).compile(request).unwrap();
    assert_eq!(
        serde_json::to_string(&compiled).unwrap(),
        serde_json::to_string(&own).unwrap(),
        "{label}"
    );
    compiled
}

#[test]
fn golden_prompts_of_the_expressive_fixture() {
    let workspace = load("expressive");
    for family in ["base", "compact"] {
        for context in ["full", "bare"] {
            let compiled = compile(&workspace, family, context);
            insta::with_settings!({
                description => format!(
                    "tests/fixtures/expressive compiled with --family {family} --context {context}"
                ),
                omit_expression => true,
            }, {
                insta::assert_snapshot!(format!("expressive-{family}-{context}"), compiled.prompt);
            });
        }
    }
}

#[test]
fn a_tool_shows_only_when_its_context_flag_holds() {
    let workspace = load("expressive");
    let with_browser = compile(&workspace, "base", "full");
    let without = compile(&workspace, "base", "bare");
    assert!(with_browser.tools.iter().any(|t| t.id == "browser"));
    assert!(with_browser.prompt.contains("Drive a 1280x800 browser."));
    assert!(!without.tools.iter().any(|t| t.id == "browser"));
    assert!(!without.prompt.contains("## browser"));
}

#[test]
fn a_parameter_shows_only_when_the_tools_it_depends_on_are_enabled() {
    let workspace = load("expressive");
    let base = compile(&workspace, "base", "full");
    let compact = compile(&workspace, "compact", "full");
    let shell = |c: &Compiled| {
        c.tools
            .iter()
            .find(|t| t.id == "shell")
            .unwrap()
            .parameters
            .iter()
            .map(|p| p.name.clone())
            .collect::<Vec<_>>()
    };
    // The shared `progress` parameter depends on `todo`, which compact disables.
    assert_eq!(shell(&base), ["command", "timeout", "progress"]);
    assert_eq!(shell(&compact), ["command", "timeout"]);
    assert!(!compact.prompt.contains("<progress>"));
    assert!(!compact.tools.iter().any(|t| t.id == "todo"));
}

#[test]
fn a_section_loops_over_mcp_servers_with_indented_pretty_json() {
    let workspace = load("expressive");
    let compiled = compile(&workspace, "base", "full");
    let mcp = section(&compiled, "mcp");
    let expected = "- forecast: Forecast for a city.\n  Input schema:\n  {\n    \"type\": \"object\",\n    \"properties\": {\n      \"city\": {\n        \"type\": \"string\"\n      },\n      \"days\": {\n        \"type\": \"integer\"\n      }\n    },\n    \"required\": [\n      \"city\"\n    ]\n  }\n- alerts:";
    assert!(mcp.contains(expected), "{mcp}");
    // No servers: the condition is false and the section and its separator disappear.
    let bare = compile(&workspace, "base", "bare");
    assert_eq!(section(&bare, "mcp"), "");
    assert!(!bare.prompt.contains("MCP SERVERS"));
    assert!(!bare.prompt.contains("====\n\n===="));
}

#[test]
fn text_switches_mid_line_on_a_condition() {
    let workspace = load("expressive");
    assert!(
        compile(&workspace, "base", "full")
            .prompt
            .contains("Run commands after the user approves each one; you are in act mode.")
    );
    assert!(
        compile(&workspace, "base", "bare")
            .prompt
            .contains("Run commands without asking; you are in plan mode.")
    );
}

#[test]
fn a_family_override_rearranges_and_drops_tool_use_sub_sections() {
    let workspace = load("expressive");
    let base = section(&compile(&workspace, "base", "full"), "tool_use").to_string();
    let compact = section(&compile(&workspace, "compact", "full"), "tool_use").to_string();
    let (format, list) = (
        base.find("Call a tool").unwrap(),
        base.find("# Tools").unwrap(),
    );
    assert!(format < list);
    assert!(base.contains("# Example"));
    let (format, list) = (
        compact.find("Call a tool").unwrap(),
        compact.find("# Tools").unwrap(),
    );
    assert!(list < format, "compact puts the list first");
    assert!(!compact.contains("# Example"));
}

#[test]
fn a_slot_of_an_unlisted_component_renders_empty() {
    let workspace = load("expressive");
    let compiled = compile(&workspace, "base", "full");
    // base.md has {{ FEEDBACK_SECTION }}; base does not list `feedback` (compact does).
    assert!(!compiled.sections.iter().any(|s| s.id == "feedback"));
    assert!(!compiled.prompt.contains("/feedback"));
    assert!(
        compiled
            .prompt
            .ends_with("act mode.\n\n====\n\nGood luck.\n")
    );
}

#[test]
fn a_family_spec_reuses_the_generic_one_with_one_field_changed() {
    let workspace = load("expressive");
    let base = compile(&workspace, "base", "full");
    let compact = compile(&workspace, "compact", "full");
    let shell = |c: &Compiled| c.tools.iter().find(|t| t.id == "shell").unwrap().clone();
    assert_eq!(shell(&base).description, "Run a command in /bin/zsh.");
    assert_eq!(shell(&base).spec, "generic");
    assert_eq!(shell(&compact).description, "Run a shell command.");
    assert_eq!(shell(&compact).spec, "compact");
    // Everything else comes from the generic spec.
    assert_eq!(
        shell(&compact).parameters[..2]
            .iter()
            .map(|p| (&p.name, &p.instruction))
            .collect::<Vec<_>>(),
        shell(&base).parameters[..2]
            .iter()
            .map(|p| (&p.name, &p.instruction))
            .collect::<Vec<_>>(),
    );
}

#[test]
fn a_shared_parameter_is_defined_once_and_used_by_many_tools() {
    let workspace = load("expressive");
    let compiled = compile(&workspace, "base", "full");
    let users: Vec<&str> = compiled
        .tools
        .iter()
        .filter(|t| t.parameters.iter().any(|p| p.name == "progress"))
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(users, ["shell", "browser", "read"]);
    for tool in &compiled.tools {
        if let Some(p) = tool.parameters.iter().find(|p| p.name == "progress") {
            assert_eq!(p.instruction, "The checklist as it stands now.");
            assert_eq!(p.usage, "- [x] done\n- [ ] next");
        }
    }
}

#[test]
fn template_files_are_used_byte_for_byte() {
    let workspace = load("bytes");
    let compiled = compile_default(&workspace);
    let expected =
        std::fs::read_to_string(fixture_dir("bytes").join("components/bytes.md")).unwrap();
    assert!(expected.starts_with("\n\t") && expected.ends_with("\n\n"));
    assert_eq!(compiled.prompt, expected);
}

fn compile_default(workspace: &Workspace) -> Compiled {
    let request = Request::new(Selection::fallback(), Default::default());
    promptc::Compiler::new(workspace).compile(&request).unwrap()
}

#[test]
fn context_and_placeholder_values_are_data_not_templates() {
    let workspace = load("expressive");
    let compiled = compile(&workspace, "base", "bare");
    assert!(
        compiled
            .prompt
            .ends_with("Literal {{ not_a_variable }} and {% if %} stay as written.\n")
    );
}

#[test]
fn runtime_placeholders_win_and_set_wins_over_the_context() {
    let workspace = load("expressive");
    let mut request = Request::new(
        Selection::family("base"),
        workspace.context("bare").unwrap().clone(),
    );
    request.set.insert("SIGN_OFF".into(), "From --set.".into());
    request.set.insert("AGENT".into(), "Nova".into());
    let compiled = promptc::Compiler::new(&workspace)
        .compile(&request)
        .unwrap();
    assert!(compiled.prompt.starts_with("You are Nova,"));
    assert!(compiled.prompt.ends_with("From --set.\n"));
}

#[test]
fn the_date_comes_from_the_context_or_source_date_epoch() {
    let workspace = load("expressive");
    let mut context = workspace.context("bare").unwrap().clone();
    context.date = None;
    let mut request = Request::new(Selection::family("base"), context);
    let error = promptc::Compiler::new(&workspace)
        .compile(&request)
        .unwrap_err();
    assert!(format!("{error:?}").contains("NoDate"), "{error:?}");
    // As a standard error, for `?` and logs: the problem in words.
    let error: Box<dyn std::error::Error> = Box::new(error);
    let problem = promptc::problem::Problem::NoDate {
        epoch_invalid: false,
    }
    .to_string();
    assert_eq!(error.to_string(), problem);
    request.source_date_epoch = promptc::SourceDateEpoch::At(1_793_491_200);
    let compiled = promptc::Compiler::new(&workspace)
        .compile(&request)
        .unwrap();
    assert!(compiled.prompt.contains("on 2026-11-01."));
}

/// A compiler starts a compile for a request it has seen from what it made for it before: a
/// request that differs in one `--set` value, the date, or one field of the context gets
/// its own prompt, the one a compiler of its own gives it.
#[test]
fn requests_that_differ_in_one_value_get_their_own_prompts_from_one_compiler() {
    let workspace = load("expressive");
    let compiler = promptc::Compiler::new(&workspace);
    let mut context = workspace.context("bare").unwrap().clone();
    context.date = None;
    let base = {
        let mut request = Request::new(Selection::family("base"), context.clone());
        request.source_date_epoch = promptc::SourceDateEpoch::At(1_793_491_200);
        request
    };
    let mut base = base;
    base.set.insert("AGENT".into(), "Orion".into());
    let mut other_set = base.clone();
    other_set.set.insert("AGENT".into(), "Nova".into());
    let mut other_date = base.clone();
    other_date.source_date_epoch = promptc::SourceDateEpoch::At(1_793_491_200 + 86_400);
    let mut other_context = base.clone();
    other_context.context.cwd = "/somewhere/else".into();
    let requests = [&base, &other_set, &other_date, &other_context];
    let mut prompts = Vec::new();
    // Twice over: the second round starts every compile from the first's.
    for request in requests.iter().chain(&requests) {
        let shared = compiler.compile(request).unwrap().prompt;
        let own = promptc::Compiler::new(&workspace)
            .compile(request)
            .unwrap()
            .prompt;
        assert_eq!(shared, own);
        prompts.push(shared);
    }
    let first_round: std::collections::BTreeSet<&String> = prompts[..4].iter().collect();
    assert_eq!(first_round.len(), 4, "each request has a prompt of its own");
    assert!(prompts[0].starts_with("You are Orion,"));
    assert!(prompts[1].starts_with("You are Nova,"));
    assert!(prompts[2].contains("on 2026-11-02."));
    assert!(prompts[3].contains("/somewhere/else"));
}

#[test]
fn inheritance_and_overrides_follow_the_documented_merge_rules() {
    let workspace = load("expressive");
    let compiler = promptc::Compiler::new(&workspace);
    let request = Request::new(Selection::family("compact"), Default::default());
    let (v, chain) = compiler.effective_variant(&request).unwrap();
    assert_eq!(chain, ["compact", "base"]);
    // Lists set by the child replace the parent's; unset ones are inherited.
    assert_eq!(v.components.as_ref().unwrap().len(), 6);
    assert_eq!(
        v.tools.as_ref().unwrap(),
        &["shell", "browser", "todo", "read"]
    );
    // Tables merge key by key.
    assert_eq!(v.placeholders["AGENT"], "Atlas");
    assert_eq!(v.model.temperature, Some(0.3));
    assert_eq!(v.model.max_tokens, Some(2048));
    assert_eq!(v.version.as_deref(), Some("2.0.1"));
    assert_eq!(v.template_file.as_deref(), Some("base.md"));
    // `order = 1` moves mode_line to the front of the rendering order.
    let compiled = compile(&workspace, "compact", "full");
    let order: Vec<&str> = compiled.sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        order,
        [
            "mode_line",
            "intro",
            "tool_format_help",
            "tool_list",
            "tool_use",
            "feedback"
        ]
    );
}

#[test]
fn per_family_component_templates_are_chosen_by_family() {
    let workspace = load("expressive");
    assert_eq!(
        section(&compile(&workspace, "base", "full"), "intro"),
        "You are Atlas, at work in /work/shop on 2026-11-01."
    );
    assert_eq!(
        section(&compile(&workspace, "compact", "full"), "intro"),
        "Atlas. /work/shop."
    );
}

#[test]
fn compiling_is_deterministic() {
    // Independence from the order in which files were created (and so listed) is a property
    // of tests/properties.rs: `outputs_do_not_depend_on_the_order_files_were_created`.
    let workspace = load("expressive");
    let first = compile(&workspace, "base", "full");
    let second = compile(&load("expressive"), "base", "full");
    assert_eq!(first.prompt, second.prompt);
    assert_eq!(
        serde_json::to_string(&first).unwrap(),
        serde_json::to_string(&second).unwrap()
    );
}

#[test]
fn empty_renderings_become_empty_sections() {
    let workspace = load("expressive");
    let compiled = compile(&workspace, "compact", "full");
    // tool_examples is not listed by compact: its slot inside tool_use renders "".
    assert!(!compiled.prompt.contains("# Example"));
    assert!(!compiled.prompt.contains("\n\n\n"));
}

/// A parameter's note joins its tool's description exactly when the parameter is shown, and
/// a tool format can place it with the parameter instead.
#[test]
fn a_parameter_note_follows_its_parameter() {
    let tool = "\
id = \"finish\"
description = \"Report that the task is done.\"

[[parameters]]
name = \"result\"
required = true
instruction = \"What was done.\"

[[parameters]]
name = \"checklist\"
instruction = \"The final state of the checklist.\"
note = \"Include the final checklist in {{ 'your' }} report.\"
when = \"yolo\"
";
    let variant = common::VARIANT.replace("tools = [\"read_file\"]", "tools = [\"finish\"]")
        + "tool_format = \"{{ tool.name }}: {{ tool.description }}{% for p in tool.parameters if p.note %} [{{ p.name }}: {{ p.note }}]{% endfor %}\"\n";
    let fixture = common::Fixture::minimal()
        .remove("tools/read_file.toml")
        .file("tools/finish.toml", tool)
        .file("variants/generic.toml", variant);
    let written = fixture.write();
    let workspace = common::load(written.root());
    let compiler = promptc::Compiler::new(&workspace);
    let mut context = workspace.context("basic").unwrap().clone();
    for (yolo, expected) in [
        (false, "finish: Report that the task is done."),
        (
            true,
            "finish: Report that the task is done.\nInclude the final checklist in your report. \
             [checklist: Include the final checklist in your report.]",
        ),
    ] {
        context.yolo = yolo;
        let request = Request::new(Selection::family("generic"), context.clone());
        let compiled = compiler.compile(&request).unwrap();
        let tool = &compiled.tools[0];
        let shown: Vec<&str> = tool.parameters.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(shown.len(), if yolo { 2 } else { 1 });
        assert!(compiled.prompt.contains(expected), "{}", compiled.prompt);
    }
}

/// Model settings promptc has no field for ride along in `[model.extra]`, merged key by key
/// through `extends` and carried into the JSON output.
#[test]
fn extra_model_settings_are_inherited_and_emitted() {
    let parent = format!(
        "{}\n[model]\ntemperature = 0.2\n\n[model.extra]\nreasoning_effort = \"low\"\nthinking = {{ budget_tokens = 1024 }}\n",
        common::VARIANT
    );
    let child =
        "id = \"deep\"\nextends = \"generic\"\n\n[model.extra]\nreasoning_effort = \"high\"\n";
    let fixture = common::Fixture::minimal()
        .file("variants/generic.toml", parent)
        .file("variants/deep.toml", child);
    let written = fixture.write();
    let workspace = common::load(written.root());
    let compiled = compile(&workspace, "deep", "basic");
    let model = serde_json::to_value(&compiled.model).unwrap();
    assert_eq!(
        model,
        serde_json::json!({
            "temperature": 0.2,
            "extra": { "reasoning_effort": "high", "thinking": { "budget_tokens": 1024 } }
        })
    );
    let json = common::promptc()
        .args([
            "build",
            "--family",
            "deep",
            "--context",
            "basic",
            "--format",
            "json",
        ])
        .current_dir(written.root())
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", common::stderr(&json));
    let output: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(output["model"], model);
}

/// `tests/fixtures/clean-up/expected/CONTEXT.md`: the reference prompt of a context.
fn clean_up_reference(context: &str) -> String {
    std::fs::read_to_string(fixture_dir("clean-up").join(format!("expected/{context}.md"))).unwrap()
}

/// A prompt laid out like a real registry's reference prompts, made with built-in clean-up
/// rules and no regex rule: one blank line around each `====` separator but not around the
/// `====` lines of an example diff (a guard looking before each separator only), a heading
/// whose title is empty dropped, a whitespace-only line of a code block kept, no final newline.
#[test]
fn built_in_clean_up_rules_reproduce_a_reference_prompt() {
    let workspace = load("clean-up");
    let rules = workspace.settings().postprocess.as_deref().unwrap();
    assert!(!rules.is_empty());
    assert!(
        !rules
            .iter()
            .any(|rule| matches!(rule, PostprocessRule::Regex { .. }))
    );
    for context in ["team", "solo"] {
        let prompt = compile(&workspace, "scribe", context).prompt;
        assert_eq!(
            prompt,
            clean_up_reference(context),
            "tests/fixtures/clean-up/expected/{context}.md"
        );
    }
    // What the references hold, said outright.
    let team = clean_up_reference("team");
    let solo = clean_up_reference("solo");
    assert!(!team.ends_with('\n') && !solo.ends_with('\n'));
    assert!(team.contains("\n\n====\n\nEDITING FILES\n\n<<<<<<< SEARCH\nUsage\n====\nRun::"));
    assert!(team.contains("=======\nUsage\n====\nRun::"));
    assert!(team.contains("    shop serve\n    \n    shop test"));
    assert!(team.contains("\n\n## Shop\n\nRun `shop test` before you finish."));
    assert!(solo.ends_with("- Read a file before you replace text in it."));
    assert!(!solo.lines().any(|line| line.trim() == "##"));
}

/// The clean-up fixture with the default rules instead of its own: none of the reference's
/// layout comes by itself.
#[test]
fn the_clean_up_reference_needs_its_rules() {
    let dir = fixture_dir("clean-up");
    let fixture = common::Fixture::from_dir(&dir);
    let manifest = fixture.text("promptc.toml");
    let without_rules = &manifest[..manifest.find("[[postprocess]]").unwrap()];
    let written = fixture.clone().file("promptc.toml", without_rules).write();
    let workspace = common::load(written.root());
    let team = compile(&workspace, "scribe", "team").prompt;
    let solo = compile(&workspace, "scribe", "solo").prompt;
    assert_ne!(team, clean_up_reference("team"));
    assert!(team.ends_with('\n'));
    assert!(team.contains("====\nEDITING FILES"));
    assert!(solo.lines().any(|line| line.trim() == "##"));
}

#[test]
fn one_compiler_serves_more_variants_than_it_keeps_outlines_of() {
    // A compiler keeps the outlines of the variants it used last; forty variants, each with
    // its own tools and sections, compiled in turn and then again in another order, must each
    // give what a compiler of their own gives.
    let mut fixture = common::Fixture::minimal();
    let variants = 40;
    for v in 0..variants {
        fixture = fixture
            .file(
                &format!("tools/tool_{v}.toml"),
                format!("id = \"tool_{v}\"\ndescription = \"Tool number {v}.\"\n"),
            )
            .file(
                &format!("variants/family_{v}.toml"),
                format!(
                    "id = \"family_{v}\"\ntemplate = \"Family {v}.\\n{{{{ INTRO_SECTION }}}}\\n{{{{ TOOLS }}}}\"\n\
                     components = [\"intro\"]\ntools = [\"read_file\", \"tool_{v}\"]\n"
                ),
            );
    }
    let written = fixture.write();
    let workspace = common::load(written.root());
    let context = workspace.context("basic").unwrap().clone();
    let request =
        |v: usize| Request::new(Selection::family(format!("family_{v}")), context.clone());
    let shared = promptc::Compiler::new(&workspace);
    let order = (0..variants).chain((0..variants).rev()).chain(0..variants);
    for v in order {
        let compiled = compiled_as_alone(&shared, &workspace, &request(v), &format!("family_{v}"));
        assert!(compiled.prompt.starts_with(&format!("Family {v}.\n")));
        assert!(compiled.prompt.contains(&format!("Tool number {v}.")));
    }
}

#[test]
fn a_tool_section_is_taken_from_an_earlier_compile_only_when_nothing_it_reads_differs() {
    // One tool's description reads the working folder, another's parameter is there only in
    // plan mode: contexts that differ in either must not share a tool section, and contexts
    // that differ in neither give what a compiler of their own gives.
    let manifest = format!(
        "{}[predicates]\nplan_mode = \"mode == 'plan'\"\n",
        common::MANIFEST
    );
    let fixture = common::Fixture::minimal()
        .file("promptc.toml", manifest)
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\"]\n\
             tools = [\"read_file\", \"list_here\"]\n",
        )
        .file(
            "tools/list_here.toml",
            "id = \"list_here\"\ndescription = \"List the files of {{ cwd }}.\"\n\n\
             [[parameters]]\nname = \"depth\"\ninstruction = \"How deep to look.\"\n\
             when = \"plan_mode\"\n",
        )
        .file(
            "examples/contexts/act.toml",
            "date = \"2026-11-01\"\ncwd = \"/work/one\"\nmode = \"act\"\n",
        )
        .file(
            "examples/contexts/act-elsewhere.toml",
            "date = \"2026-11-01\"\ncwd = \"/work/two\"\nmode = \"act\"\n",
        )
        .file(
            "examples/contexts/plan.toml",
            "date = \"2026-11-01\"\ncwd = \"/work/one\"\nmode = \"plan\"\n",
        )
        .file(
            "examples/contexts/act-later.toml",
            "date = \"2026-12-24\"\ncwd = \"/work/one\"\nmode = \"act\"\n",
        );
    let written = fixture.write();
    let workspace = common::load(written.root());
    let request = |name: &str| {
        Request::new(
            Selection::family("generic"),
            workspace.context(name).unwrap().clone(),
        )
    };
    let shared = promptc::Compiler::new(&workspace);
    let order = [
        "act",
        "act-elsewhere",
        "plan",
        "act-later",
        "act",
        "plan",
        "act-elsewhere",
    ];
    for name in order {
        let compiled = compiled_as_alone(&shared, &workspace, &request(name), name);
        let cwd = if name == "act-elsewhere" {
            "/work/two"
        } else {
            "/work/one"
        };
        assert!(
            compiled
                .prompt
                .contains(&format!("List the files of {cwd}.")),
            "{name}"
        );
        assert_eq!(
            compiled.prompt.contains("How deep to look."),
            name == "plan",
            "{name}"
        );
    }
}

#[test]
fn variants_share_a_tool_section_only_when_their_tools_and_format_resolve_alike() {
    // `alpha` and `beta` see the generic spec of both tools; `gamma` has a spec of its own
    // for `read_file` (another description and parameter); `delta` documents tools with a
    // format of its own. Compiled in turn by one compiler, each variant gives what a compiler
    // of its own gives: a section made for one variant is taken by another only when nothing
    // it holds differs.
    let variant = |id: &str, extra: &str| {
        format!(
            "id = \"{id}\"\ntemplate = \"{{{{ TOOLS }}}}\"\ntools = [\"read_file\", \"list_here\"]\n{extra}"
        )
    };
    let tool = format!(
        "{}\n[families.gamma]\ndescription = \"Read one file, whole.\"\n\
         parameters = [{{ name = \"path\", required = false, instruction = \"Which file.\" }}]\n",
        common::TOOL
    );
    let fixture = common::Fixture::minimal()
        .file("tools/read_file.toml", tool)
        .file(
            "tools/list_here.toml",
            "id = \"list_here\"\ndescription = \"List the files here.\"\n",
        )
        .file("variants/alpha.toml", variant("alpha", ""))
        .file("variants/beta.toml", variant("beta", ""))
        .file("variants/gamma.toml", variant("gamma", ""))
        .file(
            "variants/delta.toml",
            variant(
                "delta",
                "tool_format = \"TOOL {{ tool.name }}: {{ tool.description }}\"\n",
            ),
        );
    let written = fixture.write();
    let workspace = common::load(written.root());
    let context = workspace.context("basic").unwrap().clone();
    let request = |family: &str| Request::new(Selection::family(family), context.clone());
    let shared = promptc::Compiler::new(&workspace);
    let order = ["alpha", "gamma", "delta", "beta", "gamma", "alpha", "delta"];
    for family in order {
        let compiled = compiled_as_alone(&shared, &workspace, &request(family), family);
        assert_eq!(
            compiled.prompt.contains("Read one file, whole."),
            family == "gamma",
            "{family}"
        );
        assert_eq!(
            compiled.prompt.contains("TOOL read_file: Read a file."),
            family == "delta",
            "{family}"
        );
    }
}

#[test]
fn a_tool_text_that_reads_tool_from_the_request_is_not_taken_from_an_earlier_compile() {
    // The tool format is given `tool`; a description that includes the same partial reads
    // `tool` from the request's values instead (a runtime placeholder may set it). A
    // remembered tool section must not stand in for a request that sets it differently.
    let fixture = common::Fixture::minimal()
        .file(
            "partials/mark.md",
            "{% if tool is defined %}[{{ tool }}]{% endif %}",
        )
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\"]\n\
             tools = [\"read_file\"]\n\
             tool_format = \"{% include 'partials/mark.md' %}{{ tool.name }}: {{ tool.description }}\"\n",
        )
        .file(
            "tools/read_file.toml",
            "id = \"read_file\"\ndescription = \"Read a file.{% include 'partials/mark.md' %}\"\n",
        );
    let written = fixture.write();
    let workspace = common::load(written.root());
    let context = workspace.context("basic").unwrap().clone();
    let request = |set: Option<&str>| {
        let mut request = Request::new(Selection::family("generic"), context.clone());
        if let Some(value) = set {
            request.set.insert("tool".into(), value.into());
        }
        request
    };
    let shared = promptc::Compiler::new(&workspace);
    for set in [None, Some("X"), None, Some("Y")] {
        let compiled = compiled_as_alone(&shared, &workspace, &request(set), &format!("{set:?}"));
        let description = &compiled.tools[0].description;
        match set {
            Some(value) => assert_eq!(description, &format!("Read a file.[{value}]")),
            None => assert_eq!(description, "Read a file."),
        }
    }
}

/// A workspace whose `tips` section only `usage` reads, and `usage` switched off by the
/// variant; the base template given.
fn tips_under_a_switched_off_usage(base: &str) -> common::Workspace {
    tips_under_usage(base).write()
}

/// The workspace of [`tips_under_a_switched_off_usage`], not yet written.
fn tips_under_usage(base: &str) -> common::Fixture {
    common::Fixture::from_dir(&fixture_dir(
        "diagnostics/section-read-only-by-a-switched-off-component",
    ))
    .remove("cmd")
    .file("variants/generic.md", base)
    .file("partials/tips_box.md", "{{ TIPS_SECTION }}\n")
}

/// A section whose slot only a switched-off component reads renders into nothing: the compile
/// leaves it out and says why, so that `explain`, the JSON output and `stats` do not count it
/// as in the prompt.
#[test]
fn a_section_only_a_switched_off_component_reads_is_left_out_and_said() {
    let workspace = tips_under_a_switched_off_usage(
        "You are a careful agent.\n\n{{ TOOLS }}\n\n{{ INTRO_SECTION }}\n\n{{ USAGE_SECTION }}\n",
    );
    let loaded = promptc::load_workspace(workspace.root()).unwrap();
    let compiled = common::compile(&loaded.workspace, "generic", "basic");
    let tips = compiled.sections.iter().find(|s| s.id == "tips").unwrap();
    assert!(!tips.included);
    assert_eq!(
        tips.reason.as_deref(),
        Some("its slot is read only by `usage`, which is not in the prompt")
    );
    assert_eq!(tips.text, "");
    assert!(!compiled.prompt.contains("Read before you write."));
    let explain = workspace.run(&["explain", "--family", "generic", "--context", "basic"]);
    assert!(
        explain
            .stdout
            .contains("  - tips: its slot is read only by `usage`, which is not in the prompt"),
        "{}",
        explain.stdout
    );
    let stats = workspace.run(&["stats", "--family", "generic", "--context", "basic"]);
    assert_eq!(stats.code, 0, "{}", stats.stderr);
    assert!(stats.stdout.contains("| intro |"), "{}", stats.stdout);
    assert!(!stats.stdout.contains("| tips |"), "{}", stats.stdout);
}

/// A section whose slot only a component rendered before it reads is read while still empty:
/// left out and said, with the reader named; listed before its reader, it is in the prompt.
#[test]
fn a_section_read_only_before_it_renders_is_left_out_and_said() {
    // The workspace with the variant's components in `order`, and its compile of `basic`.
    let compile = |order: &str| {
        let base = "{{ TOOLS }}\n\n{{ INTRO_SECTION }}\n\n{{ USAGE_SECTION }}\n";
        let workspace = tips_under_usage(base)
            .file(
                "variants/generic.toml",
                format!(
                    "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = {order}\n\
                     tools = [\"read_file\"]\n"
                ),
            )
            .write();
        let loaded = promptc::load_workspace(workspace.root()).unwrap();
        let compiled = common::compile(&loaded.workspace, "generic", "basic");
        (workspace, compiled)
    };
    let tips = |compiled: &Compiled| compiled.sections.iter().find(|s| s.id == "tips").cloned();

    let (workspace, compiled) = compile("[\"intro\", \"usage\", \"tips\"]");
    let left_out = tips(&compiled).unwrap();
    assert!(!left_out.included);
    assert_eq!(
        left_out.reason.as_deref(),
        Some(
            "its slot is read only by `usage`, which renders before it, while the slot is still empty"
        )
    );
    assert!(!compiled.prompt.contains("Read before you write."));
    let stats = workspace.run(&["stats", "--family", "generic", "--context", "basic"]);
    assert_eq!(stats.code, 0, "{}", stats.stderr);
    assert!(stats.stdout.contains("| usage |"), "{}", stats.stdout);
    assert!(!stats.stdout.contains("tips"), "{}", stats.stdout);

    let (_, compiled) = compile("[\"intro\", \"tips\", \"usage\"]");
    let shown = tips(&compiled).unwrap();
    assert!(shown.included, "{:?}", shown.reason);
    assert!(compiled.prompt.contains("Read before you write."));
}

/// A section whose slot the base template writes only under a condition is in the prompt
/// only in the contexts where the condition holds: elsewhere it is left out and said so, by
/// the compile (`stats`, `build --format json`) and by `explain`, whether its reader was
/// rendered afresh or taken from an earlier compile; a sub-section of it with it.
#[test]
fn a_section_its_reader_skips_in_a_context_is_left_out_there() {
    let workspace = tips_under_usage(
        "{{ TOOLS }}\n\n{{ INTRO_SECTION }}\n{% if mode == 'plan' %}\n{{ USAGE_SECTION }}{% endif %}\n",
    )
    .file(
        "variants/generic.toml",
        "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\", \"tips\", \"usage\"]\ntools = [\"read_file\"]\n",
    )
    .file("examples/contexts/plan.toml", "date = \"2026-11-01\"\nmode = \"plan\"\n")
    .write();
    let loaded = promptc::load_workspace(workspace.root()).unwrap();
    let shared = promptc::Compiler::new(&loaded.workspace);
    let skipped = "rendered, but the templates that read its slot did not write it in this context";
    for context in ["plan", "basic", "plan", "basic"] {
        let values = loaded.workspace.context(context).unwrap().clone();
        let request = Request::new(Selection::family("generic"), values);
        let compiled = compiled_as_alone(&shared, &loaded.workspace, &request, context);
        let section = |id: &str| compiled.sections.iter().find(|s| s.id == id).unwrap();
        let in_plan = context == "plan";
        for id in ["usage", "tips"] {
            assert_eq!(section(id).included, in_plan, "{context} {id}");
            assert_eq!(
                section(id).reason.as_deref(),
                (!in_plan).then_some(skipped),
                "{context} {id}"
            );
            assert_eq!(section(id).text.is_empty(), !in_plan, "{context} {id}");
        }
        assert_eq!(compiled.prompt.contains("Read before you write."), in_plan);
        assert!(section("intro").included);
    }
    let explain = workspace.run(&["explain", "--family", "generic", "--context", "basic"]);
    assert!(
        explain.stdout.contains(&format!("  - usage: {skipped}"))
            && explain.stdout.contains(&format!("  - tips: {skipped}")),
        "{}",
        explain.stdout
    );
    let stats = workspace.run(&["stats", "--family", "generic", "--context", "basic"]);
    assert_eq!(stats.code, 0, "{}", stats.stderr);
    assert!(!stats.stdout.contains("usage"), "{}", stats.stdout);
    let stats = workspace.run(&["stats", "--family", "generic", "--context", "plan"]);
    assert!(stats.stdout.contains("| usage |"), "{}", stats.stdout);
}

/// A section in the prompt whose template renders nothing in a context says so, in the JSON
/// sections and in `explain`, where it read "included" with no word of why its text is empty.
#[test]
fn a_section_that_renders_nothing_says_so() {
    let workspace = common::Fixture::minimal()
        .file(
            "components/intro.md",
            "{% if mode == 'plan' %}Plan first.{% endif %}\n",
        )
        .file(
            "examples/contexts/plan.toml",
            "date = \"2026-11-01\"\nmode = \"plan\"\n",
        )
        .write();
    let nothing = "included, but its template rendered nothing in this context";
    for (context, empty) in [("basic", true), ("plan", false)] {
        let run = workspace.run(&["build", "--context", context, "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let intro = json["sections"]
            .as_array()
            .and_then(|sections| sections.iter().find(|s| s["id"] == "intro"))
            .unwrap_or_else(|| panic!("{json}"));
        assert_eq!(intro["included"], true, "{intro}");
        assert_eq!(
            intro["reason"].as_str(),
            empty.then_some(nothing),
            "{intro}"
        );
        let explain = workspace.run(&["explain", "--context", context]);
        assert_eq!(
            explain.stdout.contains(&format!("  + intro: {nothing}")),
            empty,
            "{}",
            explain.stdout
        );
    }
}

/// A section read through a template the base includes is in the prompt, and so is every
/// section when a template names one it uses by a computed name (any slot may be read there).
#[test]
fn a_section_read_through_an_include_or_a_computed_name_stays_in_the_prompt() {
    for base in [
        "{{ INTRO_SECTION }}\n{% include \"partials/tips_box.md\" %}",
        "{{ INTRO_SECTION }}\n{% include \"partials/\" ~ \"tips_box.md\" %}",
    ] {
        let workspace = tips_under_a_switched_off_usage(base);
        let loaded = promptc::load_workspace(workspace.root()).unwrap();
        let compiled = common::compile(&loaded.workspace, "generic", "basic");
        let tips = compiled.sections.iter().find(|s| s.id == "tips").unwrap();
        assert!(tips.included, "{base}: {:?}", tips.reason);
        assert!(compiled.prompt.contains("Read before you write."), "{base}");
    }
}

/// A model version written by `{{ … }}` is its text as read (`4.10`), as `~` and `| string`
/// make it: it was written as JSON, in quotes.
#[test]
fn a_model_version_is_written_as_read() {
    let workspace = common::Fixture::minimal()
        .file(
            "components/intro.md",
            "[{{ 'claude-sonnet-4-5' | model_version }}] [{{ 'x-4.10' | model_version }}] [{{ 'x-4.10' | model_version ~ '' }}] [{{ 'none' | model_version }}]\n",
        )
        .write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("[4] [4.10] [4.10] [0]\n"),
        "{}",
        run.stdout
    );
}

/// A tool listed by a variant that no template in the prompt writes (the section that writes
/// the tools switched off by an override, or left out by its condition) and that goes as no
/// native definition never reaches the model: `explain` says so, where it said "included".
#[test]
fn explain_says_when_no_template_in_the_prompt_writes_the_tools() {
    let variant = |extra: &str| {
        format!(
            "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\", \"tool_list\"]\n\
             tools = [\"read_file\"]\n{extra}"
        )
    };
    let fixture = common::Fixture::minimal()
        .file(
            "variants/generic.md",
            "{{ INTRO_SECTION }}\n\n{{ TOOL_LIST_SECTION }}\n",
        )
        .file(
            "components/tool_list.toml",
            "id = \"tool_list\"\ntemplate = \"{{ TOOLS }}\"\nwhen = \"mode != 'plan'\"\n",
        )
        .file(
            "examples/contexts/plan.toml",
            "date = \"2026-11-01\"\nmode = \"plan\"\n",
        );
    let unseen = "listed, but the model never sees it: no template in this prompt writes the \
                  tools (`TOOLS`, `tools` or `enabled_tools`), and the variant sends no native \
                  tool definitions";
    let switched_off = "\n[overrides.components.tool_list]\nenabled = false\n";
    for (extra, context, seen) in [
        ("", "basic", true),
        ("", "plan", false),
        (switched_off, "basic", false),
        (
            &format!("native_tools = true\n{switched_off}"),
            "basic",
            true,
        ),
    ] {
        let workspace = fixture
            .clone()
            .file("variants/generic.toml", variant(extra))
            .write();
        let explain = workspace.run(&["explain", "--family", "generic", "--context", context]);
        assert_eq!(explain.code, 0, "{extra} {context}: {}", explain.stderr);
        let expected = if seen {
            "  + read_file: included".to_string()
        } else {
            format!("  - read_file: {unseen}")
        };
        assert!(
            explain.stdout.contains(&expected),
            "{extra} {context}: {}",
            explain.stdout
        );
        let parameter = if seen {
            "      + path: included"
        } else {
            "      - path: its tool is not in the prompt"
        };
        assert!(
            explain.stdout.contains(parameter),
            "{extra} {context}: {}",
            explain.stdout
        );
        let json = workspace.run(&[
            "explain",
            "--family",
            "generic",
            "--context",
            context,
            "--format",
            "json",
        ]);
        let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert_eq!(
            json["tools"][0]["included"], seen,
            "{extra} {context}: {json}"
        );
        // The compiled prompt agrees.
        let built = workspace.run(&["build", "--family", "generic", "--context", context]);
        assert_eq!(built.code, 0, "{}", built.stderr);
        assert_eq!(
            built.stdout.contains("read_file"),
            seen && extra.is_empty(),
            "{extra} {context}: {}",
            built.stdout
        );
    }
}

/// A condition that reads no value is told without a dangling "with".
#[test]
fn explain_tells_a_condition_of_no_values_without_a_dangling_with() {
    let workspace = common::Fixture::minimal()
        .file(
            "components/intro.toml",
            "id = \"intro\"\nwhen = \"false\"\n",
        )
        .write();
    let explain = workspace.run(&["explain", "--family", "generic", "--context", "basic"]);
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    assert!(
        explain.stdout.contains("      when `false` is false\n"),
        "{}",
        explain.stdout
    );
}

/// Python's methods in a template ported from Jinja2 render as Python gives them, pass
/// `validate` (a method is no field of what it is called on: `browser.viewport.items` was
/// said to be no field of the context), and a render reused across the contexts of a build
/// is keyed on the value a method reads whole: `extra.get("ticket")` reads `extra`, not a key
/// `get`, so each context gets its own ticket.
#[test]
fn python_methods_render_validate_and_are_read_per_context() {
    let workspace = common::Fixture::minimal()
        .file(
            "components/intro.md",
            "Folder {{ cwd.rstrip('/').split('/')[-1] }}; ticket {{ extra.get('ticket', 'none') }};\
             {% for key, value in browser.viewport.items() %} {{ key }}={{ value }}{% endfor %}\n",
        )
        .file(
            "examples/contexts/basic.toml",
            "date = \"2026-11-01\"\ncwd = \"/work/shop/\"\n",
        )
        .file(
            "examples/contexts/ticketed.toml",
            "date = \"2026-11-01\"\ncwd = \"/work/shop\"\n\n[extra]\nticket = \"T-7\"\n",
        )
        .write();
    let validate = workspace.run(&["validate"]);
    assert_eq!(validate.code, 0, "{}", validate.stderr);
    assert!(!validate.stderr.contains("warning"), "{}", validate.stderr);
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    let prompt = |context: &str| {
        std::fs::read_to_string(
            workspace
                .root()
                .join(format!("examples/prompts/generic/{context}.md")),
        )
        .unwrap()
    };
    assert!(
        prompt("basic").contains("Folder shop; ticket none; width=900 height=600\n"),
        "{}",
        prompt("basic")
    );
    assert!(
        prompt("ticketed").contains("Folder shop; ticket T-7; width=900 height=600\n"),
        "{}",
        prompt("ticketed")
    );
}

/// `[templates] trim_blocks` and `lstrip_blocks` render as Jinja2's options of the same names
/// do: the expected texts are Jinja2 3.1.6's for the same template (`keep_trailing_newline`
/// on, as promptc always has it), each of the four ways. A tag's own `-` trims whatever they
/// say.
#[test]
fn trim_blocks_and_lstrip_blocks_render_as_jinja2_s() {
    const TEMPLATE: &str = "# Tools\n{% for name in [\"read_file\", \"write_file\"] %}\n  {% if name != \"write_file\" %}\n- {{ name }}\n  {% else %}\n- {{ name }} (asks first)\n  {% endif %}\n{% endfor %}\n    {%- if true %}\nkept\n    {% endif -%}\n{# a comment #}\n  {% set x = 1 %}\nend\n";
    for (trim, lstrip, jinja2) in [
        (
            false,
            false,
            "# Tools\n\n  \n- read_file\n  \n\n  \n- write_file (asks first)\n  \n\nkept\n    \n  \nend\n",
        ),
        (
            false,
            true,
            "# Tools\n\n\n- read_file\n\n\n\n- write_file (asks first)\n\n\nkept\n\n\nend\n",
        ),
        (
            true,
            false,
            "# Tools\n  - read_file\n    - write_file (asks first)\n  kept\n      end\n",
        ),
        (
            true,
            true,
            "# Tools\n- read_file\n- write_file (asks first)\nkept\nend\n",
        ),
    ] {
        // No clean-up rules: the prompt is the template's text as it renders.
        let manifest = format!(
            "{}postprocess = []\n[templates]\ntrim_blocks = {trim}\nlstrip_blocks = {lstrip}\n",
            common::MANIFEST
        );
        let workspace = common::Fixture::minimal()
            .file("promptc.toml", manifest)
            .file(
                "variants/generic.toml",
                "id = \"generic\"\ntemplate_file = \"generic.md\"\n",
            )
            .file("variants/generic.md", TEMPLATE)
            .file("tools/read_file.toml", common::TOOL)
            .write();
        let built = workspace.run(&["build", "--family", "generic"]);
        assert_eq!(built.code, 0, "{}", built.stderr);
        assert_eq!(
            built.stdout, jinja2,
            "trim_blocks {trim}, lstrip_blocks {lstrip}"
        );
    }
    // The built-in tool format is written for the defaults, and renders the same either way.
    let tools = |templates: &str| {
        let workspace = common::Fixture::minimal()
            .file("promptc.toml", format!("{}{templates}", common::MANIFEST))
            .file(
                "variants/generic.md",
                "You work.\n\n{{ TOOLS }}\n{{ INTRO_SECTION }}\n",
            )
            .write();
        let built = workspace.run(&["build", "--family", "generic", "--context", "basic"]);
        assert_eq!(built.code, 0, "{}", built.stderr);
        built.stdout
    };
    let plain = tools("");
    assert!(plain.contains("read_file"), "{plain}");
    assert_eq!(
        tools("[templates]\ntrim_blocks = true\nlstrip_blocks = true\n"),
        plain
    );
}
