//! A workspace as it was at a git revision, written into a temporary folder with the git
//! command line, without touching the working tree or the index.
//!
//! The workspace may come from an unreviewed pull request, so git is run defensively: the
//! repository is found once, with bare-repository discovery off (a folder of the pull request
//! dressed up as a bare repository would otherwise bring its own config, filters included), and
//! every later command names that repository explicitly. The revision's tree is measured
//! before anything is written, and git itself writes the files.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use crate::emit::write::TEMP_PREFIX;
use crate::load::MANIFEST_FILE;
use crate::looked_at::Seen;
use crate::problem::RevisionProblem;
use crate::scratch::ScratchDir;
use crate::validate::ENTRIES_LOOKED_AT;

/// Most files, and most bytes, a revision's workspace may have: a crafted tree (one subtree
/// listed twice, a few dozen levels deep) describes billions of files in a few kilobytes.
pub const MAX_REVISION_FILES: usize = 100_000;
pub const MAX_REVISION_BYTES: u64 = 1024 * 1024 * 1024;

/// A revision's copy of the workspace; the folder is deleted when this is dropped.
pub struct RevisionCheckout {
    _dir: ScratchDir,
    /// The workspace root inside the copy.
    pub root: PathBuf,
}

/// Why a revision's workspace could not be had (worded in `problem::RevisionProblem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionError(pub RevisionProblem);

impl std::fmt::Display for RevisionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Git could not be started, or its output read.
fn cannot_run_git(error: std::io::Error) -> RevisionError {
    RevisionError(RevisionProblem::CannotRunGit {
        detail: error.to_string(),
    })
}

/// Reading `git ls-tree`'s listing failed.
fn listing_failed(error: &std::io::Error) -> RevisionError {
    RevisionError(RevisionProblem::GitFailed {
        command: "ls-tree",
        detail: error.to_string(),
    })
}

/// The repository a workspace lies in, found once.
struct Repository {
    git_dir: PathBuf,
    top: PathBuf,
}

/// The environment variables that point git at a repository, its index or its objects
/// (`git rev-parse --local-env-vars`, less the configuration's, see [`Copy::git`]).
const REPOSITORY_VARIABLES: [&str; 13] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_PREFIX",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_INTERNAL_SUPER_PREFIX",
];

/// The settings of the repository (at any level of its configuration) that shape how git
/// writes a file, carried to the copy's git: `core.autocrlf` (on by default in Git for
/// Windows) writes a text file with CRLF endings, as the working tree has it, and without
/// it every prompt of an unchanged workspace differed from its copy.
const WRITING_SETTINGS: &str = "^core\\.(autocrlf|eol|safecrlf|symlinks|longpaths|ignorecase|precomposeunicode|protectntfs|protecthfs)$";

/// The system's empty file, named where git takes a file or folder that must give nothing.
#[cfg(unix)]
const NOTHING: &str = "/dev/null";
#[cfg(not(unix))]
const NOTHING: &str = "NUL";

/// `git` with settings no repository content can change: command-line configuration is
/// "protected" and wins over the repository's own. No hook runs: a repository whose
/// `core.hooksPath` is a folder of its working tree (`.husky`, `.githooks`) ran the pull
/// request's own `post-index-change` when the copy wrote its index. No attributes file of the
/// system or the user applies (the repository's `info/attributes` is left behind with the
/// repository, see [`Copy::git`]).
fn git_command() -> Command {
    let mut command = Command::new("git");
    // The variables that tell git which repository, index and objects to use, which git
    // sets for the hooks it runs (`git rev-parse --local-env-vars`): promptc run from a hook
    // of a linked worktree found no workspace from a sub-folder, and `GIT_COMMON_DIR` led
    // the copy's git back to the repository's configuration.
    for variable in REPOSITORY_VARIABLES {
        command.env_remove(variable);
    }
    command
        .args(["-c", "safe.bareRepository=explicit"])
        .args(["-c", "core.fsmonitor=false"])
        .arg("-c")
        .arg(format!("core.hooksPath={NOTHING}"))
        .arg("-c")
        .arg(format!("core.attributesFile={NOTHING}"))
        .env("GIT_ATTR_NOSYSTEM", "1")
        .stdin(Stdio::null());
    command
}

/// A path git printed, as its bytes (not read as UTF-8, which would change a path that is not).
#[cfg(unix)]
fn path_from_bytes(bytes: Vec<u8>) -> Result<PathBuf, RevisionError> {
    use std::os::unix::ffi::OsStringExt as _;
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: Vec<u8>) -> Result<PathBuf, RevisionError> {
    String::from_utf8(bytes)
        .map(PathBuf::from)
        .map_err(|_| RevisionError(RevisionProblem::PathNotUtf8))
}

fn run(mut command: Command, what: &'static str) -> Result<Vec<u8>, RevisionError> {
    let output = crate::scratch::output(&mut command).map_err(cannot_run_git)?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(RevisionError(RevisionProblem::GitFailed {
            command: what,
            detail: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        }))
    }
}

impl Repository {
    fn find(workspace_root: &Path) -> Result<(Self, String), RevisionError> {
        // One question per call: a path may hold a line break (a folder named so), and the
        // answers of one call, a line each, would be cut at it (the workspace's prefix cut
        // short named a sibling folder, outside the workspace, as the base to compile).
        let ask = |question: &str| -> Result<Vec<u8>, RevisionError> {
            let mut command = git_command();
            command
                .arg("-C")
                .arg(workspace_root)
                .args(["rev-parse", question]);
            let mut answer = run(command, "rev-parse").map_err(|RevisionError(error)| {
                RevisionError(RevisionProblem::NotInRepository {
                    root: workspace_root.display().to_string(),
                    detail: error.to_string(),
                })
            })?;
            // The line break git ends its answer with, and nothing of the path.
            if answer.last() == Some(&b'\n') {
                answer.pop();
            }
            Ok(answer)
        };
        let git_dir = ask("--absolute-git-dir")?;
        let top = ask("--show-toplevel")?;
        if top.is_empty() {
            return Err(RevisionError(RevisionProblem::NotInWorkTree {
                root: workspace_root.display().to_string(),
            }));
        }
        let prefix = String::from_utf8(ask("--show-prefix")?).map_err(|_| {
            RevisionError(RevisionProblem::PrefixNotUtf8 {
                root: workspace_root.display().to_string(),
            })
        })?;
        Ok((
            Self {
                git_dir: path_from_bytes(git_dir)?,
                top: path_from_bytes(top)?,
            },
            prefix,
        ))
    }

    /// A git repository of its own at `dir` (made there) that holds no object, refs, hooks,
    /// configuration or attributes, and reads this repository's objects (given to its git as
    /// `GIT_OBJECT_DIRECTORY`, see [`Copy::git`]): whatever git writes from it is the
    /// objects as committed, whatever this repository's configuration (a `filter` driver
    /// runs a command) or `info/attributes` say. Its objects folder, and the settings that
    /// shape how files are written, are given back.
    fn borrowing(&self, dir: &Path) -> Result<Borrowed, RevisionError> {
        let ask = |question: &[&str]| {
            let mut command = self.command();
            command.args(question);
            run(command, "rev-parse").map(|mut answer| {
                if answer.last() == Some(&b'\n') {
                    answer.pop();
                }
                answer
            })
        };
        // Relative to the folder the command ran in, the top of the working tree.
        let objects = self.top.join(path_from_bytes(ask(&[
            "rev-parse",
            "--git-path",
            "objects",
        ])?)?);
        // A git older than 2.29 prints the option back, and knows only SHA-1.
        let format =
            String::from_utf8_lossy(&ask(&["rev-parse", "--show-object-format"])?).into_owned();
        let git = dir.join("git");
        std::fs::create_dir_all(git.join("refs")).map_err(cannot_create)?;
        std::fs::create_dir_all(git.join("objects")).map_err(cannot_create)?;
        std::fs::write(git.join("HEAD"), "ref: refs/heads/copy\n").map_err(cannot_create)?;
        let config = match format.as_str() {
            "sha256" => {
                "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
            }
            _ => "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
        };
        std::fs::write(git.join("config"), config).map_err(cannot_create)?;
        // None set is a failure of `--get-regexp` (exit 1), and nothing to carry.
        let settings = ask(&["config", "--get-regexp", WRITING_SETTINGS])
            .map(|listing| {
                String::from_utf8_lossy(&listing)
                    .lines()
                    .filter_map(|line| {
                        let (key, value) = line.split_once(' ')?;
                        Some(format!("{key}={value}"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Borrowed {
            git,
            objects,
            settings,
        })
    }

    /// A git command on this repository and no other, its working tree the repository's.
    fn command(&self) -> Command {
        let mut command = git_command();
        command
            .arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(&self.top)
            .current_dir(&self.top);
        command
    }

    /// The id of the object `spec` names (`rev-parse --verify`); `None` when it names none,
    /// or names something other than one object: `^HEAD` (a commit excluded) is given back
    /// as `^<id>`, which named no tree to copy, and the failure said only that `git ls-tree`
    /// failed.
    fn object_id(&self, spec: &str) -> Option<String> {
        let mut command = self.command();
        command.args(["rev-parse", "--verify", "--quiet", "--end-of-options", spec]);
        run(command, "rev-parse")
            .ok()
            .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
            .filter(|id| !id.is_empty() && id.bytes().all(|byte| byte.is_ascii_hexdigit()))
    }

    /// Whether `spec` names an object the repository holds. `rev-parse --verify` gives back
    /// any full hash as it is: a commit a shallow clone has not fetched (a pull request's
    /// base) was called a file or a folder of the repository.
    fn holds_object(&self, spec: &str) -> bool {
        let Some(id) = self.object_id(spec) else {
            return false;
        };
        let mut command = self.command();
        command.args(["cat-file", "-e", &id]);
        run(command, "cat-file").is_ok()
    }

    /// Why `revision` names no commit, with the branch or tag it likely meant: a repository
    /// with no commit yet has none to compare with.
    fn unknown(&self, revision: &str) -> RevisionError {
        if self.object_id("HEAD^{commit}").is_none() {
            return RevisionError(RevisionProblem::NoCommitYet {
                revision: revision.to_string(),
            });
        }
        let mut command = self.command();
        command.args([
            "for-each-ref",
            "--count=10000",
            "--format=%(refname:short)",
            "refs/heads",
            "refs/tags",
            "refs/remotes",
        ]);
        // A file or a folder at a revision (`HEAD:promptc.toml`, `HEAD^{tree}`) is an object
        // of the repository, but no commit to compile.
        if self.holds_object(revision) {
            return RevisionError(RevisionProblem::NotACommit {
                revision: revision.to_string(),
            });
        }
        let names: Vec<String> = run(command, "for-each-ref")
            .map(|listing| {
                String::from_utf8_lossy(&listing)
                    .lines()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let mut shallow = self.command();
        shallow.args(["rev-parse", "--is-shallow-repository"]);
        let shallow = run(shallow, "rev-parse").is_ok_and(|answer| answer.trim_ascii() == b"true");
        RevisionError(RevisionProblem::Unknown {
            revision: revision.to_string(),
            shallow,
            near: crate::namespace::closest(revision, &names),
        })
    }
}

/// Writes the files of `workspace_root`'s folder at `revision` that loading its workspace
/// reads into a temporary folder.
///
/// Only those: the manifest first, then, load after load, whatever the last load looked at
/// that the revision has and the copy lacks (the manifest's folders, the files its specs name,
/// the rules folders of its contexts, where links lead), until a load looks at nothing new. A
/// workspace at the root of a large repository is compared without writing the repository,
/// and files a pull request commits beside the workspace cost nothing.
pub fn checkout(workspace_root: &Path, revision: &str) -> Result<RevisionCheckout, RevisionError> {
    let (repository, prefix) = Repository::find(workspace_root)?;
    // The object first, then its commit: in `:/fix^{commit}` (a search of commit messages)
    // git reads `^{commit}` as part of the text searched for.
    let commit = repository
        .object_id(revision)
        .and_then(|object| repository.object_id(&format!("{object}^{{commit}}")))
        .ok_or_else(|| repository.unknown(revision))?;
    let no_workspace = || {
        let at = if prefix.is_empty() {
            "."
        } else {
            prefix.trim_end_matches('/')
        };
        RevisionError(RevisionProblem::NoWorkspace {
            revision: revision.to_string(),
            at: at.to_string(),
            manifest: MANIFEST_FILE,
        })
    };
    // The folder's tree, by its id: in `<commit>:<path>^{tree}` git reads `<path>^{tree}` as
    // the path, so a workspace in a subfolder was never found.
    let folder = if prefix.is_empty() {
        Some(commit)
    } else {
        repository.object_id(&format!("{commit}:{}", prefix.trim_end_matches('/')))
    };
    let tree = folder
        .and_then(|object| repository.object_id(&format!("{object}^{{tree}}")))
        .ok_or_else(no_workspace)?;

    let dir = ScratchDir::new(TEMP_PREFIX).map_err(cannot_create)?;
    let root = dir.path().join("tree");
    std::fs::create_dir(&root).map_err(cannot_create)?;
    // Canonical, as the loader names what it looks at.
    let root = root.canonicalize().map_err(cannot_create)?;
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).map_err(cannot_create)?;
    let git = repository.borrowing(dir.path())?;
    let mut copy = Copy {
        repository: &repository,
        revision,
        tree,
        index: dir.path().join("index"),
        entries: dir.path().join("entries"),
        root,
        empty,
        git,
        asked: Asked::default(),
        files: 0,
        bytes: 0,
        runs: 0,
        listed: std::cell::Cell::new(0),
    };
    copy.write(&Seen {
        paths: [PathBuf::from(MANIFEST_FILE)].into(),
        ..Seen::default()
    })?;
    if !crate::load::has_manifest(&copy.root) {
        return Err(no_workspace());
    }
    for _ in 0..MAX_LOADS {
        let watch = crate::looked_at::Watch::start(&copy.root);
        drop(crate::loader::load_workspace(&copy.root));
        if !copy.write(&watch.finish())? {
            let root = copy.root;
            return Ok(RevisionCheckout { _dir: dir, root });
        }
    }
    // Still finding more after that many loads (a chain of links to folders): the whole
    // folder, as it is committed.
    copy.write(&Seen {
        paths: [PathBuf::new()].into(),
        ..Seen::default()
    })?;
    let root = copy.root;
    Ok(RevisionCheckout { _dir: dir, root })
}

/// Most loads of a revision's copy: each finds what the last one wrote leads to (a folder the
/// manifest names, a file a spec names, where a link leads); past them, the whole folder is
/// written.
const MAX_LOADS: usize = 16;

/// The largest file git writes into a copy: a larger one is past what promptc reads of any
/// file ([`crate::model::limits::MAX_FILE_BYTES`]), so a file of its length and no content
/// (which takes no room on disk) is refused alike, and a gigabyte committed costs nothing to
/// write.
const MAX_WRITTEN_FILE_BYTES: u64 = crate::model::limits::MAX_FILE_BYTES + 1;

/// Most links followed on the way to one file, as the system's own limit.
const MAX_LINKS: usize = 40;

/// Most listings of the revision's tree before the whole folder is written in one: a load
/// asks for files of a few folders each time, not of thousands.
const MAX_LISTINGS: usize = 256;

/// Most entries all listings of the revision's tree may give together: a folder of many
/// entries listed again and again costs as much as a tree of that many.
const MAX_LISTED: usize = 4 * MAX_REVISION_FILES;

/// The mode git gives a symbolic link.
const LINK_MODE: &str = "120000";

/// The longest target of a symbolic link that a system takes (Linux's `PATH_MAX`, less its
/// closing NUL).
const MAX_LINK_TARGET: u64 = 4095;

fn cannot_create(error: std::io::Error) -> RevisionError {
    RevisionError(RevisionProblem::CannotCreate {
        detail: error.to_string(),
    })
}

/// What of the revision's tree has been asked for, so no path is asked twice.
#[derive(Default)]
struct Asked {
    /// Paths asked with all below them.
    whole: BTreeSet<PathBuf>,
    /// Entries asked by name.
    names: BTreeSet<PathBuf>,
    /// Folders whose sub-folders were asked for.
    listings: BTreeSet<PathBuf>,
}

impl Asked {
    /// Whether `path` lies in (or is) a path asked with all below it.
    fn covers(&self, path: &Path) -> bool {
        path.ancestors().any(|above| self.whole.contains(above))
    }
}

/// A revision's tree being written into a temporary folder, as loads ask for its files.
struct Copy<'r> {
    repository: &'r Repository,
    /// The revision as the command line names it, for what is said of its tree.
    revision: &'r str,
    tree: String,
    /// The temporary index git writes from, beside (not inside) the copy: neither the
    /// repository's index nor its working tree is touched.
    index: PathBuf,
    /// The entries to write, as git reads them.
    entries: PathBuf,
    root: PathBuf,
    /// An empty working tree for git: neither the revision's `.gitattributes` nor the working
    /// tree's apply.
    empty: PathBuf,
    /// The repository git writes the files from (see [`Repository::borrowing`]).
    git: Borrowed,
    asked: Asked,
    /// Files and bytes written so far, against [`MAX_REVISION_FILES`] and
    /// [`MAX_REVISION_BYTES`].
    files: usize,
    bytes: u64,
    /// Listings git ran, against [`MAX_LISTINGS`], and the entries they gave, against
    /// [`MAX_LISTED`].
    runs: usize,
    listed: std::cell::Cell<usize>,
}

/// The repository git writes a copy from (see [`Repository::borrowing`]).
struct Borrowed {
    git: PathBuf,
    /// The repository's own objects folder.
    objects: PathBuf,
    /// `key=value` of each setting that shapes how files are written.
    settings: Vec<String>,
}

/// One entry of the tree, as `ls-tree -l -z` prints it.
struct TreeEntry {
    mode: String,
    kind: String,
    object: String,
    size: u64,
    path: Vec<u8>,
}

impl Copy<'_> {
    /// Writes what the revision has of what a load looked at and the copy lacks. Whether
    /// anything was written: when nothing was, the next load would look at the same.
    fn write(&mut self, seen: &Seen) -> Result<bool, RevisionError> {
        let (mut written, mut links) = self.write_seen(seen)?;
        // Where the links just written lead, in the same round: a chain of links would take
        // a load per link.
        for _ in 0..MAX_LINKS {
            if links.is_empty() {
                break;
            }
            let (more, next) = self.write_seen(&Seen {
                names: links.into_iter().collect(),
                ..Seen::default()
            })?;
            written |= more;
            links = next;
        }
        Ok(written)
    }

    /// [`Copy::write`] of what was seen, without following the links it writes; gives them.
    fn write_seen(&mut self, seen: &Seen) -> Result<(bool, Vec<PathBuf>), RevisionError> {
        let mut whole = Vec::new();
        let mut names = BTreeSet::new();
        for path in &seen.paths {
            let Some(path) = self.through_links(path, &mut names) else {
                continue;
            };
            self.missing_folders(&path, &mut names);
            if !self.asked.covers(&path) {
                self.asked.whole.insert(path.clone());
                whole.push(path);
            }
        }
        for path in &seen.names {
            let Some(path) = self.through_links(path, &mut names) else {
                continue;
            };
            self.missing_folders(&path, &mut names);
            names.insert(path);
        }
        let mut listings = Vec::new();
        for path in &seen.listings {
            listings.extend(self.through_links(path, &mut names));
        }
        // Names and listings by the folder they are in: a folder is listed once for all.
        let mut listed: BTreeMap<PathBuf, Listed> = BTreeMap::new();
        for path in names {
            if path.as_os_str().is_empty()
                || self.asked.covers(&path)
                || !self.asked.names.insert(path.clone())
            {
                continue;
            }
            let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
            listed.entry(parent).or_default().names.insert(path);
        }
        for path in listings {
            if !self.asked.covers(&path) && self.asked.listings.insert(path.clone()) {
                listed.entry(path).or_default().folders = true;
            }
        }
        // Each folder with names asked is listed by a git run of its own: a crafted workspace
        // that names files in thousands of folders (or, round after round, in one of many
        // entries) would take a run, and a listing, for each. Past a bound, the whole folder
        // is written in one listing, as large as the copy may be.
        let runs = whole.len().div_ceil(256) + listed.len();
        if self.runs + runs > MAX_LISTINGS && !self.asked.covers(Path::new("")) {
            self.asked.whole.insert(PathBuf::new());
            whole = vec![PathBuf::new()];
            listed.clear();
        }
        self.runs += whole.len().div_ceil(256) + listed.len();

        let mut blobs = Vec::new();
        let mut folders = Vec::new();
        if whole.iter().any(|path| path.as_os_str().is_empty()) {
            // The whole folder (git refuses an empty path).
            whole.clear();
            self.list(true, &[], |entry| blobs.push(entry))?;
        }
        for some in whole.chunks(256) {
            self.list(true, some, |entry| blobs.push(entry))?;
        }
        // A submodule is written as git writes it: an empty folder.
        blobs.retain(|entry| {
            let submodule = entry.kind == "commit";
            if submodule {
                folders.push(PathBuf::from(os_string(&entry.path)));
            }
            !submodule
        });
        for (folder, wanted) in &listed {
            let spec = if folder.as_os_str().is_empty() {
                Vec::new()
            } else {
                let mut spec = folder.as_os_str().to_owned();
                spec.push("/");
                vec![PathBuf::from(spec)]
            };
            let mut entries = Vec::new();
            self.list(false, &spec, |entry| entries.push(entry))?;
            // A folder of more entries than a suggestion looks through gives none: the copy
            // has them all, or it would give one the working tree does not.
            let crowded = wanted.folders && entries.len() > ENTRIES_LOOKED_AT;
            for entry in entries {
                let path = PathBuf::from(os_string(&entry.path));
                if entry.kind == "tree" || entry.kind == "commit" {
                    if wanted.folders || wanted.names.contains(&path) {
                        folders.push(path);
                    }
                } else if crowded || wanted.names.contains(&path) {
                    blobs.push(entry);
                }
            }
        }
        let mut written = false;
        for folder in &folders {
            written |= self.make_folder(folder);
        }
        let links = blobs
            .iter()
            .filter(|entry| entry.mode == LINK_MODE)
            .map(|entry| PathBuf::from(os_string(&entry.path)))
            .collect();
        written |= self.write_blobs(blobs)?;
        Ok((written, links))
    }

    /// The folders above `path` that the copy lacks, to be asked for by name: one of them may
    /// be a link in the revision, which git lists nothing below.
    fn missing_folders(&self, path: &Path, names: &mut BTreeSet<PathBuf>) {
        for above in path.ancestors().skip(1) {
            if above.as_os_str().is_empty() || self.root.join(above).symlink_metadata().is_ok() {
                break;
            }
            names.insert(above.to_path_buf());
        }
    }

    /// `path` with each link on the way that the copy holds replaced by where it leads, and
    /// each `..` taken back as the system takes it: from where the links before it led
    /// (`l/../f`, `l` a link to `a/b`, is `a/f`), not from the name as written. `None` when it
    /// leads out of the copy (the load refuses that itself). Names on the way that the copy
    /// lacks, before a `..`, go to `lacking`.
    fn through_links(&self, path: &Path, lacking: &mut BTreeSet<PathBuf>) -> Option<PathBuf> {
        // The names still to walk, the next one last.
        let mut rest: Vec<Part> = parts(path)?;
        rest.reverse();
        let mut done = PathBuf::new();
        let mut links = 0;
        while let Some(part) = rest.pop() {
            let name = match part {
                Part::Up => {
                    // `done` holds no link: its parent is where `..` leads.
                    if !done.pop() {
                        return None;
                    }
                    continue;
                }
                Part::Name(name) => name,
            };
            let at = self.root.join(&done).join(&name);
            let metadata = at.symlink_metadata();
            if !metadata
                .as_ref()
                .is_ok_and(|metadata| metadata.file_type().is_symlink())
            {
                // A name the copy lacks before a `..` may be a link in the revision, which
                // changes where the `..` leads: it is asked for, and the next load follows it.
                if metadata.is_err() && rest.iter().any(|part| matches!(part, Part::Up)) {
                    lacking.insert(done.join(&name));
                }
                done.push(name);
                continue;
            }
            links += 1;
            if links > MAX_LINKS {
                return None;
            }
            let target = std::fs::read_link(&at).ok()?;
            if target.is_absolute() {
                done = PathBuf::new();
            }
            let target = match target.strip_prefix(&self.root) {
                Ok(below) => below.to_path_buf(),
                Err(_) if target.is_absolute() => return None,
                Err(_) => target,
            };
            rest.extend(parts(&target)?.into_iter().rev());
        }
        Some(done)
    }

    /// Lists the tree's entries at `paths` (`recursive`: every file below them), passing each
    /// to `found`. Stops at the first entry past the copy's limits: a crafted tree lists
    /// billions of files in a few kilobytes.
    fn list(
        &self,
        recursive: bool,
        paths: &[PathBuf],
        mut found: impl FnMut(TreeEntry),
    ) -> Result<(), RevisionError> {
        let mut command = self.repository.command();
        command
            .arg("--literal-pathspecs")
            .arg("ls-tree")
            .args(recursive.then_some("-r"))
            .args(["-l", "-z", &self.tree, "--"])
            .args(paths)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().map_err(cannot_run_git)?;
        let Some(stdout) = child.stdout.take() else {
            return Err(RevisionError(RevisionProblem::NoListing));
        };
        let mut reader = BufReader::new(stdout);
        let mut record = Vec::new();
        let mut listed = 0usize;
        let stop = |child: &mut std::process::Child, error: RevisionError| {
            let _ = child.kill();
            let _ = child.wait();
            Err(error)
        };
        loop {
            record.clear();
            match reader.read_until(0, &mut record) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) => {
                    return stop(&mut child, listing_failed(&error));
                }
            }
            listed += 1;
            self.listed.set(self.listed.get() + 1);
            if listed > MAX_REVISION_FILES {
                return stop(&mut child, self.too_large());
            }
            if self.listed.get() > MAX_LISTED {
                return stop(&mut child, self.listed_too_often());
            }
            match tree_entry(&record) {
                Some(entry) if is_plain_tree_path(&entry.path) => found(entry),
                // A name git itself refuses to write (`..`, `.git`): a crafted tree.
                Some(entry) => {
                    let path = String::from_utf8_lossy(&entry.path).into_owned();
                    return stop(
                        &mut child,
                        RevisionError(RevisionProblem::InvalidTreePath { path }),
                    );
                }
                None => {}
            }
        }
        let status = child.wait().map_err(|error| listing_failed(&error))?;
        if !status.success() {
            return Err(RevisionError(RevisionProblem::ListingFailed {
                tree: self.tree.to_string(),
            }));
        }
        Ok(())
    }

    fn listed_too_often(&self) -> RevisionError {
        RevisionError(RevisionProblem::ListedTooOften {
            revision: self.revision.to_string(),
            entries: MAX_LISTED,
        })
    }

    fn too_large(&self) -> RevisionError {
        RevisionError(RevisionProblem::TooLarge {
            revision: self.revision.to_string(),
            files: MAX_REVISION_FILES,
            bytes: MAX_REVISION_BYTES,
        })
    }

    /// Makes the folder `path` in the copy, through real folders only. Whether one was made.
    fn make_folder(&self, path: &Path) -> bool {
        self.real_folder(path).is_some_and(|(_, made)| made)
    }

    /// The folder `path` of the copy as a real folder, made where missing, and whether any
    /// part of it was made; `None` where a part is anything but a real folder (a link, a
    /// file), or the path is not plain names.
    fn real_folder(&self, path: &Path) -> Option<(PathBuf, bool)> {
        let mut at = self.root.clone();
        let mut made = false;
        for part in parts(path)? {
            let Part::Name(name) = part else {
                return None;
            };
            at.push(name);
            match at.symlink_metadata() {
                Ok(metadata) if metadata.file_type().is_dir() => {}
                Ok(_) => return None,
                Err(_) => {
                    std::fs::create_dir(&at).ok()?;
                    made = true;
                }
            }
        }
        Some((at, made))
    }

    /// Writes files of the tree with git (a file past what promptc reads as one of its length
    /// and no content). Whether any was written.
    fn write_blobs(&mut self, blobs: Vec<TreeEntry>) -> Result<bool, RevisionError> {
        let mut info = Vec::new();
        let mut empty = Vec::new();
        for entry in blobs {
            // Submodules are not part of the workspace; the revision's `.gitattributes`
            // would decide how git writes its files: `ident`, `working-tree-encoding` and
            // line-ending conversions make a file many times its size (past the limits), and
            // a `filter` runs whatever the machine's git configuration names for it.
            let name = entry.path.rsplit(|b| *b == b'/').next().unwrap_or_default();
            if entry.kind != "blob" || name == ATTRIBUTES {
                continue;
            }
            // A link git cannot make here (an empty target, or one longer than a path may
            // be) failed the whole copy, its message naming the temporary folder: it is left
            // out, as a missing file, which the side's load tells of where it is named.
            if entry.mode == LINK_MODE && (entry.size == 0 || entry.size > MAX_LINK_TARGET) {
                continue;
            }
            // Written already, by name, before the folder it is in was asked for whole.
            let path = PathBuf::from(os_string(&entry.path));
            if self.root.join(&path).symlink_metadata().is_ok() {
                continue;
            }
            self.files += 1;
            if entry.size > MAX_WRITTEN_FILE_BYTES && entry.mode != LINK_MODE {
                empty.push(entry);
            } else {
                self.bytes = self.bytes.saturating_add(entry.size);
                info.extend_from_slice(
                    format!("{} {} {}\t", entry.mode, entry.kind, entry.object).as_bytes(),
                );
                info.extend_from_slice(&entry.path);
                info.push(0);
            }
            if self.files > MAX_REVISION_FILES || self.bytes > MAX_REVISION_BYTES {
                return Err(self.too_large());
            }
        }
        let mut written = false;
        for entry in &empty {
            written |= self.write_of_length(&PathBuf::from(os_string(&entry.path)), entry.size);
        }
        if info.is_empty() {
            return Ok(written);
        }
        // Git writes the files: `update-index` refuses tree entries such as `..` or `.git`,
        // and `checkout-index` never writes through a symbolic link, which a hand-written
        // loop would have to get right itself. The index holds only this round's files.
        let _ = std::fs::remove_file(&self.index);
        std::fs::write(&self.entries, &info).map_err(cannot_create)?;
        let entries = std::fs::File::open(&self.entries).map_err(cannot_create)?;
        let mut command = self.git();
        command.args(["update-index", "-z", "--index-info"]);
        let output =
            crate::scratch::output_reading(&mut command, entries.into()).map_err(cannot_run_git)?;
        if !output.status.success() {
            return Err(RevisionError(RevisionProblem::GitFailed {
                command: "update-index",
                detail: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            }));
        }
        let mut prefix_arg = OsString::from("--prefix=");
        prefix_arg.push(self.root.as_os_str());
        prefix_arg.push("/");
        let mut command = self.git();
        command
            .args(["checkout-index", "--all", "--force"])
            .arg(prefix_arg);
        run(command, "checkout-index")?;
        Ok(true)
    }

    /// A git command that writes the copy: on the repository of its own that borrows the
    /// objects, with the copy's index and an empty working tree, and with no configuration
    /// but what it is given here (no system's or user's file: a `filter` driver configured
    /// there would run a command, and what it gives would not be the file as committed).
    fn git(&self) -> Command {
        let mut command = git_command();
        command
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", NOTHING)
            .env_remove("GIT_CONFIG")
            .env_remove("GIT_CONFIG_PARAMETERS")
            .env_remove("GIT_CONFIG_COUNT")
            .env("GIT_INDEX_FILE", &self.index)
            // Not an `objects/info/alternates` file: git reads one line by line, and cut a
            // path holding a line break; and it follows five links of alternates at most.
            .env("GIT_OBJECT_DIRECTORY", &self.git.objects);
        for setting in &self.git.settings {
            command.arg("-c").arg(setting);
        }
        command
            .arg("--git-dir")
            .arg(&self.git.git)
            .arg("--work-tree")
            .arg(&self.empty)
            .current_dir(&self.empty);
        command
    }

    /// A file of `length` bytes and no content at `path`, made through real folders only
    /// and never through a link. Whether it was made.
    fn write_of_length(&self, path: &Path, length: u64) -> bool {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        let Some((folder, _)) = self.real_folder(parent) else {
            return false;
        };
        // `create_new` follows no link at the last name: it refuses whatever stands there.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(folder.join(name))
            .and_then(|file| file.set_len(length))
            .is_ok()
    }
}

/// What is wanted of one folder's entries.
#[derive(Default)]
struct Listed {
    /// Entries wanted by name.
    names: BTreeSet<PathBuf>,
    /// Whether its sub-folders are wanted.
    folders: bool,
}

/// One name of a path as the system walks it.
enum Part {
    Name(OsString),
    Up,
}

/// The names of a relative path, `..` kept (it is taken back where the walk stands); `None`
/// when it is not relative or passes through `.git`.
fn parts(path: &Path) -> Option<Vec<Part>> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(name) if crate::confine::is_git_folder(name) => return None,
            Component::Normal(name) => parts.push(Part::Name(name.to_owned())),
            Component::CurDir => {}
            Component::ParentDir => parts.push(Part::Up),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts)
}

/// Whether a path of the tree is names that git writes: none empty, `.`, `..` or `.git`.
fn is_plain_tree_path(path: &[u8]) -> bool {
    path.split(|b| *b == b'/')
        .all(|name| !matches!(name, b"" | b"." | b"..") && !name.eq_ignore_ascii_case(b".git"))
}

/// `<mode> <type> <object> <size>\t<path>\0`; the size is `-` for folders and submodules.
fn tree_entry(record: &[u8]) -> Option<TreeEntry> {
    let record = record.strip_suffix(b"\0").unwrap_or(record);
    // The path is all after the first tab: a path may hold tabs of its own.
    let tab = record.iter().position(|b| *b == b'\t')?;
    let (meta, path) = (&record[..tab], &record[tab + 1..]);
    let meta = std::str::from_utf8(meta).ok()?;
    let mut fields = meta.split_whitespace();
    let mode = fields.next()?.to_string();
    let kind = fields.next()?.to_string();
    let object = fields.next()?.to_string();
    let size = fields
        .next()
        .and_then(|size| size.parse().ok())
        .unwrap_or(0);
    Some(TreeEntry {
        mode,
        kind,
        object,
        size,
        path: path.to_vec(),
    })
}

const ATTRIBUTES: &[u8] = b".gitattributes";

/// A path as git printed it.
fn os_string(bytes: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        OsString::from_vec(bytes.to_vec())
    }
    #[cfg(not(unix))]
    {
        OsString::from(String::from_utf8_lossy(bytes).into_owned())
    }
}
