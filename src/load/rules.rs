//! The user's rules files, read from a project folder: `.clinerules` (a file, or a folder of
//! Markdown files whose `workflows/` are kept apart), `.cursorrules`, `.cursor/rules/*.mdc`,
//! `.windsurfrules` and `AGENTS.md`; and global rules folders, read only when the caller names
//! them. Each file becomes a [`Rule`] with its YAML frontmatter parsed into its metadata and
//! stripped from its text. Then [`select`] decides which rules apply: toggles switch rules
//! off by name, and a rule with `globs` applies only when an active file matches.
//!
//! Order, documented in the README and never the file system's: global folders first, then the
//! context's `rules_from`, then the caller's folders, each in the order given; inside a folder
//! the kinds in the order above, and the files of a kind by path.
//!
//! A broken file is a warning at its line and column, and only that rule is skipped.

use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{Glob, GlobSetBuilder};
use indexmap::IndexMap;
use serde_json::Value;
use walkdir::WalkDir;

use crate::bounded_memo::BoundedMemo;
use crate::built::Built;
use crate::confine;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::model::limits::{MAX_RULE_FILES, MAX_RULES_BYTES};
use crate::model::{Context, Rule, Rules};
use crate::path_error::PathProblem;
use crate::problem::{Problem, RulesProblem};
use crate::source::{SourceId, Sources};
use crate::span::Span;

/// Where rules come from and what decides which apply, besides the context itself.
#[derive(Clone, Debug, Default)]
pub struct RulesRequest {
    /// Project folders named by the caller (`--rules`): anywhere on disk.
    pub folders: Vec<PathBuf>,
    /// Global rules folders (`--global-rules`): read only when named, so that outputs never
    /// depend on the machine.
    pub global: Vec<PathBuf>,
    /// Active files (`--files`), added to the context's `active_files`.
    pub active_files: Vec<String>,
    /// Rules switched off by name or path (`--disable-rule`), besides the context's toggles.
    pub disabled: Vec<String>,
}

impl RulesRequest {
    /// Whether the request names anything to read or decide.
    pub fn is_empty(&self) -> bool {
        self.folders.is_empty()
            && self.global.is_empty()
            && self.active_files.is_empty()
            && self.disabled.is_empty()
    }
}

/// Why a rule applies, or why it does not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleDecision {
    /// No `globs`: it always applies.
    Always,
    /// `alwaysApply: true`, or globs that match every path (`*`, `**`, `**/*`).
    AlwaysByMetadata,
    /// An active file matched one of its globs.
    Matched { file: String, glob: String },
    /// Switched off by `--disable-rule`.
    DisabledByFlag,
    /// Switched off by the context's `rule_toggles`.
    DisabledByToggle,
    /// `alwaysApply: false` and no globs (Cursor's rules for the agent or the user to ask
    /// for): left out unless the context's `rule_toggles` switch it on.
    OnRequest,
    /// `alwaysApply: false` and no globs, switched on by the context's `rule_toggles`.
    SwitchedOnByToggle,
    /// Its globs match none of the active files (there may be none).
    NoActiveFileMatches { globs: Vec<String> },
    /// Its globs do not parse (reported where it was read).
    BrokenGlobs,
    /// The rules before it hold as many globs as a context's rules may, all told.
    TooManyGlobs,
    /// Matching its globs against the active files would take the context's rules past what
    /// matching may cost ([`MAX_MATCH_WORK`]).
    TooCostlyToMatch,
}

impl RuleDecision {
    pub fn applies(&self) -> bool {
        matches!(
            self,
            RuleDecision::Always
                | RuleDecision::AlwaysByMetadata
                | RuleDecision::Matched { .. }
                | RuleDecision::SwitchedOnByToggle
        )
    }
}

/// Every rule considered, with its decision, in prompt order; and the workflows read.
#[derive(Clone, Debug, Default)]
pub struct RulesReport {
    pub rules: Vec<(Rule, RuleDecision)>,
    pub workflows: Vec<Rule>,
    /// Rules files found but not read as rules (frontmatter that does not parse, a file that
    /// is not text), each with why: told as warnings, and listed by `explain`.
    pub skipped: Vec<(Rule, String)>,
    /// Whether rules were assembled at all (else the context was left as it was).
    pub assembled: bool,
}

impl RulesReport {
    /// The names a rule considered can be switched off by: each one's name and path.
    pub fn names(&self) -> std::collections::BTreeSet<String> {
        self.rules
            .iter()
            .map(|(rule, _)| rule)
            .chain(self.skipped.iter().map(|(rule, _)| rule))
            .flat_map(|rule| [rule.name.clone(), rule.path.clone(), rule.qualified_path()])
            .filter(|name| !name.is_empty())
            .collect()
    }
}

/// Reads the rules files the context and the request name, decides which rules apply and
/// puts them into the context as a list. A context that names no rules folder, lists no
/// rules and gets no rules flags is left untouched (its `rules` text stays text).
///
/// `preread` holds what the context's `rules_from` folders gave when the workspace loaded (a
/// workspace context's): they are not read again. `contexts`, for a workspace context, is
/// how many the workspace has: its rules' matching may cost its share (see
/// [`match_work_per_context`]), as in the build matrix.
pub fn assemble(
    root: &Path,
    sources: &mut Sources,
    file_bytes: u64,
    context: &mut Context,
    request: &RulesRequest,
    (preread, contexts): (Option<&ReadRules>, Option<usize>),
    diagnostics: &mut Diagnostics,
) -> RulesReport {
    if !wants_rules(context, request) {
        return RulesReport::default();
    }
    let mut reader = Reader {
        sources,
        diagnostics,
        named_at: None,
        file_bytes,
        files: 0,
        bytes: 0,
        globs: GlobBudget::default(),
        rules: Vec::new(),
        workflows: Vec::new(),
        folder_shown: String::new(),
        folder_real: String::new(),
        skipped: Vec::new(),
        unreadable_named: 0,
        unreadable_more: 0,
        read_folders: Vec::new(),
        outputs: None,
    };
    for folder in &request.global {
        reader.folder(folder, folder.clone(), Origin::Global);
    }
    match preread {
        Some(read) => {
            for rule in &read.rules {
                reader.globs.spend(&rule.metadata);
            }
            reader.rules.extend(read.rules.iter().cloned());
            reader.workflows.extend(read.workflows.iter().cloned());
            reader.skipped.extend(read.skipped.iter().cloned());
            reader.read_folders.extend(read.folders.iter().cloned());
        }
        None => reader.rules_from(root, &context.rules_from, &[], true),
    }
    for folder in &request.folders {
        reader.folder(folder, folder.clone(), Origin::Project);
    }
    let Reader {
        rules: found,
        workflows,
        skipped,
        ..
    } = reader;
    // A workspace context's rules may cost what its share is in the matrix, so that a build
    // of it decides them as the matrix does.
    let match_work = contexts.map_or(MAX_MATCH_WORK, match_work_per_context);
    let mut report = apply(context, found, workflows, request, match_work);
    report.skipped = skipped;
    report
}

/// Whether a context and request involve rules at all; a context that names no rules
/// folder, lists no rules and gets no rules flags is left untouched.
fn wants_rules(context: &Context, request: &RulesRequest) -> bool {
    !request.is_empty()
        || !context.rules_from.is_empty()
        || matches!(context.rules, Rules::List(_))
        || !context.rule_toggles.is_empty()
}

/// What a context's `rules_from` folders hold, read once when the workspace loads.
#[derive(Clone, Debug, Default)]
pub struct ReadRules {
    pub rules: Vec<Rule>,
    pub workflows: Vec<Rule>,
    pub skipped: Vec<(Rule, String)>,
    /// The folders read, by their real paths, and how.
    pub folders: Vec<(PathBuf, Origin)>,
}

/// Whether a workspace context's own file writes its `rules_from`, rather than inheriting it
/// through `extends`: problems of those folders are reported once, at that file's values.
pub fn writes_rules_from(entry: &crate::load::entry::Entry<Context>) -> bool {
    entry.document.value.pointer("/rules_from").is_some()
}

/// Reads a workspace context's `rules_from` folders (problems recorded in `diagnostics`); a
/// folder that cannot be read is reported at its value in `named_at`, by index. `outputs` is
/// the workspace's output folder (`build.out`), whose files are never read as rules.
pub fn read_rules_from(
    root: &Path,
    sources: &mut Sources,
    (file_bytes, outputs): (u64, &str),
    rules_from: &[String],
    named_at: &[Span],
    diagnostics: &mut Diagnostics,
) -> ReadRules {
    let outputs = crate::confine::lexical(outputs);
    let mut reader = Reader {
        sources,
        diagnostics,
        named_at: None,
        file_bytes,
        files: 0,
        bytes: 0,
        globs: GlobBudget::default(),
        rules: Vec::new(),
        workflows: Vec::new(),
        folder_shown: String::new(),
        folder_real: String::new(),
        skipped: Vec::new(),
        unreadable_named: 0,
        unreadable_more: 0,
        read_folders: Vec::new(),
        outputs: None,
    };
    if !outputs.as_os_str().is_empty() {
        reader.outputs = Some((crate::confine::real_folder(root, &outputs), outputs));
    }
    reader.rules_from(root, rules_from, named_at, false);
    ReadRules {
        rules: reader.rules,
        workflows: reader.workflows,
        skipped: reader.skipped,
        folders: reader.read_folders,
    }
}

/// A workspace context's rules as a compile of the build matrix sees them: its `rules_from`
/// rules (read when the workspace loaded) and its own, decided by its active files and
/// toggles; and why each applies or not. Reads nothing. `contexts`: how many the workspace
/// has, which share what matching may cost (see [`match_work_per_context`]).
pub fn assemble_preread(
    context: &mut Context,
    preread: Option<&ReadRules>,
    contexts: usize,
) -> RulesReport {
    if !wants_rules(context, &RulesRequest::default()) {
        return RulesReport::default();
    }
    let read = preread.cloned().unwrap_or_default();
    let mut report = apply(
        context,
        read.rules,
        read.workflows,
        &RulesRequest::default(),
        match_work_per_context(contexts),
    );
    report.skipped = read.skipped;
    report
}

/// About the memory a context's rules and workflows take: each rule's slot, its strings and
/// its metadata. What an assembled context holds beyond its file's values, which the
/// workspace's own limits already bound.
pub fn rules_bytes(context: &Context) -> usize {
    let rule_bytes = |rule: &Rule| {
        let metadata: u64 = rule
            .metadata
            .iter()
            .map(|(key, value)| {
                (key.len() as u64).saturating_add(crate::load::contexts::value_bytes(value))
            })
            .fold(0, u64::saturating_add);
        std::mem::size_of::<Rule>()
            + rule.kind.len()
            + rule.path.len()
            + rule.name.len()
            + rule.text.len()
            + usize::try_from(metadata).unwrap_or(usize::MAX)
    };
    let rules = match &context.rules {
        Rules::Text(text) => text.len(),
        Rules::List(list) => list.iter().map(rule_bytes).fold(0, usize::saturating_add),
    };
    context
        .workflows
        .iter()
        .map(rule_bytes)
        .fold(rules, usize::saturating_add)
}

/// Decides which of the context's own rules and the ones read apply, and puts them into the
/// context as a list.
fn apply(
    context: &mut Context,
    found: Vec<Rule>,
    workflows: Vec<Rule>,
    request: &RulesRequest,
    match_work: u64,
) -> RulesReport {
    let mut candidates = match std::mem::take(&mut context.rules) {
        Rules::Text(text) if text.trim().is_empty() => Vec::new(),
        // Text written in the context stays, first, as a rule of its own.
        Rules::Text(text) => vec![Rule {
            kind: "context".into(),
            name: "context".into(),
            text,
            ..Rule::default()
        }],
        Rules::List(list) => list,
    };
    candidates.extend(found);

    let mut active: Vec<String> = context
        .active_files
        .iter()
        .chain(&request.active_files)
        .map(|file| as_glob_path(file))
        .collect();
    active.dedup();
    // An active file the caller names by its absolute path may go through a link (a home
    // folder that is one, `/tmp` on macOS) where the rules folder's real path does not: it
    // is matched as its real path too. Only the caller's own (`--files`): a context's, which
    // a pull request may write, is not looked up on the machine.
    let real_forms: Vec<(String, usize)> = request
        .active_files
        .iter()
        .filter_map(|file| {
            let real = real_path_of(Path::new(file))?;
            let at = active
                .iter()
                .position(|named| *named == as_glob_path(file))?;
            (real != active[at]).then_some((real, at))
        })
        .collect();
    let mut report = RulesReport {
        assembled: true,
        ..RulesReport::default()
    };
    let mut applied = Vec::new();
    let mut globs = GlobBudget::default();
    let mut work_left = match_work;
    for rule in candidates {
        let decision = if globs.spend(&rule.metadata) {
            decide_within(
                &rule,
                (&active, &real_forms),
                &request.disabled,
                &context.rule_toggles,
                &mut work_left,
            )
        } else {
            RuleDecision::TooManyGlobs
        };
        if decision.applies() {
            applied.push(rule.clone());
        }
        report.rules.push((rule, decision));
    }
    context.rules = Rules::List(applied);
    context.workflows.extend(workflows.iter().cloned());
    report.workflows = workflows;
    report
}

/// What matching the active files against the rules' globs may cost a context, in bytes of
/// file path times bytes of glob: a path is read once per state its rule's globs compile to,
/// when the globs are too many or too tangled for the fast matcher (a thousand globs of `?`
/// and classes, over a thousand paths of four hundred bytes, took half a minute). About a
/// second, where a real context's rules take a small fraction of it. A rule whose matching
/// would take the rules past it is left out, as are the rules with globs after it.
const MAX_MATCH_WORK: u64 = 1 << 28;

/// What matching may cost a workspace's contexts together (see [`MAX_MATCH_WORK`]), a few
/// seconds: each context had the whole of [`MAX_MATCH_WORK`], and two hundred contexts
/// extending one with a thousand long active files and a rule of tangled globs ran every
/// command past the process's time limit.
const WORKSPACE_MATCH_WORK: u64 = 1 << 30;

/// What matching may cost each of a workspace's `contexts`: an even share of
/// [`WORKSPACE_MATCH_WORK`], at most [`MAX_MATCH_WORK`]. The same for every context, whatever
/// order they are decided in and however often (a compile of the matrix may decide its
/// context again), so that each decides alike every time.
fn match_work_per_context(contexts: usize) -> u64 {
    (WORKSPACE_MATCH_WORK / (contexts.max(1) as u64)).min(MAX_MATCH_WORK)
}

/// Whether one rule applies, and why, its matching unbounded.
#[cfg(test)]
fn decide(
    rule: &Rule,
    active_files: &[String],
    disabled: &[String],
    toggles: &IndexMap<String, bool>,
) -> RuleDecision {
    let mut unbounded = u64::MAX;
    decide_within(rule, (active_files, &[]), disabled, toggles, &mut unbounded)
}

/// Whether one rule applies, and why, its matching paid from `work_left` (see
/// [`MAX_MATCH_WORK`]).
fn decide_within(
    rule: &Rule,
    (active_files, real_forms): (&[String], &[(String, usize)]),
    disabled: &[String],
    toggles: &IndexMap<String, bool>,
    work_left: &mut u64,
) -> RuleDecision {
    let named = |name: &String| {
        *name == rule.name
            || (!rule.path.is_empty() && (*name == rule.path || *name == rule.qualified_path()))
    };
    if disabled.iter().any(named) {
        return RuleDecision::DisabledByFlag;
    }
    if toggles.iter().any(|(name, on)| !on && named(name)) {
        return RuleDecision::DisabledByToggle;
    }
    if rule.metadata.get("alwaysApply") == Some(&Value::Bool(true)) {
        return RuleDecision::AlwaysByMetadata;
    }
    let globs = match globs_of(&rule.metadata) {
        Ok(globs) => globs,
        Err(_) => return RuleDecision::BrokenGlobs,
    };
    if globs.patterns.is_empty() {
        // Cursor applies a rule that says `alwaysApply: false` and gives no globs only when
        // it is asked for (by the agent, from its description, or by the user).
        if rule.metadata.get("alwaysApply") == Some(&Value::Bool(false)) {
            return if toggles.iter().any(|(name, on)| *on && named(name)) {
                RuleDecision::SwitchedOnByToggle
            } else {
                RuleDecision::OnRequest
            };
        }
        return RuleDecision::Always;
    }
    if globs
        .patterns
        .iter()
        .any(|glob| MATCH_ALL.contains(&glob.as_str()))
    {
        return RuleDecision::AlwaysByMetadata;
    }
    // The rule's first glob that an active file matches, with the first file it matches:
    // one pass of the set over each file, rather than one matcher per glob over every file.
    let per_byte: u64 = globs
        .patterns
        .iter()
        .map(|glob| glob.len() as u64)
        .sum::<u64>()
        .max(1);
    let mut first: Option<(usize, &String)> = None;
    // A file named by its path from the rules' folder (`/home/me/shop/src/app.tsx` for the
    // folder `/home/me/shop`) is matched as the path below it: globs are written from there.
    // The folder as named, and as its real path: `--rules .` with `/home/me/shop/src/app.tsx`.
    let folders = [as_glob_path(&rule.folder), as_glob_path(&rule.real_folder)];
    let below_folder = |file: &str| -> Option<String> {
        folders.iter().find_map(|folder| {
            let rest = file.strip_prefix(folder.trim_end_matches('/'))?;
            let rest = rest.strip_prefix('/')?;
            (!folder.is_empty() && !rest.is_empty()).then(|| rest.to_string())
        })
    };
    let forms: Vec<(String, &String)> = active_files
        .iter()
        .flat_map(|file| {
            std::iter::once((file.clone(), file)).chain(below_folder(file).map(|rest| (rest, file)))
        })
        .chain(
            real_forms
                .iter()
                .filter_map(|(real, at)| Some((below_folder(real)?, active_files.get(*at)?))),
        )
        .collect();
    for (form, file) in &forms {
        let cost = per_byte.saturating_mul(file.len().max(1) as u64);
        match work_left.checked_sub(cost) {
            Some(left) => *work_left = left,
            None => {
                *work_left = 0;
                return RuleDecision::TooCostlyToMatch;
            }
        }
        let mut matched = regex_automata::PatternSet::new(globs.set.pattern_len());
        globs
            .set
            .which_overlapping_matches(&regex_automata::Input::new(form.as_bytes()), &mut matched);
        let Some(index) = matched.iter().next().map(|id| id.as_usize()) else {
            continue;
        };
        if first.is_none_or(|(best, _)| index < best) {
            first = Some((index, file));
        }
    }
    match first {
        Some((index, file)) => RuleDecision::Matched {
            file: file.clone(),
            glob: globs.patterns[index].clone(),
        },
        None => RuleDecision::NoActiveFileMatches {
            globs: globs.patterns,
        },
    }
}

/// The real path of an absolute `path` as globs read it: its nearest existing folder's real
/// path (links resolved), then the rest of it; `None` for a relative path, or one whose real
/// path cannot be told.
fn real_path_of(path: &Path) -> Option<String> {
    if !path.is_absolute() {
        return None;
    }
    let (existing, rest) = path.ancestors().find_map(|folder| {
        Some((
            fs::canonicalize(folder).ok()?,
            path.strip_prefix(folder).ok()?,
        ))
    })?;
    // `join` of nothing would end the path with a separator.
    let real = if rest.as_os_str().is_empty() {
        existing
    } else {
        existing.join(rest)
    };
    Some(as_glob_path(&shown_real_path(&real)))
}

/// A real path as the rest of the world writes it: on Windows, without the `\\?\` prefix
/// `canonicalize` puts before a drive (`C:\src\shop`, not `\\?\C:\src\shop`), which no
/// path a caller names has.
fn shown_real_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    let plain = text
        .strip_prefix(r"\\?\")
        .filter(|rest| rest.as_bytes().get(1) == Some(&b':'))
        .unwrap_or(&text);
    plain.replace('\\', "/")
}

/// An active file's path as globs read it: `/` between its parts (a path written on
/// Windows, `src\ui\app.tsx`, is the same file), without a leading `./`.
fn as_glob_path(file: &str) -> String {
    let file = file.replace('\\', "/");
    let mut rest = file.as_str();
    while let Some(after) = rest.strip_prefix("./") {
        rest = after.trim_start_matches('/');
    }
    rest.to_string()
}

/// Globs that match every path: a rule carrying them is always active (as the seeds' rules
/// files with `globs: ["*"]` intend).
const MATCH_ALL: [&str; 3] = ["*", "**", "**/*"];

/// The most globs one rule may have.
const MAX_GLOBS: usize = 1000;

/// The most globs the rules of one context may have, all told. Each rule's globs are built
/// into a matcher and matched against every active file: 256 rules files of 1000 globs each,
/// with 3000 active files, took 26 s to validate.
const MAX_GLOBS_IN_ALL: usize = 10_000;

/// The globs of the rules decided so far.
#[derive(Default)]
struct GlobBudget {
    spent: usize,
}

impl GlobBudget {
    /// Counts a rule's globs; `false` (and nothing counted) when they would take the rules
    /// past [`MAX_GLOBS_IN_ALL`].
    fn spend(&mut self, metadata: &IndexMap<String, Value>) -> bool {
        let count = glob_count(metadata);
        if self.spent + count > MAX_GLOBS_IN_ALL {
            return false;
        }
        self.spent += count;
        true
    }
}

/// How many globs a rule's `globs` holds, counted as [`globs_of`] splits them, without
/// building them.
fn glob_count(metadata: &IndexMap<String, Value>) -> usize {
    match metadata.get("globs") {
        Some(Value::String(text)) => text.split(',').filter(|p| !p.trim().is_empty()).count(),
        Some(Value::Array(items)) => items.len(),
        _ => 0,
    }
}

/// A rule's `globs`: its patterns in order, and the set that matches a path against all of
/// them at once.
struct RuleGlobs {
    patterns: Vec<String>,
    /// Shared, not cloned: a clone of a regex starts with no search cache of its own, and
    /// each compile's searches would make theirs afresh.
    set: Arc<regex_automata::meta::Regex>,
}

/// Globs written as one string (Cursor's `globs: src/**/*.ts, test/**`): split at the commas
/// between them, not at those inside a `{…}` alternative (`src/{ui,web}/**`), which are the
/// glob's own.
fn split_globs(text: &str) -> Vec<String> {
    let mut globs = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                globs.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    globs.push(&text[start..]);
    globs
        .into_iter()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(String::from)
        .collect()
}

/// The patterns of a rule's `globs` (a list of strings, or one string of comma-separated
/// patterns, as Cursor writes them), built. `Err` holds the offending text and why.
fn globs_of(metadata: &IndexMap<String, Value>) -> Result<RuleGlobs, (String, String)> {
    let patterns = patterns_of(metadata)?;
    // Each glob adds to the one matcher built of them all: a rule of a hundred thousand
    // globs took gigabytes and half a minute to build.
    if let Some(extra) = patterns.get(MAX_GLOBS) {
        return Err((
            extra.clone(),
            format!("a rule may have at most {MAX_GLOBS} globs"),
        ));
    }
    let set = SETS.get(&patterns.join("\0"), || glob_set(&patterns).map(Arc::new))?;
    Ok(RuleGlobs { patterns, set })
}

/// Each rule's globs, built once per process: validation and every compile of every context
/// ask, and an agent asks again at each request for the same project.
static SETS: Built<Arc<regex_automata::meta::Regex>, (String, String)> = Built::new();

/// The patterns a rule's `globs` writes: a list of them, or one comma-separated string; or
/// the value to blame and why.
fn patterns_of(metadata: &IndexMap<String, Value>) -> Result<Vec<String>, (String, String)> {
    Ok(match metadata.get("globs") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => split_globs(text),
        Some(Value::Array(items)) => {
            let mut patterns = Vec::new();
            for item in items {
                match item {
                    Value::String(text) => patterns.push(text.trim().to_string()),
                    other => {
                        return Err((other.to_string(), "a glob must be a string".into()));
                    }
                }
            }
            patterns
        }
        Some(other) => {
            return Err((
                other.to_string(),
                "`globs` must be a list of patterns or one string".into(),
            ));
        }
    })
}

/// The rule's globs after `first` that do not parse either, each with why.
fn other_bad_globs(metadata: &IndexMap<String, Value>, first: &str) -> Vec<(String, String)> {
    let Ok(patterns) = patterns_of(metadata) else {
        return Vec::new();
    };
    let Some(at) = patterns.iter().position(|pattern| pattern == first) else {
        return Vec::new();
    };
    patterns[at + 1..]
        .iter()
        .take(MAX_GLOBS)
        .filter(|pattern| *pattern != first)
        .filter_map(|pattern| match Glob::new(pattern) {
            Ok(_) => None,
            Err(error) => Some((pattern.clone(), error.kind().to_string())),
        })
        .collect()
}

/// The matcher of a rule's globs, or the glob to blame and why.
fn glob_set(patterns: &[String]) -> Result<regex_automata::meta::Regex, (String, String)> {
    let mut globs = Vec::with_capacity(patterns.len());
    for pattern in patterns {
        crate::built::refuse_deep_glob(pattern).map_err(|error| (pattern.clone(), error))?;
        match Glob::new(pattern) {
            Ok(glob) => globs.push(glob),
            Err(error) => return Err((pattern.clone(), error.kind().to_string())),
        }
    }
    // A set that does not build is as broken as a glob that does not parse. Its error holds
    // the compiled regex, not the glob, so the pattern to blame is the first that does not
    // build on its own; only when all do is it the set, named by all its patterns.
    crate::built::glob_set_regex(&globs, GLOB_SET_LIMIT).map_err(|error| {
        patterns
            .iter()
            .find_map(|pattern| {
                let glob = Glob::new(pattern).ok()?;
                let alone = GlobSetBuilder::new().add(glob).build().err()?;
                Some((pattern.clone(), build_message(&alone)))
            })
            .unwrap_or_else(|| (patterns.join(", "), error))
    })
}

/// At most this many bytes for what one rule's globs compile to together.
const GLOB_SET_LIMIT: usize = 10 << 20;

/// A rule's first glob, as a warning about all of them names it.
fn first_glob(metadata: &IndexMap<String, Value>) -> String {
    match metadata.get("globs") {
        Some(Value::String(text)) => text.split(',').next().unwrap_or_default().trim().into(),
        Some(Value::Array(items)) => match items.first() {
            Some(Value::String(text)) => text.trim().into(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        _ => String::new(),
    }
}

/// What went wrong building a glob's matcher, without the regex globset made of it (which
/// the user never wrote).
fn build_message(error: &globset::Error) -> String {
    error.kind().to_string()
}

/// How a folder is read: as a project (where rules live in it) or as a folder of global
/// rules (every file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Project,
    Global,
}

impl Reader<'_> {
    /// A context's `rules_from` folders: inside the workspace only. One outside is reported
    /// here when `report_outside` (validation reports a workspace context's).
    fn rules_from(
        &mut self,
        root: &Path,
        rules_from: &[String],
        named_at: &[Span],
        report_outside: bool,
    ) {
        for (index, name) in rules_from.iter().enumerate() {
            self.named_at = named_at.get(index).copied();
            let path = Path::new(name);
            // Validation reports a folder in `.git` at its setting; it is not read.
            let in_git = crate::confine::in_git_folder(root, name);
            match crate::load::read::resolve_inside(root, root, name) {
                Some(_) if in_git && report_outside => {
                    self.missing(path.to_path_buf(), PathProblem::GitFolder.to_string());
                }
                Some(_) if in_git => {}
                // A folder not there is told with the folder of a near name beside it.
                Some(inside) => match fs::symlink_metadata(&inside) {
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                        let near = crate::load::read::folder_near(root, name);
                        self.missing_near(path.to_path_buf(), error.to_string(), near);
                    }
                    _ => self.folder(&inside, path.to_path_buf(), Origin::Project),
                },
                None if report_outside => self.missing(
                    path.to_path_buf(),
                    PathProblem::OutsideWorkspace.to_string(),
                ),
                None => {}
            }
        }
        self.named_at = None;
    }
}

struct Reader<'a> {
    sources: &'a mut Sources,
    diagnostics: &'a mut Diagnostics,
    /// Where the folder being read is named (a `rules_from` value), when a file names it.
    named_at: Option<Span>,
    file_bytes: u64,
    files: usize,
    bytes: u64,
    /// The globs of the rules read so far (workflows are not decided by globs).
    globs: GlobBudget,
    rules: Vec<Rule>,
    workflows: Vec<Rule>,
    /// The rules folder being read, as named: each rule's `folder`.
    folder_shown: String,
    /// Its real path: each rule's `real_folder`.
    folder_real: String,
    /// Rules files not read as rules, with why (see [`RulesReport::skipped`]).
    skipped: Vec<(Rule, String)>,
    /// Files and folders of the folder being read that were told of as unread, and those
    /// past [`MAX_UNREADABLE_NAMED`], counted only.
    unreadable_named: usize,
    unreadable_more: usize,
    /// Each folder read, as its real path: one named twice (`proj` and `./proj`, or in a
    /// context's `rules_from` and again on the command line) is read once.
    read_folders: Vec<(PathBuf, Origin)>,
    /// A workspace's output folder: its real path, and as `build.out` names it. A rules
    /// file that is a link into it is not read: the rules would be what the last build wrote.
    outputs: Option<(PathBuf, PathBuf)>,
}

/// The most files and folders of one rules folder told of one by one as unread (links to
/// nothing or to folders, special files); the rest are one warning at the folder. A folder of
/// 100,000 links to nothing made as many warnings, 3 seconds and 145 MB of them.
const MAX_UNREADABLE_NAMED: usize = 100;

/// How deep below a rules folder rules are read (`.clinerules/a/b/c/d/rule.md` is 6).
const MAX_RULES_DEPTH: usize = 6;

/// Where rules live in a project folder: files, and folders of them.
const RULES_LOCATIONS: [&str; 5] = [
    ".clinerules",
    ".cursor/rules",
    ".cursorrules",
    ".windsurfrules",
    "AGENTS.md",
];

/// Whether a path below a project folder is where rules live, or in it: what is skipped
/// there is worth a word; the rest of the project is none of the rules' business.
fn in_rules_location(relative: &Path) -> bool {
    let text = relative.to_string_lossy().replace('\\', "/");
    RULES_LOCATIONS.iter().any(|location| {
        text == *location
            || text
                .strip_prefix(location)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Why what stands at a rules location is not what rules are read from, if it is not: a link
/// to nothing, a folder where a rules file goes, or a file where a folder of rules goes. Each
/// was skipped without a word, where a link to a folder was told of.
fn misplaced(origin: Origin, relative: &Path, entry: &walkdir::DirEntry) -> Option<String> {
    // What the entry is, through a link.
    let Ok(target) = fs::metadata(entry.path()) else {
        return entry.path_is_symlink().then(|| {
            "it is a link to nothing: rules are read from files and folders that exist".into()
        });
    };
    if origin != Origin::Project || entry.depth() != 1 && relative != Path::new(".cursor/rules") {
        return None;
    }
    let text = relative.to_string_lossy().replace('\\', "/");
    match text.as_str() {
        ".cursorrules" | ".windsurfrules" | "AGENTS.md" if target.is_dir() => {
            Some("it is a folder, where a rules file is read: rules here are one file".into())
        }
        ".cursor" | ".cursor/rules" if !target.is_dir() => Some(
            "it is a file, where a folder is read: Cursor's rules are `.mdc` files in `.cursor/rules/`"
                .into(),
        ),
        _ => None,
    }
}

/// Whether a path below a project folder is one rules are read from: a rules file, or a
/// folder of them or in one (`.clinerules/x`, `.cursor/rules`).
pub fn is_rules_location(relative: &Path) -> bool {
    kind_of(relative).is_some()
        || relative.starts_with(".clinerules")
        || relative.starts_with(".cursor/rules")
}

/// What a file of a project folder is, by its path below the folder.
fn kind_of(relative: &Path) -> Option<(&'static str, u8)> {
    let text = relative.to_str()?.replace('\\', "/");
    let markdown = text.ends_with(".md");
    Some(match text.as_str() {
        ".clinerules" => ("clinerules", 0),
        _ if text.starts_with(".clinerules/workflows/") && markdown => ("workflow", 5),
        _ if text.starts_with(".clinerules/") && markdown => ("clinerules", 0),
        ".cursorrules" => ("cursorrules", 1),
        _ if text.starts_with(".cursor/rules/") && text.ends_with(".mdc") => ("cursor", 2),
        ".windsurfrules" => ("windsurfrules", 3),
        "AGENTS.md" => ("agents", 4),
        _ => return None,
    })
}

/// A rule's name: its file's name without `.md` or `.mdc` (`AGENTS`, `.cursorrules`).
fn rule_name(path_in_folder: &str) -> String {
    let file_name = path_in_folder.rsplit('/').next().unwrap_or(path_in_folder);
    file_name
        .strip_suffix(".mdc")
        .or_else(|| file_name.strip_suffix(".md"))
        .unwrap_or(file_name)
        .to_string()
}

/// The kind of rules a location gives, for one that is not read as rules: its own kind, or the
/// kind of the folder it stands in (`.clinerules/deep/…`, `.cursor`); empty for another place
/// in a folder of global rules.
fn location_kind(relative: &str) -> &'static str {
    match kind_of(Path::new(relative)) {
        Some((kind, _)) => kind,
        None if relative.starts_with(".clinerules/workflows/") => "workflow",
        None if relative == ".clinerules" || relative.starts_with(".clinerules/") => "clinerules",
        None if relative == ".cursor" || relative.starts_with(".cursor/") => "cursor",
        None => "",
    }
}

/// Front matter that parsed, by its text: an agent reads a project's rules again at each
/// request (the files may change), and parsing each rule's YAML was half of what a rule cost
/// it (about 12 µs of 24). The text alone decides what it parses to; front matter that does
/// not parse is not kept, so its problem is reported at its place in its file each time.
fn parsed_frontmatter() -> &'static BoundedMemo<Box<str>, IndexMap<String, Value>> {
    static PARSED: std::sync::OnceLock<BoundedMemo<Box<str>, IndexMap<String, Value>>> =
        std::sync::OnceLock::new();
    PARSED.get_or_init(|| BoundedMemo::new(PARSED_FRONTMATTER_BYTES))
}

/// The most the parsed front matter kept may hold, counted at [`PARSED_BYTES_PER_BYTE`] times
/// its text: past it, the memo starts again.
const PARSED_FRONTMATTER_BYTES: usize = 16 << 20;
/// What a byte of front matter takes once parsed and kept, with its key, at most (keys and
/// strings copied into a map of JSON values).
const PARSED_BYTES_PER_BYTE: usize = 8;

/// Why a rules file was not read.
enum Unread {
    /// Larger than the bytes it may hold: a data file's limit, or what is left of the bytes
    /// the rules read may hold together.
    TooLarge {
        limit: u64,
        together: bool,
    },
    Other(String),
}

impl Reader<'_> {
    /// Reads one rules folder; `shown` is how diagnostics name it.
    fn folder(&mut self, folder: &Path, shown: PathBuf, origin: Origin) {
        self.folder_shown = shown.to_string_lossy().replace('\\', "/");
        self.unreadable_named = 0;
        self.unreadable_more = 0;
        crate::looked_at::name(folder);
        let real = match fs::canonicalize(folder) {
            Ok(real) if real.is_dir() => real,
            Ok(_) => return self.missing(shown, PathProblem::NotAFolder.to_string()),
            Err(error) => return self.missing(shown, error.to_string()),
        };
        // Read already, the same way: its rules would be in the prompt twice.
        if self.read_folders.contains(&(real.clone(), origin)) {
            return;
        }
        self.folder_real = shown_real_path(&real);
        self.read_folders.push((real.clone(), origin));
        if origin == Origin::Project {
            for location in RULES_LOCATIONS.iter().chain([&".cursor"]) {
                crate::looked_at::path(&real.join(location));
            }
        }
        let mut files: Vec<(u8, String, PathBuf, &'static str)> = Vec::new();
        // Links are not followed into folders; a linked file is read only when its target
        // stays inside the rules folder (checked below).
        // One level past the deepest read, so what lies deeper is told of, not left out
        // without a word.
        // Only where rules live is walked (in a project folder: `.clinerules`, `.cursor/rules`
        // and the root's own files), not `node_modules` and the rest of the project.
        let walk = WalkDir::new(&real)
            .follow_links(false)
            .max_depth(MAX_RULES_DEPTH + 1)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| {
                let relative = entry.path().strip_prefix(&real).unwrap_or(entry.path());
                origin == Origin::Global
                    || entry.depth() <= 1
                    || in_rules_location(relative)
                    || relative == Path::new(".cursor")
            });
        let mut too_deep: Option<(PathBuf, usize)> = None;
        for entry in walk {
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    // An unreadable folder (or a loop): its rules would be missing unseen.
                    let path = error.path().unwrap_or(&real);
                    let relative = path.strip_prefix(&real).unwrap_or(path);
                    if origin == Origin::Global || in_rules_location(relative) {
                        self.unreadable(&shown, relative, error.to_string());
                    }
                    continue;
                }
            };
            let Ok(relative) = entry.path().strip_prefix(&real) else {
                continue;
            };
            // `.cursor` is walked for its `rules`: what stands at its own name is worth a word.
            let relevant = origin == Origin::Global
                || in_rules_location(relative)
                || relative == Path::new(".cursor");
            if entry.depth() > MAX_RULES_DEPTH {
                // Told once, at the first, with how many more there are.
                if relevant {
                    let first = too_deep.get_or_insert_with(|| (relative.to_path_buf(), 0));
                    first.1 += 1;
                }
                continue;
            }
            if entry.path_is_symlink()
                && relevant
                && fs::metadata(entry.path()).is_ok_and(|m| m.is_dir())
            {
                self.unreadable(
                    &shown,
                    relative,
                    "it is a link to a folder: links are not followed into folders; put the folder itself here".into(),
                );
                continue;
            }
            if relevant && let Some(reason) = misplaced(origin, relative, &entry) {
                self.unreadable(&shown, relative, reason);
                continue;
            }
            if entry.file_type().is_dir() {
                continue;
            }
            // A name that is not UTF-8 was passed over without a word; one holding a line
            // break or another control character would write the prompt's lines for it
            // (`Rule `…` (from …)` headings a project forges).
            if relevant {
                let reason = match relative.to_str() {
                    None => Some("its name is not UTF-8 text, which the prompt cannot name"),
                    Some(text) if text.chars().any(char::is_control) => Some(
                        "its name holds a line break or another control character, which would break the prompt's lines",
                    ),
                    Some(_) => None,
                };
                if let Some(reason) = reason {
                    self.unreadable(&shown, relative, reason.into());
                    continue;
                }
            }
            let found = match origin {
                Origin::Project => kind_of(relative),
                Origin::Global => {
                    let text = relative.to_string_lossy().replace('\\', "/");
                    if !text.ends_with(".md") {
                        None
                    } else if text.starts_with("workflows/") {
                        Some(("workflow", 5))
                    } else {
                        Some(("global", 0))
                    }
                }
            };
            if let Some((kind, rank)) = found {
                let relative = relative.to_string_lossy().replace('\\', "/");
                files.push((rank, relative, entry.path().to_path_buf(), kind));
            }
        }
        if let Some((first, count)) = too_deep {
            let more = match count {
                1 => String::new(),
                _ => format!(" (and {} more files or folders as deep)", count - 1),
            };
            self.unreadable(
                &shown,
                &first,
                format!(
                    "it lies more than {MAX_RULES_DEPTH} folders deep in the rules folder, where rules are not read{more}"
                ),
            );
        }
        if self.unreadable_more > 0 {
            let id = self.sources.add(shown.clone(), String::new());
            self.warn(
                RulesProblem::MoreRulesUnreadable {
                    folder: self.folder_shown.clone(),
                    more: self.unreadable_more,
                    named: MAX_UNREADABLE_NAMED,
                },
                Span::file_start(id),
            );
        }
        // Kinds in their documented order, files of a kind by path.
        files.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        for (_, relative, path, kind) in files {
            if self.files == MAX_RULE_FILES {
                let id = self.sources.add(shown.join(&relative), String::new());
                self.warn(
                    RulesProblem::TooManyRuleFiles {
                        limit: MAX_RULE_FILES,
                    },
                    Span::file_start(id),
                );
                return;
            }
            self.files += 1;
            self.file(&real, &path, shown.join(&relative), relative, kind);
        }
    }

    fn file(&mut self, folder: &Path, path: &Path, shown: PathBuf, relative: String, kind: &str) {
        let remaining = MAX_RULES_BYTES.saturating_sub(self.bytes);
        // Confined to the rules folder, not the workspace: a link elsewhere in the workspace
        // leaves the folder, which is what the reason says.
        let read = confine::real_path_inside(folder, path)
            .map_err(|problem| match problem {
                PathProblem::LinkLeavesWorkspace { target } => format!(
                    "is a symbolic link to {}, outside the rules folder, which rules are read from",
                    target.display()
                ),
                PathProblem::OutsideWorkspace => {
                    "lies outside the rules folder, which rules are read from".to_string()
                }
                other => other.to_string(),
            })
            .map_err(Unread::Other)
            .and_then(|real| match &self.outputs {
                Some((outputs, shown)) if real.starts_with(outputs) => {
                    // A file of the output folder, reached by a link or lying there.
                    let problem = if path.is_symlink() {
                        let below = real.strip_prefix(outputs).unwrap_or(&real);
                        PathProblem::LinkToOutput {
                            target: shown.join(below),
                        }
                    } else {
                        PathProblem::InOutput
                    };
                    Err(Unread::Other(problem.to_string()))
                }
                _ => Ok(real),
            })
            .and_then(|real| {
                confine::read_named(&real, self.file_bytes.min(remaining)).map_err(|error| {
                    match error.problem {
                        PathProblem::TooLarge { limit, .. } => Unread::TooLarge {
                            limit,
                            together: remaining < self.file_bytes,
                        },
                        other => Unread::Other(other.to_string()),
                    }
                })
            })
            .and_then(|bytes| {
                String::from_utf8(bytes).map_err(|_| Unread::Other("not UTF-8".to_string()))
            });
        let name = rule_name(&relative);
        let folder = self.folder_shown.clone();
        let unread = |reason: String| {
            (
                Rule {
                    kind: kind.to_string(),
                    path: relative.clone(),
                    folder: folder.clone(),
                    name: name.clone(),
                    ..Rule::default()
                },
                reason,
            )
        };
        let text = match read {
            Ok(text) => text,
            Err(why) => {
                let path = shown.display().to_string();
                let id = self.sources.add(shown, String::new());
                let problem = match why {
                    Unread::Other(reason) => {
                        self.skipped
                            .push(unread(format!("it cannot be read: {reason}")));
                        RulesProblem::RuleUnreadable { path, reason }
                    }
                    Unread::TooLarge { limit, together } => {
                        self.skipped
                            .push(unread(format!("it is larger than {limit} bytes")));
                        RulesProblem::RuleTooLarge {
                            path,
                            limit,
                            together,
                        }
                    }
                };
                return self.warn(problem, Span::file_start(id));
            }
        };
        self.bytes = self.bytes.saturating_add(text.len() as u64);
        let id = self.sources.add(shown, text);
        let Some((metadata, body)) = self.frontmatter(id) else {
            // Why, as the warning just given says it.
            let reason = self
                .diagnostics
                .iter()
                .last()
                .map_or_else(String::new, |told| told.problem.to_string());
            self.skipped.push(unread(reason));
            return;
        };
        if kind != "workflow" && !self.globs.spend(&metadata) {
            let span = self.locate_globs(id, &first_glob(&metadata));
            self.warn(
                RulesProblem::TooManyGlobs {
                    limit: MAX_GLOBS_IN_ALL,
                },
                span,
            );
        } else if let Err((glob, message)) = globs_of(&metadata) {
            // Every glob that does not parse is told, not the first alone: the rule is
            // skipped until all are fixed.
            let others = other_bad_globs(&metadata, &glob);
            let span = self.locate_globs(id, &glob);
            self.warn(RulesProblem::BadGlob { glob, message }, span);
            for (glob, message) in others {
                let span = self.locate_globs(id, &glob);
                self.warn(RulesProblem::BadGlob { glob, message }, span);
            }
        }
        if let Some(found) = metadata
            .get("alwaysApply")
            .filter(|value| !value.is_boolean())
        {
            let found = match found {
                Value::String(text) => format!("the text `{text}`"),
                other => format!("`{other}`"),
            };
            let span = self.locate_key(id, "alwaysApply");
            self.warn(RulesProblem::AlwaysApplyNotABoolean { found }, span);
        }
        for (key, meant) in keys_not_read(&metadata) {
            let span = self.locate_key(id, &key);
            self.warn(RulesProblem::KeyNotRead { key, meant }, span);
        }
        let rule = Rule {
            kind: kind.to_string(),
            path: relative.clone(),
            folder,
            real_folder: self.folder_real.clone(),
            name,
            text: body,
            metadata,
        };
        if kind == "workflow" {
            self.workflows.push(rule);
        } else {
            self.rules.push(rule);
        }
    }

    /// The frontmatter (empty when there is none) and the text after it; `None`, with a
    /// warning, when the frontmatter is broken.
    fn frontmatter(&mut self, id: SourceId) -> Option<(IndexMap<String, Value>, String)> {
        let file = self.sources.get(id);
        let text = file.text.strip_prefix('\u{feff}').unwrap_or(&file.text);
        let skipped = file.text.len() - text.len();
        let first_line_end = text.find('\n').unwrap_or(text.len());
        if text[..first_line_end].trim_end() != "---" {
            return Some((IndexMap::new(), text.trim().to_string()));
        }
        let yaml_start = (first_line_end + 1).min(text.len());
        // The closing `---`: the first later line holding only it.
        let mut at = yaml_start;
        let mut close = None;
        while at < text.len() {
            let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
            if text[at..end].trim_end() == "---" {
                close = Some((at, end));
                break;
            }
            at = end + 1;
        }
        let Some((close_start, close_end)) = close else {
            self.warn(
                RulesProblem::FrontmatterUnclosed,
                Span::new(id, skipped..skipped + 3),
            );
            return None;
        };
        let yaml = &text[yaml_start..close_start];
        let body = text[close_end.min(text.len())..].trim().to_string();
        if yaml.trim().is_empty() {
            return Some((IndexMap::new(), body));
        }
        if let Some(metadata) = parsed_frontmatter().get(yaml) {
            return Some((metadata, body));
        }
        // Read as every YAML file of the workspace is, its keys judged alike, at its place in
        // the file: the lines before it blanked, so that offsets and lines are the file's.
        let before: String = file.text[..skipped + yaml_start]
            .chars()
            .map(|c| match c {
                '\n' => "\n".to_string(),
                c => " ".repeat(c.len_utf8()),
            })
            .collect();
        let refused = match super::yaml_document::value(before.len(), &format!("{before}{yaml}")) {
            Ok(Value::Object(metadata)) => {
                let metadata: IndexMap<String, Value> = metadata.into_iter().collect();
                parsed_frontmatter().insert(
                    yaml.into(),
                    metadata.clone(),
                    yaml.len().saturating_mul(PARSED_BYTES_PER_BYTE),
                );
                return Some((metadata, body));
            }
            Ok(_) => (
                "the frontmatter is a mapping of fields (`description: …`)".to_string(),
                skipped + yaml_start,
            ),
            Err(unreadable) => {
                let message = match unreadable.problem {
                    Problem::YamlSyntax { message } => message,
                    problem => problem.to_string(),
                };
                (message, unreadable.at.start)
            }
        };
        let (message, offset) = refused;
        let offset = offset.clamp(skipped + yaml_start, skipped + close_start);
        self.warn(
            RulesProblem::FrontmatterSyntax { message },
            Span::new(id, offset..offset),
        );
        None
    }

    /// Where a bad glob is written: the pattern's text, else the `globs` key, else the file.
    /// The line of the frontmatter that sets `key`, else the file's start.
    fn locate_key(&self, id: SourceId, key: &str) -> Span {
        let text = &self.sources.get(id).text;
        let at = text
            .find(&format!("\n{key}"))
            .map(|at| at + 1)
            .filter(|&at| at < text.find("\n---").unwrap_or(text.len()));
        match at {
            Some(at) => {
                let end = text[at..].find('\n').map_or(text.len(), |end| at + end);
                Span::new(id, at..end)
            }
            None => Span::file_start(id),
        }
    }

    fn locate_globs(&self, id: SourceId, glob: &str) -> Span {
        let text = &self.sources.get(id).text;
        let key = text.find("\nglobs").map(|at| at + 1);
        let range: Option<Range<usize>> = key.map(|key| {
            // After the key's colon and before the frontmatter ends, so that a pattern such as
            // `s` is not found in `globs` nor in the rule's text; quoted first, so that `src/[ui` is not found inside `"src/[ui-old/**"`.
            let after = text[key..].find(':').map_or(key, |colon| key + colon + 1);
            let end = text[after..]
                .find("\n---")
                .map_or(text.len(), |end| after + end);
            let value = &text[after..end];
            let quoted = ['"', '\''].into_iter().find_map(|quote| {
                value
                    .find(&format!("{quote}{glob}{quote}"))
                    .map(|at| at + quote.len_utf8())
            });
            // Unquoted, a whole item of the list: `[ab` is not the one inside `src/[ab`.
            let whole_item = || {
                let bounded = |c: Option<char>| {
                    c.is_none_or(|c| c == ',' || c == '[' || c == ']' || c.is_whitespace())
                };
                value.match_indices(glob).map(|(at, _)| at).find(|&at| {
                    bounded(value[..at].chars().next_back())
                        && bounded(value[at + glob.len()..].chars().next())
                })
            };
            match quoted
                .or_else(whole_item)
                .or_else(|| value.find(glob))
                .filter(|_| !glob.is_empty())
            {
                Some(at) => after + at..after + at + glob.len(),
                None => key..key + "globs".len(),
            }
        });
        Span::new(id, range.unwrap_or(0..0))
    }

    fn missing(&mut self, shown: PathBuf, reason: String) {
        self.missing_near(shown, reason, None);
    }

    /// [`Reader::missing`], with a folder of a name near it (`project` for `projcet`).
    fn missing_near(&mut self, shown: PathBuf, reason: String, near: Option<String>) {
        let path = shown.display().to_string();
        let span = match self.named_at {
            Some(span) => span,
            None => Span::file_start(self.sources.add(shown, String::new())),
        };
        self.diagnostics.push(Diagnostic::new(
            Problem::Rules(RulesProblem::RulesFolderMissing { path, reason, near }),
            span,
        ));
    }

    /// A rules file or folder that is not read, and why: warned of at `shown` (the folder as
    /// diagnostics name it) joined with `relative`, and listed with the skipped files, so that
    /// `explain` names it beside the rules that were read. Past the first
    /// [`MAX_UNREADABLE_NAMED`] of a folder, only counted.
    fn unreadable(&mut self, shown: &Path, relative: &Path, reason: String) {
        if self.unreadable_named == MAX_UNREADABLE_NAMED {
            self.unreadable_more += 1;
            return;
        }
        self.unreadable_named += 1;
        let path_in_folder = relative.to_string_lossy().replace('\\', "/");
        self.skipped.push((
            Rule {
                kind: location_kind(&path_in_folder).to_string(),
                name: rule_name(&path_in_folder),
                path: path_in_folder,
                folder: self.folder_shown.clone(),
                ..Rule::default()
            },
            reason.clone(),
        ));
        let shown = shown.join(relative);
        let path = shown.display().to_string();
        let id = self.sources.add(shown, String::new());
        self.warn(
            RulesProblem::RuleUnreadable { path, reason },
            Span::file_start(id),
        );
    }

    fn warn(&mut self, problem: RulesProblem, span: Span) {
        self.diagnostics
            .push(Diagnostic::new(Problem::Rules(problem), span));
    }
}

/// The frontmatter keys a rule is decided by.
const READ_KEYS: [&str; 2] = ["globs", "alwaysApply"];

/// Each key of `metadata` that is not read but near a read key the rule does not give, with
/// that key: written in another case or with `_` or `-` (`always_apply`), or a letter off
/// (`glob`). Other keys (`description`, an agent's own) are the rule's to keep.
fn keys_not_read(metadata: &IndexMap<String, Value>) -> Vec<(String, String)> {
    let folded = |key: &str| key.to_lowercase().replace(['_', '-'], "");
    let missing: Vec<String> = READ_KEYS
        .iter()
        .filter(|key| !metadata.contains_key(**key))
        .map(|key| (*key).to_string())
        .collect();
    metadata
        .keys()
        .filter(|key| !READ_KEYS.contains(&key.as_str()))
        .filter_map(|key| {
            let meant = missing
                .iter()
                .find(|read| folded(read) == folded(key))
                .cloned()
                .or_else(|| crate::namespace::closest(key, &missing))?;
            Some((key.clone(), meant))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_near_one_the_rule_is_decided_by_is_told() {
        let metadata = |pairs: &[(&str, Value)]| -> IndexMap<String, Value> {
            pairs
                .iter()
                .map(|(key, value)| ((*key).to_string(), value.clone()))
                .collect()
        };
        let told = keys_not_read(&metadata(&[
            ("glob", serde_json::json!(["docs/**"])),
            ("alwaysapply", Value::Bool(false)),
            ("description", Value::from("Docs")),
        ]));
        assert_eq!(
            told,
            [
                ("glob".to_string(), "globs".to_string()),
                ("alwaysapply".to_string(), "alwaysApply".to_string())
            ]
        );
        assert_eq!(
            keys_not_read(&metadata(&[("always_apply", Value::Bool(true))])),
            [("always_apply".to_string(), "alwaysApply".to_string())]
        );
        // A key the rule gives as well is not told again, nor a key near none.
        let given = metadata(&[
            ("globs", serde_json::json!(["src/**"])),
            ("glob", serde_json::json!(["x"])),
            ("tags", serde_json::json!(["web"])),
        ]);
        assert_eq!(keys_not_read(&given), []);
    }

    fn rule(globs: Value) -> Rule {
        let mut metadata = IndexMap::new();
        metadata.insert("globs".to_string(), globs);
        Rule {
            name: "web".into(),
            path: ".clinerules/web.md".into(),
            metadata,
            ..Rule::default()
        }
    }

    // `globs: "src/{ui,web}/**/*.tsx"` was cut at the comma inside the braces, into two
    // globs that do not parse, and the rule was left out.
    #[test]
    fn globs_in_one_string_are_split_between_globs_only() {
        assert_eq!(
            split_globs("src/{ui,web}/**/*.tsx, docs/*.md,,\\,x"),
            ["src/{ui,web}/**/*.tsx", "docs/*.md", "\\,x"]
        );
        let braced = rule(serde_json::json!("src/{ui,web}/**/*.tsx, *.css"));
        let none = IndexMap::new();
        for (file, applies) in [
            ("src/web/app.tsx", true),
            ("site.css", true),
            ("src/api/a.tsx", false),
        ] {
            let decision = decide(&braced, &[file.to_string()], &[], &none);
            assert_eq!(decision.applies(), applies, "{file}: {decision:?}");
        }
    }

    // A workspace's contexts share what matching may cost: one context has all a context may,
    // many an even share each, the same whatever order they are decided in.
    #[test]
    fn a_workspace_s_contexts_share_what_matching_may_cost() {
        assert_eq!(match_work_per_context(0), MAX_MATCH_WORK);
        assert_eq!(match_work_per_context(1), MAX_MATCH_WORK);
        assert_eq!(match_work_per_context(4), MAX_MATCH_WORK);
        assert_eq!(match_work_per_context(8), MAX_MATCH_WORK / 2);
        assert_eq!(match_work_per_context(1000), WORKSPACE_MATCH_WORK / 1000);
        assert!(match_work_per_context(10_000).saturating_mul(10_000) <= WORKSPACE_MATCH_WORK);
    }

    // A thousand tangled globs over a thousand long paths took half a minute to match: what
    // matching costs a context is bounded, and a rule past it is left out.
    #[test]
    fn matching_the_active_files_is_paid_for() {
        let ts = rule(serde_json::json!(["src/**/*.ts"]));
        let files: Vec<String> = (0..10).map(|n| format!("src/a{n}.rs")).collect();
        let none = IndexMap::new();
        // Each file costs its length times the globs' (9 × 11 bytes).
        let mut left = 99 * 4;
        assert_eq!(
            decide_within(&ts, (&files, &[]), &[], &none, &mut left),
            RuleDecision::TooCostlyToMatch
        );
        assert_eq!(left, 0);
        let mut left = 99 * 10;
        assert!(matches!(
            decide_within(&ts, (&files, &[]), &[], &none, &mut left),
            RuleDecision::NoActiveFileMatches { .. }
        ));
        assert_eq!(left, 0);
        // A context's rules share the bound: the rule past it, and those after it, are left
        // out, whatever they would match.
        let long: Vec<String> = (0..2000).map(|n| format!("src/{n:0>200}.ts")).collect();
        let many = rule(serde_json::json!(
            (0..1000)
                .map(|i| format!("src/m{i}/**"))
                .collect::<Vec<_>>()
        ));
        let mut left = MAX_MATCH_WORK;
        assert_eq!(
            decide_within(&many, (&long, &[]), &[], &none, &mut left),
            RuleDecision::TooCostlyToMatch
        );
        assert!(matches!(
            decide_within(&ts, (&long, &[]), &[], &none, &mut left),
            RuleDecision::TooCostlyToMatch
        ));
    }

    #[test]
    fn a_large_projects_rules_are_built_once_across_compiles() {
        // A hundred rules of their own globs (more than were kept), decided compile after
        // compile as an agent does for one project: each rule's globs are built once, not
        // once a compile.
        // The store is the process's, shared with the tests running beside this one: one
        // that fills it meanwhile may push a rule out, which is then built again. Each try
        // uses rules of its own; one try in three with every rule built once shows the
        // property, a store that rebuilds at each compile fails all three.
        let none = IndexMap::new();
        let mut built = Vec::new();
        for attempt in 0..3 {
            let area = |area: usize| format!("built-once-{attempt}-{area}");
            let rules: Vec<Rule> = (0..100)
                .map(|n| {
                    let area = area(n);
                    rule(serde_json::json!([
                        format!("src/{area}/**/*.ts"),
                        format!("lib/{area}/*.rs")
                    ]))
                })
                .collect();
            let file = [format!("src/{}/main.ts", area(7))];
            for _ in 0..3 {
                let applying = rules
                    .iter()
                    .filter(|rule| decide(rule, &file, &[], &none).applies())
                    .count();
                assert_eq!(applying, 1);
            }
            built = (0..100)
                .map(|n| {
                    let area = area(n);
                    SETS.times_built(&format!("src/{area}/**/*.ts\0lib/{area}/*.rs"))
                })
                .collect();
            if built.iter().all(|&times| times == 1) {
                return;
            }
        }
        panic!("times each rule's globs were built: {built:?}");
    }

    // A rule of a hundred thousand globs took gigabytes to build its matcher: past 1000 the
    // rule's globs are broken, and the rule applies nowhere.
    #[test]
    fn a_rule_has_at_most_a_thousand_globs() {
        let globs = |count: usize| {
            serde_json::json!(
                (0..count)
                    .map(|i| format!("src/m{i}/**"))
                    .collect::<Vec<_>>()
            )
        };
        let none = IndexMap::new();
        let file = ["src/m0/a.rs".to_string()];
        assert!(decide(&rule(globs(1000)), &file, &[], &none).applies());
        assert_eq!(
            decide(&rule(globs(1001)), &file, &[], &none),
            RuleDecision::BrokenGlobs
        );
        let Err((glob, message)) = globs_of(&rule(globs(1001)).metadata) else {
            panic!("1001 globs were accepted");
        };
        assert_eq!(
            (glob.as_str(), message.as_str()),
            ("src/m1000/**", "a rule may have at most 1000 globs")
        );
    }

    // The set matches every glob at once; what a match reports is still the rule's first
    // glob (in its order) that any active file matches, and the first file it matches.
    #[test]
    fn a_match_names_the_first_glob_then_its_first_file() {
        let rule = rule(serde_json::json!(["docs/**", "*.md", "src/**/*.rs"]));
        let none = IndexMap::new();
        let files: Vec<String> = ["src/lib.rs", "notes/b.md", "README.md", "docs/x.txt"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            decide(&rule, &files[..3], &[], &none),
            RuleDecision::Matched {
                file: "notes/b.md".into(),
                glob: "*.md".into()
            }
        );
        assert_eq!(
            decide(&rule, &files, &[], &none),
            RuleDecision::Matched {
                file: "docs/x.txt".into(),
                glob: "docs/**".into()
            }
        );
        assert_eq!(
            decide(&rule, &files[..1], &[], &none),
            RuleDecision::Matched {
                file: "src/lib.rs".into(),
                glob: "src/**/*.rs".into()
            }
        );
    }

    #[test]
    fn globs_decide_by_active_files() {
        let rule = rule(serde_json::json!(["src/**/*.tsx"]));
        let none = IndexMap::new();
        assert_eq!(
            decide(&rule, &["src/ui/app.tsx".into()], &[], &none),
            RuleDecision::Matched {
                file: "src/ui/app.tsx".into(),
                glob: "src/**/*.tsx".into()
            }
        );
        assert!(!decide(&rule, &["README.md".into()], &[], &none).applies());
        assert!(!decide(&rule, &[], &[], &none).applies());
        assert_eq!(
            decide(&rule, &["src/a.tsx".into()], &["web".into()], &none),
            RuleDecision::DisabledByFlag
        );
        let toggles = IndexMap::from([(".clinerules/web.md".to_string(), false)]);
        assert_eq!(
            decide(&rule, &["src/a.tsx".into()], &[], &toggles),
            RuleDecision::DisabledByToggle
        );
    }

    #[test]
    fn comma_separated_and_match_all_globs() {
        let none = IndexMap::new();
        let cursor = rule(Value::String("*.rs, docs/*.md".into()));
        assert!(decide(&cursor, &["docs/a.md".into()], &[], &none).applies());
        let all = rule(serde_json::json!(["*"]));
        assert_eq!(
            decide(&all, &[], &[], &none),
            RuleDecision::AlwaysByMetadata
        );
        let broken = rule(serde_json::json!(["src/[a"]));
        assert_eq!(decide(&broken, &[], &[], &none), RuleDecision::BrokenGlobs);
    }
}
