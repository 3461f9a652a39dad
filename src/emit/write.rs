//! Writing outputs atomically: a reader (or a crash) never sees a half-written file, and a set
//! of outputs is written all or nothing.
//!
//! Every file is first written in full to a temporary file beside its target, named
//! `.promptc-tmp-…` so that one left behind by a killed process is recognisable (and removed by
//! the next `promptc build --all`); then the temporary files are renamed into place.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::{NamedTempFile, TempPath};

use crate::path_error::{PathError, PathProblem};

/// How promptc's temporary files begin.
pub const TEMP_PREFIX: &str = ".promptc-tmp-";

/// Whether a file name is one of promptc's temporary files. Earlier versions named them as
/// `tempfile`'s default does (`.tmp` and six letters or digits), so those count too.
pub fn is_temporary(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    name.starts_with(TEMP_PREFIX)
        || name
            .strip_prefix(".tmp")
            .is_some_and(|rest| rest.len() == 6 && rest.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Whether a temporary file (see [`is_temporary`]) was left by a process that no longer runs:
/// one that has ended, or none (an older promptc's names name none). A build running beside
/// another must not take the other's files, which it is about to rename into place, for
/// leftovers: a file whose process cannot be told about (made in another container sharing
/// the folder, or on a system that cannot be asked) is left behind only once it is older
/// than any build takes ([`UNTOLD_AFTER`], by when it was last written or linked: see
/// [`last_changed`]).
pub fn is_left_behind(name: &OsStr, modified: Option<std::time::SystemTime>) -> bool {
    use crate::scratch::Maker;
    let Some(owned) = name
        .to_str()
        .and_then(|name| name.strip_prefix(TEMP_PREFIX))
    else {
        return true;
    };
    match crate::scratch::maker_of(owned) {
        Maker::Running => false,
        Maker::Ended | Maker::Unnamed => true,
        Maker::Untold => modified
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > UNTOLD_AFTER),
    }
}

/// When a file was last written or linked: the later of its modification time and, where
/// there is one, its status change time. A file kept aside is a new link to the output it
/// replaces, whose modification time is that output's, hours old, while the link was made
/// this moment.
pub fn last_changed(metadata: &std::fs::Metadata) -> Option<std::time::SystemTime> {
    let modified = metadata.modified().ok();
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let changed = u64::try_from(metadata.ctime()).ok().map(|seconds| {
            std::time::UNIX_EPOCH
                + std::time::Duration::new(
                    seconds,
                    u32::try_from(metadata.ctime_nsec()).unwrap_or(0),
                )
        });
        modified.max(changed)
    }
    #[cfg(not(unix))]
    {
        modified
    }
}

/// How old a temporary file whose process cannot be told about must be to count as left
/// behind.
pub const UNTOLD_AFTER: std::time::Duration = std::time::Duration::from_secs(60 * 60);

/// Writes `contents` to `path` atomically. Errors name the path.
#[cfg(test)]
fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), PathError> {
    let mut staged = Staged::default();
    staged.add(path, path, contents)?;
    staged.commit()
}

/// Files written in full to temporary files, waiting to be renamed into place. Dropping it
/// before [`Staged::commit`] removes the temporary files and the folders it created, so a
/// failure leaves the disk as it was.
#[derive(Default)]
pub struct Staged {
    /// Closed once written: a matrix of thousands of outputs must not hold a descriptor
    /// for each.
    files: Vec<(TempPath, PathBuf, PathBuf)>,
    /// Folders created for the outputs, outermost first.
    created: Vec<PathBuf>,
}

impl Staged {
    /// Writes `contents` to a temporary file beside `real` (the path the output really lies
    /// at); `shown` is the path errors name.
    pub fn add(&mut self, real: &Path, shown: &Path, contents: &[u8]) -> Result<(), PathError> {
        refuse_to_replace(real, shown, false)?;
        self.add_here(real, shown, contents)
    }

    /// [`Staged::add`] for a path the caller named (`--out`): a link there is refused too,
    /// where an output of the matrix that is a link (to a file anywhere) is replaced by a
    /// file of its own. `--out /dev/stdout` would have replaced the system's link.
    pub fn add_named(
        &mut self,
        real: &Path,
        shown: &Path,
        contents: &[u8],
    ) -> Result<(), PathError> {
        refuse_to_replace(real, shown, true)?;
        self.add_here(real, shown, contents)
    }

    fn add_here(&mut self, real: &Path, shown: &Path, contents: &[u8]) -> Result<(), PathError> {
        let dir = folder_of(real);
        self.create_dir(dir)
            .map_err(|error| write_error(shown, real, error))?;
        let file =
            stage(real, dir, contents).map_err(|error| write_error(shown, real, plain(error)))?;
        self.files.push((
            file.into_temp_path(),
            real.to_path_buf(),
            shown.to_path_buf(),
        ));
        Ok(())
    }

    /// Creates `dir` and the folders above it that are missing, remembering them.
    fn create_dir(&mut self, dir: &Path) -> io::Result<()> {
        let missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|p| !p.as_os_str().is_empty() && p.symlink_metadata().is_err())
            .collect();
        for folder in missing.into_iter().rev() {
            std::fs::create_dir(folder)?;
            self.created.push(folder.to_path_buf());
        }
        Ok(())
    }

    /// Whether `path` is one of the temporary files written so far.
    pub fn holds(&self, path: &Path) -> bool {
        self.files
            .iter()
            .any(|(temporary, _, _)| **temporary == *path)
    }

    /// Renames every staged file into place, all or nothing: each file replaced is first
    /// linked (or copied) aside, and when a later rename fails (a file the user may not
    /// replace, a folder where the file belongs), the files already renamed are put back as
    /// they were, and those new are removed. Each rename is atomic on its own, so a reader
    /// sees a file whole, old or new, throughout.
    pub fn commit(mut self) -> Result<(), PathError> {
        // An interrupt waits for the renames and putting back to end, then finds every output
        // old or new, never a set half renamed; once one has begun, nothing is renamed.
        let Some(mut tracked) = crate::scratch::hold_files() else {
            let shown = self.files.first().map(|(_, _, shown)| shown.clone());
            let interrupted = io::Error::from(io::ErrorKind::Interrupted);
            return Err(PathError::io(shown.unwrap_or_default(), interrupted));
        };
        let staged: std::collections::HashSet<PathBuf> = self
            .files
            .iter()
            .map(|(temporary, _, _)| temporary.to_path_buf())
            .collect();
        let mut replaced: Vec<(PathBuf, PathBuf, Kept)> = Vec::new();
        let mut failed = None;
        for (file, real, shown) in std::mem::take(&mut self.files) {
            let kept = keep_aside(&real, folder_of(&real));
            match file.persist(&real) {
                Ok(()) => replaced.push((real, shown, kept)),
                Err(error) => {
                    // The files not renamed are removed as the loop ends.
                    let mut failure = write_error(&shown, &real, plain(error.error));
                    failure.not_put_back = put_back(std::mem::take(&mut replaced));
                    failed = Some(failure);
                    break;
                }
            }
        }
        tracked.retain(|file| !staged.contains(file));
        match failed {
            Some(error) => Err(error),
            None => {
                // Every new file is in place: the old ones kept aside go.
                drop(replaced);
                self.created.clear();
                Ok(())
            }
        }
    }
}

/// Refuses to write at `real` over a device, a FIFO or a socket (and, with `links`, a
/// symbolic link): the rename would replace it with a file, and a device of the system
/// (`--out /dev/null`) would be deleted. A folder there fails the rename, and is told then.
fn refuse_to_replace(real: &Path, shown: &Path, links: bool) -> Result<(), PathError> {
    let Ok(found) = std::fs::symlink_metadata(real) else {
        return Ok(());
    };
    let kind = found.file_type();
    if kind.is_file() || kind.is_dir() || (kind.is_symlink() && !links) {
        return Ok(());
    }
    let what = if kind.is_symlink() {
        "symbolic link"
    } else {
        crate::confine::special_kind(&kind)
    };
    Err(PathError::new(shown, PathProblem::WouldReplace { what }))
}

/// What was at a path before its new file was renamed there.
enum Kept {
    /// Nothing: putting back removes the new file.
    Nothing,
    /// The old file, under a temporary name beside it (removed when dropped).
    Aside(TempPath),
    /// A file that could not be kept (a link, which promptc does not follow to copy; a file
    /// the user may replace but not read or link): putting back leaves the new one.
    Unrestorable,
}

/// The folder a file lies in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The file at `real`, about to be replaced, kept beside it under a temporary name of this
/// process (so that another build leaves it alone, and the next one removes it if this one is
/// killed): a hard link, or a copy where the file system or its owner allows no link.
fn keep_aside(real: &Path, dir: &Path) -> Kept {
    let Ok(meta) = std::fs::symlink_metadata(real) else {
        return Kept::Nothing;
    };
    // A folder where the file belongs: the rename fails, and nothing is replaced.
    if meta.is_dir() {
        return Kept::Nothing;
    }
    let prefix = format!("{TEMP_PREFIX}{}-", crate::scratch::owner());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // A link is linked as itself (not followed), never copied: its target may lie anywhere.
    if let Ok(linked) = builder.make_in(dir, |path| std::fs::hard_link(real, path)) {
        return Kept::Aside(linked.into_temp_path());
    }
    if !meta.is_file() {
        return Kept::Unrestorable;
    }
    let copied = builder.tempfile_in(dir).and_then(|copy| {
        let copy = copy.into_temp_path();
        std::fs::copy(real, &copy).map(|_| copy)
    });
    copied.map_or(Kept::Unrestorable, Kept::Aside)
}

/// Undoes the renames of a failed commit, the last first: each file replaced gets its old
/// contents back, each file that was new is removed. Returns the files whose old contents
/// could not be renamed back (as shown, and where those contents are left): beside the file
/// under a name no build removes (`<name>.promptc-previous`), or under the temporary name
/// when even that fails.
fn put_back(replaced: Vec<(PathBuf, PathBuf, Kept)>) -> Vec<(PathBuf, PathBuf)> {
    let mut not_put_back = Vec::new();
    for (real, shown, kept) in replaced.into_iter().rev() {
        match kept {
            Kept::Aside(kept) => {
                let Err(error) = kept.persist(&real) else {
                    continue;
                };
                let left = set_apart(error.path, &real);
                let left_shown = match (left.file_name(), shown.parent()) {
                    (Some(name), Some(folder)) => folder.join(name),
                    _ => left.clone(),
                };
                not_put_back.push((shown, left_shown));
            }
            Kept::Nothing => {
                let _ = std::fs::remove_file(&real);
            }
            Kept::Unrestorable => {}
        }
    }
    not_put_back
}

/// The suffix of a file's previous contents that a failed write could not put back.
pub const PREVIOUS_SUFFIX: &str = ".promptc-previous";

/// Moves a file's previous contents, kept aside under a temporary name, to a name beside it
/// that no build removes (the first of `<name>.promptc-previous`, `…-2`, … not taken); where
/// even that fails, they stay under the temporary name. Returns where they are.
fn set_apart(kept: TempPath, real: &Path) -> PathBuf {
    let mut kept = kept;
    for attempt in 1..=9 {
        let mut name = real.file_name().unwrap_or_default().to_os_string();
        name.push(PREVIOUS_SUFFIX);
        if attempt > 1 {
            name.push(format!("-{attempt}"));
        }
        let target = real.with_file_name(name);
        match kept.persist_noclobber(&target) {
            Ok(()) => return target,
            Err(error) => kept = error.path,
        }
    }
    match kept.keep() {
        Ok(path) => path,
        Err(error) => {
            let path = error.path.to_path_buf();
            // Left where it is rather than deleted with its handle.
            std::mem::forget(error.path);
            path
        }
    }
}

/// The error of a write to `real` (shown to the user as `shown`), in promptc's words where the
/// system's name no fix: a folder where the file belongs, a file or a link to nothing where a
/// folder on the way belongs (looked for along `real`, named as `shown` names it).
fn write_error(shown: &Path, real: &Path, error: io::Error) -> PathError {
    let on_the_way = |found: fn(&Path) -> bool| {
        let (steps, _) = real
            .ancestors()
            .enumerate()
            .skip(1)
            .find(|(_, above)| !above.as_os_str().is_empty() && found(above))?;
        shown
            .ancestors()
            .nth(steps)
            .filter(|above| !above.as_os_str().is_empty())
            .map(Path::to_path_buf)
    };
    let is_file = |path: &Path| path.symlink_metadata().is_ok_and(|meta| meta.is_file());
    let found = match error.kind() {
        io::ErrorKind::IsADirectory => Some((shown.to_path_buf(), PathProblem::IsFolder)),
        io::ErrorKind::NotADirectory => {
            on_the_way(is_file).map(|file| (file, PathProblem::NotAFolder))
        }
        io::ErrorKind::NotFound => on_the_way(crate::confine::is_dangling_link)
            .map(|link| (link, PathProblem::DanglingLink)),
        _ => None,
    };
    match found {
        Some((path, problem)) => PathError::new(path, problem),
        None => PathError::io(shown, error),
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        // The temporary files remove themselves; then the folders made for them, innermost
        // first (only when empty: `remove_dir` never removes content).
        let files = std::mem::take(&mut self.files);
        let paths: Vec<PathBuf> = files
            .iter()
            .map(|(file, _, _)| file.to_path_buf())
            .collect();
        drop(files);
        crate::scratch::forget_files(paths.iter().map(PathBuf::as_path));
        for folder in self.created.iter().rev() {
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// An error without the temporary file's name that `tempfile` adds: the path the user knows
/// is named by the caller.
fn plain(error: io::Error) -> io::Error {
    if let Some(raw) = error.raw_os_error() {
        return io::Error::from_raw_os_error(raw);
    }
    // `tempfile` wraps the system's error in one of its own that adds ` at path "…"` to the
    // system's words, and keeps neither as a source: its words are cut there.
    let text = error.to_string();
    match text.find(" at path ") {
        Some(cut) => io::Error::new(error.kind(), &text[..cut]),
        None => error,
    }
}

fn stage(path: &Path, dir: &Path, contents: &[u8]) -> io::Result<NamedTempFile> {
    // Named by the process that writes it, so that another build running meanwhile in the
    // same folder leaves it alone (see [`is_left_behind`]).
    let mut file = crate::scratch::make_file(
        || {
            tempfile::Builder::new()
                .prefix(&format!("{TEMP_PREFIX}{}-", crate::scratch::owner()))
                .tempfile_in(dir)
        },
        NamedTempFile::path,
    )?;
    // A temporary file is private (0600); the output keeps the permissions of the file it
    // replaces, or gets the usual 0644.
    if let Some(permissions) = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions())
        .or_else(default_permissions)
    {
        file.as_file().set_permissions(permissions)?;
    }
    file.write_all(contents)?;
    file.as_file().sync_all()?;
    Ok(file)
}

#[cfg(unix)]
fn default_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions() -> Option<std::fs::Permissions> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/a.md");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let entries = std::fs::read_dir(dir.path().join("out")).unwrap().count();
        assert_eq!(entries, 1);
    }

    #[test]
    fn a_staged_set_dropped_before_commit_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("a.md");
        std::fs::write(&kept, "old").unwrap();
        let mut staged = Staged::default();
        staged.add(&kept, &kept, b"new").unwrap();
        staged
            .add(&dir.path().join("x/y/b.md"), Path::new("b.md"), b"new")
            .unwrap();
        assert!(dir.path().join("x/y").is_dir());
        drop(staged);
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "old");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("a.md")]);
    }

    /// Old contents that cannot be renamed back (a folder took the file's place meanwhile)
    /// are moved to a name beside it that no build removes, and said where they are.
    #[test]
    fn old_contents_that_cannot_be_put_back_are_set_apart_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("out.md");
        std::fs::create_dir_all(real.join("inside")).unwrap();
        let taken = dir.path().join("out.md.promptc-previous");
        std::fs::write(&taken, "someone's").unwrap();
        let kept = tempfile::Builder::new()
            .prefix(&format!("{TEMP_PREFIX}{}-", crate::scratch::owner()))
            .tempfile_in(dir.path())
            .unwrap();
        std::fs::write(kept.path(), "old").unwrap();
        let shown = Path::new("prompts/out.md");
        let left = put_back(vec![(
            real.clone(),
            shown.to_path_buf(),
            Kept::Aside(kept.into_temp_path()),
        )]);
        assert_eq!(
            left,
            vec![(
                shown.to_path_buf(),
                PathBuf::from("prompts/out.md.promptc-previous-2")
            )]
        );
        let set_apart = dir.path().join("out.md.promptc-previous-2");
        assert_eq!(std::fs::read_to_string(set_apart).unwrap(), "old");
        assert_eq!(std::fs::read_to_string(taken).unwrap(), "someone's");
        assert!(!is_temporary(std::ffi::OsStr::new(
            "out.md.promptc-previous-2"
        )));
        let error = PathError {
            not_put_back: left,
            ..PathError::io("prompts/b.md", io::Error::other("the disk failed"))
        };
        assert_eq!(
            error.to_string(),
            "prompts/b.md: the disk failed; prompts/out.md was replaced before and could not be put back: its previous contents are in prompts/out.md.promptc-previous-2"
        );
        assert!(
            error.help().ends_with(
                "; then move prompts/out.md.promptc-previous-2 to prompts/out.md by hand, before building again"
            ),
            "{}",
            error.help()
        );
    }

    #[test]
    fn a_rename_that_fails_puts_back_the_files_renamed_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let replaced = dir.path().join("a/out.md");
        std::fs::create_dir_all(replaced.parent().unwrap()).unwrap();
        std::fs::write(&replaced, "old").unwrap();
        let new = dir.path().join("b/out.md");
        // A folder with a file in it where the third output belongs: its temporary file is
        // written, but the rename over the folder fails, after the first two were renamed.
        let blocked = dir.path().join("c/out.md");
        std::fs::create_dir_all(blocked.join("inside")).unwrap();
        let mut staged = Staged::default();
        staged.add(&replaced, &replaced, b"new").unwrap();
        staged.add(&new, &new, b"new").unwrap();
        staged.add(&blocked, Path::new("c/out.md"), b"new").unwrap();
        let error = staged.commit().unwrap_err();
        assert_eq!(error.path, Path::new("c/out.md"));
        assert_eq!(std::fs::read_to_string(&replaced).unwrap(), "old");
        assert!(!new.exists());
        // The folder made for the new file is gone, and no temporary file is left anywhere.
        assert!(!dir.path().join("b").exists());
        let names = |folder: &str| -> Vec<_> {
            std::fs::read_dir(dir.path().join(folder))
                .unwrap()
                .map(|entry| entry.unwrap().file_name())
                .collect()
        };
        assert_eq!(names("a"), ["out.md"]);
        assert_eq!(names("c"), ["out.md"]);
    }

    #[test]
    fn a_file_about_to_be_replaced_is_kept_aside_under_a_temporary_name_of_this_process() {
        // Named so that a build running beside this one leaves it alone, and the next build
        // removes it if this process is killed before it is put back or removed.
        let dir = tempfile::tempdir().unwrap();
        let replaced = dir.path().join("out.md");
        std::fs::write(&replaced, "old").unwrap();
        let Kept::Aside(kept) = keep_aside(&replaced, dir.path()) else {
            panic!("the file is kept aside");
        };
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "old");
        assert!(
            kept.file_name()
                .is_some_and(|name| is_temporary(name) && !is_left_behind(name, None))
        );
        assert!(matches!(
            keep_aside(&dir.path().join("missing.md"), dir.path()),
            Kept::Nothing
        ));
    }

    // A link where an output goes is kept as the link itself, never followed: the file it
    // leads to, wherever it lies, is neither read nor changed, and a failed commit puts the
    // link back.
    #[cfg(unix)]
    #[test]
    fn a_link_replaced_is_put_back_as_a_link_and_its_target_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere.md");
        std::fs::write(&elsewhere, "theirs").unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let linked = out.join("a.md");
        std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
        let blocked = out.join("b.md");
        std::fs::create_dir_all(blocked.join("inside")).unwrap();
        let mut staged = Staged::default();
        staged.add(&linked, &linked, b"new").unwrap();
        staged.add(&blocked, &blocked, b"new").unwrap();
        assert!(staged.commit().is_err());
        assert!(linked.symlink_metadata().unwrap().is_symlink());
        assert_eq!(std::fs::read_link(&linked).unwrap(), elsewhere);
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "theirs");
    }

    // A device, a FIFO or (at a path the caller named) a link is not replaced by a file:
    // `--out /dev/null` deleted the system's device. Each is left as it was.
    #[cfg(unix)]
    #[test]
    fn special_files_and_named_links_are_refused_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let target = dir.path().join("target.md");
        std::fs::write(&target, "theirs").unwrap();
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let device = Path::new("/dev/null");
        for (path, named, what) in [
            (fifo.as_path(), false, "named pipe (FIFO)"),
            (fifo.as_path(), true, "named pipe (FIFO)"),
            (device, true, "device"),
            (link.as_path(), true, "symbolic link"),
        ] {
            let mut staged = Staged::default();
            let added = if named {
                staged.add_named(path, path, b"new")
            } else {
                staged.add(path, path, b"new")
            };
            let error = added.unwrap_err();
            assert!(
                matches!(error.problem, PathProblem::WouldReplace { what: found } if found == what),
                "{}: {error:?}",
                path.display()
            );
        }
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(
            &fifo.symlink_metadata().unwrap().file_type()
        ));
        assert!(link.symlink_metadata().unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
        // An output of the matrix that is a link is replaced by a file of its own.
        let mut staged = Staged::default();
        staged.add(&link, &link, b"new").unwrap();
        staged.commit().unwrap();
        assert!(link.symlink_metadata().unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
    }

    #[test]
    fn a_write_that_fails_midway_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("a/out.md");
        std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
        std::fs::write(&kept, "old").unwrap();
        // A file where the second output's folder belongs: creating it fails.
        std::fs::write(dir.path().join("b"), "in the way").unwrap();
        let mut staged = Staged::default();
        staged.add(&kept, &kept, b"new").unwrap();
        let error = staged
            .add(&dir.path().join("b/out.md"), Path::new("b/out.md"), b"new")
            .unwrap_err();
        // The file in the way is named, as the caller shows paths (not the real one), though
        // the current folder is not the one the paths are relative to.
        assert_eq!(error.path, Path::new("b"));
        assert!(matches!(error.problem, PathProblem::NotAFolder));
        drop(staged);
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "old");
        assert_eq!(
            std::fs::read_dir(kept.parent().unwrap()).unwrap().count(),
            1
        );
    }

    // A write that fails names the output, not the temporary file `tempfile` made beside it
    // ("… at path \"/…/.promptc-tmp-EWOcA4\""), and reads as the system's error.
    #[test]
    fn a_failed_write_says_the_system_s_error_without_the_temporary_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone");
        let error = stage(&missing.join("out.md"), &missing, b"text").unwrap_err();
        assert!(error.to_string().contains("at path"), "{error}");
        let plain = plain(error);
        assert_eq!(plain.kind(), io::ErrorKind::NotFound);
        assert!(!plain.to_string().contains("gone"), "{plain}");
        let shown = PathError::io("examples/prompts/generic/basic.md", plain).to_string();
        assert!(
            shown.starts_with("examples/prompts/generic/basic.md: ") && !shown.contains("tmp"),
            "{shown}"
        );
    }

    /// A temporary file is another build's while its process may run: this one's, or one of
    /// another pid namespace (a container sharing the workspace) or of a system that cannot
    /// be asked, until it is older than any build takes. One whose process has ended, or
    /// whose name names none, is left behind.
    #[test]
    fn a_temporary_file_is_left_behind_once_its_process_is_known_to_be_gone() {
        let hour_ago = std::time::SystemTime::now() - UNTOLD_AFTER;
        let two_hours_ago = hour_ago - UNTOLD_AFTER;
        let ours = crate::scratch::owner();
        let this = format!("{TEMP_PREFIX}{ours}-x1");
        assert!(!is_left_behind(OsStr::new(&this), Some(two_hours_ago)));
        // The same namespace (where there is one), a process id no process has.
        let ended = match ours.split_once('.') {
            Some((namespace, _)) => format!("{namespace}.{}", u32::MAX),
            None => u32::MAX.to_string(),
        };
        let ended = format!("{TEMP_PREFIX}{ended}-x1");
        if cfg!(unix) {
            assert!(is_left_behind(OsStr::new(&ended), None));
        }
        // Namespace 1 is no process's own: the kernel numbers them from 4026531836.
        let elsewhere = OsStr::new(".promptc-tmp-1.42-x1");
        assert!(!is_left_behind(elsewhere, None));
        assert!(!is_left_behind(
            elsewhere,
            Some(std::time::SystemTime::now())
        ));
        assert!(is_left_behind(elsewhere, Some(two_hours_ago)));
        assert!(is_left_behind(OsStr::new(".promptc-tmp-Ab12Cd"), None));
        assert!(is_left_behind(OsStr::new(".tmpAb12Cd"), None));
    }

    #[test]
    fn temporary_files_are_recognisable() {
        assert!(is_temporary(OsStr::new(".promptc-tmp-a1B2c3")));
        assert!(is_temporary(OsStr::new(".tmpAb12Cd")));
        assert!(!is_temporary(OsStr::new(".tmpfile.md")));
        assert!(!is_temporary(OsStr::new("basic.md")));
    }

    #[cfg(unix)]
    #[test]
    fn outputs_are_readable_and_keep_the_mode_they_had() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        write_atomic(&path, b"one").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o644);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(mode(&path), 0o664);
    }
}
