//! Arbitrary template text compiled and rendered the way the compiler does it (the same
//! environment, through `Templates`), with a fixed scope shaped like a real compile's; every
//! failure is mapped back to the template file and rendered as a diagnostic.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use minijinja::Value;
use promptc::Diagnostic;
use promptc::Sources;
use promptc::fuzzing::Templates;
use promptc::model::Limits;
use promptc::problem::Problem;
use promptc::report;

/// Less than the default so that loops end quickly: the fuzzer looks for crashes, hangs and
/// allocations fuel does not bound, not for slow loops.
const FUEL: u64 = 100_000;

static SCOPE: LazyLock<Value> = LazyLock::new(|| {
    Value::from(minijinja::value::Serde(serde_json::json!({
        "cwd": "/home/dev/shop",
        "os": "Linux",
        "shell": "/bin/bash",
        "home": "/home/dev",
        "ide": "VS Code",
        "date": "2026-11-01",
        "mode": "act",
        "yolo": false,
        "rules": "Use {{ tabs }} in Go files.\n",
        "preferred_language": "",
        "model": { "provider": "anthropic", "id": "claude" },
        "browser": { "enabled": true, "viewport": { "width": 900, "height": 600 } },
        "focus_chain": { "enabled": true, "remind_every": 6 },
        "workspace_roots": [{ "name": "shop", "path": "/home/dev/shop", "vcs": "git" }],
        "mcp_servers": [{
            "name": "github",
            "command": "npx github-mcp",
            "tools": [{ "name": "create_issue", "description": "Open an issue.",
                        "input_schema": { "type": "object", "required": ["title"] } }],
        }],
        "extra": { "team": "payments" },
        "family": "generic",
        "variant": { "id": "generic", "family": "generic", "version": "1.0.0",
                     "tags": ["production"], "labels": { "prod": 1 } },
        "has_mcp": true,
        "enabled_tools": ["read_file", "write_to_file"],
        "tools": [{ "id": "read_file", "name": "read_file", "description": "Read a file.",
                    "parameters": [{ "name": "path", "required": true, "type": "string",
                                     "instruction": "The path.", "usage": "a.txt" }] }],
        "TOOLS": "## read_file\nRead a file.",
        "CWD": "/home/dev/shop",
        "CURRENT_DATE": "2026-11-01",
        "MODEL_FAMILY": "generic",
        "AGENT_NAME": "Forge",
        "INTRO_SECTION": "You work here.\n",
        "RULES_SECTION": "",
    })))
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sources = Sources::default();
    let file = sources.add("components/intro.md".into(), text.to_string());
    let mut templates = Templates::new(Some(FUEL), &Limits::default(), &mut sources);
    let mut diagnostics = Vec::new();
    match templates.add_file(&sources, file) {
        Err(diagnostic) => diagnostics.push(diagnostic),
        Ok(name) => {
            let _ = templates.variables(name);
            // The include, import and extends tags found by scanning: each lies inside the
            // text, on character boundaries, so a diagnostic can point at it.
            for reference in templates.references(name) {
                assert!(text.get(reference.range.clone()).is_some(), "{reference:?}");
            }
            let _ = templates.used_by(name);
            let result = templates
                .template(name)
                .and_then(|template| template.render(SCOPE.clone()));
            if let Err(error) = result {
                let span = templates
                    .error_span(&error)
                    .or_else(|| templates.span_of(name));
                assert!(span.is_some(), "unlocated render error: {error:?}");
                if let Some(span) = span {
                    diagnostics.push(Diagnostic::new(
                        Problem::RenderFailed {
                            message: error.to_string(),
                            meant: promptc::fuzzing::meant(templates.env(), &error),
                            known: promptc::fuzzing::known(templates.env(), &error),
                        },
                        span,
                    ));
                }
                let _ = templates.find_name(name, "cwd");
            }
        }
    }
    for diagnostic in &diagnostics {
        let file = sources.get(diagnostic.span.source);
        // The renderers clamp the end of a span; its start must be a place in the file.
        assert!(
            diagnostic.span.start <= diagnostic.span.end
                && diagnostic.span.start <= file.text.len(),
            "span {:?} outside the {} bytes of {}: {diagnostic:?}",
            diagnostic.span,
            file.text.len(),
            file.path.display()
        );
    }
    let _ = report::human(&diagnostics, &sources, false);
});
