use std::path::Path;

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, ValueEnum};

use super::{CliError, Printer, source_date_epoch, workspace_root};
use crate::report;
use crate::review::prompt_diff::{compare, compile_side};
use crate::review::revision::checkout;

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The revision to compare from (a branch, tag or commit).
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub base: String,
    /// The revision to compare to (default: the working tree, uncommitted changes included).
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub head: Option<String>,
    /// Only the summary: which outputs changed, by how much, and which files caused it.
    #[arg(long)]
    pub stat: bool,
    /// `text`, `markdown` (a pull-request comment) or `json`.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// The most characters of the markdown report (0: no limit). The default fits a GitHub
    /// comment; past it, diffs give way to summaries, with a note saying what was left out.
    #[arg(long, value_name = "N", default_value_t = report::diff::COMMENT_LIMIT, value_parser = parse_max_chars)]
    pub max_chars: usize,
    /// Exit 1 when a compiled output changed (as `git diff --exit-code` does), so a script
    /// can tell "no change" apart.
    #[arg(long)]
    pub exit_code: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Text,
    Markdown,
    Json,
}

pub fn run(
    args: DiffArgs,
    workspace_dir: Option<&Path>,
    printer: &Printer,
) -> Result<(), CliError> {
    super::remove_scratch_on_interrupt();
    let root = workspace_root(workspace_dir)?;
    let epoch = source_date_epoch(printer);
    // A side whose outputs compile over their budget is compared, and fails as a build would.
    let compiled = |root: &std::path::Path| match compile_side(root, epoch) {
        Ok(mut outputs) => {
            let over = outputs
                .over_budget
                .take()
                .map(|error| report::diff::side_failure(&error));
            (Ok(outputs), over)
        }
        Err(error) => (Err(report::diff::side_failure(&error)), None),
    };
    // Each side is compiled from its own copy; the copies live until the report is made.
    let side = |revision: Option<&str>| match revision {
        None => (None, compiled(&root)),
        Some(revision) => match checkout(&root, revision) {
            Ok(copy) => {
                let result = compiled(&copy.root);
                (Some(copy), result)
            }
            Err(error) => {
                let record = report::diagnostics::DiagnosticRecord::unlocated(
                    "revision-unreadable",
                    error.to_string(),
                    None,
                );
                let records = serde_json::to_value(record).into_iter().collect();
                (None, (Err((error.to_string(), records)), None))
            }
        },
    };
    // The base may spend at most half of the processor time left: one that spends it all
    // must stop itself, not leave the head's compiles refused and the head blamed.
    let (_base_copy, base) = crate::deadline::within_half(|| side(Some(&args.base)));
    let (_head_copy, head) = side(args.head.as_deref());
    let head_label = args.head.clone().unwrap_or_else(|| "working tree".into());
    let diff = compare(
        (&args.base, base.0, base.1),
        (&head_label, head.0, head.1),
        epoch,
    );
    match args.format {
        DiffFormat::Text => printer.report(&report::diff::text(&diff, args.stat)),
        DiffFormat::Markdown => {
            printer.result(&report::diff::markdown(&diff, args.stat, args.max_chars))
        }
        DiffFormat::Json => printer.result(&report::diff::json(&diff)),
    }?;
    if diff.failures.is_empty() && (!args.exit_code || diff.prompts.is_empty()) {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}

/// The fewest characters `--max-chars` may ask for: the comment's heading, the note that says
/// what was cut and a line per change take that much, and a smaller limit was passed without
/// a word (a comment of 317 characters said it was cut to 100).
const MIN_MAX_CHARS: usize = 1000;

fn parse_max_chars(text: &str) -> Result<usize, String> {
    let limit: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of characters"))?;
    if limit != 0 && limit < MIN_MAX_CHARS {
        return Err(format!(
            "a comment needs at least {MIN_MAX_CHARS} characters for its heading and what was cut; use 0 for no limit"
        ));
    }
    Ok(limit)
}
