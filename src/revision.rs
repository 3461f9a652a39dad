//! A workspace as it was at a git revision, written into a temporary folder with the git
//! command line, without touching the working tree or the index.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::load::MANIFEST_FILE;

/// A revision's copy of the workspace; the folder is deleted when this is dropped.
pub struct RevisionCheckout {
    _dir: tempfile::TempDir,
    /// The workspace root inside the copy.
    pub root: PathBuf,
}

/// Why a revision's workspace could not be had, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionError(pub String);

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, RevisionError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|error| RevisionError(format!("cannot run git: {error}")))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(RevisionError(
            String::from_utf8_lossy(&output.stderr).trim().to_string(),
        ))
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// Writes the files of `workspace_root`'s folder at `revision` into a temporary folder.
pub fn checkout(workspace_root: &Path, revision: &str) -> Result<RevisionCheckout, RevisionError> {
    let top = git(workspace_root, &["rev-parse", "--show-toplevel"])
        .map(text)
        .map_err(|_| {
            RevisionError(format!(
                "{} is not inside a git repository",
                workspace_root.display()
            ))
        })?;
    let top = PathBuf::from(top);
    let prefix = git(workspace_root, &["rev-parse", "--show-prefix"]).map(text)?;
    let commit = git(
        &top,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{revision}^{{commit}}"),
        ],
    )
    .map(text)
    .map_err(|_| RevisionError(format!("unknown revision `{revision}`")))?;

    // Let git write the files: `checkout-index` refuses tree entries such as `..` or `.git`
    // and never writes through a symbolic link, which a hand-written loop over `ls-tree`
    // would have to get right itself. The index is a temporary one, beside (not inside) the
    // copy, so neither the repository's index nor its working tree is touched.
    let tree = if prefix.is_empty() {
        format!("{commit}^{{tree}}")
    } else {
        format!("{commit}:{}", prefix.trim_end_matches('/'))
    };
    let no_workspace = || {
        let at = if prefix.is_empty() {
            "."
        } else {
            prefix.trim_end_matches('/')
        };
        RevisionError(format!(
            "revision `{revision}` has no workspace at {at} (no {MANIFEST_FILE})"
        ))
    };
    git(
        &top,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{tree}^{{tree}}"),
        ],
    )
    .map_err(|_| no_workspace())?;
    check_size(&top, &tree)?;

    let dir = tempfile::Builder::new()
        .prefix(".promptc-tmp-")
        .tempdir()
        .map_err(|error| RevisionError(format!("cannot create a temporary folder: {error}")))?;
    let index = dir.path().join("index");
    let root = dir.path().join("tree");
    std::fs::create_dir(&root)
        .map_err(|error| RevisionError(format!("cannot create a temporary folder: {error}")))?;
    git_with_index(&top, &index, &["read-tree", &tree])?;
    let mut prefix_arg = root.as_os_str().to_owned();
    prefix_arg.push("/");
    let prefix_arg = prefix_arg
        .into_string()
        .map_err(|_| RevisionError("the temporary folder's path is not UTF-8".into()))?;
    git_with_index(
        &top,
        &index,
        &[
            "checkout-index",
            "--all",
            "--force",
            &format!("--prefix={prefix_arg}"),
        ],
    )?;
    if !root.join(MANIFEST_FILE).is_file() {
        return Err(no_workspace());
    }
    Ok(RevisionCheckout { _dir: dir, root })
}

/// Most files, and most bytes, a revision's workspace may have: a crafted tree (one blob
/// listed a million times) must not fill the disk.
pub const MAX_REVISION_FILES: usize = 100_000;
pub const MAX_REVISION_BYTES: u64 = 1024 * 1024 * 1024;

/// Refuses a tree over [`MAX_REVISION_FILES`] or [`MAX_REVISION_BYTES`] before anything is
/// written.
fn check_size(top: &Path, tree: &str) -> Result<(), RevisionError> {
    let listing = git(top, &["ls-tree", "-r", "-l", "-z", tree])?;
    let mut files = 0usize;
    let mut bytes = 0u64;
    for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        files += 1;
        // `<mode> <type> <object> <size>\t<path>`; the size is `-` for submodules.
        let meta = record.split(|b| *b == b'\t').next().unwrap_or_default();
        let size = String::from_utf8_lossy(meta)
            .split_whitespace()
            .nth(3)
            .and_then(|size| size.parse::<u64>().ok())
            .unwrap_or(0);
        bytes = bytes.saturating_add(size);
    }
    if files > MAX_REVISION_FILES || bytes > MAX_REVISION_BYTES {
        return Err(RevisionError(format!(
            "the workspace at `{tree}` has {files} files and {bytes} bytes, over the limit of {MAX_REVISION_FILES} files and {MAX_REVISION_BYTES} bytes"
        )));
    }
    Ok(())
}

/// Runs git with a temporary index file.
fn git_with_index(dir: &Path, index: &Path, args: &[&str]) -> Result<(), RevisionError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_INDEX_FILE", index)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| RevisionError(format!("cannot run git: {error}")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(RevisionError(format!(
            "git {} failed: {}",
            args.first().copied().unwrap_or_default(),
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}
