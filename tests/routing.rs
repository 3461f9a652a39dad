//! Choosing a variant at request time: routing model ids to families, versions, labels and
//! tags, through the library and the `route`, `list` and `build` commands.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use promptc::{Compiler, Request, Selection};

/// Routes `model` from `provider` in the shipped library, with its `basic` context otherwise.
fn shipped_route(compiler: &Compiler<'_>, model: &str, provider: &str) -> promptc::Choice {
    let mut context = compiler.workspace().context("basic").unwrap().clone();
    context.model.id = model.into();
    context.model.provider = provider.into();
    compiler
        .choose(&Request::new(Selection::route(), context))
        .unwrap()
}

/// Real model ids as providers spell them, for every shipped family, and ids that no family
/// claims. Kept apart from the manifest's own table: this checks the shipped rules, not the
/// table against itself.
#[test]
fn the_shipped_library_routes_real_model_ids() {
    let workspace = common::load(&common::repo_root());
    let compiler = Compiler::new(&workspace);
    let cases = [
        ("claude-sonnet-4-5", "anthropic", "next-gen"),
        ("claude-haiku-4-5-20251001", "anthropic", "next-gen"),
        (
            "us.anthropic.claude-opus-4-1-20250805-v1:0",
            "bedrock",
            "next-gen",
        ),
        ("claude-sonnet-4@20250514", "vertex", "next-gen"),
        ("anthropic/claude-sonnet-4.5", "openrouter", "next-gen"),
        ("gpt-5-codex", "openai", "next-gen"),
        ("x-ai/grok-4-fast", "openrouter", "next-gen"),
        ("gemini-2.5-flash-lite", "vertex", "next-gen"),
        ("gemini-1.5-flash-002", "vertex", "gemini"),
        ("google/gemini-2.0-flash-exp", "openrouter", "gemini"),
        ("gpt-4.1-mini", "openai", "gpt"),
        ("gpt-4o-2024-08-06", "openai", "gpt"),
        ("o1-preview", "openai", "gpt"),
        ("openai/o3-mini", "openrouter", "gpt"),
        ("qwen2.5-coder:14b", "ollama", "xs"),
        ("llama3.1:8b", "ollama", "xs"),
        ("mistral-small-3.2", "lmstudio", "xs"),
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct", "together", "xs"),
        // No family claims these: the fallback serves them.
        ("claude-3-5-sonnet-20241022", "anthropic", "generic"),
        ("claude-2.1", "anthropic", "generic"),
        ("deepseek-reasoner", "deepseek", "generic"),
        ("kimi-k2-0905", "moonshot", "generic"),
        ("grok-3", "xai", "generic"),
        ("", "", "generic"),
    ];
    // Twice over, forwards then backwards: the second time each route is the one the compiler
    // found for that context before.
    let wrong: Vec<String> = cases
        .iter()
        .chain(cases.iter().rev())
        .filter_map(|(model, provider, family)| {
            let choice = shipped_route(&compiler, model, provider);
            (choice.family != *family)
                .then(|| format!("{provider}/{model}: {} instead of {family}", choice.family))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");

    // The choice says which rule decided, or that none did.
    let routed = shipped_route(&compiler, "claude-sonnet-4-5", "anthropic");
    let rule = routed.route.unwrap().rule.unwrap();
    assert_eq!(
        (rule.variant.as_str(), rule.source.file.as_str()),
        ("next-gen", "variants/next-gen.toml")
    );
    assert_eq!(routed.label.as_deref(), Some("stable"));
    let fallback = shipped_route(&compiler, "deepseek-chat", "deepseek");
    assert_eq!(fallback.route.unwrap().rule, None);
}

/// A plain `build` compiles the fallback family whatever the context's model, as documented;
/// when that model routes elsewhere (an agent passing its context on standard input, which
/// the library would route), a note says so and how to route it. With `--model`, or when
/// the model routes to the fallback family anyway, there is no note.
#[test]
fn a_plain_build_notes_a_context_model_it_does_not_route() {
    let build = |context: &str, args: &[&str]| {
        let output = common::promptc()
            .current_dir(common::repo_root())
            .args(["build", "--context", "-"])
            .args(args)
            .write_stdin(context.to_string())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", common::stderr(&output));
        (common::stdout(&output), common::stderr(&output))
    };
    let claude = "{\"date\": \"2026-11-01\", \"model\": {\"id\": \"claude-sonnet-4-5\"}}";
    let (plain, note) = build(claude, &[]);
    assert!(
        note.contains(
            "note: the context's model `claude-sonnet-4-5` routes to family `next-gen`, but a build without `--model` compiles the fallback family, `generic`"
        ),
        "{note}"
    );
    let (routed, quiet) = build(claude, &["--model", "claude-sonnet-4-5"]);
    assert!(!quiet.contains("note:"), "{quiet}");
    assert_ne!(plain, routed);
    let (_, quiet) = build(claude, &["--family", "generic"]);
    assert!(!quiet.contains("note:"), "{quiet}");
    let mystery = "{\"date\": \"2026-11-01\", \"model\": {\"id\": \"mystery-model\"}}";
    let (_, quiet) = build(mystery, &[]);
    assert!(!quiet.contains("note:"), "{quiet}");
}

#[test]
fn route_prints_the_family_version_and_rule() {
    let run = |args: &[&str]| {
        let output = common::promptc()
            .current_dir(common::repo_root())
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", common::stderr(&output));
        common::stdout(&output)
    };
    let text = run(&["route", "--model", "gpt-5.1-codex", "--provider", "openai"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "model:   gpt-5.1-codex (provider `openai`)");
    assert_eq!(lines[1], "family:  next-gen");
    assert_eq!(lines[2], "version: 1.0.0 (label `stable`)");
    assert_eq!(lines[3], "variant: next-gen");
    assert!(
        lines[4].starts_with("rule:    `match` of next-gen (variants/next-gen.toml:"),
        "{text}"
    );
    // The rules read the provider as well as the id: one the command line did not give is the
    // context's, and said so.
    let text = run(&["route", "--model", "gpt-5.1-codex"]);
    assert_eq!(
        text.lines().next(),
        Some(
            "model:   gpt-5.1-codex (provider `anthropic`, the context `basic`'s; `--provider` routes for another)"
        ),
        "{text}"
    );
    let piped = common::promptc()
        .current_dir(common::repo_root())
        .args(["route", "--model", "gpt-5.1-codex", "--context", "-"])
        .write_stdin("[model]\nprovider = \"openrouter\"\n")
        .output()
        .unwrap();
    let text = common::stdout(&piped);
    assert_eq!(
        text.lines().next(),
        Some(
            "model:   gpt-5.1-codex (provider `openrouter`, the context's on standard input; `--provider` routes for another)"
        ),
        "{text}"
    );

    let json: serde_json::Value = serde_json::from_str(&run(&[
        "route",
        "--model",
        "mystery-model",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(json["family"], "generic");
    assert_eq!(json["route"]["rule"], serde_json::Value::Null);
    // The model and provider routed for, as the text says them (the provider the context's).
    assert_eq!(json["model"], "mystery-model");
    assert_eq!(json["provider"], "anthropic");

    // `build --model` compiles what `route` chose, for that model.
    let routed = run(&[
        "build",
        "--model",
        "qwen3-coder:30b",
        "--provider",
        "ollama",
    ]);
    let mut context = common::load(&common::repo_root())
        .context("basic")
        .unwrap()
        .clone();
    context.model.id = "qwen3-coder:30b".into();
    context.model.provider = "ollama".into();
    let workspace = common::load(&common::repo_root());
    let direct = Compiler::new(&workspace)
        .compile(&Request::new(Selection::family("xs"), context))
        .unwrap();
    assert_eq!(routed, direct.prompt);
    // `stats --model` counts the routed family's outputs only.
    let stats: serde_json::Value = serde_json::from_str(&run(&[
        "stats",
        "--model",
        "o3",
        "--provider",
        "openai",
        "--format",
        "json",
    ]))
    .unwrap();
    let families: Vec<&str> = stats["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["family"].as_str().unwrap())
        .collect();
    assert!(
        !families.is_empty() && families.iter().all(|f| *f == "gpt"),
        "{families:?}"
    );
    // `explain --model` explains what the routed family contains.
    let explained: serde_json::Value = serde_json::from_str(&run(&[
        "explain",
        "--model",
        "gemini-1.5-pro",
        "--provider",
        "gemini",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(explained["family"], "gemini");
    // A plain build still compiles the fallback family, whatever model the context names.
    let plain = run(&["build", "--format", "json"]);
    let plain: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(plain["family"], "generic");
}

/// A family with three versions, labels for two, a tagged one, and a child of another family
/// that drops an inherited label.
fn versioned() -> common::Workspace {
    Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[routing]\nlabel = \"stable\"\n", common::MANIFEST),
        )
        .file(
            "variants/generic.toml",
            format!(
                "{}version = \"1.0.0\"\nlabels = {{ stable = \"1.0.0\", beta = \"2\" }}\n",
                common::VARIANT
            ),
        )
        .file(
            "variants/generic-2.toml",
            "id = \"generic-2\"\nfamily = \"generic\"\nextends = \"generic\"\nversion = \"2.0.0\"\n",
        )
        .file(
            "variants/generic-2-1.toml",
            "id = \"generic-2-1\"\nfamily = \"generic\"\nextends = \"generic\"\nversion = \"2.1.0\"\ntags = [\"compact\"]\n",
        )
        .file(
            "variants/generic-10.toml",
            "id = \"generic-10\"\nfamily = \"generic\"\nextends = \"generic\"\nversion = \"10.0.0\"\n",
        )
        .file(
            "variants/lab.toml",
            "id = \"lab\"\nextends = \"generic\"\nlabels = { stable = false, beta = \"1\" }\n",
        )
        .write()
}

/// A variant of a new family that extends another family's variant inherits its labels,
/// which name that family's versions: one its own family lacks is an error at its `extends`
/// (routing with the label failed, and without it the label was quietly passed over).
#[test]
fn an_inherited_label_naming_a_version_the_family_lacks_is_an_error() {
    let fixture = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}version = \"1.0.0\"\nlabels = {{ stable = \"1.0.0\" }}\n",
                common::VARIANT
            ),
        )
        .file(
            "variants/small.toml",
            "id = \"small\"\nextends = \"generic\"\nversion = \"1.1.0\"\n",
        );
    let run = fixture.write().run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "error[inherited-label-version]: label `stable`, inherited from `generic`, names version `1.0.0`, which family `small` does not have"
        ) && run.stderr.contains("variants/small.toml:2:11")
            && run.stderr.contains("drop it (`labels = { stable = false }`), or give it a version of the family (1.1.0)"),
        "{}",
        run.stderr
    );
    // Dropped, or in a family that has the version, it is no problem.
    for small in [
        "id = \"small\"\nextends = \"generic\"\nversion = \"1.1.0\"\nlabels = { stable = false }\n",
        "id = \"small\"\nextends = \"generic\"\nversion = \"1.0.0\"\n",
    ] {
        let run = fixture
            .clone()
            .file("variants/small.toml", small)
            .write()
            .run(&["validate"]);
        assert_eq!(run.code, 0, "{small}: {}", run.stderr);
    }
}

/// A version asked for exactly wins over a longer one it names: with `1.0` beside `1.0.0`,
/// `@1.0` (or a label naming `1.0`) took the highest it names, `1.0.0`, and `1.0` could not be
/// asked for by version at all.
#[test]
fn a_version_asked_for_exactly_is_the_one_compiled() {
    let workspace = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "{}version = \"1.0.0\"\nlabels = {{ old = \"1.0\" }}\n",
                common::VARIANT
            ),
        )
        .file(
            "variants/old.toml",
            "id = \"old\"\nfamily = \"generic\"\nextends = \"generic\"\nversion = \"1.0\"\n",
        )
        .write();
    let variant_of = |args: &[&str]| {
        let mut all = vec!["build", "--context", "basic", "--format", "json"];
        all.extend_from_slice(args);
        let run = workspace.run(&all);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        json["variant"].as_str().unwrap().to_string()
    };
    assert_eq!(variant_of(&["--variant", "generic@1.0"]), "old");
    assert_eq!(variant_of(&["--label", "old"]), "old");
    assert_eq!(variant_of(&["--variant", "generic@1.0.0"]), "generic");
    assert_eq!(variant_of(&["--variant", "generic@1"]), "generic");
    assert_eq!(variant_of(&["--family", "generic"]), "generic");
}

#[test]
fn versions_labels_and_tags_select_a_variant() {
    let workspace = versioned();
    let variant_of = |args: &[&str]| {
        let mut all = vec!["build", "--context", "basic", "--format", "json"];
        all.extend_from_slice(args);
        let run = workspace.run(&all);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        json["variant"].as_str().unwrap().to_string()
    };
    // The family compiles with routing's label when it has it.
    assert_eq!(variant_of(&["--family", "generic"]), "generic");
    assert_eq!(variant_of(&[]), "generic");
    // A label names a version or the start of one: `beta = "2"` is the highest 2.x.
    assert_eq!(variant_of(&["--label", "beta"]), "generic-2-1");
    // `family@version`: exact, or the highest it starts; 10 is above 2 as a number.
    assert_eq!(variant_of(&["--variant", "generic@2.0.0"]), "generic-2");
    assert_eq!(variant_of(&["--variant", "generic@2"]), "generic-2-1");
    assert_eq!(variant_of(&["--variant", "generic@1"]), "generic");
    assert_eq!(variant_of(&["--variant", "generic-10"]), "generic-10");
    // A tag narrows the family; alone it picks the one family carrying it.
    assert_eq!(
        variant_of(&["--family", "generic", "--tag", "compact"]),
        "generic-2-1"
    );
    assert_eq!(variant_of(&["--tag", "compact"]), "generic-2-1");
    // `lab` dropped the `stable` it inherits, and has no version: its family falls back
    // to its highest (only) version.
    assert_eq!(variant_of(&["--family", "lab"]), "lab");

    let failure = |args: &[&str]| {
        let mut all = vec!["build", "--context", "basic"];
        all.extend_from_slice(args);
        let run = workspace.run(&all);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stdout);
        run.stderr
    };
    assert!(
        failure(&["--variant", "generic@3"]).contains("family `generic` has no version `3`"),
        "{}",
        failure(&["--variant", "generic@3"])
    );
    assert!(
        failure(&["--family", "lab", "--label", "stable"])
            .contains("family `lab` has no label `stable`")
    );
    // A tag no variant carries: a near one, else the tags there are; a family without the tag:
    // a near one of its own, else its tags, or that it has none.
    let cases = [
        (
            &["--tag", "compakt"][..],
            "no variant has tag `compakt` (did you mean `compact`?)",
        ),
        (
            &["--tag", "wide"],
            "no variant has tag `wide` (tags: compact)",
        ),
        (
            &["--family", "generic", "--tag", "compactt"],
            "no variant of family `generic` has tag `compactt` (did you mean `compact`?)",
        ),
        (
            &["--family", "generic", "--tag", "wide"],
            "no variant of family `generic` has tag `wide` (tags of the family: compact)",
        ),
        (
            &["--family", "lab", "--tag", "compact"],
            "no variant of family `lab` has tag `compact` (the family's variants carry no tags: \
             add the tag to one, or choose another family)",
        ),
    ];
    for (args, message) in cases {
        assert_eq!(failure(args), format!("error: {message}\n"), "{args:?}");
    }
}

#[test]
fn the_library_chooses_what_the_command_line_does() {
    let workspace = versioned();
    let loaded = common::load(workspace.root());
    let compiler = Compiler::new(&loaded);
    let choose = |selection: Selection| {
        compiler
            .choose(&Request::new(selection, Default::default()))
            .unwrap()
    };
    let beta = choose(Selection::family("generic").with_label("beta"));
    assert_eq!(
        (
            beta.variant.as_str(),
            beta.version.as_deref(),
            beta.label.as_deref()
        ),
        ("generic-2-1", Some("2.1.0"), Some("beta"))
    );
    let highest = choose(Selection::variant("generic@2"));
    assert_eq!(highest.variant, "generic-2-1");
    let tagged = choose(Selection::fallback().with_tag("compact"));
    assert_eq!(tagged.variant, "generic-2-1");
}

#[test]
fn list_shows_families_versions_labels_and_tags() {
    let workspace = versioned();
    let run = workspace.run(&["list"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = run.stdout;
    let generic = text.find("generic (fallback)").unwrap();
    let lab = text.find("\nlab\n").unwrap();
    // Versions in numeric order, each with its labels and tags.
    let versions: Vec<&str> = text[generic..lab]
        .lines()
        .filter(|line| line.starts_with("  ") && !line.starts_with("    "))
        .map(|line| line.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(versions, ["1.0.0", "2.0.0", "2.1.0", "10.0.0"]);
    assert!(text.contains("  2.1.0  generic-2-1  labels: stable=1.0.0, beta=2  tags: compact"));
    // The dropped label is gone from `lab`; the one it set stays.
    assert!(text[lab..].contains("labels: beta=1"), "{text}");
    assert!(!text[lab..].contains("stable"), "{text}");
    // `show`, after inheritance, agrees: a label set to `false` is not there.
    for format in ["toml", "json"] {
        let shown = workspace.run(&["show", "lab", "--format", format]);
        assert_eq!(shown.code, 0, "{}", shown.stderr);
        assert!(shown.stdout.contains("beta"), "{}", shown.stdout);
        assert!(
            !shown.stdout.contains("stable"),
            "{format}: {}",
            shown.stdout
        );
    }

    let json = workspace.run(&["list", "--format", "json"]);
    let families: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(families[0]["family"], "generic");
    assert_eq!(families[0]["fallback"], true);
    assert_eq!(families[0]["variants"][3]["version"], "10.0.0");
}

/// A template reads the variant's labels as the mapping the file writes: a label by name,
/// `in`, and in order; they were a list of pairs, so a template testing a label took the
/// wrong branch without a word.
#[test]
fn a_template_reads_the_variant_s_labels_as_a_mapping() {
    let workspace = versioned();
    std::fs::write(
        workspace.root().join("components/intro.md"),
        "[{{ variant.labels is mapping }} {{ 'beta' in variant.labels }} {{ variant.labels.stable }} \
         {{ variant.labels | join(',') }} {{ variant.labels['beta'] }}]\n",
    )
    .unwrap();
    let run = workspace.run(&["build", "--variant", "generic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("[true true 1.0.0 stable,beta 2]"),
        "{}",
        run.stdout
    );
}

/// A description written as a YAML block scalar ends with a line break, and a literal one
/// (`|`) holds more: `list` shows each line indented, with no control character's picture.
#[test]
fn list_shows_a_block_scalar_description_line_by_line() {
    let workspace = Fixture::minimal()
        .remove("variants/generic.toml")
        .file(
            "variants/generic.yaml",
            "id: generic\ntemplate_file: generic.md\ncomponents: [intro]\ntools: [read_file]\n\
             description: |\n  The default family.\n  Used when nothing else matches.\n",
        )
        .write();
    let run = workspace.run(&["list"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("    The default family.\n    Used when nothing else matches.\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains('\u{240a}'), "{}", run.stdout);
}

// Every variant of a family that sets `match` sets the same one; `route` and `list` showed it
// from the first file that does, `frontier-2.toml` (a beta) before `frontier.toml`, though the
// family serves 1.0.0. The rule is shown from the variant the family serves by default.
#[test]
fn a_routing_rule_is_shown_from_the_variant_the_family_serves() {
    let matched = "match = \"model.id is startingwith('fr')\"\n";
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[routing]\nlabel = \"stable\"\norder = [\"frontier\"]\n",
                common::MANIFEST
            ),
        )
        .file(
            "variants/frontier.toml",
            format!(
                "id = \"frontier\"\nextends = \"generic\"\nversion = \"1.0.0\"\n\
                 labels = {{ stable = \"1\" }}\n{matched}"
            ),
        )
        .file(
            "variants/frontier-2.toml",
            format!(
                "id = \"frontier-2\"\nfamily = \"frontier\"\nextends = \"frontier\"\n\
                 version = \"2.0.0\"\n{matched}"
            ),
        )
        .write();
    let route = workspace.run(&["route", "--model", "fr-1"]);
    assert_eq!(route.code, 0, "{}", route.stderr);
    assert!(
        route.stdout.contains("variant: frontier\n"),
        "{}",
        route.stdout
    );
    assert!(
        route
            .stdout
            .contains("rule:    `match` of frontier (variants/frontier.toml:5)"),
        "{}",
        route.stdout
    );
    let list = workspace.run(&["list"]);
    assert!(
        list.stdout
            .contains("routing #1: `match` of frontier (variants/frontier.toml:5)"),
        "{}",
        list.stdout
    );
    // The JSON names each part of it.
    let json = workspace.run(&["list", "--format", "json"]);
    let families: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let frontier = families
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["family"] == "frontier")
        .unwrap();
    assert_eq!(frontier["routing"]["position"], 1);
    assert_eq!(frontier["routing"]["variant"], "frontier");
    assert_eq!(
        frontier["routing"]["source"]["file"],
        "variants/frontier.toml"
    );
}

#[test]
fn show_takes_a_variant_or_family_at_version_without_a_flag() {
    let workspace = versioned();
    let run = workspace.run(&["show", "generic@2", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["id"], "generic-2-1");
    assert_eq!(json["version"], "2.1.0");
    let run = workspace.run(&["show", "lab"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("# variant `lab` after inheritance (lab <- generic)")
    );
}

/// Validation tests the routing rules on a few expected models at a time (each rule's pattern
/// built once for them, not once per model): every expectation is still checked, each
/// mismatch reported at its own line and in the table's order, past the first few too.
#[test]
fn every_routing_expectation_is_checked_in_order() {
    let mut expect = String::new();
    let mut wrong = Vec::new();
    for index in 0..40 {
        let (model, family) = if index % 2 == 0 {
            (format!("claude-{index}"), "claude")
        } else {
            (format!("gpt-{index}"), "openai")
        };
        // Three expectations that name the other family.
        let family = if [3, 17, 38].contains(&index) {
            wrong.push((index, model.clone()));
            if family == "claude" {
                "openai"
            } else {
                "claude"
            }
        } else {
            family
        };
        expect.push_str(&format!(
            "  {{ model = \"{model}\", family = \"{family}\" }},\n"
        ));
    }
    let manifest = format!(
        "{}[routing]\norder = [\"claude\", \"openai\"]\nexpect = [\n{expect}]\n",
        common::MANIFEST
    );
    let validation = Fixture::minimal()
        .file("promptc.toml", manifest)
        .file(
            "variants/claude.toml",
            "id = \"claude\"\nextends = \"generic\"\nmatch = \"model.id is matching('^claude-[0-9]+$')\"\n",
        )
        .file(
            "variants/openai.toml",
            "id = \"openai\"\nextends = \"generic\"\nmatch = \"model.id is glob('gpt-*')\"\n",
        )
        .validate();
    let mismatches: Vec<(u64, String)> = validation
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "route-mismatch")
        .map(|d| (d.line, d.message))
        .collect();
    // The table opens on the manifest's fifth line: expectation n is on line 6 + n.
    let expected: Vec<u64> = wrong.iter().map(|(index, _)| 6 + index).collect();
    assert_eq!(
        mismatches.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
        expected,
        "{mismatches:#?}"
    );
    for ((_, message), (_, model)) in mismatches.iter().zip(&wrong) {
        assert!(message.contains(&format!("`{model}`")), "{message}");
    }
}

/// `--model` sets the context's `model.id` and nothing else: a model id alone keeps the
/// context's provider, so a local model named on the command line still routes as a local one,
/// in every command that takes `--model`.
#[test]
fn a_model_given_alone_keeps_the_contexts_provider() {
    let run = |args: &[&str]| {
        let output = common::promptc()
            .current_dir(common::repo_root())
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", common::stderr(&output));
        common::stdout(&output)
    };
    let json = |args: &[&str]| -> serde_json::Value { serde_json::from_str(&run(args)).unwrap() };
    // `small-context` serves its model from ollama.
    let model = ["--model", "qwen3-coder:30b", "--context", "small-context"];
    let routed = json(&[&["route"][..], &model, &["--format", "json"]].concat());
    assert_eq!(routed["family"], "xs", "{routed}");
    let built = json(&[&["build"][..], &model, &["--format", "json"]].concat());
    assert_eq!(built["family"], "xs", "{built}");
    let explained = json(&[&["explain"][..], &model, &["--format", "json"]].concat());
    assert_eq!(explained["family"], "xs", "{explained}");
    let stats = json(&[&["stats"][..], &model, &["--format", "json"]].concat());
    let families: Vec<&str> = stats["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["family"].as_str().unwrap())
        .collect();
    assert!(
        !families.is_empty() && families.iter().all(|f| *f == "xs"),
        "{families:?}"
    );
    let context = json(&[&["context"][..], &model, &["--format", "json"]].concat());
    assert_eq!(
        context["model"],
        serde_json::json!({ "provider": "ollama", "id": "qwen3-coder:30b" })
    );
    // And `--provider` alone keeps the context's model id.
    let context = json(&[
        "context",
        "--context",
        "small-context",
        "--provider",
        "openrouter",
        "--format",
        "json",
    ]);
    assert_eq!(
        context["model"],
        serde_json::json!({ "provider": "openrouter", "id": "qwen2.5-coder:14b" })
    );
}
