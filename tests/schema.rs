//! The checked-in JSON Schemas match the types, and every data file names its schema so that
//! editors can complete and check it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::path::{Path, PathBuf};

use promptc::problem::Kind;
use promptc::schema::{file_name, render};

use common::repo_root as root;

#[test]
fn checked_in_schemas_are_current() {
    for kind in Kind::ALL {
        let path = root().join("schema").join(file_name(kind));
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == render(kind, &Default::default()),
            "{} is stale: run `cargo run -- schema`",
            path.display()
        );
    }
}

#[test]
fn schemas_are_draft_07_and_describe_fields() {
    let schema: serde_json::Value =
        serde_json::from_str(&render(Kind::Variant, &Default::default())).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(schema["additionalProperties"], false);
    let extends = schema["properties"]["extends"]["description"]
        .as_str()
        .unwrap();
    assert!(extends.contains("inherit"), "{extends}");
}

#[test]
fn schemas_do_not_offer_null() {
    // Editors complete from these files: an optional field is left out, never null.
    for file in ["component", "context", "manifest", "tool", "variant"] {
        let text =
            std::fs::read_to_string(root().join(format!("schema/{file}.schema.json"))).unwrap();
        assert!(
            !text.contains("null"),
            "schema/{file}.schema.json offers null"
        );
    }
}

/// Data files of the repository: the shipped library and the test fixtures, except the
/// deliberately broken workspaces of `tests/fixtures/diagnostics/`, whose files are exactly
/// what each case needs (a first line naming the schema would move every reported position).
fn data_files() -> Vec<(PathBuf, Kind)> {
    let mut files = Vec::new();
    let mut visit = |dir: PathBuf| {
        let walk = walkdir::WalkDir::new(&dir)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| entry.path() != root().join("tests/fixtures/diagnostics"));
        for entry in walk {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = path.to_string_lossy();
            let kind = if path.file_name().is_some_and(|n| n == "promptc.toml") {
                Kind::Manifest
            } else if name.contains("/variants/") {
                Kind::Variant
            } else if name.contains("/components/") {
                Kind::Component
            } else if name.contains("/tools/") {
                Kind::Tool
            } else if name.contains("/contexts/") {
                Kind::Context
            } else {
                continue;
            };
            if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("toml" | "yaml" | "yml")
            ) {
                files.push((path.to_path_buf(), kind));
            }
        }
    };
    visit(root().join("tests/fixtures"));
    for dir in ["variants", "components", "tools", "examples/contexts"] {
        visit(root().join(dir));
    }
    if root().join("promptc.toml").exists() {
        files.push((root().join("promptc.toml"), Kind::Manifest));
    }
    files
}

#[test]
fn every_data_file_references_its_schema() {
    let files = data_files();
    assert!(files.len() > 20, "found only {} data files", files.len());
    for (path, kind) in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap_or_default();
        let reference = first
            .strip_prefix("#:schema ")
            .or_else(|| first.strip_prefix("# yaml-language-server: $schema="))
            .unwrap_or_else(|| panic!("{} does not name its schema", path.display()));
        let target = path.parent().unwrap().join(reference.trim());
        assert!(
            target.ends_with(Path::new(&file_name(kind))),
            "{} names {reference}, expected {}",
            path.display(),
            file_name(kind)
        );
        assert!(
            target.canonicalize().is_ok(),
            "{}: {reference} does not exist",
            path.display()
        );
    }
}

/// What a strict validator (ajv in strict mode) rejects: an unknown `format` or keyword.
#[test]
fn schemas_use_only_draft_07_keywords_and_formats() {
    const KEYWORDS: &[&str] = &[
        "$schema",
        "$id",
        "$ref",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "type",
        "enum",
        "const",
        "format",
        "properties",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "required",
        "items",
        "additionalItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
        "dependencies",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "definitions",
        "readOnly",
        "writeOnly",
    ];
    fn walk(node: &serde_json::Value, path: &str, found: &mut Vec<String>) {
        let Some(object) = node.as_object() else {
            if let Some(items) = node.as_array() {
                for (index, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}/{index}"), found);
                }
            }
            return;
        };
        for (key, value) in object {
            if !KEYWORDS.contains(&key.as_str()) {
                found.push(format!("{path}: keyword `{key}`"));
            }
            if key == "format"
                && !promptc::schema::STANDARD_FORMATS.contains(&value.as_str().unwrap_or(""))
            {
                found.push(format!("{path}: format {value}"));
            }
            match key.as_str() {
                // Maps of names to schemas: the names are not keywords.
                "properties" | "definitions" | "patternProperties" => {
                    for (name, schema) in value.as_object().into_iter().flatten() {
                        walk(schema, &format!("{path}/{key}/{name}"), found);
                    }
                }
                "enum" | "const" | "default" | "examples" | "required" => {}
                _ => walk(value, &format!("{path}/{key}"), found),
            }
        }
    }
    let mut found = Vec::new();
    for kind in Kind::ALL {
        let schema: serde_json::Value =
            serde_json::from_str(&render(kind, &Default::default())).unwrap();
        walk(&schema, kind.name(), &mut found);
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// ajv, a validator written apart from promptc, in its default strict mode: it must compile
/// every generated schema (no keyword or format it does not know) and accept every data file
/// of the shipped library and the fixtures. Needs Node and `npm ci --prefix
/// tests/strict-schema`; CI sets `PROMPTC_REQUIRE_STRICT_SCHEMA=1` so that it cannot be skipped
/// there.
#[test]
fn ajv_in_strict_mode_accepts_the_schemas_and_the_data_files() {
    let checker = root().join("tests/strict-schema");
    let required = std::env::var_os("PROMPTC_REQUIRE_STRICT_SCHEMA").is_some_and(|v| v == "1");
    if !checker.join("node_modules/ajv").is_dir() {
        assert!(
            !required,
            "ajv is not installed: run `npm ci --prefix tests/strict-schema`"
        );
        eprintln!("skipped: ajv is not installed (npm ci --prefix tests/strict-schema)");
        return;
    }
    let schemas: serde_json::Map<String, serde_json::Value> = Kind::ALL
        .iter()
        .map(|kind| {
            let path = root().join("schema").join(file_name(*kind));
            (file_name(*kind), path.to_string_lossy().into_owned().into())
        })
        .collect();
    let data: Vec<serde_json::Value> = data_files()
        .into_iter()
        .map(|(path, kind)| {
            let text = std::fs::read_to_string(&path).unwrap();
            let value: serde_json::Value = if path.extension().is_some_and(|e| e == "toml") {
                as_json(toml::from_str(&text).unwrap())
            } else {
                serde_saphyr::from_str(&text).unwrap()
            };
            serde_json::json!({
                "schema": file_name(kind),
                "file": path.strip_prefix(root()).unwrap().to_string_lossy(),
                "value": value,
            })
        })
        .collect();
    assert!(data.len() > 20, "found only {} data files", data.len());
    let listing = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        listing.path(),
        serde_json::to_string(&serde_json::json!({ "schemas": schemas, "data": data })).unwrap(),
    )
    .unwrap();
    let output = std::process::Command::new("node")
        .arg(checker.join("check.mjs"))
        .arg(listing.path())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) => {
            assert!(!required, "node cannot run: {error}");
            eprintln!("skipped: node cannot run ({error})");
            return;
        }
    };
    assert!(
        output.status.success(),
        "ajv (strict) refused:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.starts_with(&format!("ok: {} schemas", Kind::ALL.len())),
        "{said}"
    );
}

/// A TOML document as promptc reads it: dates and times are strings.
fn as_json(value: toml::Value) -> serde_json::Value {
    match value {
        toml::Value::Datetime(datetime) => datetime.to_string().into(),
        toml::Value::Table(table) => table
            .into_iter()
            .map(|(key, value)| (key, as_json(value)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        toml::Value::Array(items) => items.into_iter().map(as_json).collect(),
        other => serde_json::to_value(other).unwrap(),
    }
}

/// The shipped TOML files, and those `promptc init` writes (`.taplo.toml` among them), are as
/// `taplo fmt` writes them with the workspace's `.taplo.toml`, so that format-on-save in an
/// editor changes nothing.
#[test]
fn shipped_toml_files_are_stable_under_taplo_fmt() {
    // Option by option, as `taplo fmt --option KEY=VALUE` takes them: a name taplo does not
    // know is an error here, where deserializing its options would pass over it.
    let config: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join(".taplo.toml")).unwrap()).unwrap();
    let formatting = config["formatting"].as_table().unwrap();
    assert!(!formatting.is_empty(), ".taplo.toml sets no [formatting]");
    let mut options = taplo::formatter::Options::default();
    options
        .update_from_str(formatting.iter().map(|(key, value)| {
            let value = match value {
                toml::Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            (key.clone(), value)
        }))
        .unwrap();
    let mut files: Vec<PathBuf> = vec![root().join("promptc.toml"), root().join(".taplo.toml")];
    for dir in ["variants", "components", "tools", "examples/contexts"] {
        for entry in walkdir::WalkDir::new(root().join(dir)).sort_by_file_name() {
            let path = entry.unwrap().into_path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    let shipped = files.len();
    // What a new workspace gets: the embedded copies, whatever folders they come from.
    let workspace = tempfile::tempdir().unwrap();
    let written = promptc::init(workspace.path()).unwrap();
    files.extend(
        written
            .into_iter()
            .filter(|path| path.extension().is_some_and(|e| e == "toml")),
    );
    assert!(
        files[shipped..].iter().any(|p| p.ends_with(".taplo.toml")),
        "init writes no .taplo.toml"
    );
    let mut changed = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let formatted = taplo::formatter::format(&text, options.clone());
        if formatted != text {
            let diff = similar::TextDiff::from_lines(&text, &formatted)
                .unified_diff()
                .header("as written", "as taplo writes it")
                .to_string();
            changed.push(format!("{}:\n{diff}", path.display()));
        }
    }
    assert!(shipped > 30, "found only {shipped} shipped TOML files");
    assert!(
        files.len() - shipped >= shipped,
        "init wrote only {} TOML files",
        files.len() - shipped
    );
    assert!(changed.is_empty(), "{}", changed.join("\n"));
}
