//! Timings of the pipeline on the shipped library, and a scaling check on synthetic
//! workspaces: doubling the number of tools and components should roughly double the time.
//!
//! Run with `cargo bench --bench pipeline`. Prints figures; asserts nothing (timings belong
//! in a report, not in a test).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark that cannot proceed stops

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use promptc::{Request, Selection};

use promptc::Encoding;

fn time<T>(runs: u32, mut f: impl FnMut() -> T) -> Duration {
    black_box(f()); // warm up
    let start = Instant::now();
    for _ in 0..runs {
        black_box(f());
    }
    start.elapsed() / runs
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    // Before anything else counts tokens: the one-time cost of loading the tables.
    let first_count = {
        let start = Instant::now();
        Encoding::O200k.count("warm the tables");
        start.elapsed()
    };
    let tiktoken_load = {
        let start = Instant::now();
        tiktoken_rs::o200k_base_singleton().encode_ordinary("warm the tables");
        start.elapsed()
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let load = time(20, || promptc::load_workspace(root).unwrap());
    let workspace = promptc::load_workspace(root).unwrap().workspace;
    let context = workspace.context("basic").unwrap().clone();
    let request = Request::new(Selection::family("next-gen"), context);
    let compiler = promptc::Compiler::new(&workspace);
    let one = time(50, || compiler.compile(&request).unwrap());
    // A fresh compiler per run: a run's first compile also parses the conditions.
    let all = time(10, || {
        promptc::compile_matrix(&promptc::Compiler::new(&workspace), None)
    });
    let checks = time(5, || promptc::matrix_diagnostics(&workspace, None));
    let outputs = promptc::compile_matrix(&promptc::Compiler::new(&workspace), None).outputs;
    let count = time(10, || {
        outputs
            .iter()
            .map(|(_, compiled)| Encoding::O200k.count(&compiled.prompt))
            .sum::<usize>()
    });
    println!("shipped library ({} outputs):", outputs.len());
    println!("  load + validate          {}", ms(load));
    println!("  compile next-gen × basic {}", ms(one));
    println!(
        "  compile whole matrix     {} (with budget checks)",
        ms(all)
    );
    println!(
        "  validate's matrix checks {} (compile, budgets, stable-prefix probes)",
        ms(checks)
    );
    println!("  load o200k tables (once) {}", ms(first_count));
    println!("  count tokens of matrix   {}", ms(count));
    let tiktoken_count = time(10, || {
        outputs
            .iter()
            .map(|(_, compiled)| {
                tiktoken_rs::o200k_base_singleton()
                    .encode_ordinary(&compiled.prompt)
                    .len()
            })
            .sum::<usize>()
    });
    println!(
        "  (tiktoken-rs, for comparison: load {}, count matrix {})",
        ms(tiktoken_load),
        ms(tiktoken_count)
    );

    println!("synthetic workspaces (tools = components = n):");
    let mut previous: Option<Duration> = None;
    for n in [250, 500, 1000, 2000] {
        let dir = synthetic(n);
        let loaded = time(3, || promptc::load_workspace(dir.path()).unwrap());
        let workspace = promptc::load_workspace(dir.path()).unwrap().workspace;
        assert!(
            !promptc::load_workspace(dir.path())
                .unwrap()
                .diagnostics
                .has_errors()
        );
        let request = Request::new(
            Selection::fallback(),
            workspace.context("c").unwrap().clone(),
        );
        let compiler = promptc::Compiler::new(&workspace);
        let compiled = time(3, || compiler.compile(&request).unwrap());
        let ratio = previous.map_or(String::new(), |p| {
            format!(
                " (×{:.2} for ×2 n)",
                compiled.as_secs_f64() / p.as_secs_f64()
            )
        });
        println!(
            "  n = {n:>4}: load + validate {}, compile {}{ratio}",
            ms(loaded),
            ms(compiled)
        );
        previous = Some(compiled);
    }
    println!("peak resident memory: {}", peak_rss());
}

/// A workspace with `n` tools and `n` components, each component slotted in the base
/// template and each tool with a parameter depending on the previous tool.
fn synthetic(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "promptc.toml",
        "fallback_family = \"v\"\ndefault_context = \"c\"\n",
    );
    write(
        "examples/contexts/c.toml",
        "date = \"2026-01-01\"\ncwd = \"/w\"\n",
    );
    let mut base = String::new();
    let mut components = Vec::new();
    let mut tools = Vec::new();
    for i in 0..n {
        base.push_str(&format!("{{{{ C{i}_SECTION }}}}\n"));
        components.push(format!("\"c{i}\""));
        tools.push(format!("\"t{i}\""));
        write(
            &format!("components/c{i}.toml"),
            &format!(
                "id = \"c{i}\"\nwhen = \"not yolo\"\ntemplate = \"Section {i} in {{{{ CWD }}}}.\"\n"
            ),
        );
        let depends = if i > 0 {
            format!("depends_on = [\"t{}\"]\n", i - 1)
        } else {
            String::new()
        };
        write(
            &format!("tools/t{i}.toml"),
            &format!(
                "id = \"t{i}\"\ndescription = \"Tool {i}.\"\n[[parameters]]\nname = \"p\"\ninstruction = \"A value.\"\n{depends}"
            ),
        );
    }
    base.push_str("{{ TOOLS }}\n");
    write("variants/v.md", &base);
    write(
        "variants/v.toml",
        &format!(
            "id = \"v\"\ntemplate_file = \"v.md\"\ncomponents = [{}]\ntools = [{}]\n",
            components.join(", "),
            tools.join(", ")
        ),
    );
    dir
}

fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}
