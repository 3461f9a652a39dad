//! Stage 1: find the workspace, read its data files and parse them, keeping source positions.

pub mod document;
pub mod read;
mod toml_document;
mod yaml_document;

use std::io;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::diagnostic::Diagnostics;
use crate::problem::Kind;
use crate::source::Sources;
use document::{Document, Format};

pub const MANIFEST_FILE: &str = "promptc.toml";

/// A data file read and parsed, not yet checked against its schema.
#[derive(Debug)]
pub struct RawFile {
    pub kind: Kind,
    pub path: PathBuf,
    pub document: Document,
}

/// Walks up from `start` to the first folder holding `promptc.toml`.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(MANIFEST_FILE).is_file())
        .map(Path::to_path_buf)
}

/// Reads and parses one data file. Problems with its content become diagnostics; only
/// failing I/O is an `Err`.
pub fn load_file(
    sources: &mut Sources,
    diagnostics: &mut Diagnostics,
    root: &Path,
    path: &Path,
    kind: Kind,
) -> io::Result<Option<RawFile>> {
    let Some(format) = Format::of(path) else {
        return Ok(None);
    };
    // JSON is accepted for contexts only (machines write them); other kinds are TOML or YAML.
    if format == Format::Json && kind != Kind::Context {
        return Ok(None);
    }
    let id = match read::read_source(sources, root, path)? {
        Ok(id) => id,
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return Ok(None);
        }
    };
    match Document::parse(id, sources.get(id), format) {
        Ok(document) => Ok(Some(RawFile {
            kind,
            path: path.to_path_buf(),
            document,
        })),
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            Ok(None)
        }
    }
}

/// Every data file (`.toml`, `.yaml`, `.yml`) under `dir`, sorted by path so that the result
/// never depends on the order the file system lists them in. A missing folder is empty.
pub fn data_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(io::Error::other)?;
        let path = entry.path();
        if entry.file_type().is_file()
            && matches!(Format::of(path), Some(Format::Toml | Format::Yaml))
        {
            files.push(path.to_path_buf());
        }
    }
    Ok(files)
}
