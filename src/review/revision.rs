//! A workspace as it was at a git revision, written into a temporary folder with the git
//! command line, without touching the working tree or the index.
//!
//! The workspace may come from an unreviewed pull request, so git is run defensively: the
//! repository is found once, with bare-repository discovery off (a folder of the pull request
//! dressed up as a bare repository would otherwise bring its own config, filters included), and
//! every later command names that repository explicitly. The revision's tree is measured
//! before anything is written, and git itself writes the files.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::emit::write::TEMP_PREFIX;
use crate::load::MANIFEST_FILE;
use crate::scratch::ScratchDir;

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

/// Why a revision's workspace could not be had, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionError(pub String);

/// The repository a workspace lies in, found once.
struct Repository {
    git_dir: PathBuf,
    top: PathBuf,
}

/// `git` with settings no repository content can change: command-line configuration is
/// "protected" and wins over the repository's own.
fn git_command() -> Command {
    let mut command = Command::new("git");
    command
        .args(["-c", "safe.bareRepository=explicit"])
        .args(["-c", "core.fsmonitor=false"])
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
        .map_err(|_| RevisionError("git printed a path that is not UTF-8".into()))
}

fn run(mut command: Command, what: &str) -> Result<Vec<u8>, RevisionError> {
    let output = crate::scratch::output(&mut command)
        .map_err(|error| RevisionError(format!("cannot run git: {error}")))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(RevisionError(format!(
            "git {what} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )))
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
                RevisionError(format!(
                    "{} is not inside a usable git repository ({error})",
                    workspace_root.display()
                ))
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
            return Err(RevisionError(format!(
                "{} is not inside a git work tree",
                workspace_root.display()
            )));
        }
        let prefix = String::from_utf8(ask("--show-prefix")?).map_err(|_| {
            RevisionError(format!(
                "{} has a path inside its repository that is not UTF-8, which promptc cannot name in a revision",
                workspace_root.display()
            ))
        })?;
        Ok((
            Self {
                git_dir: path_from_bytes(git_dir)?,
                top: path_from_bytes(top)?,
            },
            prefix,
        ))
    }

    /// A git command on this repository and no other.
    fn command(&self) -> Command {
        self.command_in(&self.top)
    }

    /// The id of the object `spec` names (`rev-parse --verify`); `None` when it names none.
    fn object_id(&self, spec: &str) -> Option<String> {
        let mut command = self.command();
        command.args(["rev-parse", "--verify", "--quiet", "--end-of-options", spec]);
        run(command, "rev-parse")
            .ok()
            .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
    }

    /// A git command on this repository, with `work_tree` as its working tree.
    fn command_in(&self, work_tree: &Path) -> Command {
        let mut command = git_command();
        command
            .arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(work_tree)
            .current_dir(&self.top);
        command
    }
}

/// Writes the files of `workspace_root`'s folder at `revision` into a temporary folder.
pub fn checkout(workspace_root: &Path, revision: &str) -> Result<RevisionCheckout, RevisionError> {
    let (repository, prefix) = Repository::find(workspace_root)?;
    let commit = repository
        .object_id(&format!("{revision}^{{commit}}"))
        .ok_or_else(|| RevisionError(format!("unknown revision `{revision}`")))?;
    let no_workspace = || {
        let at = if prefix.is_empty() {
            "."
        } else {
            prefix.trim_end_matches('/')
        };
        // Quoted with escapes: a folder's name may hold a line break, or a CI log's command.
        RevisionError(format!(
            "revision `{revision}` has no workspace at {at:?} (no {MANIFEST_FILE})"
        ))
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
    let attributes = check_size(&repository, &tree)?;

    // Let git write the files: `checkout-index` refuses tree entries such as `..` or `.git`
    // and never writes through a symbolic link, which a hand-written loop over `ls-tree`
    // would have to get right itself. The index is a temporary one, beside (not inside) the
    // copy, so neither the repository's index nor its working tree is touched.
    let dir = ScratchDir::new(TEMP_PREFIX)
        .map_err(|error| RevisionError(format!("cannot create a temporary folder: {error}")))?;
    let index = dir.path().join("index");
    let root = dir.path().join("tree");
    std::fs::create_dir(&root)
        .map_err(|error| RevisionError(format!("cannot create a temporary folder: {error}")))?;
    let mut command = repository.command();
    command
        .env("GIT_INDEX_FILE", &index)
        .args(["read-tree", &tree]);
    run(command, "read-tree")?;
    // The revision's `.gitattributes` would decide how git writes its files: `ident`,
    // `working-tree-encoding` and line-ending conversions make a file many times its size
    // (past the limits just measured), and a `filter` runs whatever the machine's git
    // configuration names for it. The files are wanted as committed: the attribute files
    // leave the temporary index, and git checks them out from an empty working tree, so
    // neither the revision's attributes nor the working tree's apply.
    for some in attributes.chunks(256) {
        let mut command = repository.command();
        command
            .env("GIT_INDEX_FILE", &index)
            .args(["update-index", "--force-remove", "--"])
            .args(some);
        run(command, "update-index")?;
    }
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty)
        .map_err(|error| RevisionError(format!("cannot create a temporary folder: {error}")))?;
    let mut prefix_arg = std::ffi::OsString::from("--prefix=");
    prefix_arg.push(root.as_os_str());
    prefix_arg.push("/");
    let mut command = repository.command_in(&empty);
    command
        .env("GIT_INDEX_FILE", &index)
        .args(["checkout-index", "--all", "--force"])
        .arg(prefix_arg);
    run(command, "checkout-index")?;
    if !crate::load::has_manifest(&root) {
        return Err(no_workspace());
    }
    Ok(RevisionCheckout { _dir: dir, root })
}

/// Refuses a tree over [`MAX_REVISION_FILES`] or [`MAX_REVISION_BYTES`] before anything is
/// written. The listing is read as git prints it and git is stopped at the first entry over
/// a limit: the listing of a crafted tree would not fit in memory. Gives the paths of the
/// tree's `.gitattributes` files.
fn check_size(repository: &Repository, tree: &str) -> Result<Vec<OsString>, RevisionError> {
    let mut command = repository.command();
    command
        .args(["ls-tree", "-r", "-l", "-z", tree])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command
        .spawn()
        .map_err(|error| RevisionError(format!("cannot run git: {error}")))?;
    let Some(stdout) = child.stdout.take() else {
        return Err(RevisionError("git ls-tree has no output".into()));
    };
    let mut reader = BufReader::new(stdout);
    let mut record = Vec::new();
    let mut files = 0usize;
    let mut bytes = 0u64;
    let mut over = false;
    let mut attributes = Vec::new();
    loop {
        record.clear();
        match reader.read_until(0, &mut record) {
            Ok(0) => break,
            Ok(_) => {}
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RevisionError(format!("git ls-tree failed: {error}")));
            }
        }
        files += 1;
        // `<mode> <type> <object> <size>\t<path>`; the size is `-` for submodules.
        let meta = record.split(|b| *b == b'\t').next().unwrap_or_default();
        let size = String::from_utf8_lossy(meta)
            .split_whitespace()
            .nth(3)
            .and_then(|size| size.parse::<u64>().ok())
            .unwrap_or(0);
        bytes = bytes.saturating_add(size);
        // The path is all after the first tab: a path may hold tabs of its own.
        let path = record
            .splitn(2, |b| *b == b'\t')
            .nth(1)
            .map(|path| path.strip_suffix(b"\0").unwrap_or(path));
        if let Some(path) = path
            && (path == ATTRIBUTES || path.ends_with(b"/.gitattributes"))
        {
            attributes.push(os_string(path));
        }
        if files > MAX_REVISION_FILES || bytes > MAX_REVISION_BYTES {
            over = true;
            break;
        }
    }
    if over {
        let _ = child.kill();
        let _ = child.wait();
        return Err(RevisionError(format!(
            "the workspace at `{tree}` has more than {MAX_REVISION_FILES} files or {MAX_REVISION_BYTES} bytes: promptc does not copy it"
        )));
    }
    let status = child
        .wait()
        .map_err(|error| RevisionError(format!("git ls-tree failed: {error}")))?;
    if !status.success() {
        return Err(RevisionError(format!("git ls-tree {tree} failed")));
    }
    Ok(attributes)
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
