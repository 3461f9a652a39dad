//! Embeds the shipped default library (manifest, variants, components, partials, tools,
//! example contexts, schemas, and the `.taplo.toml` that formats them) into the binary for
//! `promptc init`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const ROOTS: [&str; 8] = [
    "promptc.toml",
    ".taplo.toml",
    "variants",
    "components",
    "partials",
    "tools",
    "examples/contexts",
    "schema",
];

fn main() {
    let Some(manifest_dir) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
        panic!("cargo sets CARGO_MANIFEST_DIR");
    };
    let mut files = Vec::new();
    for root in ROOTS {
        println!("cargo::rerun-if-changed={root}");
        collect(&manifest_dir, &manifest_dir.join(root), &mut files);
    }
    files.sort();
    let mut code = String::from("/// The shipped library: (workspace-relative path, contents).\n");
    code.push_str("pub static LIBRARY: &[(&str, &[u8])] = &[\n");
    for relative in &files {
        let absolute = manifest_dir.join(relative);
        let _ = writeln!(
            code,
            "    ({relative:?}, include_bytes!({:?})),",
            absolute.display().to_string()
        );
    }
    code.push_str("];\n");
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        panic!("cargo sets OUT_DIR");
    };
    if let Err(error) = std::fs::write(out_dir.join("library.rs"), code) {
        panic!("cannot write library.rs: {error}");
    }
}

/// Every file under `path` (or `path` itself), as `/`-separated paths relative to `base`.
fn collect(base: &Path, path: &Path, files: &mut Vec<String>) {
    if path.is_file() {
        if let Ok(relative) = path.strip_prefix(base) {
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            files.push(parts.join("/"));
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        collect(base, &entry.path(), files);
    }
}
