//! Properties over many generated inputs (proptest): the outputs do not depend on the order in
//! which a workspace's files were created, and text that arrives as data (a context value, a
//! `--set` value, an MCP tool's description) is inserted verbatim and changes nothing else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::Config;
use tempfile::TempDir;

use promptc::{Request, Selection};

use promptc::check_document;
use promptc::model::{McpServer, McpTool};
use promptc::problem::Kind;
use promptc::report;

use common::{Fixture, fixture_dir, promptc, repo_root, stderr, stdout};

/// The files of `tests/fixtures/NAME`, by relative path.
fn fixture_files(name: &str) -> Vec<(PathBuf, Vec<u8>)> {
    Fixture::from_dir(&fixture_dir(name))
        .files()
        .map(|(path, bytes)| (PathBuf::from(path), bytes.to_vec()))
        .collect()
}

/// A folder where listing order follows creation order: tmpfs lists the newest entry first,
/// so a loader that trusted the listing would see the permutation. Elsewhere (ext4 orders by
/// name hash) the property still holds, it is only tested less sharply.
fn scratch() -> TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().unwrap()
}

/// Writes the files in the order given, creating each folder when its first file is written.
fn write_in_order(files: &[(PathBuf, Vec<u8>)], order: &[usize]) -> TempDir {
    let dir = scratch();
    for &index in order {
        let (path, bytes) = &files[index];
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

/// What `validate` reports (as JSON) and `build --all` prints, then every file of the output
/// folder, by relative path.
fn build_all(root: &Path) -> (String, BTreeMap<String, Vec<u8>>) {
    let validate = promptc()
        .args(["validate", "--format", "json"])
        .current_dir(root)
        .output()
        .unwrap();
    let build = promptc()
        .args(["build", "--all"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(build.status.success(), "{}", stderr(&build));
    let log = format!("{}{}{}", stdout(&validate), stdout(&build), stderr(&build));
    let workspace = promptc::load_workspace(root).unwrap().workspace;
    let out = root.join(&workspace.settings().build.out);
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(&out) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let relative = entry.path().strip_prefix(root).unwrap();
            files.insert(
                relative.to_string_lossy().into_owned(),
                std::fs::read(entry.path()).unwrap(),
            );
        }
    }
    (log, files)
}

/// The expressive fixture plus a second copy of its variants and contexts under other names,
/// so that families and contexts have an order to get wrong.
fn permutable_workspace() -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = fixture_files("expressive");
    let copies: Vec<(PathBuf, Vec<u8>)> = files
        .iter()
        .filter_map(|(path, bytes)| {
            let text = String::from_utf8(bytes.clone()).ok()?;
            let name = path.to_str()?;
            if let Some(stem) = name
                .strip_prefix("variants/")
                .and_then(|n| n.strip_suffix(".toml"))
            {
                let id = format!("{stem}-copy");
                // An override of a component the variant does not list is a warning, so the
                // report has an order too (compact lists `feedback`, base lists `mcp`).
                let unlisted = if stem == "compact" { "mcp" } else { "feedback" };
                let text = text
                    .replace(&format!("id = \"{stem}\""), &format!("id = \"{id}\""))
                    .replace("template_file = \"", "template_file = \"../")
                    + &format!("\n[overrides.components.{unlisted}]\nenabled = false\n");
                return Some((
                    PathBuf::from(format!("variants/copies/{id}.toml")),
                    text.into(),
                ));
            }
            let (stem, ext) = name.strip_prefix("contexts/")?.rsplit_once('.')?;
            Some((
                PathBuf::from(format!("contexts/a-{stem}.{ext}")),
                text.into(),
            ))
        })
        .collect();
    files.extend(copies);
    files
}

#[test]
fn the_permutable_workspace_has_an_order_to_get_wrong() {
    let files = permutable_workspace();
    let order: Vec<usize> = (0..files.len()).collect();
    let dir = write_in_order(&files, &order);
    let (log, outputs) = build_all(dir.path());
    assert_eq!(
        log.matches("\"code\": \"unused-override\"").count(),
        2,
        "{log}"
    );
    let index = String::from_utf8(outputs["examples/prompts/.promptc-outputs"].clone()).unwrap();
    // Four families × four contexts, the copies included.
    assert_eq!(index.lines().count(), 16, "{index}");
    assert!(
        index.contains("examples/prompts/base-copy/a-full.md"),
        "{index}"
    );
}

proptest! {
    #![proptest_config(Config { cases: 12, ..Config::default() })]

    #[test]
    fn outputs_do_not_depend_on_the_order_files_were_created(
        (first, second) in {
            let count = permutable_workspace().len();
            let order: Vec<usize> = (0..count).collect();
            (Just(order.clone()).prop_shuffle(), Just(order).prop_shuffle())
        }
    ) {
        let files = permutable_workspace();
        let a = write_in_order(&files, &first);
        let b = write_in_order(&files, &second);
        let ((log_a, a), (log_b, b)) = (build_all(a.path()), build_all(b.path()));
        prop_assert_eq!(log_a, log_b);
        prop_assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
        for (path, bytes) in &a {
            prop_assert!(bytes == &b[path], "{} differs", path);
        }
    }
}

/// Stands for the data in the reference compile; no generated text contains it.
const MARKER: &str = "\u{e000}MARKER\u{e001}";

/// A workspace that inserts each kind of data once, with `postprocess = []` so that the
/// rendered text is the output.
const DATA_WORKSPACE: &[(&str, &str)] = &[
    (
        "promptc.toml",
        "name = \"data\"\nfallback_family = \"generic\"\npostprocess = []\n\n\
         [predicates]\nhas_rules = \"rules | length > 0\"\n",
    ),
    (
        "variants/generic.toml",
        "id = \"generic\"\ntemplate_file = \"generic.md\"\n\
         components = [\"rules\", \"mcp\"]\ntools = [\"read_file\"]\n\n\
         [placeholders]\nNOTE = \"the variant's note\"\n",
    ),
    (
        "variants/generic.md",
        "Agent in {{ CWD }} ({{ cwd }}), {{ ide }}.\n{{ TOOLS }}\n\
         {{ RULES_SECTION }}{{ MCP_SECTION }}Note: {{ NOTE }}.\nTeam: {{ extra.team }}.\n",
    ),
    ("components/rules.toml", "id = \"rules\"\n"),
    (
        "components/rules.md",
        "RULES\n{% if has_rules %}{{ rules }}{% endif %}\nEND RULES\n",
    ),
    ("components/mcp.toml", "id = \"mcp\"\n"),
    (
        "components/mcp.md",
        "{% for server in mcp_servers %}## {{ server.name }}\n\
         {% for tool in server.tools %}- {{ tool.name }}: {{ tool.description }}\n\
         {% endfor %}{% endfor %}",
    ),
    (
        "tools/read_file.toml",
        "id = \"read_file\"\ndescription = \"Read a file under {{ cwd }}.\"\n",
    ),
];

/// Where the text under test goes.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Rules,
    Cwd,
    Ide,
    Extra,
    ContextPlaceholder,
    Set,
    McpDescription,
}

fn request(slot: Slot, text: &str) -> Request {
    let mut context = promptc::model::Context {
        cwd: "/home/dev".into(),
        ide: "an editor".into(),
        rules: "Be brief.".into(),
        ..Default::default()
    };
    context.extra.insert("team".into(), "payments".into());
    context.mcp_servers.push(McpServer {
        name: "github".into(),
        tools: vec![McpTool {
            name: "create_issue".into(),
            description: "Open an issue.".into(),
            ..Default::default()
        }],
        ..Default::default()
    });
    let mut set = indexmap::IndexMap::new();
    match slot {
        Slot::Rules => context.rules = text.into(),
        Slot::Cwd => context.cwd = text.into(),
        Slot::Ide => context.ide = text.into(),
        Slot::Extra => {
            context.extra.insert("team".into(), text.into());
        }
        Slot::ContextPlaceholder => {
            context.placeholders.insert("NOTE".into(), text.into());
        }
        Slot::Set => {
            set.insert("NOTE".into(), text.to_string());
        }
        Slot::McpDescription => context.mcp_servers[0].tools[0].description = text.into(),
    }
    let mut request = Request::new(Selection::fallback(), context);
    request.set = set;
    request
}

/// Text a template engine or a writer might trip on: delimiters, escapes, quotes, non-ASCII,
/// line breaks, and anything else proptest comes up with.
fn hostile_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{{"),
        Just("}}"),
        Just("{{ cwd }}"),
        Just("{%"),
        Just("%}"),
        Just("{% if true %}x{% endif %}"),
        Just("{#"),
        Just("#}"),
        Just("\\"),
        Just("\\n"),
        Just("\""),
        Just("'"),
        Just("\n"),
        Just("\r\n"),
        Just("\t"),
        Just("ü€𝄞"),
        Just("===="),
        Just("$1"),
        Just(" "),
    ]
    .prop_map(str::to_string);
    let pieces = proptest::collection::vec(piece, 1..8).prop_map(|p| p.concat());
    prop_oneof![pieces, "\\PC{1,24}", "[\\s\\S]{1,16}"]
}

fn slot() -> impl Strategy<Value = Slot> {
    prop_oneof![
        Just(Slot::Rules),
        Just(Slot::Cwd),
        Just(Slot::Ide),
        Just(Slot::Extra),
        Just(Slot::ContextPlaceholder),
        Just(Slot::Set),
        Just(Slot::McpDescription),
    ]
}

fn data_workspace() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in DATA_WORKSPACE {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn the_data_workspace_shows_every_slot_once_in_its_output() {
    let dir = data_workspace();
    let loaded = promptc::load_workspace(dir.path()).unwrap();
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    for slot in [
        Slot::Rules,
        Slot::Ide,
        Slot::Extra,
        Slot::ContextPlaceholder,
        Slot::Set,
        Slot::McpDescription,
    ] {
        let prompt = promptc::Compiler::new(&loaded.workspace)
            .compile(&request(slot, MARKER))
            .unwrap()
            .prompt;
        assert_eq!(prompt.matches(MARKER).count(), 1, "{slot:?}: {prompt}");
    }
    // The working directory is inserted three times: `cwd`, `CWD`, and the tool description.
    let prompt = promptc::Compiler::new(&loaded.workspace)
        .compile(&request(Slot::Cwd, MARKER))
        .unwrap()
        .prompt;
    assert_eq!(prompt.matches(MARKER).count(), 3, "{prompt}");
}

proptest! {
    #![proptest_config(Config { cases: 200, ..Config::default() })]

    #[test]
    fn data_is_inserted_verbatim_and_changes_nothing_else(
        text in hostile_text(),
        slot in slot(),
    ) {
        prop_assume!(!text.contains(MARKER));
        let dir = data_workspace();
        let loaded = promptc::load_workspace(dir.path()).unwrap();
        prop_assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
        let workspace = &loaded.workspace;
        let reference = promptc::Compiler::new(workspace).compile(&request(slot, MARKER)).unwrap().prompt;
        let compiled = promptc::Compiler::new(workspace).compile(&request(slot, &text));
        let prompt = match compiled {
            Ok(compiled) => compiled.prompt,
            Err(error) => return Err(TestCaseError::fail(format!("{error:?}"))),
        };
        prop_assert_eq!(prompt, reference.replace(MARKER, &text));
    }
}

/// The shipped library's data files, with the kind each is loaded as.
fn library_documents() -> Vec<(Kind, PathBuf, Vec<u8>)> {
    let root = repo_root().canonicalize().unwrap();
    let root = root.as_path();
    let mut documents = vec![(
        Kind::Manifest,
        PathBuf::from("promptc.toml"),
        std::fs::read(root.join("promptc.toml")).unwrap(),
    )];
    for (kind, folder) in [
        (Kind::Variant, "variants"),
        (Kind::Component, "components"),
        (Kind::Tool, "tools"),
        (Kind::Context, "examples/contexts"),
    ] {
        let data_files = walkdir::WalkDir::new(root.join(folder))
            .sort_by_file_name()
            .into_iter()
            .map(|entry| entry.unwrap().into_path())
            .filter(|path| {
                let extension = path.extension().and_then(|e| e.to_str());
                matches!(extension, Some("toml" | "yaml" | "yml" | "json"))
            });
        for path in data_files {
            let relative = path.strip_prefix(root).unwrap().to_path_buf();
            documents.push((kind, relative, std::fs::read(&path).unwrap()));
        }
    }
    documents
}

#[test]
fn every_shipped_document_is_accepted_on_its_own() {
    let documents = library_documents();
    assert!(documents.len() > 40, "{}", documents.len());
    for (kind, path, bytes) in documents {
        let (_, diagnostics, accepted) = check_document(kind, &path, bytes);
        assert!(accepted, "{}: {diagnostics:?}", path.display());
    }
}

proptest! {
    #![proptest_config(Config { cases: 64, ..Config::default() })]

    /// A damaged file (bytes cut, inserted or replaced) is refused with a located reason or
    /// accepted, never silently refused; the same invariant the fuzz target checks, on stable.
    #[test]
    fn a_damaged_document_is_refused_with_a_reason(
        pick in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        cut in 0usize..8,
        insert in proptest::collection::vec(any::<u8>(), 0..6),
    ) {
        let documents = library_documents();
        let (kind, path, mut bytes) = documents[pick.index(documents.len())].clone();
        let start = at.index(bytes.len());
        let end = (start + cut).min(bytes.len());
        bytes.splice(start..end, insert);
        let (sources, diagnostics, accepted) = check_document(kind, &path, bytes);
        prop_assert_eq!(accepted, !diagnostics.has_errors());
        let sorted = diagnostics.sorted();
        for diagnostic in &sorted {
            prop_assert!(diagnostic.span.start <= sources.get(diagnostic.span.source).text.len());
        }
        let text = report::human(&sorted, &sources, false);
        prop_assert!(accepted || text.contains(&format!("{}:", path.display())), "{}", text);
    }
}
