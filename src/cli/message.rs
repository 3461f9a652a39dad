//! What the commands tell on stderr besides diagnostics and errors: files written and removed,
//! outputs found stale, summaries. Each line's wording lives here.

use std::fmt;
use std::path::Path;

use crate::emit::matrix::Mismatch;
use crate::problem::Problem;

pub enum Message<'a> {
    /// A file written: an output, a schema.
    Wrote(&'a dyn fmt::Display),
    /// An output of an entry that left the build matrix, removed.
    Removed(&'a str),
    /// A temporary file of an interrupted build, removed.
    RemovedStray(&'a str),
    /// A file in an output folder that is no output and that promptc did not write: left as
    /// it is, but `check` fails on it.
    ForeignOutput(&'a str),
    /// `build --all`'s closing line.
    Built {
        outputs: usize,
        written: usize,
        unchanged: usize,
        removed: usize,
    },
    /// `build --all` stopped before writing.
    NothingWritten,
    /// `build --all` or `check` found no entry to compile, and why.
    EmptyMatrix(EmptyMatrix<'a>),
    /// `check` of an empty matrix: a CI gate that compares nothing is worth a warning.
    CheckedNothing(EmptyMatrix<'a>),
    /// A matrix entry that does not compile; `errors_above` when its diagnostics were told
    /// with an earlier entry.
    EntryFailed {
        entry: &'a crate::emit::matrix::MatrixEntry,
        errors_above: bool,
    },
    /// How many more entries failed for the errors above than were named one by one.
    MoreEntriesFailed { more: usize, named: usize },
    /// How many entries after the one told of were not compiled at all: the processor-time
    /// limit had been reached (told above, with the first).
    EntriesNotCompiled { left: usize },
    /// Why an entry's selection names no variant, below [`Message::EntryFailed`].
    SelectionProblem(&'a Problem),
    /// How a committed output differs from a fresh compile.
    Mismatch(&'a Mismatch),
    /// How many more files of the output folder that should not be there (unexpected or
    /// stray) `check` found than it names one by one.
    MoreUnexpected { more: usize, named: usize },
    /// `check` found nothing to do.
    UpToDate(usize),
    /// `check`'s closing line when committed outputs differ: stale, missing, and files that
    /// should not be there.
    OutputsDiffer {
        stale: usize,
        missing: usize,
        /// Outputs of entries that left the matrix, which `build --all` removes.
        unexpected: usize,
        /// Temporary files of an interrupted build, which `build --all` removes too.
        stray: usize,
        /// Files in the output folder that promptc did not write.
        foreign: usize,
        /// Entries that did not compile (their errors printed above).
        not_compiled: usize,
    },
    /// `validate` found nothing.
    Valid(&'a Path),
    /// A compile of one request that names no context, in a workspace without a
    /// `default_context` but with contexts: it compiles an empty one, and says so.
    NoContextGiven { first: &'a str, count: usize },
    /// `new` wrote its files into a workspace that has errors: in the files written, and
    /// elsewhere.
    WorkspaceHasErrors { in_new: usize, elsewhere: usize },
    /// `--set NAME=…` names nothing a template reads.
    SetNameUnread {
        name: &'a str,
        suggestion: Option<String>,
    },
    /// A rule named to be switched off (`--disable-rule`, a context's `rule_toggles`) that no
    /// rule read is called: the rule it meant stays on.
    RuleNameUnknown {
        name: &'a str,
        /// `--disable-rule` or `rule_toggles`.
        by: &'static str,
        suggestion: Option<String>,
    },
    /// A rule left out of a build because its globs cost too much to match against the
    /// active files (a named context's own are told by `validate`, at its `active_files`).
    RuleTooCostly {
        problem: &'a crate::problem::RulesProblem,
    },
    /// `--dialect` given for a variant without native tool calls: its tools are written in
    /// the prompt, and the dialect changes nothing.
    DialectUnused {
        dialect: &'static str,
        variant: &'a str,
    },
    /// A plain `build` compiled the fallback family for a context whose model routes to
    /// another one.
    ModelNotRouted {
        model: &'a str,
        routes_to: &'a str,
        built: &'a str,
    },
    /// SOURCE_DATE_EPOCH is set to no date (`is_number`: to a number outside the dates a
    /// context can hold): it dates no compile.
    EpochIgnored { value: &'a str, is_number: bool },
    /// Another promptc process builds the workspace's outputs: this one waits for it.
    WaitingForOutputs,
    /// A schema file that is not what `promptc schema` writes.
    StaleSchema(&'a Path),
    /// A schema file `promptc schema` writes that is not there.
    MissingSchema(&'a Path),
    /// `init` wrote the library.
    Initialised {
        files: usize,
        outputs: usize,
        dir: &'a Path,
    },
    /// What to run after `init`.
    NextAfterInit(&'a Path),
    /// What to do with the file `new` wrote for it to count.
    NextAfterNew(NextAfterNew<'a>),
}

/// Why the build matrix holds no entry.
pub enum EmptyMatrix<'a> {
    /// No variant: no family to compile.
    NoVariants,
    /// No context file in the contexts folder (`paths.contexts`).
    NoContexts { folder: &'a str },
    /// `[build]` lists no family or no context, and no entries.
    NoneListed,
}

/// What a file `new` wrote needs before it changes a prompt.
pub enum NextAfterNew<'a> {
    /// A tool or component: listed in a variant, which `variant` names with its file, when
    /// the workspace has one.
    List {
        /// `tools` or `components`.
        field: &'static str,
        id: &'a str,
        /// A component's slot, which the variant's template places.
        slot: Option<String>,
        variant: Option<(&'a str, &'a Path)>,
    },
    /// A variant extending `parent`.
    Extending {
        id: &'a str,
        parent: &'a str,
        file: &'a Path,
        /// `build.families` lists the families the matrix compiles, and not this one.
        unbuilt: bool,
    },
    /// A base variant, with a template of its own.
    Base {
        id: &'a str,
        file: &'a Path,
        unbuilt: bool,
    },
}

impl Message<'_> {
    /// Progress and success lines, which `--quiet` leaves out; problems are always told.
    pub fn is_progress(&self) -> bool {
        matches!(
            self,
            Message::Wrote(_)
                | Message::Removed(_)
                | Message::RemovedStray(_)
                | Message::Built { .. }
                | Message::UpToDate(_)
                | Message::Valid(_)
                | Message::NoContextGiven { .. }
                | Message::Initialised { .. }
                | Message::NextAfterInit(_)
                | Message::NextAfterNew(_)
                | Message::WaitingForOutputs
        )
    }
}

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::Wrote(path) => write!(f, "wrote {path}"),
            Message::Removed(path) => write!(f, "removed {path}"),
            Message::RemovedStray(path) => write!(
                f,
                "removed {path} (a temporary file left by an interrupted build)"
            ),
            Message::Built {
                outputs,
                written,
                unchanged,
                removed,
            } => write!(
                f,
                "{outputs} {}: {written} written, {unchanged} unchanged, {removed} removed",
                if *outputs == 1 { "output" } else { "outputs" }
            ),
            Message::NothingWritten => write!(f, "error: nothing was written"),
            Message::EntryFailed {
                entry,
                errors_above,
            } => write!(
                f,
                "error: {} does not compile{}",
                entry.label(),
                if *errors_above { " (errors above)" } else { "" }
            ),
            Message::MoreEntriesFailed { more, named } => write!(
                f,
                "error: {more} more {} not compile for the errors above (the first {named} are \
                 named above)",
                if *more == 1 {
                    "entry does"
                } else {
                    "entries do"
                }
            ),
            Message::EntriesNotCompiled { left } => write!(
                f,
                "error: {left} more {} not compiled: promptc had stopped at its processor-time \
                 limit (above)",
                if *left == 1 {
                    "entry was"
                } else {
                    "entries were"
                }
            ),
            Message::SelectionProblem(problem) => write!(f, "  {problem}"),
            Message::Mismatch(mismatch) => mismatch_line(f, mismatch),
            Message::MoreUnexpected { more, named } => write!(
                f,
                "unexpected: {more} more files that should not be in the output folder, besides \
                 the first {named} named (counted in the line below, not named one by one)"
            ),
            Message::UpToDate(outputs) => write!(f, "ok: {outputs} outputs are up to date"),
            Message::EmptyMatrix(why) | Message::CheckedNothing(why) => {
                f.write_str(if matches!(self, Message::CheckedNothing(_)) {
                    "warning: `check` compared nothing: the build matrix is empty: "
                } else {
                    "note: the build matrix is empty: "
                })?;
                match why {
                    EmptyMatrix::NoVariants => f.write_str(
                        "the workspace has no variant (`promptc new variant ID` writes one)",
                    ),
                    EmptyMatrix::NoContexts { folder } => write!(
                        f,
                        "there is no context file in {folder}/ (each one there is compiled \
                         with every family)"
                    ),
                    EmptyMatrix::NoneListed => f.write_str(
                        "`[build]` in promptc.toml lists no family or no context to compile",
                    ),
                }
            }
            Message::OutputsDiffer {
                stale,
                missing,
                unexpected,
                stray,
                foreign,
                not_compiled,
            } => {
                let other = unexpected + stray;
                let parts: Vec<String> = [
                    (*stale, "stale"),
                    (*missing, "missing"),
                    (*unexpected + *foreign, "unexpected"),
                    (*stray, "stray temporary"),
                ]
                .into_iter()
                .filter(|(count, _)| *count > 0)
                .map(|(count, what)| format!("{count} {what}"))
                .collect();
                let parts = parts.join(", ");
                // `build --all` leaves alone the files it did not write: they are for the
                // user to move or delete.
                if *foreign > 0 && stale + missing + other + not_compiled == 0 {
                    return write!(
                        f,
                        "error: the output folder holds {foreign} file(s) promptc did not write; \
                         move or delete them (`promptc build --all` leaves them alone)"
                    );
                }
                let and_foreign = if *foreign > 0 {
                    format!(", then move or delete the {foreign} file(s) promptc did not write")
                } else {
                    String::new()
                };
                match not_compiled {
                    0 => write!(
                        f,
                        "error: the committed outputs differ ({parts}); run `promptc build --all`{and_foreign}"
                    ),
                    1 => write!(
                        f,
                        "error: the committed outputs differ ({parts}), and an entry did not \
                         compile: fix the errors above, then run `promptc build --all`{and_foreign}"
                    ),
                    n => write!(
                        f,
                        "error: the committed outputs differ ({parts}), and {n} entries did not \
                         compile: fix the errors above, then run `promptc build --all`{and_foreign}"
                    ),
                }
            }
            Message::Valid(root) => write!(f, "ok: {} is valid", root.display()),
            Message::SetNameUnread { name, suggestion } => {
                write!(
                    f,
                    "warning: `--set {name}` changes nothing: no template reads `{name}`"
                )?;
                match suggestion {
                    Some(near) => write!(f, "; did you mean `{near}`?"),
                    None => Ok(()),
                }
            }
            Message::ForeignOutput(path) => write!(
                f,
                "warning: {path} is not an output of the build matrix, and promptc did not write it: it is left as it is, but `promptc check` fails until it is moved or deleted"
            ),
            Message::ModelNotRouted {
                model,
                routes_to,
                built,
            } => write!(
                f,
                "note: the context's model `{model}` routes to family `{routes_to}`, but a build without `--model` compiles the fallback family, `{built}`: pass `--model {model}` to route it (as the library's `Selection::route()` does), or `--family` to choose"
            ),
            Message::DialectUnused { dialect, variant } => write!(
                f,
                "warning: `--dialect {dialect}` changes nothing: variant `{variant}` does not use native tool calls (`native_tools = true`), so its tools are written in the prompt"
            ),
            Message::RuleNameUnknown {
                name,
                by,
                suggestion,
            } => {
                write!(
                    f,
                    "warning: `{by}` names `{name}`, but no rule read is called so (by name or path)"
                )?;
                match suggestion {
                    Some(near) => write!(f, "; did you mean `{near}`?"),
                    None => Ok(()),
                }
            }
            Message::RuleTooCostly { problem } => {
                write!(f, "warning: {problem}")?;
                match problem.help() {
                    Some(help) => write!(f, "; {help}"),
                    None => Ok(()),
                }
            }
            Message::WaitingForOutputs => f.write_str(
                "note: another promptc process is building this workspace's outputs; waiting for it to finish",
            ),
            Message::EpochIgnored { value, is_number } => {
                let what = if *is_number {
                    "is outside 1970-01-01 to 9999-12-31"
                } else {
                    "is not a number of seconds"
                };
                write!(
                    f,
                    "warning: SOURCE_DATE_EPOCH `{value}` {what}: it is ignored, and a compile \
                     whose context sets no `date` has none; set it to the seconds since \
                     1970-01-01 (as `date +%s` prints them), or unset it"
                )
            }
            Message::NoContextGiven { first, count } => {
                let others = match count {
                    0 | 1 => String::new(),
                    count => format!(" (or another of the {count})"),
                };
                write!(
                    f,
                    "note: no context given, and promptc.toml sets no `default_context`: \
                     an empty one is used (no date, no working folder); pass \
                     `--context {first}`{others}, or set `default_context = \"{first}\"`"
                )
            }
            Message::WorkspaceHasErrors { in_new, elsewhere } => {
                let found = match (in_new, elsewhere) {
                    (0, elsewhere) => format!("{elsewhere} error(s) in other files"),
                    (in_new, 0) => format!("{in_new} error(s) in the file(s) written"),
                    (in_new, elsewhere) => format!(
                        "{in_new} error(s) in the file(s) written and {elsewhere} in other files"
                    ),
                };
                write!(
                    f,
                    "note: the workspace has {found}; `promptc validate` lists them"
                )
            }
            Message::StaleSchema(path) => write!(
                f,
                "stale: {} differs from the generated schema (run `promptc schema`)",
                path.display()
            ),
            Message::MissingSchema(path) => write!(
                f,
                "missing: {} is not there (run `promptc schema` to write it)",
                path.display()
            ),
            Message::Initialised {
                files,
                outputs,
                dir,
            } => write!(
                f,
                "wrote {files} files of the default library into {dir}, and built its {outputs} outputs",
                dir = dir.display()
            ),
            Message::NextAfterInit(dir) if dir.as_os_str() == "." => {
                write!(f, "next: promptc check && promptc build --family next-gen")
            }
            // A name a shell line cannot carry as it is (a control character, bytes that are
            // not UTF-8) gets no command to paste.
            Message::NextAfterInit(dir)
                if dir
                    .to_str()
                    .is_none_or(|text| text.chars().any(char::is_control)) =>
            {
                write!(
                    f,
                    "next: in the new folder, promptc check && promptc build --family next-gen"
                )
            }
            Message::NextAfterInit(dir) => write!(
                f,
                "next: cd {} && promptc check && promptc build --family next-gen",
                shell_word(dir)
            ),
            Message::NextAfterNew(next) => next_after_new(f, next),
        }
    }
}

/// A path as one word of a POSIX shell's command line, to be pasted as it is: quoted where it
/// holds a space or another character the shell reads, and never read as an option.
fn shell_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    let text = if text.starts_with('-') {
        format!("./{text}")
    } else {
        text.into_owned()
    };
    match shlex::try_quote(&text) {
        Ok(quoted) => quoted.into_owned(),
        Err(_) => text,
    }
}

fn next_after_new(f: &mut fmt::Formatter<'_>, next: &NextAfterNew<'_>) -> fmt::Result {
    match next {
        NextAfterNew::List {
            field,
            id,
            slot,
            variant: Some((variant, file)),
        } => {
            write!(
                f,
                "next: list `{id}` in `{field}` of a variant ({}, say)",
                file.display()
            )?;
            if let Some(slot) = slot {
                write!(
                    f,
                    ", write `{{{{ {slot} }}}}` in its template where the section belongs"
                )?;
            }
            write!(f, ", then `promptc build --variant {variant}`")
        }
        NextAfterNew::List {
            field,
            id,
            variant: None,
            ..
        } => write!(
            f,
            "next: `promptc new variant ID` for the fallback family, then list `{id}` in its `{field}`"
        ),
        NextAfterNew::Extending {
            id,
            parent,
            file,
            unbuilt,
        } => {
            write!(
                f,
                "next: set in {} what differs from `{parent}` (`add_components`, `add_tools`, `placeholders`, …), then `promptc build --variant {id}`",
                file.display()
            )?;
            unbuilt_family(f, id, *unbuilt)
        }
        NextAfterNew::Base { id, file, unbuilt } => {
            write!(
                f,
                "next: `promptc new component ID` and `promptc new tool NAME`, list them in {}, then `promptc build --variant {id}`",
                file.display()
            )?;
            unbuilt_family(f, id, *unbuilt)
        }
    }
}

/// The end of a new variant's next steps when `build.families` leaves its family out.
fn unbuilt_family(f: &mut fmt::Formatter<'_>, id: &str, unbuilt: bool) -> fmt::Result {
    if unbuilt {
        write!(
            f,
            "; add `{id}` to `build.families` in promptc.toml, which lists the families `validate`, `check` and `build --all` compile"
        )?;
    }
    Ok(())
}

fn mismatch_line(f: &mut fmt::Formatter<'_>, mismatch: &Mismatch) -> fmt::Result {
    match mismatch {
        Mismatch::Stale { path, .. } => write!(f, "stale: {path}"),
        Mismatch::Missing { path } => write!(f, "missing: {path}"),
        Mismatch::Unexpected { path, owned: true } => {
            write!(f, "unexpected: {path} (no longer in the build matrix)")
        }
        Mismatch::Unexpected { path, owned: false } => write!(
            f,
            "unexpected: {path} is not an output of the build matrix, and promptc did not \
             write it: move or delete it"
        ),
        Mismatch::Stray { path } => write!(
            f,
            "stray: {path} is a temporary file left by an interrupted build: `promptc build \
             --all` removes it"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_of_one_output_says_output() {
        let built = |outputs| {
            Message::Built {
                outputs,
                written: outputs,
                unchanged: 0,
                removed: 0,
            }
            .to_string()
        };
        assert_eq!(built(1), "1 output: 1 written, 0 unchanged, 0 removed");
        assert_eq!(built(2), "2 outputs: 2 written, 0 unchanged, 0 removed");
    }
}
