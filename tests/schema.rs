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
