//! A workspace as it was at a git revision, written into a temporary folder with the git
//! command line, without touching the working tree or the index.

use std::io::{Read, Write};
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

    let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", commit.as_str()];
    if !prefix.is_empty() {
        args.push("--");
        args.push(prefix.as_str());
    }
    let listing = git(&top, &args)?;
    let mut blobs = Vec::new();
    for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let record = String::from_utf8_lossy(record);
        let Some((meta, path)) = record.split_once('\t') else {
            continue;
        };
        let fields: Vec<&str> = meta.split(' ').collect();
        // Regular files only: symlinks (120000) and submodules are not workspace content.
        if let [mode, "blob", object] = fields[..]
            && mode != "120000"
        {
            blobs.push((object.to_string(), path.to_string()));
        }
    }

    let dir = tempfile::tempdir()
        .map_err(|error| RevisionError(format!("cannot create a temporary folder: {error}")))?;
    let contents = cat_blobs(&top, &blobs)?;
    for ((_, path), bytes) in blobs.iter().zip(contents) {
        let target = dir.path().join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|error| RevisionError(format!("cannot write {path}: {error}")))?;
        }
        std::fs::write(&target, bytes)
            .map_err(|error| RevisionError(format!("cannot write {path}: {error}")))?;
    }
    let root = dir.path().join(&prefix);
    if !root.join(MANIFEST_FILE).is_file() {
        let at = if prefix.is_empty() {
            "."
        } else {
            prefix.trim_end_matches('/')
        };
        return Err(RevisionError(format!(
            "revision `{revision}` has no workspace at {at} (no {MANIFEST_FILE})"
        )));
    }
    Ok(RevisionCheckout { _dir: dir, root })
}

/// Reads many blobs through one `git cat-file --batch` process.
fn cat_blobs(top: &Path, blobs: &[(String, String)]) -> Result<Vec<Vec<u8>>, RevisionError> {
    let failed = |error: std::io::Error| RevisionError(format!("git cat-file failed: {error}"));
    let mut child = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(failed)?;
    let mut request = String::new();
    for (object, _) in blobs {
        request.push_str(object);
        request.push('\n');
    }
    // Write from another thread: git answers while we are still asking.
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| RevisionError("git cat-file has no input".into()))?;
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let mut output = Vec::new();
    child
        .stdout
        .take()
        .ok_or_else(|| RevisionError("git cat-file has no output".into()))?
        .read_to_end(&mut output)
        .map_err(failed)?;
    let _ = writer.join();
    child.wait().map_err(failed)?;

    let mut contents = Vec::with_capacity(blobs.len());
    let mut rest = output.as_slice();
    for _ in blobs {
        let newline = rest
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| RevisionError("git cat-file answered short".into()))?;
        let header = String::from_utf8_lossy(&rest[..newline]).to_string();
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| RevisionError(format!("git cat-file answered `{header}`")))?;
        let start = newline + 1;
        let end = start + size;
        if rest.len() < end {
            return Err(RevisionError("git cat-file answered short".into()));
        }
        contents.push(rest[start..end].to_vec());
        rest = rest.get(end + 1..).unwrap_or_default();
    }
    Ok(contents)
}
