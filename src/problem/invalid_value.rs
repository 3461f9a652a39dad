//! The ways a value can be invalid (`invalid-value`): each says in its own words what is wrong.

use std::fmt;

/// A value that has the right type but not a value its field accepts.
#[derive(Clone, Debug, PartialEq)]
pub enum InvalidValue {
    /// A value outside a fixed set (`type = "strng"`).
    NotOneOf {
        value: String,
        allowed: Vec<String>,
        suggestion: Option<String>,
    },
    /// A number below its minimum or above its maximum.
    OutOfRange {
        value: String,
        /// `true` for a minimum, `false` for a maximum.
        minimum: bool,
        limit: String,
    },
    /// A string (or a key, with `key`) that does not have the form its field needs.
    BadForm {
        value: String,
        key: bool,
        expected: Form,
    },
    /// An empty string where a name is needed.
    Empty,
    /// An MCP settings file's server whose name (the key its settings are under) is empty.
    EmptyServerName,
    /// A shared parameter (under the manifest's `[parameters]`) that `use`s another.
    SharedParameterUses,
    /// A folder setting (`build.out`, `paths.components`, …) that names the workspace root
    /// itself: a build would write among the sources, a load would read every file of the
    /// workspace (promptc.toml too) as one kind.
    FolderIsRoot { setting: String },
    /// A folder promptc writes in (`build.out`, `paths.schema`) that is a file.
    FileWhereFolderBelongs { path: String },
    /// A folder the manifest names to read from (`paths.components`, …) that is a file, or
    /// that does not exist beside one of a near name: its files would silently count as none.
    NoSuchFolder {
        path: String,
        is_file: bool,
        /// A folder beside where it was looked for, with a near name.
        suggestion: Option<String>,
    },
    /// A build entry writing a path an earlier entry writes.
    OutputTaken {
        path: String,
        /// Written by the families × contexts product the entries add to.
        by_product: bool,
    },
    /// A name that becomes part of an output's path (a family, a context, an entry's
    /// `output`) and differs from an earlier one only by case.
    DiffersOnlyByCase { name: String, other: String },
    /// A name that becomes part of an output's path and is longer than a file name may be.
    NameTooLong { name: String, limit: usize },
    /// An MCP server of a context named as an earlier one (labelled): its tools would be
    /// listed twice and named alike in tool definitions.
    DuplicateServer { name: String },
    /// A name that becomes part of an output's path and that Windows cannot give a file:
    /// a device's name (`con`, `nul`, `com1`, …, with any extension) or one ending with a dot
    /// or a space.
    NotPortable { name: String },
    /// A file of the workspace that a clone on another system cannot hold as it is: named so
    /// that Windows cannot create it (see `NotPortable`), or, with `other`, named as that
    /// other file but for case, which a file system that ignores case makes one file.
    FileNotPortable { path: String, other: Option<String> },
    /// A list, text or table with more (or, with `most` false, fewer) items, characters or
    /// keys than its field allows. The value is not quoted: a list past its limit has
    /// thousands of items, and quoting it left no room for what is wrong.
    Count {
        most: bool,
        limit: u64,
        /// `items`, `characters` or `keys`.
        of: &'static str,
    },
    /// A schema rule with no wording of its own here: the validator's message.
    Schema { message: String },
    /// A value the schema accepts but the typed model does not: the deserializer's message.
    Model { message: String },
}

/// The form a string must have, as a message says it.
#[derive(Clone, Debug, PartialEq)]
pub enum Form {
    /// An id: it names files and is written in lists.
    Id,
    /// A name templates can use.
    Name,
    /// A calendar date.
    Date,
    /// A build output under `build.out`.
    OutputPath,
    /// A folder of the workspace that promptc writes in.
    WrittenFolder,
    /// A folder of the workspace that promptc reads.
    Folder,
    /// A file a field names, from the folder of the file that names it.
    FilePath,
    /// A pattern promptc has no words for, shown as it is.
    Matching(String),
    /// The validator's own description.
    Described(String),
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Form::Id => f.write_str(
                "ASCII letters, digits, `_`, `.` and `-`, starting with a letter or a digit",
            ),
            Form::Name => f.write_str(
                "ASCII letters, digits and `_`, not starting with a digit (a name templates can use)",
            ),
            Form::Date => f.write_str("a date that exists, written YYYY-MM-DD"),
            Form::WrittenFolder => f.write_str(
                "a folder inside the workspace, its names separated by `/`, without `..` or NUL characters",
            ),
            Form::Folder => f.write_str(
                "a folder inside the workspace, its names separated by `/` (no `\\`, drive letter or NUL character)",
            ),
            Form::FilePath => f.write_str(
                "a path to a file inside the workspace, from the folder of the file that names it, its names separated by `/` (no NUL character)",
            ),
            Form::OutputPath => f.write_str(
                "`<folder>/<name>.md`, each part of ASCII letters, digits, `_`, `.` and `-` starting with a letter or a digit",
            ),
            Form::Matching(pattern) => write!(f, "text matching `{pattern}`"),
            Form::Described(text) => f.write_str(text),
        }
    }
}

impl InvalidValue {
    pub(super) fn help(&self) -> Option<String> {
        match self {
            InvalidValue::NotOneOf {
                suggestion: Some(suggestion),
                ..
            } => Some(format!("did you mean `{suggestion}`?")),
            InvalidValue::Empty => Some("write a value, or leave the key out".into()),
            InvalidValue::EmptyServerName => Some(
                "name the server: its name is the key its settings are written under (`\"github\": { … }`)".into(),
            ),
            InvalidValue::OutputTaken {
                by_product: false, ..
            } => Some("give one of the entries its own `output`".into()),
            InvalidValue::OutputTaken { .. } => Some(
                "give the entry its own `output`: the families × contexts product writes `<family>/<context>.md`".into(),
            ),
            InvalidValue::DiffersOnlyByCase { .. } => {
                Some("rename one of them, by more than case or accents".into())
            }
            InvalidValue::NameTooLong { .. } => {
                Some("shorten it: file systems refuse longer file names".into())
            }
            InvalidValue::DuplicateServer { .. } => Some(
                "give each server its own `name` (it is the prefix of its tools' names), or remove one of them".into(),
            ),
            InvalidValue::NotPortable { .. } => Some(
                "rename it: a clone of the repository on Windows cannot hold the output, and `check` would fail there".into(),
            ),
            InvalidValue::FileNotPortable { other: None, .. } => Some(
                "rename the file (and what names it: an id, a `template_file`, an include)".into(),
            ),
            InvalidValue::FileNotPortable { other: Some(_), .. } => Some(
                "rename one of them by more than case or accents (and what names it: an id, a `template_file`, an include)".into(),
            ),
            InvalidValue::FolderIsRoot { setting } => {
                let default = match setting.as_str() {
                    "build.out" => "examples/prompts",
                    "paths.contexts" => "examples/contexts",
                    other => other.strip_prefix("paths.").unwrap_or("a-folder"),
                };
                Some(format!(
                    "the root holds promptc.toml and every other folder: name a folder of its own (`{default}`), or leave the setting out for its default"
                ))
            }
            InvalidValue::FileWhereFolderBelongs { .. } => Some(
                "name a folder of its own (promptc creates it), or move the file away".into(),
            ),
            InvalidValue::NoSuchFolder {
                suggestion: Some(suggestion),
                ..
            } => Some(format!("did you mean `{suggestion}`?")),
            InvalidValue::NoSuchFolder { .. } => Some(
                "name a folder of the workspace, or leave the setting out for its default".into(),
            ),
            InvalidValue::Count {
                most: true,
                limit,
                of,
            } => Some(format!("keep it to at most {limit} {of}")),
            InvalidValue::Count { limit, of, .. } => {
                Some(format!("give it at least {limit} {of}"))
            }
            // One folder below `build.out`, one file in it: what `build --all` removes and
            // `check` compares is known by that form.
            InvalidValue::BadForm {
                expected: Form::OutputPath,
                ..
            } => Some(
                "write one folder and a file name below `build.out`, such as `claude/plan.md`: no deeper folders, no folder whose name starts with a dot".into(),
            ),
            // A date and a time (`2026-11-01T10:00:00`, TOML's datetime or a text): the date
            // alone is what a context holds.
            InvalidValue::BadForm {
                value,
                expected: Form::Date,
                ..
            } => {
                let text = value.trim_matches(['`', '"']);
                let date = text
                    .get(..10)
                    .filter(|_| text.get(10..).is_some_and(|rest| rest.starts_with(['T', 't', ' '])))?;
                Some(format!("a date has no time of day: write `{date}`"))
            }
            _ => None,
        }
    }
}

impl fmt::Display for InvalidValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidValue::NotOneOf { value, allowed, .. } => write!(
                f,
                "invalid value {value}: expected one of {}",
                allowed.join(", ")
            ),
            InvalidValue::OutOfRange {
                value,
                minimum: true,
                limit,
            } => write!(f, "invalid value {value}: the smallest allowed is {limit}"),
            InvalidValue::OutOfRange { value, limit, .. } => {
                write!(f, "invalid value {value}: the largest allowed is {limit}")
            }
            InvalidValue::BadForm {
                value,
                key: true,
                expected,
            } => write!(f, "invalid name {value}: expected {expected}"),
            InvalidValue::BadForm {
                value, expected, ..
            } => write!(f, "invalid value {value}: expected {expected}"),
            InvalidValue::Empty => write!(f, "the value is empty"),
            InvalidValue::EmptyServerName => write!(f, "the server's name is empty"),
            InvalidValue::FileNotPortable { path, other: None } => write!(
                f,
                "invalid value: the file `{path}` is named so that Windows cannot create it (a device's name, a character of `<>:\"|?*\\`, or a dot or space at the end): a clone of the repository there cannot hold it"
            ),
            InvalidValue::FileNotPortable {
                path,
                other: Some(other),
            } => write!(
                f,
                "invalid value: the file `{path}` differs from `{other}` only by {}: a clone of the repository on {} holds one file for both",
                how_they_differ(path, other),
                where_one_file(path, other),
            ),
            InvalidValue::DiffersOnlyByCase { name, other } => write!(
                f,
                "invalid value: `{name}` differs from `{other}` only by {}: their outputs are one file on {}",
                how_they_differ(name, other),
                where_one_file(name, other),
            ),
            InvalidValue::OutputTaken {
                path,
                by_product: false,
            } => write!(
                f,
                "invalid value: an earlier build entry already writes `{path}`"
            ),
            InvalidValue::OutputTaken {
                path,
                by_product: true,
            } => write!(
                f,
                "invalid value: the families × contexts product already writes `{path}`"
            ),
            InvalidValue::NameTooLong { name, limit } => write!(
                f,
                "invalid value: `{name}` would name an output file or folder of more than {limit} bytes"
            ),
            InvalidValue::DuplicateServer { name } => write!(
                f,
                "invalid value: a second MCP server named `{name}`: the prompt would list it twice, and its tools' names would be taken twice in tool definitions"
            ),
            InvalidValue::NotPortable { name } => write!(
                f,
                "invalid value: `{name}` would name an output file or folder that Windows cannot create (a device's name, one holding any of `<>:\"|?*\\` or a control character, or one ending with a dot or a space)"
            ),
            InvalidValue::SharedParameterUses => write!(
                f,
                "invalid value: a shared parameter cannot itself `use` another"
            ),
            InvalidValue::FileWhereFolderBelongs { path } => write!(
                f,
                "invalid value: `{path}` is a file, where promptc writes in a folder"
            ),
            InvalidValue::NoSuchFolder {
                path,
                is_file: false,
                ..
            } => write!(f, "invalid value: there is no folder `{path}`"),
            InvalidValue::NoSuchFolder { path, .. } => write!(
                f,
                "invalid value: `{path}` is a file, where promptc reads a folder"
            ),
            InvalidValue::FolderIsRoot { setting } => write!(
                f,
                "invalid value: `{setting}` must name a folder below the workspace root"
            ),
            InvalidValue::Count {
                most: true,
                limit,
                of,
            } => write!(f, "invalid value: more than {limit} {of}"),
            InvalidValue::Count { limit, of, .. } => {
                write!(f, "invalid value: fewer than {limit} {of}")
            }
            InvalidValue::Schema { message } | InvalidValue::Model { message } => {
                write!(f, "invalid value: {message}")
            }
        }
    }
}

/// How two names one file system holds as one file differ: by case, or by how their accented
/// letters are encoded (a composed `é`, or `e` and a combining accent), which look alike.
fn how_they_differ(name: &str, other: &str) -> &'static str {
    use unicode_normalization::UnicodeNormalization as _;
    if name.to_lowercase() == other.to_lowercase() {
        "case"
    } else if name.nfd().eq(other.nfd()) {
        "how its accented letters are encoded (a composed letter, or a letter and a combining accent)"
    } else {
        "case and how its accented letters are encoded (a composed letter, or a letter and a combining accent)"
    }
}

/// The file systems that hold two such names as one file.
fn where_one_file(name: &str, other: &str) -> &'static str {
    if name.to_lowercase() == other.to_lowercase() {
        "a file system that ignores case (macOS, Windows)"
    } else {
        "macOS (whose file systems ignore how accents are encoded)"
    }
}
