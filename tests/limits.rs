//! Bounded resources (issue 8, items 5-7): what a template may cost in time and memory, and
//! how large templates and their errors are handled. Limits are lowered through settings where
//! the defaults would make a test slow.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::time::{Duration, Instant};

use common::Fixture;

/// A component template of `lines` lines, each reading a name nothing defines.
fn many_undefined_names(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("Line {i} reads {{{{ cwd }}}} and {{{{ nope_{i} }}}}, then some text.\n"))
        .collect()
}

// Item 7: every undefined name was looked up by copying and scanning the whole template, and
// each diagnostic was rendered from the whole file: 20 000 errors in a 1 MB template took over
// 30 seconds. A file's first problems are reported, the rest counted in one line, and the
// closing count is of all of them.
#[test]
fn many_errors_in_a_large_template_are_counted_in_linear_time() {
    let lines = 20_000;
    let workspace = Fixture::minimal()
        .file("components/intro.md", many_undefined_names(lines))
        .write();
    let started = Instant::now();
    let run = workspace.validate_human();
    let took = started.elapsed();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("error: {lines} errors")),
        "{}",
        &run.stderr[run.stderr.len().saturating_sub(500)..]
    );
    let first = "error[undefined-placeholder]: `nope_0` is not defined by anything";
    let column = "Line 0 reads {{ cwd }} and {{ ".len() + 1;
    let at = run.stderr.find(first).expect("the first name is reported");
    assert!(
        run.stderr[at..].contains(&format!(" --> components/intro.md:1:{column}\n")),
        "{}",
        &run.stderr[at..]
    );
    let shown = 100;
    assert_eq!(
        run.stderr.matches("error[undefined-placeholder]").count(),
        shown,
        "{}",
        &run.stderr[run.stderr.len().saturating_sub(2000)..]
    );
    // The rest: one error where the first left out is.
    let more = format!(
        "error[more-problems]: this file has {} more errors, not shown: only a file's first {shown} problems are reported",
        lines - shown
    );
    let at = run
        .stderr
        .find(&more)
        .unwrap_or_else(|| panic!("{}", &run.stderr[run.stderr.len().saturating_sub(2000)..]));
    let column = format!("Line {shown} reads {{{{ cwd }}}} and {{{{ ").len() + 1;
    assert!(
        run.stderr[at..].contains(&format!("--> components/intro.md:{}:{column}\n", shown + 1)),
        "{}",
        &run.stderr[at..]
    );
    assert!(took < Duration::from_secs(15), "validate took {took:?}");
}

// One file of a few megabytes held hundreds of thousands of one mistake, each reported with
// its line: 350 000 unknown keys in a 4 MB variant took 21 seconds and printed 140 MB (JSON:
// 1.4 GB of memory), and 300 000 unknown ids in one 3 MB line took 154 seconds, each quoting
// that line. A file reports its first problems and counts the rest, in every format.
#[test]
fn a_file_of_very_many_problems_reports_its_first_and_counts_the_rest() {
    let keys: String = (0..50_000).map(|i| format!("k{i} = 1\n")).collect();
    let ids: Vec<String> = (0..50_000).map(|i| format!("\"c{i}\"")).collect();
    let workspace = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!("{}{keys}", common::VARIANT),
        )
        .file(
            "variants/other.toml",
            format!(
                "id = \"other\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\",{}]\ntools = [\"read_file\"]\n",
                ids.join(",")
            ),
        )
        .write();
    let run = workspace.validate_human();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("\nerror: 100000 errors"),
        "{}",
        &run.stderr[run.stderr.len().saturating_sub(500)..]
    );
    assert_eq!(run.stderr.matches("error[unknown-key]").count(), 100);
    assert_eq!(run.stderr.matches("error[unknown-reference]").count(), 100);
    for (file, line) in [("variants/generic.toml", 105), ("variants/other.toml", 3)] {
        let more = "error[more-problems]: this file has 49900 more errors, not shown";
        let told = run
            .stderr
            .split("\n\n")
            .find(|told| told.starts_with(more) && told.contains(&format!("--> {file}:")))
            .unwrap_or_else(|| {
                panic!(
                    "{file}: {}",
                    &run.stderr[run.stderr.len().saturating_sub(3000)..]
                )
            });
        assert!(
            told.contains(": only a file's first 100 problems are reported\n")
                && told.contains(&format!("--> {file}:{line}:")),
            "{told:?}"
        );
    }
    assert!(run.stderr.len() < 200_000, "{} bytes", run.stderr.len());
    // JSON: the same records, bounded as well.
    let json = workspace.run(&["validate", "--format", "json"]);
    assert_eq!(json.code, 1);
    assert_eq!(json.stdout.matches("\"more-problems\"").count(), 2);
    assert!(json.stdout.len() < 400_000, "{} bytes", json.stdout.len());
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        document["errors"], 100_000,
        "the closing count of the text report"
    );
}

// Many files with a few dozen mistakes each (a bad rename across a registry, or a pull
// request made to flood the log): 8,000 tools with 150 unknown keys made a report of 142 MB
// from 590 MB of memory in 8 seconds. A run reports its first 1,000 problems and counts the
// rest, in every format, and holds no more of them than it shows while it loads.
#[test]
fn a_run_of_problems_in_many_files_reports_its_first_thousand_and_counts_the_rest() {
    let mut fixture = Fixture::minimal();
    for tool in 0..300 {
        let keys: String = (0..50).map(|key| format!("k{key} = 1\n")).collect();
        fixture = fixture.file(
            &format!("tools/t{tool:03}.toml"),
            format!("id = \"t{tool:03}\"\ndescription = \"A tool.\"\n{keys}"),
        );
    }
    let workspace = fixture.write();
    let run = workspace.validate_human();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr.matches("error[unknown-key]").count(), 1000);
    // Each file is within its own limit: the first 20 are shown whole, the other 280 not at all.
    let more = "error[more-problems]: 14000 more errors in 280 files, not shown: only a run's first 1000 problems are reported\n --> tools/t020.toml:3:1\n";
    assert_eq!(
        run.stderr.matches("error[more-problems]").count(),
        1,
        "{}",
        &run.stderr[run.stderr.len().saturating_sub(2000)..]
    );
    assert!(
        run.stderr.contains(more),
        "{}",
        &run.stderr[run.stderr.len().saturating_sub(2000)..]
    );
    assert!(run.stderr.contains("tools/t019.toml:52:1"));
    assert!(!run.stderr.contains("tools/t020.toml:4:1"));
    assert!(
        run.stderr.ends_with("\nerror: 15000 errors\n"),
        "{}",
        &run.stderr[run.stderr.len().saturating_sub(500)..]
    );
    // JSON: the same records, and the counts of every problem, those the record of the rest
    // counts among them.
    let json = workspace.run(&["validate", "--format", "json"]);
    assert_eq!(json.code, 1);
    assert_eq!(json.stdout.matches("\"unknown-key\"").count(), 1000);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["errors"], 15000);
    assert_eq!(document["warnings"], 0);
    let more: Vec<&serde_json::Value> = document["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|record| record["code"] == "more-problems")
        .collect();
    assert_eq!(more.len(), 1);
    assert_eq!(
        more[0]["not_shown"],
        serde_json::json!({"errors": 14000, "warnings": 0})
    );
}

/// The minimal workspace with `manifest` appended to its manifest and `template` as the
/// `intro` component's template.
/// The minimal variant listing no tools: for base templates of these tests that write none
/// (a variant that lists tools it never writes is warned of, as is a tool no variant lists:
/// the minimal fixture's `read_file` is left out beside it).
const NO_TOOLS: &str =
    "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\"]\ntools = []\n";

fn with_template(manifest: &str, template: &str) -> Fixture {
    Fixture::minimal()
        .file("promptc.toml", format!("{}{manifest}", common::MANIFEST))
        .file("components/intro.md", template)
}

// A list literal takes tens of times its bytes once parsed (an 8 MB one about 360 MB), and a
// workspace's templates and conditions are all kept parsed: fifteen partials of 7.8 MB, within
// the workspace's byte limit, took `validate` to 3.9 GB. The code of templates and conditions
// is bounded together (4 MiB): the template, or the condition, that goes past it is an error,
// and is not parsed; a workspace's ordinary code is far below it.
#[test]
fn the_code_of_templates_and_conditions_is_bounded() {
    let items = |count: usize| {
        (0..count)
            .map(|i| format!("[{i},[{i}]]"))
            .collect::<Vec<_>>()
            .join(",")
    };
    // 5 MiB of code in one partial.
    let big = format!("{{% set x = [{}] %}}ok\n", items(400_000));
    assert!(big.len() > 5 << 20);
    let report = Fixture::minimal()
        .file("partials/big.md", &big)
        .file("components/intro.md", "{% include \"partials/big.md\" %}\n")
        .validate();
    let found = report.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str(), found.line),
        ("too-much-code", "partials/big.md", 1),
        "{found:?}"
    );
    assert!(
        found.message.contains("more than 4194304 bytes of code"),
        "{found:?}"
    );
    // 3 MiB of code in a template and 1.5 MiB in a condition: the condition goes past it.
    let three = format!("{{% set x = [{}] %}}ok\n", items(200_000));
    assert!(three.len() > 3 << 20 && three.len() < 4 << 20);
    let condition = format!("[{}] | length > 0", items(130_000));
    let report = Fixture::minimal()
        .file("components/intro.md", &three)
        .file(
            "components/intro.toml",
            format!("{}when = \"{condition}\"\n", common::COMPONENT),
        )
        .validate();
    let found = report.single();
    assert_eq!(
        (found.code.as_str(), found.file.as_str()),
        ("too-much-code", "components/intro.toml"),
        "{found:?}"
    );
    // Both within it: valid.
    let report = Fixture::minimal()
        .file(
            "components/intro.md",
            format!("{{% set x = [{}] %}}ok\n", items(1_000)),
        )
        .validate();
    assert!(report.items().is_empty(), "{:?}", report.items());
}

// `chain`, `zip`, slices, `*` and `+` make lazy values that read what they were given only when
// they are read themselves: a statement repeated ten thousand times (`{% set a = a[0:] %}`)
// wrapped `a` as many times, and reading it overflowed the stack; `{% set a = a|chain(a) %}`
// 33 times made a value of eight billion items, and printing it asked for 100 GB at once.
#[test]
fn lazy_values_cannot_wrap_or_double_without_a_bound() {
    let wrapped = |start: &str, statement: &str, times: usize, end: &str| {
        format!(
            "{{% set a = {start} %}}{}{{{{ {end} }}}}\n",
            statement.repeat(times)
        )
    };
    let too_deep =
        "wraps lazy sequences (`chain`, `zip`, `reverse`, slices, `*`) more than 100 deep";
    let too_large = "joining these sequences would make one of more than 1000000 items or parts";
    for (template, message) in [
        (
            wrapped("range(2)", "{%set a=a[0:]%}", 10_000, "a|list"),
            too_deep,
        ),
        (
            wrapped("range(2)", "{%set a=a*1%}", 10_000, "a|list"),
            too_deep,
        ),
        (
            wrapped("range(2)", "{%set a=a|zip%}", 3_000, "a|list"),
            too_deep,
        ),
        (
            wrapped("range(2)", "{%set a=a|chain(range(0))%}", 10_000, "a|list"),
            too_deep,
        ),
        (
            wrapped("{'k': 1}", "{%set a=a|chain({})%}", 10_000, "a.k"),
            too_deep,
        ),
        (wrapped("[1]", "{%set a=a|chain(a)%}", 33, "a"), too_large),
        (wrapped("[1]", "{%set a=a+a%}", 33, "a"), too_large),
    ] {
        let (_workspace, output) = build_all_on_the_matrix_threads(&template);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{}: {stderr}",
            &template[..60]
        );
        assert!(
            stderr.contains("error[render-failed]") && stderr.contains(message),
            "{}: {stderr}",
            &template[..60]
        );
    }
    // What they are for still works, a few wrappers deep.
    let template = format!(
        "{}{}{}\n",
        wrapped("range(3)", "{%set a=a|chain([3])%}", 50, "a|list|length"),
        wrapped("range(5)", "{%set a=a[1:]%}", 3, "a|list"),
        "{{ ([1] * 3)|zip('abc')|list }} {{ {'a': 1}|chain({'b': 2})|dictsort }}"
    );
    let workspace = with_template("", &template).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(
        run.stdout
            .contains("53\n[3,4]\n[[1,\"a\"],[1,\"b\"],[1,\"c\"]] [[\"a\",1],[\"b\",2]]"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

/// `build --all` of the minimal workspace with `template` as the intro component's template
/// and twelve contexts: the matrix compiles on its threads, whose stacks are smaller than the
/// main thread's, in three runs of four.
fn build_all_on_the_matrix_threads(template: &str) -> (common::Workspace, std::process::Output) {
    let mut fixture = with_template("", template);
    for name in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"] {
        fixture = fixture.file(&format!("examples/contexts/{name}.toml"), common::CONTEXT);
    }
    let workspace = fixture.write();
    let output = workspace
        .command()
        .args(["build", "--all"])
        .output()
        .unwrap();
    (workspace, output)
}

/// The one error of a workspace whose intro template goes over a limit, as
/// (code, file, line, column, message).
fn single_error(manifest: &str, template: &str) -> (String, String, u64, u64, String) {
    let report = with_template(manifest, template).validate();
    let d = report.single();
    (d.code, d.file, d.line, d.column, d.message)
}

/// The 1-based column of `needle` on the second line of `template`.
fn column_on_line_2(template: &str, needle: &str) -> u64 {
    let line = template.lines().nth(1).unwrap();
    line.find(needle).unwrap() as u64 + 1
}

const SMALL_TEXT: &str = "[limits]\nrender_bytes = 1000\n";

fn too_much(
    line: u64,
    column: u64,
    limit: u64,
    setting: &str,
) -> (String, String, u64, u64, String) {
    (
        "too-much-text".into(),
        "components/intro.md".into(),
        line,
        column,
        format!("this template builds more than {limit} bytes of text (`{setting}`)"),
    )
}

// Item 5: the template of the report reached 14.6 GB. `join` now checks the size of what it
// would build before building it.
#[test]
fn the_reported_hostile_template_fails_fast_at_default_settings() {
    let template = "Intro.\n{{ range(100000)|join(\"x\" * 30000) }}\n";
    let started = Instant::now();
    let error = single_error("", template);
    let column = column_on_line_2(template, "join(");
    assert_eq!(error, too_much(2, column, 16 << 20, "limits.render_bytes"));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn text_written_by_expressions_is_bounded_even_when_captured() {
    assert_eq!(
        single_error(SMALL_TEXT, "Intro.\n{{ \"x\" * 2000 }}\n"),
        too_much(2, 4, 1000, "limits.render_bytes"),
        "points at the expression written"
    );
    // Captured by `{% set %}`, the text never reaches the output but still costs memory.
    let template = "Intro.\n{% set s %}{% for i in range(3) %}{{ \"y\" * 400 }}{% endfor %}{% endset %}{{ s|length }}\n";
    let column = column_on_line_2(template, "\"y\"");
    assert_eq!(
        single_error(SMALL_TEXT, template),
        too_much(2, column, 1000, "limits.render_bytes")
    );
}

// A template's own text written into a capture went into a string nothing measured: a loop in
// a macro repeating ten kilobytes took gigabytes and ended the process on a failed allocation,
// and in a `set` block, copying its text each turn, ran for minutes. It counts with what its
// expressions write there, against `limits.render_bytes`, in every kind of capture; a capture
// within the limit renders as before.
#[test]
fn raw_text_written_into_a_capture_is_bounded() {
    let captures = [
        "{% set s %}{% for i in range(100) %}TEXT{% endfor %}{% endset %}{{ s|length }}",
        "{% filter length %}{% for i in range(100) %}TEXT{% endfor %}{% endfilter %}",
        "{% macro m() %}{% for i in range(100) %}TEXT{% endfor %}{% endmacro %}{{ m()|length }}",
        "{% macro m() %}{{ caller()|length }}{% endmacro %}{% call m() %}{% for i in range(100) %}TEXT{% endfor %}{% endcall %}",
    ];
    for capture in captures {
        let template = format!("Intro.\n{}\n", capture.replace("TEXT", &"y".repeat(20)));
        let (code, file, line, _, message) = single_error(SMALL_TEXT, &template);
        assert_eq!(
            (code.as_str(), file.as_str(), line, message.as_str()),
            (
                "too-much-text",
                "components/intro.md",
                2,
                "this template builds more than 1000 bytes of text (`limits.render_bytes`)"
            ),
            "{capture}"
        );
        // Ten turns write 200 bytes, within the limit: rendered, the capture measured.
        let within = template.replace("range(100)", "range(10)");
        let fixture = with_template(SMALL_TEXT, &within);
        let workspace = fixture.write();
        let built = workspace.run(&["build", "--context", "basic"]);
        assert_eq!(built.code, 0, "{capture}: {}", built.stderr);
        assert!(
            built.stdout.contains("Intro.\n200"),
            "{capture}: {}",
            built.stdout
        );
    }
}

#[test]
fn raw_text_over_the_limit_points_at_the_template() {
    let template = format!("{}\n", "z".repeat(2000));
    assert_eq!(
        single_error(SMALL_TEXT, &template),
        too_much(1, 1, 1000, "limits.render_bytes")
    );
}

#[test]
fn filters_check_the_size_of_what_they_would_build() {
    let cases = [
        ("{{ (range(100)|join(\"x\" * 20))|length }}", "join("),
        (
            "{{ (\"a\" * 100)|replace(\"a\", \"b\" * 20)|length }}",
            "replace(",
        ),
        ("{{ (\"a\\n\" * 100)|indent(20)|length }}", "indent("),
        ("{{ \"%5000s\"|format(\"x\")|length }}", "format("),
        ("{{ range(50)|tojson(indent=200)|length }}", "tojson("),
    ];
    for (expression, filter) in cases {
        let template = format!("Intro.\n{expression}\n");
        let column = column_on_line_2(&template, filter);
        assert_eq!(
            single_error(SMALL_TEXT, &template),
            too_much(2, column, 1000, "limits.render_bytes"),
            "{expression}"
        );
    }
    let (code, _, line, _, message) =
        single_error("", "Intro.\n{{ [1]|batch(1000000, 0)|length }}\n");
    assert_eq!((code.as_str(), line), ("render-failed", 2));
    assert!(message.contains("above the limit of 100000"), "{message}");
}

// minijinja builds some text itself, in one instruction: the text of a value passed to a
// string argument (`lower`, `trim`, `startingwith`, `e`…), and `~`, `+` and `*` on strings. A
// list's text is measured before it is built, and an operator's result before it is joined: a
// value that holds its parts many times has a text of terabytes, and doubling a string in a
// loop took all memory within thirty steps.
#[test]
fn text_minijinja_builds_itself_is_bounded() {
    let cases = [
        "{{ (\"a\" * 600 + \"b\" * 600)|length }}",
        "{{ (\"a\" * 600 ~ \"b\" * 600)|length }}",
        "{{ (\"ab\" * 600)|length }}",
        "{{ (range(400)|list)|lower|length }}",
        "{{ (range(400)|list)|trim|length }}",
        "{{ (range(400)|list)|e|length }}",
        "{{ range(400)|list is startingwith \"[\" }}",
    ];
    for expression in cases {
        let (code, file, line, _, message) =
            single_error(SMALL_TEXT, &format!("Intro.\n{expression}\n"));
        assert_eq!(
            (code.as_str(), file.as_str(), line),
            ("too-much-text", "components/intro.md", 2),
            "{expression}: {message}"
        );
    }
    // Within the limit, each is what it was.
    let template = "Intro.\n{{ (\"a\" * 400 ~ \"b\" * 400)|length }} {{ (\"a\" + \"b\") * 2 }} \
                    {{ [1, 2]|lower }} {{ [1]|e }} {{ [1] is startingwith \"[\" }}\n";
    let workspace = with_template(SMALL_TEXT, template).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(
        run.stdout.contains("800 abab [1, 2] [1] true"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    // At the default limit, a value of a trillion items is refused at once, not built.
    for write in [
        "{{ ns.x|lower|length }}",
        "{{ (ns.x ~ \"\")|length }}",
        "{{ debug(ns.x)|length }}",
        "{{ debug()|length }}",
        "{{ ns.x in 'abc' }}",
    ] {
        let template = format!(
            "{{% set ns = namespace(x=[1]) %}}{{% for i in range(40) %}}\
             {{% set ns.x = [ns.x, ns.x] %}}{{% endfor %}}{write}\n"
        );
        let (code, _, line, _, message) = single_error("", &template);
        assert_eq!(
            (code.as_str(), line),
            ("too-much-text", 1),
            "{write}: {message}"
        );
    }
    // Hashing it (as a map key, in `unique`) walked its trillion paths; it now takes the
    // time of its top level.
    let template = "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}\
                    {% set ns.x = [ns.x, ns.x] %}{% endfor %}\
                    {{ {ns.x: 1}|length }} {{ [ns.x, ns.x]|unique|list|length }}\n";
    let workspace = with_template("", template).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(run.stdout.contains("1 1"), "{}{}", run.stdout, run.stderr);
    // A constant expression was folded while the template loaded: a hundred megabytes built
    // before any limit applied.
    let (code, _, line, _, message) = single_error("", "{{ (\"ab\" * 100000000)|length }}\n");
    assert_eq!((code.as_str(), line), ("too-much-text", 1), "{message}");
    // A list repeated holds at most as many items as `range` makes, repeated again too.
    for expression in [
        "([1] * 100000000)|length",
        "(([1] * 100000) * 1000)|list|length",
    ] {
        let (code, _, line, _, message) = single_error("", &format!("{{{{ {expression} }}}}\n"));
        assert_eq!((code.as_str(), line), ("render-failed", 1), "{message}");
        assert!(message.contains("more than 100000 items"), "{message}");
    }
    // A list nested tens of thousands deep by statements, not a loop: writing it as text
    // recursed once per level.
    let template = format!(
        "{{% set a = 1 %}}{}{{{{ a|lower }}}}\n",
        "{% set a = [[[[[[[[[[a]]]]]]]]]] %}".repeat(3100)
    );
    let (code, _, line, _, message) = single_error("", &template);
    assert_eq!((code.as_str(), line), ("render-failed", 1), "{message}");
    assert!(message.contains("nested more than 128 deep"), "{message}");
    let doubling = "{% set ns = namespace(x=\"ab\") %}{% for i in range(40) %}\
                    {% set ns.x = ns.x ~ ns.x %}{% endfor %}{{ ns.x|length }}\n";
    let (code, _, line, _, message) = single_error("", doubling);
    assert_eq!((code.as_str(), line), ("too-much-text", 1), "{message}");
}

#[test]
fn all_the_text_of_one_compile_is_bounded() {
    let half = format!("{}\n", "w".repeat(600));
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[limits]\ncompile_bytes = 1000\n", common::MANIFEST),
        )
        .file("components/intro.md", &half)
        .file("variants/generic.toml", NO_TOOLS)
        .remove("tools/read_file.toml")
        .file(
            "variants/generic.md",
            format!("{half}{{{{ INTRO_SECTION }}}}\n"),
        )
        .validate();
    let d = report.single();
    assert_eq!(
        (d.code.as_str(), d.file.as_str(), d.line, d.column),
        ("too-much-text", "variants/generic.md", 1, 1)
    );
    // The limit said is the compile's, not what the sections before this one left of it.
    assert!(
        d.message
            .contains("the compile builds more than 1000 bytes of text (`limits.compile_bytes`)"),
        "{}",
        d.message
    );
}

// A chain (`+ 1` repeated, `|e` repeated, `.a` repeated, `not` repeated, `elif` repeated)
// nests the parsed tree one level per link without the parser recursing as brackets do, and
// compiling or dropping a tree twenty thousand deep overflowed the stack, in every command
// (templates are parsed when the workspace loads). A chain now nests at most 1000 deep.
#[test]
fn a_chain_nests_the_parsed_template_within_a_limit() {
    let too_deep = [
        format!("{{{{{} 1 }}}}\n", " not".repeat(20_000)),
        format!("{{{{{} 1 }}}}\n", " -".repeat(20_000)),
        format!("{{{{ 1{} }}}}\n", " + 1".repeat(20_000)),
        format!("{{{{ 1{} }}}}\n", "|e".repeat(60_000)),
        format!("{{{{ intro{} }}}}\n", ".a".repeat(50_000)),
        format!(
            "{{% if false %}}{}{{% endif %}}\n",
            "{% elif false %}".repeat(12_000)
        ),
        // Chains inside brackets add up: the tree is as deep as both.
        format!(
            "{{{{ ((1{}){}) }}}}\n",
            " + 1".repeat(600),
            " + 1".repeat(600)
        ),
        format!(
            "{{{{ 1 + ({}1){} }}}}\n",
            "not ".repeat(900),
            " + 1".repeat(500)
        ),
        // Conditional expressions chain both ways.
        format!("{{{{ 1{} }}}}\n", " if intro".repeat(50_000)),
        format!("{{{{ {}2 }}}}\n", "1 if intro else ".repeat(50_000)),
        // Assignment targets too.
        format!(
            "{{% set ns = namespace(a=1) %}}{{% set ns{} = 1 %}}\n",
            ".a".repeat(100_000)
        ),
        format!(
            "{{% for {}x{} in [1] %}}{{% endfor %}}\n",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
    ];
    for template in &too_deep {
        let (code, file, line, _, message) = single_error("", template);
        assert_eq!(
            (code.as_str(), file.as_str(), line),
            ("template-syntax", "components/intro.md", 1),
            "{}: {message}",
            &template[..40]
        );
        assert!(
            message.contains("nests expressions or elif branches too deeply"),
            "{message}"
        );
    }
    // A condition is parsed the same way.
    let component = format!(
        "id = \"intro\"\nwhen = \"{} true\"\n",
        "not ".repeat(20_000)
    );
    let workspace = with_template("", "Intro.\n")
        .file("components/intro.toml", &component)
        .write();
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("too deeply"), "{}", run.stderr);
    // A chain of a thousand links is not too deep; chains side by side, in one expression
    // or in many, and chains in brackets side by side, are each as deep as one.
    let template = format!(
        "{{{{ 1{} }}}} {{% if false %}}{}{{% endif %}}{{{{ [{}1]|length }}}} {} \
         {{{{ (1{}) + (1{}) }}}} {{{{ {}2 }}}}\n",
        " + 1".repeat(999),
        "{% elif false %}".repeat(999),
        "range(1)|list|length, ".repeat(5000),
        "{{ 1 + 1 }}".repeat(2000),
        " + 1".repeat(600),
        " + 1".repeat(600),
        "1 if false else ".repeat(900),
    );
    let workspace = with_template("", &template).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(
        run.stdout.contains("1000 5001 22222") && run.stdout.contains(" 1202 2"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

// Looking for loops through templates searched from every tag, and each search followed
// every tag: two partials each naming the next 60 000 times, or a chain of thousands of
// partials, held every command (the check runs when the workspace loads) for minutes. Tags
// naming the same template are searched once, and only tags within a loop are searched.
#[test]
fn looking_for_template_loops_takes_time_in_proportion_to_the_tags() {
    let mut fixture = with_template("", "{% include \"partials/a.md\" %}\n")
        .file(
            "partials/a.md",
            "{% include \"partials/b.md\" %}".repeat(60_000),
        )
        .file(
            "partials/b.md",
            "{% include \"partials/c.md\" %}".repeat(60_000),
        )
        .file("partials/c.md", "c");
    for i in 0..3000 {
        let next = if i == 2999 {
            "{% include \"partials/n0.md\" %}".to_string()
        } else {
            format!("{{% include \"partials/n{}.md\" %}}", i + 1)
        };
        fixture = fixture.file(&format!("partials/n{i}.md"), &next);
    }
    let workspace = fixture.write();
    let (status, stderr) = validate_within_a_minute(
        &workspace,
        "looking for loops through templates took more than a minute",
    );
    // The loop of 3000 partials is reported, once.
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.matches("error[template-cycle]").count(),
        1,
        "{stderr}"
    );
}

/// `promptc validate` in `workspace`, failing the test with `what` past a minute.
fn validate_within_a_minute(
    workspace: &common::Workspace,
    what: &str,
) -> (std::process::ExitStatus, String) {
    within_a_minute(workspace, &["validate"], "4G", what)
}

/// `promptc ARGS` in `workspace` (its standard output dropped) within `memory`
/// (`PROMPTC_MEMORY_LIMIT`), failing the test with `what` past a minute.
fn within_a_minute(
    workspace: &common::Workspace,
    args: &[&str],
    memory: &str,
    what: &str,
) -> (std::process::ExitStatus, String) {
    common::run_within(
        std::process::Command::new(assert_cmd::cargo::cargo_bin("promptc"))
            .current_dir(workspace.root())
            .env("PROMPTC_CACHE_DIR", workspace.cache_dir())
            .env("PROMPTC_MEMORY_LIMIT", memory)
            .args(["--color", "never"])
            .args(args)
            .stdout(std::process::Stdio::null()),
        Duration::from_secs(60),
        what,
    )
}

/// A chain of 3000 partials, each reading a name nothing defines and including the next:
/// crediting each with what the templates around it set followed the whole chain from each
/// one (minutes); it follows a bounded number, and every name is still reported.
#[test]
fn crediting_names_along_a_long_include_chain_takes_bounded_time() {
    let mut fixture = with_template("", "{% include \"partials/n0.md\" %}\n");
    for i in 0..3000 {
        let next = (i + 1) % 3000;
        fixture = fixture.file(
            &format!("partials/n{i}.md"),
            format!("{{{{ zz{i} }}}}{{% include \"partials/n{next}.md\" %}}"),
        );
    }
    let workspace = fixture.write();
    let (status, stderr) = validate_within_a_minute(
        &workspace,
        "crediting names along an include chain took more than a minute",
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    // Every name is reported: the first thousand problems shown, the rest counted (the 3001st
    // is the chain's cycle).
    assert!(
        stderr.contains("`zz0` is not defined by anything"),
        "{stderr}"
    );
    assert!(
        stderr.contains("error[more-problems]: 2001 more errors in 2001 files, not shown")
            && stderr.ends_with("\nerror: 3001 errors\n"),
        "{stderr}"
    );
}

// `x is divisibleby 0` and `loop.cycle()` without arguments divided by zero inside minijinja,
// and the process panicked, in a template or a condition alike.
#[test]
fn arithmetic_on_template_values_does_not_panic() {
    let template = "{{ 1 is divisibleby 0 }} {{ 6 is divisibleby 3 }} {{ 7 is divisibleby -1 }} \
                    {% for i in [1] %}[{{ loop.cycle() is undefined }}]{% endfor %}\n";
    let workspace = with_template("", template).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(
        run.stdout.contains("false true true [true]"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    let component = "id = \"intro\"\nwhen = \"1 is divisibleby 0\"\n";
    let workspace = with_template("", "Intro.\n")
        .file("components/intro.toml", component)
        .write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("Intro."));
}

// Whole numbers at the ends of the range arithmetic takes keep their sign, and one past it is
// refused by name; a float past the largest (or not a number) is refused where it is written,
// alone or in a list: JSON has no text for it, and it was written as `null`.
#[test]
fn numbers_past_what_arithmetic_or_text_can_hold_are_refused_not_changed() {
    let min = "170141183460469231731687303715884105728";
    let template = format!(
        "{{{{ -{min} }}}} {{{{ -{min} < 0 }}}} {{{{ -(-{min}) }}}} {{{{ {min} == -(-{min}) }}}} \
         {{{{ {min} in {{{min}: 1}} }}}}\n"
    );
    let run = with_template("", &template)
        .write()
        .run(&["build", "--family", "generic"]);
    assert!(
        run.stdout.contains(&format!("-{min} true {min} true true")),
        "{}{}",
        run.stdout,
        run.stderr
    );
    for (template, said) in [
        (
            format!("{{{{ {min} * -1 }}}}\n"),
            "past the range arithmetic takes",
        ),
        (
            "{{ -340282366920938463463374607431768211455 }}\n".to_string(),
            "past the range",
        ),
        (
            "{{ 1e308 * 10 }}\n".to_string(),
            "inf (past the largest number a float holds)",
        ),
        ("{{ [1, 1e308 * -10] }}\n".to_string(), "-inf"),
        (
            "{{ {'a': (1e308 * 10) - (1e308 * 10)} }}\n".to_string(),
            "NaN (not a number)",
        ),
        ("{{ {(1e308 * 10): 1} }}\n".to_string(), "inf (past"),
    ] {
        let run = with_template("", &template)
            .write()
            .run(&["build", "--family", "generic"]);
        assert_eq!(run.code, 1, "{template}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(said), "{template}: {}", run.stderr);
        assert!(
            run.stderr.contains("components/intro.md:1"),
            "{}",
            run.stderr
        );
        assert!(!run.stdout.contains("null"), "{}", run.stdout);
    }
}

#[test]
fn conditions_are_bounded_too() {
    let report = Fixture::minimal()
        .file(
            "components/intro.toml",
            format!(
                "{}when = '(mode * 100000)|join(\"x\" * 30000) != \"\"'\n",
                common::COMPONENT
            ),
        )
        .validate();
    let d = report.single();
    assert_eq!(
        (d.code.as_str(), d.file.as_str(), d.line),
        ("condition-failed", "components/intro.toml", 3)
    );
    assert!(
        d.message.contains("over the limit of 16777216 bytes"),
        "{}",
        d.message
    );
}

// Item 6: fuel was given to each render, so a compile of many templates could spend it many
// times over.
#[test]
fn fuel_is_one_budget_for_all_the_renders_of_a_compile() {
    let looping = "{% for i in range(120) %}{{ i }}{% endfor %}\n";
    let fixture = Fixture::minimal()
        .file("components/intro.md", looping)
        .file("variants/generic.toml", NO_TOOLS)
        .remove("tools/read_file.toml")
        .file(
            "variants/generic.md",
            format!("{looping}{{{{ INTRO_SECTION }}}}\n"),
        );
    // Each template alone fits in the budget...
    let manifest = format!("{}fuel = 1000\n", common::MANIFEST);
    let alone = fixture
        .clone()
        .file("promptc.toml", &manifest)
        .file("variants/generic.toml", NO_TOOLS)
        .file("variants/generic.md", "{{ INTRO_SECTION }}\n");
    assert_eq!(alone.validate().counts(), (0, 0));
    // ...both together do not.
    let report = fixture.file("promptc.toml", &manifest).validate();
    let d = report.single();
    assert_eq!(
        (d.code.as_str(), d.file.as_str(), d.line, d.column),
        ("out-of-fuel", "variants/generic.md", 1, 1)
    );
    assert_eq!(
        d.message,
        "the templates of this compile ran out of fuel: more than 1000 instructions and items walked"
    );
}

// A render remembered from an earlier compile spends the fuel it spent then: the second
// compile of the same request runs out exactly as the first did.
#[test]
fn a_remembered_render_spends_its_fuel_again() {
    let looping = "{% for i in range(150) %}{{ i }}{% endfor %}\n";
    let workspace = Fixture::minimal()
        .file("promptc.toml", format!("{}fuel = 1000\n", common::MANIFEST))
        .file("components/intro.md", looping)
        .file("variants/generic.toml", NO_TOOLS)
        .remove("tools/read_file.toml")
        .file(
            "variants/generic.md",
            format!("{looping}{{{{ INTRO_SECTION }}}}\n"),
        )
        .write();
    runs_out_every_time(workspace.root(), "out-of-fuel");
}

// Each condition had the whole fuel: a compile of many costly conditions (a predicate of
// hundreds of distinct `matching` patterns each) spent it many times over, for minutes. The
// conditions of a compile now share one fuel.
#[test]
fn the_conditions_of_a_compile_share_one_fuel() {
    let costly = |name: &str| {
        let terms: Vec<String> = (0..200).map(|n| format!("cwd == '/p{n}'")).collect();
        format!("{name} = \"{}\"\n", terms.join(" or "))
    };
    let manifest = |predicates: &[&str]| {
        let written: String = predicates.iter().map(|name| costly(name)).collect();
        format!("{}fuel = 1000\n[predicates]\n{written}", common::MANIFEST)
    };
    // One alone fits...
    let alone = Fixture::minimal().file("promptc.toml", manifest(&["first"]));
    assert_eq!(alone.validate().counts(), (0, 0));
    // ...the second does not, and the third is not evaluated: one error, at the second.
    let three = Fixture::minimal().file("promptc.toml", manifest(&["first", "second", "third"]));
    let report = three.clone().validate();
    let d = report.single();
    assert_eq!(
        (d.code.as_str(), d.file.as_str(), d.line),
        ("conditions-out-of-fuel", "promptc.toml", 6)
    );
    assert_eq!(
        d.message,
        "the conditions evaluated for this compile ran out of fuel: together more than 1000 instructions and items walked"
    );
    // Remembered results spend their fuel again: every compile runs out alike.
    let workspace = three.write();
    runs_out_every_time(workspace.root(), "conditions-out-of-fuel");
}

// A condition that failed charged no fuel: many conditions that each ran out of the whole
// fuel ran it all, one after the other. The first failure spends the conditions' fuel; the
// conditions after it are not evaluated.
#[test]
fn a_failing_condition_spends_the_conditions_fuel() {
    let costly = |name: &str| {
        let terms: Vec<String> = (0..400).map(|n| format!("cwd == '/p{n}'")).collect();
        format!("{name} = \"{}\"\n", terms.join(" or "))
    };
    let predicates: String = (0..5).map(|n| costly(&format!("p{n}"))).collect();
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}fuel = 1000\n[predicates]\n{predicates}",
                common::MANIFEST
            ),
        )
        .validate();
    let d = report.single();
    assert_eq!(
        (d.code.as_str(), d.file.as_str(), d.line),
        ("conditions-out-of-fuel", "promptc.toml", 5)
    );
}

/// Compiles the `basic` context of the workspace at `root` three times with one compiler (what
/// it remembers from one compile serves the next): each must fail with `code` alone.
fn runs_out_every_time(root: &std::path::Path, code: &str) {
    let workspace = common::load(root);
    let compiler = promptc::Compiler::new(&workspace);
    let context = workspace.context("basic").unwrap().clone();
    let request = promptc::Request::new(promptc::Selection::family("generic"), context);
    for attempt in 0..3 {
        let Err(promptc::CompileError::Diagnostics(diagnostics)) = compiler.compile(&request)
        else {
            panic!("compile {attempt} did not run out ({code})");
        };
        let codes: Vec<&str> = diagnostics.iter().map(|d| d.problem.code()).collect();
        assert_eq!(codes, [code], "compile {attempt}");
    }
}

#[test]
fn fuel_has_an_upper_bound() {
    let report = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}fuel = 9223372036854775807\n", common::MANIFEST),
        )
        .validate();
    let d = report.single();
    assert_eq!(
        (d.code.as_str(), d.file.as_str(), d.line, d.column),
        ("invalid-value", "promptc.toml", 3, 8)
    );
    assert!(
        d.message.contains("the largest allowed is 100000000"),
        "{}",
        d.message
    );
}

// Item 6: a template that ran out of fuel is not rendered again for the other entries of the
// matrix (each would spend the whole budget again). Here the second context would run out
// in another loop: only the first is reported.
#[test]
fn a_template_that_ran_out_of_fuel_is_not_rendered_again() {
    let runaway =
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    let template = format!("{{% if extra.first %}}{runaway}{{% endif %}}\n{runaway}\n");
    let mut fixture = Fixture::minimal()
        .file("components/intro.md", &template)
        .file(
            "examples/contexts/basic.toml",
            format!("{}[extra]\nfirst = true\n", common::CONTEXT),
        );
    // Contexts compile in name order: `basic` first.
    for name in ["x1", "x2", "x3", "x4", "x5"] {
        fixture = fixture.file(
            &format!("examples/contexts/{name}.toml"),
            format!("{}[extra]\nfirst = false\n", common::CONTEXT),
        );
    }
    let workspace = fixture.write();
    let report = workspace.validate();
    let d = report.single();
    assert_eq!(
        (d.code.as_str(), d.file.as_str(), d.line),
        ("out-of-fuel", "components/intro.md", 1)
    );
    // `build --all` names every entry that failed, and the error once.
    let run = workspace.run(&["--color", "never", "build", "--all"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr.matches("error[out-of-fuel]").count(),
        1,
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr.matches("(errors above)").count(),
        5,
        "{}",
        run.stderr
    );
    // `stats` compiles the same matrix in one run too.
    let run = workspace.run(&["--color", "never", "stats"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr.matches("error[out-of-fuel]").count(),
        1,
        "{}",
        run.stderr
    );
}

/// `build --all` of a matrix whose one template has a render error, with `basic` and the
/// contexts named: the error is printed once, with the first entry (`basic`), which is named
/// without "(errors above)". Its stderr.
fn build_with_one_render_error(contexts: &[String]) -> String {
    let mut fixture = Fixture::minimal().file("components/intro.md", "{{ cwd.nope.deeper }}\n");
    for name in contexts {
        fixture = fixture.file(&format!("examples/contexts/{name}.toml"), common::CONTEXT);
    }
    let run = fixture.write().run(&["--color", "never", "build", "--all"]);
    assert_eq!(run.code, 1);
    let stderr = run.stderr;
    assert_eq!(
        stderr.matches("error[render-failed]").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains(" --> components/intro.md:1:"), "{stderr}");
    assert!(
        stderr.contains("generic × basic does not compile\n"),
        "{stderr}"
    );
    stderr
}

// Item 7: the same render error was printed once per family × context by `build --all`.
#[test]
fn a_template_error_is_reported_once_for_the_whole_matrix() {
    let stderr = build_with_one_render_error(&["x1".into(), "x2".into()]);
    for name in ["x1", "x2"] {
        let line = format!("generic × {name} does not compile (errors above)");
        assert!(stderr.contains(&line), "{stderr}");
    }
}

// Past ten, the entries failing for an error shown above are counted on one line: a
// processor-time limit reached early named hundreds of entries never compiled, one per line,
// below the one error that said why.
#[test]
fn entries_failing_for_errors_above_are_counted_past_ten() {
    let contexts: Vec<String> = (1..=14).map(|index| format!("x{index:02}")).collect();
    let stderr = build_with_one_render_error(&contexts);
    // Ten named of the fourteen that failed for the error, in order, then a count.
    assert_eq!(
        stderr.matches("does not compile (errors above)").count(),
        10,
        "{stderr}"
    );
    assert!(stderr.contains("generic × x10 does not compile (errors above)"));
    assert!(!stderr.contains("generic × x11 does not"), "{stderr}");
    assert!(
        stderr.contains(
            "error: 4 more entries do not compile for the errors above (the first 10 are named above)\n"
        ),
        "{stderr}"
    );
}

// The same checks at the default limit (16 MiB), with text of about 20 MB that the old code
// built without complaint.
#[test]
fn the_default_limit_bounds_filters_and_captured_text() {
    let cases = [
        (
            "{% set s %}{{ \"y\" * 10000000 }}{{ \"y\" * 10000000 }}{% endset %}{{ s|length }}",
            "\"y\" * 10000000 }}{%",
        ),
        (
            "{{ (\"a\" * 1000)|replace(\"a\", \"b\" * 20000)|length }}",
            "replace(",
        ),
        ("{{ (\"a\\n\" * 100000)|indent(200)|length }}", "indent("),
        ("{{ (range(1000)|join(\"j\" * 20000))|length }}", "join("),
    ];
    for (expression, at) in cases {
        let template = format!("Intro.\n{expression}\n");
        let column = column_on_line_2(&template, at);
        assert_eq!(
            single_error("", &template),
            too_much(2, column, 16 << 20, "limits.render_bytes"),
            "{expression}"
        );
    }
}

// Like fuel: a template that built too much text alone is not rendered again in the run.
#[test]
fn a_template_that_built_too_much_text_is_not_rendered_again() {
    let template = "{% if extra.first %}{{ \"x\" * 2000 }}{% endif %}\n{{ \"y\" * 2000 }}\n";
    let mut fixture = with_template(SMALL_TEXT, template).file(
        "examples/contexts/basic.toml",
        format!("{}[extra]\nfirst = true\n", common::CONTEXT),
    );
    for name in ["x1", "x2"] {
        fixture = fixture.file(
            &format!("examples/contexts/{name}.toml"),
            format!("{}[extra]\nfirst = false\n", common::CONTEXT),
        );
    }
    let report = fixture.validate();
    let d = report.single();
    assert_eq!(
        (d.code.as_str(), d.file.as_str(), d.line, d.column),
        ("too-much-text", "components/intro.md", 1, 24)
    );
}

// A tool section remembered from an earlier compile spends its fuel and bytes again: a compile
// that takes it runs out exactly where one that rendered the tools would.
#[test]
fn a_remembered_tool_section_spends_its_fuel_and_bytes_again() {
    let looping = "{% for i in range(150) %}{{ i }}{% endfor %}";
    let tool = format!("id = \"read_file\"\ndescription = \"{looping}\"\n");
    let fuel = Fixture::minimal()
        .file("promptc.toml", format!("{}fuel = 1000\n", common::MANIFEST))
        .file("tools/read_file.toml", &tool)
        .file(
            "variants/generic.md",
            format!("{{{{ TOOLS }}}}\n{looping}\n{{{{ INTRO_SECTION }}}}\n"),
        );
    let long = "word ".repeat(600);
    let bytes = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[limits]\ncompile_bytes = 5000\n", common::MANIFEST),
        )
        .file(
            "tools/read_file.toml",
            format!("id = \"read_file\"\ndescription = \"{long}\"\n"),
        )
        .file(
            "variants/generic.md",
            format!("{{{{ TOOLS }}}}\n{long}\n{{{{ INTRO_SECTION }}}}\n"),
        );
    for (fixture, code) in [(fuel, "out-of-fuel"), (bytes, "too-much-text")] {
        // Each part alone fits: the tools are remembered, then the base template runs out.
        runs_out_every_time(fixture.write().root(), code);
    }
}

// Post-processing rules were not bounded: each of forty rules replacing `x` with `xx`
// doubled the prompt until memory ran out. The rule that passes `limits.compile_bytes` is
// named, at its place in the manifest.
#[test]
fn a_post_processing_rule_cannot_grow_the_prompt_past_its_limit() {
    let mut manifest = String::from("\n[limits]\ncompile_bytes = 100000\n");
    for _ in 0..40 {
        manifest
            .push_str("\n[[postprocess]]\nrule = \"regex\"\npattern = \"x\"\nreplace = \"xx\"\n");
    }
    let error = single_error(&manifest, "x\n");
    // The minimal manifest is 2 lines; then a blank line, `[limits]` and its setting, and
    // each rule takes 5 lines from its blank line: the prompt's one `x` passes 100 000 bytes
    // at the 17th doubling (2^17 = 131 072), the rule at index 16, whose header is on line
    // 2 + 3 + 16 * 5 + 2.
    assert_eq!(
        error,
        (
            "postprocess-grows".to_string(),
            "promptc.toml".to_string(),
            2 + 3 + 16 * 5 + 2,
            1,
            "this post-processing rule makes the prompt longer than 100000 bytes (`limits.compile_bytes`)"
                .to_string()
        )
    );
}

// Every variant's `extends` chain was followed in full, and each kept the list: 10 000
// variants each extending the one before took minutes and gigabytes. A chain goes through at
// most 64 links, and the one variant (or context) where it first grows longer is told so.
#[test]
fn an_inheritance_chain_longer_than_its_limit_is_refused_once_where_it_grows_too_long() {
    let mut fixture = Fixture::minimal();
    for index in 1..=80 {
        let parent = if index == 1 {
            "generic".to_string()
        } else {
            format!("v{}", index - 1)
        };
        fixture = fixture
            .file(
                &format!("variants/v{index}.toml"),
                format!("id = \"v{index}\"\nextends = \"{parent}\"\n"),
            )
            .file(
                &format!("examples/contexts/c{index}.toml"),
                format!(
                    "extends = \"{}\"\n",
                    if index == 1 {
                        "basic".to_string()
                    } else {
                        format!("c{}", index - 1)
                    }
                ),
            );
    }
    let found: Vec<(String, String, u64, u64, String)> = fixture
        .write()
        .validate()
        .diagnostics()
        .into_iter()
        .filter(|d| d.severity == "error")
        .map(|d| (d.code, d.file, d.line, d.column, d.message))
        .collect();
    // v65's chain is v65, v64, ... v1, generic: 65 links.
    let at = |file: &str, column: u64, link: &str| {
        (
            "chain-too-long".to_string(),
            file.to_string(),
            if file.starts_with("variants") { 2 } else { 1 },
            column,
            format!("this `{link}` chain goes through more than 64 links"),
        )
    };
    assert_eq!(
        found,
        [
            at("variants/v65.toml", 11, "extends"),
            at("examples/contexts/c65.toml", 11, "extends"),
        ]
    );
}

// A cycle longer than the chain limit is still a cycle: every member's chain is cut at the
// limit, so the cut alone cannot tell it from a long line, and a 70-variant cycle was taken
// for valid. It is reported once, at its smallest member, as a cycle.
#[test]
fn a_cycle_longer_than_the_chain_limit_is_reported_as_a_cycle() {
    let mut fixture = Fixture::minimal();
    for index in 0..70 {
        let next = (index + 1) % 70;
        fixture = fixture
            .file(
                &format!("variants/w{index:02}.toml"),
                format!("id = \"w{index:02}\"\nextends = \"w{next:02}\"\n"),
            )
            .file(
                &format!("examples/contexts/k{index:02}.toml"),
                format!("extends = \"k{next:02}\"\n"),
            );
    }
    let found: Vec<(String, String, String)> = fixture
        .write()
        .validate()
        .diagnostics()
        .into_iter()
        .filter(|d| d.severity == "error")
        .map(|d| (d.code, d.file, d.message))
        .collect();
    let codes: Vec<(&str, &str)> = found
        .iter()
        .map(|(code, file, _)| (code.as_str(), file.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            ("cycle", "variants/w00.toml"),
            ("cycle", "examples/contexts/k00.toml"),
        ],
        "{found:#?}"
    );
    // The whole cycle, from its smallest member back to it.
    assert!(found[0].2.contains("w00 -> w01 -> w02"), "{}", found[0].2);
    assert!(found[0].2.ends_with("w69 -> w00"), "{}", found[0].2);
}

// Building a pattern costs far more than an instruction, and minijinja charged nothing for
// it: a loop making a new pattern each turn ran for minutes within its fuel. Each distinct
// pattern a render uses now costs fuel by what it compiles to, so the loop stops at once, at
// the expression; one pattern used on every turn is built and paid for once.
#[test]
fn each_distinct_pattern_a_template_builds_costs_fuel() {
    let template = "Intro.\n{% for i in range(100000) %}{% if 'x' is matching('(?i)\\w{20}(' ~ i ~ ')?') %}{% endif %}{% endfor %}\n";
    let started = Instant::now();
    let (code, file, line, column, message) = single_error("", template);
    assert_eq!(
        (code.as_str(), file.as_str(), line, column),
        (
            "out-of-fuel",
            "components/intro.md",
            2,
            column_on_line_2(template, "matching(")
        )
    );
    assert_eq!(
        message,
        "the templates of this compile ran out of fuel: more than 5000000 instructions and items walked"
    );
    assert!(started.elapsed() < Duration::from_secs(30));

    // The same patterns on every turn: paid for once each, within the default fuel.
    let reused = "Intro.\n{% for i in range(20000) %}{% if 'gpt-5' is matching('(?i)^gpt-[5-9]') and 'openai/gpt-5' is glob('openai/*') %}{% endif %}{% endfor %}\n";
    assert_eq!(with_template("", reused).validate().counts(), (0, 0));

    // The patterns' fuel is the compile's, and a remembered render spends it again: the
    // section's two patterns and the base template's third fit the fuel one render at a time,
    // not together, and the second compile, which takes the section from memory, runs out as
    // the first did.
    let two = "{% for p in ['(?i)\\w{20}', '(?i)\\w{19}'] %}{% if 'x' is matching(p) %}{% endif %}{% endfor %}Intro.\n";
    let one = "{% if 'x' is matching('(?i)\\w{18}') %}{% endif %}{{ INTRO_SECTION }}\n";
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}fuel = 700000\n", common::MANIFEST),
        )
        .file("components/intro.md", two)
        .file("variants/generic.toml", NO_TOOLS)
        .remove("tools/read_file.toml")
        .file("variants/generic.md", one)
        .write();
    runs_out_every_time(workspace.root(), "out-of-fuel");
}

// Fuel counted instructions, and one instruction can walk a whole value: `x in big` over a
// hundred thousand items, `==` between lists that share their parts (walked as trees: `[a, a]`
// doubled forty times has a trillion paths), a sort, a filter reading a long text, `a[i]` on a
// merge of many parts, `chain` flattening every part merged before it. Repeated in a loop, each
// ran for minutes within the default fuel, until the processor-time limit ended the process.
// Text is walked too: comparing, hashing or indexing a string, and what a filter, test or
// function is given or makes. Each item (and 16 bytes of text) an instruction walks now costs
// fuel: every template below runs a few thousand instructions at most, walks millions of
// items, and runs out of a fuel of 200 000 on its second line. An iteration stops once the
// render has walked its whole fuel, so `s|list` does not build two million items first.
#[test]
fn what_an_instruction_walks_costs_fuel() {
    let doubled = |name: &str, times: usize| {
        format!(
            "{{% set {name} = [1] %}}{}",
            format!("{{% set {name} = [{name}, {name}] %}}").repeat(times)
        )
    };
    let appended = "{% set ns = namespace(a=[]) %}{% for i in range(1000) %}{% set ns.a = ns.a + [i] %}{% endfor %}";
    let cases = [
        (
            "{% set big = range(100000)|list %}\n{% for i in range(50) %}{{ 99999 in big }}{% endfor %}\n".to_string(),
            "99999 in big",
        ),
        (
            format!("{}{}\n{{{{ a == b }}}}\n", doubled("a", 40), doubled("b", 40)),
            "a == b",
        ),
        (
            "{% set big = range(20000)|list %}\n{% for i in range(10) %}{{ big|sort|first }}{% endfor %}\n".to_string(),
            "big|sort",
        ),
        (
            "{% set s = 'ab' * 500000 %}\n{% for i in range(20) %}{{ s|length }}{% endfor %}\n".to_string(),
            "s|length",
        ),
        (
            format!("{appended}\n{{% for i in range(300) %}}{{{{ ns.a[999] }}}}{{% endfor %}}\n"),
            "ns.a[999]",
        ),
        (
            "{% set s = 'x' * 1000000 %}{% set t = 'x' * 1000000 %}\n{% for i in range(20) %}{{ s == t }}{% endfor %}\n".to_string(),
            "s == t",
        ),
        (
            "{% set s = 'x' * 1000000 %}\n{% for i in range(20) %}{% if s is lower %}{% endif %}{% endfor %}\n".to_string(),
            "s is lower",
        ),
        (
            "{% set s = 'x' * 1000000 %}{% set t = 'x' * 1000000 %}\n{% for i in range(20) %}{{ [s, t]|sort|length }}{% endfor %}\n".to_string(),
            "[s, t]|sort",
        ),
        (
            "{% set s = 'ab' * 1000000 %}\n{{ s|list|length }}\n".to_string(),
            "s|list",
        ),
        (
            format!("{{% set a = [1] %}}\n{}{{{{ a|list|length }}}}\n", "{% set a = a|chain([]) %}".repeat(5000)),
            "a|chain",
        ),
    ];
    for (template, walk) in cases {
        let (code, file, line, _, message) = single_error("fuel = 200000\n", &template);
        assert_eq!(
            (code.as_str(), file.as_str(), line),
            ("out-of-fuel", "components/intro.md", 2),
            "{walk}: {message}"
        );
        assert_eq!(
            message,
            "the templates of this compile ran out of fuel: more than 200000 instructions and items walked"
        );
    }
    // What they are for still works on smaller values, within the same fuel.
    let template = format!(
        "{}\n{appended}{{{{ ns.a[999] }}}} {{{{ 999 in range(1000)|list }}}} {{{{ a == a }}}} {{{{ range(1000)|reverse|sort|first }}}} {{{{ ('ab' * 100)|length }}}}\n",
        doubled("a", 10),
    );
    let workspace = with_template("fuel = 200000\n", &template).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(
        run.stdout.contains("999 true true 0 200\n"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

// One instruction whose comparisons each read megabytes (a sort, `==` between lists of two
// equal 4 MB texts made apart) ran until the processor-time limit ended the process without
// a word, minutes later: each comparison was paid for, but the instruction went on comparing
// past the render's fuel. It now stops comparing once the fuel is spent, and the render fails
// at the line, as for any walk. What the same filters are for still works on short texts.
#[test]
fn comparisons_of_long_texts_stop_when_the_fuel_is_spent() {
    let long_texts = "{% set s = 'a' * 4000000 %}{% set t = 'a' * 4000000 %}";
    for (walk, expression) in [
        ("{% set l = [s] * 100000 %}", "l|sort|length"),
        (
            "{% set l = [s, t] * 5000 %}",
            "l|sort(case_sensitive=true)|length",
        ),
        (
            "{% set l = [{'a': s}, {'a': t}] * 5000 %}",
            "l|sort(attribute='a')|length",
        ),
        (
            "{% set a = [s] * 100000 %}{% set b = [t] * 100000 %}",
            "a == b",
        ),
    ] {
        let template = format!("{long_texts}{walk}\n{{{{ {expression} }}}}\n");
        let (code, file, line, _, message) = single_error("fuel = 2000000\n", &template);
        assert_eq!(
            (code.as_str(), file.as_str(), line),
            ("out-of-fuel", "components/intro.md", 2),
            "{expression}: {message}"
        );
    }
    let template = "{% set l = ['b', 'a', 'C', 'a'] %}{{ l|sort|join }} {{ l|sort(case_sensitive=true)|join }} {{ [{'a': 'y'}, {'a': 'x'}]|sort(attribute='a')|map(attribute='a')|join }} {{ l == ['b', 'a', 'C', 'a'] }} {{ l|sort(reverse=true)|join }}\n";
    let workspace = with_template("fuel = 2000000\n", template).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(
        run.stdout.contains("aabC Caab xy true Cbaa\n"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

// A tool's family entries inherit through `based_on` as variants do through `extends`: the
// same limit holds, reported at the `based_on` of the entry whose chain grows past it, and a
// cycle longer than the limit is a cycle, reported once at its smallest member.
#[test]
fn a_tools_based_on_chain_has_the_same_limit_and_cycles_as_variants() {
    let chain_and_cycle = |families: &[(String, String)]| {
        let mut fixture = Fixture::minimal();
        let mut tool = common::TOOL.to_string();
        for (family, based_on) in families {
            fixture = fixture.file(
                &format!("variants/{family}.toml"),
                format!("id = \"{family}\"\nextends = \"generic\"\n"),
            );
            let field = if based_on.is_empty() {
                "description = \"Read a file.\"".to_string()
            } else {
                format!("based_on = \"{based_on}\"")
            };
            tool.push_str(&format!("\n[families.{family}]\n{field}\n"));
        }
        let found: Vec<(String, String, u64, String)> = fixture
            .file("tools/read_file.toml", &tool)
            .write()
            .validate()
            .diagnostics()
            .into_iter()
            .filter(|d| d.severity == "error")
            .map(|d| (d.code, d.file, d.line, d.message))
            .collect();
        (tool, found)
    };
    // f1's entry is based on none; f66's chain (f66, f65, ... f1) has 65 links.
    let line: Vec<(String, String)> = (1..=80)
        .map(|i| {
            let parent = if i == 1 {
                String::new()
            } else {
                format!("f{}", i - 1)
            };
            (format!("f{i}"), parent)
        })
        .collect();
    let (tool, found) = chain_and_cycle(&line);
    let f66 = tool.lines().position(|l| l == "[families.f66]").unwrap() as u64 + 2;
    assert_eq!(
        found,
        [(
            "chain-too-long".to_string(),
            "tools/read_file.toml".to_string(),
            f66,
            "this `based_on` chain goes through more than 64 links".to_string()
        )]
    );

    let cycle: Vec<(String, String)> = (0..70)
        .map(|i| (format!("g{i:02}"), format!("g{:02}", (i + 1) % 70)))
        .collect();
    let (tool, found) = chain_and_cycle(&cycle);
    let g00 = tool.lines().position(|l| l == "[families.g00]").unwrap() as u64 + 2;
    let codes: Vec<(&str, u64)> = found.iter().map(|d| (d.0.as_str(), d.2)).collect();
    assert_eq!(codes, [("cycle", g00)], "{found:?}");
}

/// A dotted key deeper than the TOML reader nests is reported at the key, as a key-value
/// pair and as a table header, with what to do about it.
#[test]
fn a_key_with_too_many_parts_is_reported_at_the_key() {
    let deep = vec!["k"; 300].join(".");
    for (path, text) in [
        (
            "components/deep.toml",
            format!("id = \"deep\"\ndescription = \"d\"\n{deep} = 1\n"),
        ),
        (
            "tools/deep.toml",
            format!("id = \"deep\"\ndescription = \"d\"\n\n[{deep}]\nx = 1\n"),
        ),
    ] {
        let validation = Fixture::minimal().file(path, &text).validate();
        let single = validation.single();
        let (line, column) = common::position_of(&text, &deep);
        assert_eq!(
            (
                single.code.as_str(),
                single.file.as_str(),
                single.line,
                single.column
            ),
            ("toml-syntax", path, line, column),
            "{single:?}"
        );
        assert!(
            single.message.contains("300 parts")
                && single.message.contains("80")
                && single.message.contains("nest fewer levels"),
            "{}",
            single.message
        );
        let end = validation.item(0)["end_column"].as_u64();
        assert_eq!(end, Some(column + deep.len() as u64), "{single:?}");
    }
}

// The command line's processor-time limit stops what runs longer than it (SIGXCPU), here a
// loop within the largest fuel a workspace may set: a hundred million instructions.
#[cfg(unix)]
#[test]
fn the_processor_time_limit_stops_a_render_within_its_fuel() {
    use std::os::unix::process::ExitStatusExt;
    let workspace = with_template(
        "fuel = 100000000\n",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n",
    )
    .write();
    let started = Instant::now();
    let output = workspace
        .command()
        .env("PROMPTC_TIME_LIMIT", "1s")
        .args(["build", "--family", "generic"])
        .output()
        .unwrap();
    assert_eq!(output.status.signal(), Some(24), "{:?}", output.status);
    assert!(started.elapsed() < Duration::from_secs(30));

    // A limit that is not a duration is an error, as a memory limit that is not a size is.
    let output = workspace
        .command()
        .env("PROMPTC_TIME_LIMIT", "soon")
        .args(["build", "--family", "generic"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("PROMPTC_TIME_LIMIT: `soon` is not a duration"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

// Compiles each within their fuel, but many: a matrix (or a `diff`, which compiles one for
// each side and for each changed file) ran until the processor-time limit's signal ended the
// process without a word, `diff` leaving its temporary copies behind. Compiles stop at three
// quarters of the limit and say so; the command ends as a failing one does.
#[cfg(unix)]
#[test]
fn many_compiles_stop_short_of_the_processor_time_limit_and_say_so() {
    use std::os::unix::process::ExitStatusExt;
    // Each context's compile renders the loop again: the template reads its directory.
    let mut fixture = with_template(
        "",
        "{% for i in range(300) %}{% for j in range(1000) %}{% endfor %}{% endfor %}You work in {{ cwd }}.\n",
    );
    for n in 0..200 {
        fixture = fixture.file(
            &format!("examples/contexts/c{n}.toml"),
            format!("date = \"2026-11-01\"\ncwd = \"/srv/{n}\"\n"),
        );
    }
    let workspace = fixture.write();
    let root = workspace.root();
    // The temporary copies `diff` makes go to a folder of this test's own.
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        workspace
            .command()
            .env("PROMPTC_TIME_LIMIT", "2")
            .env("TMPDIR", tmp.path())
            .args(args)
            .output()
            .unwrap()
    };
    let output = run(&["build", "--all"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.signal(), None, "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "error[processor-time-spent]: promptc stopped compiling after 1.5 s of processor time"
        ) && stderr.contains("PROMPTC_TIME_LIMIT"),
        "{stderr}"
    );
    // The entries never compiled are counted on one line, not each said not to compile.
    assert!(
        stderr.contains("more entries were not compiled: promptc had stopped at its processor-time limit (above)"),
        "{stderr}"
    );
    assert!(!stderr.contains("(errors above)"), "{stderr}");
    // A failing build writes nothing.
    assert!(!root.join("examples/prompts").exists());

    // `diff` says which side stopped, and leaves no copy of the workspace behind.
    common::git(root, &["init", "-q", "-b", "main"]);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "base"]);
    std::fs::write(
        root.join("components/intro.md"),
        "{% for i in range(300) %}{% for j in range(1000) %}{% endfor %}{% endfor %}Work in {{ cwd }}.\n",
    )
    .unwrap();
    common::git(root, &["commit", "-q", "-am", "change"]);
    let output = run(&["diff", "--base", "HEAD~1"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.signal(), None, "{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("processor-time-spent"),
        "{stdout}\n{stderr}"
    );
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

// Post-processing rules by the thousand, each reading a prompt of megabytes, ran past the
// processor-time limit and the process was killed without a word. The rules stop at the
// compiles' deadline, at the rule reached, and say so.
#[cfg(unix)]
#[test]
fn postprocess_rules_stop_short_of_the_processor_time_limit_and_say_so() {
    use std::os::unix::process::ExitStatusExt;
    let rules = "\n[[postprocess]]\nrule = \"trim_trailing_whitespace\"\n".repeat(20_000);
    // With all the fuel a workspace may have, its passes are paid for past the time limit.
    let rules = format!("fuel = 100000000\n{rules}");
    let workspace = with_template(&rules, "{{ \"line \\n\" * 400000 }}\n").write();
    let output = workspace
        .command()
        .env("PROMPTC_TIME_LIMIT", "2")
        .args(["build", "--context", "basic"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.signal(), None, "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "error[processor-time-spent]: promptc stopped applying the post-processing rules after 1.5 s of processor time"
        ) && stderr.contains("--> promptc.toml:")
            && stderr.contains("fewer `[[postprocess]]` rules"),
        "{stderr}"
    );
}

// Each post-processing rule past the first 32 pays for its pass over the prompt: thousands of
// rules over a prompt of megabytes stop at the rule that runs out of fuel, at once, where they
// ran to the processor-time limit. A workspace's own few rules cost nothing.
#[test]
fn postprocess_rules_past_the_first_pay_for_their_passes() {
    let rules =
        |count: usize| "\n[[postprocess]]\nrule = \"trim_trailing_whitespace\"\n".repeat(count);
    let run = with_template(&rules(2_000), "{{ \"line \\n\" * 400000 }}\n")
        .write()
        .run(&["build", "--context", "basic"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "error[postprocess-pass-out-of-fuel]: each post-processing rule past the first 32 costs 1 fuel per 16 bytes of the prompt it reads"
        ) && run.stderr.contains("--> promptc.toml:"),
        "{}",
        run.stderr
    );
    // Forty rules over a prompt of a few lines: well within the fuel.
    let run = with_template(&rules(40), "A short prompt.\n")
        .write()
        .run(&["build", "--context", "basic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

// `[x, x]` doubled forty times is forty lists, but a trillion items written out: checking its
// nesting walked it as a tree (hours), and writing it out found out whether it was JSON by
// building it whole (all memory). Each way of writing it out stops at the byte limit.
#[test]
fn a_value_that_holds_its_parts_many_times_is_written_within_the_limits() {
    for write in [
        "{{ ns.x }}",
        "{{ ns.x|string }}",
        "{{ ns.x|pprint }}",
        "{{ ns.x|tojson }}",
        "{{ '%s'|format(ns.x) }}",
        "{{ ns.x|indent(2) }}",
    ] {
        let template = format!(
            "{{% set ns = namespace(x=[1]) %}}{{% for i in range(40) %}}{{% set ns.x = [ns.x, ns.x] %}}{{% endfor %}}{write}\n"
        );
        let (code, file, line, _, message) = single_error("", &template);
        assert_eq!(
            (code.as_str(), file.as_str(), line),
            ("too-much-text", "components/intro.md", 1),
            "{write}: {message}"
        );
    }
    // Its nesting alone is nothing to refuse.
    let template = "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}{{ ns.x|length }}\n";
    assert_eq!(with_template("", template).validate().counts(), (0, 0));
}

// A namespace is the only value a template can change, so it is where a value can grow
// without bound: a loop storing `[ns.x]` in `ns.x` built, within its fuel, a list nested
// millions deep, and a namespace could hold itself. Dropping, comparing or printing such a
// value overflowed the stack and aborted the process, from a template of a hundred bytes.
// Storing it is now a located error, on the matrix's threads as on the main one.
#[test]
fn a_namespace_cannot_grow_a_value_past_the_stack() {
    let deep = "{% set ns = namespace(x=[]) %}{% for j in range(20) %}{% for i in range(90000) %}\
                {% set ns.x = [ns.x] %}{% endfor %}{% endfor %}";
    let cases = [
        (
            format!("{deep}{{{{ ns.x ~ '' }}}}\n"),
            "a namespace cannot hold a value that nests lists or maps more than 128 deep",
        ),
        (
            format!("{deep}done\n"),
            "a namespace cannot hold a value that nests lists or maps more than 128 deep",
        ),
        (
            "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns ~ '' }}\n".to_string(),
            "a namespace cannot hold a namespace",
        ),
        // A chain of namespaces, each holding the next, is as deep as it is long: each
        // link is shallow when it is made.
        (
            format!(
                "{{% set nodes = [{}namespace()] %}}{{% for i in range(49999) %}}\
                 {{% set node = nodes[i] %}}{{% set node.next = nodes[i + 1] %}}{{% endfor %}}\
                 {{{{ nodes[0] ~ '' }}}}\n",
                "namespace(),".repeat(49_999)
            ),
            "a namespace cannot hold a namespace",
        ),
        (
            "{% set all = namespace(list=[]) %}{% set all.list = all.list + [namespace()] %}\n"
                .to_string(),
            "a namespace cannot hold a namespace",
        ),
        // A loop holds what it loops over: stored back, it nested without end.
        (
            "{% set ns = namespace(x=[]) %}{% for k in [ns.x] %}{% set ns.x = loop %}{% endfor %}\n"
                .to_string(),
            "a namespace cannot hold a loop",
        ),
        // Values made on the fly (`items`) were freed while being checked, and a later one
        // at the same address was taken as already checked.
        (
            "{% set ns = namespace(x=[]) %}{% for j in range(1000) %}{% for i in range(100) %}\
             {% set ns.x = [{'a': ns.x}|items, {'b': 1}|items] %}{% endfor %}{% endfor %}\n"
                .to_string(),
            "more than 128 deep",
        ),
        (
            "{% set ns = namespace(x=[]) %}{% set ns.x = {'k': [ns]} %}\n".to_string(),
            "a namespace cannot hold a namespace",
        ),
    ];
    for (template, message) in cases {
        let (code, file, line, _, found) = single_error("", &template);
        assert_eq!(
            (code.as_str(), file.as_str(), line),
            ("render-failed", "components/intro.md", 1),
            "{template}: {found}"
        );
        assert!(found.contains(message), "{template}: {found}");
        let (_workspace, output) = build_all_on_the_matrix_threads(&template);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{template}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // What namespaces are for still works: counters, flags, lists that grow flat (two
    // thousand appends, each checking only what it adds), values nested up to the limit.
    // (Appending in a loop copies the list every 32 turns: ten thousand appends took more
    // than a second, and now run out of the default fuel.)
    let template = "{% set ns = namespace(count=0, seen=[], found=false, x=[]) %}\
                    {% for i in range(2000) %}{% set ns.count = ns.count + 1 %}\
                    {% set ns.seen = ns.seen + [{'i': [i]}] %}{% set ns.found = true %}{% endfor %}\
                    {% for i in range(127) %}{% set ns.x = [ns.x] %}{% endfor %}\
                    {{ ns.count }} {{ ns.seen|length }} {{ ns.found }} {{ ns.x|tojson|length }}\n";
    let workspace = with_template("", template).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(
        run.stdout.contains("2000 2000 true 256"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

// Without a namespace, a value nests one level per statement: `{% set a = [a] %}` written out
// tens of thousands of times. Comparing two such values (`==`, `<`, `sort`, `in`, `unique`)
// and dropping one recursed once per level, and `build --all` aborted on a stack overflow on
// the matrix's threads. They now compare as if cut off 128 levels down, and drop without
// recursing.
#[test]
fn values_nested_statement_by_statement_compare_and_drop_within_the_stack() {
    let levels = 20_000;
    let nested = format!(
        "{{% set a = [] %}}{{% set b = [] %}}{}",
        "{%set a=[a]%}{%set b=[b]%}".repeat(levels)
    );
    for (expression, rendered) in [
        ("a == b", "true"),
        ("a != b", "false"),
        ("a < b", "false"),
        ("[a, b]|sort|length", "2"),
        ("[a, b]|unique|length", "1"),
        ("a in [b]", "true"),
        ("dict(x=a) == dict(x=b)", "true"),
        // Nothing compared: only dropped at the end of the render.
        ("a|length", "1"),
    ] {
        let template = format!("{nested}{{{{ {expression} }}}}\n");
        let (workspace, output) = build_all_on_the_matrix_threads(&template);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{expression}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let prompt =
            std::fs::read_to_string(workspace.root().join("examples/prompts/generic/k.md"))
                .unwrap();
        assert!(
            prompt.contains(&format!("\n{rendered}\n")),
            "{expression}: {}",
            &prompt[prompt.len().saturating_sub(300)..]
        );
    }
}

// A memory limit counts every thread's stack, and at 512M starting the matrix's threads
// failed and panicked the build. A thread that cannot start is one helper fewer.
#[test]
fn a_low_memory_limit_builds_on_fewer_threads() {
    let mut fixture = Fixture::minimal();
    for name in ["a", "b", "c", "d", "e", "f", "g", "h", "i"] {
        fixture = fixture.file(&format!("examples/contexts/{name}.toml"), common::CONTEXT);
    }
    let workspace = fixture.write();
    workspace.succeeds_within_memory("256M", &["build", "--all"]);
    assert!(
        workspace
            .root()
            .join("examples/prompts/generic/i.md")
            .exists()
    );
}

// A rule's regex compiles only its pattern's forward form; the regex crate also limits the
// backward form, and a pattern whose backward form passes the limit is refused at its place,
// with the regex crate's words, as the regex crate refuses it.
#[test]
fn a_rule_too_large_backwards_is_refused_at_its_pattern() {
    let rule = "\n[[postprocess]]\nrule = \"regex\"\npattern = '\\w{300}'\nreplace = \"x\"\n";
    let (code, file, line, column, message) = single_error(rule, "Intro.\n");
    assert_eq!(
        (code.as_str(), file.as_str()),
        ("invalid-regex", "promptc.toml"),
        "{message}"
    );
    assert!(line > 1 && column == 11, "{line}:{column}");
    assert_eq!(
        message,
        "invalid regular expression: Compiled regex exceeds size limit of 10485760 bytes."
    );
}

// To find the groups of a match, the regex engine keeps a position for both ends of every
// capture group in each state of the pattern while it searches: `(a)?` repeated thousands of
// times, within the size limits, asked for gigabytes at the first search and the process
// aborted, from an 82-byte template or one post-processing rule. `matching` only asks whether
// a text matches, and builds no capture states; a rule's regex, whose groups the replacement
// may read, is refused when that table would pass 128 MB.
#[test]
fn a_pattern_of_thousands_of_capture_groups_does_not_take_the_memory() {
    let template =
        "{{ range(1000)|join is matching('(a)?' * 5000 ~ '(?:[0-9]{0,50}[0-4]){5}[a-z]') }}\n";
    let workspace = with_template("", template).write();
    let stdout = workspace.succeeds_within_memory("256M", &["build", "--family", "generic"]);
    assert!(stdout.contains("false"), "{stdout}");

    let rule = format!(
        "\n[[postprocess]]\nrule = \"regex\"\npattern = \"{}(?:[a-z ]{{0,50}}e){{5}}[0-9]\"\nreplace = \"x\"\n",
        "(a)?".repeat(8000)
    );
    let (code, file, line, _, message) = single_error(&rule, "Intro.\n");
    assert_eq!(
        (code.as_str(), file.as_str()),
        ("invalid-regex", "promptc.toml"),
        "{message}"
    );
    assert!(line > 1, "{line}");
    assert!(
        message
            .starts_with("invalid regular expression: its 8000 capture groups would need about ")
            && message.ends_with(
                "(at most 128 MB): write the groups the replacement does not use as `(?:…)`"
            ),
        "{message}"
    );
    // A rule with a few groups, as rules have, still works.
    let rule = "\n[[postprocess]]\nrule = \"regex\"\npattern = \"(In)(tro)\"\nreplace = \"$2$1\"\n";
    let workspace = with_template(rule, "Intro.\n").write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert!(
        run.stdout.contains("troIn."),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

// The regex engine searches in time proportional to the text times the pattern when its lazy
// automaton gives up: `(?:[0-9]{0,200}[0-4]){5}[a-z]` read about 120 KB a second, and such a
// search in a loop ran until the processor-time limit, within the default fuel. A search now
// costs fuel by the text's length times the pattern's cost, taken before it runs: this one,
// of 40 KB, costs more than a fuel of 200 000, and is refused without being run.
#[test]
fn a_search_costs_fuel_by_the_text_and_the_pattern() {
    let template = "{% set s = range(10000)|join %}\n\
                    {{ s is matching('(?:[0-9]{0,200}[0-4]){5}[a-z]') }}\n";
    let started = Instant::now();
    let (code, file, line, _, message) = single_error("fuel = 200000\n", template);
    assert_eq!(
        (code.as_str(), file.as_str(), line),
        ("out-of-fuel", "components/intro.md", 2),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    // Routing's searches, a model id against a pattern, cost a few units each.
    let reused = "{% for i in range(2000) %}{% if 'gpt-5-codex' is matching('(?i)^gpt-[5-9]') and 'openai/gpt-5' is glob('openai/*') %}{% endif %}{% endfor %}\n";
    assert_eq!(
        with_template("fuel = 200000\n", reused).validate().counts(),
        (0, 0)
    );
}

// Clean-up rules ran their regexes over the whole prompt at no cost: a rule whose pattern the
// regex engine can only search state by state (`(?:[0-9]{0,200}[0-4]){5}[a-z]`, about 120 KB a
// second) took seconds over a long prompt, and `validate`, which compiles each prompt more
// than once, ran until the processor-time limit. Such a search now pays from the fuel the
// templates left, before it runs; a search the lazy DFA completes costs nothing.
#[test]
fn a_clean_up_regex_searched_state_by_state_pays_from_the_compile_fuel() {
    let slow = "\n[[postprocess]]\nrule = \"regex\"\npattern = \"(?:[0-9]{0,200}[0-4]){5}[a-z]\"\nreplace = \"x\"\n";
    // About 190 KB of digits: some 9 million fuel, more than the default 5 million.
    let long = "{{ range(40000)|join }}\n";
    let (code, file, line, _, message) = single_error(slow, long);
    assert_eq!(
        (code.as_str(), file.as_str(), line),
        ("postprocess-out-of-fuel", "promptc.toml", 4),
        "{message}"
    );
    assert!(
        message.starts_with(
            "this post-processing rule's regex cannot be searched quickly over this prompt, and searching it state by state costs "
        ) && message.ends_with(" fuel a KiB: more than is left of the compile's fuel (5000000)"),
        "{message}"
    );
    // Over a short prompt it is paid for and applied, as the regex crate applies it.
    let workspace = with_template(slow, "0123456789012345678901234567890123 and more\n").write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let expected = regex::Regex::new("(?:[0-9]{0,200}[0-4]){5}[a-z]")
        .unwrap()
        .replace_all("0123456789012345678901234567890123 and more", "x")
        .into_owned();
    assert!(run.stdout.contains(&expected), "{}", run.stdout);

    // A dozen rules with groups and Unicode classes, over a 100 KB prompt, within the default
    // fuel: the lazy DFA finds their matches, and they pay for little more than its states.
    let mut rules = String::new();
    let mut template = String::new();
    for rule in 0..12 {
        rules.push_str(&format!(
            "\n[[postprocess]]\nrule = \"regex\"\npattern = \"(?m)^NOTE{rule}: (\\\\w+)\"\nreplace = \"Note: $1\"\n"
        ));
        template.push_str(&format!(
            "NOTE{rule}: ünïcode{rule} and the rest of the line\n"
        ));
    }
    let filler = "Plain prose of a prompt, ascii and ünïcode alike, line after line.\n";
    template.push_str(&filler.repeat(1500));
    let workspace = with_template(&rules, &template).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for rule in 0..12 {
        assert!(
            run.stdout
                .contains(&format!("Note: ünïcode{rule} and the rest of the line\n")),
            "rule {rule}"
        );
    }
    assert!(!run.stdout.contains("NOTE"));
}

// A second red-team pass found searches the lazy DFA completes, or group searches of short
// matches, that ran for half a minute at no cost: `a*b|a` over 200,000 `a`s reads on to the end
// of the text for each one-byte match; a pattern of ten thousand repetitions took 50 ms to find
// the groups of each of a thousand 255-byte matches. What searches read past four times the
// text, and every group search, are paid.
#[test]
fn a_clean_up_regex_pays_for_reading_the_text_again_and_for_each_group_search() {
    let rule = |pattern: &str, replace: &str| {
        format!(
            "\n[[postprocess]]\nrule = \"regex\"\npattern = \"{pattern}\"\nreplace = \"{replace}\"\n"
        )
    };
    for (pattern, replace, template) in [
        ("a*b|a", "", "{{ 'a' * 200000 }}\n"),
        (
            "(a[b-z]*)(?:(?:a[b-z]*)?){10000}",
            "<$1>",
            "{{ ((('a' ~ 'b' * 40) * 6) ~ 'a' ~ ('b' * 8) ~ '\\n') * 1000 }}\n",
        ),
    ] {
        let (code, file, line, _, message) = single_error(&rule(pattern, replace), template);
        assert_eq!(
            (code.as_str(), file.as_str(), line),
            ("postprocess-out-of-fuel", "promptc.toml", 4),
            "{pattern}: {message}"
        );
    }
    // A rule that matches on every line of a long prompt reads it about once, and the groups
    // of its short matches cost a few hundred units each: it runs within the default fuel.
    let trailing = rule("(?m)(\\\\w+)[ \\t]+$", "$1");
    let workspace = with_template(
        &trailing,
        "{% for i in range(5000) %}line {{ i }}  \n{% endfor %}",
    )
    .write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("line 4999\n") && !run.stdout.contains("line 17  "));
}

// Each clean-up regex may compile to 10 MiB, and nothing bounded them together: three hundred
// rules near that size took 2.9 GB. Past 32 MiB together, the rest are refused unbuilt.
#[test]
fn the_clean_up_regexes_together_compile_to_a_bounded_size() {
    let mut rules = String::new();
    for rule in 0..20 {
        rules.push_str(&format!(
            "\n[[postprocess]]\nrule = \"regex\"\npattern = \"QQZ{rule}(?:[a-z]?){{30000}}\"\nreplace = \"x\"\n"
        ));
    }
    let diagnostics = with_template(&rules, "Intro.\n").validate().diagnostics();
    assert!(!diagnostics.is_empty());
    assert!(
        diagnostics.iter().all(|d| d.code == "invalid-regex"
            && d.file == "promptc.toml"
            && d.message
                == "invalid regular expression: the clean-up regexes before it count more than 32 MiB together (each twice the memory it compiles to), the most a workspace's rules may take: simplify them, or merge rules into one pattern"),
        "{diagnostics:#?}"
    );
    // The first rules are built, the last is not; one line per rule refused.
    let first_refused = diagnostics[0].line;
    assert!(first_refused > 4 + 5, "{diagnostics:#?}");
    assert_eq!(diagnostics.last().unwrap().line, 4 + 19 * 5 + 2);
}

// A guard checks each match against each of its markers: 50,000 markers over a million
// matches ran until the processor-time limit. A guard holds at most 32 markers.
#[test]
fn a_guard_holds_at_most_32_markers() {
    let guard = |markers: usize| {
        let markers: Vec<String> = (0..markers).map(|i| format!("\"Z{i:05}\"")).collect();
        format!(
            "\n[[postprocess]]\nrule = \"regex\"\npattern = \"a\"\nreplace = \"b\"\nguard = {{ markers = [{}], within = 1 }}\n",
            markers.join(", ")
        )
    };
    let workspace = with_template(&guard(32), "a\n").write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (code, file, line, _, message) = single_error(&guard(33), "a\n");
    assert_eq!(
        (file.as_str(), line),
        ("promptc.toml", 8),
        "{code}: {message}"
    );
    assert!(message.contains("32"), "{code}: {message}");
}

// The README's example rule, `\bTODO\b`, ran out of fuel over an ordinary prompt with accents:
// a Unicode word boundary next to non-ASCII text makes the lazy DFA stop, and the whole rule
// was then paid as searched state by state. Only the searches it stops on are paid so (each
// for the rest of the text: where it stops on most of them, the rule still runs out).
#[test]
fn a_word_boundary_rule_over_non_ascii_text_runs_within_the_default_fuel() {
    let rule =
        "\n[[postprocess]]\nrule = \"regex\"\npattern = \"\\\\bTODO\\\\b\"\nreplace = \"todo\"\n";
    // `éTODO` is no word of its own: the lazy DFA stops there, on five lines of 2,000.
    let line = "Réglez le café, naïve façade; 日本語 and TODO: ship it.\n";
    let odd = "Not a word: éTODO.\n";
    let mut prompt = line.repeat(2000);
    // From the end, so that each insertion leaves the places of the next as they were.
    for at in [1600, 1200, 800, 400, 1] {
        prompt.insert_str(line.len() * at, odd);
    }
    let workspace = with_template(rule, &prompt).write();
    let run = workspace.run(&["build", "--family", "generic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.matches("and todo: ship it.").count(), 2000);
    assert_eq!(run.stdout.matches("Not a word: éTODO.").count(), 5);
}

// A pattern of hundreds of branches that never matches builds lazy-DFA states of thousands of
// pattern states each, about a second for each rule over a long prompt, without filling the
// cache and without reading the text twice: it paid nothing. The states it builds are paid.
#[test]
fn a_clean_up_regex_pays_for_the_states_its_search_builds() {
    let branches: Vec<String> = (0..300)
        .map(|i| {
            let a = char::from(b'a' + (i % 26) as u8);
            let b = char::from(b'A' + (i / 26 % 26) as u8);
            format!("[!-~\\x{{{:x}}}]*{a}{b}\\x00", 0x100 + i)
        })
        .collect();
    let rule = format!(
        "fuel = 200000\n\n[[postprocess]]\nrule = \"regex\"\npattern = '{}'\nreplace = \"x\"\n",
        branches.join("|")
    );
    // 100 KB of printable ASCII without quotes or the template's delimiters.
    let alphabet: Vec<char> = ('0'..='z')
        .filter(|c| !matches!(c, '{' | '}' | '%' | '#'))
        .collect();
    let text = common::irregular_text(100_000, &alphabet);
    let (code, _, line, _, message) =
        single_error(&rule, &format!("{{% raw %}}{text}{{% endraw %}}\n"));
    assert_eq!(
        (code.as_str(), line),
        ("postprocess-out-of-fuel", 5),
        "{message}"
    );
}

// Each context holds its own copy of what it inherits: four hundred files of one line, each
// extending one context of 4 MB, made 1.6 GB of contexts (and an abort for want of memory)
// from 4 MB of files. What the merged contexts hold together counts against
// `limits.workspace_bytes`, and passing it is one error, at the `extends` of the context
// that passed it.
#[test]
fn contexts_that_inherit_a_large_context_count_what_they_inherit() {
    let big: String = (0..40)
        .map(|index| format!("k{index:03} = \"{}\"\n", "x".repeat(90)))
        .collect();
    let mut fixture = Fixture::minimal().file(
        "examples/contexts/big.toml",
        format!("date = \"2026-11-01\"\n\n[extra]\n{big}"),
    );
    for index in 0..8 {
        fixture = fixture.file(
            &format!("examples/contexts/c{index}.toml"),
            "extends = \"big\"\nmode = \"plan\"\n",
        );
    }
    // The files alone are about 6 KB; each context holds about 10 KB once merged.
    one_error_past_what_is_inherited(&fixture, "examples/contexts/c", (1, 11));
}

// Variants copy what they inherit too: validation and the compiler each merge every variant
// from its chain, so a hundred one-line variants extending one with 4 MB of placeholders took
// 2 GB. They count what they inherit, counted before any merge, against the same limit, and
// passing it is one error, at the `extends` of the first variant past it.
#[test]
fn variants_that_inherit_a_large_variant_count_what_they_inherit() {
    let placeholders: String = (0..40)
        .map(|index| format!("p{index:03} = \"{}\"\n", "x".repeat(90)))
        .collect();
    let mut fixture = Fixture::minimal().file(
        "variants/big.toml",
        format!("id = \"big\"\nextends = \"generic\"\n\n[placeholders]\n{placeholders}"),
    );
    for index in 0..8 {
        fixture = fixture.file(
            &format!("variants/v{index}.toml"),
            format!("id = \"v{index}\"\nextends = \"big\"\n"),
        );
    }
    // The files alone are about 6 KB; each variant holds about 12 KB once merged.
    one_error_past_what_is_inherited(&fixture, "variants/v", (2, 11));
}

// At 4 GiB, a workspace of large partials ended the process on a failed allocation past its
// 4 GiB memory ceiling: what a load holds (the files, and a copy of each template compiled)
// must fit below it. A manifest may raise the setting to 1 GiB, no further.
#[test]
fn the_workspace_may_hold_at_most_a_gibibyte() {
    let with = |bytes: u64| {
        Fixture::minimal()
            .file(
                "promptc.toml",
                format!("{}[limits]\nworkspace_bytes = {bytes}\n", common::MANIFEST),
            )
            .validate()
    };
    assert_eq!(with(1 << 30).counts(), (0, 0));
    let refused = with((1 << 30) + 1).diagnostics();
    assert_eq!(refused.len(), 1, "{refused:#?}");
    assert!(refused[0].message.contains("1073741824"), "{refused:#?}");
}

/// Under a `limits.workspace_bytes` of 40 000, `fixture` has one error, `inherits-too-much`,
/// at `at` in a file whose path starts with `file`; under ten times that, none.
fn one_error_past_what_is_inherited(fixture: &Fixture, file: &str, at: (u64, u64)) {
    let limited = |bytes: u64| {
        fixture
            .clone()
            .file(
                "promptc.toml",
                format!("{}[limits]\nworkspace_bytes = {bytes}\n", common::MANIFEST),
            )
            .validate()
    };
    let errors: Vec<_> = limited(40_000)
        .diagnostics()
        .into_iter()
        .filter(|d| d.severity == "error")
        .map(|d| (d.code, d.file, d.line, d.column))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (code, found, line, column) = &errors[0];
    assert_eq!(code, "inherits-too-much");
    assert!(found.starts_with(file), "{found}");
    assert_eq!((*line, *column), at);
    assert_eq!(limited(400_000).counts(), (0, 0));
}

/// The minimal workspace whose variant, with native tool definitions, lists `tools` tools that
/// each take the shared parameter `mode`, an `enum` of `values` values.
fn shared_enum(values: usize, tools: usize) -> Fixture {
    let values: Vec<String> = (0..values).map(|i| format!("\"mode_{i}\"")).collect();
    let ids: Vec<String> = (0..tools).map(|i| format!("\"t{i}\"")).collect();
    let mut fixture = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[parameters.mode]\ninstruction = \"How to run it.\"\nenum = [{}]\n",
                common::MANIFEST,
                values.join(", ")
            ),
        )
        .file(
            "variants/generic.toml",
            common::VARIANT.replace(
                "tools = [\"read_file\"]",
                &format!("native_tools = true\ntools = [{}]", ids.join(", ")),
            ),
        )
        .remove("tools/read_file.toml");
    for i in 0..tools {
        fixture = fixture.file(
            &format!("tools/t{i}.toml"),
            format!(
                "id = \"t{i}\"\ndescription = \"Tool {i}.\"\n\n[[parameters]]\nuse = \"mode\"\n"
            ),
        );
    }
    fixture
}

// A shared parameter is written once, in promptc.toml, and used by any number of tools: an
// `enum` of 7 000 values used by 2 000 tools (a 282 KB workspace) was copied into every tool
// several times over and `validate` took 3.9 GB. Tools now share the schema, and each copy a
// compile writes out (its native definitions, its JSON output) counts against
// `limits.compile_bytes`: past it, the error is at the parameter where the compile went over.
#[test]
fn a_shared_schema_is_held_once_and_counted_in_every_tool_that_has_it() {
    let workspace = shared_enum(5_000, 1_500).write();
    let output = workspace
        .command()
        .env("PROMPTC_MEMORY_LIMIT", "256M")
        .args(["validate", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", common::stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{report:#}");
    let d = &diagnostics[0];
    assert_eq!(d["code"], "schemas-too-large", "{d:#}");
    assert!(d["file"].as_str().unwrap().starts_with("tools/t"), "{d:#}");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(4), Some(1))
    );
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .ends_with("come to more than 67108864 bytes (`limits.compile_bytes`)"),
        "{d:#}"
    );

    // Within the limit, every tool's definition holds the whole enum, and templates see it.
    let workspace = shared_enum(3_000, 20)
        .file(
            "components/intro.md",
            "Modes: {{ tools[19].parameters[0].schema.enum|length }}, the last {{ tools[0].parameters[0].schema.enum|last }}.\n",
        )
        .write();
    workspace.succeeds_within_memory("256M", &["build", "--all"]);
    let prompts = workspace.root().join("examples/prompts/generic");
    let prompt = std::fs::read_to_string(prompts.join("basic.md")).unwrap();
    assert!(
        prompt.contains("Modes: 3000, the last mode_2999.\n"),
        "{prompt}"
    );
    let definitions = std::fs::read_to_string(prompts.join("basic.tools.json")).unwrap();
    let definitions: serde_json::Value = serde_json::from_str(&definitions).unwrap();
    let tools = definitions.as_array().unwrap();
    assert_eq!(tools.len(), 20);
    for tool in tools {
        let modes = tool.pointer("/function/parameters/properties/mode/enum");
        let modes = modes.and_then(|m| m.as_array()).map(Vec::len);
        assert_eq!(modes, Some(3_000), "{}", tool["function"]["name"]);
    }
}

// A tool with a family spec is resolved once per variant of that family, and each resolution
// copied the tool's own schema: a 3 MB `enum` over 80 variants took 2.4 GB in `validate`. The
// schema is made once, when the workspace loads, and every resolution shares it.
#[test]
fn a_tools_own_schema_is_held_once_for_every_variant_that_resolves_it() {
    let values: Vec<String> = (0..300_000).map(|i| format!("\"m{i}\"")).collect();
    let mut manifest = format!("{}default_context = \"basic\"\n", common::MANIFEST)
        .replace("\"generic\"", "\"gpt\"");
    let mut fixture = Fixture::minimal()
        .remove("variants/generic.toml")
        .file(
            "tools/big.toml",
            format!(
                "id = \"big\"\ndescription = \"Big.\"\n\n[[parameters]]\nname = \"mode\"\ninstruction = \"M.\"\nenum = [{}]\n\n[families.gpt]\ndescription = \"Big, for gpt.\"\n",
                values.join(", ")
            ),
        );
    for i in 0..80 {
        manifest.push_str(&format!(
            "\n[[build.entries]]\nvariant = \"v{i}\"\ncontext = \"basic\"\noutput = \"v{i}/basic.md\"\n"
        ));
        fixture = fixture.file(
            &format!("variants/v{i}.toml"),
            format!("id = \"v{i}\"\nfamily = \"gpt\"\nversion = \"1.0.{i}\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\"]\ntools = [\"big\"]\n"),
        );
    }
    let workspace = fixture.file("promptc.toml", manifest).write();
    workspace.succeeds_within_memory("256M", &["validate"]);
}

// A shared parameter's condition was copied into every tool that uses it, and again into the
// reason of each one it leaves out: a 1 MB `when` used by 1,000 tools took 2.2 GB. Each is
// now the one condition.
#[test]
fn a_shared_condition_is_held_once() {
    let ids: Vec<String> = (0..1_000).map(|i| format!("\"t{i}\"")).collect();
    let mut fixture = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[parameters.mode]\ninstruction = \"How to run it.\"\nwhen = \"cwd == '{}'\"\n",
                common::MANIFEST,
                "a".repeat(1_000_000)
            ),
        )
        .file(
            "variants/generic.toml",
            common::VARIANT.replace(
                "tools = [\"read_file\"]",
                &format!("tools = [{}]", ids.join(", ")),
            ),
        );
    for i in 0..1_000 {
        fixture = fixture.file(
            &format!("tools/t{i}.toml"),
            format!(
                "id = \"t{i}\"\ndescription = \"Tool {i}.\"\n\n[[parameters]]\nuse = \"mode\"\n"
            ),
        );
    }
    let workspace = fixture.write();
    workspace.succeeds_within_memory("256M", &["validate"]);
    let explained = workspace.succeeds_within_memory(
        "256M",
        &[
            "explain",
            "--family",
            "generic",
            "--context",
            "basic",
            "--tool",
            "t999",
        ],
    );
    assert!(explained.contains("is false"), "{:.400}", explained);
}

// Each file costs promptc a few kilobytes besides its text: four hundred thousand partials of
// ten bytes held 5 GB. A folder is read up to its first 10,000 files in name order, and the
// rest is one error at the folder.
#[test]
fn a_folder_of_more_files_than_are_read_is_one_error_at_the_folder() {
    let mut fixture = Fixture::minimal();
    for index in 0..10_001 {
        fixture = fixture.file(&format!("partials/p{index:05}.md"), "x");
    }
    let workspace = fixture.write();
    let run = workspace.run(&["build"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("error"))
        .collect();
    assert_eq!(
        errors,
        [
            "error[path-refused]: `partials` holds more than 10000 files (the most read from one \
             folder), and past its first 10000 in name order: promptc does not read it",
            "error: 1 error, 10000 warnings",
        ]
    );
    // The first ten thousand in name order are read (each is told unused; past the first
    // thousand problems of the run, counted), the last is not.
    assert!(
        run.stderr
            .contains("warning[more-problems]: 9001 more warnings in 9001 files, not shown"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("partials/p10000.md"));
}

/// Includes nest 19 deep on the matrix's threads, and a macro recurses 30 deep; past the
/// recursion limit the render fails at the include or call that went past it, in the file
/// that holds it, and nothing crashes.
#[test]
fn templates_nest_to_the_recursion_limit_and_fail_where_they_pass_it() {
    let chain = |depth: usize| {
        let mut fixture = Fixture::minimal().file(
            "components/intro.md",
            "You work here.\n{% include \"partials/p0.md\" %}\n",
        );
        for index in 0..depth - 1 {
            fixture = fixture.file(
                &format!("partials/p{index}.md"),
                format!("{{% include \"partials/p{}.md\" %}}", index + 1),
            );
        }
        fixture.file(&format!("partials/p{}.md", depth - 1), "the end")
    };
    assert!(chain(19).validate().items().is_empty());
    let too_deep = chain(20).validate();
    let error = too_deep.single();
    assert_eq!(error.code, "render-failed");
    assert!(
        error.message.contains("recursion limit exceeded"),
        "{}",
        error.message
    );
    assert_eq!(error.file, "partials/p18.md");

    let recursing = |depth: usize| {
        format!(
            "{{% macro m(n) %}}{{% if n > 0 %}}{{{{ m(n - 1) }}}}{{% else %}}ok{{% endif %}}{{% endmacro %}}\n{{{{ m({depth}) }}}}\n"
        )
    };
    let (_, built) = build_all_on_the_matrix_threads(&recursing(30));
    assert_eq!(
        built.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let (_, built) = build_all_on_the_matrix_threads(&recursing(1000));
    assert_eq!(built.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&built.stderr).contains("recursion limit exceeded"));
}

// Each `[[routing.expect]]` model's routing conditions have fuel of their own, so thousands
// of models with costly rules ran `validate` until the processor-time limit's signal ended
// it, printing nothing (and no JSON on stdout). The tests stop at three quarters of the
// limit and say so, at the first model not tested.
#[cfg(unix)]
#[test]
fn routing_expectations_stop_short_of_the_processor_time_limit_and_say_so() {
    use std::os::unix::process::ExitStatusExt;
    let mut manifest =
        String::from("fuel = 100000000\n[routing]\norder = [\"small\"]\nexpect = [\n");
    for n in 0..3000 {
        manifest.push_str(&format!(
            "  {{ model = \"m{n:07}\", family = \"generic\" }},\n"
        ));
    }
    manifest.push_str("]\n");
    let workspace = with_template(&manifest, "You work in {{ cwd }}.\n")
        .file(
            "variants/small.toml",
            "id = \"small\"\nextends = \"generic\"\n\
             match = \"(model.id * 1000000) is matching('(?i)[a-z0-9]{3}x') or \
             (model.id * 1000000) is matching('(?i)[a-z0-9]{4}y')\"\n",
        )
        .write();
    let output = workspace
        .command()
        .env("PROMPTC_TIME_LIMIT", "2")
        .args(["validate", "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.signal(), None, "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let stopped = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "processor-time-spent")
        .unwrap_or_else(|| panic!("{json}"));
    assert!(
        stopped["message"].as_str().unwrap().starts_with(
            "promptc stopped testing the routing rules on `[[routing.expect]]` models after 1.5 s"
        ),
        "{stopped}"
    );
    assert_eq!(stopped["file"], "promptc.toml");
}

// An output past 64 MiB (the usual cap on an output read back), which a workspace that raises
// `compile_bytes` may make: `build --all` wrote it, and `check` refused it as too large to
// read, with the advice to build again, forever. `check` reads what a compile may make.
#[test]
fn check_reads_an_output_as_long_as_a_compile_may_make_it() {
    let workspace = with_template(
        "default_context = \"basic\"\nfuel = 100000000\n[limits]\nrender_bytes = 268435456\ncompile_bytes = 268435456\n",
        "{{ \"abcdefghij\" * 7000000 }}\n",
    )
    .write();
    let built = workspace.run(&["build", "--all", "-q"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    let checked = workspace.run(&["check", "-q"]);
    assert_eq!(checked.code, 0, "{}", checked.stderr);
    // A file longer than the compiled text is stale, and says why.
    let output = workspace.root().join("examples/prompts/generic/basic.md");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&output)
        .unwrap();
    std::io::Write::write_all(&mut file, b"more\n").unwrap();
    let checked = workspace.run(&["check", "--format", "json"]);
    assert_eq!(checked.code, 1, "{}", checked.stderr);
    let json: serde_json::Value = serde_json::from_str(&checked.stdout).unwrap();
    assert_eq!(json["files"].as_array().map(Vec::len), Some(1), "{json}");
    assert_eq!(json["files"][0]["status"], "stale");
    assert!(
        json["files"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("(the file is longer than the 70000197 bytes compiled for it)"),
        "{json}"
    );
}

/// A context nested as deep as JSON text may be (a tool's input schema of 45 levels, each two:
/// itself and its `properties`) is read, checked and compiled: reading it on a thread of
/// std's 2 MiB stack overflowed it in a debug build, and the process aborted.
#[test]
fn a_deeply_nested_context_is_read_and_compiled_without_running_out_of_stack() {
    let mut schema = serde_json::json!({ "type": "string" });
    for _ in 0..45 {
        schema = serde_json::json!({ "type": "object", "properties": { "a": schema } });
    }
    let context = serde_json::json!({
        "date": "2026-11-01",
        "mcp_servers": [{ "name": "notes", "tools": [{ "name": "add", "description": "Add.", "input_schema": schema }] }],
    });
    // The shipped library, whose native families carry the schema whole in their tool
    // definitions: its files are read on two threads, its matrix compiled on two.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("library");
    promptc::init(&root).unwrap();
    std::fs::write(
        root.join("examples/contexts/deep.json"),
        context.to_string(),
    )
    .unwrap();
    for args in [
        &["validate"][..],
        &["build", "--all"],
        &["tools", "--family", "native-next-gen", "--context", "deep"],
    ] {
        let output = common::promptc()
            .current_dir(&root)
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

/// The library's ways into reading data hold on a caller's thread of little stack (a
/// program's 2 MiB thread, a test's): JSON nested 120 levels (the deepest read is 127) took
/// about 3 MiB in a debug build, and the process aborted where the thread had less.
#[test]
fn the_library_reads_the_deepest_data_on_a_thread_of_little_stack() {
    let deep = format!("{}1{}", "{\"a\": ".repeat(120), "}".repeat(120));
    let text = format!("{{\"date\": \"2026-11-01\", \"extra\": {deep}}}");
    let workspace = Fixture::minimal()
        .file("examples/contexts/deep.json", &text)
        .write();
    let mut loaded = promptc::load_workspace(workspace.root()).unwrap();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn_scoped(scope, || {
                let again = promptc::load_workspace(workspace.root()).unwrap();
                assert!(!again.diagnostics.has_errors());
                assert!(again.workspace.context("deep").is_some());
                let read =
                    promptc::load_context_text(&mut loaded.workspace, "inline", text.clone());
                assert!(read.is_ok());
            })
            .unwrap()
            .join()
            .unwrap();
    });
}

// A near name is looked for only for the unknown names of a file that are told (the first
// hundred): each search compares the name with every known one, and a variant listing a
// hundred thousand unknown ids against thousands of components ran past the processor-time
// limit finding suggestions no report showed.
#[test]
fn near_names_are_looked_for_only_for_the_unknown_names_told() {
    let listed: Vec<String> = (0..150).map(|n| format!("\"intro{n}\"")).collect();
    let workspace = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\", {}]\ntools = [\"read_file\"]\n",
                listed.join(", ")
            ),
        )
        .write();
    let loaded = promptc::load_workspace(workspace.root()).unwrap();
    let suggestions: Vec<Option<String>> = loaded
        .diagnostics
        .iter()
        .filter_map(|diagnostic| match &diagnostic.problem {
            promptc::problem::Problem::UnknownReference { suggestion, .. } => {
                Some(suggestion.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(suggestions.len(), 150);
    assert!(
        suggestions[..100]
            .iter()
            .all(|s| s.as_deref() == Some("intro"))
    );
    assert!(suggestions[100..].iter().all(Option::is_none));
    // What is told has its near name.
    let run = workspace.run(&["validate"]);
    assert_eq!(
        run.stderr.matches("did you mean `intro`?").count(),
        100,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("this file has 50 more errors, not shown"),
        "{}",
        run.stderr
    );
    // In the order the file writes them: a list written after another is looked at after it.
    let tools: Vec<String> = (0..100).map(|n| format!("\"read_fil{n}\"")).collect();
    let workspace = Fixture::minimal()
        .file(
            "variants/generic.toml",
            format!(
                "id = \"generic\"\ntemplate_file = \"generic.md\"\ntools = [\"read_file\", {}]\ncomponents = [\"intro\", \"intr\"]\n",
                tools.join(", ")
            ),
        )
        .write();
    let run = workspace.run(&["validate"]);
    assert_eq!(
        run.stderr.matches("did you mean `read_file`?").count(),
        100,
        "{}",
        run.stderr
    );
}

// A value read takes hundreds of bytes of memory: 3.9 MB of `[[],[],…]` in one context took
// 800 MB, and twenty such files, within the workspace's byte limit, ran the process out of
// memory with no word of where. The workspace's data files may hold a million values
// together; the file that passes it is not read, and says so.
#[test]
fn the_values_of_the_data_files_are_bounded() {
    // `count` zeros in a list: as many values, and as many commas.
    let zeros = |count: usize| {
        format!(
            "date = \"2026-11-01\"\n[extra]\nn = [{}]\n",
            vec!["0"; count].join(",")
        )
    };
    // (A JSON file's tables are said to be objects.)
    let too_many = "the file holds more than 1000000 values (keys, items and ";
    let together = "with this file, the workspace's data files hold more than 1000000 values (keys, items and ";
    // The same as JSON, which serde_json reads, and whose places the YAML reader gives up
    // finding past a bound of its own.
    let json_zeros = |count: usize| {
        format!(
            "{{\"date\": \"2026-11-01\", \"extra\": {{\"n\": [{}]}}}}\n",
            vec!["0"; count].join(",")
        )
    };
    // Counted once read; and, where the text's keys, values, commas and brackets counted
    // before already say so, before: such a file is refused whole.
    for (name, file, text) in [
        ("counted", "big.toml", zeros(1_000_100)),
        (
            "brackets",
            "big.toml",
            format!("a = [{}]\n", vec!["[]"; 1_200_000].join(",")),
        ),
        ("json", "big.json", json_zeros(1_000_100)),
    ] {
        let run = Fixture::minimal()
            .file(&format!("examples/contexts/{file}"), &text)
            .write()
            .run(&["validate"]);
        assert_eq!(run.code, 1, "{name}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("error[too-many-values]: {too_many}"))
                && run
                    .stderr
                    .contains(&format!("--> examples/contexts/{file}:1:1")),
            "{name}: {}",
            run.stderr
        );
    }
    // Two files each within it (the second JSON), past it together: the second read is
    // refused; one alone is read.
    let second = "b.json";
    let workspace = Fixture::minimal()
        .file("examples/contexts/a.toml", zeros(600_000))
        .file(&format!("examples/contexts/{second}"), json_zeros(600_000))
        .write();
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 1, "{second}: {}", run.stderr);
    assert_eq!(
        run.stderr.matches("error[too-many-values]").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("error[too-many-values]: {together}"))
            && run
                .stderr
                .contains(&format!("--> examples/contexts/{second}:1:1")),
        "{second}: {}",
        run.stderr
    );
    std::fs::remove_file(workspace.root().join(format!("examples/contexts/{second}"))).unwrap();
    let run = workspace.run(&["validate", "-q"]);
    assert_eq!(run.code, 0, "{second}: {}", run.stderr);
    // What strings hold counts for nothing: half a million lines of list-like prose in one
    // string are one value.
    let prose = format!(
        "date = \"2026-11-01\"\nnotes = \"\"\"\n{}\"\"\"\n",
        "- a, b.\n".repeat(500_000)
    );
    let run = Fixture::minimal()
        .file("examples/contexts/prose.toml", prose)
        .write()
        .run(&["validate", "-q"]);
    assert!(!run.stderr.contains("too-many-values"), "{}", run.stderr);
}

// A file past what the files before it leave of the million values was read whole, then
// refused: 1,600 contexts of 28,000 values each (88 MB, within every other limit) ran
// `validate` past a minute. Such a file is refused as one past the limit alone is: counted
// before it is read (TOML, JSON), or its reader stopped where it passes (YAML).
#[test]
fn files_past_the_values_left_are_refused_without_being_read_whole() {
    let list = |count: usize| vec!["0"; count].join(",");
    let mut fixture = Fixture::minimal().file(
        "examples/contexts/a.toml",
        format!("date = \"2026-11-01\"\n[extra]\nn = [{}]\n", list(990_000)),
    );
    let files = 25;
    for i in 0..files {
        fixture = fixture
            .file(
                &format!("examples/contexts/b{i:02}.json"),
                format!("{{\"extra\": {{\"n\": [{}]}}}}\n", list(300_000)),
            )
            .file(
                &format!("examples/contexts/c{i:02}.toml"),
                format!("[extra]\nn = [{}]\n", list(300_000)),
            )
            .file(
                &format!("examples/contexts/d{i:02}.yaml"),
                format!("extra:\n  n: [{}]\n", list(200_000)),
            );
    }
    let workspace = fixture.write();
    let (status, stderr) = within_a_minute(
        &workspace,
        &["validate"],
        "4G",
        "files past the values left, read whole",
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    let together = "error[too-many-values]: with this file, the workspace's data files hold more than 1000000 values";
    assert_eq!(stderr.matches(together).count(), 3 * files, "{stderr}");
    for name in ["b00.json", "c24.toml", "d13.yaml"] {
        assert!(
            stderr.contains(&format!("--> examples/contexts/{name}:1:1")),
            "{name}: {stderr}"
        );
    }
}

// Each misspelt field a template reads was placed by a search of its text: sixteen thousand
// of them, in a partial included by four hundred others, ran validate out of processor time.
// Past the problems a file shows, the rest are counted, not placed; what is shown is as before.
#[test]
fn misspelt_fields_past_those_a_file_shows_are_counted_not_placed() {
    let reads: String = (0..300)
        .map(|i| format!("{{{{ browser.f{i} }}}}"))
        .collect();
    let validation = Fixture::minimal()
        .file(
            "components/intro.md",
            format!("You work in {{{{ cwd }}}}. {reads}\n"),
        )
        .validate();
    let diagnostics = validation.diagnostics();
    let placed: Vec<_> = diagnostics
        .iter()
        .filter(|d| d.code == "unknown-context-field")
        .collect();
    assert_eq!(placed.len(), 100);
    assert!(
        placed.iter().all(|d| d.line == 1 && d.column > 1),
        "{placed:#?}"
    );
    let more: Vec<_> = diagnostics
        .iter()
        .filter(|d| d.code == "more-problems")
        .collect();
    assert_eq!(more.len(), 1, "{diagnostics:#?}");
    assert!(
        more[0].message.contains("200 more errors"),
        "{}",
        more[0].message
    );
}

/// 5,000 paths into `extra` listed as volatile, for 41 outputs: the stable-prefix probe made
/// the context (a key more each time) a value and back once per path, for every output, and
/// validate ran out of processor time (SIGXCPU, nothing said). Now once per output.
#[test]
fn a_long_list_of_volatile_paths_is_probed_in_bounded_time() {
    let paths: Vec<String> = (0..5000).map(|i| format!("\"extra.k{i}\"")).collect();
    let mut fixture = common::Fixture::minimal();
    for context in 0..40 {
        fixture = fixture.file(
            &format!("examples/contexts/c{context}.toml"),
            "date = \"2026-11-01\"\n",
        );
    }
    let workspace = fixture
        .file(
            "promptc.toml",
            format!(
                "{}\n[tokens]\nvolatile = [\"CURRENT_DATE\", {}]\n",
                common::MANIFEST,
                paths.join(", ")
            ),
        )
        .write();
    let (status, stderr) = validate_within_a_minute(
        &workspace,
        "probing 5,000 volatile paths took more than a minute",
    );
    assert_eq!(status.code(), Some(0), "{stderr}");
}

/// An MCP settings file of 150,000 servers (3.8 MB, within the default file limit): each was
/// looked for in the list of those before it, and `build --mcp` ran out of processor time.
#[test]
fn an_mcp_settings_file_of_many_servers_is_merged_in_bounded_time() {
    let servers: Vec<String> = (0..150_000)
        .map(|i| format!("\"s{i}\":{{\"command\":\"x\"}}"))
        .collect();
    let workspace = common::Fixture::minimal()
        .file(
            "mcp.json",
            format!("{{\"mcpServers\":{{{}}}}}", servers.join(",")),
        )
        .write();
    let (status, stderr) = within_a_minute(
        &workspace,
        &["build", "--context", "basic", "--mcp", "mcp.json"],
        "4G",
        "merging 150,000 MCP servers took more than a minute",
    );
    // Each server is added, with nothing it offers (a warning per server, a hundred shown).
    assert!(status.code().is_some(), "ended by a signal: {stderr}");
    // The hundred a file shows, and the rest counted: every server was merged.
    assert!(stderr.contains("149900 more warnings"), "{stderr}");
}

/// A TOML file made mostly of line ends (or comments), under a raised file limit: its reader
/// holds every token, and 64 MB of line ends took 2.5 GB and ended the process on a failed
/// allocation, with nothing said. It is refused before it is read, at its first line; one
/// within the default limit is read.
#[test]
fn a_toml_file_of_line_ends_or_comments_is_refused_before_it_is_read() {
    let manifest = format!(
        "{}\n[limits]\nfile_bytes = 33554432\nworkspace_bytes = 67108864\n",
        common::MANIFEST
    );
    for (name, filler) in [("line ends", "\n"), ("comments", "#\n")] {
        let text = format!(
            "date = \"2026-11-01\"\n{}",
            filler.repeat(16 << 20 >> (filler.len() - 1))
        );
        let workspace = Fixture::minimal()
            .file("promptc.toml", &manifest)
            .file("examples/contexts/big.toml", text)
            .write();
        let output = workspace
            .command()
            .env("PROMPTC_MEMORY_LIMIT", "400M")
            .args(["--color", "never", "validate"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains("error[too-many-tokens]: the file is more than 4194305 pieces to read")
                && stderr.contains("--> examples/contexts/big.toml:1:1"),
            "{name}: {stderr}"
        );
    }
    // Within the default file limit, a file of line ends holds fewer tokens than that.
    let text = format!("date = \"2026-11-01\"\n{}", "\n".repeat((4 << 20) - 64));
    let run = Fixture::minimal()
        .file("examples/contexts/big.toml", text)
        .write()
        .run(&["validate"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// 200,000 predicates, each naming the one before (3.8 MB of manifest, within the default file
/// limit): each compiled condition kept the room its compiler made ahead for 256
/// instructions, about 13 KB, and validate took 5 GB. Now a few hundred bytes each.
#[test]
fn many_predicates_take_memory_by_their_size() {
    let mut manifest = format!("{}\n[predicates]\np0 = \"true\"\n", common::MANIFEST);
    for i in 1..200_000 {
        manifest.push_str(&format!("p{i} = \"p{}\"\n", i - 1));
    }
    let workspace = Fixture::minimal().file("promptc.toml", manifest).write();
    workspace.succeeds_within_memory("1G", &["validate"]);
}

/// A condition naming the same unknown filter hundreds of times (`cwd|zz|zz|…`): each was an
/// error carrying the list of every filter, 270,000 of them for an 815 KB manifest (680 MB, on
/// every load). Each name is told once per condition, at its first place.
#[test]
fn an_unknown_filter_repeated_in_a_condition_is_one_error() {
    let condition = format!("(cwd{}) == 1", "|zz".repeat(400));
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[predicates]\np = \"{condition}\"\n", common::MANIFEST),
        )
        .write();
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("error[unknown-filter]").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("error: 1 error"), "{}", run.stderr);
}

/// 3,000 variants, each a family of its own, and 10 contexts: every compile built the catalog
/// of all the variants to select its own, and validate ran out of processor time (SIGXCPU,
/// nothing said). A compile builds its family's alone.
#[test]
fn many_variants_are_selected_in_bounded_time() {
    // 30,000 outputs: past the default `limits.outputs`, within its maximum.
    let mut fixture = Fixture::minimal().remove("variants/generic.md").file(
        "promptc.toml",
        format!("{}\n[limits]\noutputs = 30000\n", common::MANIFEST),
    );
    for i in 0..3000 {
        let id = if i == 0 {
            "generic".to_string()
        } else {
            format!("v{i}")
        };
        fixture = fixture.file(
            &format!("variants/{id}.toml"),
            format!(
                "id = \"{id}\"\ntemplate = \"{{{{ INTRO_SECTION }}}}\"\ncomponents = [\"intro\"]\n"
            ),
        );
    }
    for context in 0..9 {
        fixture = fixture.file(
            &format!("examples/contexts/c{context}.toml"),
            "date = \"2026-11-01\"\n",
        );
    }
    let workspace = fixture.write();
    let (status, stderr) = validate_within_a_minute(
        &workspace,
        "compiling 3,000 variants × 10 contexts took more than a minute",
    );
    assert_eq!(status.code(), Some(0), "{stderr}");
}

/// 4,000 tools using a shared parameter whose `depends_on` names them all, one variant listing
/// them: the check of parameters no variant can show copied every tool the variant lists, and
/// the `depends_on` list, for each tool (1.6 GB, and 6,000 tools with long ids ended the
/// process on a failed allocation; here, with ids of 66 bytes, about 2 GB and more than a
/// minute). Each tool now costs its list's length in flags.
#[test]
fn a_shared_dependent_parameter_of_many_tools_is_checked_in_bounded_memory() {
    let ids: Vec<String> = (0..4000)
        .map(|i| format!("tool_{i}_{}", "x".repeat(60)))
        .collect();
    let quoted: Vec<String> = ids.iter().map(|id| format!("\"{id}\"")).collect();
    let mut fixture = Fixture::minimal()
        .remove("tools/read_file.toml")
        .file(
            "promptc.toml",
            format!(
                "{}\n[parameters.p]\nname = \"p\"\ninstruction = \"i\"\ndepends_on = [{}]\n",
                common::MANIFEST,
                quoted.join(", ")
            ),
        )
        .file(
            "variants/generic.toml",
            format!(
                "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\"]\ntools = [{}]\n",
                quoted.join(", ")
            ),
        );
    for id in &ids {
        fixture = fixture.file(
            &format!("tools/{id}.toml"),
            format!("id = \"{id}\"\ndescription = \"d\"\n[[parameters]]\nuse = \"p\"\n"),
        );
    }
    let workspace = fixture.write();
    // Within a gigabyte too: the process stops at an allocation past it.
    let (status, stderr) = within_a_minute(
        &workspace,
        &["validate"],
        "1G",
        "checking a shared parameter of 4,000 tools took more than a minute",
    );
    assert_eq!(status.code(), Some(0), "{stderr}");
}

// Families and contexts multiply: 400 of each, 800 files of a few bytes, made 160,000 outputs,
// whose files alone took `build --all` past a minute. The matrix may write `limits.outputs`
// (default 10,000, at most 50,000); past it, no command compiles it.
#[test]
fn the_build_matrix_writes_at_most_limits_outputs() {
    let mut fixture = Fixture::minimal();
    for i in 0..101 {
        fixture = fixture
            .file(
                &format!("variants/v{i:03}.toml"),
                format!("id = \"v{i:03}\"\nextends = \"generic\"\n"),
            )
            .file(&format!("examples/contexts/c{i:03}.toml"), common::CONTEXT);
    }
    let workspace = fixture.write();
    for command in ["build --all", "check", "validate"] {
        let args: Vec<&str> = command.split(' ').collect();
        let (status, stderr) = within_a_minute(&workspace, &args, "4G", command);
        assert_eq!(status.code(), Some(1), "{command}: {stderr}");
        assert!(
            stderr.contains("error[too-many-outputs]: the build matrix writes 10404 outputs (102 families × 102 contexts), more than `limits.outputs` (10000)\n --> promptc.toml:1:1"),
            "{command}: {stderr}"
        );
    }
    assert!(!workspace.root().join("examples/prompts").exists());
    // The limit is the manifest's, at most 50,000; the error is at `[build]` where it is.
    let small = |limit: usize| {
        Fixture::minimal()
            .file(
                "promptc.toml",
                format!(
                    "{}[build]\nfamilies = [\"generic\"]\nentries = [{{ variant = \"generic\", context = \"basic\", output = \"review/again.md\" }}]\n\n[limits]\noutputs = {limit}\n",
                    common::MANIFEST
                ),
            )
            .file("examples/contexts/other.toml", common::CONTEXT)
            .write()
            .run(&["--color", "never", "validate"])
    };
    let over = small(2);
    assert_eq!(over.code, 1, "{}", over.stderr);
    assert!(
        over.stderr.contains("error[too-many-outputs]: the build matrix writes 3 outputs (1 family × 2 contexts, and 1 entry), more than `limits.outputs` (2)\n --> promptc.toml:3:2"),
        "{}",
        over.stderr
    );
    assert_eq!(small(3).code, 0, "{}", small(3).stderr);
    // A product far past the limit is not listed output by output, as the build's entries
    // are checked against it: 4,000 families × 4,000 contexts beside one entry took 22 s.
    let names = |prefix: &str| {
        let names: Vec<String> = (0..4000).map(|i| format!("\"{prefix}{i}\"")).collect();
        names.join(", ")
    };
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}[build]\nfamilies = [{}]\ncontexts = [{}]\nentries = [{{ variant = \"generic\", context = \"basic\", output = \"review/again.md\" }}]\n",
                common::MANIFEST,
                names("f"),
                names("c")
            ),
        )
        .write();
    let (status, stderr) =
        within_a_minute(&workspace, &["validate"], "4G", "a product of 16 million");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error[too-many-outputs]: the build matrix writes 16000001 outputs (4000 families × 4000 contexts, and 1 entry)"),
        "{stderr}"
    );
    let above = small(50_001);
    assert!(
        above.code == 1 && above.stderr.contains("outputs"),
        "{}",
        above.stderr
    );
}
