//! Per-request latency of the run-time API, `promptc::Runtime::compile`: the baseline the
//! Node and Python packages are measured against (their own benches, `bindings/*/bench/`,
//! time the same requests, from `bindings/bench/requests.json`), and the cost of spawning the
//! command line for the same request instead. Run with `cargo bench --bench runtime`; the
//! README's "Use from your agent" section quotes the figures.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark that cannot proceed stops

// As the command line and both packages allocate.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use indexmap::IndexMap;
use promptc::{AgentRequest, Runtime};
use serde_json::Value;

use common::{latencies, percentile, us};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let requests: IndexMap<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(root.join("bindings/bench/requests.json")).unwrap(),
    )
    .unwrap();
    let runtime = Runtime::load(root).unwrap();
    println!("Runtime::compile, shipped library, warm (2,000 compiles each):");
    for (name, request) in &requests {
        let request = AgentRequest::from_json(request.clone()).unwrap();
        let samples = latencies(2000, || runtime.compile(&request).unwrap());
        println!(
            "  {name:<28} median {}  p99 {}",
            us(percentile(&samples, 50)),
            us(percentile(&samples, 99))
        );
    }
    // A large project's rules: each Cursor rule with globs of its own, matched against the
    // request's active files on every compile.
    for rules in [40, 160] {
        let project = tempfile::tempdir().unwrap();
        let folder = project.path().join(".cursor/rules");
        std::fs::create_dir_all(&folder).unwrap();
        for rule in 0..rules {
            std::fs::write(
                folder.join(format!("area-{rule}.mdc")),
                format!(
                    "---\ndescription: Conventions of area {rule}.\n\
                     globs: [\"src/area{rule}/**/*.ts\", \"lib/area{rule}/*.rs\"]\n\
                     alwaysApply: false\n---\nFollow the conventions of area {rule}.\n"
                ),
            )
            .unwrap();
        }
        let request = AgentRequest::from_json(serde_json::json!({
            "family": "next-gen",
            "context": {
                "cwd": "/srv/app", "os": "Linux", "shell": "/bin/bash", "date": "2026-11-22",
                "mode": "act",
                "rules_from": [project.path()],
                "active_files": ["src/area3/main.ts"],
            }
        }))
        .unwrap();
        let samples = latencies(300, || runtime.compile(&request).unwrap());
        println!(
            "  {:<28} median {}  p99 {}",
            format!("a project of {rules} rules"),
            us(percentile(&samples, 50)),
            us(percentile(&samples, 99))
        );
    }
    println!("spawning `promptc build` for the same request (30 runs each):");
    let binary = env!("CARGO_BIN_EXE_promptc");
    for (name, request) in &requests {
        let samples = latencies(30, || spawn(binary, root, request));
        println!(
            "  {name:<28} median {}  p99 {}",
            us(percentile(&samples, 50)),
            us(percentile(&samples, 99))
        );
    }
}

/// One `promptc build` for a request of requests.json: its fields as flags, an inline
/// context on standard input.
fn spawn(binary: &str, root: &Path, request: &Value) -> std::process::Output {
    let mut args: Vec<String> = vec!["-C".into(), root.display().to_string(), "build".into()];
    if let Some(model) = request.get("model") {
        args.extend(["--model".into(), model["id"].as_str().unwrap().into()]);
        args.extend([
            "--provider".into(),
            model["provider"].as_str().unwrap().into(),
        ]);
    }
    if let Some(family) = request.get("family") {
        args.extend(["--family".into(), family.as_str().unwrap().into()]);
    }
    let inline = request.get("context").filter(|context| context.is_object());
    match request.get("context") {
        Some(Value::String(name)) => args.extend(["--context".into(), name.clone()]),
        Some(_) => args.extend(["--context".into(), "-".into()]),
        None => {}
    }
    let mut child = Command::new(binary)
        .args(&args)
        .env("PROMPTC_NO_CACHE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    if let Some(context) = inline {
        stdin.write_all(context.to_string().as_bytes()).unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
