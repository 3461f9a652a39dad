//! Why `promptc diff` could not have a revision's workspace: git could not be asked, the
//! revision names no commit, or its tree is not one promptc copies.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevisionProblem {
    /// `git` could not be started, or its output read.
    CannotRunGit {
        detail: String,
    },
    /// A git command failed, with what it printed on stderr (or the failure reading it).
    GitFailed {
        command: &'static str,
        detail: String,
    },
    /// `git ls-tree` of a tree ended with a failure of its own.
    ListingFailed {
        tree: String,
    },
    /// `git ls-tree` was started with no output to read.
    NoListing,
    /// A path git printed is not UTF-8, where paths are read as UTF-8 (off Unix).
    PathNotUtf8,
    NotInRepository {
        root: String,
        detail: String,
    },
    NotInWorkTree {
        root: String,
    },
    /// The workspace's path within its repository is not UTF-8: a revision cannot name it.
    PrefixNotUtf8 {
        root: String,
    },
    /// A repository without any commit yet.
    NoCommitYet {
        revision: String,
    },
    /// A revision that names no commit, and the branch or tag it likely meant.
    Unknown {
        revision: String,
        near: Option<String>,
        /// The repository is a shallow clone (CI's checkouts are, by default): the commit
        /// may exist upstream, beyond the history fetched.
        shallow: bool,
    },
    /// A revision that names an object of the repository that is no commit (a file or a
    /// folder at a revision).
    NotACommit {
        revision: String,
    },
    /// The revision has no manifest (`manifest`) where the workspace lies (`at`).
    NoWorkspace {
        revision: String,
        at: String,
        manifest: &'static str,
    },
    /// A name git itself refuses to write (`..`, `.git`): a crafted tree.
    InvalidTreePath {
        path: String,
    },
    /// Finding the files a load reads listed more entries than `entries` in all.
    ListedTooOften {
        revision: String,
        entries: usize,
    },
    /// The files a load reads are more than `files` files or `bytes` bytes.
    TooLarge {
        revision: String,
        files: usize,
        bytes: u64,
    },
    /// The temporary folder the revision is written to could not be made or written.
    CannotCreate {
        detail: String,
    },
}

impl fmt::Display for RevisionProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RevisionProblem::CannotRunGit { detail } => write!(f, "cannot run git: {detail}"),
            RevisionProblem::GitFailed { command, detail } => {
                write!(f, "git {command} failed: {detail}")
            }
            RevisionProblem::ListingFailed { tree } => write!(f, "git ls-tree {tree} failed"),
            RevisionProblem::NoListing => f.write_str("git ls-tree has no output"),
            RevisionProblem::PathNotUtf8 => f.write_str("git printed a path that is not UTF-8"),
            RevisionProblem::NotInRepository { root, detail } => {
                write!(f, "{root} is not inside a usable git repository ({detail})")
            }
            RevisionProblem::NotInWorkTree { root } => {
                write!(f, "{root} is not inside a git work tree")
            }
            RevisionProblem::PrefixNotUtf8 { root } => write!(
                f,
                "{root} has a path inside its repository that is not UTF-8, which promptc cannot name in a revision"
            ),
            RevisionProblem::NoCommitYet { revision } => write!(
                f,
                "unknown revision `{revision}`: the repository has no commit yet (commit the workspace, then compare with that commit)"
            ),
            RevisionProblem::Unknown {
                revision,
                shallow: true,
                ..
            } => write!(
                f,
                "unknown revision `{revision}`: the repository is a shallow clone, whose history may stop before it; fetch more of it (`git fetch --unshallow`, or `fetch-depth: 0` for GitHub's `actions/checkout`) or fetch the branch (`git fetch origin main`)"
            ),
            RevisionProblem::Unknown {
                revision,
                near: Some(near),
                ..
            } => write!(f, "unknown revision `{revision}`: did you mean `{near}`?"),
            RevisionProblem::Unknown {
                revision,
                near: None,
                ..
            } => write!(
                f,
                "unknown revision `{revision}` (a branch, tag or commit of the repository)"
            ),
            RevisionProblem::NotACommit { revision } => write!(
                f,
                "`{revision}` names a file or a folder of the repository, not a commit: name a branch, tag or commit (`HEAD`, `main`, `HEAD~1`)"
            ),
            // Quoted with escapes: a folder's name may hold a line break, or a CI log's command.
            RevisionProblem::NoWorkspace {
                revision,
                at,
                manifest,
            } => write!(
                f,
                "revision `{revision}` has no workspace at {at:?} (no {manifest})"
            ),
            RevisionProblem::InvalidTreePath { path } => write!(
                f,
                "the revision's tree has an invalid path {path:?}: promptc does not copy it"
            ),
            RevisionProblem::ListedTooOften { revision, entries } => write!(
                f,
                "the workspace at revision `{revision}` had its folders listed past {entries} entries in all to find the files promptc reads: promptc does not copy it (its files lie in very many folders, or in one of very many entries)"
            ),
            RevisionProblem::TooLarge {
                revision,
                files,
                bytes,
            } => write!(
                f,
                "the files promptc reads of the workspace at revision `{revision}` are more than {files} files or {bytes} bytes: promptc does not copy them"
            ),
            RevisionProblem::CannotCreate { detail } => {
                write!(f, "cannot create a temporary folder: {detail}")
            }
        }
    }
}
