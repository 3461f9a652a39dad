//! The one printer of the command line: a command's result on stdout; diagnostics, messages
//! and the closing error on stderr. Colour is decided here, once.

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, PoisonError};

use super::ColorChoice;
use super::error::CliError;
use super::message::Message;
use crate::diagnostic::Diagnostics;
use crate::report;
use crate::report::diagnostics::{DiagnosticRecord, records};
use crate::report::visible::{visible, visible_lines};
use crate::source::Sources;

pub struct Printer {
    color: bool,
    /// `--quiet`: progress and success lines are left out.
    quiet: bool,
    /// `--format json`: what a failing command prints on stdout (see [`Printer::json`]).
    json: Option<Mutex<JsonFailure>>,
    /// The errors and warnings printed so far: a command that reports in several batches (the
    /// settings it reads, then the compile) closes with one count of them all.
    counted: Mutex<(usize, usize)>,
    /// Each diagnostic printed so far, by its file, place and words: one found twice (a
    /// context file read as the workspace's and as the one `--context` names) is told once.
    told: Mutex<std::collections::HashSet<(String, usize, usize, String)>>,
}

/// What a command that prints JSON has said so far, for the document it prints on stdout
/// should it fail before printing its result.
#[derive(Default)]
struct JsonFailure {
    records: Vec<DiagnosticRecord>,
    result_written: bool,
}

impl Printer {
    pub fn new(choice: ColorChoice) -> Self {
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            // The conventions of no-color.org and bixense.com/clicolors, as clap's own
            // output reads them: a non-empty NO_COLOR wins; CLICOLOR_FORCE colours a pipe (as
            // in CI logs that render it); CLICOLOR=0 turns colour off; otherwise a terminal
            // gets colour unless its TERM cannot show it (`dumb`, or none but in CI).
            ColorChoice::Auto => {
                let clicolor = anstyle_query::clicolor();
                !anstyle_query::no_color()
                    // `CLICOLOR_FORCE=0` forces nothing, as the convention has it.
                    && ((anstyle_query::clicolor_force()
                        && std::env::var_os("CLICOLOR_FORCE").is_some_and(|value| value != "0"))
                        || (clicolor != Some(false)
                            && std::io::stderr().is_terminal()
                            && (anstyle_query::term_supports_color()
                                || clicolor == Some(true)
                                // CI runners that render colour set no TERM; one that says
                                // `dumb` means it.
                                || (anstyle_query::is_ci() && std::env::var_os("TERM").is_none()))))
            }
        };
        Printer {
            color,
            quiet: false,
            json: None,
            counted: Mutex::default(),
            told: Mutex::default(),
        }
    }

    /// For a command asked for `--format json`: should it fail before it prints its result,
    /// stdout gets its diagnostics and the error it ended with as JSON, in the shape of
    /// `validate --format json`, so that a program reading stdout always reads JSON. People
    /// still read them on stderr.
    pub fn json(mut self, json: bool) -> Self {
        self.json = json.then(Mutex::default);
        self
    }

    /// An error about no file (a matrix entry whose selection names no variant), kept for the
    /// JSON a failing command prints; people read it as a message.
    pub fn json_unlocated(&self, code: &'static str, message: String, help: Option<String>) {
        self.with_json(|json| {
            json.records
                .push(DiagnosticRecord::unlocated(code, message, help));
        });
    }

    /// The diagnostics printed so far, as records, when the command prints JSON.
    pub fn json_records(&self) -> Vec<DiagnosticRecord> {
        self.with_json(|json| json.records.clone())
            .unwrap_or_default()
    }

    /// `change` applied to what a command printing JSON has said, when it prints JSON.
    fn with_json<T>(&self, change: impl FnOnce(&mut JsonFailure) -> T) -> Option<T> {
        let json = self.json.as_ref()?;
        Some(change(
            &mut json.lock().unwrap_or_else(PoisonError::into_inner),
        ))
    }

    /// Whether `--quiet` leaves out progress.
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    /// Writes a report for people (a diff, an explanation, a listing) to stdout, with every
    /// control character but line breaks and tabs shown (see [`visible_lines`]): the names
    /// and texts it quotes come from the workspace, which a pull request may have written.
    /// Prompts and JSON go out as they are, through [`Printer::result`].
    pub fn report(&self, text: &str) -> Result<(), CliError> {
        self.result(&visible_lines(text))
    }

    /// Writes a command's result to stdout. A closed pipe (`promptc build | head`) is a reader
    /// that has seen enough, not an error.
    pub fn result(&self, text: &str) -> Result<(), CliError> {
        self.with_json(|json| json.result_written = true);
        let mut stdout = std::io::stdout().lock();
        match stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(CliError::Stdout(error))
            }
            _ => Ok(()),
        }
    }

    /// Prints diagnostics rustc-style; their count closes the command's report (see
    /// [`Printer::close`]).
    pub fn diagnostics(&self, diagnostics: Diagnostics, sources: &Sources) {
        let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
        let sorted: Vec<_> = diagnostics
            .sorted()
            .into_iter()
            .filter(|diagnostic| {
                let span = diagnostic.span;
                let file = if sources.holds(span.source) {
                    sources.get(span.source).path.display().to_string()
                } else {
                    format!("{:?}", span.source)
                };
                let words = format!("{}: {}", diagnostic.problem.code(), diagnostic.problem);
                told.insert((file, span.start, span.end, words))
            })
            .collect();
        drop(told);
        if sorted.is_empty() {
            return;
        }
        self.with_json(|json| json.records.extend(records(&sorted, &[sources])));
        let (errors, warnings) = report::diagnostics::counts(&sorted);
        let mut counted = self.counted.lock().unwrap_or_else(PoisonError::into_inner);
        counted.0 += errors;
        counted.1 += warnings;
        stderr(&report::diagnostics::human_unsummed(
            &sorted, sources, self.color,
        ));
    }

    /// Prints the count of the diagnostics printed since the last count: before a message,
    /// and before the error the command ended with.
    pub fn close(&self) {
        let (errors, warnings) =
            std::mem::take(&mut *self.counted.lock().unwrap_or_else(PoisonError::into_inner));
        if let Some(summary) = report::diagnostics::summary_of(errors, warnings) {
            stderr(&format!("{summary}\n"));
        }
    }

    pub fn message(&self, message: Message<'_>) {
        if self.quiet && message.is_progress() {
            return;
        }
        // The diagnostics before it are counted before it: batches printed one after
        // another share one count.
        self.close();
        // Messages name files, whose names a workspace chooses; each message is one line.
        stderr(&format!("{}\n", visible(&message.to_string())));
    }

    /// The error a command ended with, unless it was printed already.
    pub fn error(&self, error: &CliError) {
        self.json_failure(error);
        if let CliError::Reported = error {
            return;
        }
        let mut text = format!("error: {}\n", visible(&error.to_string()));
        if let Some(help) = error.help() {
            text.push_str(&format!("  = help: {}\n", visible(&help)));
        }
        if let CliError::NothingWritten(_) = error {
            text.push_str(&format!("{}\n", Message::NothingWritten));
        }
        stderr(&text);
    }

    /// A failing command's diagnostics and closing error on stdout, when it prints JSON and
    /// has not printed its result (which says how it failed itself, as `check` does).
    fn json_failure(&self, error: &CliError) {
        let Some(mut failure) = self.with_json(std::mem::take) else {
            return;
        };
        if failure.result_written {
            return;
        }
        if !matches!(error, CliError::Reported) {
            failure.records.push(DiagnosticRecord::unlocated(
                error.code(),
                error.to_string(),
                error.help(),
            ));
        }
        let _ = self.result(&report::diagnostics::json_records(&failure.records));
    }
}

/// Every line promptc writes to stderr passes here. A failing stderr has no one to tell.
fn stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
