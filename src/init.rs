//! `promptc init`: writes the shipped default library into a new workspace.

use std::io;
use std::path::{Path, PathBuf};

use crate::emit::write::write_atomic;

include!(concat!(env!("OUT_DIR"), "/library.rs"));

/// Why a workspace was not written.
#[derive(Debug)]
pub enum InitError {
    /// These files exist already; nothing was written.
    WouldOverwrite(Vec<PathBuf>),
    Io(io::Error),
}

impl From<io::Error> for InitError {
    fn from(error: io::Error) -> Self {
        InitError::Io(error)
    }
}

/// Writes every file of the library under `dir`, refusing (before writing anything) when any
/// of them exists. Returns the paths written.
pub fn init(dir: &Path) -> Result<Vec<PathBuf>, InitError> {
    let targets: Vec<(PathBuf, &[u8])> = LIBRARY
        .iter()
        .map(|(relative, contents)| (dir.join(relative), *contents))
        .collect();
    let existing: Vec<PathBuf> = targets
        .iter()
        .filter(|(path, _)| path.exists())
        .map(|(path, _)| path.clone())
        .collect();
    if !existing.is_empty() {
        return Err(InitError::WouldOverwrite(existing));
    }
    for (path, contents) in &targets {
        write_atomic(path, contents)?;
    }
    Ok(targets.into_iter().map(|(path, _)| path).collect())
}
