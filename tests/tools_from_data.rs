//! Tools from runtime data: a `for_each` tool spec offers one tool per item of a list in the
//! context, in order, each instance checked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;

const SUBAGENT: &str = r#"
id = "subagent"
for_each = "extra.subagents"
as = "agent"
name = "use_{{ agent.name }}"
description = "Hand a task to the {{ agent.name }} agent: {{ agent.description }}"

[[parameters]]
name = "prompt"
required = true
instruction = "What the {{ agent.name }} agent should do, with everything it needs to know."
"#;

const TEAM: &str = r#"
date = "2026-11-01"

[[extra.subagents]]
name = "reviewer"
description = "Reviews a change for bugs."

[[extra.subagents]]
name = "tester"
description = "Writes and runs tests."
"#;

fn fixture(subagent: &str, context: &str) -> Fixture {
    Fixture::minimal()
        .file(
            "variants/generic.toml",
            common::VARIANT.replace(
                "tools = [\"read_file\"]",
                "tools = [\"read_file\", \"subagent\"]",
            ),
        )
        .file("tools/subagent.toml", subagent)
        .file("examples/contexts/team.toml", context)
}

fn build_json(workspace: &common::Workspace, context: &str) -> common::Run {
    workspace.run(&["build", "--context", context, "--format", "json"])
}

#[test]
fn one_tool_per_item_in_order() {
    let workspace = fixture(SUBAGENT, TEAM).write();
    assert_eq!(workspace.validate().diagnostics(), []);
    let run = build_json(&workspace, "team");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let tools: Vec<(&str, &str, Option<u64>)> = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap(),
                t["name"].as_str().unwrap(),
                t["item"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [
            ("read_file", "read_file", None),
            ("subagent", "use_reviewer", Some(0)),
            ("subagent", "use_tester", Some(1)),
        ]
    );
    let tester = &json["tools"][2];
    assert_eq!(
        tester["description"],
        "Hand a task to the tester agent: Writes and runs tests."
    );
    assert_eq!(
        tester["parameters"][0]["instruction"],
        "What the tester agent should do, with everything it needs to know."
    );
    // The prompt documents each instance through the tool format.
    let prompt = json["prompt"].as_str().unwrap();
    let reviewer = prompt.find("use_reviewer").unwrap();
    let tester = prompt.find("use_tester").unwrap();
    assert!(reviewer < tester, "{prompt}");

    // A context without the list offers none of them.
    let run = build_json(&workspace, "basic");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["tools"].as_array().unwrap().len(), 1);
}

#[test]
fn each_instance_is_checked() {
    // Two items giving one name.
    let twice = TEAM.replace("name = \"tester\"", "name = \"reviewer\"");
    let workspace = fixture(SUBAGENT, &twice).write();
    let run = build_json(&workspace, "team");
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "error[tool-name-taken]: tool name `use_reviewer` is already offered by tool `subagent`"
        ) && run.stderr.contains("tools/subagent.toml:5:8"),
        "{}",
        run.stderr
    );

    // A name a model cannot call.
    let spaced = TEAM.replace("name = \"tester\"", "name = \"unit tester\"");
    let workspace = fixture(SUBAGENT, &spaced).write();
    let run = build_json(&workspace, "team");
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "error[bad-tool-name]: tool name `use_unit tester` cannot be called by a model"
        ) && run
            .stderr
            .contains("= note: made from item 1 of `extra.subagents` (counted from 0)"),
        "{}",
        run.stderr
    );

    // An item that lacks a field the spec reads: the item is what to fix, so its near key
    // (the misspelt one) is not offered as the fix for the spec.
    let misspelt = TEAM.replace("name = \"tester\"", "nam = \"tester\"");
    let workspace = fixture(SUBAGENT, &misspelt).write();
    let run = build_json(&workspace, "team");
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("error[render-failed]: rendering failed: undefined value: `agent.name`")
            && run
                .stderr
                .contains("= note: made from item 1 of `extra.subagents` (counted from 0)")
            && !run.stderr.contains("did you mean `agent.nam`"),
        "{}",
        run.stderr
    );

    // A list expression that gives no list.
    let not_a_list = SUBAGENT.replace("for_each = \"extra.subagents\"", "for_each = \"cwd\"");
    let workspace = fixture(&not_a_list, TEAM).write();
    let run = build_json(&workspace, "team");
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "error[for-each-not-a-list]: `for_each` must give a list, but gives a string"
        ) && run.stderr.contains("tools/subagent.toml:3:12"),
        "{}",
        run.stderr
    );
}

#[test]
fn validation_knows_the_item_and_the_name_it_needs() {
    // The item is known by the name `as` gives, in every text of the tool, and only there.
    let wrong_name = SUBAGENT.replace(
        "Hand a task to the {{ agent.name }}",
        "Hand a task to the {{ item.name }}",
    );
    let report = fixture(&wrong_name, TEAM).validate();
    let found: Vec<(String, String, u64)> = report
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.message, d.line))
        .collect();
    assert_eq!(
        found,
        [(
            "undefined-placeholder".to_string(),
            "`item` is not defined by anything".to_string(),
            6
        )]
    );

    // The list reads the context like a condition does; a for_each tool needs a name.
    let unnamed = SUBAGENT
        .replace("name = \"use_{{ agent.name }}\"\n", "")
        .replace("extra.subagents", "extras.subagents");
    let report = fixture(&unnamed, TEAM).validate();
    let codes: Vec<String> = report.diagnostics().into_iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        ["missing-field", "unknown-context-field"],
        "{codes:?}"
    );
}

// A context list of hundreds of thousands of items made as many tools, a gigabyte of them
// before the compile ran out of fuel. One spec makes at most 1,000; past that the list is
// not walked further, and the error is at the spec's `for_each`.
#[test]
fn a_list_longer_than_the_tools_one_spec_may_make_is_refused_at_its_for_each() {
    let team = |members: usize| {
        let mut context = String::from("date = \"2026-11-01\"\n");
        for member in 0..members {
            context.push_str(&format!(
                "\n[[extra.subagents]]\nname = \"agent{member}\"\ndescription = \"Agent {member}.\"\n"
            ));
        }
        context
    };
    let workspace = fixture(SUBAGENT, &team(1_000)).write();
    let run = build_json(&workspace, "team");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let subagents = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["id"] == "subagent")
        .count();
    assert_eq!(subagents, 1_000);

    let workspace = fixture(SUBAGENT, &team(1_001)).write();
    let run = build_json(&workspace, "team");
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "error[for-each-too-long]: `for_each` gives more than 1000 items, more tools than one spec may make"
        ) && run.stderr.contains("tools/subagent.toml:3:12"),
        "{}",
        run.stderr
    );
    // From a list expression too, which makes the list as it is read.
    let ranged = SUBAGENT
        .replace(
            "for_each = \"extra.subagents\"",
            "for_each = \"range(100000)|list\"",
        )
        .replace("{{ agent.name }}", "a{{ agent }}")
        .replace("{{ agent.description }}", "");
    let workspace = fixture(&ranged, TEAM).write();
    let run = build_json(&workspace, "team");
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("error[for-each-too-long]"),
        "{}",
        run.stderr
    );
}

// A `for_each` list was evaluated on a fuel of its own: each tool's list could walk the whole
// fuel, beside the compile's. It now spends the compile's fuel, as a render does.
#[test]
fn a_for_each_list_spends_the_compile_s_fuel() {
    let terms: Vec<String> = (0..200).map(|n| format!("cwd == '/p{n}'")).collect();
    let costly = SUBAGENT.replace(
        "for_each = \"extra.subagents\"",
        &format!(
            "for_each = \"[] if ({}) else extra.subagents\"",
            terms.join(" or ")
        ),
    );
    let with_fuel = |subagent: &str| {
        fixture(subagent, TEAM)
            .file("promptc.toml", format!("{}fuel = 1000\n", common::MANIFEST))
            .write()
    };
    // The list alone fits the fuel, and so does the rest of the compile...
    let cheap = with_fuel(SUBAGENT);
    let run = build_json(&cheap, "team");
    assert_eq!(run.code, 0, "{}", run.stderr);
    // ...but not both.
    let workspace = with_fuel(&costly);
    let run = build_json(&workspace, "team");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("error[out-of-fuel]"), "{}", run.stderr);
}

// `explain` said a `for_each` tool was included when its list held no item (no tool was
// offered), and never named the tools its items made.
/// A `for_each` spec whose list holds no items offers no tool: it is not among
/// `enabled_tools`, and a parameter that depends on it is left out, in the prompt and in
/// `explain`, as for a tool whose condition is false.
#[test]
fn a_for_each_list_without_items_enables_nothing_and_its_dependents_are_left_out() {
    let workspace = fixture(SUBAGENT, TEAM)
        .file(
            "tools/read_file.toml",
            format!(
                "{}\n[[parameters]]\nname = \"delegate\"\ndepends_on = [\"subagent\"]\ninstruction = \"Who may read it for you.\"\n",
                common::TOOL
            ),
        )
        .file(
            "components/intro.md",
            "Enabled: {{ enabled_tools | join(', ') }}.\n",
        )
        .file(
            "examples/contexts/alone.toml",
            "date = \"2026-11-01\"\n[extra]\nsubagents = []\n",
        )
        .file("examples/contexts/none.toml", "date = \"2026-11-01\"\n")
        .write();
    let team = build_json(&workspace, "team");
    assert_eq!(team.code, 0, "{}", team.stderr);
    assert!(
        team.stdout.contains("Enabled: read_file, subagent."),
        "{}",
        team.stdout
    );
    assert!(team.stdout.contains("delegate"), "{}", team.stdout);
    for context in ["alone", "none"] {
        let run = build_json(&workspace, context);
        assert_eq!(run.code, 0, "{context}: {}", run.stderr);
        assert!(
            run.stdout.contains("Enabled: read_file."),
            "{context}: {}",
            run.stdout
        );
        assert!(
            !run.stdout.contains("delegate"),
            "{context}: {}",
            run.stdout
        );
        let explained = workspace.run(&["explain", "--context", context]);
        assert!(
            explained
                .stdout
                .contains("depends on tools that are not enabled: subagent"),
            "{context}: {}",
            explained.stdout
        );
    }
}

#[test]
fn explain_names_the_tools_a_for_each_spec_makes_or_that_it_makes_none() {
    let workspace = fixture(SUBAGENT, TEAM)
        .file(
            "examples/contexts/alone.toml",
            "date = \"2026-11-01\"\n[extra]\nsubagents = []\n",
        )
        .write();
    let team = workspace.run(&["explain", "--context", "team"]);
    assert_eq!(team.code, 0, "{}", team.stderr);
    assert!(
        team.stdout.contains("+ subagent: included")
            && team
                .stdout
                .contains("makes use_reviewer (item 0), use_tester (item 1)"),
        "{}",
        team.stdout
    );
    let alone = workspace.run(&["explain", "--context", "alone"]);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    assert!(
        alone.stdout.contains(
            "- subagent: its `for_each` list `extra.subagents` holds no items here: no tool is offered"
        ),
        "{}",
        alone.stdout
    );
    // Items whose tools cannot be made (two of one name) are no list without items: the
    // compile's error is given, as `build` gives it.
    let twice = "date = \"2026-11-01\"\n[[extra.subagents]]\nname = \"a\"\ndescription = \"One.\"\n[[extra.subagents]]\nname = \"a\"\ndescription = \"Two.\"\n";
    std::fs::write(workspace.root().join("examples/contexts/twice.toml"), twice).unwrap();
    let failed = workspace.run(&["explain", "--context", "twice", "--tool", "subagent"]);
    assert_eq!(failed.code, 1, "{}", failed.stdout);
    assert!(
        failed.stderr.contains("error[tool-name-taken]")
            && !failed.stdout.contains("holds no items"),
        "{}{}",
        failed.stdout,
        failed.stderr
    );
    // A compile that fails otherwise (an item without the description its spec reads) leaves
    // the tools made unknown, and the rest is explained as ever: not "no items".
    let broken = "date = \"2026-11-01\"\n[[extra.subagents]]\nname = \"a\"\n";
    std::fs::write(
        workspace.root().join("examples/contexts/broken.toml"),
        broken,
    )
    .unwrap();
    let explained = workspace.run(&["explain", "--context", "broken"]);
    assert_eq!(explained.code, 0, "{}", explained.stderr);
    assert!(
        explained.stdout.contains("+ subagent: included")
            && !explained.stdout.contains("holds no items"),
        "{}",
        explained.stdout
    );
    // A tool the spec made is explained by its spec.
    let one = workspace.run(&["explain", "--context", "team", "--tool", "use_tester"]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert!(
        one.stdout.contains("+ subagent: included") && !one.stdout.contains("read_file"),
        "{}",
        one.stdout
    );
    let json = workspace.run(&["explain", "--context", "team", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let subagent = value["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["id"] == "subagent")
        .unwrap();
    assert_eq!(
        subagent["instances"],
        serde_json::json!([
            { "name": "use_reviewer", "item": 0 },
            { "name": "use_tester", "item": 1 }
        ])
    );
}
