//! Contexts as agents assemble them: inheritance between context files, a context on standard
//! input, the assembled context printed, and the machine's environment on request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::{Value, json};

const BASE: &str = r#"
date = "2026-11-01"
cwd = "/home/dev/shop"
model = { provider = "anthropic", id = "claude-sonnet-4-5" }
browser = { enabled = true, viewport = { width = 900, height = 600 } }
workspace_roots = [{ name = "shop", path = "/home/dev/shop" }]
extra = { team = "payments", region = "eu" }
"#;

fn workspace() -> common::Workspace {
    Fixture::minimal()
        .file("examples/contexts/base.toml", BASE)
        .file(
            "examples/contexts/narrow.yaml",
            "extends: base\nbrowser:\n  viewport:\n    width: 1280\nworkspace_roots: []\nextra:\n  region: us\n",
        )
        .file(
            "examples/contexts/narrower.toml",
            "extends = \"narrow\"\nmodel = { id = \"gpt-4.1\" }\n",
        )
        .write()
}

/// `promptc context` of the arguments, as JSON.
fn assembled(workspace: &common::Workspace, args: &[&str], stdin: Option<&str>) -> Value {
    let mut command = workspace.command();
    command.args(["context", "--format", "json"]).args(args);
    if let Some(text) = stdin {
        command.write_stdin(text);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
    serde_json::from_str(&common::stdout(&output)).unwrap()
}

#[test]
fn a_context_sets_only_what_differs_from_the_one_it_extends() {
    let workspace = workspace();
    assert_eq!(workspace.validate().diagnostics(), []);
    let context = assembled(&workspace, &["--context", "narrower"], None);
    // Tables merge key by key, nested ones too; lists replace; each level adds its own.
    assert_eq!(
        context["browser"],
        json!({ "enabled": true, "viewport": { "width": 1280, "height": 600 } })
    );
    assert_eq!(context["workspace_roots"], json!([]));
    assert_eq!(
        context["extra"],
        json!({ "team": "payments", "region": "us" })
    );
    assert_eq!(
        context["model"],
        json!({ "provider": "anthropic", "id": "gpt-4.1" })
    );
    assert_eq!(context["cwd"], "/home/dev/shop");
    // The link itself is not part of the context templates see.
    assert!(context.get("extends").is_none(), "{context}");

    // A file outside the contexts folder extends a named context the same way.
    let outside = workspace.tmp().join("mine.toml");
    std::fs::write(&outside, "extends = \"narrow\"\nyolo = true\n").unwrap();
    let context = assembled(&workspace, &["--context", outside.to_str().unwrap()], None);
    assert_eq!(
        (context["yolo"].clone(), context["extra"]["region"].clone()),
        (json!(true), json!("us"))
    );

    // The prompt compiles from the merged values.
    let run = workspace.run(&["build", "--context", "narrower"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("You work in /home/dev/shop on 2026-11-01."),
        "{}",
        run.stdout
    );
}

#[test]
fn standard_input_takes_json_toml_or_yaml() {
    let workspace = workspace();
    let forms = [
        r#"{ "extends": "base", "cwd": "/srv/app", "yolo": true }"#,
        "# an agent's context\nextends = \"base\"\ncwd = \"/srv/app\"\nyolo = true\n",
        "extends: base\ncwd: /srv/app\nyolo: true\n",
    ];
    for text in forms {
        let context = assembled(&workspace, &["--context", "-"], Some(text));
        assert_eq!(
            (
                context["cwd"].clone(),
                context["yolo"].clone(),
                context["extra"]["team"].clone()
            ),
            (json!("/srv/app"), json!(true), json!("payments")),
            "{text}"
        );
    }
    // `build` reads it the same way.
    let output = workspace
        .command()
        .args(["build", "--context", "-"])
        .write_stdin("{\"cwd\": \"/srv/app\", \"date\": \"2026-11-02\"}")
        .output()
        .unwrap();
    assert!(common::stdout(&output).contains("You work in /srv/app on 2026-11-02."));

    // Problems are told at <stdin>, line and column.
    let output = workspace
        .command()
        .args(["build", "--context", "-"])
        .write_stdin("cwd: /srv/app\nyolo: \"sure\"\n")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = common::stderr(&output);
    assert!(
        stderr.contains("error[wrong-type]") && stderr.contains("<stdin>:2:7"),
        "{stderr}"
    );
    // A byte-order mark before them (a Windows editor's) moves no column, and is no text.
    let output = workspace
        .command()
        .args(["build", "--context", "-"])
        .write_stdin("\u{feff}yolo = \"sure\"\n")
        .output()
        .unwrap();
    let stderr = common::stderr(&output);
    assert!(
        stderr.contains("<stdin>:1:8") && !stderr.contains('\u{feff}') && !stderr.contains('�'),
        "{stderr}"
    );
    let output = workspace
        .command()
        .args(["build", "--context", "-"])
        .write_stdin("extends = \"bsae\"\n")
        .output()
        .unwrap();
    let stderr = common::stderr(&output);
    assert!(
        stderr.contains("unknown context `bsae`") && stderr.contains("did you mean `base`?"),
        "{stderr}"
    );
    // Nothing piped in (a command before it that printed nothing) is no file to delete.
    for nothing in ["", " \n\n"] {
        let output = workspace
            .command()
            .args(["build", "--context", "-"])
            .write_stdin(nothing)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        let stderr = common::stderr(&output);
        assert!(
            stderr.contains("error[empty-file]: the context given is empty")
                && stderr.contains("give the context's fields, as JSON, TOML or YAML")
                && !stderr.contains("delete the file"),
            "{stderr}"
        );
    }
}

#[test]
fn standard_input_is_bounded_like_a_file() {
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[limits]\nfile_bytes = 1024\n", common::MANIFEST),
        )
        .write();
    let output = workspace
        .command()
        .args(["build", "--context", "-"])
        .write_stdin(format!("cwd = \"{}\"\n", "x".repeat(4096)))
        .output()
        .unwrap();
    // Refused as the command line's input, as a device given as `--context` is: exit 2
    // (it exited 1, a problem of the workspace).
    assert_eq!(output.status.code(), Some(2));
    let stderr = common::stderr(&output);
    assert!(
        stderr.contains("<stdin> is larger than the limit of 1 KiB")
            && stderr.contains("give a smaller context")
            && !stderr.contains("split the file"),
        "{stderr}"
    );
    // A file as large, and a device, the same.
    let large = workspace.root().join("large.toml");
    std::fs::write(&large, format!("cwd = \"{}\"\n", "x".repeat(4096))).unwrap();
    for given in [large.to_str().unwrap(), "/dev/zero"] {
        let output = workspace
            .command()
            .args(["build", "--context", given])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{given}");
    }
    let output = workspace
        .command()
        .args(["build", "--context", large.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = common::stderr(&output);
    assert!(
        stderr.contains("large.toml is larger than the limit of 1 KiB")
            && stderr.contains("split the file"),
        "{stderr}"
    );
}

#[test]
fn detect_env_fills_the_machine_fields_only_when_asked() {
    let workspace = workspace();
    let plain = assembled(&workspace, &["--context", "base"], None);
    assert_eq!(
        (plain["home"].clone(), plain["shell"].clone()),
        (json!(""), json!(""))
    );
    let mut command = workspace.command();
    let output = command
        .args([
            "context",
            "--format",
            "json",
            "--context",
            "base",
            "--detect-env",
        ])
        .env("HOME", "/home/tester")
        .env("SHELL", "/usr/bin/fish")
        .output()
        .unwrap();
    let detected: Value = serde_json::from_str(&common::stdout(&output)).unwrap();
    assert_eq!(detected["home"], "/home/tester");
    assert_eq!(detected["shell"], "/usr/bin/fish");
    assert_eq!(
        detected["cwd"],
        workspace.root().canonicalize().unwrap().to_str().unwrap()
    );
    assert!(!detected["os"].as_str().unwrap().is_empty());
}

#[test]
fn declared_context_fields_have_defaults_and_a_schema() {
    let manifest = format!(
        "{}default_context = \"basic\"\n\n[context_fields]\nparallel_tool_calls = {{ type = \"boolean\", default = false }}\nteam = {{ type = \"string\", default = \"core\", description = \"The team the agent works for.\" }}\n",
        common::MANIFEST
    );
    let workspace = Fixture::minimal()
        .file("promptc.toml", manifest)
        .file(
            "components/intro.md",
            "You work for {{ extra.team }}{% if extra.parallel_tool_calls %}, several calls at once{% endif %}.\n",
        )
        .file(
            "examples/contexts/parallel.toml",
            "extends = \"basic\"\nextra = { parallel_tool_calls = true }\n",
        )
        .write();
    assert_eq!(workspace.validate().diagnostics(), []);
    // A context that leaves a declared field out sees its default, in templates and in
    // `promptc context`.
    let run = workspace.run(&["build"]);
    assert!(
        run.stdout.contains("You work for core.\n"),
        "{}",
        run.stdout
    );
    let run = workspace.run(&["build", "--context", "parallel"]);
    assert!(
        run.stdout
            .contains("You work for core, several calls at once."),
        "{}",
        run.stdout
    );
    let context = assembled(&workspace, &[], None);
    assert_eq!(
        context["extra"],
        json!({ "parallel_tool_calls": false, "team": "core" })
    );

    // The context schema lists them, so editors complete them and flag others.
    let run = workspace.run(&["schema"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Declared fields that change make the written schema stale: `validate` says so.
    let manifest = workspace.root().join("promptc.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("default = \"core\"", "default = \"platform\""),
    )
    .unwrap();
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "stale: schema/context.schema.json differs from the generated schema (run `promptc schema`)"
        ),
        "{}",
        run.stderr
    );
    std::fs::write(&manifest, text).unwrap();
    let run = workspace.run(&["validate"]);
    assert!(!run.stderr.contains("stale:"), "{}", run.stderr);
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace.root().join("schema/context.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        schema["properties"]["extra"]["properties"]["team"],
        json!({ "type": "string", "default": "core", "description": "The team the agent works for." })
    );
    assert_eq!(schema["properties"]["extra"]["additionalProperties"], false);
    assert_eq!(workspace.run(&["schema", "--check"]).code, 0);
}

const MCP_SETTINGS: &str = r#"{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_TOKEN": "never printed" },
      "autoApprove": ["search_issues"],
      "timeout": 60
    },
    "docs": { "url": "https://docs.example/mcp", "type": "sse" },
    "notes": { "command": "notes-mcp", "disabled": true },
    "away": { "command": "away-mcp" }
  }
}
"#;

const MCP_LISTING: &str = r#"{
  "servers": {
    "docs": {
      "tools": [{ "name": "search_docs", "description": "Search the documentation." }]
    },
    "notes": { "tools": [{ "name": "add_note", "description": "Add a note." }] },
    "away": { "status": "disconnected", "tools": [{ "name": "ping", "description": "Ping." }] }
  }
}
"#;

#[test]
fn an_mcp_settings_file_joins_the_contexts_servers() {
    let workspace = workspace();
    let settings = workspace.tmp().join("cline_mcp_settings.json");
    std::fs::write(&settings, MCP_SETTINGS).unwrap();
    std::fs::write(
        workspace.tmp().join("cline_mcp_settings.listing.json"),
        MCP_LISTING,
    )
    .unwrap();
    let settings = settings.to_str().unwrap();
    let context = assembled(&workspace, &["--context", "base", "--mcp", settings], None);
    let servers: Vec<(String, String, bool, String)> = context["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["command"].as_str().unwrap().to_string(),
                s["disabled"].as_bool().unwrap(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let server = |name: &str, command: &str, disabled: bool, status: &str| {
        (
            name.to_string(),
            command.to_string(),
            disabled,
            status.to_string(),
        )
    };
    assert_eq!(
        servers,
        [
            server(
                "github",
                "npx -y @modelcontextprotocol/server-github",
                false,
                "connected"
            ),
            server("docs", "https://docs.example/mcp", false, "connected"),
            server("notes", "notes-mcp", true, "connected"),
            server("away", "away-mcp", false, "disconnected"),
        ]
    );
    // Settings the prompt has no use for (the environment, timeouts) stay out of it.
    assert!(!context.to_string().contains("never printed"));
    assert_eq!(context["mcp_servers"][1]["tools"][0]["name"], "search_docs");

    // A settings value of the wrong type is located in the settings file.
    let broken = workspace.tmp().join("broken.json");
    std::fs::write(
        &broken,
        "{\"mcpServers\": {\"a\": {\"disabled\": \"yes\"}}}\n",
    )
    .unwrap();
    let run = workspace.run(&["context", "--mcp", broken.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("error[wrong-type]: wrong type: expected a boolean, found a string")
            && run.stderr.contains("broken.json:1:35"),
        "{}",
        run.stderr
    );
}

/// A settings path the command line names that is no regular file is a bad argument (exit
/// 2), as a missing one and a `--context` path are; a rules folder that is none says what it is.
#[test]
#[cfg(unix)]
fn a_command_line_path_that_is_no_regular_file_is_a_bad_argument() {
    let workspace = common::Fixture::minimal().write();
    let pipe = workspace.tmp().join("settings.json");
    common::mkfifo(&pipe);
    let folder = workspace.tmp().join("folder.json");
    std::fs::create_dir(&folder).unwrap();
    for (path, help) in [
        (
            &pipe,
            "help: name a regular JSON file (such as `.cursor/mcp.json`): a FIFO, socket or device is not read",
        ),
        (
            &folder,
            "help: name the settings file itself (such as `.cursor/mcp.json`), not its folder",
        ),
    ] {
        let run = workspace.run(&["context", "--mcp", path.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "{} is not a regular file: MCP settings are read from a JSON file",
                path.display()
            )) && run.stderr.contains(help),
            "{}",
            run.stderr
        );
        let run = workspace.run(&["context", "--context", path.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{}", run.stderr);
    }
    let missing = workspace.tmp().join("missing.json");
    let run = workspace.run(&["context", "--mcp", missing.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = workspace.run(&["context", "--global-rules", pipe.to_str().unwrap()]);
    assert!(
        run.stderr
            .contains("is a named pipe (FIFO), where a folder belongs"),
        "{}",
        run.stderr
    );
}

/// `promptc context` with MCP settings (`agent.json`) and the listing beside them, for a
/// context on standard input that has a server `github` with a tool of its own; the run
/// (which must succeed), and the settings' and listing's paths.
fn context_with_settings(
    workspace: &common::Workspace,
    settings: &str,
    listing: &str,
) -> (common::Run, String, String) {
    let settings_path = workspace.tmp().join("agent.json");
    std::fs::write(&settings_path, settings).unwrap();
    let listing_path = workspace.tmp().join("agent.listing.json");
    std::fs::write(&listing_path, listing).unwrap();
    let settings = settings_path.to_str().unwrap().to_string();
    let output = workspace
        .command()
        .args(["context", "--context", "-", "--mcp", &settings, "--format", "json"])
        .write_stdin(
            "{\"mcp_servers\": [{\"name\": \"github\", \"tools\": [{\"name\": \"from_context\"}]}]}\n",
        )
        .output()
        .unwrap();
    let run = common::Run::checked(output);
    assert_eq!(run.code, 0, "{}", run.stderr);
    (run, settings, listing_path.display().to_string())
}

// VS Code's `.vscode/mcp.json` writes its servers under `servers` (and `inputs` beside them):
// read as the `mcpServers` of other agents, each problem placed under `servers`. It is JSON
// with comments and trailing commas, which were a syntax error: they are read past, and every
// place in the file stays where it is.
#[test]
fn vs_code_s_settings_under_servers_are_read() {
    let workspace = workspace();
    let settings = workspace.tmp().join("mcp.json");
    std::fs::write(
        &settings,
        "{\n  // this project's servers\n  \"inputs\": [],\n  \"servers\": { /* two */\n    \"github\": {\"type\": \"stdio\", \"command\": \"gh-mcp\", \"args\": [\"--ro\"]},\n    \"bad\": {\"command\": 7},\n  },\n}\n",
    )
    .unwrap();
    let path = settings.to_str().unwrap();
    let run = workspace.run(&["context", "--mcp", path, "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("wrong type") && run.stderr.contains(&format!("{path}:6:24")),
        "{}",
        run.stderr
    );
    std::fs::write(
        &settings,
        "{\"servers\": {\"github\": {\"type\": \"stdio\", \"command\": \"gh-mcp\", \"args\": [\"--ro\", \"--url=http://a//b\", \"/* kept */\",], // trailing\n}}}\n",
    )
    .unwrap();
    let run = workspace.run(&["context", "--mcp", path, "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let context: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let servers = context["mcp_servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1, "{context}");
    assert_eq!(servers[0]["name"], "github");
    assert_eq!(
        servers[0]["command"], "gh-mcp --ro --url=http://a//b /* kept */",
        "{context}"
    );
    // Both tables in one file: whichever was read, the other's servers were dropped without
    // a word (`servers` was). Refused at the second table's key, with how to fix it.
    std::fs::write(
        &settings,
        "{\"mcpServers\": {\"a\": {\"command\": \"a-mcp\"}},\n \"servers\": {\"b\": {\"command\": \"b-mcp\"}}}\n",
    )
    .unwrap();
    let run = workspace.run(&["context", "--mcp", path, "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains("error[server-tables-conflict]")
            && run.stderr.contains(&format!("{path}:2:2"))
            && run.stderr.contains("move the others there"),
        "{}",
        run.stderr
    );
    // An empty table of either loses nothing: the other's servers are read.
    for text in [
        "{\"mcpServers\": {}, \"servers\": {\"b\": {\"command\": \"b-mcp\"}}}\n",
        "{\"mcpServers\": {\"b\": {\"command\": \"b-mcp\"}}, \"servers\": {}}\n",
    ] {
        std::fs::write(&settings, text).unwrap();
        let run = workspace.run(&["context", "--mcp", path, "--format", "json"]);
        assert_eq!(run.code, 0, "{text}: {}", run.stderr);
        let context: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(context["mcp_servers"][0]["command"], "b-mcp", "{context}");
    }
}

// Where a settings file has comments, a problem after them is placed at the problem, not at
// the first comment (a `/` that starts none stopped the stripping, and the file was read as
// it was); a JSON context with a carriage return alone keeps its places (JSON reads it as
// blank space).
#[test]
fn problems_in_json_are_placed_whatever_its_comments_and_line_endings() {
    let workspace = workspace();
    let settings = workspace.tmp().join("mcp.json");
    std::fs::write(
        &settings,
        "{\n  // this project's servers\n  \"servers\": {\"a\": {\"command\": \"x\"}},\n  \"x\": 1 / 2\n}\n",
    )
    .unwrap();
    let path = settings.to_str().unwrap();
    let run = workspace.run(&["context", "--mcp", path]);
    assert!(
        run.stderr.contains("json-syntax")
            && run.stderr.contains(&format!("{path}:4:10"))
            && run.stderr.contains("a `/` that starts no comment"),
        "{}",
        run.stderr
    );
    // What the stripping of comments took out is a comment or a comma that ends a value:
    // a comma after no value (`[,]`, which VS Code refuses) and a `/` alone at the end were
    // taken out with them, and the file read.
    for (text, at, says) in [
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"args\": [,]}}}\n",
            "1:45",
            "a `,` with no value before it",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\"},,}}\n",
            "1:36",
            "key must be a string",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\"}}}\n/\n",
            "2:1",
            "a `/` that starts no comment",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\"}}}\n/* not closed\n",
            "2:1",
            "a `/*` comment is not closed",
        ),
        // Half a character, which serde_json says only as the end of an escape.
        (
            "{\"servers\": {\"a\": {\"command\": \"\\ud800\"}}}\n",
            "1:",
            "help: a `\\u` escape is four hex digits",
        ),
    ] {
        std::fs::write(&settings, text).unwrap();
        let run = workspace.run(&["context", "--mcp", path]);
        assert_eq!(run.code, 1, "{text}: {}", run.stderr);
        assert!(
            run.stderr.contains(says) && run.stderr.contains(&format!("{path}:{at}")),
            "{text}: {}",
            run.stderr
        );
    }
    // Comments anywhere (`#` ones too, as the stripping reads them), a comma after the last
    // item, and `/` in a string are read past.
    std::fs::write(
        &settings,
        "{\n // c /\n # it's \"quoted\"\n \"servers\": {/* x, */ \"a\": {\"command\": \"a/b // c\", \"args\": [\"/*\",],},},}\n",
    )
    .unwrap();
    let run = workspace.run(&["context", "--mcp", path, "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("a/b // c /*"), "{}", run.stdout);
    let context = workspace.tmp().join("cr.json");
    std::fs::write(
        &context,
        "{\"extends\": \"base\",\r\n \"mode\": \"plann\",\r \"os\": \"Linux\"}\r\n",
    )
    .unwrap();
    let path = context.to_str().unwrap();
    let run = workspace.run(&["context", "--context", path]);
    assert!(
        run.stderr.contains("`plann`") && run.stderr.contains(&format!("{path}:2:10")),
        "{}",
        run.stderr
    );
}

// A context of the workspace named by its path is read as the workspace's and as the file
// `--context` names: its warnings were told twice. Each is told once.
#[test]
fn a_workspace_context_named_by_its_path_is_warned_of_once() {
    let workspace = workspace();
    std::fs::write(
        workspace.root().join("examples/contexts/toggled.toml"),
        "extends = \"base\"\nrule_toggles = { nosuch = false }\n",
    )
    .unwrap();
    for context in ["toggled", "examples/contexts/toggled.toml"] {
        let run = workspace.run(&["build", "--context", context]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.stderr.matches("warning[toggle-names-no-rule]").count(),
            1,
            "{context}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("warning: 1 warning"), "{}", run.stderr);
    }
}

// A server the settings add, with no listing beside them and none in the context, joined the
// prompt as a heading with nothing under it. It is a warning at its name in the settings, and
// the shipped library says, under the heading, that nothing of it is listed. A server the
// listing describes, the context already has or the settings disable, is not warned of.
#[test]
fn a_server_nothing_describes_is_a_warning_at_its_name() {
    let workspace = workspace();
    let (run, settings, _) = context_with_settings(
        &workspace,
        "{\"mcpServers\": {\n  \"weather\": {\"command\": \"node\", \"args\": [\"w.js\"]},\n  \"github\": {\"command\": \"gh-mcp\"},\n  \"docs\": {\"command\": \"docs-mcp\"},\n  \"off\": {\"command\": \"off-mcp\", \"disabled\": true}\n}}\n",
        "{\"servers\": {\"docs\": {\"tools\": [{\"name\": \"lookup\"}]}}}\n",
    );
    assert!(
        run.stderr.contains(
            "warning[server-not-listed]: server `weather` is added with nothing it offers"
        ) && run.stderr.contains(&format!("{settings}:2:3"))
            && run
                .stderr
                .contains("under `servers.weather` in `agent.listing.json`"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr.matches("warning[server-not-listed]").count(),
        1,
        "{}",
        run.stderr
    );
}

// What the settings say and what the compile says are one report, closed by one count: the
// settings' warnings and the compile's were each followed by a count of their own.
#[test]
fn warnings_of_the_settings_and_of_the_compile_close_with_one_count() {
    let workspace = Fixture::minimal()
        .file(
            "variants/native.toml",
            "id = \"native\"\nextends = \"generic\"\nnative_tools = true\n",
        )
        .file(
            "tools/read_file.toml",
            "id = \"read_file\"\ndescription = \"Read a file.\"\n\n[[parameters]]\nname = \"path\"\ninstruction = \"Where.\"\nschema = { format = \"uri\" }\n",
        )
        .write();
    let settings = workspace.tmp().join("agent.json");
    std::fs::write(
        &settings,
        "{\"mcpServers\": {\"weather\": {\"command\": \"w\"}}}\n",
    )
    .unwrap();
    let run = workspace.run(&[
        "tools",
        "--variant",
        "native",
        "--context",
        "basic",
        "--dialect",
        "gemini",
        "--mcp",
        settings.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("warning[server-not-listed]")
            && run.stderr.contains("warning[keywords-dropped]"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.matches("warning: ").count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.ends_with("warning: 2 warnings\n"),
        "{}",
        run.stderr
    );
}

// A listing's server that the settings do not name (a misspelt name, most likely), or that the
// context already has (whose entry says what it offers), gave nothing without a word. Each is a
// warning at its name in the listing; the build goes on with the servers it has.
#[test]
fn a_listing_entry_that_gives_nothing_is_a_warning_at_its_name() {
    let workspace = workspace();
    let (run, _, listing) = context_with_settings(
        &workspace,
        "{\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}, \"docs\": {\"command\": \"docs-mcp\"}}}\n",
        "{\"servers\": {\n  \"doc\": {\"tools\": [{\"name\": \"search\"}]},\n  \"github\": {\"tools\": [{\"name\": \"from_listing\"}]},\n  \"docs\": {\"tools\": [{\"name\": \"lookup\"}]}\n}}\n",
    );
    assert!(
        run.stderr.contains(
            "warning[listing-entry-unused]: the listing offers server `doc`, which the MCP settings do not name: nothing of it is used"
        ) && run.stderr.contains(&format!("{listing}:2:3"))
            && run.stderr.contains("did you mean `docs`, a server the settings name?"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "warning[listing-entry-unused]: server `github` is in the context already, which says what it offers: the listing's entry for it is not used"
        ) && run.stderr.contains(&format!("{listing}:3:3")),
        "{}",
        run.stderr
    );
    // `docs`, new to the context, takes what the listing offers, and only it is warned of twice.
    assert_eq!(
        run.stderr.matches("warning[listing-entry-unused]").count(),
        2,
        "{}",
        run.stderr
    );
    let context: Value = serde_json::from_str(&run.stdout).unwrap();
    let servers = context["mcp_servers"].as_array().unwrap();
    let github = servers.iter().find(|s| s["name"] == "github").unwrap();
    assert_eq!(github["tools"][0]["name"], "from_context", "{github}");
    let docs = servers.iter().find(|s| s["name"] == "docs").unwrap();
    assert_eq!(docs["tools"][0]["name"], "lookup");
    assert!(servers.iter().all(|s| s["name"] != "doc"));

    // A server the settings do not name is that, whether the context has it or not: taking
    // it out of the context would not take the listing's.
    let settings = workspace.tmp().join("other.json");
    std::fs::write(
        &settings,
        "{\"mcpServers\": {\"docs\": {\"command\": \"docs-mcp\"}}}\n",
    )
    .unwrap();
    std::fs::write(
        workspace.tmp().join("other.listing.json"),
        "{\"servers\": {\"github\": {\"tools\": []}}}\n",
    )
    .unwrap();
    let output = workspace
        .command()
        .args([
            "context",
            "--context",
            "-",
            "--mcp",
            settings.to_str().unwrap(),
        ])
        .write_stdin("{\"mcp_servers\": [{\"name\": \"github\"}]}\n")
        .output()
        .unwrap();
    let run = common::Run::checked(output);
    assert!(
        run.stderr
            .contains("the listing offers server `github`, which the MCP settings do not name")
            && !run.stderr.contains("is in the context already"),
        "{}",
        run.stderr
    );
}

// A server given as a number became a connected server with no command, an argument that is
// not text was left out, and a server without a name was taken; the listing's problems were
// placed at the whole server, in serde's words. Each is an error at its place, the listing's
// checked as a context's servers are (unknown keys with the near one).
#[test]
fn mcp_settings_and_their_listing_are_checked_value_by_value() {
    let workspace = workspace();
    let settings = workspace.tmp().join("m.json");
    std::fs::write(
        &settings,
        "{\"mcpServers\": {\"a\": 5, \"b\": {\"command\": \"x\", \"args\": [\"y\", 3]}, \"\": {\"url\": \"u\"}}}\n",
    )
    .unwrap();
    let run = workspace.run(&["context", "--mcp", settings.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for (message, place) in [
        (
            "error[wrong-type]: wrong type: expected an object, found an integer",
            "m.json:1:22",
        ),
        (
            "error[wrong-type]: wrong type: expected a string, found an integer",
            "m.json:1:61",
        ),
        // The name is a key: said so, and how to give one.
        (
            "error[invalid-value]: the server's name is empty",
            "m.json:1:66",
        ),
    ] {
        assert!(
            run.stderr.contains(&format!(
                "{message}\n --> {}",
                workspace.tmp().join(place).display()
            )),
            "{message}: {}",
            run.stderr
        );
    }

    // Settings of one server, with a listing beside them.
    let settings = workspace.tmp().join("l.json");
    let with_listing = |listing: &str| {
        std::fs::write(
            &settings,
            "{\"mcpServers\": {\"srv\": {\"command\": \"x\"}}}\n",
        )
        .unwrap();
        std::fs::write(workspace.tmp().join("l.listing.json"), listing).unwrap();
        workspace.run(&["context", "--mcp", settings.to_str().unwrap()])
    };
    let run = with_listing(
        "{\"servers\": {\"srv\": {\"tools\": [\n  {\"name\": \"t1\", \"description\": 5},\n  {\"name\": \"t2\", \"descripton\": \"x\"}\n], \"status\": \"connectd\"}}}\n",
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let listing = workspace.tmp().join("l.listing.json");
    for (message, place) in [
        (
            "error[wrong-type]: wrong type: expected a string, found an integer",
            "2:33",
        ),
        ("error[unknown-key]: unknown key `descripton`", "3:18"),
        ("error[invalid-value]: invalid value `connectd`", "4:14"),
    ] {
        assert!(
            run.stderr.contains(message)
                && run
                    .stderr
                    .contains(&format!("{}:{place}", listing.display())),
            "{message}: {}",
            run.stderr
        );
    }
    assert!(
        run.stderr.contains("did you mean `description`?"),
        "{}",
        run.stderr
    );
    // An object of servers of another type is that, not missing; a key the listing does not
    // have is unknown there too.
    std::fs::write(&settings, "{\"mcpServers\": []}\n").unwrap();
    let run = workspace.run(&["context", "--mcp", settings.to_str().unwrap()]);
    assert!(
        run.stderr
            .contains("error[wrong-type]: wrong type: expected an object, found an array"),
        "{}",
        run.stderr
    );
    // A listed server gives what it offers: its name, command and `disabled` are the
    // settings', and were taken, then replaced without a word.
    let run = with_listing(
        "{\"servers\": {\"srv\": {\"disabled\": true, \"name\": \"renamed\", \"uid\": \"u\", \"tools\": []}}}\n",
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    for key in ["disabled", "name"] {
        assert!(
            run.stderr
                .contains(&format!("error[unknown-key]: unknown key `{key}`")),
            "{}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains("`uid`"), "{}", run.stderr);
    let run = with_listing("{\"servers\": {}, \"severs\": 1}\n");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("error[unknown-key]: unknown key `severs`"),
        "{}",
        run.stderr
    );
}

/// The shipped MCP section lists the servers that count, and says so when none does.
#[test]
fn the_shipped_mcp_section_lists_the_servers_that_count() {
    let build = |stdin: &str| {
        let output = common::promptc()
            .current_dir(common::repo_root())
            .args(["build", "--family", "next-gen", "--context", "-"])
            .write_stdin(stdin.to_string())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", common::stderr(&output));
        common::stdout(&output)
    };
    let prompt = build("extends = \"native-tools\"\n");
    assert!(prompt.contains("## sentry"), "{prompt}");
    assert!(!prompt.contains("## linear") && !prompt.contains("## browserbase"));
    let prompt = build(
        "extends = \"native-tools\"\nmcp_servers = [{ name = \"notes\", disabled = true }]\n",
    );
    assert!(
        prompt.contains("None of the configured servers is connected now"),
        "{prompt}"
    );
    // With no server that counts, the tools that call servers are not offered either.
    assert!(!prompt.contains("## use_mcp_tool"), "{prompt}");
}

/// A file the caller names that lies in the workspace (`--context`, `--mcp`, and the listing
/// read beside the settings) is the workspace's: a pull request can make any of them a link
/// to a file outside, whose text a diagnostic would print.
#[cfg(unix)]
#[test]
fn files_named_on_the_command_line_inside_the_workspace_do_not_lead_out_of_it() {
    use std::os::unix::fs::symlink;
    let workspace = Fixture::minimal()
        .file(
            ".vscode/mcp_settings.json",
            "{\"mcpServers\": {\"gh\": {\"command\": \"npx\"}}}\n",
        )
        .write();
    let secret = workspace.tmp().join("secret.txt");
    std::fs::write(&secret, "SECRET_TOKEN=ghp_not_for_the_log\n").unwrap();
    let root = workspace.root();
    symlink(&secret, root.join(".vscode/mcp_settings.listing.json")).unwrap();
    symlink(&secret, root.join("linked-context.toml")).unwrap();
    symlink(&secret, root.join(".vscode/linked-settings.json")).unwrap();

    for args in [
        &["context", "--mcp", ".vscode/mcp_settings.json"][..],
        &["context", "--mcp", ".vscode/linked-settings.json"],
        &["build", "--context", "linked-context.toml"],
    ] {
        let run = workspace.run(args);
        assert_ne!(run.code, 0, "{args:?}: {}", run.stdout);
        assert!(
            !run.stderr.contains("ghp_not_for_the_log") && !run.stdout.contains("ghp_"),
            "{args:?} printed the linked file: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("outside the workspace"),
            "{args:?}: {}",
            run.stderr
        );
    }

    // The same settings, a plain file of the workspace with no listing beside it, are read.
    let listing = root.join(".vscode/mcp_settings.listing.json");
    std::fs::remove_file(&listing).unwrap();
    let run = workspace.run(&["context", "--mcp", ".vscode/mcp_settings.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("\"gh\""), "{}", run.stdout);

    // Whatever else stands at the listing's name is refused with its reason, never skipped
    // without a word.
    let refusals: [(&dyn Fn(), &str); 3] = [
        (&|| std::fs::create_dir(&listing).unwrap(), "is a folder"),
        (
            &|| symlink("nowhere", &listing).unwrap(),
            "is a symbolic link to nothing",
        ),
        (&|| common::mkfifo(&listing), "is a named pipe (FIFO)"),
    ];
    for (make, reason) in refusals {
        make();
        let run = workspace.run(&["context", "--mcp", ".vscode/mcp_settings.json"]);
        assert_eq!(run.code, 1, "{reason}: {}", run.stdout);
        assert!(
            run.stderr.contains(&format!(
                "error[path-refused]: `.vscode/mcp_settings.listing.json` {reason}"
            )),
            "{reason}: {}",
            run.stderr
        );
        let _ = std::fs::remove_dir(&listing);
        let _ = std::fs::remove_file(&listing);
    }
}
