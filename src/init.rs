//! `promptc init`: writes the shipped default library into a new workspace.

use std::path::{Path, PathBuf};

use crate::confine::resolve_output;
use crate::emit::write::Staged;
use crate::path_error::{PathError, PathProblem};

include!(concat!(env!("OUT_DIR"), "/library.rs"));

/// Why a workspace was not written.
#[derive(Debug)]
pub enum InitError {
    /// These paths exist already (as files, folders or links, dangling or not); nothing was
    /// written.
    WouldOverwrite(Vec<PathBuf>),
    /// A path of the library is refused (a link leading out of the folder, a file where a
    /// folder belongs) or cannot be written; nothing was written.
    Refused(PathError),
    /// The folder lies inside another workspace (`enclosing`, its root), whose load reads the
    /// new one's files as its own; nothing was written.
    InsideWorkspace { dir: PathBuf, enclosing: PathBuf },
}

/// Writes every file of the library under `dir`, refusing (before writing anything) when any
/// of them exists, and writing all or nothing. Returns the paths written.
pub fn init(dir: &Path) -> Result<Vec<PathBuf>, InitError> {
    let named = |error| InitError::Refused(PathError::io(dir, error));
    if let Some(enclosing) = enclosing_workspace(dir) {
        return Err(InitError::InsideWorkspace {
            dir: dir.to_path_buf(),
            enclosing,
        });
    }
    // A repository's `.git` folder holds git's own files (a folder of them there is read as
    // refs or objects, and breaks the repository), whether named or reached through a link.
    if in_a_git_folder(dir) {
        return Err(InitError::Refused(PathError::new(
            dir,
            PathProblem::GitFolder,
        )));
    }
    // A file or a link to nothing where the folder belongs: the system says only that it
    // exists.
    if dir.symlink_metadata().is_ok() && !dir.is_dir() {
        let problem = if crate::confine::is_dangling_link(dir) {
            PathProblem::DanglingLink
        } else {
            PathProblem::NotAFolder
        };
        return Err(InitError::Refused(PathError::new(dir, problem)));
    }
    std::fs::create_dir_all(dir).map_err(named)?;
    let root = dir.canonicalize().map_err(named)?;
    let mut existing = Vec::new();
    let mut targets = Vec::new();
    for (relative, contents) in LIBRARY {
        let shown = dir.join(relative);
        // `symlink_metadata`, not `exists`: a dangling link is something to overwrite too.
        if shown.symlink_metadata().is_ok() {
            existing.push(shown);
            continue;
        }
        // A new workspace: no link below its folder is followed.
        let real = resolve_output(&root, Path::new(""), Path::new(relative))
            .map_err(InitError::Refused)?;
        targets.push((real, shown, *contents));
    }
    // The build that follows writes the library's outputs and removes the files its output
    // index names: a folder of outputs already there holds files that are not the library's.
    let outputs = dir.join(output_folder());
    if outputs.symlink_metadata().is_ok() && !holds_no_output(&outputs) {
        existing.push(outputs);
    }
    if !existing.is_empty() {
        return Err(InitError::WouldOverwrite(existing));
    }
    let mut staged = Staged::default();
    for (real, shown, contents) in &targets {
        staged
            .add(real, shown, contents)
            .map_err(InitError::Refused)?;
    }
    staged.commit().map_err(InitError::Refused)?;
    Ok(targets.into_iter().map(|(_, shown, _)| shown).collect())
}

/// Whether `dir` lies in a `.git` folder, as written or where the nearest folder of it that
/// exists really lies.
fn in_a_git_folder(dir: &Path) -> bool {
    let has_git = |path: &Path| {
        path.components()
            .any(|part| crate::confine::is_git_folder(part.as_os_str()))
    };
    // `.git/../ws` is no place in `.git`.
    let Ok(absolute) = std::path::absolute(dir).map(|path| crate::confine::normalized(&path))
    else {
        return has_git(&crate::confine::normalized(dir));
    };
    has_git(&absolute)
        || absolute
            .ancestors()
            .find_map(|existing| {
                let real = existing.canonicalize().ok()?;
                let below = absolute.strip_prefix(existing).ok()?;
                Some(real.join(below))
            })
            .is_some_and(|real| has_git(&real))
}

/// The folder the library's manifest builds its outputs into (`build.out`).
fn output_folder() -> String {
    LIBRARY
        .iter()
        .find(|(path, _)| *path == "promptc.toml")
        .and_then(|(_, text)| std::str::from_utf8(text).ok())
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|manifest| {
            manifest
                .get("build")?
                .get("out")?
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "examples/prompts".to_owned())
}

/// Whether `path` is a folder (not a link to one) that holds nothing a build writes over or
/// removes: nothing at all, or only hidden files such as the `.gitkeep` that keeps an empty
/// folder in git, which no build touches (its output index and temporary files excepted).
fn holds_no_output(path: &Path) -> bool {
    let is_placeholder = |entry: std::io::Result<std::fs::DirEntry>| {
        entry.is_ok_and(|entry| {
            let name = entry.file_name();
            name.to_string_lossy().starts_with('.')
                && name != crate::emit::matrix::INDEX_FILE
                && !crate::emit::write::is_temporary(&name)
                && entry.file_type().is_ok_and(|kind| kind.is_file())
        })
    };
    path.symlink_metadata().is_ok_and(|meta| meta.is_dir())
        && std::fs::read_dir(path).is_ok_and(|mut entries| entries.all(is_placeholder))
}

/// The workspace a new one at `dir` would lie inside: the nearest folder above `dir` (its
/// links resolved, `dir` itself not counted) that holds a manifest. A workspace reads its
/// folders whole, so a library written into one of them (`components/`, say) would be read
/// as the outer workspace's files and break it.
fn enclosing_workspace(dir: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(dir).ok()?;
    let existing = absolute.ancestors().find(|folder| folder.exists())?;
    let real = existing.canonicalize().ok()?;
    let above = if existing == absolute {
        real.parent()?
    } else {
        &real
    };
    above
        .ancestors()
        .find(|folder| crate::load::has_manifest(folder))
        .map(Path::to_path_buf)
}
