//! Stage 1: find the workspace, read its data files and parse them, keeping source positions.

pub mod context_extra;
pub mod contexts;
pub mod document;
pub mod entry;
pub mod invalid_ids;
mod json_places;
pub mod mcp_places;
pub mod mcp_settings;
mod prefetch;
pub mod read;
pub mod rules;
pub mod schema_check;
pub mod specs;
mod toml_document;
#[cfg(feature = "cli")]
pub(crate) use toml_document::MAX_KEY_PARTS;
mod yaml_document;

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::confine::{self, Origin};
use crate::diagnostic::Diagnostics;
use crate::model::Limits;
use crate::path_error::{PathError, PathProblem};
use crate::problem::{Kind, NotRead};
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

/// Walks up from `start` to the first folder holding `promptc.toml`, whatever it is: one that
/// is a folder, a link to nothing or a pipe is that workspace's manifest, which its load
/// refuses and says why. Walking on past it found the manifest of a folder above, outside
/// the workspace, and said only that there was none.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| has_manifest(dir))
        .map(Path::to_path_buf)
}

/// Whether `dir` holds a `promptc.toml` of any kind (see [`find_root`]): loading it then
/// reports one that is not a regular file where it lies, rather than no workspace at all.
pub fn has_manifest(dir: &Path) -> bool {
    crate::looked_at::name(&dir.join(MANIFEST_FILE));
    dir.join(MANIFEST_FILE).symlink_metadata().is_ok()
}

/// The format a data file of `kind` at `path` is read in, if it is one: JSON is accepted for
/// contexts only (machines write them); other kinds are TOML or YAML.
pub fn data_format(path: &Path, kind: Kind) -> Option<Format> {
    Format::of(path).filter(|format| *format != Format::Json || kind == Kind::Context)
}

/// Reads and parses one data file, refused once it holds more than `room` values (see
/// [`Document::parse_within`]). Problems with its content become diagnostics; only failing
/// I/O is an `Err`.
#[allow(clippy::too_many_arguments)]
pub fn load_file(
    sources: &mut Sources,
    diagnostics: &mut Diagnostics,
    root: &Path,
    path: &Path,
    kind: Kind,
    origin: Origin,
    limits: &Limits,
    room: usize,
) -> io::Result<Option<RawFile>> {
    let Some(format) = data_format(path, kind) else {
        return Ok(None);
    };
    let id = match read::read_source(
        sources,
        root,
        path,
        origin,
        (limits.file(), limits.workspace()),
        None,
    )? {
        Ok(id) => id,
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return Ok(None);
        }
    };
    match Document::parse_within(id, sources.get(id), format, room) {
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

/// Data files found under a folder, and the links among them that promptc will not follow.
#[derive(Debug, Default)]
pub struct DataFiles {
    /// Sorted by path, so that the result never depends on the order the file system lists
    /// them in.
    pub files: Vec<PathBuf>,
    /// Links that lead out of the workspace, or to nothing: reported, never silently skipped.
    pub refused: Vec<PathError>,
    /// Paths named like data files that are not read as them (display paths, the first
    /// [`MAX_NOT_READ_NAMED`] in name order, then how many more under the folder): warned of,
    /// not skipped without a word.
    pub not_read: Vec<(PathBuf, NotRead)>,
}

/// The most paths of one folder's walk that [`DataFiles::not_read`] names one by one.
pub const MAX_NOT_READ_NAMED: usize = 20;

/// Every data file (`.toml`, `.yaml`, `.yml`) under `dir`, a folder inside the workspace
/// `root` (canonical). A link to a file or folder inside the workspace is followed (each
/// folder is walked once, so link cycles end); a link that leaves it is refused. A missing
/// folder is empty.
pub fn data_files(root: &Path, dir: &Path, kind: Kind) -> io::Result<DataFiles> {
    // JSON is for contexts only (machines write them).
    let wanted = |path: &Path| match Format::of(path) {
        Some(Format::Toml | Format::Yaml) => true,
        Some(Format::Json) => kind == Kind::Context,
        None => false,
    };
    files_under(root, dir, wanted, true)
}

/// How many levels of folders below a workspace folder (variants, components, tools,
/// contexts, partials) are read, links to folders included. A folder deeper than that is
/// refused, not read: a checkout nested thousands deep would otherwise end the load with a
/// name too long for the system.
pub const MAX_FOLDER_DEPTH: usize = 32;

/// The extensions of the files of the partials folder: template text, not data.
pub const PARTIAL_EXTENSIONS: [&str; 4] = ["md", "txt", "j2", "jinja"];

/// Every template file (see [`PARTIAL_EXTENSIONS`]) under `dir`, the partials folder, found
/// and refused as [`data_files`] finds data files.
pub fn partial_files(root: &Path, dir: &Path) -> io::Result<DataFiles> {
    files_under(
        root,
        dir,
        |path| {
            path.extension()
                .and_then(|extension| extension.to_str())
                .is_some_and(|extension| PARTIAL_EXTENSIONS.contains(&extension))
        },
        false,
    )
}

/// The files under `dir` that `wanted` picks by name, links followed or refused; with
/// `tell_not_read`, the folders it would pick and the JSON files it does not are told of.
fn files_under(
    root: &Path,
    dir: &Path,
    wanted: impl Fn(&Path) -> bool,
    tell_not_read: bool,
) -> io::Result<DataFiles> {
    let mut found = DataFiles::default();
    let mut not_read: Vec<(PathBuf, NotRead)> = Vec::new();
    let mut not_read_unnamed = 0;
    // Each file with its real path and whether it is a link: known from the walk itself (a
    // regular file in a real folder is its own real path), so that finding which paths reach
    // the same file asks the file system nothing more.
    let mut candidates: Vec<(PathBuf, PathBuf, bool)> = Vec::new();
    let mut walked = BTreeSet::new();
    // Each folder to walk with how deep it lies below `dir`, links followed included.
    let mut folders = vec![(dir.to_path_buf(), 0)];
    let mut refusals = Refusals::default();
    let refuse = |refusals: &mut Refusals, path: &Path, problem| {
        refusals.push(PathError::new(read::display_path(root, path), problem));
    };
    // The folder nested too deep that was told of last: only its first entry tells of it.
    let mut too_deep_told: Option<PathBuf> = None;
    // The folder listed, and the root, as links resolve them.
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let top = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    while let Some((folder, depth)) = folders.pop() {
        crate::looked_at::path(&folder);
        let Ok(real) = folder.canonicalize() else {
            // A missing folder is empty; one that is a link to nothing (or lies behind one) is
            // refused, as a file would be: it was read as empty, and its files went missing
            // without a word.
            if depth == 0 {
                match confine::real_path_inside(root, &folder) {
                    Err(PathProblem::Io(error)) if error.kind() == io::ErrorKind::NotFound => {}
                    Err(problem) => refuse(&mut refusals, &folder, problem),
                    Ok(_) => {}
                }
            }
            continue;
        };
        // The folder itself is marked walked here, not by the walk's filter below: a folder
        // reached through a link is the walk's root, a link to walkdir, not a folder, and a
        // chain of folders each holding two links to the next was walked once per path to
        // it, 2^n times.
        if !real.is_dir() || !walked.insert(real.clone()) {
            continue;
        }
        let walk = WalkDir::new(&folder)
            .sort_by_file_name()
            // The entries of the deepest folders read, and one level past them: a folder
            // there is told of.
            .max_depth(MAX_FOLDER_DEPTH + 2 - depth)
            .into_iter()
            .filter_entry(|entry| {
                // The repository's own files are not workspace content.
                if confine::is_git_folder(entry.file_name()) {
                    return false;
                }
                // Every real folder is walked once, whatever links lead to it: links to the
                // folders of a long chain made it walked again from each.
                if entry.depth() > 0 && entry.file_type().is_dir() {
                    let below = entry.path().strip_prefix(&folder).unwrap_or(Path::new(""));
                    return walked.insert(real.join(below));
                }
                true
            });
        for entry in walk {
            let entry = match entry {
                Ok(entry) => entry,
                // A folder that cannot be listed (a name past the system's limit, no
                // permission): its files would be missing without a word.
                Err(error) => {
                    let path = error.path().unwrap_or(&folder).to_path_buf();
                    let error = error
                        .into_io_error()
                        .unwrap_or_else(|| io::Error::other("a loop of folders"));
                    refuse(
                        &mut refusals,
                        &path,
                        PathProblem::FolderUnreadable { error },
                    );
                    continue;
                }
            };
            let path = entry.path();
            if depth + entry.depth() > MAX_FOLDER_DEPTH + 1 {
                // Its parent is a folder nested deeper than is read: only its first entry
                // tells of it.
                let parent = path.parent().unwrap_or(path);
                if too_deep_told.as_deref() != Some(parent) {
                    too_deep_told = Some(parent.to_path_buf());
                    let limit = MAX_FOLDER_DEPTH;
                    refuse(&mut refusals, parent, PathProblem::TooDeep { limit });
                }
                continue;
            }
            let is_data = wanted(path);
            let kind = entry.file_type();
            // What a path named like a data file, or a JSON file, is not read as: told of a
            // link as of what it leads to.
            let mut tell = |is_dir: bool, is_file: bool| {
                let why = if is_dir && is_data {
                    Some(NotRead::Folder)
                } else if is_file && !is_data && Format::of(path) == Some(Format::Json) {
                    Some(NotRead::Json)
                } else if is_file && Format::of_another_case(path) {
                    Some(NotRead::Case)
                } else {
                    None
                };
                if let Some(why) = why.filter(|_| tell_not_read && entry.depth() > 0) {
                    not_read.push((read::display_path(root, path), why));
                    // Kept bounded while the walk goes on, as the refusals are.
                    if not_read.len() >= 2 * MAX_NOT_READ_NAMED {
                        not_read.sort();
                        not_read_unnamed += not_read.len() - MAX_NOT_READ_NAMED;
                        not_read.truncate(MAX_NOT_READ_NAMED);
                    }
                }
            };
            if !kind.is_symlink() {
                tell(kind.is_dir(), kind.is_file());
            }
            // A name that is not UTF-8 cannot become an id or a template's name: refused by
            // its name, rather than read under a name with a replacement mark that names
            // another file (its template beside it, said to be missing).
            if is_data && entry.file_name().to_str().is_none() {
                refuse(&mut refusals, path, PathProblem::NameNotUtf8);
                continue;
            }
            if kind.is_file() && is_data {
                let below = path.strip_prefix(&folder).unwrap_or(path);
                // Below a linked folder, a file is reached through a link.
                candidates.push((path.to_path_buf(), real.join(below), depth > 0));
            } else if is_data && !kind.is_dir() && !kind.is_symlink() {
                // A FIFO or device named like a data file: reading it would block or never end.
                let problem = match std::fs::metadata(path) {
                    Ok(metadata) => confine::not_regular(&metadata),
                    Err(error) => PathProblem::Io(error),
                };
                refuse(&mut refusals, path, problem);
            } else if kind.is_symlink() && entry.depth() > 0 {
                match confine::real_path_inside(root, path) {
                    // A link to a folder above the one walked from would walk the
                    // workspace's other files as files of this kind (a link to that folder
                    // itself is walked once, and reads nothing more).
                    Ok(target) if target.is_dir() && top.starts_with(&target) && target != top => {
                        let target = target.strip_prefix(&real_root).unwrap_or(&target);
                        let target = target.to_path_buf();
                        refuse(
                            &mut refusals,
                            path,
                            PathProblem::LinkToHoldingFolder { target },
                        );
                    }
                    Ok(target) if target.is_dir() => {
                        tell(true, false);
                        folders.push((path.to_path_buf(), depth + entry.depth()));
                    }
                    Ok(target) if target.is_file() && is_data => {
                        candidates.push((path.to_path_buf(), target, true));
                    }
                    Ok(target) => tell(false, target.is_file()),
                    Err(problem) => refuse(&mut refusals, path, problem),
                }
            }
        }
    }
    // A path found twice (a folder walked from two places) counts once.
    candidates.sort();
    candidates.dedup_by(|a, b| a.0 == b.0);
    // One file reached by several paths is read once: links must not multiply what a load
    // reads. The file itself keeps it, or else the first link in sorted order.
    candidates.sort_by_key(|(_, _, is_link)| *is_link);
    let mut seen: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut files = Vec::with_capacity(candidates.len());
    for (path, real, _) in candidates {
        match seen.get(&real) {
            Some(first) => refusals.push(PathError::new(
                read::display_path(root, &path),
                PathProblem::SecondLink {
                    first: read::display_path(root, first),
                },
            )),
            None => {
                seen.insert(real, path.clone());
                files.push(path);
            }
        }
    }
    files.sort();
    found.refused = refusals.named();
    if files.len() > MAX_FOLDER_FILES {
        // The first in sorted order are read: the same ones on every machine.
        files.truncate(MAX_FOLDER_FILES);
        let limit = MAX_FOLDER_FILES;
        let shown = read::display_path(root, dir);
        found
            .refused
            .push(PathError::new(shown, PathProblem::TooManyFiles { limit }));
    }
    found.files = files;
    found.refused.sort_by(|a, b| a.path.cmp(&b.path));
    not_read.sort();
    not_read.dedup();
    if not_read.len() > MAX_NOT_READ_NAMED {
        not_read_unnamed += not_read.len() - MAX_NOT_READ_NAMED;
        not_read.truncate(MAX_NOT_READ_NAMED);
    }
    if not_read_unnamed > 0 {
        let more = NotRead::More {
            more: not_read_unnamed,
        };
        not_read.push((read::display_path(root, dir), more));
    }
    found.not_read = not_read;
    if refusals.unnamed > 0 {
        let more = PathProblem::MoreRefused {
            more: refusals.unnamed,
            named: MAX_REFUSED_NAMED,
        };
        found
            .refused
            .push(PathError::new(read::display_path(root, dir), more));
    }
    Ok(found)
}

/// The most paths of one workspace folder refused one by one (links to nothing or out of the
/// workspace, special files, second links to a file): the first in name order. The rest are
/// one error at the folder. Each refusal is a diagnostic of its own, and nothing bounded
/// them: a checkout of 200,000 links to nothing took 18 seconds and 200 MB to report, and
/// printed 77 MB of JSON.
pub const MAX_REFUSED_NAMED: usize = 100;

/// The refusals of one folder's walk: the first [`MAX_REFUSED_NAMED`] in path order, and how
/// many more there are. Memory stays bounded while the walk goes on: once twice as many are
/// held, they are sorted and cut back.
#[derive(Default)]
struct Refusals {
    kept: Vec<PathError>,
    unnamed: usize,
}

impl Refusals {
    fn push(&mut self, error: PathError) {
        self.kept.push(error);
        if self.kept.len() >= 2 * MAX_REFUSED_NAMED {
            self.cut();
        }
    }

    fn cut(&mut self) {
        self.kept.sort_by(|a, b| a.path.cmp(&b.path));
        if self.kept.len() > MAX_REFUSED_NAMED {
            self.unnamed += self.kept.len() - MAX_REFUSED_NAMED;
            self.kept.truncate(MAX_REFUSED_NAMED);
        }
    }

    /// Those named one by one, in path order.
    fn named(&mut self) -> Vec<PathError> {
        self.cut();
        std::mem::take(&mut self.kept)
    }
}

/// The most files read from one workspace folder (variants, components, tools, contexts,
/// partials). Each costs promptc a few kilobytes besides its text (its path, line table,
/// parsed document or compiled template): four hundred thousand partials of ten bytes, 4 MB in
/// all, held 5 GB. A real registry has hundreds; the benchmark's largest, a thousand tools.
pub const MAX_FOLDER_FILES: usize = 10_000;
