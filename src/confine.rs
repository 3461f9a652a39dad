//! The trust boundary on disk. A workspace may come from an unreviewed pull request, so every
//! path promptc reads as workspace content, or writes, deletes or reads back as an output,
//! goes through this module:
//!
//! - content (data files, templates) is read only when its real path, after following every
//!   symbolic link, lies inside the workspace, and only from a regular file of bounded size;
//! - outputs are regular files: in the output folder's own path a link to a folder inside the
//!   workspace is followed, below it no link at all; a FIFO or a device is refused;
//! - the repository's `.git` folder is neither read nor written.
//!
//! Paths the caller names (command-line arguments, library arguments) are the caller's choice
//! and may lie anywhere; they are still read only as bounded regular files.

use std::fs::{self, File, Metadata};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use crate::path_error::{PathError, PathProblem};

/// Whether a path is workspace content (confined to the workspace) or was named by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Workspace,
    Caller,
}

/// Reads a file of the workspace rooted at `root` (a canonical path): its real path must lie
/// inside the workspace, and it must be a regular file of at most `limit` bytes.
pub fn read_content(root: &Path, path: &Path, limit: u64) -> Result<Vec<u8>, PathError> {
    read_content_resolved(root, path, limit).map(|(bytes, _)| bytes)
}

/// [`read_content`], with the file's real path when `path` is not it: a symbolic link (or a
/// name that is not plain, `a/../b`) on the way. `None` when the path read is the real one.
pub fn read_content_resolved(
    root: &Path,
    path: &Path,
    limit: u64,
) -> Result<(Vec<u8>, Option<PathBuf>), PathError> {
    crate::looked_at::name(path);
    let shown = shown(root, path);
    let read = match opened_plainly_inside(root, path) {
        Some(file) => read_opened(file, limit).map(|bytes| (bytes, None)),
        None => match plainly_inside(root, path) {
            Some(metadata) => read_looked_at(path, &metadata, limit).map(|bytes| (bytes, None)),
            None => real_path_inside(root, path)
                .and_then(|real| Ok((read_regular(&real, limit)?, Some(real)))),
        },
    };
    read.map_err(|problem| PathError::new(&shown, problem))
}

/// `path` opened for reading when it is a regular file below `root` (a canonical path, so
/// itself free of links) through plain names: what [`plainly_inside`] finds with a call per
/// name, checked by the kernel. Its folder is opened in one call that follows no link at all
/// (`openat2`), and the file is looked at, then opened, by its name in that folder without
/// following a link: nothing on the way can be swapped for a link meanwhile, and a FIFO or a
/// device is refused before it is opened, as it is on the longer way. `None` sends the path
/// that longer way: a link on the way (which may still lead inside), a name that is not plain,
/// anything but a regular file within reach (to be reported as before), or a system without
/// `openat2`.
#[cfg(target_os = "linux")]
fn opened_plainly_inside(root: &Path, path: &Path) -> Option<File> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
    use std::sync::atomic::{AtomicBool, Ordering};

    // Linux before 5.6: asked once, not for every file. Other refusals (a sandbox's filter
    // among them) cost one failed call per file and are not remembered, so that a refusal
    // of one file does not slow every later read of a long-lived process.
    static UNAVAILABLE: AtomicBool = AtomicBool::new(false);
    if UNAVAILABLE.load(Ordering::Relaxed) || !plain_names_below(root, path) {
        return None;
    }
    // `parent` and `file_name` read `file/` and `file/.` as `file`, which opening the path as
    // written refuses (not a folder): such a path goes the longer way, which opens it so.
    let written = path.as_os_str().as_encoded_bytes();
    if written.ends_with(b"/") || written.ends_with(b"/.") {
        return None;
    }
    let (folder, name) = (path.parent()?, path.file_name()?);
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let folder = match rustix::fs::openat2(rustix::fs::CWD, folder, flags, Mode::empty(), resolve) {
        Ok(folder) => folder,
        Err(error) => {
            if error == rustix::io::Errno::NOSYS {
                UNAVAILABLE.store(true, Ordering::Relaxed);
            }
            return None;
        }
    };
    let looked = rustix::fs::statat(&folder, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    if FileType::from_raw_mode(looked.st_mode) != FileType::RegularFile {
        return None;
    }
    // Non-blocking: a file swapped for a FIFO since the look opens at once, and is refused
    // by the check of what was opened.
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NOCTTY;
    let file = rustix::fs::openat(&folder, name, flags | OFlags::NONBLOCK, Mode::empty()).ok()?;
    Some(File::from(file))
}

#[cfg(not(target_os = "linux"))]
fn opened_plainly_inside(_root: &Path, _path: &Path) -> Option<File> {
    None
}

/// Whether `path` is `root` followed by plain names, none of them the repository's folder.
fn plain_names_below(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|below| {
        below.components().next().is_some()
            && below
                .components()
                .all(|part| matches!(part, Component::Normal(name) if !is_git_folder(name)))
    })
}

/// Whether `path`, written relative and without `..`, can leave the folder it is read from
/// only through a symbolic link.
pub fn inside_as_written(path: &str) -> bool {
    let path = Path::new(path);
    path.is_relative()
        && path
            .components()
            .all(|part| matches!(part, Component::Normal(_) | Component::CurDir))
}

/// Whether `path` is a symbolic link to nothing: there, but leading to no file or folder.
pub fn is_dangling_link(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|meta| meta.is_symlink()) && !path.exists()
}

/// Whether `path` lies inside `root` as it stands: plain names below it, none of them a link
/// or the repository's folder, the last one existing.
pub fn is_plainly_inside(root: &Path, path: &Path) -> bool {
    crate::looked_at::name(path);
    plainly_inside(root, path).is_some()
}

/// What `path` is, when it is already its own real path inside `root` (a canonical path):
/// plain names below the root, none of them a link or the repository's folder. Looking at
/// each name below the root takes a call per name, where resolving the whole path from `/`
/// takes more per file than reading it. `None` sends every other path (and every problem)
/// the long way, through [`real_path_inside`].
fn plainly_inside(root: &Path, path: &Path) -> Option<Metadata> {
    if !plain_names_below(root, path) {
        return None;
    }
    let mut at = root.to_path_buf();
    let mut last = None;
    for name in path.strip_prefix(root).ok()?.components() {
        at.push(name);
        let metadata = at.symlink_metadata().ok()?;
        if metadata.file_type().is_symlink() {
            return None;
        }
        last = Some(metadata);
    }
    last
}

/// Whose a file is to read. A file the caller names (`--context FILE`, `--mcp FILE`, the
/// listing beside it) that lies in the workspace is the workspace's all the same: a pull
/// request may have made it a link to anything, and its text ends up in diagnostics. In the
/// workspace means below the root as the path is written (from the current folder), or in a
/// folder that really is below it.
pub fn origin_of(root: &Path, path: &Path, origin: Origin) -> Origin {
    if origin == Origin::Workspace {
        return origin;
    }
    let absolute = match std::env::current_dir() {
        Ok(current) => current.join(path),
        Err(_) => path.to_path_buf(),
    };
    let lexical = normalized(&absolute);
    let folder_inside = || {
        absolute
            .parent()
            .and_then(|folder| fs::canonicalize(folder).ok())
            .is_some_and(|folder| folder.starts_with(root))
    };
    if lexical.starts_with(root) || folder_inside() {
        Origin::Workspace
    } else {
        Origin::Caller
    }
}

/// A path the caller names for promptc to write, or to read the files of a folder below
/// (`--out`, `--rules`): one in the workspace (see [`origin_of`]) stays in it through every
/// link on its way, as a file promptc reads there must, since a pull request may have made a
/// folder of it a link to anywhere (`build --out dist`, `dist` a link to a folder outside,
/// wrote the prompts there); one named elsewhere is the caller's. A path not there yet is
/// held to the nearest folder above it that is.
pub fn caller_path_stays(root: &Path, path: &Path) -> Result<(), PathError> {
    if origin_of(root, path, Origin::Caller) != Origin::Workspace {
        return Ok(());
    }
    let absolute = std::path::absolute(path).map_err(|error| PathError::io(path, error))?;
    let Some(existing) = absolute
        .ancestors()
        .find(|part| part.symlink_metadata().is_ok())
    else {
        return Ok(());
    };
    // Named as the caller wrote it, up to the outermost link on the way (`dist`, not
    // `dist/ctx.json`), whose target is shown.
    let link = existing
        .ancestors()
        .take_while(|part| part.starts_with(root) && *part != root)
        .filter(|part| {
            part.symlink_metadata()
                .is_ok_and(|meta| meta.file_type().is_symlink())
        })
        .last()
        .unwrap_or(existing);
    let below = absolute.components().count() - link.components().count();
    let shown = path.ancestors().nth(below).unwrap_or(path);
    let in_git = |path: &Path| {
        path.strip_prefix(root).is_ok_and(|below| {
            below
                .components()
                .any(|part| is_git_folder(part.as_os_str()))
        })
    };
    match fs::canonicalize(existing) {
        // The repository's folder is not the workspace's, as written or where a link leads
        // (`dist` a link to `.git/hooks`).
        Ok(real) if real.starts_with(root) => {
            let rest = absolute.strip_prefix(existing).unwrap_or(Path::new(""));
            if in_git(&real.join(rest)) {
                Err(PathError::new(path, PathProblem::GitFolder))
            } else {
                Ok(())
            }
        }
        Ok(_) => {
            let target = fs::canonicalize(link).unwrap_or_else(|_| link.to_path_buf());
            Err(PathError::new(
                shown,
                PathProblem::LinkLeavesWorkspace {
                    target: target_as_shown(root, target),
                },
            ))
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            Err(PathError::new(shown, PathProblem::DanglingLink))
        }
        Err(error) => Err(PathError::new(shown, PathProblem::BrokenLink { error })),
    }
}

/// Reads a file the caller named: anywhere, but a bounded regular file all the same.
pub fn read_named(path: &Path, limit: u64) -> Result<Vec<u8>, PathError> {
    crate::looked_at::name(path);
    read_regular(path, limit).map_err(|problem| PathError::new(path, problem))
}

/// Where a link out of `root` leads, as a diagnostic shows it: beside the workspace (in the
/// folder that holds it), relative to it (`../shared/x.md`), so that a revision's copy in a
/// temporary folder is told of as the working tree is, in the same words on every run;
/// farther away, the real path.
fn target_as_shown(root: &Path, real: PathBuf) -> PathBuf {
    match root
        .parent()
        .and_then(|parent| real.strip_prefix(parent).ok())
    {
        Some(beside) => Path::new("..").join(beside),
        None => real,
    }
}

/// The real path of `path` (every link followed) when it lies inside `root`.
pub fn real_path_inside(root: &Path, path: &Path) -> Result<PathBuf, PathProblem> {
    crate::looked_at::name(path);
    match fs::canonicalize(path) {
        Ok(real) if real.starts_with(root) => {
            let below = real.strip_prefix(root).unwrap_or(&real);
            if below
                .components()
                .any(|part| is_git_folder(part.as_os_str()))
            {
                return Err(PathProblem::GitFolder);
            }
            Ok(real)
        }
        Ok(real) => Err(if goes_through_link(root, path) {
            PathProblem::LinkLeavesWorkspace {
                target: target_as_shown(root, real),
            }
        } else {
            PathProblem::OutsideWorkspace
        }),
        Err(error) if error.kind() == io::ErrorKind::NotFound && goes_through_link(root, path) => {
            Err(PathProblem::DanglingLink)
        }
        // A loop of links, or a link through a file: it leads nowhere.
        Err(error) if goes_through_link(root, path) => Err(PathProblem::BrokenLink { error }),
        Err(error) => Err(PathProblem::Io(error)),
    }
}

/// Whether any existing part of `path` below `root` is a symbolic link.
fn goes_through_link(root: &Path, path: &Path) -> bool {
    path.ancestors()
        .take_while(|p| p.starts_with(root) && *p != root)
        .any(|p| {
            p.symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
        })
}

fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, PathProblem> {
    // Look before opening: opening a FIFO would block, and a device has no end.
    let metadata = fs::metadata(path).map_err(PathProblem::Io)?;
    read_looked_at(path, &metadata, limit)
}

/// Reads `path`, whose metadata (links followed) was just looked at.
fn read_looked_at(path: &Path, metadata: &Metadata, limit: u64) -> Result<Vec<u8>, PathProblem> {
    check_regular(metadata)?;
    if metadata.len() > limit {
        return Err(PathProblem::TooLarge {
            limit,
            setting: None,
        });
    }
    let file = File::open(path).map_err(PathProblem::Io)?;
    // The file may have been swapped between the look and the open: check what was opened.
    read_opened(file, limit)
}

/// Reads an opened file: a regular file of at most `limit` bytes.
fn read_opened(file: File, limit: u64) -> Result<Vec<u8>, PathProblem> {
    let opened = file.metadata().map_err(PathProblem::Io)?;
    check_regular(&opened)?;
    if opened.len() > limit {
        return Err(PathProblem::TooLarge {
            limit,
            setting: None,
        });
    }
    // Room for the whole file and one byte more, so that reading it takes one call and
    // finding its end another (the file may still grow: the limit holds whatever it does).
    let expected = usize::try_from(opened.len().min(limit)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(expected.saturating_add(1));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(PathProblem::Io)?;
    if bytes.len() as u64 > limit {
        return Err(PathProblem::TooLarge {
            limit,
            setting: None,
        });
    }
    Ok(bytes)
}

fn check_regular(metadata: &Metadata) -> Result<(), PathProblem> {
    if metadata.file_type().is_file() {
        Ok(())
    } else {
        Err(not_regular(metadata))
    }
}

/// What is wrong with a path that is not a regular file.
pub fn not_regular(metadata: &Metadata) -> PathProblem {
    let kind = metadata.file_type();
    if kind.is_dir() {
        PathProblem::IsFolder
    } else {
        PathProblem::NotRegularFile {
            what: special_kind(&kind),
        }
    }
}

/// What a file that is neither a regular file nor a folder is: a named pipe, a socket, a
/// device.
#[cfg(unix)]
pub fn special_kind(kind: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "named pipe (FIFO)"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "device"
    } else {
        "special file"
    }
}

#[cfg(not(unix))]
pub fn special_kind(_: &fs::FileType) -> &'static str {
    "special file"
}

/// Where an output at `below`, inside the folder `base` (both relative to the workspace root
/// `root`, a canonical path), really lies, checked part by part.
///
/// In `base` (a folder named in the manifest, such as `build.out`), a link to a folder inside
/// the workspace is followed; `below` it (the folders and files promptc manages) no link is
/// followed at all, so an edited index or a planted link cannot turn an output path into any
/// other file. Folders that do not exist yet are fine (they will be created as real folders).
/// A link that leaves the workspace, a folder where the file belongs, a file where a folder
/// belongs, FIFOs, devices and `.git` are refused.
pub fn resolve_output(root: &Path, base: &Path, below: &Path) -> Result<PathBuf, PathError> {
    resolve(root, base, below, Want::File)
}

/// A folder promptc writes into or lists (an output folder, the schema folder): links to
/// folders inside the workspace are followed; the folder may not exist yet.
pub fn resolve_output_dir(root: &Path, base: &Path) -> Result<PathBuf, PathError> {
    resolve(root, base, Path::new(""), Want::Folder)
}

/// The output at `below` in `base`, or `None` when there is none yet. Bounded like any read.
pub fn read_output(
    root: &Path,
    base: &Path,
    below: &Path,
    limit: u64,
) -> Result<Option<Vec<u8>>, PathError> {
    resolve_looked(root, base, below, Want::File)?.read(&base.join(below), limit)
}

/// The output folders of one matrix run, each resolved once: a matrix writes dozens of
/// files into each folder, and resolving the folder again for each file took more calls
/// than reading the file. A folder that does not exist yet is not remembered.
#[derive(Debug, Default)]
pub struct OutputFolders {
    resolved: std::collections::HashMap<(PathBuf, PathBuf), PathBuf>,
}

/// An output resolved as [`resolve_output`] resolves it, and what it is when it exists.
#[derive(Debug)]
pub struct ResolvedOutput {
    pub real: PathBuf,
    /// The file's metadata (it is a regular file); `None` when there is none yet.
    pub metadata: Option<Metadata>,
}

impl ResolvedOutput {
    /// Its content, or `None` when there is none yet; at most `limit` bytes. `shown` is the
    /// path errors name.
    pub fn read(&self, shown: &Path, limit: u64) -> Result<Option<Vec<u8>>, PathError> {
        let Some(metadata) = &self.metadata else {
            return Ok(None);
        };
        match read_looked_at(&self.real, metadata, limit) {
            Ok(bytes) => Ok(Some(bytes)),
            // promptc writes these files: the fix is a fresh one, not a smaller one.
            Err(PathProblem::TooLarge { limit, .. }) => Err(PathError::new(
                shown,
                PathProblem::GeneratedTooLarge { limit },
            )),
            Err(problem) => Err(PathError::new(shown, problem)),
        }
    }
}

impl OutputFolders {
    /// The output at `below` in `base`, as [`resolve_output`] finds it, with its folder
    /// resolved at most once per run.
    pub fn resolve(
        &mut self,
        root: &Path,
        base: &Path,
        below: &Path,
    ) -> Result<ResolvedOutput, PathError> {
        let relative = base.join(below);
        let parts = plain_parts(&relative).map_err(|problem| PathError::new(&relative, problem))?;
        let (Some(name), Some(folder)) = (parts.last(), below.parent()) else {
            return resolve_looked(root, base, below, Want::File);
        };
        let key = (base.to_path_buf(), folder.to_path_buf());
        let Some(real_folder) = self.resolved.get(&key) else {
            let resolved = resolve_looked(root, base, below, Want::File)?;
            if resolved.metadata.is_some()
                && let Some(parent) = resolved.real.parent()
            {
                self.resolved.insert(key, parent.to_path_buf());
            }
            return Ok(resolved);
        };
        let real = real_folder.join(name);
        match real.symlink_metadata() {
            Ok(metadata) if metadata.file_type().is_file() => Ok(ResolvedOutput {
                real,
                metadata: Some(metadata),
            }),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(ResolvedOutput {
                real,
                metadata: None,
            }),
            // A link, a folder, a special file or an error: refused, and worded, by the
            // full resolution, as for any output.
            _ => resolve_looked(root, base, below, Want::File),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    File,
    Folder,
}

fn resolve(root: &Path, base: &Path, below: &Path, want: Want) -> Result<PathBuf, PathError> {
    resolve_looked(root, base, below, want).map(|resolved| resolved.real)
}

/// [`resolve`], with the metadata of the last part when it exists.
fn resolve_looked(
    root: &Path,
    base: &Path,
    below: &Path,
    want: Want,
) -> Result<ResolvedOutput, PathError> {
    let relative = base.join(below);
    let parts = plain_parts(&relative).map_err(|problem| PathError::new(&relative, problem))?;
    let followed = plain_parts(base).map_or(0, |parts| parts.len());
    let mut real = root.to_path_buf();
    let mut shown = PathBuf::new();
    let mut last = None;
    for (index, part) in parts.iter().enumerate() {
        let folder = index + 1 < parts.len() || want == Want::Folder;
        let next = real.join(part);
        shown.push(part);
        let refuse = |problem| Err(PathError::new(&shown, problem));
        let metadata = match next.symlink_metadata() {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                real = next;
                real.extend(&parts[index + 1..]);
                return Ok(ResolvedOutput {
                    real,
                    metadata: None,
                });
            }
            Err(error) => return refuse(PathProblem::Io(error)),
        };
        let kind = metadata.file_type();
        real = if kind.is_symlink() {
            let target = match real_path_inside(root, &next) {
                Ok(target) => target,
                Err(problem) => return refuse(problem),
            };
            if !folder || index >= followed {
                return refuse(PathProblem::IsLink);
            }
            if !target.is_dir() {
                return refuse(PathProblem::NotAFolder);
            }
            target
        } else if kind.is_dir() {
            if !folder {
                return refuse(PathProblem::IsFolder);
            }
            next
        } else if kind.is_file() {
            if folder {
                return refuse(PathProblem::NotAFolder);
            }
            last = Some(metadata);
            next
        } else {
            return refuse(PathProblem::NotRegularFile {
                what: special_kind(&kind),
            });
        };
    }
    Ok(ResolvedOutput {
        real,
        metadata: last,
    })
}

/// The parts of a workspace-relative path, when they are all plain names: no `..`, no root,
/// and no `.git` (the repository's own files, credentials included, are not workspace content).
fn plain_parts(relative: &Path) -> Result<Vec<&std::ffi::OsStr>, PathProblem> {
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) if is_git_folder(name) => {
                return Err(PathProblem::GitFolder);
            }
            Component::Normal(name) => parts.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(PathProblem::OutsideWorkspace);
            }
        }
    }
    Ok(parts)
}

/// `.git`, in any case (case-insensitive file systems open `.GIT` as `.git`).
pub fn is_git_folder(name: &std::ffi::OsStr) -> bool {
    name.eq_ignore_ascii_case(".git")
}

/// Whether a workspace folder lies in the repository's `.git` folder, as written or as it
/// really lies (through a link): loading would find it empty and a build would refuse to
/// write there, neither saying which setting named it.
pub fn in_git_folder(root: &std::path::Path, folder: &str) -> bool {
    let has_git = |path: &std::path::Path| {
        path.components()
            .any(|part| is_git_folder(part.as_os_str()))
    };
    let written = lexical(folder.trim_matches('/'));
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let real = real_folder(root, &written);
    has_git(&written) || real.strip_prefix(&real_root).is_ok_and(has_git)
}

/// Where a workspace folder really lies: its deepest existing part with every link resolved,
/// then the rest as written.
pub fn real_folder(root: &std::path::Path, folder: &std::path::Path) -> std::path::PathBuf {
    let mut existing = root.join(folder);
    crate::looked_at::name(&existing);
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |path, part| path.join(part));
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return root.join(folder),
        }
    }
}

/// `path` with its `.` parts left out and each `..` taking back the part before it, as
/// reading the path would where no link is on the way; its root kept.
pub fn normalized(path: &Path) -> PathBuf {
    let mut parts = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                parts.pop();
            }
            Component::CurDir => {}
            other => parts.push(other),
        }
    }
    parts
}

/// A workspace-relative folder as its plain parts (`./a//b/` → `a/b`, `.git/../p` → `p`), for
/// comparing folders: `..` takes back the part before it, as reading the path would.
pub fn lexical(path: &str) -> std::path::PathBuf {
    normalized(Path::new(path))
        .components()
        .filter(|part| matches!(part, Component::Normal(_)))
        .collect()
}

/// The path shown to users: relative to the workspace root when inside it.
pub fn shown(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    #[test]
    fn a_folder_in_git_is_judged_where_the_path_leads() {
        let root = tempfile::tempdir().unwrap();
        assert!(in_git_folder(root.path(), ".git/out"));
        assert!(in_git_folder(root.path(), "a/.GIT"));
        // `..` takes back the part before it, as reading the path does.
        assert!(!in_git_folder(root.path(), ".git/../partials"));
        assert!(in_git_folder(root.path(), "partials/../.git/p"));
    }

    use super::*;
    use std::os::unix::fs::symlink;

    fn workspace() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let outside = dir.path().join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        (
            dir,
            root.canonicalize().unwrap(),
            outside.canonicalize().unwrap(),
        )
    }

    /// A path the caller names to write or read (`--out`, `--rules`) is refused in the
    /// repository's folder, where a link the workspace holds leads there or as written.
    #[test]
    fn caller_paths_into_the_git_folder_are_refused() {
        let (_dir, root, _outside) = workspace();
        fs::create_dir_all(root.join(".git/refs/heads")).unwrap();
        fs::create_dir_all(root.join("plain")).unwrap();
        symlink(root.join(".git/refs/heads"), root.join("dist")).unwrap();
        symlink(root.join(".git"), root.join("rr")).unwrap();
        for refused in [
            "dist",
            "dist/x.json",
            "rr",
            "rr/new/folder",
            ".git/hooks",
            ".GIT/new",
            "new/../.git/x",
            "plain/../.git",
        ] {
            let error = caller_path_stays(&root, &root.join(refused)).unwrap_err();
            assert!(
                matches!(error.problem, PathProblem::GitFolder),
                "{refused}: {error:?}"
            );
        }
        for kept in ["plain", "plain/new/x.json", "new", "dist-not-a-link"] {
            caller_path_stays(&root, &root.join(kept))
                .unwrap_or_else(|error| panic!("{kept}: {error:?}"));
        }
    }

    #[test]
    fn outputs_below_a_link_that_leaves_are_refused() {
        let (_dir, root, outside) = workspace();
        fs::create_dir_all(root.join("examples")).unwrap();
        symlink(&outside, root.join("examples/link")).unwrap();
        let error = resolve_output(
            &root,
            Path::new("examples/link/prompts"),
            Path::new("a/b.md"),
        )
        .unwrap_err();
        assert_eq!(error.path, Path::new("examples/link"));
        assert!(matches!(
            error.problem,
            PathProblem::LinkLeavesWorkspace { .. }
        ));
        // The same link, dangling.
        fs::remove_dir(&outside).unwrap();
        let error = resolve_output(
            &root,
            Path::new("examples/link/prompts"),
            Path::new("a/b.md"),
        )
        .unwrap_err();
        assert!(matches!(error.problem, PathProblem::DanglingLink));
    }

    #[test]
    fn links_inside_the_workspace_are_followed() {
        let (_dir, root, _outside) = workspace();
        fs::create_dir_all(root.join("generated")).unwrap();
        symlink(root.join("generated"), root.join("prompts")).unwrap();
        assert_eq!(
            resolve_output(&root, Path::new("prompts"), Path::new("xs/a.md")).unwrap(),
            root.join("generated/xs/a.md")
        );
        // Below the output folder, not even a link inside the workspace is followed.
        fs::create_dir_all(root.join("prompts")).ok();
        symlink(root.join("generated"), root.join("generated/xs")).unwrap();
        let error = resolve_output(&root, Path::new("prompts"), Path::new("xs/a.md")).unwrap_err();
        assert_eq!(error.path, Path::new("prompts/xs"));
        assert!(matches!(error.problem, PathProblem::IsLink));
    }

    #[test]
    fn a_run_resolves_each_output_folder_once_and_still_checks_every_file() {
        let (_dir, root, outside) = workspace();
        fs::create_dir_all(root.join("out/xs")).unwrap();
        fs::write(root.join("out/xs/a.md"), "old a").unwrap();
        fs::write(outside.join("secret"), "secret").unwrap();
        let mut folders = OutputFolders::default();
        let mut resolve = |below: &str| folders.resolve(&root, Path::new("out"), Path::new(below));
        let a = resolve("xs/a.md").unwrap();
        assert_eq!(a.real, root.join("out/xs/a.md"));
        assert_eq!(
            a.read(Path::new("out/xs/a.md"), 100).unwrap().as_deref(),
            Some(&b"old a"[..])
        );
        // Over the limit: a file promptc wrote too large.
        assert!(matches!(
            a.read(Path::new("out/xs/a.md"), 2).unwrap_err().problem,
            PathProblem::GeneratedTooLarge { limit: 2 }
        ));
        // The folder is known now: what is in it is still looked at, file by file.
        let missing = resolve("xs/b.md").unwrap();
        assert_eq!(missing.real, root.join("out/xs/b.md"));
        assert!(missing.metadata.is_none());
        assert_eq!(missing.read(Path::new("out/xs/b.md"), 100).unwrap(), None);
        symlink(outside.join("secret"), root.join("out/xs/c.md")).unwrap();
        fs::write(root.join("notes.md"), "x").unwrap();
        symlink(root.join("notes.md"), root.join("out/xs/d.md")).unwrap();
        fs::create_dir(root.join("out/xs/e.md")).unwrap();
        for (below, expected) in [
            ("xs/c.md", "link leaves"),
            ("xs/d.md", "link"),
            ("xs/e.md", "folder"),
        ] {
            let cached = resolve(below).unwrap_err();
            let direct = resolve_output(&root, Path::new("out"), Path::new(below)).unwrap_err();
            assert_eq!(cached.path, direct.path, "{below}");
            assert_eq!(
                std::mem::discriminant(&cached.problem),
                std::mem::discriminant(&direct.problem),
                "{below}: {expected}"
            );
        }
        assert!(matches!(
            resolve("xs/c.md").unwrap_err().problem,
            PathProblem::LinkLeavesWorkspace { .. }
        ));
        assert!(matches!(
            resolve("xs/e.md").unwrap_err().problem,
            PathProblem::IsFolder
        ));
        assert!(matches!(
            resolve("../x.md").unwrap_err().problem,
            PathProblem::OutsideWorkspace
        ));
        assert!(matches!(
            resolve("xs/.git").unwrap_err().problem,
            PathProblem::GitFolder
        ));
    }

    #[test]
    fn the_output_itself_must_be_a_regular_file() {
        let (_dir, root, outside) = workspace();
        fs::create_dir_all(root.join("out/xs/a.md")).unwrap();
        fs::write(outside.join("secret"), "x").unwrap();
        fs::write(root.join("notes.md"), "x").unwrap();
        symlink(outside.join("secret"), root.join("out/xs/b.md")).unwrap();
        symlink(root.join("notes.md"), root.join("out/xs/c.md")).unwrap();
        let refused = |below: &str| {
            resolve_output(&root, Path::new("out"), Path::new(below))
                .unwrap_err()
                .problem
        };
        assert!(matches!(refused("xs/a.md"), PathProblem::IsFolder));
        assert!(matches!(
            refused("xs/b.md"),
            PathProblem::LinkLeavesWorkspace { .. }
        ));
        assert!(matches!(refused("xs/c.md"), PathProblem::IsLink));
        assert!(matches!(refused("../x.md"), PathProblem::OutsideWorkspace));
        assert!(matches!(
            refused("/etc/x.md"),
            PathProblem::OutsideWorkspace
        ));
        assert!(matches!(refused(".git/hooks/x.md"), PathProblem::GitFolder));
        assert!(matches!(refused(".GIT/x.md"), PathProblem::GitFolder));
    }

    #[test]
    fn content_is_read_only_from_bounded_regular_files_inside() {
        let (_dir, root, outside) = workspace();
        fs::write(outside.join("secret"), "x").unwrap();
        fs::write(root.join("big"), vec![b'a'; 100]).unwrap();
        symlink(outside.join("secret"), root.join("link")).unwrap();
        symlink("/dev/zero", root.join("zero")).unwrap();
        let problem = |p: &str, limit| read_content(&root, &root.join(p), limit).unwrap_err();
        let error = problem("link", 10);
        assert_eq!(error.path, Path::new("link"));
        assert!(matches!(
            error.problem,
            PathProblem::LinkLeavesWorkspace { .. }
        ));
        assert!(matches!(
            problem("zero", 10).problem,
            PathProblem::LinkLeavesWorkspace { .. }
        ));
        assert!(matches!(
            problem("big", 99).problem,
            PathProblem::TooLarge { limit: 99, .. }
        ));
        assert_eq!(
            read_content(&root, &root.join("big"), 100).unwrap().len(),
            100
        );
        // A link anywhere on the way, not only the file itself, is followed and checked.
        symlink(&outside, root.join("folder")).unwrap();
        assert!(matches!(
            problem("folder/secret", 10).problem,
            PathProblem::LinkLeavesWorkspace { .. }
        ));
        fs::create_dir_all(root.join("real/.git")).unwrap();
        fs::write(root.join("real/.git/config"), "x").unwrap();
        assert!(matches!(
            problem("real/.git/config", 10).problem,
            PathProblem::GitFolder
        ));
        assert!(matches!(problem("real", 10).problem, PathProblem::IsFolder));
        assert!(matches!(problem("missing", 10).problem, PathProblem::Io(_)));
        // A path that climbs back inside is read from where it really is.
        assert_eq!(
            read_content(&root, &root.join("real/../big"), 100)
                .unwrap()
                .len(),
            100
        );
        // A link that stays inside is followed.
        symlink(root.join("big"), root.join("alias")).unwrap();
        assert_eq!(
            read_content(&root, &root.join("alias"), 100).unwrap().len(),
            100
        );
        // Named by the caller: read from anywhere, still bounded and regular.
        assert!(matches!(
            read_named(Path::new("/dev/zero"), 10).unwrap_err().problem,
            PathProblem::NotRegularFile { .. }
        ));
    }

    /// A regular file below the root through plain names is opened by name in its folder,
    /// itself opened in one call that follows no link; anything else (a link on the way,
    /// `..`, the repository's folder, the root itself, a FIFO) takes the long way.
    #[test]
    #[cfg(target_os = "linux")]
    fn plain_paths_are_opened_by_name_in_a_folder_reached_without_links() {
        let (_dir, root, outside) = workspace();
        fs::create_dir_all(root.join("real/.git")).unwrap();
        fs::write(root.join("real/file"), "x").unwrap();
        fs::write(root.join("real/.git/config"), "x").unwrap();
        fs::write(outside.join("secret"), "x").unwrap();
        symlink(root.join("real"), root.join("inner")).unwrap();
        symlink(outside.join("secret"), root.join("real/secret")).unwrap();
        let opened = |p: &str| opened_plainly_inside(&root, &root.join(p)).is_some();
        assert!(opened("real/file"));
        assert!(!opened("inner/file"));
        assert!(!opened("real/secret"));
        assert!(!opened("real/../real/file"));
        assert!(!opened("real/.git/config"));
        assert!(!opened("missing"));
        assert!(opened_plainly_inside(&root, &root).is_none());
        // A file named as a folder is not read as the file.
        for written in ["real/file/", "real/file/."] {
            assert!(!opened(written));
            let error = read_content(&root, &root.join(written), 10).unwrap_err();
            assert!(matches!(error.problem, PathProblem::Io(_)), "{written}");
        }
        // Only a regular file is opened: a FIFO or a folder is refused on the longer way,
        // without being opened (opening a FIFO lets a writer that waits for it go on).
        assert!(!opened("real"));
        let fifo = root.join("real/pipe");
        let (fifo_kind, mode) = (rustix::fs::FileType::Fifo, rustix::fs::Mode::RUSR);
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, fifo_kind, mode, 0).unwrap();
        assert!(!opened("real/pipe"));
        assert!(matches!(
            read_content(&root, &fifo, 10).unwrap_err().problem,
            PathProblem::NotRegularFile { .. }
        ));
    }
}
