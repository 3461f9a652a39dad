//! promptc's speed and memory, each figure printed beside its target (the README's
//! performance section quotes them). Run with `cargo bench --bench pipeline`; it asserts
//! nothing, since timings belong in a report, not in a test.
//!
//! Absolute times drift on a shared machine, so whole commands are measured against the I/O
//! floor of the same workspace in the same run: a process that only reads every input file
//! and compares (or writes, with the same fsync and rename) the same output bytes. The floor
//! is a program of the standard library alone (`benches/common/io_floor.rs`, built with
//! `rustc` when the bench starts), within about half a millisecond of the same in C. Each
//! figure is the median of several runs, and a floor and the commands compared with it run in
//! turn, round after round, so that both meet the same load. Workspaces:
//!
//! - the shipped library (this repository's root, copied), and its `build --all` once more
//!   with budgets under the bounds of its prompts' counts, so that they are counted: the
//!   token tables load;
//! - a generated workspace shaped like a large real registry: a dozen families with long
//!   templates and per-family overrides, 25 tools with per-family specs, 25 components, a
//!   dozen regex clean-up rules, 48 outputs of 20-60 KB;
//! - a scale matrix of variants × tools × contexts without token budgets. Its full size
//!   (100 × 1,000 × 20: 2,000 outputs, gigabytes of text) runs with `PROMPTC_BENCH_SCALE=full`;
//!   by default a tenth of it in each dimension but contexts.
//!
//! Every command runs as on a fresh clone: with no token-count cache (`PROMPTC_NO_CACHE=1`).
//!
//! For peak memory, the bench binary runs promptc itself: `--promptc ARGS…` runs the command
//! line in-process, then prints the process's peak resident memory, so that memory is read
//! from the process that did the work.
//! `cargo bench --bench pipeline -- --workspaces` writes the workspaces, builds them and keeps
//! them, for a profiler to run promptc on (the full scale matrix with `PROMPTC_BENCH_SCALE=full`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark that cannot proceed stops

// As the command line and both packages allocate.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use promptc::{Encoding, Request, Selection};

use common::{latencies_in_turn, percentile, us};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("--promptc") => return run_promptc(&args[2..]),
        Some("--workspaces") => {
            keep_workspaces();
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    let full = full_scale();
    let floor = floor_binary();

    let shipped = copy_of_shipped_library();
    section("shipped library", shipped.path(), 5.0, 15);
    counted(shipped.path());
    in_process(shipped.path());
    tokens(shipped.path());
    large_context();

    let registry = registry_shape();
    section("real-registry shape", registry.path(), 8.0, 15);

    let (variants, tools, contexts) = scale_dimensions(full);
    scale(variants, tools, contexts, full);
    doubling();
    let _ = std::fs::remove_file(floor);
    ExitCode::SUCCESS
}

/// Whether `PROMPTC_BENCH_SCALE=full` asks for the scale matrix at its full size.
fn full_scale() -> bool {
    std::env::var("PROMPTC_BENCH_SCALE").is_ok_and(|v| v == "full")
}

/// The scale matrix's variants, tools and contexts: a tenth of the full size in each dimension
/// but contexts unless `full`.
fn scale_dimensions(full: bool) -> (usize, usize, usize) {
    if full { (100, 1000, 20) } else { (10, 100, 20) }
}

/// `--workspaces`: makes the bench's workspaces, built, and keeps them, for a profiler to run
/// promptc on; prints where each is. The scale matrix is the one the bench would run: a tenth,
/// or the full size with `PROMPTC_BENCH_SCALE=full`.
fn keep_workspaces() {
    let full = full_scale();
    let (variants, tools, contexts) = scale_dimensions(full);
    let scale_name = if full {
        "scale matrix (full)"
    } else {
        "scale matrix (a tenth)"
    };
    for (name, dir) in [
        ("shipped library", copy_of_shipped_library()),
        ("real-registry shape", registry_shape()),
        (scale_name, scale_matrix(variants, tools, contexts)),
    ] {
        let built = promptc(dir.path(), &["build", "--all", "-q"]);
        assert!(built.status.success(), "{}", stderr(&built));
        println!("{name}: {}", dir.keep().display());
    }
}

// ---------------------------------------------------------------------------------------------
// Whole processes against their I/O floor.

/// `build --all` (outputs current), `check` and `validate` of one workspace, each against the
/// floor of the same files, and the peak memory of each command.
fn section(name: &str, root: &Path, target: f64, runs: usize) {
    let built = promptc(root, &["build", "--all", "-q"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let plan = Plan::of(root);
    println!(
        "{name}: {} inputs ({}), {} outputs ({})",
        plan.inputs.len(),
        size(plan.input_bytes()),
        plan.outputs.len(),
        size(plan.output_bytes())
    );
    let plan_file = plan.write();
    let plan_path = plan_file.path();
    let [floor, build, check, validate, inputs_floor, version] = side_by_side(
        runs,
        [
            &mut || floor_process(plan_path, "compare"),
            &mut || timed(root, &["build", "--all", "-q"]),
            &mut || timed(root, &["check", "-q"]),
            &mut || timed(root, &["validate", "-q"]),
            &mut || floor_process(plan_path, "read"),
            &mut || timed(root, &["--version"]),
        ],
    );
    report("build --all, outputs current", build, floor, Some(target));
    report("check", check, floor, Some(target));
    report("validate", validate, inputs_floor, None);
    // What any command pays to start and end a process, whatever its workspace.
    report("--version", version, floor, None);
    for args in [
        &["build", "--all", "-q"][..],
        &["check", "-q"],
        &["validate", "-q"],
    ] {
        println!(
            "  peak memory of {:<28} {}",
            args.join(" "),
            size(peak_memory(root, args))
        );
    }
}

/// `build --all` with generic's budget (which four families share) under the bounds of its
/// prompts' counts but over the counts: each of those prompts loads the token tables and is
/// counted, as a workspace's prompts are when their budget is tight.
fn counted(root: &Path) {
    let variant = root.join("variants/generic.toml");
    let toml = std::fs::read_to_string(&variant).unwrap();
    let tight = toml.replace("max_prompt_tokens = 9000\n", "max_prompt_tokens = 6000\n");
    assert_ne!(tight, toml, "generic's budget is 9000");
    std::fs::write(&variant, tight).unwrap();
    let plan = Plan::of(root);
    let plan_file = plan.write();
    let [floor, time] = side_by_side(
        5,
        [
            &mut || floor_process(plan_file.path(), "compare"),
            &mut || timed(root, &["build", "--all", "-q"]),
        ],
    );
    report("build --all, prompts counted", time, floor, None);
    std::fs::write(&variant, toml).unwrap();
}

fn report(label: &str, time: Duration, floor: Duration, target: Option<f64>) {
    let ratio = time.as_secs_f64() / floor.as_secs_f64();
    let target = target.map_or(String::new(), |t| {
        format!(
            "  target ≤ {t}×: {}",
            if ratio <= t { "met" } else { "not met" }
        )
    });
    println!(
        "  {label:<32} {:>10}  floor {:>10}  ×{ratio:.1}{target}",
        ms(time),
        ms(floor)
    );
}

/// What a command reads and the outputs it compares or writes.
struct Plan {
    inputs: Vec<PathBuf>,
    outputs: Vec<(PathBuf, Vec<u8>)>,
}

impl Plan {
    /// Every data and template file of the workspace, and every output of its matrix as the
    /// last `build --all` wrote it.
    fn of(root: &Path) -> Self {
        let mut inputs = vec![root.join("promptc.toml")];
        for dir in [
            "variants",
            "components",
            "partials",
            "tools",
            "examples/contexts",
        ] {
            inputs.extend(files_under(&root.join(dir)));
        }
        let index = std::fs::read_to_string(root.join("examples/prompts/.promptc-outputs"))
            .unwrap_or_default();
        let outputs = index
            .lines()
            .map(|line| {
                let path = root.join(line);
                let bytes = std::fs::read(&path).unwrap();
                (path, bytes)
            })
            .collect();
        Plan { inputs, outputs }
    }

    fn input_bytes(&self) -> u64 {
        self.inputs
            .iter()
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .sum()
    }

    fn output_bytes(&self) -> u64 {
        self.outputs.iter().map(|(_, b)| b.len() as u64).sum()
    }

    /// The plan as the floor process reads it: input paths, then `>` and output paths.
    fn write(&self) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        for input in &self.inputs {
            writeln!(file, "{}", input.display()).unwrap();
        }
        for (output, _) in &self.outputs {
            writeln!(file, ">{}", output.display()).unwrap();
        }
        file
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// The floor process (`benches/common/io_floor.rs`), built once per run with `rustc` alone:
/// the bench binary itself would not do, since its start-up (promptc's allocator, a binary of
/// tens of megabytes) is a millisecond and more that no reading or writing needs. Named for
/// this process, so that two benches sharing a target folder do not build over each other;
/// `main` removes it at the end.
fn floor_binary() -> &'static Path {
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARY.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/common/io_floor.rs");
        let binary =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("io_floor-{}", std::process::id()));
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let status = Command::new(rustc)
            .args(["--edition=2024", "-Copt-level=3", "-o"])
            .arg(&binary)
            .arg(&source)
            .status()
            .expect("rustc builds the I/O floor");
        assert!(
            status.success(),
            "rustc could not build {}",
            source.display()
        );
        binary
    })
}

fn floor_process(plan: &Path, mode: &str) -> Duration {
    let binary = floor_binary();
    let start = Instant::now();
    let status = Command::new(binary).arg(plan).arg(mode).status().unwrap();
    assert!(status.success());
    start.elapsed()
}

/// The promptc binary, run on `root`.
fn promptc(root: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_promptc"))
        .arg("-C")
        .arg(root)
        .args(args)
        .env("PROMPTC_NO_CACHE", "1")
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .unwrap()
}

fn timed(root: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let output = promptc(root, args);
    let elapsed = start.elapsed();
    assert!(
        output.status.success(),
        "promptc {args:?}: {}",
        stderr(&output)
    );
    elapsed
}

/// The command line run in this process; its peak resident memory goes to stderr last.
fn run_promptc(args: &[String]) -> ExitCode {
    use clap::Parser;
    let cli = promptc::cli::Cli::parse_from(
        std::iter::once("promptc".to_string()).chain(args.iter().cloned()),
    );
    let code = promptc::cli::run(cli);
    eprintln!("peak-rss-kb {}", peak_rss_kb());
    code
}

/// The peak resident memory of one command, in bytes.
fn peak_memory(root: &Path, args: &[&str]) -> u64 {
    let output = Command::new(std::env::current_exe().unwrap())
        .arg("--promptc")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("PROMPTC_NO_CACHE", "1")
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let text = stderr(&output);
    text.lines()
        .find_map(|l| l.strip_prefix("peak-rss-kb "))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// In-process compiles: the path an agent takes through the bindings.

fn in_process(root: &Path) {
    let workspace = promptc::load_workspace(root).unwrap().workspace;
    let compiler = promptc::Compiler::new(&workspace);
    let context = workspace.context("basic").unwrap().clone();
    let request = Request::new(Selection::family("next-gen"), context.clone());
    const RUNS: usize = 2000;
    const ROUNDS: usize = 20;
    // An agent compiles for the same context request after request, and the compiler starts
    // from what it made of that context before; a context it has not seen is made afresh.
    let mut unseen: Vec<Request> = (0..RUNS + RUNS / 10)
        .map(|index| {
            let mut context = context.clone();
            context.cwd = format!("/home/dev/shop-{index}");
            Request::new(Selection::family("next-gen"), context)
        })
        .collect();
    let mut routed = context;
    routed.model.id = "claude-sonnet-4-5".into();
    routed.model.provider = "anthropic".into();
    let routed = Request::new(Selection::route(), routed);
    let native = Request::new(
        Selection::family("native-next-gen"),
        workspace.context("native-tools").unwrap().clone(),
    );
    // In turn, round after round, as the whole commands are: measured one after the other,
    // one of them could meet a slow second the others did not.
    let [warm, unseen, routed, native] = latencies_in_turn(
        RUNS,
        ROUNDS,
        [
            &mut || drop(black_box(compiler.compile(&request).unwrap())),
            &mut || {
                let request = unseen.pop().unwrap();
                drop(black_box(compiler.compile(&request).unwrap()));
            },
            &mut || drop(black_box(compiler.compile(&routed).unwrap())),
            &mut || drop(black_box(compiler.compile(&native).unwrap())),
        ],
    );
    println!(
        "  in-process compile, next-gen × basic, warm: median {}  p99 {}  target median ≤ 100 µs: {}",
        us(percentile(&warm, 50)),
        us(percentile(&warm, 99)),
        met(percentile(&warm, 50) <= Duration::from_micros(100))
    );
    println!(
        "  in-process compile, next-gen × a context not seen before: median {}  p99 {}",
        us(percentile(&unseen, 50)),
        us(percentile(&unseen, 99)),
    );
    for (what, samples) in [
        ("routed by model id", &routed),
        ("with tool definitions", &native),
    ] {
        println!(
            "  in-process compile, {what}: median {}  p99 {}  target median ≤ 100 µs: {}",
            us(percentile(samples, 50)),
            us(percentile(samples, 99)),
            met(percentile(samples, 50) <= Duration::from_micros(100))
        );
    }
}

/// A context as large as a data file may be (4 MB: 23,000 MCP tools), in a copy of the
/// shipped library: the peak memory of loading it (`list`), against the file's size. Each of
/// its values is a map entry of a document, a place in the file and a field of the context.
fn large_context() {
    let shipped = copy_of_shipped_library();
    let root = shipped.path();
    let list = || peak_memory(root, &["list"]);
    let without = list();
    let mut text =
        String::from("cwd = \"/p\"\n[[mcp_servers]]\nname = \"big\"\ncommand = \"big\"\n");
    let mut tools = 0;
    while text.len() < 4 * 1024 * 1024 - 512 {
        text.push_str(&format!(
            "[[mcp_servers.tools]]\nname = \"tool_{tools}\"\ndescription = \"Does thing {tools} with care.\"\ninput_schema = {{ type = \"object\", properties = {{ a = {{ type = \"string\" }} }}, required = [\"a\"] }}\n"
        ));
        tools += 1;
    }
    std::fs::write(root.join("examples/contexts/mcp-heavy.toml"), &text).unwrap();
    let with = list();
    println!(
        "  peak memory of list with a {} context of {tools} MCP tools: {} ({} without it)",
        size(text.len() as u64),
        size(with),
        size(without)
    );
}

/// The token tables: loading them once, and counting the shipped matrix.
fn tokens(root: &Path) {
    let first_count = {
        let start = Instant::now();
        Encoding::O200k.count("warm the tables");
        start.elapsed()
    };
    let workspace = promptc::load_workspace(root).unwrap().workspace;
    let outputs = promptc::compile_matrix(&promptc::Compiler::new(&workspace), None).outputs;
    let count = median(10, || {
        let start = Instant::now();
        black_box(
            outputs
                .iter()
                .map(|(_, compiled)| Encoding::O200k.count(&compiled.prompt))
                .sum::<usize>(),
        );
        start.elapsed()
    });
    println!(
        "  o200k tables: load {} once; count the {} outputs {}",
        ms(first_count),
        outputs.len(),
        ms(count)
    );
}

// ---------------------------------------------------------------------------------------------
// Scale.

fn scale(variants: usize, tools: usize, contexts: usize, full: bool) {
    let dir = scale_matrix(variants, tools, contexts);
    let root = dir.path();
    println!(
        "scale matrix{}: {variants} variants × {tools} tools × {contexts} contexts",
        if full {
            ""
        } else {
            " (a tenth; PROMPTC_BENCH_SCALE=full for 100 × 1,000 × 20)"
        }
    );
    // Fresh outputs: every file is written.
    let fresh = {
        let _ = std::fs::remove_dir_all(root.join("examples/prompts"));
        timed(root, &["build", "--all", "-q"])
    };
    let plan = Plan::of(root);
    let plan_file = plan.write();
    println!(
        "  {} outputs, {}",
        plan.outputs.len(),
        size(plan.output_bytes())
    );
    let write_floor = median(3, || floor_process(plan_file.path(), "write"));
    report("build --all, every file new", fresh, write_floor, Some(3.0));
    let [current, compare_floor, validate] = side_by_side(
        3,
        [
            &mut || timed(root, &["build", "--all", "-q"]),
            &mut || floor_process(plan_file.path(), "compare"),
            &mut || timed(root, &["validate", "-q"]),
        ],
    );
    report("build --all, outputs current", current, compare_floor, None);
    println!(
        "  validate {:>10}  ×{:.2} build --all (target ≤ 2×: {})",
        ms(validate),
        validate.as_secs_f64() / current.as_secs_f64(),
        met(validate.as_secs_f64() <= 2.0 * current.as_secs_f64())
    );
    let peak = peak_memory(root, &["build", "--all", "-q"]);
    // A tenth of the matrix says nothing of the target: what a run keeps can grow with the
    // outputs (the full matrix once peaked at 470 MB, 300 MB of it plans kept, where a tenth
    // took 25 MB).
    if full {
        println!(
            "  peak memory of build --all {}  (target < 200 MB: {})",
            size(peak),
            met(peak < 200 * 1024 * 1024)
        );
    } else {
        println!(
            "  peak memory of build --all {}  (target < 200 MB at full scale: measured with PROMPTC_BENCH_SCALE=full)",
            size(peak)
        );
    }
}

/// Doubling tools, contexts or variants, from a base matrix: at most 2.2× the time.
fn doubling() {
    const ROUNDS: usize = 9;
    println!("doubling (build --all, outputs current, median of {ROUNDS}, side by side):");
    let base = (8, 100, 4);
    let shapes = [
        base,
        (base.0, base.1 * 2, base.2),
        (base.0, base.1, base.2 * 2),
        (base.0 * 2, base.1, base.2),
    ];
    let dirs = shapes.map(|(v, t, c)| {
        let dir = scale_matrix(v, t, c);
        timed(dir.path(), &["build", "--all", "-q"]);
        dir
    });
    let [d0, d1, d2, d3] = &dirs;
    // The base and each doubled workspace in turn, round after round: measured one after the
    // other, a slow minute during one of them read as growth (×2.8 for a doubling that
    // measured ×1.3 a minute earlier).
    let [before, tools, contexts, variants] = side_by_side(
        ROUNDS,
        [
            &mut || timed(d0.path(), &["build", "--all", "-q"]),
            &mut || timed(d1.path(), &["build", "--all", "-q"]),
            &mut || timed(d2.path(), &["build", "--all", "-q"]),
            &mut || timed(d3.path(), &["build", "--all", "-q"]),
        ],
    );
    for (label, after) in [
        ("tools", tools),
        ("contexts", contexts),
        ("variants", variants),
    ] {
        let ratio = after.as_secs_f64() / before.as_secs_f64();
        println!(
            "  ×2 {label:<9} {} → {}  ×{ratio:.2} (target ≤ 2.2×: {})",
            ms(before),
            ms(after),
            met(ratio <= 2.2)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Workspaces.

fn copy_of_shipped_library() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let init = Command::new(env!("CARGO_BIN_EXE_promptc"))
        .arg("init")
        .arg(dir.path())
        .arg("-q")
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", stderr(&init));
    dir
}

fn writer(dir: &Path) -> impl Fn(&str, &str) + use<> {
    let dir = dir.to_path_buf();
    move |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// Filler prose of about `bytes` bytes, varied by `seed` so outputs differ.
fn prose(seed: usize, bytes: usize) -> String {
    const WORDS: [&str; 16] = [
        "check",
        "the",
        "file",
        "before",
        "editing",
        "it",
        "and",
        "keep",
        "changes",
        "small",
        "run",
        "tests",
        "after",
        "each",
        "step",
        "carefully",
    ];
    let mut text = String::new();
    let mut i = seed;
    while text.len() < bytes {
        text.push_str(WORDS[i % WORDS.len()]);
        i = i.wrapping_mul(31).wrapping_add(7);
        text.push(if i.is_multiple_of(13) { '\n' } else { ' ' });
    }
    text
}

/// A dozen families with long templates and per-family overrides, 25 tools with per-family
/// specs, 25 components, a dozen regex clean-up rules, 4 contexts: 48 outputs of 20-60 KB.
fn registry_shape() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let write = writer(dir.path());
    let families: Vec<String> = (0..12).map(|f| format!("family{f}")).collect();
    let mut manifest = String::from(
        "fallback_family = \"family0\"\ndefault_context = \"c0\"\n[build]\nout = \"examples/prompts\"\n",
    );
    for rule in 0..12 {
        manifest.push_str(&format!(
            "\n[[postprocess]]\nrule = \"regex\"\npattern = \"(?m)^NOTE{rule}: (\\\\w+)\"\nreplace = \"Note: $1\"\n"
        ));
    }
    manifest.push_str("\n[[postprocess]]\nrule = \"collapse_blank_lines\"\n");
    write("promptc.toml", &manifest);
    for c in 0..4 {
        write(
            &format!("examples/contexts/c{c}.toml"),
            &format!(
                "date = \"2026-01-0{}\"\ncwd = \"/work/project{c}\"\nmode = \"{}\"\n",
                c + 1,
                if c % 2 == 0 { "act" } else { "plan" }
            ),
        );
    }
    let components: Vec<String> = (0..25).map(|c| format!("section{c}")).collect();
    for (c, id) in components.iter().enumerate() {
        write(
            &format!("components/{id}.toml"),
            &format!(
                "id = \"{id}\"\n{}",
                if c % 5 == 4 {
                    "when = \"mode == 'act'\"\n"
                } else {
                    ""
                }
            ),
        );
        write(
            &format!("components/{id}.md"),
            &format!(
                "## Section {c}\n\nNOTE{}: working in {{{{ CWD }}}}\n\n{}",
                c % 12,
                prose(c, 600)
            ),
        );
    }
    let tools: Vec<String> = (0..25).map(|t| format!("tool{t}")).collect();
    for (t, id) in tools.iter().enumerate() {
        let mut spec = format!(
            "id = \"{id}\"\ndescription = \"{}\"\n\n[[parameters]]\nname = \"path\"\nrequired = true\ninstruction = \"The file to act on.\"\n\n[[parameters]]\nname = \"limit\"\nrequired = false\ntype = \"integer\"\ninstruction = \"How many lines at most.\"\n",
            prose(t, 300).replace('\n', " ")
        );
        for family in families.iter().skip(t % 3).step_by(3) {
            spec.push_str(&format!(
                "\n[families.{family}]\ndescription = \"{}\"\n",
                prose(t + 100, 200).replace('\n', " ")
            ));
        }
        write(&format!("tools/{id}.toml"), &spec);
    }
    let quoted = |ids: &[String]| {
        ids.iter()
            .map(|id| format!("\"{id}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (f, family) in families.iter().enumerate() {
        let mut base = format!(
            "# Agent for {family}\n\n{}\n\n",
            prose(f, 1_000 + f * 3_000)
        );
        for id in &components {
            base.push_str(&format!("{{{{ {}_SECTION }}}}\n\n", id.to_uppercase()));
        }
        base.push_str("{{ TOOLS }}\n");
        write(&format!("variants/{family}.md"), &base);
        let mut variant = format!(
            "id = \"{family}\"\ntemplate_file = \"{family}.md\"\ncomponents = [{}]\ntools = [{}]\n",
            quoted(&components),
            quoted(&tools)
        );
        for c in (f % 4..25).step_by(4) {
            write(
                &format!("variants/{family}-section{c}.md"),
                &format!("## Section {c} for {family}\n\n{}", prose(f * 100 + c, 900)),
            );
            variant.push_str(&format!(
                "\n[overrides.components.section{c}]\ntemplate_file = \"{family}-section{c}.md\"\n"
            ));
        }
        write(&format!("variants/{family}.toml"), &variant);
    }
    dir
}

/// `variants` variants (each with its own template), `tools` tools, `contexts` contexts; every
/// variant lists every tool; no token budget.
fn scale_matrix(variants: usize, tools: usize, contexts: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let write = writer(dir.path());
    write(
        "promptc.toml",
        "fallback_family = \"v0\"\ndefault_context = \"c0\"\n[build]\nout = \"examples/prompts\"\n",
    );
    for c in 0..contexts {
        write(
            &format!("examples/contexts/c{c}.toml"),
            &format!("date = \"2026-01-01\"\ncwd = \"/work/p{c}\"\n"),
        );
    }
    let mut list = Vec::new();
    for t in 0..tools {
        list.push(format!("\"t{t}\""));
        write(
            &format!("tools/t{t}.toml"),
            &format!(
                "id = \"t{t}\"\ndescription = \"Tool {t}: {}\"\n[[parameters]]\nname = \"p\"\ninstruction = \"A value.\"\n",
                prose(t, 200).replace('\n', " ")
            ),
        );
    }
    write(
        "components/intro.toml",
        "id = \"intro\"\ntemplate = \"Working in {{ CWD }} on {{ CURRENT_DATE }}.\"\n",
    );
    for v in 0..variants {
        write(
            &format!("variants/v{v}.toml"),
            &format!(
                "id = \"v{v}\"\ntemplate = \"Variant {v}.\\n{{{{ INTRO_SECTION }}}}\\n{{{{ TOOLS }}}}\\n\"\ncomponents = [\"intro\"]\ntools = [{}]\n",
                list.join(", ")
            ),
        );
    }
    dir
}

// ---------------------------------------------------------------------------------------------
// Helpers.

/// The median time of each measurement, taken in turn, round after round: a machine that
/// slows down for a while slows the floor down with the commands compared with it, where
/// measuring one after the other put the floor and a command in different weather.
fn side_by_side<const N: usize>(
    rounds: usize,
    mut measures: [&mut dyn FnMut() -> Duration; N],
) -> [Duration; N] {
    let mut samples: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(rounds));
    for _ in 0..rounds {
        for (measure, samples) in measures.iter_mut().zip(samples.iter_mut()) {
            samples.push(measure());
        }
    }
    samples.map(|mut samples| {
        samples.sort();
        samples[samples.len() / 2]
    })
}

fn median(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut samples: Vec<Duration> = (0..runs).map(|_| f()).collect();
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn size(bytes: u64) -> String {
    if bytes >= 10 << 20 {
        format!("{} MB", bytes >> 20)
    } else {
        format!("{} KB", bytes >> 10)
    }
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "not met" }
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
