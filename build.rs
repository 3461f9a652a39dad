//! Embeds the shipped default library (manifest, variants, components, partials, tools,
//! example contexts, schemas, and the `.taplo.toml` that formats them) into the binary for
//! `promptc init`, and builds the static sets of o200k's and cl100k's tokens that are
//! pre-tokenizer pieces (`src/tokens/*-pieces.txt`), which bound token counts without loading
//! the tables.

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
    for encoding in ["o200k", "cl100k"] {
        pieces(&manifest_dir, &out_dir, encoding);
    }
}

/// `<encoding>_pieces.rs`: the lines of `src/tokens/<encoding>-pieces.txt`, unescaped, as a
/// `PieceSet` expression: phf's perfect hash of them, and the pieces in its order in one
/// text, with where each ends. Integers and one text rather than a `phf::Set` of `&str`: each
/// `&str` in a static is a pointer the loader relocates at every process start (200,000 of
/// them took milliseconds of every run).
fn pieces(manifest_dir: &Path, out_dir: &Path, encoding: &str) {
    let table = format!("src/tokens/{encoding}-pieces.txt");
    println!("cargo::rerun-if-changed={table}");
    let text = match std::fs::read_to_string(manifest_dir.join(&table)) {
        Ok(text) => text,
        Err(error) => panic!("cannot read {table}: {error}"),
    };
    let pieces: Vec<String> = text.lines().map(unescape).collect();
    let keys: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let state = phf_generator::generate_hash(&keys);
    let mut joined = String::new();
    let mut ends = Vec::with_capacity(pieces.len());
    for &index in &state.map {
        joined.push_str(&pieces[index]);
        ends.push(joined.len().to_string());
    }
    let disps: Vec<String> = state
        .disps
        .iter()
        .map(|(d1, d2)| format!("({d1}, {d2})"))
        .collect();
    let code = format!(
        "PieceSet {{ key: {}, disps: &[{}], ends: &[{}], text: {joined:?} }}\n",
        state.key,
        disps.join(", "),
        ends.join(", ")
    );
    let generated = format!("{encoding}_pieces.rs");
    if let Err(error) = std::fs::write(out_dir.join(&generated), code) {
        panic!("cannot write {generated}: {error}");
    }
}

/// A line of the table: `\\`, `\s` (a space), `\n`, `\r`, `\t` and `\xHH` are escapes.
fn unescape(line: &str) -> String {
    let mut piece = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            piece.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => piece.push('\\'),
            Some('s') => piece.push(' '),
            Some('n') => piece.push('\n'),
            Some('r') => piece.push('\r'),
            Some('t') => piece.push('\t'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                match u8::from_str_radix(&hex, 16) {
                    Ok(byte) if byte.is_ascii() => piece.push(char::from(byte)),
                    _ => panic!("bad escape \\x{hex} in {line:?}"),
                }
            }
            other => panic!("bad escape {other:?} in {line:?}"),
        }
    }
    piece
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
