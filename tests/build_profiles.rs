//! The command line's release build ends the process on a panic (faster code, and it catches
//! none); the Node and Python packages must not: napi-rs and PyO3 turn a panic into an exception
//! only when it unwinds, and otherwise it ends the host process. Their optimised builds use the
//! `bindings` profile, which unwinds: this checks that each package's build asks for it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

fn toml(path: &str) -> toml::Table {
    read(path).parse().unwrap()
}

fn get<'t>(table: &'t toml::Table, path: &[&str]) -> Option<&'t toml::Value> {
    let (last, parents) = path.split_last()?;
    let mut table = table;
    for key in parents {
        table = table.get(*key)?.as_table()?;
    }
    table.get(*last)
}

fn string<'t>(table: &'t toml::Table, path: &[&str]) -> Option<&'t str> {
    get(table, path).and_then(toml::Value::as_str)
}

#[test]
fn the_release_build_aborts_and_the_bindings_build_unwinds() {
    let cargo = toml("Cargo.toml");
    assert_eq!(
        string(&cargo, &["profile", "release", "panic"]),
        Some("abort")
    );
    assert_eq!(
        string(&cargo, &["profile", "bindings", "inherits"]),
        Some("release")
    );
    assert_eq!(
        string(&cargo, &["profile", "bindings", "panic"]),
        Some("unwind")
    );
}

#[test]
fn the_node_packages_optimised_build_uses_the_bindings_profile() {
    let package: serde_json::Value =
        serde_json::from_str(&read("bindings/node/package.json")).unwrap();
    let script = package["scripts"]["build:release"].as_str().unwrap();
    let words: Vec<&str> = script.split_whitespace().collect();
    assert!(
        words
            .windows(2)
            .any(|pair| pair == ["--profile", "bindings"]),
        "{script}"
    );
    assert!(!words.contains(&"--release"), "{script}");
}

#[test]
fn the_python_packages_wheel_uses_the_bindings_profile() {
    let pyproject = toml("bindings/python/pyproject.toml");
    assert_eq!(
        string(&pyproject, &["tool", "maturin", "profile"]),
        Some("bindings")
    );
    // An editable install (`pip install -e`) is for development, as `maturin develop` is.
    assert_eq!(
        string(&pyproject, &["tool", "maturin", "editable-profile"]),
        Some("dev")
    );
}
