//! Reading files into [`Sources`], with the problems every reader shares (not UTF-8, empty,
//! outside the workspace) reported the same way.

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::confine::{self, Origin};
use crate::diagnostic::Diagnostic;
use crate::model::limits::ReadLimit;
use crate::path_error::{PathError, PathProblem};
use crate::problem::Problem;
use crate::source::{SourceId, Sources};
use crate::span::Span;

/// Reads a file and records it. Invalid UTF-8 is still recorded (lossily) so the diagnostic
/// can name the file, then reported. Workspace files are read only from inside the workspace
/// ([`crate::confine`]). A refused file is reported at `named_at`, the value of the field
/// that names it, when there is one: that field is what the user must change. A file found
/// by walking a folder has no such field, so it is recorded empty and the diagnostic names it.
pub fn read_source(
    sources: &mut Sources,
    root: &Path,
    path: &Path,
    origin: Origin,
    (limit, total): (ReadLimit, ReadLimit),
    named_at: Option<Span>,
) -> io::Result<Result<SourceId, Diagnostic>> {
    let read = match confine::origin_of(root, path, origin) {
        // A path the caller named relative to the current folder, which lies in the
        // workspace: checked as the workspace's own files are, from the root down (a link to
        // nothing on the way is one, not a failed read).
        Origin::Workspace => {
            let absolute = path
                .is_relative()
                .then(|| std::path::absolute(path).ok())
                .flatten();
            confine::read_content_resolved(root, absolute.as_deref().unwrap_or(path), limit.bytes)
        }
        Origin::Caller => confine::read_named(path, limit.bytes).map(|bytes| (bytes, None)),
    };
    let display = display_path(root, path);
    let (bytes, real) = match read {
        Ok(read) => read,
        Err(mut error) => {
            if let PathProblem::TooLarge { setting, .. } = &mut error.problem {
                *setting = Some(limit.setting);
            }
            return refused_at(sources, display, error, named_at);
        }
    };
    if sources.total_bytes().saturating_add(bytes.len() as u64) > total.bytes {
        let problem = PathProblem::WorkspaceTooLarge {
            limit: total.bytes,
            setting: total.setting,
        };
        let error = PathError::new(&display, problem);
        return refused_at(sources, display, error, named_at);
    }
    let added = add_bytes(sources, display, bytes);
    if let (Some(real), Ok(id)) = (real, &added) {
        sources.set_real(*id, real);
    }
    Ok(added)
}

/// A file's bytes as the text its source holds: UTF-8, without a byte-order mark, which is
/// an encoding artefact, not text (it must not reach a prompt or shift a column).
pub fn source_text(bytes: Vec<u8>) -> Result<String, std::string::FromUtf8Error> {
    let text = String::from_utf8(bytes)?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Records a file's bytes under its display path, as [`read_source`] does once it has read
/// them; apart so that a document can be checked without a disk (fuzzing, the library API).
pub fn add_bytes(
    sources: &mut Sources,
    display: PathBuf,
    bytes: Vec<u8>,
) -> Result<SourceId, Diagnostic> {
    match source_text(bytes) {
        Ok(text) => Ok(sources.add(display, text)),
        Err(error) => {
            let valid_up_to = error.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(error.as_bytes()).into_owned();
            let id = sources.add(display, text);
            Err(Diagnostic::new(
                Problem::NotUtf8,
                Span::new(id, valid_up_to..valid_up_to),
            ))
        }
    }
}

/// A refused file as a diagnostic at its start; a failing read stays an I/O error, with the
/// path in its message.
pub fn refused(
    sources: &mut Sources,
    display: PathBuf,
    error: PathError,
) -> io::Result<Result<SourceId, Diagnostic>> {
    refused_at(sources, display, error, None)
}

/// [`refused`], at `named_at` when a field names the file. Nothing is recorded for the file
/// then: a second field naming it is read, and reported at its own place, again.
fn refused_at(
    sources: &mut Sources,
    display: PathBuf,
    error: PathError,
    named_at: Option<Span>,
) -> io::Result<Result<SourceId, Diagnostic>> {
    if let PathProblem::Io(io_error) = error.problem {
        return Err(io::Error::new(
            io_error.kind(),
            format!("{}: {io_error}", display.display()),
        ));
    }
    let help = error.help();
    let problem = Problem::PathRefused {
        path: display.display().to_string(),
        reason: error.problem.to_string(),
        help,
    };
    let at = match named_at {
        Some(at) => at,
        None => Span::file_start(sources.add(display, String::new())),
    };
    Ok(Err(Diagnostic::new(problem, at)))
}

/// The path shown to users: relative to the workspace root when inside it.
pub fn display_path(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The folder a `paths` setting names, to read files of one kind from: `None` when it leaves
/// the workspace, or is the workspace's root itself (where promptc.toml and every other
/// folder lie), both refused at the setting by validation.
pub fn data_folder(root: &Path, setting: &str) -> Option<PathBuf> {
    resolve_inside(root, root, setting).filter(|dir| {
        // A link on the way to it (`here` -> `.`) may name the root as well; a path of plain
        // names below the root does not, and is not resolved again.
        dir != root
            && (confine::is_plainly_inside(root, dir)
                || std::fs::canonicalize(dir).ok() != std::fs::canonicalize(root).ok())
    })
}

/// An absolute `path` that names a place inside the workspace rooted at `root` (a canonical
/// path), written relative to `base_dir` (a folder of the workspace): what to write instead.
/// `None` for a relative path, or one outside the workspace.
pub fn relative_form(root: &Path, base_dir: &Path, path: &str) -> Option<String> {
    let absolute = Path::new(path);
    if !absolute.is_absolute() || path.contains('\0') {
        return None;
    }
    let lexical = confine::normalized(absolute);
    // The root as given or as written with its links (`/tmp` a link on some systems).
    let below = lexical
        .strip_prefix(root)
        .ok()
        .map(Path::to_path_buf)
        .or_else(|| {
            let real = lexical.parent()?.canonicalize().ok()?;
            Some(
                real.join(lexical.file_name()?)
                    .strip_prefix(root)
                    .ok()?
                    .to_path_buf(),
            )
        })?;
    let base = base_dir.strip_prefix(root).ok()?;
    let ups = base.components().count();
    let mut relative = PathBuf::new();
    let shared = base
        .components()
        .zip(below.components())
        .take_while(|(a, b)| a == b)
        .count();
    for _ in shared..ups {
        relative.push("..");
    }
    relative.extend(below.components().skip(shared));
    let relative = relative.to_str()?.replace('\\', "/");
    (!relative.is_empty()).then_some(relative)
}

/// Joins `relative` to `base_dir` and checks, lexically and then on disk, that the result
/// stays inside `root`. Returns `None` when it leaves the workspace.
pub fn resolve_inside(root: &Path, base_dir: &Path, relative: &str) -> Option<PathBuf> {
    // No file has a NUL in its path: such a setting is reported where it is written.
    if relative.contains('\0') {
        return None;
    }
    let relative = Path::new(relative);
    if relative.is_absolute() {
        return None;
    }
    let mut joined = PathBuf::new();
    for part in base_dir.join(relative).components() {
        match part {
            Component::ParentDir => {
                if !joined.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => joined.push(other),
        }
    }
    if !joined.starts_with(root) {
        return None;
    }
    // A symlink inside the workspace may still point outside it; a path with none on the
    // way is inside as it stands.
    if confine::is_plainly_inside(root, &joined) {
        return Some(joined);
    }
    if let (Ok(real), Ok(real_root)) = (joined.canonicalize(), root.canonicalize())
        && !real.starts_with(real_root)
    {
        return None;
    }
    Some(joined)
}

/// Most entries a folder may have for [`folder_near`] to look through it: one of many
/// thousands is not listed whole for a suggestion.
pub const ENTRIES_LOOKED_AT: usize = 1_000;

/// A folder beside where `path` was looked for (inside the workspace) whose name is near its
/// last name: `component` for `components`.
pub fn folder_near(root: &std::path::Path, path: &str) -> Option<String> {
    let path = std::path::Path::new(path);
    let name = path.file_name()?.to_str()?;
    let parent = path.parent().unwrap_or(std::path::Path::new(""));
    let parent_text = parent.to_str()?;
    let beside = if parent_text.is_empty() {
        root.to_path_buf()
    } else {
        crate::load::read::resolve_inside(root, root, parent_text)?
    };
    crate::looked_at::listing(&beside);
    let entries: Vec<std::fs::DirEntry> = std::fs::read_dir(&beside)
        .ok()?
        .take(ENTRIES_LOOKED_AT + 1)
        .flatten()
        .collect();
    if entries.len() > ENTRIES_LOOKED_AT {
        return None;
    }
    // Sorted: the nearest of two as near is the same whatever order the folder lists them in.
    let mut folders: Vec<String> = entries
        .into_iter()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    folders.sort_unstable();
    let near = crate::namespace::closest(name, &folders)?;
    Some(parent.join(near).to_string_lossy().replace('\\', "/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An absolute path into the workspace is told as the relative path to write instead.
    #[test]
    fn an_absolute_path_inside_is_given_its_relative_form() {
        let root = Path::new("/ws");
        let variants = Path::new("/ws/variants");
        for (base, path, relative) in [
            (
                variants,
                "/ws/variants/claude/rules.md",
                Some("claude/rules.md"),
            ),
            (variants, "/ws/components/a.md", Some("../components/a.md")),
            (root, "/ws/components", Some("components")),
            (root, "/ws/./x/../components/", Some("components")),
            (Path::new("/ws/a/b"), "/ws/c", Some("../../c")),
            (variants, "/elsewhere/x.md", None),
            (variants, "/ws", Some("..")),
            (root, "/ws", None),
            (variants, "claude/rules.md", None),
        ] {
            assert_eq!(
                relative_form(root, base, path).as_deref(),
                relative,
                "{path} from {}",
                base.display()
            );
        }
    }

    #[test]
    fn paths_that_climb_out_are_refused() {
        let root = Path::new("/ws");
        let base = Path::new("/ws/components");
        assert_eq!(
            resolve_inside(root, base, "rules.md"),
            Some(PathBuf::from("/ws/components/rules.md"))
        );
        assert_eq!(
            resolve_inside(root, base, "../shared/x.md"),
            Some(PathBuf::from("/ws/shared/x.md"))
        );
        assert_eq!(resolve_inside(root, base, "../../etc/passwd"), None);
        assert_eq!(resolve_inside(root, base, "/etc/passwd"), None);
    }
}
