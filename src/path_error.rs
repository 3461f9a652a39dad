//! Why promptc refused or failed to use a path on disk, with the path, in words for the user.
//!
//! The checks themselves live in [`crate::confine`]; every sentence about them lives here.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What is wrong with a path.
#[derive(Debug)]
pub enum PathProblem {
    /// A symbolic link whose target lies outside the workspace.
    LinkLeavesWorkspace {
        target: PathBuf,
    },
    /// A symbolic link whose target does not exist.
    DanglingLink,
    /// A symbolic link that cannot be followed (a loop of links, a link through a file).
    BrokenLink {
        error: io::Error,
    },
    /// A path into the repository's `.git` folder.
    GitFolder,
    /// One of the workspace's own files (a template or data file), where an output would go.
    IsSource,
    /// A symbolic link where promptc needs a real file (an output, an index).
    IsLink,
    /// A workspace file (a template, a partial, a data file, a rules file) that is a link to
    /// a file in the output folder: a build would read back what it writes, and its output
    /// would change on every build, or run a context's text as template code.
    LinkToOutput {
        /// The output, from the workspace root.
        target: PathBuf,
    },
    /// A workspace file (a template, a partial, a data file, a rules file) that lies in the
    /// output folder itself: a build would read what it writes, and may write over it.
    InOutput,
    /// A path given in a workspace file climbs out of the workspace (`..`, absolute).
    OutsideWorkspace,
    /// A FIFO, socket or device, where a regular file belongs.
    NotRegularFile {
        what: &'static str,
    },
    /// A link, a device, a FIFO or a socket where promptc was asked to write a file: writing
    /// would replace it (a device of the system deleted, `--out /dev/null`).
    WouldReplace {
        what: &'static str,
    },
    /// A folder where a file belongs.
    IsFolder,
    /// A file where a folder belongs.
    NotAFolder,
    TooLarge {
        limit: u64,
        /// The `[limits]` setting that raises it, where one does.
        setting: Option<&'static str>,
    },
    /// A file promptc writes (an output, the index) that is larger than it reads back.
    GeneratedTooLarge {
        limit: u64,
    },
    /// Reading it would take the files of the workspace past their total limit.
    WorkspaceTooLarge {
        limit: u64,
        setting: &'static str,
    },
    /// A workspace folder with more files than promptc reads from one.
    TooManyFiles {
        limit: usize,
    },
    /// A workspace folder holding more refused paths than are named one by one: `more` of
    /// them besides the first `named`.
    MoreRefused {
        more: usize,
        named: usize,
    },
    /// A link to a file that another path (a link, or the file itself) already brought in.
    SecondLink {
        first: PathBuf,
    },
    /// A link, in a workspace folder of data files or partials, to a folder that holds that
    /// folder: the workspace's other files would be read again under its kind.
    LinkToHoldingFolder {
        /// The folder the link leads to, from the workspace root (empty for the root).
        target: PathBuf,
    },
    /// Outputs are written as UTF-8 text; the file on disk is not.
    NotUtf8,
    /// A workspace file whose name is not UTF-8: no id or template name can be read from it.
    NameNotUtf8,
    /// A folder nested deeper below a workspace folder (variants, partials, …) than promptc
    /// reads.
    TooDeep {
        limit: usize,
    },
    /// A folder inside a workspace folder that cannot be listed (no permission, a name too
    /// long for the system): its files would be missing without a word.
    FolderUnreadable {
        error: io::Error,
    },
    Io(io::Error),
}

/// A [`PathProblem`] and the path it is about (relative to the workspace when inside it).
#[derive(Debug)]
pub struct PathError {
    pub path: PathBuf,
    pub problem: PathProblem,
    /// Files a failed write had replaced and could not put back (each as the user knows it,
    /// and where its previous contents are left): said with the error, so that nothing is
    /// lost without a word.
    pub not_put_back: Vec<(PathBuf, PathBuf)>,
}

/// How standard input is named where a file's path would be.
pub const STDIN: &str = "<stdin>";

impl PathError {
    pub fn new(path: impl Into<PathBuf>, problem: PathProblem) -> Self {
        Self {
            path: path.into(),
            problem,
            not_put_back: Vec::new(),
        }
    }

    pub fn io(path: impl Into<PathBuf>, error: io::Error) -> Self {
        Self::new(path, PathProblem::Io(error))
    }

    /// What would fix it.
    pub fn help(&self) -> String {
        let help = self.problem_help();
        let moves: Vec<String> = self
            .not_put_back
            .iter()
            .map(|(shown, left)| format!("{} to {}", left.display(), shown.display()))
            .collect();
        if moves.is_empty() {
            return help;
        }
        format!(
            "{help}; then move {} by hand, before building again",
            moves.join(", ")
        )
    }

    fn problem_help(&self) -> String {
        let fixed = match &self.problem {
            PathProblem::LinkLeavesWorkspace { .. } | PathProblem::OutsideWorkspace => {
                "promptc reads and writes only inside the workspace: replace the link with the file or folder itself"
            }
            PathProblem::DanglingLink | PathProblem::BrokenLink { .. } => {
                "remove the link, or make it point at a file or folder in the workspace"
            }
            PathProblem::GitFolder => {
                "promptc neither reads nor writes the repository's .git folder: choose another path"
            }
            PathProblem::IsSource => "give the outputs a folder of their own",
            PathProblem::IsLink => "replace the link with the folder or file itself, or delete it",
            PathProblem::LinkToOutput { .. } => {
                "replace the link with a file of its own: through it, a build would read back what the last one wrote"
            }
            PathProblem::InOutput => {
                "move the file out of the output folder, and change the path that names it (a `template_file`, say)"
            }
            PathProblem::NotRegularFile { .. } | PathProblem::IsFolder => {
                "move it away: a regular file belongs at this path"
            }
            PathProblem::WouldReplace { .. } => {
                "name a regular file, or a path where there is none yet: promptc writes its outputs as files of their own, neither through a link nor over a device"
            }
            PathProblem::NotAFolder => "move the file away: a folder belongs at this path",
            PathProblem::SecondLink { .. } => "keep one path to the file: remove the other link",
            PathProblem::LinkToHoldingFolder { .. } => {
                "remove the link, or point it at a folder of files of this kind"
            }
            PathProblem::MoreRefused { .. } => {
                "remove the links and special files the folder does not need; validate names the next ones once those named are gone"
            }
            PathProblem::WorkspaceTooLarge { setting, .. } => {
                return format!(
                    "remove files the workspace does not need, or raise `limits.{setting}` in promptc.toml"
                );
            }
            PathProblem::TooManyFiles { .. } => {
                "remove files the folder does not need, or join small ones (a partial can hold several macros)"
            }
            // Standard input is no file to split.
            PathProblem::TooLarge {
                setting: Some(setting),
                ..
            } if self.path.as_os_str() == STDIN => {
                return format!(
                    "give a smaller context (a context is settings, not content), or raise `limits.{setting}` in promptc.toml"
                );
            }
            PathProblem::TooLarge {
                setting: Some(setting),
                ..
            } => return format!("split the file, or raise `limits.{setting}` in promptc.toml"),
            PathProblem::TooLarge { setting: None, .. } => "split the file",
            PathProblem::GeneratedTooLarge { .. } => {
                "delete it: `promptc build --all` writes it again"
            }
            PathProblem::NotUtf8 => "delete it and run `promptc build --all`",
            PathProblem::NameNotUtf8 => {
                "rename it with a UTF-8 name: ids and template names are read from file names"
            }
            PathProblem::TooDeep { limit } => {
                return format!("move its files into a folder at most {limit} levels deep");
            }
            PathProblem::FolderUnreadable { .. } => {
                "make the folder readable, or move it out of the workspace's folders"
            }
            PathProblem::Io(_) => "check the file's permissions and the disk",
        };
        fixed.to_string()
    }
}

impl fmt::Display for PathProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathProblem::LinkLeavesWorkspace { target } => write!(
                f,
                "is a symbolic link to {}, outside the workspace",
                target.display()
            ),
            PathProblem::DanglingLink => write!(f, "is a symbolic link to nothing"),
            PathProblem::BrokenLink { error } => {
                write!(f, "is a symbolic link that cannot be followed ({error})")
            }
            PathProblem::GitFolder => write!(f, "is in a .git folder"),
            PathProblem::IsSource => write!(
                f,
                "is one of the workspace's own files (a template or data file), where an output would go"
            ),
            PathProblem::IsLink => write!(
                f,
                "is a symbolic link among promptc's outputs, where only real folders and files belong"
            ),
            PathProblem::LinkToOutput { target } => write!(
                f,
                "is a symbolic link to {}, in the output folder (`build.out`), which a build writes",
                target.display()
            ),
            PathProblem::InOutput => write!(
                f,
                "lies in the output folder (`build.out`), which a build writes"
            ),
            PathProblem::OutsideWorkspace => write!(f, "lies outside the workspace"),
            PathProblem::NotRegularFile { what } => write!(f, "is a {what}, not a regular file"),
            PathProblem::WouldReplace { what } => {
                write!(f, "is a {what}, which writing the output would replace")
            }
            PathProblem::IsFolder => write!(f, "is a folder, where a file belongs"),
            PathProblem::NotAFolder => write!(f, "is a file, where a folder belongs"),
            PathProblem::TooLarge { limit, .. } => {
                write!(f, "is larger than the limit of {}", human_bytes(*limit))
            }
            PathProblem::GeneratedTooLarge { limit } => {
                write!(f, "is larger than the limit of {}", human_bytes(*limit))
            }
            PathProblem::WorkspaceTooLarge { limit, .. } => write!(
                f,
                "would take the workspace's files past their total limit of {}",
                human_bytes(*limit)
            ),
            PathProblem::TooManyFiles { limit } => write!(
                f,
                "holds more than {limit} files (the most read from one folder), and past its \
                 first {limit} in name order"
            ),
            PathProblem::MoreRefused { more, named } => write!(
                f,
                "holds {more} more refused paths besides the first {named} in name order \
                 (refused as those are, not named one by one)"
            ),
            PathProblem::SecondLink { first } => write!(
                f,
                "is a symbolic link to a file already read as {}",
                first.display()
            ),
            PathProblem::LinkToHoldingFolder { target } => {
                let target = if target.as_os_str().is_empty() {
                    "the workspace's root".to_string()
                } else {
                    target.display().to_string()
                };
                write!(
                    f,
                    "is a symbolic link to {target}, which holds it: the files there would be read again, as files of this folder"
                )
            }
            PathProblem::NotUtf8 => write!(f, "is not valid UTF-8"),
            PathProblem::NameNotUtf8 => write!(f, "has a name that is not valid UTF-8"),
            PathProblem::TooDeep { limit } => {
                write!(f, "is a folder nested more than {limit} levels deep")
            }
            PathProblem::FolderUnreadable { error } => {
                write!(f, "is a folder that cannot be read ({error})")
            }
            PathProblem::Io(error) => write!(f, "{error}"),
        }
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            // The system's words are not a sentence about the path ("Permission denied").
            PathProblem::Io(error) => write!(f, "{}: {error}", self.path.display())?,
            problem => write!(f, "{} {problem}", self.path.display())?,
        }
        for (shown, left) in &self.not_put_back {
            write!(
                f,
                "; {} was replaced before and could not be put back: its previous contents are in {}",
                shown.display(),
                left.display()
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for PathError {}

/// `4 MiB`, `512 KiB`, `100 bytes`.
pub fn human_bytes(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}
