//! The command line: argument definitions and the commands, each a thin client of the
//! library. Everything is printed through [`Printer`], every failure is a [`CliError`], and
//! exit codes are decided in [`run`] from it alone.

mod build;
mod check;
mod context;
mod diff;
mod environment;
mod error;
mod explain;
mod init;
mod list;
mod message;
mod new;
mod outputs_lock;
mod printer;
mod progress;
mod route;
mod schema;
mod show;
mod stats;
mod tools;
mod validate;

use clap::builder::NonEmptyStringValueParser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use indexmap::IndexMap;

pub use error::CliError;
pub use message::Message;
pub use printer::Printer;

use crate::compile::{Request, Selection};
use crate::compiled::CompileError;
use crate::diagnostic::Diagnostics;
use crate::emit::matrix::MatrixEntry;
use crate::load::document::Format;
use crate::load::entry::Entry;
use crate::load::find_root;
use crate::load::mcp_places::McpPlaces;
use crate::load::rules::{RulesReport, RulesRequest};
use crate::loader::{apply_mcp_settings, assemble_rules, load_context_file};
use crate::model::Context;
use crate::problem::{Problem, RefKind};
use crate::resolve::date::SourceDateEpoch;
use crate::workspace::Workspace;

/// Exit codes: fixed, documented in the README.
pub const EXIT_OK: u8 = 0;
pub const EXIT_PROBLEMS: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

#[derive(Parser, Debug)]
#[command(name = "promptc", version, about = "A declarative prompt compiler", long_about = None)]
pub struct Cli {
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,
    /// Print only problems: no line per file written, no closing `ok`.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// The workspace: a folder holding promptc.toml (default: the nearest one at or above
    /// the current folder). Other relative paths stay relative to the current folder.
    #[arg(short = 'C', long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

// Each command's arguments are built only when it is the one run (or for help, completions
// and the manual): building all of them took about a third of a millisecond of every run.
#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum Command {
    /// Compile the prompt for one family (or variant) and context.
    Build(build::BuildArgs),
    /// Compare the committed outputs of the build matrix with a fresh compile; writes nothing.
    Check(check::CheckArgs),
    /// Compare the compiled prompts of two git revisions (the head defaults to the working tree).
    Diff(diff::DiffArgs),
    /// Why each component, tool and parameter is in the prompt or not.
    Explain(explain::ExplainArgs),
    /// Print a variant after inheritance: `show VARIANT` (an id or `family@version`).
    Show(show::ShowArgs),
    /// The context a compile sees, after inheritance and the command line's changes.
    Context(context::ContextArgs),
    /// The native tool definitions of a compile, as the provider's API takes them.
    Tools(tools::ToolsArgs),
    /// Which family and version serve a model, and the rule that chose them.
    Route(route::RouteArgs),
    /// The families with their versions, labels, tags and routing rules.
    List(list::ListArgs),
    /// Write a new tool, component or variant file with its schema line and required fields.
    New(new::NewArgs),
    /// Write the shipped default library into a new workspace.
    Init(init::InitArgs),
    /// Token and character counts of the compiled prompts (each family's encoding).
    Stats(stats::StatsArgs),
    /// Check every file of the workspace and report all problems.
    Validate(validate::ValidateArgs),
    /// Write the JSON Schemas of the file formats, or check that they are current.
    Schema(schema::SchemaArgs),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    Completions { shell: clap_complete::Shell },
    /// Print the manual page (roff), e.g. `promptc man > promptc.1`.
    Man,
}

/// The `promptc` program: the process's memory and time ceilings, then the command the
/// arguments name.
pub fn main() -> ExitCode {
    if let Err(message) = crate::process_limits::MEMORY
        .apply()
        .and_then(|()| crate::process_limits::TIME.apply())
    {
        return exit(
            Err(CliError::ProcessLimit(message)),
            &Printer::new(ColorChoice::Never),
        );
    }
    match Cli::try_parse() {
        Ok(cli) => run(cli),
        Err(error) => usage_error(&error),
    }
}

/// Arguments clap refuses: its message on stderr, as ever, and, when the arguments ask for
/// JSON, the same error as a JSON document on stdout: a program reading stdout always reads
/// JSON. Help and the version are printed as asked.
fn usage_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = error.print();
        return ExitCode::from(if error.use_stderr() { EXIT_USAGE } else { 0 });
    }
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    if asks_for_json(&args) {
        let rendered = error.render().to_string();
        let message = rendered
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_string();
        let record = crate::report::diagnostics::DiagnosticRecord::unlocated(
            "usage",
            message,
            Some("see `promptc --help` and the command's own `--help`".into()),
        );
        let printer = Printer::new(ColorChoice::Never);
        let _ = printer.result(&crate::report::diagnostics::json_records(&[record]));
    }
    let _ = error.print();
    ExitCode::from(EXIT_USAGE)
}

/// Whether arguments clap refused ask for JSON output: `--format json` (or `--format=json`),
/// or the `tools` command, which prints only JSON. Arguments after `--` are values, never
/// options nor the command.
fn asks_for_json(args: &[String]) -> bool {
    let args = args
        .iter()
        .position(|arg| arg == "--")
        .map_or(args, |end| &args[..end]);
    let format_json = args
        .windows(2)
        .any(|pair| pair[0] == "--format" && pair[1] == "json")
        || args.iter().any(|arg| arg == "--format=json");
    // The command: the first word that is neither an option nor a global option's value.
    let mut words = args.iter();
    let mut command = None;
    while let Some(arg) = words.next() {
        match arg.as_str() {
            "-C" | "--workspace" | "--color" => {
                words.next();
            }
            arg if arg.starts_with('-') => {}
            arg => {
                command = Some(arg);
                break;
            }
        }
    }
    format_json || command == Some("tools")
}

/// From now on, an interrupt (SIGINT, or SIGTERM and SIGHUP, as a cancelled CI job sends)
/// removes promptc's temporary copies of the workspace, and the temporary files a build has
/// written beside its outputs, before the process ends: it ends the process without running
/// destructors. `diff` installs it as it starts, a command that writes before its first
/// temporary file (a command that writes nothing is left to end as an interrupted process
/// does, with no thread started for it). A process ended by a signal it cannot handle leaves
/// its copies to the next `diff` and its files to the next `build --all` (see `scratch`). 130
/// is the shell's code for a process ended by SIGINT.
pub fn remove_scratch_on_interrupt() {
    let _ = ctrlc::set_handler(|| {
        crate::scratch::close();
        stop_children();
        crate::scratch::remove_all();
        std::process::exit(130);
    });
}

/// Stops the processes writing into scratch folders (a `git checkout-index`), which an
/// interrupt sent to promptc alone does not reach.
fn stop_children() {
    #[cfg(unix)]
    for id in crate::scratch::children() {
        let pid = i32::try_from(id)
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

pub fn run(cli: Cli) -> ExitCode {
    crate::scratch::before_first_file(remove_scratch_on_interrupt);
    // The schemas' patterns take about as long to build as the first files to read: built
    // meanwhile, on the other core. A command that reads no workspace does not build them.
    if !matches!(
        cli.command,
        Command::Completions { .. } | Command::Man | Command::Schema(_)
    ) {
        crate::load::schema_check::build_patterns_ahead();
    }
    // Token counts are kept between runs in promptc's own cache folder, never in the
    // workspace: an unchanged prompt is not counted again.
    if let Some(dir) = crate::tokens::default_cache_dir() {
        crate::tokens::open_cache(&dir);
    }
    let code = run_command(cli);
    crate::tokens::save_cache();
    code
}

fn run_command(cli: Cli) -> ExitCode {
    let printer = Printer::new(cli.color)
        .quiet(cli.quiet)
        .json(prints_json(&cli.command));
    let workspace = cli.workspace.as_deref();
    let result = match cli.command {
        Command::Build(args) => build::run(args, workspace, &printer),
        Command::Check(args) => check::run(args, workspace, &printer),
        Command::Diff(args) => diff::run(args, workspace, &printer),
        Command::Explain(args) => explain::run(args, workspace, &printer),
        Command::Show(args) => show::run(args, workspace, &printer),
        Command::Route(args) => route::run(args, workspace, &printer),
        Command::New(args) => new::run(args, workspace, &printer),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "promptc", &mut script);
            printer.result(&String::from_utf8_lossy(&script))
        }
        Command::Man => {
            let mut page = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut page) {
                Ok(()) => printer.result(&String::from_utf8_lossy(&page)),
                Err(error) => Err(CliError::Io(error)),
            }
        }
        Command::Tools(args) => tools::run(args, workspace, &printer),
        Command::Context(args) => context::run(args, workspace, &printer),
        Command::List(args) => list::run(args, workspace, &printer),
        Command::Init(args) => init::run(args, workspace, &printer),
        Command::Stats(args) => stats::run(args, workspace, &printer),
        Command::Validate(args) => validate::run(args, workspace, &printer),
        Command::Schema(args) => schema::run(args, workspace, &printer),
    };
    exit(result, &printer)
}

/// Whether the command was asked for `--format json`: a program reads its stdout.
fn prints_json(command: &Command) -> bool {
    match command {
        Command::Build(args) => args.format == OutputFormat::Json,
        Command::Check(args) => args.format == OutputFormat::Json,
        Command::Explain(args) => args.format == OutputFormat::Json,
        Command::List(args) => args.format == OutputFormat::Json,
        Command::Route(args) => args.format == OutputFormat::Json,
        Command::Show(args) => args.format == Some(DataFormat::Json),
        Command::Context(args) => args.format == Some(DataFormat::Json),
        Command::Diff(args) => args.format == diff::DiffFormat::Json,
        Command::Stats(args) => args.format == stats::StatsFormat::Json,
        Command::Validate(args) => args.format == DiagnosticFormat::Json,
        // Native tool definitions are JSON whatever is asked.
        Command::Tools(_) => true,
        Command::New(_)
        | Command::Init(_)
        | Command::Schema(_)
        | Command::Completions { .. }
        | Command::Man => false,
    }
}

/// The exit code of a command's result, its error printed.
fn exit(result: Result<(), CliError>, printer: &Printer) -> ExitCode {
    // After an interrupt, the handler removes the temporary folders and ends the process with
    // 130. What failed here because of it (a git stopped in the middle of a copy) is not the
    // user's error, and ending the process here would race the handler's exit code.
    while crate::scratch::is_closed() {
        std::thread::park();
    }
    printer.close();
    match result {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(error) => {
            printer.error(&error);
            ExitCode::from(error.exit_code())
        }
    }
}

// Every command's `--format` values come from one set: `text` is the plain default for
// people, `json` is for programs, and a command adds `markdown`, `toml` or `github` where
// that form exists.

/// Output format of `validate`'s diagnostics.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiagnosticFormat {
    /// rustc-style, with the source lines.
    #[value(alias = "human")]
    Text,
    Json,
    /// GitHub Actions workflow commands: annotations on the lines of a pull request.
    Github,
}

/// Output format of a command that prints data: TOML, YAML or JSON. Without `--format`, the
/// language the workspace is written in (see [`DataFormat::of_workspace`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum DataFormat {
    Toml,
    Yaml,
    Json,
}

impl From<Format> for DataFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Toml => DataFormat::Toml,
            Format::Yaml => DataFormat::Yaml,
            Format::Json => DataFormat::Json,
        }
    }
}

impl DataFormat {
    /// The extension of a file in this language.
    pub fn extension(self) -> &'static str {
        match self {
            DataFormat::Toml => "toml",
            DataFormat::Yaml => "yaml",
            DataFormat::Json => "json",
        }
    }

    /// The format asked for, else the workspace's own: YAML where its variants, components
    /// and tools are all YAML (as `new` writes there), TOML elsewhere.
    pub fn or_workspace(format: Option<DataFormat>, workspace: &Workspace) -> DataFormat {
        format.unwrap_or_else(|| Self::of_workspace(workspace))
    }

    /// The language the workspace is written in: YAML where its variants, components and
    /// tools are all YAML (and it has some), TOML elsewhere.
    pub fn of_workspace(workspace: &Workspace) -> DataFormat {
        let mut paths = workspace
            .variants
            .values()
            .map(|entry| entry.source())
            .chain(workspace.components.values().map(|entry| entry.source()))
            .chain(workspace.tools.values().map(|entry| entry.source()))
            .map(|source| &workspace.sources.get(source).path)
            .peekable();
        let yaml =
            paths.peek().is_some() && paths.all(|path| Format::of(path) == Some(Format::Yaml));
        if yaml {
            DataFormat::Yaml
        } else {
            DataFormat::Toml
        }
    }
}

/// Output format of a command's result: `build`, `check`, `explain`, `list`, `route`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

// What to compile: shared by `build` and `explain` (a plain comment: clap would take a doc
// comment for the help of the commands that flatten it in).
#[derive(Args, Debug)]
pub struct TargetArgs {
    /// The model family to compile (default: the manifest's fallback family, or the family
    /// routing picks with --model/--provider).
    #[arg(long, conflicts_with = "variant")]
    pub family: Option<String>,
    /// A variant to compile: its id, or `family@version` (`next-gen@2` is the highest 2.x).
    #[arg(long, conflicts_with_all = ["label", "tag"])]
    pub variant: Option<String>,
    /// The model id the prompt is for (set as the context's `model.id`). Without --family or
    /// --variant it routes: the family is the first whose `match` holds, in `routing.order`.
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub model: Option<String>,
    /// Route: the provider (set as the context's `model.provider`).
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub provider: Option<String>,
    /// Compile the version of the family this label names.
    #[arg(long)]
    pub label: Option<String>,
    /// Compile a variant carrying this tag (alone: the one family whose variants carry it).
    #[arg(long)]
    pub tag: Option<String>,
    /// Fill the context's `os`, `shell`, `home` and `cwd` from this machine (for a prompt
    /// used here and now; committed outputs never do).
    #[arg(long)]
    pub detect_env: bool,
    /// An MCP settings file (`mcpServers`, as agents write it): its servers join the
    /// context's, with what each offers from the context or `<file stem>.listing.json`.
    #[arg(long, value_name = "FILE")]
    pub mcp: Option<PathBuf>,
    /// The provider shape of native tool definitions: openai, openai-responses, anthropic or
    /// gemini (default: the manifest's `tool_definitions` rules).
    #[arg(long, value_parser = parse_dialect)]
    pub dialect: Option<crate::model::Dialect>,
    /// A context: a file (TOML, YAML or JSON), the name of one in the workspace's contexts
    /// folder, or `-` for standard input (default: the manifest's `default_context`).
    #[arg(long)]
    pub context: Option<String>,
    /// A runtime placeholder, KEY=VALUE; wins over every other definition. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_assignment)]
    pub set: Vec<(String, String)>,
    #[command(flatten)]
    pub rules: RulesArgs,
}

// Where the user's rules come from and which apply (a plain comment, as above).
#[derive(Args, Debug, Default)]
pub struct RulesArgs {
    /// A project folder to read rules files from (`.clinerules`, `.cursorrules`,
    /// `.cursor/rules/*.mdc`, `.windsurfrules`, `AGENTS.md`). Repeatable.
    #[arg(long = "rules", value_name = "DIR")]
    pub folders: Vec<PathBuf>,
    /// A global rules folder (its Markdown files, `workflows/` apart); read only when named.
    /// Repeatable.
    #[arg(long = "global-rules", value_name = "DIR")]
    pub global: Vec<PathBuf>,
    /// Active files, added to the context's `active_files`: a rule with `globs` applies only
    /// when one of them matches.
    #[arg(long = "files", value_name = "PATH", num_args = 1..)]
    pub files: Vec<String>,
    /// Leave out the rule of this name (its file name without `.md`/`.mdc`) or path.
    /// Repeatable.
    #[arg(long = "disable-rule", value_name = "NAME")]
    pub disabled: Vec<String>,
}

impl RulesArgs {
    fn request(self) -> RulesRequest {
        RulesRequest {
            folders: self.folders,
            global: self.global,
            active_files: self.files,
            disabled: self.disabled,
        }
    }
}

impl TargetArgs {
    /// The name of the context the target compiles for: `--context`, else the manifest's
    /// default ("" for none).
    pub fn context_name(&self, workspace: &Workspace) -> String {
        self.context
            .clone()
            .or_else(|| workspace.settings().default_context.clone())
            .unwrap_or_default()
    }
}

fn parse_dialect(text: &str) -> Result<crate::model::Dialect, String> {
    crate::model::Dialect::ALL
        .into_iter()
        .find(|dialect| dialect.name() == text)
        .ok_or_else(|| {
            let names: Vec<&str> = crate::model::Dialect::ALL.map(|d| d.name()).to_vec();
            format!("expected one of {}", names.join(", "))
        })
}

fn parse_assignment(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if is_name(key.trim()) => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        // A path into a context field (`browser.enabled`), which the value is set at.
        Some((key, value))
            if key.trim().split('.').all(is_name)
                && key
                    .trim()
                    .split('.')
                    .next()
                    .is_some_and(|first| crate::namespace::context_fields().contains(first)) =>
        {
            Ok((key.trim().to_string(), value.to_string()))
        }
        // A placeholder templates could never read: refused, as in a context's `placeholders`.
        Some((key, _)) if !key.trim().is_empty() => Err(format!(
            "`{}` is not a placeholder name: expected {} (or a path into a context field, such as `browser.enabled`)",
            key.trim(),
            crate::problem::Form::Name
        )),
        _ => Err(format!("expected KEY=VALUE, found `{text}`")),
    }
}

/// Whether `key` is a name templates can use (see `model::NAME_PATTERN`).
fn is_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The workspace root: the given folder, or the nearest one above the current directory that
/// holds `promptc.toml`.
pub fn workspace_root(given: Option<&Path>) -> Result<PathBuf, CliError> {
    let Some(dir) = given else {
        let start = std::env::current_dir()?;
        return find_root(&start).ok_or(CliError::NoWorkspace(start));
    };
    if crate::load::has_manifest(dir) {
        return Ok(dir.to_path_buf());
    }
    // A folder that is not there (a typo) is said so, not called a folder without a manifest.
    let problem = match std::fs::metadata(dir) {
        Ok(found) if found.is_dir() => return Err(CliError::NotAWorkspace(dir.to_path_buf())),
        Ok(_) => std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a folder"),
        Err(error) => error,
    };
    Err(crate::path_error::PathError::new(dir, crate::path_error::PathProblem::Io(problem)).into())
}

/// Loads the workspace and prints its diagnostics; every command but `validate` stops at its
/// errors.
///
/// The workspace is kept until the process ends, which is soon: a command runs once per
/// process, and freeing a workspace's many small allocations one by one at its end cost
/// about a millisecond of every command and gave nothing back.
pub fn load_valid(
    dir: Option<&Path>,
    printer: &Printer,
) -> Result<&'static mut Workspace, CliError> {
    let root = workspace_root(dir)?;
    let loaded = crate::loader::load_workspace(&root)?;
    let has_errors = loaded.diagnostics.has_errors();
    printer.diagnostics(loaded.diagnostics, &loaded.workspace.sources);
    if has_errors {
        return Err(CliError::Reported);
    }
    Ok(Box::leak(Box::new(loaded.workspace)))
}

/// A compiler of the workspace, kept as the workspace is (see [`load_valid`]): what it
/// remembered of a matrix is not freed piece by piece at the end.
pub fn kept_compiler(workspace: &'static Workspace) -> &'static crate::compile::Compiler<'static> {
    Box::leak(Box::new(crate::compile::Compiler::new(workspace)))
}

/// The request a target names; its context's problems are printed. It carries no
/// SOURCE_DATE_EPOCH: a command that renders adds it with [`dated`], so that one that does
/// not (`route`, `context`) does not warn about a value it never reads.
pub fn request(
    workspace: &mut Workspace,
    target: TargetArgs,
    printer: &Printer,
) -> Result<Request, CliError> {
    Ok(request_with_rules(workspace, target, printer)?.0)
}

/// The request a target names, and what became of the rules it reads; the problems of its
/// context and rules files are printed (rules files' as warnings, a build goes on without
/// the rules it skipped).
pub fn request_with_rules(
    workspace: &mut Workspace,
    target: TargetArgs,
    printer: &Printer,
) -> Result<(Request, RulesReport), CliError> {
    if target.context.is_none()
        && workspace.settings().default_context.is_none()
        && let Some(first) = workspace.contexts.keys().next()
    {
        printer.message(Message::NoContextGiven {
            first,
            count: workspace.contexts.len(),
        });
    }
    let (mut context, mut mcp_places, toggle_places) =
        match context(workspace, target.context.as_deref())? {
            Ok(context) => context,
            Err(diagnostics) => {
                printer.diagnostics(diagnostics, &workspace.sources);
                return Err(CliError::Reported);
            }
        };
    // A named context of the workspace had its rules folders read when it loaded.
    let named =
        Some(target.context_name(workspace)).filter(|name| workspace.contexts.contains_key(name));
    let rules_request = target.rules.request();
    for folder in rules_request.global.iter().chain(&rules_request.folders) {
        crate::confine::caller_path_stays(&workspace.root, folder).map_err(CliError::Argument)?;
        let reason = match std::fs::metadata(folder) {
            Ok(found) if found.is_dir() => continue,
            Ok(found) if found.is_file() => crate::path_error::PathProblem::NotAFolder.to_string(),
            Ok(found) => match crate::confine::not_regular(&found) {
                crate::path_error::PathProblem::NotRegularFile { what } => {
                    format!("is a {what}, where a folder belongs")
                }
                other => other.to_string(),
            },
            Err(error) => error.to_string(),
        };
        return Err(CliError::RulesFolder(
            crate::problem::RulesProblem::RulesFolderMissing {
                path: folder.display().to_string(),
                reason,
                near: None,
            },
        ));
    }
    let (rules, problems) =
        assemble_rules(workspace, &mut context, &rules_request, named.as_deref());
    let has_errors = problems.has_errors();
    printer.diagnostics(problems, &workspace.sources);
    if has_errors {
        return Err(CliError::Reported);
    }
    // What the matrix decides for a named context, `validate` has told; a build tells what
    // its own flags, or a context of its own, decide.
    let told_by_validate = named.is_some()
        && rules_request.folders.is_empty()
        && rules_request.global.is_empty()
        && rules_request.active_files.is_empty();
    unknown_rule_names(
        workspace,
        &rules,
        &rules_request,
        (named.is_none()).then_some(&context),
        &toggle_places,
        printer,
    );
    if !told_by_validate {
        for (rule, decision) in &rules.rules {
            if *decision == crate::load::rules::RuleDecision::TooCostlyToMatch {
                printer.message(Message::RuleTooCostly {
                    problem: &crate::problem::RulesProblem::GlobsTooCostly {
                        rule: rule.name.clone(),
                        active_files: context.active_files.len() + rules_request.active_files.len(),
                    },
                });
            }
        }
    }
    if let Some(settings) = &target.mcp {
        // A path the command line names that is no regular file is a bad argument, as
        // `--context`'s is (a missing one is too, reported as the system says).
        if std::fs::metadata(settings).is_ok_and(|metadata| !metadata.is_file()) {
            return Err(CliError::McpSettingsNotAFile(settings.clone()));
        }
        match apply_mcp_settings(workspace, settings, &mut context, &mut mcp_places)? {
            Ok(warnings) => printer.diagnostics(warnings, &workspace.sources),
            Err(diagnostics) => {
                printer.diagnostics(diagnostics, &workspace.sources);
                return Err(CliError::Reported);
            }
        }
    }
    if target.detect_env {
        environment::detect(&mut context);
    }
    let routed = target.model.is_some() || target.provider.is_some();
    set_model(&mut context, target.model, target.provider);
    let mut selection = match (target.family, target.variant) {
        (Some(family), _) => Selection::family(family),
        (None, Some(variant)) => Selection::variant(variant),
        (None, None) if routed => Selection::route(),
        (None, None) => Selection::fallback(),
    };
    selection.label = target.label;
    selection.tag = target.tag;
    let mut request = Request::new(selection, context);
    request.dialect = target.dialect;
    request.mcp_places = mcp_places;
    request.set = target.set.into_iter().collect::<IndexMap<_, _>>();
    // Context fields move into the context: the names as given are kept for the check below.
    let set_names: Vec<String> = request.set.keys().cloned().collect();
    request
        .set_context_fields(
            &workspace.settings().context_fields,
            crate::compile::SetFrom::CommandLine,
        )
        .map_err(CliError::SetValue)?;
    unread_set_values(workspace, &set_names, printer);
    Ok((request, rules))
}

/// A request dated by SOURCE_DATE_EPOCH, for a command that renders its prompt.
pub fn dated(mut request: Request, printer: &Printer) -> Request {
    request.source_date_epoch = source_date_epoch(printer);
    request
}

/// `--model` and `--provider` each change their own field of the context's `model`: a model
/// id given alone keeps the context's provider, as the flags' help says (the context names
/// where its models are served from, which one id does not tell).
pub(crate) fn set_model(context: &mut Context, id: Option<String>, provider: Option<String>) {
    if let Some(id) = id {
        context.model.id = id;
    }
    if let Some(provider) = provider {
        context.model.provider = provider;
    }
}

/// A rule switched off by a name no rule has stays on: said, with the near name (a mistyped
/// `--disable-rule` or `rule_toggles` key changed nothing without a word). The toggles of a
/// context that is not the workspace's (`context`), since `validate` tells a named context's
/// own: flags only add rules, so a toggle that names none of them named none of its own.
fn unknown_rule_names(
    workspace: &Workspace,
    report: &RulesReport,
    request: &RulesRequest,
    context: Option<&Context>,
    toggle_places: &TogglePlaces,
    printer: &Printer,
) {
    if !report.assembled {
        return;
    }
    let known = report.names();
    let named = request
        .disabled
        .iter()
        .map(|name| (name, "--disable-rule"))
        .chain(
            context
                .into_iter()
                .flat_map(|context| context.rule_toggles.keys())
                .map(|name| (name, "rule_toggles")),
        );
    let mut located = Diagnostics::default();
    for (name, by) in named {
        if known.contains(name) {
            continue;
        }
        let suggestion = crate::namespace::closest(name, &known);
        // A toggle written in a context file is placed there; `--disable-rule` and a context
        // with no file (the default) are told in a line.
        match toggle_places.get(name).filter(|_| by == "rule_toggles") {
            Some(span) => located.push(crate::diagnostic::Diagnostic::new(
                crate::problem::Problem::Rules(crate::problem::RulesProblem::ToggleNamesNoRule {
                    name: name.clone(),
                    suggestion,
                }),
                *span,
            )),
            None => printer.message(Message::RuleNameUnknown {
                name,
                by,
                suggestion,
            }),
        }
    }
    printer.diagnostics(located, &workspace.sources);
}

/// A `--set` value no template or condition reads changes nothing: said, with the near name
/// (see [`crate::compile::UnreadSetNames`]).
fn unread_set_values(workspace: &Workspace, set_names: &[String], printer: &Printer) {
    let unread = crate::compile::UnreadSetNames::default();
    for (name, suggestion) in unread.among(workspace, set_names.iter().map(String::as_str)) {
        printer.message(Message::SetNameUnread {
            name: &name,
            suggestion,
        });
    }
}

/// The context a build uses: a file path, a named context, the manifest's default, or an
/// empty one; with where its MCP tools are written. `Ok(Err(..))` holds the problems of a
/// context file.
fn context(
    workspace: &mut Workspace,
    given: Option<&str>,
) -> Result<Result<(Context, McpPlaces, TogglePlaces), Diagnostics>, CliError> {
    let name = given.or(workspace.settings().default_context.as_deref());
    let Some(name) = name else {
        return Ok(Ok((
            Context::default(),
            McpPlaces::default(),
            TogglePlaces::new(),
        )));
    };
    let with_places = |workspace: &Workspace, entry: Entry<Context>| {
        let places = McpPlaces::of_context(&entry, &workspace.contexts);
        let toggles = toggle_places(&entry, &workspace.contexts);
        (entry.value, places, toggles)
    };
    if name == STDIN {
        let text = read_stdin(workspace.settings().limits.file_bytes)?;
        return Ok(crate::loader::load_context_text(workspace, "<stdin>", text)
            .map(|entry| with_places(workspace, entry)));
    }
    if let Some(entry) = workspace.contexts.get(name) {
        let places = McpPlaces::of_context(entry, &workspace.contexts);
        let toggles = toggle_places(entry, &workspace.contexts);
        return Ok(Ok((entry.value.clone(), places, toggles)));
    }
    let path = PathBuf::from(name);
    if path.exists() && !path.is_file() {
        return Err(CliError::ContextNotAFile(path));
    }
    if !path.is_file() {
        return Err(CliError::NoContext {
            name: name.to_string(),
            contexts: workspace.contexts.keys().cloned().collect(),
        });
    }
    if Format::of(&path).is_none() {
        return Err(CliError::ContextNotData(path));
    }
    // Past the size of a file, refused as the command line's, as standard input is.
    let limit = workspace.settings().limits.file_bytes;
    if path.metadata().is_ok_and(|metadata| metadata.len() > limit) {
        return Err(CliError::Argument(crate::path_error::PathError::new(
            path,
            crate::path_error::PathProblem::TooLarge {
                limit,
                setting: Some("file_bytes"),
            },
        )));
    }
    // Absolute, its links not followed: a link in the workspace is the workspace's to check
    // (see `confine::origin_of`), and the file is shown by the name it was given.
    let path = std::path::absolute(&path)?;
    Ok(load_context_file(workspace, &path)?.map(|entry| with_places(workspace, entry)))
}

/// Where each `rule_toggles` key of a context is written: in its own file, or the nearest
/// context it extends that writes the key.
type TogglePlaces = std::collections::BTreeMap<String, crate::span::Span>;

fn toggle_places(
    entry: &Entry<Context>,
    contexts: &IndexMap<String, Entry<Context>>,
) -> TogglePlaces {
    let mut places = TogglePlaces::new();
    for entry in crate::load::contexts::chain(entry, contexts) {
        let document = &entry.document;
        let toggles = document
            .value
            .get("rule_toggles")
            .and_then(serde_json::Value::as_object);
        for key in toggles.into_iter().flat_map(serde_json::Map::keys) {
            places.entry(key.clone()).or_insert_with(|| {
                document.key_span(&crate::pointer::child_pointer("/rule_toggles", key))
            });
        }
    }
    places
}

/// `--context -` names standard input.
const STDIN: &str = "-";

/// Standard input as text, refused past the size of one file.
fn read_stdin(limit: u64) -> Result<String, CliError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(CliError::Argument(crate::path_error::PathError::new(
            crate::path_error::STDIN,
            crate::path_error::PathProblem::TooLarge {
                limit,
                setting: Some("file_bytes"),
            },
        )));
    }
    String::from_utf8(bytes).map_err(|_| CliError::StdinNotText)
}

/// `path` from the workspace's root, when it is one of the workspace's own files (a template
/// or data file it read), where a command line names a file to write.
pub fn workspace_source(workspace: &Workspace, path: &Path) -> Option<PathBuf> {
    let relative = path
        .canonicalize()
        .ok()
        .and_then(|real| real.strip_prefix(&workspace.root).ok().map(PathBuf::from))?;
    workspace
        .sources
        .find(&relative)
        .is_some()
        .then_some(relative)
}

/// Why a compile failed: a selection naming no variant is a usage error; diagnostics are
/// printed.
pub fn compile_failed(workspace: &Workspace, error: CompileError, printer: &Printer) -> CliError {
    match error {
        CompileError::Selection(problem) => {
            // An unknown variant id is told the ids there are (`next-gen-2`, not only its
            // family `next-gen`).
            let known = match &problem {
                Problem::UnknownReference {
                    kind: RefKind::Variant,
                    ..
                } => {
                    let mut ids: Vec<String> = workspace.variants.keys().cloned().collect();
                    ids.sort();
                    ids
                }
                _ => workspace.families(),
            };
            CliError::Selection { problem, known }
        }
        CompileError::Diagnostics(diagnostics) => {
            printer.diagnostics(diagnostics, &workspace.sources);
            CliError::Reported
        }
        // Its errors were printed when it was loaded.
        CompileError::InvalidWorkspace => CliError::Reported,
    }
}

/// Prints why matrix entries failed to compile; returns whether any did.
pub fn report_failures(
    workspace: &Workspace,
    failed: Vec<(MatrixEntry, CompileError)>,
    printer: &Printer,
) -> bool {
    let any = !failed.is_empty();
    let mut unnamed = 0;
    let mut named = 0;
    // Once the processor-time limit is reached, no compile starts: the entries after the first
    // told of it, which get its error told above, were never compiled. They are counted
    // against the matrix, not named one by one as entries that do not compile.
    let stopped_at = failed.iter().position(|(_, error)| {
        matches!(error, CompileError::Diagnostics(diagnostics) if diagnostics.iter().any(|d| {
            matches!(d.problem, crate::problem::Problem::ProcessorTimeSpent { .. })
        }))
    });
    let mut not_compiled = 0;
    for (index, (entry, error)) in failed.into_iter().enumerate() {
        // The matrix reports each diagnostic with the first entry that hit it.
        let errors_above = matches!(&error, CompileError::Diagnostics(d) if d.is_empty());
        if errors_above && stopped_at.is_some_and(|stop| index > stop) {
            not_compiled += 1;
            continue;
        }
        // Past a few, entries failing for errors already shown are counted, not named: a
        // processor-time limit reached early left hundreds of lines naming entries never
        // compiled, and the one error that said why far above them.
        if errors_above {
            if named == MAX_NAMED_FAILED {
                unnamed += 1;
                continue;
            }
            named += 1;
        }
        printer.message(Message::EntryFailed {
            entry: &entry,
            errors_above,
        });
        match error {
            CompileError::Selection(problem) => {
                printer.json_unlocated(
                    problem.code(),
                    format!("{}: {problem}", entry.label()),
                    problem.help(),
                );
                printer.message(Message::SelectionProblem(&problem));
            }
            CompileError::Diagnostics(diagnostics) => {
                printer.diagnostics(diagnostics, &workspace.sources);
            }
            CompileError::InvalidWorkspace => {}
        }
    }
    if unnamed > 0 {
        printer.message(Message::MoreEntriesFailed {
            more: unnamed,
            named,
        });
    }
    if not_compiled > 0 {
        printer.message(Message::EntriesNotCompiled { left: not_compiled });
    }
    any
}

/// The most entries failing for errors shown above that a report names one by one.
const MAX_NAMED_FAILED: usize = 10;

/// Seconds of `9999-12-31T23:59:59Z`: a date a context's `date` could also hold.
const LAST_EPOCH: i64 = 253_402_300_799;

/// `SOURCE_DATE_EPOCH`, the date of a reproducible build, when set. A value that is no such
/// date is said at once, as a warning: a context with its own date never reads it, so it
/// stops only a compile that needs it (`no-date`, at the template that reads the date).
pub fn source_date_epoch(printer: &Printer) -> SourceDateEpoch {
    let Ok(value) = std::env::var("SOURCE_DATE_EPOCH") else {
        return SourceDateEpoch::Unset;
    };
    if value.trim().is_empty() {
        return SourceDateEpoch::Unset;
    }
    match value.trim().parse::<i64>() {
        Ok(seconds) if (0..=LAST_EPOCH).contains(&seconds) => SourceDateEpoch::At(seconds),
        parsed => {
            printer.message(Message::EpochIgnored {
                value: &value,
                is_number: parsed.is_ok(),
            });
            SourceDateEpoch::Invalid
        }
    }
}

/// What writing a compile's tool definitions found that does not stop it (a keyword a
/// dialect drops, an MCP tool left out): printed as warnings, as `validate` reports them.
pub fn definition_warnings(
    compiler: &crate::compile::Compiler<'_>,
    request: &Request,
    compiled: &crate::compiled::Compiled,
    printer: &Printer,
) {
    let warnings = compiler.definition_warnings(request, compiled);
    printer.diagnostics(warnings, &compiler.workspace().sources);
}
