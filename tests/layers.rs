//! The crate's modules form layers: a module uses only modules of lower layers, so the stages
//! (load → validate → resolve → render → compile → emit) stay apart and no two modules need
//! each other. The table below is the design; this test reads every `crate::` path in `src/`
//! and fails on an edge the table does not allow, or on a module it does not place.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Bottom to top. A module may use the modules of the layers below its own, never its own
/// layer or one above.
const LAYERS: &[&[&str]] = &[
    // A memory bounded by bytes, for what is remembered between compiles; a core for a
    // thread just started; the processor time past which long work stops; the processor's
    // features asked for ahead; which paths a load looked at.
    &[
        "bounded_memo",
        "cores",
        "deadline",
        "processor",
        "looked_at",
    ],
    // Work done ahead of its first use, on one thread for all of it.
    &["ahead"],
    // Plain facts: file texts, JSON pointers, JSON with unique keys, token counting, path refusals, following a
    // chain of names, the process memory limit, patterns built once per process, parameter
    // schemas shared by the tools that use them.
    &[
        "built",
        "parameter_schema",
        "source",
        "pointer",
        "unique_json",
        "tokens",
        "path_error",
        "follow",
        "process_limits",
        "scratch",
    ],
    // Positions, the trust boundary, and the data model (the file formats).
    &["span", "confine", "model"],
    // The names templates may read, and the wording of every problem.
    &["namespace", "problem"],
    // A problem at a place; the JSON Schemas generated from the model.
    &["diagnostic", "schema"],
    // The template environment and registry; the result types of a compile.
    &["templates", "compiled"],
    // Stage 1: files into specs.
    &["load"],
    // The workspace: specs with their templates, inheritance.
    &["workspace"],
    // Stage 2: checks; stage 3: what one compile contains.
    &["validate", "resolve"],
    // The loader runs the stages up to a checked workspace; stage 4 renders.
    &["loader", "render"],
    // Stage 5: one compile, explain.
    &["compile"],
    // What compiled prompts cost.
    &["analysis"],
    // Writing and checking outputs.
    &["emit"],
    // Reviewing a change between git revisions, a new workspace.
    &["review", "init"],
    // Every rendering as text: diagnostics, diffs, explanations, stats.
    &["report"],
    // A workspace compiled per request from data: the API under the Node and Python packages.
    &["runtime"],
    // The command line.
    &["cli"],
];

#[test]
fn modules_use_only_lower_layers() {
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(layer, modules)| modules.iter().map(move |m| (*m, layer)))
        .collect();
    let edges = crate_edges(Path::new(env!("CARGO_MANIFEST_DIR")).join("src").as_path());
    assert!(!edges.is_empty(), "no module found under src/");
    let mut wrong = Vec::new();
    for (from, targets) in &edges {
        let Some(&from_layer) = layer_of.get(from.as_str()) else {
            wrong.push(format!("`{from}` has no layer in the table"));
            continue;
        };
        for to in targets {
            match layer_of.get(to.as_str()) {
                None => wrong.push(format!("`{from}` uses `{to}`, which has no layer")),
                Some(&to_layer) if to_layer >= from_layer => wrong.push(format!(
                    "`{from}` (layer {from_layer}) uses `{to}` (layer {to_layer})"
                )),
                Some(_) => {}
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

/// The test reads what it should: a use of a higher layer is seen.
#[test]
fn an_upward_use_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("model")).unwrap();
    let variant = "// crate::cli in a comment is no use
use crate::compile::Compiler;
use crate::{
    emit::write,
    resolve::{plan::Plan, scope::Scope},
};

#[cfg(test)]
mod tests {
    use crate::cli::run;
}
";
    std::fs::write(dir.path().join("model/variant.rs"), variant).unwrap();
    // In a top-level module, `super::` is the crate root.
    std::fs::write(
        dir.path().join("model/mod.rs"),
        "use super::review::Diff;\n",
    )
    .unwrap();
    let edges = crate_edges(dir.path());
    let targets: Vec<&String> = edges["model"].iter().collect();
    assert_eq!(targets, ["compile", "emit", "resolve", "review"]);
}

/// Top-level module → the top-level modules its code names (`crate::x`), comments and test
/// modules left out.
fn crate_edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let relative = path.strip_prefix(src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let module = first.to_string_lossy().trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        // In `src/x.rs` and `src/x/mod.rs`, `super::` is the crate root.
        let at_top = relative.components().count() == 1
            || relative.ends_with("mod.rs") && relative.components().count() == 2;
        let text = std::fs::read_to_string(path).unwrap();
        // The unit tests at the end of a file may use anything.
        let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or_default();
        let code: String = code
            .lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        // A path that climbs out of a module by `super` would hide an edge from this test.
        assert!(
            !code.contains("super::super"),
            "{}: name other modules with `crate::` paths, not `super::super`",
            path.display()
        );
        let targets = edges.entry(module.clone()).or_default();
        let mut prefixes = vec!["crate::"];
        if at_top {
            prefixes.push("super::");
        }
        for prefix in prefixes {
            for (at, _) in code.match_indices(prefix) {
                for name in first_segments(&code[at + prefix.len()..]) {
                    if name != module {
                        targets.insert(name);
                    }
                }
            }
        }
    }
    edges
}

/// The first segment of a path (`load::entry::Entry` → `load`), or of each path of a group
/// (`{load::Entry, model::{A, B}}` → `load`, `model`), across lines.
fn first_segments(rest: &str) -> Vec<String> {
    let ident = |text: &str| -> String {
        text.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.trim_start().strip_prefix('{') else {
        return vec![ident(rest)]
            .into_iter()
            .filter(|n| !n.is_empty())
            .collect();
    };
    let mut names = Vec::new();
    let mut depth = 0;
    let mut element_start = true;
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => element_start = true,
            c if element_start && !c.is_whitespace() => {
                element_start = false;
                let name = ident(&group[at..]);
                if !name.is_empty() && name != "self" {
                    names.push(name);
                }
            }
            _ => {}
        }
    }
    names
}
