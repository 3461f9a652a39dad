//! Token accounting: stats agree with an independent tokenizer, budgets fail validate, build
//! and check, and a value that changes per request early in a prompt is a warning.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::path::Path;

use common::{Diag, Fixture};
use sha2::{Digest, Sha256};

fn stats(root: &Path) -> serde_json::Value {
    let output = common::promptc()
        .args(["stats", "--format", "json", "--workspace"])
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn stats_of_the_shipped_library_match_an_independent_tokenizer() {
    let root = &common::repo_root();
    let json = stats(root);
    let rows = json["prompts"].as_array().unwrap();
    let workspace = promptc::load_workspace(root).unwrap().workspace;
    let run = promptc::compile_matrix(&promptc::Compiler::new(&workspace), None);
    assert_eq!(rows.len(), run.outputs.len());
    // tiktoken-rs is a separate implementation of the same o200k encoding.
    let independent = Independent(tiktoken_rs::o200k_base_singleton());
    for ((entry, compiled), row) in run.outputs.iter().zip(rows) {
        assert_eq!(row["family"], entry.family.as_str());
        assert_eq!(row["context"], entry.context.as_str());
        assert_eq!(row["encoding"], "o200k");
        assert_eq!(row["exact"], entry.family == "gpt");
        assert_eq!(
            row["tokens"].as_u64().unwrap() as usize,
            independent.count(&compiled.prompt),
            "{} × {}",
            entry.family,
            entry.context
        );
        assert_eq!(
            row["characters"].as_u64().unwrap() as usize,
            compiled.prompt.chars().count()
        );
        // The native variant's tool definitions, as a request carries them (compact JSON).
        let definitions = compiled
            .tool_definitions
            .as_ref()
            .map(|definitions| serde_json::to_string(definitions).unwrap());
        let definition_tokens = definitions.as_deref().map_or(0, |d| independent.count(d));
        assert_eq!(
            row["tool_definition_tokens"].as_u64(),
            definitions.as_ref().map(|_| definition_tokens as u64),
            "{} × {}",
            entry.family,
            entry.context
        );
        // Every shipped variant has a budget; headroom is what is left under it by the prompt
        // and its tool definitions.
        let budget = match entry.family.as_str() {
            "native-next-gen" => 8000,
            "xs" => 2000,
            _ => 9000,
        };
        assert_eq!(row["budget"], budget);
        assert_eq!(
            row["headroom"].as_i64().unwrap(),
            budget - row["tokens"].as_i64().unwrap() - definition_tokens as i64
        );
        // The shipped tool definitions stay the same from one request to the next: they begin
        // the stable prefix, before the prompt's part of it.
        let prefix = &row["stable_prefix"];
        assert_eq!(
            prefix["tool_definitions_stable"].as_bool(),
            definitions.as_ref().map(|_| true)
        );
        let bytes = prefix["bytes"].as_u64().unwrap() as usize;
        let text = &compiled.prompt[..bytes];
        assert_eq!(
            prefix["tokens"].as_u64().unwrap() as usize,
            definition_tokens + independent.count(text)
        );
        let hashed = match &definitions {
            Some(definitions) => format!("{definitions}\n{text}"),
            None => text.to_string(),
        };
        assert_eq!(prefix["sha256"], sha256(&hashed));
        // The share shown beside the prefix's tokens is of the tokens sent (it was of the
        // bytes, which read as a share of tokens it was not).
        let sent = definition_tokens + row["tokens"].as_u64().unwrap() as usize;
        assert_eq!(
            prefix["percent"].as_u64().unwrap() as usize,
            prefix["tokens"].as_u64().unwrap() as usize * 100 / sent,
            "{row}"
        );
        // The shipped library keeps the date, directory and mode near the end, past the
        // manifest's 50% threshold.
        assert!(prefix["percent"].as_u64().unwrap() >= 50, "{row}");
    }
}

// `stats --family` listed each section's tokens as `[name, count]` pairs, a section inside
// another (`tool_list` in `tool_use`) counted as if beside it: the rows added up to nearly
// twice the prompt. Each row now names the section it is inside, and an estimate is marked.
#[test]
fn per_section_counts_say_which_section_holds_which() {
    let root = common::repo_root();
    let output = common::promptc()
        .args([
            "stats",
            "--family",
            "next-gen",
            "--format",
            "json",
            "--workspace",
        ])
        .arg(&root)
        .output()
        .unwrap();
    assert!(output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let prompt = &json["prompts"][0];
    let sections = prompt["sections"].as_array().unwrap();
    let find = |id: &str| sections.iter().find(|s| s["id"] == id).unwrap();
    assert_eq!(find("tool_list")["inside"], "tool_use");
    assert!(find("tool_use").get("inside").is_none());
    // Counted once each, the sections in their own right add up to at most the prompt.
    let top: u64 = sections
        .iter()
        .filter(|s| s.get("inside").is_none())
        .map(|s| s["tokens"].as_u64().unwrap())
        .sum();
    assert!(
        top <= prompt["tokens"].as_u64().unwrap(),
        "{top} > {}",
        prompt["tokens"]
    );

    let output = common::promptc()
        .args(["stats", "--family", "next-gen", "--workspace"])
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("| tool_list "))
        .unwrap();
    assert!(row.starts_with("| tool_list (in tool_use) | ≈ "), "{row}");

    // A section shown by a partial the other's template includes is inside it too.
    let workspace = Fixture::minimal()
        .file(
            "components/rules.toml",
            "id = \"rules\"\ndescription = \"Rules.\"\n",
        )
        .file("components/rules.md", "Keep it short.\n")
        .file(
            "components/intro.md",
            "Intro.\n{% include 'partials/more.md' %}",
        )
        .file("partials/more.md", "{{ RULES_SECTION }}\n")
        .file(
            "variants/generic.toml",
            common::VARIANT.replace(
                "components = [\"intro\"]",
                "components = [\"rules\", \"intro\"]",
            ),
        )
        .file(
            "variants/generic.md",
            "{{ INTRO_SECTION }}\n\n{{ TOOLS }}\n",
        )
        .write();
    let output = common::promptc()
        .args([
            "stats",
            "--family",
            "generic",
            "--format",
            "json",
            "--workspace",
        ])
        .arg(workspace.root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let sections = json["prompts"][0]["sections"].as_array().unwrap();
    let rules = sections.iter().find(|s| s["id"] == "rules").unwrap();
    assert_eq!(rules["inside"], "intro", "{sections:?}");
}

#[test]
fn the_stable_prefix_ends_where_the_first_volatile_value_starts() {
    // intro (with the working directory) before the tools: the prefix is the first line.
    let fixture = Fixture::minimal().file(
        "variants/generic.md",
        "You are a careful agent.\n\n{{ INTRO_SECTION }}\n\n{{ TOOLS }}\n",
    );
    let workspace = fixture.write();
    let json = stats(workspace.root());
    let prefix = &json["prompts"][0]["stable_prefix"];
    // The context sets no cwd: the intro reads "You work in  on 2026-11-01.", and the probe's
    // directory differs from "" right after "You work in ".
    let expected = "You are a careful agent.\n\nYou work in ";
    assert_eq!(prefix["bytes"].as_u64().unwrap() as usize, expected.len());
    assert_eq!(prefix["sha256"], sha256(expected));
    assert_eq!(prefix["section"], "intro");
}

// `tokens.volatile` listed a table of the context (`extra`): the probe set a text in its
// place, templates reading `extra.team` failed on it, and the stable prefix went unchecked
// without a word; a path (`extra.team`) was refused. A table, or a path into one, now
// changes every value under it, and a path that does not exist is refused with the near one.
#[test]
fn a_volatile_table_or_path_of_the_context_changes_what_it_holds() {
    let template =
        "Team {{ extra.team }}, on {{ model.id }}.\n\n{{ INTRO_SECTION }}\n\n{{ TOOLS }}\n";
    let with_volatile = |volatile: &str| {
        Fixture::minimal()
            .file(
                "promptc.toml",
                format!(
                    "{}[context_fields]\nteam = {{ type = \"string\" }}\n\
                     [tokens]\nvolatile = [{volatile}]\n",
                    common::MANIFEST
                ),
            )
            .file("variants/generic.md", template)
            .write()
    };
    for (volatile, before, read) in [
        ("\"extra\"", "Team ", "extra.team"),
        ("\"extra.team\"", "Team ", "extra.team"),
        ("\"model.id\"", ", on ", "model.id"),
    ] {
        let workspace = with_volatile(volatile);
        let prompt = promptc_prompt(workspace.root());
        let expected = &prompt[..prompt.find(before).unwrap() + before.len()];
        let json = stats(workspace.root());
        let prefix = &json["prompts"][0]["stable_prefix"];
        assert_eq!(
            prefix["bytes"].as_u64(),
            Some(expected.len() as u64),
            "{volatile}: {prefix}"
        );
        // And `validate` points at the name the template reads.
        let report = workspace.validate();
        let warning = report.single();
        assert_eq!(
            (warning.code.as_str(), warning.file.as_str(), warning.line),
            ("volatile-early", "variants/generic.md", 1),
            "{volatile}"
        );
        let column = template.find(&format!("{{{{ {read}")).unwrap() + 4;
        assert_eq!(warning.column, column as u64, "{volatile}");
    }
    let misspelt = with_volatile("\"extra.teem\"").validate();
    // A path into the context that leads nowhere is an unknown field of the context, not a
    // placeholder to define.
    let error = misspelt.single();
    assert_eq!(error.code, "unknown-context-field");
    assert!(error.message.contains("`extra.teem`"), "{}", error.message);
    assert_eq!(misspelt.help(0), Some("did you mean `extra.team`?"));

    // Into a list: each item's value changes (a server's name; its status, one of a few
    // words, becomes another of them); a field no item has is refused.
    let with_servers = |volatile: &str| {
        Fixture::minimal()
            .file(
                "promptc.toml",
                format!("{}[tokens]\nvolatile = [{volatile}]\n", common::MANIFEST),
            )
            .file(
                "examples/contexts/basic.toml",
                "date = \"2026-11-01\"\n[[mcp_servers]]\nname = \"tracker\"\n",
            )
            .file(
                "variants/generic.md",
                "Servers: {% for s in connected_mcp_servers %}{{ s.name }}{% endfor %}.\n\n{{ INTRO_SECTION }}\n\n{{ TOOLS }}\n",
            )
            .write()
    };
    for volatile in [
        "\"mcp_servers.name\"",
        "\"mcp_servers.status\"",
        "\"mcp_servers\"",
    ] {
        let workspace = with_servers(volatile);
        let json = stats(workspace.root());
        let prefix = &json["prompts"][0]["stable_prefix"];
        assert_eq!(
            prefix["bytes"].as_u64(),
            Some("Servers: ".len() as u64),
            "{volatile}: {prefix}"
        );
    }
    let wrong = with_servers("\"mcp_servers.nam\"").validate();
    assert_eq!(wrong.single().code, "unknown-context-field");
    assert_eq!(wrong.help(0), Some("did you mean `mcp_servers.name`?"));
}

// A native variant's tool definitions are sent before its prompt, and a provider's cache
// takes them first: a tool text that reads the working directory changes them per request,
// and nothing of the request is cacheable, however stable the prompt. Checked on the prompt
// alone, this was silent.
#[test]
fn tool_definitions_that_change_per_request_leave_no_stable_prefix() {
    let variant = "id = \"generic\"\ntemplate = \"You are a careful agent, who reads before writing.\"\ntools = [\"read_file\"]\nnative_tools = true\n";
    let fixture = Fixture::minimal()
        .file("variants/generic.toml", variant)
        .remove("components/intro.toml")
        .remove("components/intro.md")
        .file(
            "tools/read_file.toml",
            "id = \"read_file\"\ndescription = \"Read a file under {{ cwd }}.\"\n",
        );
    let report = fixture.validate();
    assert_eq!(report.code, 0, "a warning does not fail validation");
    // The description's `cwd` is at 2:37.
    assert_eq!(
        report.single(),
        Diag::warning(
            "volatile-early",
            "tools/read_file.toml",
            2,
            37,
            "generic × basic: a value that changes per request (cwd) changes the native tool definitions, which are sent before the prompt; nothing of the request can be served from a prompt cache"
        )
    );
    let json = stats(fixture.write().root());
    let prefix = &json["prompts"][0]["stable_prefix"];
    assert_eq!(prefix["tool_definitions_stable"], false);
    assert_eq!(
        (&prefix["tokens"], &prefix["percent"]),
        (&0.into(), &0.into())
    );

    // Definitions that do not read it are the start of the stable prefix.
    let stable = fixture.file(
        "tools/read_file.toml",
        "id = \"read_file\"\ndescription = \"Read a file.\"\n",
    );
    assert_eq!(stable.validate().diagnostics(), vec![]);
    let json = stats(stable.write().root());
    let prefix = &json["prompts"][0]["stable_prefix"];
    assert_eq!(prefix["tool_definitions_stable"], true);
    assert_eq!(prefix["percent"], 100);
}

// A parameter shown in one mode only shifts the parameters after it: the blame went to the
// next parameter's instruction, the same in both compiles, with the wrong values named. It
// goes to the `when` that reads the value, naming it.
#[test]
fn a_parameter_shown_in_one_mode_is_blamed_at_its_when_not_the_next_one() {
    let fixture = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate = \"You are a careful agent, who reads before writing.\"\ntools = [\"read_file\"]\nnative_tools = true\n",
        )
        .remove("components/intro.toml")
        .remove("components/intro.md")
        .file(
            "tools/read_file.toml",
            "id = \"read_file\"\ndescription = \"Read a file.\"\n\n[[parameters]]\nname = \"why\"\nwhen = \"mode == 'plan'\"\ninstruction = \"Why you read it.\"\n\n[[parameters]]\nname = \"path\"\ninstruction = \"The file to read.\"\n",
        );
    let diagnostic = fixture.validate().single();
    assert_eq!(
        (
            diagnostic.code.as_str(),
            diagnostic.file.as_str(),
            diagnostic.line,
            diagnostic.column
        ),
        ("volatile-early", "tools/read_file.toml", 6, 8),
        "{diagnostic:?}"
    );
    assert!(
        diagnostic.message.to_lowercase().contains("(mode)"),
        "{}",
        diagnostic.message
    );
}

// A context's MCP servers add tools to the definitions. They are a session's settings, not
// volatile by default: the definitions stay in the stable prefix. A workspace whose agents
// change them per request lists them, and the definitions are then volatile, said at that list.
#[test]
fn mcp_servers_make_the_definitions_volatile_only_when_listed() {
    let fixture = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate = \"You are a careful agent, who reads before writing.\"\ntools = [\"read_file\"]\nnative_tools = true\n",
        )
        .remove("components/intro.toml")
        .remove("components/intro.md")
        .file(
            "examples/contexts/basic.toml",
            "date = \"2026-11-01\"\n\n[[mcp_servers]]\nname = \"maps\"\ncommand = \"maps-mcp\"\n\n[[mcp_servers.tools]]\nname = \"geocode\"\ndescription = \"Find a place.\"\n",
        );
    assert_eq!(fixture.validate().diagnostics(), vec![]);
    let listed = fixture.file(
        "promptc.toml",
        format!(
            "{}[tokens]\nvolatile = [\"CURRENT_DATE\", \"cwd\", \"mode\", \"mcp_servers.name\"]\n",
            common::MANIFEST
        ),
    );
    let diagnostic = listed.validate().single();
    assert_eq!(diagnostic.code, "volatile-early");
    assert_eq!(diagnostic.file, "promptc.toml");
    assert!(
        diagnostic
            .message
            .contains("changes the native tool definitions, which are sent before the prompt"),
        "{}",
        diagnostic.message
    );
    let json = stats(listed.write().root());
    assert_eq!(
        json["prompts"][0]["stable_prefix"]["tool_definitions_stable"],
        false
    );
}

#[test]
fn a_volatile_value_early_in_the_prompt_is_a_warning() {
    let early = Fixture::minimal().file(
        "variants/generic.md",
        "You are a careful agent.\n\n{{ INTRO_SECTION }}\n\n{{ TOOLS }}\n",
    );
    let report = early.validate();
    assert_eq!(report.code, 0, "a warning does not fail validation");
    // The stable prefix is "You are a careful agent.\n\nYou work in " (38 bytes).
    let prompt = promptc_prompt(early.write().root());
    let percent = 38 * 100 / prompt.len();
    // components/intro.md is "You work in {{ cwd }} on {{ CURRENT_DATE }}.": `cwd` at 1:16.
    assert_eq!(
        report.single(),
        Diag::warning(
            "volatile-early",
            "components/intro.md",
            1,
            16,
            &format!(
                "generic × basic: a value that changes per request (cwd) appears {percent}% into the prompt, in section `intro`; only the text before it can be served from a prompt cache"
            )
        )
    );

    // The threshold is the manifest's; 0 turns the warning off.
    let off = early.clone().file(
        "promptc.toml",
        format!("{}[tokens]\nstable_prefix_percent = 0\n", common::MANIFEST),
    );
    assert_eq!(off.validate().diagnostics(), vec![]);

    // Anything can be marked volatile: here a runtime placeholder at the very start.
    let session = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[tokens]\nvolatile = [\"SESSION\"]\n", common::MANIFEST),
        )
        .file(
            "variants/generic.toml",
            format!("{}\n[placeholders]\nSESSION = \"s-1\"\n", common::VARIANT),
        )
        .file(
            "variants/generic.md",
            format!("Session {{{{ SESSION }}}}.\n{}", common::BASE_TEMPLATE),
        );
    let report = session.validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "volatile-early");
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line, diagnostic.column),
        ("variants/generic.md", 1, 12)
    );
    // The prefix is "Session " (8 bytes): the value differs from its first character on.
    let percent = 8 * 100 / promptc_prompt(session.write().root()).len();
    assert!(
        diagnostic
            .message
            .contains(&format!("(SESSION) appears {percent}% into the prompt;")),
        "{}",
        diagnostic.message
    );
}

// A count taken from the cache was told and sorted as it was, where one counted afresh
// stopped at the cap: the report changed with what had been counted before.
#[test]
fn an_over_budget_report_is_the_same_with_counts_cached() {
    let workspace = Fixture::empty().write();
    let init = workspace.run(&["init", "-q", "."]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    let variant = workspace.root().join("variants/generic.toml");
    let toml = std::fs::read_to_string(&variant).unwrap();
    std::fs::write(
        &variant,
        toml.replace("max_prompt_tokens = 9000\n", "max_prompt_tokens = 100\n"),
    )
    .unwrap();
    let fresh = workspace.run(&["validate"]);
    assert_eq!(fresh.code, 1, "{}", fresh.stderr);
    assert!(fresh.stderr.contains("over ≈1200"), "{}", fresh.stderr);
    // `stats` counts every prompt whole, and the cache keeps the counts.
    let stats = workspace.run(&["stats"]);
    assert_eq!(stats.code, 0, "{}", stats.stderr);
    let cached = workspace.run(&["validate"]);
    assert_eq!(cached.stderr, fresh.stderr);
}

// A prompt of megabytes over a budget of thousands was counted to its end in every compile
// (a third of a second each): counting stops past twice the budget plus 1,000, and the
// count is told as over that.
#[test]
fn a_prompt_far_over_its_budget_is_counted_only_past_the_cap() {
    let words: String = (0..20_000).map(|i| format!("word{} ", i % 50)).collect();
    let report = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!("{}max_prompt_tokens = 10\n", common::VARIANT),
        )
        .file(
            "components/intro.toml",
            format!("id = \"intro\"\ntemplate = \"Intro.\\n{words}\"\n"),
        )
        .validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "over-budget");
    assert!(
        diagnostic.message.starts_with(
            "generic is over its budget of 10 tokens (o200k) in 1 context: basic over ≈1020; largest sections in basic: intro over ≈1020"
        ),
        "{}",
        diagnostic.message
    );
}

#[test]
fn a_prompt_over_its_budget_fails_validate_build_and_check() {
    let fixture = Fixture::minimal().file(
        "variants/generic.toml",
        format!("{}max_prompt_tokens = 10\n", common::VARIANT),
    );
    let report = fixture.validate();
    assert_eq!(report.code, 1);
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "over-budget");
    // VARIANT is 4 lines; `max_prompt_tokens = 10` is line 5, its value at column 21.
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line, diagnostic.column),
        ("variants/generic.toml", 5, 21)
    );
    let workspace = fixture.write();
    let run = workspace.run(&["build", "--context", "basic"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "", "nothing is printed over budget");
    let message = &diagnostic.message;
    // Counted with o200k, which is not declared the family's own tokenizer: an estimate.
    let tokens: usize = message
        .split(" in 1 context: basic ≈")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap()
        .parse()
        .unwrap();
    let prompt = promptc_prompt(workspace.root());
    assert_eq!(
        tokens,
        Independent(tiktoken_rs::o200k_base_singleton()).count(&prompt)
    );
    assert!(
        message.starts_with(&format!(
            "generic is over its budget of 10 tokens (o200k) in 1 context: basic ≈{tokens}; largest sections in basic: intro ≈"
        )),
        "{message}"
    );
    assert!(run.stderr.contains("error[over-budget]"), "{}", run.stderr);

    let all = workspace.run(&["build", "--all"]);
    assert_eq!(all.code, 1);
    assert!(all.stderr.contains("nothing was written"), "{}", all.stderr);
    assert!(!workspace.root().join("examples/prompts").exists());
    let checked = workspace.run(&["check"]);
    assert_eq!(checked.code, 1);
    assert!(
        checked.stderr.contains("error[over-budget]"),
        "{}",
        checked.stderr
    );
}

/// The compiled prompt of the basic context, and its tool definitions as a request carries
/// them (compact JSON).
fn prompt_and_definitions(root: &Path) -> (String, String) {
    let workspace = promptc::load_workspace(root).unwrap().workspace;
    let context = workspace.context("basic").unwrap().clone();
    let request = promptc::Request::new(promptc::Selection::fallback(), context);
    let compiled = promptc::Compiler::new(&workspace)
        .compile(&request)
        .unwrap();
    let definitions = serde_json::to_string(compiled.tool_definitions.as_ref().unwrap()).unwrap();
    (compiled.prompt, definitions)
}

// A native variant's budget counted its prompt alone: the tool definitions sent with every
// request (here most of what it costs) went unseen. The budget counts both, the error says
// how much is which, and `stats` shows the definitions and takes them from the headroom.
#[test]
fn a_native_variant_s_budget_counts_its_tool_definitions() {
    // Within the 1,024 characters the openai dialect takes for a description.
    let words: String = (0..100).map(|i| format!("detail{} ", i % 30)).collect();
    let variant = |budget: usize| {
        format!(
            "id = \"generic\"\ntemplate = \"You are a careful agent.\\n\\n{{{{ INTRO_SECTION }}}}\"\ncomponents = [\"intro\"]\ntools = [\"read_file\"]\nnative_tools = true\nmax_prompt_tokens = {budget}\n"
        )
    };
    let fixture = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            format!(
                "id = \"read_file\"\ndescription = \"Read a file. {words}\"\n\n[[parameters]]\nname = \"path\"\nrequired = true\ninstruction = \"The file to read.\"\n"
            ),
        )
        .file("variants/generic.toml", variant(100));
    let workspace = fixture.write();
    let (prompt, definitions) = prompt_and_definitions(workspace.root());
    let o200k = Independent(tiktoken_rs::o200k_base_singleton());
    let (prompt_tokens, definition_tokens) = (o200k.count(&prompt), o200k.count(&definitions));
    // The prompt alone is within the budget; with its definitions, over it.
    assert!(prompt_tokens < 100 && prompt_tokens + definition_tokens > 100);
    let diagnostic = fixture.validate().single();
    assert_eq!(diagnostic.code, "over-budget");
    assert!(
        diagnostic.message.starts_with(&format!(
            "generic is over its budget of 100 tokens (o200k) in 1 context: basic ≈{} (prompt ≈{prompt_tokens}, tool definitions ≈{definition_tokens}); largest sections in basic: ",
            prompt_tokens + definition_tokens
        )),
        "{}",
        diagnostic.message
    );
    // `build` of the one request says the same, and what to shorten.
    let built = workspace.run(&["build", "--context", "basic"]);
    assert_eq!(built.code, 1);
    assert!(
        built
            .stderr
            .contains("help: shorten the prompt or the tools' texts"),
        "{}",
        built.stderr
    );
    assert!(
        built
            .stderr
            .contains(&format!("tool definitions ≈{definition_tokens})")),
        "{}",
        built.stderr
    );

    // Within a budget that holds both: stats shows the definitions, and what is left.
    std::fs::write(
        workspace.root().join("variants/generic.toml"),
        variant(1000),
    )
    .unwrap();
    let json = stats(workspace.root());
    let row = &json["prompts"][0];
    assert_eq!(row["tokens"], prompt_tokens);
    assert_eq!(row["tool_definition_tokens"], definition_tokens);
    assert_eq!(
        row["headroom"].as_i64().unwrap(),
        1000 - (prompt_tokens + definition_tokens) as i64
    );
    let text = workspace.run(&["stats", "--family", "generic"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout.contains(&format!(
            "| generic | basic | ≈ {prompt_tokens} (o200k) | ≈ {definition_tokens} | 1000 | ≈ {} |",
            1000 - prompt_tokens - definition_tokens
        )),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains(&format!(
            "| (tool definitions, beside the prompt) | ≈ {definition_tokens} |"
        )),
        "{}",
        text.stdout
    );
}

/// Several contexts over one budget are one error, worst first; a section inside another
/// (its slot read by the other's template) is not counted twice among the largest.
#[test]
fn an_over_budget_family_is_one_error_naming_top_level_sections() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[tokens]\nexact = [\"generic\"]\n", common::MANIFEST),
        )
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate = \"{{ OUTER_SECTION }}\\n{{ INTRO_SECTION }}\"\ncomponents = [\"inner\", \"outer\", \"intro\"]\nmax_prompt_tokens = 20\n",
        )
        .file(
            "components/inner.toml",
            "id = \"inner\"\ntemplate = \"Inner words that take up a good number of tokens, one after another, on and on.\"\n",
        )
        .file(
            "components/outer.toml",
            "id = \"outer\"\ntemplate = \"Outer: {{ INNER_SECTION }}\"\n",
        )
        .file("examples/contexts/long.toml", "date = \"2026-11-01\"\ncwd = \"/a/much/longer/working/directory/than/the/other/one\"\n")
        .remove("tools/read_file.toml")
        .validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "over-budget");
    let message = &diagnostic.message;
    assert!(
        message.starts_with("generic is over its budget of 20 tokens (o200k) in 2 contexts: long "),
        "{message}"
    );
    let sections = message.split("largest sections in long: ").nth(1).unwrap();
    let named: Vec<&str> = sections
        .split(", ")
        .map(|part| part.split(' ').next().unwrap())
        .collect();
    // `inner` is inside `outer`: only the top-level sections are named, and they add up to
    // the total.
    assert_eq!(named, ["intro", "outer"], "{message}");
    let total: usize = message
        .split(" in 2 contexts: long ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .unwrap()
        .parse()
        .unwrap();
    let counts: usize = sections
        .split(", ")
        .map(|part| part.split(' ').nth(1).unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(counts, total, "{message}");
    assert!(
        !message.contains('≈'),
        "an exact family's counts are not estimates: {message}"
    );
}

#[test]
fn the_manifest_budget_applies_to_variants_without_their_own() {
    let fixture = Fixture::minimal().file(
        "promptc.toml",
        format!("{}[tokens]\nmax_prompt_tokens = 5\n", common::MANIFEST),
    );
    let diagnostic = fixture.validate().single();
    assert_eq!(diagnostic.code, "over-budget");
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line),
        ("promptc.toml", 4)
    );
    // A variant's own budget replaces it.
    let fixture = fixture.file(
        "variants/generic.toml",
        format!("{}max_prompt_tokens = 1000\n", common::VARIANT),
    );
    assert_eq!(fixture.validate().diagnostics(), vec![]);
}

/// The prompt `promptc build` prints when within budget.
/// The same finding in several outputs is one warning that lists them, at the earliest
/// position among them.
#[test]
fn a_volatile_value_shared_by_outputs_is_one_warning() {
    let early = Fixture::minimal()
        .file(
            "variants/generic.md",
            "You are a careful agent.\n\n{{ INTRO_SECTION }}\n\n{{ TOOLS }}\n",
        )
        .file("examples/contexts/second.toml", common::CONTEXT);
    let report = early.validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "volatile-early");
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line, diagnostic.column),
        ("components/intro.md", 1, 16)
    );
    assert!(
        diagnostic.message.starts_with(
            "generic × basic, generic × second: a value that changes per request \
             (cwd) appears as early as "
        ),
        "{}",
        diagnostic.message
    );
}

/// A value a tool's text holds is pointed at in the tool spec, not at the `{{ TOOLS }}` of the
/// base template that lists the tools.
#[test]
fn a_volatile_value_in_a_tool_text_points_at_the_tool() {
    let tool = common::TOOL.replace(
        "description = \"Read a file.\"",
        "description = \"Read a file under {{ cwd }}.\"",
    );
    let report = Fixture::minimal()
        .file("tools/read_file.toml", tool)
        .validate();
    let diagnostic = report.single();
    assert_eq!(diagnostic.code, "volatile-early");
    // `description = "Read a file under {{ cwd }}."`: the text starts at column 16 and `cwd`
    // 21 characters later, at column 37 of line 2.
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line, diagnostic.column),
        ("tools/read_file.toml", 2, 37)
    );
    assert!(
        !diagnostic.message.contains("in section"),
        "{}",
        diagnostic.message
    );
}

// Where a volatile value early in the prompt was said to be: the base template when a
// clean-up rule rewrote the changed line (no section was recognised in it), the component
// that shows the tools when the value sat in a tool's text, and the component's template
// when a condition on the value took the section in or out. Each now points at the value.
#[test]
fn a_volatile_value_is_placed_where_it_is_read_whatever_shows_it() {
    let stable = "Most of the prompt: a stable text that a prompt cache can serve. ".repeat(8);
    // A clean-up rule rewrites the line that holds the value.
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}[[postprocess]]\nrule = \"regex\"\npattern = \"TODO\"\nreplace = \"to-do\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "components/intro.md",
            "You work in {{ cwd }}. TODO: be brief.\n",
        )
        .file(
            "variants/generic.md",
            format!("{{{{ INTRO_SECTION }}}}\n\n{stable}\n\n{{{{ TOOLS }}}}\n"),
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
        ("volatile-early", "components/intro.md", 1, 16),
        "{found:?}"
    );
    // A partial the component includes reads the value.
    let report = Fixture::minimal()
        .file("partials/where.md", "Your folder:\n{{ cwd }}\n")
        .file(
            "components/intro.md",
            "Work with care.\n{% include \"partials/where.md\" %}\n",
        )
        .file(
            "variants/generic.md",
            format!("{{{{ INTRO_SECTION }}}}\n\n{stable}\n\n{{{{ TOOLS }}}}\n"),
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
        ("volatile-early", "partials/where.md", 2, 4),
        "{found:?}"
    );
    // The tools shown by a component, one of them reading the value.
    let report = Fixture::minimal()
        .file(
            "tools/read_file.toml",
            common::TOOL.replace(
                "description = \"Read a file.\"",
                "description = \"Read a file under {{ cwd }}.\"",
            ),
        )
        .file("components/intro.md", "{{ TOOLS }}\n")
        .file(
            "variants/generic.md",
            format!("{{{{ INTRO_SECTION }}}}\n\n{stable}\n"),
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
        ("volatile-early", "tools/read_file.toml", 2, 37),
        "{found:?}"
    );
    // A section taken in or out by a condition on the mode.
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            format!("{}when = \"mode == 'act'\"\n", common::COMPONENT),
        )
        .file("components/intro.md", "You may edit files.\n")
        .file(
            "variants/generic.md",
            format!("{{{{ INTRO_SECTION }}}}\n\n{stable}\n\n{{{{ TOOLS }}}}\n"),
        )
        .validate();
    let found = report.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str(), found.line),
        ("volatile-early", "components/intro.toml", 3),
        "{found:?}"
    );
    assert!(
        found.message.contains("in section `intro`"),
        "{}",
        found.message
    );
    // A section that reads the mode through a predicate, beside a tool whose text reads the
    // working directory but that the section does not show (the base shows the tools last):
    // placed at the predicate in the section, not at the tool, whose text is not there.
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}[predicates]\nplan_mode = \"mode == 'plan'\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "tools/read_file.toml",
            common::TOOL.replace(
                "description = \"Read a file.\"",
                "description = \"Read a file under {{ cwd }}.\"",
            ),
        )
        .file(
            "components/intro.md",
            "You are an agent.{% if plan_mode %} Plan only.{% else %} Act.{% endif %}\n",
        )
        .file(
            "variants/generic.md",
            format!("{{{{ INTRO_SECTION }}}}\n\n{stable}\n\n{{{{ TOOLS }}}}\n"),
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
        ("volatile-early", "components/intro.md", 1, 24),
        "{found:?}"
    );
    // A predicate over a volatile value, read before the value itself: blamed when the probe
    // changes it (no folder, then one), not when it holds the same either way (a folder is
    // given in both), where the value is what changed.
    let with_folder = |context: &str| {
        Fixture::minimal()
            .file(
                "promptc.toml",
                format!(
                    "{}[predicates]\nhas_cwd = \"cwd | length > 0\"\n",
                    common::MANIFEST
                ),
            )
            .file("examples/contexts/basic.toml", context)
            .file(
                "components/intro.md",
                "Intro. {% if has_cwd %}You have a folder.{% endif %} Folder: {{ cwd }}.\n",
            )
            .file(
                "variants/generic.md",
                format!("{{{{ INTRO_SECTION }}}}\n\n{stable}\n\n{{{{ TOOLS }}}}\n"),
            )
            .validate()
    };
    for (context, column, names) in [
        (
            common::CONTEXT.to_string(),
            14,
            "(has_cwd, a predicate that reads one)",
        ),
        (
            format!("{}cwd = \"/srv/app\"\n", common::CONTEXT),
            65,
            "(cwd)",
        ),
    ] {
        let report = with_folder(&context);
        let found = report.single();
        assert_eq!(
            (
                found.code.as_str(),
                found.file.as_str(),
                found.line,
                found.column
            ),
            ("volatile-early", "components/intro.md", 1, column),
            "{context}: {found:?}"
        );
        assert!(found.message.contains(names), "{}", found.message);
    }
}

/// A section only the probe's mode switches on, with a tool that mode switches on too: placed
/// at the section's condition, naming the one value it reads (not at the base template, naming
/// every volatile value).
#[test]
fn a_section_the_probe_switches_on_is_blamed_at_its_condition() {
    let stable = "Most of the prompt: a stable text that a prompt cache can serve. ".repeat(8);
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}[predicates]\nplan_mode = \"mode == 'plan'\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/generic.toml",
            common::VARIANT
                .replace("[\"intro\"]", "[\"plan\", \"intro\"]")
                .replace("[\"read_file\"]", "[\"read_file\", \"plan_respond\"]"),
        )
        .file(
            "tools/plan_respond.toml",
            "id = \"plan_respond\"\ndescription = \"Answer with a plan.\"\nwhen = \"plan_mode\"\n",
        )
        .file(
            "components/plan.toml",
            "id = \"plan\"\ndescription = \"Planning.\"\nwhen = \"mode == 'plan'\"\n",
        )
        .file("components/plan.md", "Plan before you act.\n")
        .file("components/intro.md", "You are an agent.\n")
        .file(
            "variants/generic.md",
            format!(
                "{{{{ INTRO_SECTION }}}}\n{{{{ PLAN_SECTION }}}}\n\n{stable}\n\n{{{{ TOOLS }}}}\n"
            ),
        )
        .validate();
    let found = report.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str(), found.line),
        ("volatile-early", "components/plan.toml", 3),
        "{found:?}"
    );
    assert!(
        found.message.contains("(MODE)") && found.message.contains("in section `plan`"),
        "{}",
        found.message
    );
}

/// The workspace sets the lint's level: an error fails `validate`, `off` says nothing.
#[test]
fn the_volatile_lint_has_a_level() {
    let early = Fixture::minimal().file(
        "variants/generic.md",
        "You are a careful agent.\n\n{{ INTRO_SECTION }}\n\n{{ TOOLS }}\n",
    );
    let level = |level: &str| {
        early.clone().file(
            "promptc.toml",
            format!(
                "{}[tokens]\nstable_prefix_level = \"{level}\"\n",
                common::MANIFEST
            ),
        )
    };
    let error = level("error").validate();
    assert_eq!(error.code, 1);
    let diagnostic = error.single();
    assert_eq!(
        (diagnostic.severity.as_str(), diagnostic.code.as_str()),
        ("error", "volatile-early")
    );
    let off = level("off").validate();
    assert_eq!((off.code, off.diagnostics()), (0, vec![]));
}

fn promptc_prompt(root: &Path) -> String {
    let workspace = promptc::load_workspace(root).unwrap().workspace;
    let context = workspace.context("basic").unwrap().clone();
    let request = promptc::Request::new(promptc::Selection::fallback(), context);
    promptc::Compiler::new(&workspace)
        .compile(&request)
        .unwrap()
        .prompt
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Token counts from tiktoken-rs, not the tokenizer promptc uses.
struct Independent(&'static tiktoken_rs::CoreBPE);

impl Independent {
    fn count(&self, text: &str) -> usize {
        self.0.encode_ordinary(text).len()
    }
}

#[test]
fn counts_are_kept_outside_the_workspace_and_change_no_report() {
    let workspace = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!("{}max_prompt_tokens = 10\n", common::VARIANT),
        )
        .write();
    let cache = workspace.cache_dir().join("token-counts-v1");
    let first = workspace.run(&["validate"]);
    assert_eq!(first.code, 1);
    assert!(
        first.stderr.contains("error[over-budget]"),
        "{}",
        first.stderr
    );
    // One line per text counted: the encoding, a digest and the count.
    let saved = std::fs::read_to_string(&cache).unwrap();
    assert!(!saved.is_empty());
    for line in saved.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        assert_eq!(parts.len(), 3, "{line}");
        assert_eq!(parts[0], "o200k");
        assert_eq!(parts[1].len(), 32, "{line}");
        parts[2].parse::<usize>().unwrap();
    }
    // Counts taken from the cache give the same report, and nothing is counted twice.
    let second = workspace.run(&["validate"]);
    assert_eq!(second.stderr, first.stderr);
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), saved);
    // A damaged cache is counted again, as if it were empty.
    std::fs::write(&cache, b"o200k zz 3\n\xff\xfe not a count\n").unwrap();
    let damaged = workspace.run(&["validate"]);
    assert_eq!(damaged.stderr, first.stderr);
    // So are counts no text of its length can have (lines not written by promptc): none
    // passes a prompt over its budget, or overflows the sums `stats` makes.
    for forged in ["0", "18446744073709551615"] {
        let lines: String = saved
            .lines()
            .map(|line| format!("{} {forged}\n", line.rsplit_once(' ').unwrap().0))
            .collect();
        std::fs::write(&cache, lines).unwrap();
        let again = workspace.run(&["validate"]);
        assert_eq!(again.stderr, first.stderr, "{forged}");
        let stats = workspace.run(&["stats"]);
        let counted = workspace
            .command()
            .env("PROMPTC_NO_CACHE", "1")
            .arg("stats")
            .output()
            .unwrap();
        assert_eq!(
            stats.code,
            counted.status.code().unwrap(),
            "{}",
            stats.stderr
        );
        assert_eq!(
            stats.stdout,
            String::from_utf8_lossy(&counted.stdout),
            "{forged}"
        );
    }
    // Nothing of the cache is in the workspace, and with PROMPTC_NO_CACHE none is written.
    assert!(
        walkdir::WalkDir::new(workspace.root())
            .into_iter()
            .all(|entry| !entry
                .unwrap()
                .path()
                .to_string_lossy()
                .contains("token-counts")),
    );
    std::fs::remove_dir_all(workspace.cache_dir()).unwrap();
    let off = workspace
        .command()
        .env("PROMPTC_NO_CACHE", "1")
        .arg("validate")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&off.stderr), first.stderr);
    assert!(!workspace.cache_dir().exists());
}

/// The shipped library's prompts are longer in bytes than their budgets in tokens, yet a
/// fresh build counts none of them: a bound found without the token tables fits each budget.
/// A budget between a prompt's bound and its count is decided by the count.
#[test]
fn a_prompt_whose_bound_fits_its_budget_is_not_counted() {
    let workspace = Fixture::empty().write();
    let init = workspace.run(&["init", "-q", "."]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    let counts = workspace.cache_dir().join("token-counts-v1");
    let built = workspace.run(&["build", "--all", "-q"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    assert!(
        !counts.exists(),
        "nothing was counted, so no count was cached"
    );

    // generic's budget, which gemini, gpt and next-gen inherit: each of their prompts is
    // longer in bytes, and each bound within it.
    let variant = workspace.root().join("variants/generic.toml");
    let toml = std::fs::read_to_string(&variant).unwrap();
    assert!(toml.contains("max_prompt_tokens = 9000\n"), "{toml}");
    let o200k = Independent(tiktoken_rs::o200k_base_singleton());
    let mut prompts = Vec::new();
    for family in ["generic", "gemini", "gpt", "next-gen"] {
        let folder = workspace.root().join("examples/prompts").join(family);
        for entry in std::fs::read_dir(folder).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let (count, bound) = (o200k.count(&text), promptc::Encoding::O200k.at_most(&text));
            assert!(
                text.len() > 9000 && bound <= 9000,
                "{} bytes, bound {bound}",
                text.len()
            );
            assert!(
                count <= bound && bound < count * 13 / 10,
                "count {count}, bound {bound}"
            );
            prompts.push((count, bound));
        }
    }
    assert_eq!(prompts.len(), 32);
    let largest_count = prompts.iter().map(|(count, _)| *count).max().unwrap();
    let largest_bound = prompts.iter().map(|(_, bound)| *bound).max().unwrap();

    // Within the largest count but not the largest bound: counted, and within budget.
    let with_budget = |budget: usize| {
        let changed = toml.replace(
            "max_prompt_tokens = 9000\n",
            &format!("max_prompt_tokens = {budget}\n"),
        );
        std::fs::write(&variant, changed).unwrap();
    };
    assert!(largest_count < largest_bound);
    with_budget(largest_count);
    let counted = workspace.run(&["check", "-q"]);
    assert_eq!(counted.code, 0, "{}", counted.stderr);
    assert!(counts.exists(), "the prompts over their bound were counted");
    // One token less, and the largest is over budget by its count.
    with_budget(largest_count - 1);
    let over = workspace.run(&["check", "-q"]);
    assert_eq!(over.code, 1);
    assert!(
        over.stderr.contains(&format!("≈{largest_count}")),
        "{}",
        over.stderr
    );
}

// A family the build matrix leaves out (`build.families` lists another) printed an empty
// table, where `build --family` compiles it: it is measured, with no output to name; a context
// left out likewise.
#[test]
fn stats_measures_a_family_or_context_the_build_matrix_leaves_out() {
    let workspace = common::Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[build]\nfamilies = [\"generic\"]\ncontexts = [\"basic\"]\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/mini.toml",
            "id = \"mini\"\nextends = \"generic\"\n",
        )
        .file("examples/contexts/other.toml", "extends = \"basic\"\n")
        .write();
    for (args, family, context) in [
        (["--family", "mini"], "mini", None),
        (["--context", "other"], "generic", Some("other")),
    ] {
        let run = workspace.run(&[&["stats", "--format", "json"][..], &args[..]].concat());
        assert_eq!(run.code, 0, "{}", run.stderr);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let rows = json["prompts"]
            .as_array()
            .unwrap_or_else(|| panic!("{json}"));
        assert!(!rows.is_empty(), "{args:?}: {json}");
        for row in rows {
            assert_eq!(row["family"], family, "{row}");
            if let Some(context) = context {
                assert_eq!(row["context"], context, "{row}");
            }
            assert!(row["output"].is_null(), "{row}");
            assert!(row["characters"].as_u64().is_some_and(|n| n > 0), "{row}");
        }
    }
}

// A build entry compiles a family's other version (a beta) for a context the family's own
// row has: `stats` showed two rows alike, `generic | basic` twice. Each row names its variant
// and version, and its output; the text tells the two apart by variant.
#[test]
fn stats_tells_a_build_entry_apart_from_its_family_s_row() {
    let workspace = common::Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[routing]\nlabel = \"stable\"\n\n[build]\nfamilies = [\"generic\"]\ncontexts = [\"basic\", \"other\"]\n\n[[build.entries]]\nvariant = \"generic@2.0.0\"\ncontext = \"basic\"\noutput = \"beta/basic.md\"\n\n[[build.entries]]\nvariant = \"generic@2.0.0\"\ncontext = \"basic\"\noutput = \"again/basic.md\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/generic-2.toml",
            "id = \"generic-2\"\nfamily = \"generic\"\nextends = \"generic\"\nversion = \"2.0.0\"\n",
        )
        .file("examples/contexts/other.toml", common::CONTEXT)
        .file(
            "variants/generic.toml",
            format!(
                "{}version = \"1.0.0\"\nlabels = {{ stable = \"1.0.0\" }}\n",
                common::VARIANT
            ),
        )
        .write();
    let run = workspace.run(&["stats", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let rows: Vec<(String, String, String)> = json["prompts"]
        .as_array()
        .unwrap_or_else(|| panic!("{json}"))
        .iter()
        .map(|row| {
            (
                row["variant"].as_str().unwrap().to_string(),
                row["version"].as_str().unwrap().to_string(),
                row["output"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                "generic".into(),
                "1.0.0".into(),
                "examples/prompts/generic/basic.md".into()
            ),
            (
                "generic".into(),
                "1.0.0".into(),
                "examples/prompts/generic/other.md".into()
            ),
            (
                "generic-2".into(),
                "2.0.0".into(),
                "examples/prompts/beta/basic.md".into()
            ),
            (
                "generic-2".into(),
                "2.0.0".into(),
                "examples/prompts/again/basic.md".into()
            ),
        ]
    );
    // Two entries of one variant are told apart by output; a family compiling two variants
    // names the variant in each of its rows, also where a context has one of them only.
    let text = workspace.run(&["stats"]);
    assert!(
        text.stdout.contains("| generic (generic) | basic |")
            && text.stdout.contains("| generic (generic) | other |")
            && text
                .stdout
                .contains("| generic (examples/prompts/beta/basic.md) | basic |")
            && text
                .stdout
                .contains("| generic (examples/prompts/again/basic.md) | basic |"),
        "{}",
        text.stdout
    );
}

// A standard placeholder of `true` or `false` (`YOLO`) and a placeholder declared as an empty
// list, listed as volatile: the probe set the first to a text, which a set value of a boolean
// placeholder no longer is (the prefix went unchecked), and changed nothing in the second (a
// prefix past the line the list changes). Each is changed by its type.
#[test]
fn the_probe_changes_a_boolean_or_empty_placeholder_by_its_type() {
    let base = "{% if YOLO %}Go fast.{% endif %}\nItems: {% for i in ITEMS %}{{ i }}{% endfor %}\n\
                You are a careful agent.\n\n{{ TOOLS }}\n\n{{ INTRO_SECTION }}\n";
    for volatile in ["\"YOLO\"", "\"ITEMS\""] {
        let workspace = common::Fixture::minimal()
            .file(
                "promptc.toml",
                format!("{}\n[tokens]\nvolatile = [{volatile}]\n", common::MANIFEST),
            )
            .file(
                "variants/generic.toml",
                format!("{}\n[placeholders]\nITEMS = []\n", common::VARIANT),
            )
            .file("variants/generic.md", base)
            .write();
        let run = workspace.run(&["validate"]);
        assert_eq!(run.code, 0, "{volatile}: {}", run.stderr);
        assert!(
            !run.stderr.contains("stable-prefix-unchecked"),
            "{volatile}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains(
                "warning[volatile-early]: generic × basic: a value that changes per request"
            ),
            "{volatile}: {}",
            run.stderr
        );
    }
}

/// A tool offered in plan mode only, whose list a section shows through another section's
/// slot (a `tool_use` section gathering `{{ TOOL_LIST_SECTION }}`): the first change is the
/// tool's entry, and the warning points at the tool's `when` and the value it reads, not at
/// the gathering section's first line.
#[test]
fn a_tool_offered_in_one_mode_is_blamed_through_the_section_that_gathers_the_list() {
    let filler = "Read the code before you change it, and keep each change small. ".repeat(40);
    let fixture = Fixture::minimal()
        .file(
            "variants/generic.toml",
            "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"list\", \"gather\"]\ntools = [\"read_file\", \"draft_plan\"]\n",
        )
        .file(
            "variants/generic.md",
            format!("You are a careful agent.\n\n{{{{ GATHER_SECTION }}}}\n\n{filler}\n"),
        )
        .remove("components/intro.toml")
        .remove("components/intro.md")
        .file("components/gather.toml", "id = \"gather\"\ndescription = \"The tools.\"\n")
        .file("components/gather.md", "TOOLS\n\n{{ LIST_SECTION }}\n")
        .file("components/list.toml", "id = \"list\"\ndescription = \"The list.\"\n")
        .file("components/list.md", "{{ TOOLS }}\n")
        .file(
            "tools/draft_plan.toml",
            "id = \"draft_plan\"\ndescription = \"Write the plan down.\"\nwhen = \"mode == 'plan'\"\n",
        );
    let diagnostic = fixture.validate().single();
    assert_eq!(diagnostic.code, "volatile-early");
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line, diagnostic.column),
        ("tools/draft_plan.toml", 3, 8),
        "{}",
        diagnostic.message
    );
    assert!(
        diagnostic.message.contains("(MODE)"),
        "{}",
        diagnostic.message
    );
}
