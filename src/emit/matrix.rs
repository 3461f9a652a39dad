//! The build matrix: every family × context of the manifest compiled to
//! `<out>/<family>/<context>.md`, written, compared with what is committed, and cleaned.
//!
//! promptc records the files it wrote in `<out>/.promptc-outputs`, so that removing a family
//! or context from the matrix removes its output and never a file promptc did not write.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::analysis::budget::{self, Needs, check_budget};
use crate::analysis::stable_prefix::volatile_warning;
use crate::compile::{Compiler, Request, Selection, place};
use crate::compiled::{CompileError, Compiled};
use crate::confine;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::emit::write::{Staged, is_left_behind, is_temporary};
use crate::load::mcp_places::McpPlaces;
use crate::parameter_schema::held_bytes;
use crate::path_error::{PathError, PathProblem};
use crate::problem::Problem;
use crate::resolve::date::SourceDateEpoch;
use crate::span::Span;
use crate::workspace::Workspace;

/// The list of outputs promptc owns, one workspace-relative path per line.
pub const INDEX_FILE: &str = ".promptc-outputs";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixEntry {
    /// The family compiled (of the variant a build entry names).
    pub family: String,
    /// The variant a build entry names; `None` compiles the family's one variant.
    pub variant: Option<String>,
    pub context: String,
    /// Relative to the workspace root, `/`-separated.
    pub path: String,
}

impl MatrixEntry {
    /// What the entry compiles, as reports name it: its family, or the variant a build entry
    /// names (`next-gen@2`; an id beside its family, `next-gen (next-gen-2)`), which is not the
    /// family's released version and must not read as it.
    pub fn compiles(&self) -> String {
        match &self.variant {
            None => self.family.clone(),
            Some(variant) if variant.contains('@') => variant.clone(),
            Some(variant) => format!("{} ({variant})", self.family),
        }
    }

    /// The entry as reports name it: what it compiles, × its context.
    pub fn label(&self) -> String {
        format!("{} × {}", self.compiles(), self.context)
    }
}

/// The matrix's entries: every family (in manifest or declaration order) with every context,
/// then the manifest's `build.entries` in their order; the entries alone when neither
/// `families` nor `contexts` is set beside them.
pub fn entries(workspace: &Workspace) -> Vec<MatrixEntry> {
    let build = &workspace.settings().build;
    let out = build.out.trim_end_matches('/');
    let product_too = build.families.is_some() || build.contexts.is_some();
    let mut all = if build.entries.is_none() || product_too {
        product(workspace, out)
    } else {
        Vec::new()
    };
    if let Some(listed) = &build.entries {
        all.extend(listed.iter().map(|entry| {
            let family = workspace.family_of(&entry.variant);
            let output = entry
                .output
                .clone()
                .unwrap_or_else(|| format!("{family}/{}.md", entry.context));
            MatrixEntry {
                family: family.to_string(),
                // A variant id (or `family@version`) names one variant; a family
                // compiles with its chosen version.
                variant: (workspace.variants.contains_key(&entry.variant)
                    || entry.variant.contains('@'))
                .then(|| entry.variant.clone()),
                context: entry.context.clone(),
                path: format!("{out}/{output}"),
            }
        }));
    }
    all
}

/// Every family the build names (else every family) with every context it names (else
/// every context).
fn product(workspace: &Workspace, out: &str) -> Vec<MatrixEntry> {
    let (families, contexts) = workspace.build_product();
    families
        .iter()
        .flat_map(|family| {
            contexts.iter().map(move |context| MatrixEntry {
                family: family.clone(),
                variant: None,
                context: context.clone(),
                path: format!("{out}/{family}/{context}.md"),
            })
        })
        .collect()
}

/// The matrix's entries of one family, or one context, or both; all of them for `None`.
pub fn entries_matching(
    workspace: &Workspace,
    family: Option<&str>,
    context: Option<&str>,
) -> Vec<MatrixEntry> {
    entries(workspace)
        .into_iter()
        .filter(|entry| {
            family.is_none_or(|family| family == entry.family)
                && context.is_none_or(|context| context == entry.context)
        })
        .collect()
}

/// The result of compiling the whole matrix: what compiled, and what did not and why.
#[derive(Debug, Default)]
pub struct MatrixRun {
    pub outputs: Vec<(MatrixEntry, Compiled)>,
    pub failed: Vec<(MatrixEntry, CompileError)>,
    /// Outputs over their token budget: errors, though the text was compiled.
    pub over_budget: Diagnostics,
}

impl MatrixRun {
    /// Whether every entry compiled within its budget.
    pub fn is_clean(&self) -> bool {
        self.failed.is_empty() && self.over_budget.is_empty()
    }
}

/// The request that compiles one matrix entry; `None` for an unknown context (a validation
/// error of its own).
pub fn request(
    workspace: &Workspace,
    entry: &MatrixEntry,
    source_date_epoch: SourceDateEpoch,
) -> Option<Request> {
    // Its rules folders were read when the workspace loaded, and its globs and toggles
    // decided once for the whole matrix, as for a single build of the context.
    let context = (*workspace.matrix_context(&entry.context)?).clone();
    let mut request = Request::new(
        match &entry.variant {
            Some(id) => Selection::variant(id),
            None => Selection::family(&entry.family),
        },
        context,
    );
    request.source_date_epoch = source_date_epoch;
    if let Some(named) = workspace.contexts.get(&entry.context) {
        request.mcp_places = McpPlaces::of_context(named, &workspace.contexts);
    }
    Some(request)
}

/// Compiles every entry. Failures are returned with their entry; the other entries still
/// compile. A diagnostic is returned with the first entry that hit it only: the same
/// template error is not repeated for every family × context.
pub fn compile_all(
    compiler: &Compiler<'_>,
    source_date_epoch: impl Into<SourceDateEpoch>,
) -> MatrixRun {
    compile_entries(
        compiler,
        entries(compiler.workspace()),
        source_date_epoch.into(),
    )
}

/// Compiles the given entries as [`compile_all`] does: one run, so a template that ran out of
/// fuel is not rendered again and each error is returned once.
pub fn compile_entries(
    compiler: &Compiler<'_>,
    entries: Vec<MatrixEntry>,
    source_date_epoch: SourceDateEpoch,
) -> MatrixRun {
    let mut outputs = Vec::new();
    let mut run = compile_visiting(compiler, entries, source_date_epoch, |entry, compiled| {
        outputs.push((entry, compiled));
    });
    run.outputs = outputs;
    run
}

/// [`compile_each`] with a visitor that cannot fail: each output is handed to `visit`, in
/// entry order, and not kept.
pub fn compile_visiting(
    compiler: &Compiler<'_>,
    entries: Vec<MatrixEntry>,
    source_date_epoch: SourceDateEpoch,
    mut visit: impl FnMut(MatrixEntry, Compiled),
) -> MatrixRun {
    let run = compile_each_taking(compiler, entries, source_date_epoch, |entry, output| {
        if let Some(compiled) = output.take() {
            visit(entry, compiled);
        }
        Ok::<(), std::convert::Infallible>(())
    });
    match run {
        Ok(run) => run,
        Err(never) => match never {},
    }
}

/// The most threads a matrix is compiled on, this one included.
const MAX_WORKERS: usize = 8;

/// The memory the compiles running at once may take together. A compile holds up to about four
/// times its `limits.compile_bytes` at its peak (its sections, the prompt, the copies made on
/// the way): under the largest limit, 256 MiB, each thread took about 1 GB, and eight threads
/// (eight cores) would pass the command line's memory ceiling of 4 GiB.
const COMPILES_MEMORY: u64 = 2 << 30;

/// How many threads compile a matrix of `runs` runs, this one included: one per core, at most
/// [`MAX_WORKERS`], and as many as [`COMPILES_MEMORY`] holds compiles of `compile_bytes`.
fn compile_threads(cores: usize, runs: usize, compile_bytes: u64) -> usize {
    let by_memory = COMPILES_MEMORY / compile_bytes.saturating_mul(4).max(1);
    let by_memory = usize::try_from(by_memory).unwrap_or(usize::MAX).max(1);
    cores.min(MAX_WORKERS).min(runs).min(by_memory).max(1)
}
/// How far ahead of the entry being handled the threads may compile: what waits, whole, for
/// its turn. Four runs: with two, a thread that finished its run while this one was still
/// compiling the next waited for the first outputs to be handled (the shipped matrix compiled
/// in 5.7 ms on two threads, in one process, where an even split of it took 5.0; 5.1 with
/// four runs of four, the same as with four runs of eight, which hold twice the memory).
const WINDOW: usize = 4 * RUN;

/// The most bytes of text (prompts and their sections) the outputs compiled ahead of the one
/// being handled may hold together before the threads wait: counted in entries alone, 24
/// outputs of 15 MB (a template of a hundred bytes makes one, within the default limits)
/// held 660 MB while they waited for their turn.
const WINDOW_BYTES: usize = 64 * 1024 * 1024;

/// A compiled entry with what checking its budget needs, found on the thread that compiled
/// it: bounding a prompt's count without the token tables reads the whole prompt (about a
/// fifteenth of a shipped `build --all`'s processor time), which the thread that handles the
/// outputs in order did for every output, alone.
type Measured = Result<(Compiled, Needs), CompileError>;

fn measured(compiler: &Compiler<'_>, result: Result<Compiled, CompileError>) -> Measured {
    result.map(|output| {
        let needs = compiler
            .variant(&output.variant)
            .map_or(Needs::Nothing, |variant| {
                budget::needs(compiler.workspace(), variant, &output)
            });
        (output, needs)
    })
}

/// Compiles the entries on the machine's cores and hands each result to `handle` in the
/// entries' order, so that what comes out does not depend on which thread was faster (see
/// [`in_order`]). `None` is an entry whose context is unknown (reported by validation).
///
/// A template that runs out of fuel is not rendered again by later entries of the run, which
/// take its error instead: that depends on order. So the threads compile in isolation, and from
/// the first entry (in order) where a template ran out, the rest of the run is compiled in
/// order on this thread, as a run on one core would be.
fn compile_in_order<E>(
    compiler: &Compiler<'_>,
    entries: Vec<MatrixEntry>,
    source_date_epoch: SourceDateEpoch,
    mut handle: impl FnMut(MatrixEntry, &mut Option<Measured>) -> Result<(), E>,
) -> Result<(), E> {
    let workspace = compiler.workspace();
    let runs = in_taking_order(runs_of(&entries), &entries);
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let compile_bytes = workspace.settings().limits.compile_bytes;
    let helpers = compile_threads(cores, runs.len(), compile_bytes).saturating_sub(1);
    let mut resume = 0;
    if helpers > 0 {
        let isolated = |index: usize| -> Compiling<Option<Measured>> {
            let Some(request) = request(workspace, &entries[index], source_date_epoch) else {
                return Compiling {
                    result: None,
                    bytes: 0,
                    ran_out: false,
                };
            };
            let (result, ran_out) = compiler.compile_isolated(&request);
            let result = measured(compiler, result);
            Compiling {
                bytes: result.as_ref().map_or(0, |(output, _)| text_bytes(output)),
                result: Some(result),
                ran_out,
            }
        };
        let (outcome, stopped_at) = in_order(
            &runs,
            entries.len(),
            helpers,
            WINDOW_BYTES,
            &isolated,
            |index, result| handle(entries[index].clone(), result),
        );
        outcome?;
        resume = stopped_at;
    }
    for entry in entries.into_iter().skip(resume) {
        let mut result = request(workspace, &entry, source_date_epoch)
            .map(|request| measured(compiler, compiler.compile_in_run(&request)));
        handle(entry, &mut result)?;
    }
    Ok(())
}

/// Calls its function when dropped.
struct OnDrop<F: Fn()>(F);

impl<F: Fn()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}

/// What compiling one entry gave, for [`in_order`]: the result, the bytes of text it holds
/// while it waits for its turn, and whether a template ran out of fuel.
struct Compiling<T> {
    result: T,
    bytes: usize,
    ran_out: bool,
}

/// A handled result on its way to be dropped: its bytes stay counted with the results compiled
/// ahead (`ahead`) until it is, wherever that is (on the helper that compiled it, on this
/// thread when that helper has ended, or with a channel that closes).
struct Handled<'a, T> {
    _result: T,
    bytes: usize,
    ahead: &'a std::sync::atomic::AtomicUsize,
}

impl<T> Drop for Handled<'_, T> {
    fn drop(&mut self) {
        self.ahead
            .fetch_sub(self.bytes, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Compiles entries `0..count` with `compile`, on this thread and `helpers` others, and hands
/// each result to `handle` in order. This thread compiles too, between handling what the
/// others finished: on a small matrix the others' results would otherwise wait for a thread
/// that has to be woken for each. Threads take `runs` (every entry in one, in the order
/// they are taken: see [`in_taking_order`]), and start one at most [`WINDOW`] entries ahead of
/// the one being handled; and while the results compiled ahead hold more than `window_bytes`,
/// a helper compiles only the entry to be handled next (or one before it), and this thread
/// only runs up to the one holding it, so memory stays bounded: at most `WINDOW + RUN`
/// results wait for their turn, and past that size, one per helper and a few runs of this
/// thread's more.
///
/// What `handle` leaves of a result is dropped on the thread that compiled it: sent back to a
/// helper, which drops what it was sent before each entry it compiles and each time it wakes
/// while it waits for its turn. Its bytes count with the results compiled ahead until it is
/// dropped ([`Handled`]), so `window_bytes` bounds both together; in entries, what waits to
/// be dropped is at most what a helper had compiled ahead when it began its current entry.
/// Freed here, a helper's output (its memory the helper's allocator's) cost this thread, which
/// every result waits for, 1-4% of a shipped `build --all` (see the performance log).
///
/// An error from `handle` stops the threads. So does a compile that ran out of fuel: its entry
/// is not handled, and what is returned with the outcome is the entry to resume from (every
/// entry before it was handled).
fn in_order<T: Send, E>(
    runs: &[std::ops::Range<usize>],
    count: usize,
    helpers: usize,
    window_bytes: usize,
    compile: &(dyn Fn(usize) -> Compiling<T> + Sync),
    mut handle: impl FnMut(usize, &mut T) -> Result<(), E>,
) -> (Result<(), E>, usize) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex, PoisonError, mpsc};

    // The next run to take.
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // The index of the entry to be handled next, and its change.
    let handled = (Mutex::new(0usize), Condvar::new());
    let halt = || {
        // Under the lock, so that a thread waiting for its turn wakes to it.
        let (lock, turn) = &handled;
        let _guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
        stop.store(true, Ordering::Relaxed);
        turn.notify_all();
    };
    // The bytes of the results compiled and not handled yet.
    let ahead = AtomicUsize::new(0);
    let compiled = |index: usize| -> Compiling<T> {
        let compiling = compile(index);
        ahead.fetch_add(compiling.bytes, Ordering::Relaxed);
        // A template ran out: no thread starts another entry, which could spend the whole
        // fuel on it again.
        if compiling.ran_out {
            halt();
        }
        compiling
    };
    let over = || ahead.load(Ordering::Relaxed) > window_bytes;
    // Where each entry's run is in the taking order.
    let mut taken_at = vec![0; count];
    for (position, run) in runs.iter().enumerate() {
        for index in run.clone() {
            taken_at[index] = position;
        }
    }
    // Each result with the helper that compiled it (`None`: this thread).
    let (sender, receiver) = mpsc::channel::<(usize, Option<usize>, Compiling<T>)>();
    let stage = crate::cores::Stage::default();
    std::thread::scope(|scope| {
        // What this thread sends back to each helper to drop.
        let mut give_back = Vec::with_capacity(helpers);
        for helper in 0..helpers {
            let sender = sender.clone();
            let (returns, given_back) = mpsc::channel::<Handled<'_, T>>();
            give_back.push(returns);
            let drop_given_back = move || given_back.try_iter().for_each(drop);
            let (next, stop, handled, compiled, over, stage) =
                (&next, &stop, &handled, &compiled, &over, &stage);
            // A thread that cannot be started (a low memory limit counts every thread's
            // stack) is one helper fewer: this thread compiles what is left.
            let _ = crate::cores::started(crate::cores::builder().spawn_scoped(scope, move || {
                let _held = stage.hold();
                'runs: while let Some(run) = runs.get(next.fetch_add(1, Ordering::Relaxed)).cloned()
                {
                    for index in run.clone() {
                        if index == run.start || over() {
                            // The entry to be handled next, and those before it, never
                            // wait: its thread is the one all others wait for.
                            let (lock, turn) = handled;
                            loop {
                                drop_given_back();
                                let done = lock.lock().unwrap_or_else(PoisonError::into_inner);
                                if stop.load(Ordering::Relaxed)
                                    || (run.start < *done + WINDOW && (index <= *done || !over()))
                                {
                                    break;
                                }
                                // Woken at each result handled, or at the stop.
                                drop(turn.wait(done).unwrap_or_else(PoisonError::into_inner));
                            }
                        }
                        if stop.load(Ordering::Relaxed) {
                            break 'runs;
                        }
                        drop_given_back();
                        if sender.send((index, Some(helper), compiled(index))).is_err() {
                            break 'runs;
                        }
                    }
                }
                drop_given_back();
            }));
        }
        let held = stage.hold();
        drop(sender);
        // However this thread leaves, the others stop: a `handle` that panics (the bindings
        // unwind) left them waiting for their turn, and the scope waiting for them.
        let _halt = OnDrop(&halt);
        // Runs this thread may take: within the window of the entry it handles next, so what
        // it compiles never waits long for its turn; and past the window's size, only while
        // the run holding that entry is not taken yet (the runs before it in the taking order
        // are taken first), else its result is waited for.
        let take = |expected: usize| loop {
            let at = next.load(Ordering::Relaxed);
            if over() && taken_at[expected] < at {
                break None;
            }
            match runs.get(at) {
                Some(run) if run.start < expected + WINDOW => {
                    if next
                        .compare_exchange(at, at + 1, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                    {
                        break Some(run.clone());
                    }
                }
                _ => break None,
            }
        };
        let mut waiting: std::collections::BTreeMap<usize, (Option<usize>, Compiling<T>)> =
            std::collections::BTreeMap::new();
        let mut expected = 0;
        let mut outcome = Ok(());
        while expected < count && outcome.is_ok() {
            if let Some((helper, compiling)) = waiting.remove(&expected) {
                let Compiling {
                    mut result,
                    bytes,
                    ran_out,
                } = compiling;
                if ran_out {
                    break;
                }
                outcome = handle(expected, &mut result);
                let done_with = Handled {
                    _result: result,
                    bytes,
                    ahead: &ahead,
                };
                // Back to the helper that compiled it. What this thread compiled, and what a
                // helper that has ended can no longer take (the send hands it back), is
                // dropped here, as is a result left unhandled when the run stops.
                match helper.and_then(|helper: usize| give_back.get(helper)) {
                    Some(returns) => drop(returns.send(done_with)),
                    None => drop(done_with),
                }
                expected += 1;
                let (lock, turn) = &handled;
                *lock.lock().unwrap_or_else(PoisonError::into_inner) = expected;
                turn.notify_all();
                continue;
            }
            if let Ok((index, helper, compiling)) = receiver.try_recv() {
                waiting.insert(index, (helper, compiling));
                continue;
            }
            if !stop.load(Ordering::Relaxed)
                && let Some(run) = take(expected)
            {
                for index in run {
                    // As on the other threads: once a template ran out, no entry more.
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    waiting.insert(index, (None, compiled(index)));
                }
                continue;
            }
            // What comes next is another thread's: wait for it.
            match receiver.recv() {
                Ok((index, helper, compiling)) => {
                    waiting.insert(index, (helper, compiling));
                }
                // Every other thread has stopped: what is left is compiled by the caller.
                Err(_) => break,
            }
        }
        halt();
        drop(held);
        (outcome, expected)
    })
}

/// The entries in runs a thread compiles one after the other: consecutive entries of one
/// variant, at most [`RUN`] of them. A variant's compiles share most of their renders, which
/// the first compile of the run leaves in the memo for the next ones on the same thread,
/// rather than two threads rendering the same sections at once.
fn runs_of(entries: &[MatrixEntry]) -> Vec<std::ops::Range<usize>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match runs.last_mut() {
            Some(run)
                if run.len() < RUN
                    && entries[run.start].family == entry.family
                    && entries[run.start].variant == entry.variant =>
            {
                run.end = index + 1;
            }
            _ => runs.push(index..index + 1),
        }
    }
    runs
}

/// The runs in the order the threads take them: first each run that starts within the window
/// and begins a variant's entries (a run of another variant than the run before it), then the
/// others in order. The threads' first compiles render every
/// section afresh; started on runs of one variant they rendered the same sections, and
/// bounded the same prompt's tokens, side by side, where each could have started a variant of
/// its own. Every run moved ahead starts within the window, so any thread may take it at
/// once; the others keep their order, so the run holding the entry to be handled next is
/// never behind one that waits for it.
fn in_taking_order(
    runs: Vec<std::ops::Range<usize>>,
    entries: &[MatrixEntry],
) -> Vec<std::ops::Range<usize>> {
    let variant_of = |run: &std::ops::Range<usize>| {
        entries
            .get(run.start)
            .map(|entry| (&entry.family, &entry.variant))
    };
    let mut ahead = Vec::new();
    let mut rest = Vec::with_capacity(runs.len());
    let mut previous = None;
    for run in runs {
        let variant = variant_of(&run);
        if run.start < WINDOW && variant != previous {
            ahead.push(run);
        } else {
            rest.push(run);
        }
        previous = variant;
    }
    ahead.extend(rest);
    ahead
}

/// The most entries in a run: a variant's compiles go to a thread a few at a time, so that
/// the window holds four runs within 20 outputs.
const RUN: usize = 4;

/// How many outputs may wait, whole, for the token tables: past that their budgets are
/// checked as they compile, so a huge matrix is never held in memory for them.
const DEFERRED_BUDGETS: usize = 64;

/// The most bytes of text (prompts and their sections) the outputs waiting for the token
/// tables may hold together. Counted in outputs alone, 64 prompts of 15 MB (a template of a
/// hundred bytes makes one, within the default limits) held 2 GB while they waited.
const DEFERRED_BYTES: usize = 32 * 1024 * 1024;

/// Whether an output holding `bytes` of text may wait for the token tables beside `waiting`
/// others that hold `held` bytes.
fn may_wait(waiting: usize, held: usize, bytes: usize) -> bool {
    waiting < DEFERRED_BUDGETS && held.saturating_add(bytes) <= DEFERRED_BYTES
}

/// The bytes an output holds: its prompt, its sections' texts and its native tool
/// definitions (a copy of every parameter schema of its tools).
fn text_bytes(output: &Compiled) -> usize {
    output.prompt.len()
        + output
            .sections
            .iter()
            .map(|section| section.text.len())
            .sum::<usize>()
        + output.tool_definitions.as_ref().map_or(0, held_bytes)
}

/// Compiles the entries (on several threads, in order as far as anything can tell) and
/// shows each output to `each` in entry order, keeping none: memory does not grow with the
/// matrix. The run returned holds the failures and the budget errors
/// (its `outputs` are empty); an error from `each` stops the run. Failures and budget errors
/// are reported as [`compile_all`] reports them.
pub fn compile_each<E>(
    compiler: &Compiler<'_>,
    entries: Vec<MatrixEntry>,
    source_date_epoch: SourceDateEpoch,
    mut each: impl FnMut(MatrixEntry, &Compiled) -> Result<(), E>,
) -> Result<MatrixRun, E> {
    compile_each_taking(
        compiler,
        entries,
        source_date_epoch,
        |entry, output| match output {
            Some(output) => each(entry, output),
            None => Ok(()),
        },
    )
}

/// [`compile_each`], where `each` may take the output (what it leaves is dropped on the
/// thread that compiled it: see [`in_order`]).
fn compile_each_taking<E>(
    compiler: &Compiler<'_>,
    entries: Vec<MatrixEntry>,
    source_date_epoch: SourceDateEpoch,
    mut each: impl FnMut(MatrixEntry, &mut Option<Compiled>) -> Result<(), E>,
) -> Result<MatrixRun, E> {
    let workspace = compiler.workspace();
    let mut run = MatrixRun::default();
    let mut reported = BTreeSet::new();
    let mut over_budget = Vec::new();
    // Outputs whose budget check needs a count not known yet: checked once the rest is
    // compiled, while the token tables load on another thread.
    let mut deferred: Vec<(String, Compiled)> = Vec::new();
    let mut deferred_bytes = 0;
    compile_in_order(compiler, entries, source_date_epoch, |entry, slot| {
        let Some(result) = slot.take() else {
            return Ok(());
        };
        match result {
            Ok((output, needs)) => {
                if let Some(variant) = compiler.variant(&output.variant) {
                    let over = match needs {
                        budget::Needs::Nothing => None,
                        budget::Needs::Known(tokens) => {
                            budget::over_budget(workspace, variant, &output, &entry.context, tokens)
                        }
                        budget::Needs::Count(encoding) => {
                            let bytes = text_bytes(&output);
                            if may_wait(deferred.len(), deferred_bytes, bytes) {
                                encoding.preload();
                                deferred_bytes += bytes;
                                deferred.push((entry.context.clone(), output.clone()));
                                None
                            } else {
                                check_budget(workspace, variant, &output, &entry.context)
                            }
                        }
                    };
                    over_budget.extend(over);
                }
                let mut output = Some(output);
                let shown = each(entry, &mut output);
                // What `each` left is dropped where it was compiled.
                *slot = output.map(|output| Ok((output, Needs::Nothing)));
                shown?;
            }
            Err(CompileError::Diagnostics(found)) => {
                let mut fresh = Diagnostics::default();
                for diagnostic in found.iter() {
                    let span = diagnostic.span;
                    let key = (
                        span.source,
                        span.start,
                        span.end,
                        diagnostic.problem.to_string(),
                    );
                    if reported.insert(key) {
                        fresh.push(diagnostic.clone());
                    }
                }
                run.failed.push((entry, CompileError::Diagnostics(fresh)));
            }
            Err(error) => run.failed.push((entry, error)),
        }
        Ok(())
    })?;
    for (context, output) in deferred {
        if let Some(variant) = compiler.variant(&output.variant)
            && let Some(over) = check_budget(workspace, variant, &output, &context)
        {
            over_budget.push(over);
        }
    }
    run.over_budget = budget::report(over_budget);
    Ok(run)
}

#[derive(Debug, Default)]
pub struct WriteReport {
    pub written: Vec<String>,
    pub unchanged: Vec<String>,
    pub removed: Vec<String>,
    /// Temporary files left behind by an interrupted build, now removed.
    pub strays: Vec<String>,
    /// Files in the output folders that are no outputs and that promptc did not write, left
    /// as they are (`check` fails on them).
    pub foreign: Vec<String>,
    /// Files to remove (outputs no longer in the matrix, strays) that could not be, once the
    /// new outputs were in place: the build's outputs are written, these are left.
    pub not_removed: Vec<PathError>,
}

/// Beside an output `<stem>.md`, its native tool definitions: `<stem>.tools.json`.
pub const DEFINITIONS_SUFFIX: &str = ".tools.json";

/// The files one compiled entry gives, path and text: its prompt, and beside it, for a
/// variant with native tool calls, its tool definitions as JSON.
pub fn files<'c>(entry: &MatrixEntry, compiled: &'c Compiled) -> Vec<(String, Cow<'c, str>)> {
    // The prompt is borrowed: each is only compared with its file on disk or written, and a
    // copy of each was a copy of the whole matrix's text in fresh memory.
    let mut files = vec![(entry.path.clone(), Cow::Borrowed(compiled.prompt.as_str()))];
    if let Some(definitions) = &compiled.tool_definitions {
        let stem = entry.path.strip_suffix(".md").unwrap_or(&entry.path);
        files.push((
            format!("{stem}{DEFINITIONS_SUFFIX}"),
            Cow::Owned(definitions_text(definitions)),
        ));
    }
    files
}

/// Tool definitions as their file holds them: pretty JSON, ending with a line break.
pub fn definitions_text(definitions: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(definitions).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes the outputs that changed, removes owned outputs no longer in the matrix, and
/// records the new set of owned files. All or nothing: every path is checked and every new
/// output written to a temporary file before the first one is renamed into place, so a
/// refused path or a failed write changes nothing.
pub fn write_all(
    workspace: &Workspace,
    outputs: &[(MatrixEntry, Compiled)],
) -> Result<WriteReport, PathError> {
    let mut writer = MatrixWriter::new(workspace);
    for (entry, compiled) in outputs {
        writer.add(entry, compiled)?;
    }
    writer.finish()
}

/// [`write_all`] one output at a time, for a matrix compiled with [`compile_each`]: each
/// changed output goes to a temporary file as it comes (its text is then dropped), and
/// [`MatrixWriter::finish`] renames them all. Dropped unfinished, it removes what it wrote.
pub struct MatrixWriter<'w> {
    workspace: &'w Workspace,
    folders: confine::OutputFolders,
    staged: Staged,
    current: BTreeSet<String>,
    written: Vec<String>,
    unchanged: Vec<String>,
}

impl<'w> MatrixWriter<'w> {
    pub fn new(workspace: &'w Workspace) -> Self {
        Self {
            workspace,
            folders: confine::OutputFolders::default(),
            staged: Staged::default(),
            current: BTreeSet::new(),
            written: Vec::new(),
            unchanged: Vec::new(),
        }
    }

    /// Checks the paths of one compiled entry's files and writes those that changed to
    /// temporary files.
    pub fn add(&mut self, entry: &MatrixEntry, compiled: &Compiled) -> Result<(), PathError> {
        let workspace = self.workspace;
        for (path, text) in files(entry, compiled) {
            let (out, below) = split(workspace, &path);
            let resolved = self.folders.resolve(&workspace.root, out, below)?;
            refuse_source(workspace, &resolved.real, &path)?;
            let text = text.as_bytes();
            // Resolved once: read from the path just checked.
            let shown = Path::new(&path);
            let on_disk = match resolved.read(shown, text.len() as u64) {
                Ok(on_disk) => on_disk,
                // Longer than the new text: it differs, whatever it holds.
                Err(PathError {
                    problem: PathProblem::GeneratedTooLarge { .. },
                    ..
                }) => None,
                Err(error) => return Err(error),
            };
            if on_disk.as_deref() == Some(text) {
                self.unchanged.push(path.clone());
            } else {
                self.staged.add(&resolved.real, shown, text)?;
                self.written.push(path.clone());
            }
            self.current.insert(path);
        }
        Ok(())
    }

    /// Removes owned outputs that left the matrix and stray temporary files, records the new
    /// index, and renames every written output into place.
    pub fn finish(mut self) -> Result<WriteReport, PathError> {
        let workspace = self.workspace;
        let root = &workspace.root;
        let mut removals = Vec::new();
        let recorded = index_bytes(workspace)?;
        let owned = index_entries(workspace, &recorded);
        for owned in &owned {
            if self.current.contains(owned.as_str()) {
                continue;
            }
            let Some(real) = indexed(workspace, owned)? else {
                continue;
            };
            refuse_source(workspace, &real, owned)?;
            if real.is_file() {
                removals.push((real, owned.clone()));
            }
        }
        let on_disk = files_on_disk(workspace)?;
        // Someone else's files where outputs go: not removed, but told, as `check` fails on
        // them.
        let owned: BTreeSet<String> = owned.into_iter().collect();
        let foreign: Vec<String> = on_disk
            .outputs
            .into_iter()
            .filter(|path| !self.current.contains(path) && !owned.contains(path))
            .collect();
        // Left by an earlier, killed run: not the ones this run has just written.
        let strays: Vec<(PathBuf, String)> = on_disk
            .strays
            .into_iter()
            .filter(|(real, _)| !self.staged.holds(real))
            .collect();

        let index = index_text(self.current.iter().map(String::as_str));
        let index_real =
            || confine::resolve_output(root, out_dir(workspace), Path::new(INDEX_FILE));
        // Written only when it changes: a build whose outputs are current writes nothing.
        if index.as_bytes() != recorded {
            self.staged
                .add(&index_real()?, &index_path(workspace), index.as_bytes())?;
        }
        let staged = std::mem::take(&mut self.staged);
        staged.commit()?;
        let mut report = WriteReport {
            written: std::mem::take(&mut self.written),
            unchanged: std::mem::take(&mut self.unchanged),
            foreign,
            ..WriteReport::default()
        };
        // The outputs are in place: a file that cannot be removed now is said, and does not
        // stop the others.
        let mut still_owned = Vec::new();
        for (real, owned) in removals {
            match std::fs::remove_file(&real) {
                Ok(()) => {
                    remove_emptied_folders(workspace, &real, &owned);
                    report.removed.push(owned);
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    report.not_removed.push(PathError::io(&owned, error));
                    still_owned.push(owned);
                }
            }
        }
        // The index already written leaves out the outputs no longer built: one that could
        // not be removed (a folder made read-only, a file another program holds open) stays
        // in it, so that the next build removes it, and `check` knows promptc wrote it.
        if !still_owned.is_empty() {
            let mut kept: BTreeSet<&str> = self.current.iter().map(String::as_str).collect();
            kept.extend(still_owned.iter().map(String::as_str));
            let index = index_text(kept.into_iter());
            let mut staged = Staged::default();
            staged.add(&index_real()?, &index_path(workspace), index.as_bytes())?;
            staged.commit()?;
        }
        for (real, shown) in strays {
            match std::fs::remove_file(&real) {
                Ok(()) => report.strays.push(shown),
                // Gone already (another run's, finished meanwhile).
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => report.not_removed.push(PathError::io(&shown, error)),
            }
        }
        Ok(report)
    }
}

/// The index of the outputs promptc wrote: a path a line, in the order given (sorted).
fn index_text<'a>(paths: impl Iterator<Item = &'a str>) -> String {
    paths.flat_map(|path| [path, "\n"]).collect()
}

/// The folders below the output folder that held the output at `real` (`owned`, as the
/// index names it) and hold nothing now, innermost first: a family or context no longer
/// built leaves no empty folder behind. The output folder itself stays, and so does any
/// folder that holds something (`remove_dir` removes only an empty one).
fn remove_emptied_folders(workspace: &Workspace, real: &Path, owned: &str) {
    let (_, below) = split(workspace, owned);
    let depth = below.components().count();
    for folder in real.ancestors().skip(1).take(depth.saturating_sub(1)) {
        if std::fs::remove_dir(folder).is_err() {
            break;
        }
    }
}

/// How a committed output differs from a fresh compile.
#[derive(Debug, PartialEq, Eq)]
pub enum Mismatch {
    Stale {
        path: String,
        diff: String,
    },
    Missing {
        path: String,
    },
    /// A file in the output folder that is not an output of the matrix. `owned` when promptc
    /// wrote it (so `build --all` removes it), otherwise it is someone else's file.
    Unexpected {
        path: String,
        owned: bool,
    },
    /// A temporary file left behind by an interrupted build.
    Stray {
        path: String,
    },
}

impl Mismatch {
    pub fn path(&self) -> &str {
        match self {
            Mismatch::Stale { path, .. }
            | Mismatch::Missing { path }
            | Mismatch::Unexpected { path, .. }
            | Mismatch::Stray { path } => path,
        }
    }
}

/// Compares fresh outputs with the files on disk, one at a time as a matrix compiled with
/// [`compile_each`] gives them; writes nothing.
pub struct MatrixChecker<'w> {
    workspace: &'w Workspace,
    folders: confine::OutputFolders,
    mismatches: Vec<Mismatch>,
    expected: BTreeSet<String>,
    /// The files of entries that did not compile: neither compared nor unexpected.
    not_compiled: BTreeSet<String>,
    diff_time: DiffTime,
}

impl<'w> MatrixChecker<'w> {
    pub fn new(workspace: &'w Workspace) -> Self {
        Self {
            workspace,
            folders: confine::OutputFolders::default(),
            mismatches: Vec::new(),
            expected: BTreeSet::new(),
            not_compiled: BTreeSet::new(),
            diff_time: DiffTime::default(),
        }
    }

    /// An entry that did not compile: its committed files, whatever they hold, are what the
    /// compile's errors are about, not outputs the matrix no longer gives.
    pub fn not_compiled(&mut self, entry: &MatrixEntry) {
        let stem = entry.path.strip_suffix(".md").unwrap_or(&entry.path);
        self.not_compiled
            .insert(format!("{stem}{DEFINITIONS_SUFFIX}"));
        self.not_compiled.insert(entry.path.clone());
    }

    /// Compares one compiled entry's files with the files on disk.
    pub fn add(&mut self, entry: &MatrixEntry, compiled: &Compiled) -> Result<(), PathError> {
        let workspace = self.workspace;
        for (path, text) in files(entry, compiled) {
            let relative = Path::new(&path);
            let (out, below) = split(workspace, &path);
            let resolved = self.folders.resolve(&workspace.root, out, below)?;
            // An output may be as long as a compile may make it (`limits.compile_bytes`, past
            // the usual cap on outputs read): what `build --all` wrote, `check` reads.
            let limit = (text.len() as u64).max(crate::model::limits::MAX_OUTPUT_BYTES);
            let on_disk = match resolved.read(relative, limit) {
                Ok(on_disk) => on_disk,
                // Longer than the compiled text: it differs, whatever it holds.
                Err(PathError {
                    problem: PathProblem::GeneratedTooLarge { .. },
                    ..
                }) => {
                    self.mismatches.push(Mismatch::Stale {
                        path: path.clone(),
                        diff: format!(
                            "--- a/{path}\n+++ b/{path}\n(the file is longer than the {} bytes compiled for it)\n",
                            text.len()
                        ),
                    });
                    self.expected.insert(path);
                    continue;
                }
                Err(error) => return Err(error),
            };
            match on_disk {
                Some(on_disk) if on_disk == text.as_bytes() => {}
                Some(on_disk) => {
                    let on_disk = String::from_utf8(on_disk)
                        .map_err(|_| PathError::new(relative, PathProblem::NotUtf8))?;
                    // A file whose lines only end otherwise (CRLF, as a checkout with git's
                    // `core.autocrlf` makes them) differed on every line, with a note of what
                    // to run that changed nothing once it was checked out again.
                    let diff = if on_disk.replace("\r\n", "\n") == text.replace("\r\n", "\n") {
                        let why = match (on_disk.contains("\r\n"), text.contains("\r\n")) {
                            (true, false) => format!(
                                "the file's lines end in CRLF where promptc writes LF, as a \
                                 checkout with git's `core.autocrlf` makes them; `{}/** -text` \
                                 in .gitattributes keeps promptc's outputs as written",
                                out_dir(workspace).display()
                            ),
                            (false, true) => "promptc now writes lines ending in CRLF where the \
                                 file has LF: a template or data file's lines end in CRLF, as a \
                                 checkout with git's `core.autocrlf` makes them; write them with \
                                 LF (`* -text` in .gitattributes keeps them as committed)"
                                .to_string(),
                            _ => "some lines end in CRLF in one and LF in the other".to_string(),
                        };
                        format!(
                            "--- a/{path}\n+++ b/{path}\n(only the line endings differ: {why})\n"
                        )
                    } else {
                        unified_diff(&path, &on_disk, &text, &self.diff_time)
                    };
                    self.mismatches.push(Mismatch::Stale {
                        path: path.clone(),
                        diff,
                    });
                }
                None => self
                    .mismatches
                    .push(Mismatch::Missing { path: path.clone() }),
            }
            self.expected.insert(path);
        }
        Ok(())
    }

    /// How many files the matrix gives.
    pub fn files(&self) -> usize {
        self.expected.len()
    }

    /// The mismatches, with the files on disk that no output accounts for.
    pub fn finish(mut self) -> Result<Vec<Mismatch>, PathError> {
        let workspace = self.workspace;
        let mut owned = BTreeSet::new();
        for path in read_index(workspace)? {
            // An output of this run was looked up as it was compared, and is not unexpected
            // whether the index holds it or not: only the others are looked up again.
            if self.expected.contains(&path) || self.not_compiled.contains(&path) {
                continue;
            }
            if indexed(workspace, &path)?.is_some_and(|real| real.is_file()) {
                owned.insert(path);
            }
        }
        let on_disk = files_on_disk(workspace)?;
        let mut present = on_disk.outputs;
        present.extend(owned.iter().cloned());
        for path in present {
            if !self.expected.contains(path.as_str()) && !self.not_compiled.contains(&path) {
                let owned = owned.contains(&path);
                self.mismatches.push(Mismatch::Unexpected { path, owned });
            }
        }
        for (_, path) in on_disk.strays {
            self.mismatches.push(Mismatch::Stray { path });
        }
        Ok(self.mismatches)
    }
}

/// A unified diff from the committed text to the fresh one. Bounded: a committed output of
/// many megabytes must not cost minutes or gigabytes, or flood a CI log. The lines both texts
/// begin and end with are set aside first (all but the context kept around a change), so the
/// diff is made of what differs; past [`MAX_DIFF_LINES`] of that, a line says the diff is not
/// shown. Past [`DIFF_DEADLINE`], or what is left of the run's [`RUN_DIFF_TIME`], the diff is
/// coarser (still correct); once that is spent, a line says the diff is not shown. The text is
/// written hunk by hunk, and cut at a line with a note once past [`MAX_DIFF_BYTES`].
pub fn unified_diff(path: &str, old: &str, new: &str, time: &DiffTime) -> String {
    let header = format!("--- a/{path}\n+++ b/{path}\n");
    let Some(deadline) = time.left() else {
        return format!(
            "{header}… the diff of {path} is not shown: this run's diffs took their {} s\n",
            RUN_DIFF_TIME.as_secs()
        );
    };
    unified_diff_of(
        path,
        old,
        new,
        DiffMiddle::of(old, new),
        header,
        deadline,
        time,
    )
}

/// [`unified_diff`] of the part `middle` names.
fn unified_diff_of(
    path: &str,
    old: &str,
    new: &str,
    middle: DiffMiddle,
    header: String,
    deadline: std::time::Duration,
    time: &DiffTime,
) -> String {
    let (old_part, new_part) = (&old[middle.old.clone()], &new[middle.new.clone()]);
    let lines = old_part.split_inclusive('\n').count() + new_part.split_inclusive('\n').count();
    if lines > MAX_DIFF_LINES {
        return format!(
            "{header}… the diff of {path} is not shown: {lines} lines would be diffed (those between what the committed text and the fresh one share at their ends, with the context kept around them), more than a diff is made of ({MAX_DIFF_LINES})\n"
        );
    }
    let started = std::time::Instant::now();
    // Lines end at line feeds alone: a carriage return inside a line (`a\rb`) is part of it,
    // shown by its picture, as `diff -u` has it (`similar`'s own splitting ended a line there
    // too, and the line after it was glued to its marker).
    let old_lines: Vec<&str> = old_part.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new_part.split_inclusive('\n').collect();
    let diff = similar::TextDiff::configure()
        .timeout(deadline)
        .diff_slices(&old_lines, &new_lines);
    let unified = diff.unified_diff();
    let mut text = String::new();
    let mut left = 0;
    for hunk in unified.iter_hunks() {
        let ops = hunk.ops();
        let (Some(first), Some(last)) = (ops.first(), ops.last()) else {
            continue;
        };
        if text.len() > MAX_DIFF_BYTES {
            // Not written: its lines are counted as the note says them.
            let changes = hunk.iter_changes().count();
            let hints = hunk
                .iter_changes()
                .filter(|change| !change.value().ends_with('\n'))
                .count();
            left += 1 + changes + hints;
            continue;
        }
        if text.is_empty() {
            text.push_str(&header);
        }
        // The hunk's header counts from the start of what was diffed: from the file's.
        let range = |start: usize, end: usize| {
            hunk_range(middle.lines_before + start, middle.lines_before + end)
        };
        text.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(first.old_range().start, last.old_range().end),
            range(first.new_range().start, last.new_range().end)
        ));
        for change in hunk.iter_changes() {
            text.push_str(&format!("{}{}", change.tag(), change.value()));
            if !change.value().ends_with('\n') {
                text.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    time.spend(started.elapsed());
    if text.len() <= MAX_DIFF_BYTES {
        return text;
    }
    let cut = text[..MAX_DIFF_BYTES].rfind('\n').map_or(0, |at| at + 1);
    left += text[cut..].lines().count();
    format!(
        "{}… {left} more lines of this diff are not shown (the diff is over {} KiB)\n",
        &text[..cut],
        MAX_DIFF_BYTES / 1024
    )
}

/// A hunk's range of lines as a unified diff writes it (`start,len`, 1-based; `start` alone
/// for one line; an empty range names the line before it).
fn hunk_range(start: usize, end: usize) -> String {
    let len = end.saturating_sub(start);
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}

/// The part of two texts a diff is made of: all but the lines they begin and end with alike,
/// less the context a unified diff keeps around a change.
struct DiffMiddle {
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
    /// The lines before it, in both texts.
    lines_before: usize,
}

/// The lines of context a unified diff keeps around a change.
const DIFF_CONTEXT: usize = 3;

impl DiffMiddle {
    /// The whole texts.
    #[cfg(test)]
    fn whole(old: &str, new: &str) -> Self {
        Self {
            old: 0..old.len(),
            new: 0..new.len(),
            lines_before: 0,
        }
    }

    fn of(old: &str, new: &str) -> Self {
        // The starts of the lines both begin with, the last few kept for context.
        let mut before: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
        let mut same_before = 0;
        let mut at = 0;
        for (a, b) in old.split_inclusive('\n').zip(new.split_inclusive('\n')) {
            if a != b {
                break;
            }
            before.push_back(at);
            if before.len() > DIFF_CONTEXT {
                before.pop_front();
            }
            same_before += 1;
            at += a.len();
        }
        let kept_before = before.len();
        let start = before.front().copied().unwrap_or(at);
        // The lines both end with, after what both begin with.
        let (old_rest, new_rest) = (&old[at..], &new[at..]);
        let mut after: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
        let mut from_end = 0;
        for (a, b) in old_rest
            .split_inclusive('\n')
            .rev()
            .zip(new_rest.split_inclusive('\n').rev())
        {
            if a != b {
                break;
            }
            from_end += a.len();
            after.push_back(from_end);
            if after.len() > DIFF_CONTEXT + 1 {
                after.pop_front();
            }
        }
        // Set aside: all of them but the few nearest the change, kept for context. Each
        // entry is how much of the texts' ends the lines up to it take.
        let aside = if after.len() > DIFF_CONTEXT {
            after.front().copied().unwrap_or(0)
        } else {
            0
        };
        let end_of = |text: &str| text.len() - aside;
        Self {
            old: start..end_of(old),
            new: start..end_of(new),
            lines_before: same_before - kept_before,
        }
    }
}

/// How long one output's diff may take before it settles for a coarser result.
pub const DIFF_DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);
/// How long the diffs of one run may take together: each is bounded, but a pull request can
/// commit a crafted text for every output (a million lines alike, a few kilobytes in git),
/// and at two seconds each `check` ran into the process's time limit, killed without a word.
pub const RUN_DIFF_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// The time the diffs of one run have taken (see [`RUN_DIFF_TIME`]).
#[derive(Debug, Default)]
pub struct DiffTime {
    spent: std::sync::Mutex<std::time::Duration>,
}

impl DiffTime {
    /// How long the next diff may take: at most [`DIFF_DEADLINE`], `None` once the run's
    /// time is spent.
    fn left(&self) -> Option<std::time::Duration> {
        let spent = *self
            .spent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        RUN_DIFF_TIME
            .checked_sub(spent)
            .filter(|left| !left.is_zero())
            .map(|left| left.min(DIFF_DEADLINE))
    }

    fn spend(&self, took: std::time::Duration) {
        let mut spent = self
            .spent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *spent = spent.saturating_add(took);
    }
}
/// The most text of one output's diff that is printed.
pub const MAX_DIFF_BYTES: usize = 256 * 1024;
/// The most lines a diff is made of, of both texts together once the lines they begin and end
/// with are set aside: the diff holds a few words for each, and a pull request may commit an
/// output of millions of lines (with raised limits, a fresh one as long) where every line
/// differs, which took gigabytes.
pub const MAX_DIFF_LINES: usize = 1 << 20;

/// Where an entry of the index lies. An entry the system cannot even look up (a name too long,
/// say) is a foreign line like any other and is skipped; a link or folder in its way is
/// refused as for any output.
fn indexed(workspace: &Workspace, entry: &str) -> Result<Option<PathBuf>, PathError> {
    let (out, below) = split(workspace, entry);
    match confine::resolve_output(&workspace.root, out, below) {
        Ok(real) => Ok(Some(real)),
        Err(PathError {
            problem: PathProblem::Io(_),
            ..
        }) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Refuses an output path that is one of the workspace's own files: validation reports an
/// output folder that overlaps a data folder, and this holds whatever the folders are.
fn refuse_source(workspace: &Workspace, real: &Path, shown: &str) -> Result<(), PathError> {
    let relative = real.strip_prefix(&workspace.root).unwrap_or(real);
    if workspace.sources.find(relative).is_some() {
        return Err(PathError::new(shown, PathProblem::IsSource));
    }
    Ok(())
}

/// The index's path, relative to the workspace root.
fn index_path(workspace: &Workspace) -> PathBuf {
    out_dir(workspace).join(INDEX_FILE)
}

/// The output folder, relative to the workspace root.
fn out_dir(workspace: &Workspace) -> &Path {
    Path::new(workspace.settings().build.out.trim_end_matches('/'))
}

/// An output path (`<out>/<family>/<context>.md`) as the output folder and the part below
/// it: links are followed in the first, never in the second.
fn split<'a>(workspace: &'a Workspace, path: &'a str) -> (&'a Path, &'a Path) {
    let out = out_dir(workspace);
    let below = Path::new(path).strip_prefix(out).unwrap_or(Path::new(path));
    (out, below)
}

/// The outputs promptc recorded as its own. Only entries of the form
/// `<out>/<family>/<context>.md` count: the index is a committed file, and an edited one must
/// never make `build --all` delete anything else. Lines that are not UTF-8 cannot be such
/// paths and are skipped like any other foreign line.
fn read_index(workspace: &Workspace) -> Result<Vec<String>, PathError> {
    Ok(index_entries(workspace, &index_bytes(workspace)?))
}

/// The index as it is on disk (empty when there is none).
fn index_bytes(workspace: &Workspace) -> Result<Vec<u8>, PathError> {
    Ok(confine::read_output(
        &workspace.root,
        out_dir(workspace),
        Path::new(INDEX_FILE),
        crate::model::limits::MAX_DATA_FILE_BYTES,
    )?
    .unwrap_or_default())
}

fn index_entries(workspace: &Workspace, bytes: &[u8]) -> Vec<String> {
    let out = workspace.settings().build.out.trim_end_matches('/');
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .map(str::trim)
        .filter(|line| is_output_path(out, line))
        .map(str::to_string)
        .collect()
}

/// Whether `path` is `<out>/<name>/<name>.md` with plain names (no `..`, no separators).
fn is_output_path(out: &str, path: &str) -> bool {
    let Some(rest) = path.strip_prefix(out).and_then(|r| r.strip_prefix('/')) else {
        return false;
    };
    let plain =
        |name: &str| !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\']);
    match rest.split_once('/') {
        Some((family, file)) => {
            plain(family)
                && file
                    .strip_suffix(DEFINITIONS_SUFFIX)
                    .or_else(|| file.strip_suffix(".md"))
                    .is_some_and(plain)
        }
        None => false,
    }
}

/// The output folder and its family folders, as (real path, workspace-relative path shown to
/// users). Everything below the output folder is promptc's: a link there is refused, so
/// listing (and cleaning) never reaches another folder.
fn output_folders(workspace: &Workspace) -> Result<Vec<(PathBuf, String)>, PathError> {
    let root = &workspace.root;
    let out = out_dir(workspace);
    let shown = out.display().to_string();
    let dir = confine::resolve_output_dir(root, out)?;
    let mut folders = Vec::new();
    if !dir.is_dir() {
        return Ok(folders);
    }
    let mut names = Vec::new();
    for family in std::fs::read_dir(&dir).map_err(|error| PathError::io(out, error))? {
        let family = family.map_err(|error| PathError::io(out, error))?;
        let kind = family
            .file_type()
            .map_err(|error| PathError::io(out, error))?;
        if kind.is_symlink() {
            return Err(PathError::new(
                out.join(family.file_name()),
                PathProblem::IsLink,
            ));
        }
        if kind.is_dir() {
            names.push(family.file_name());
        }
    }
    // Listing order is the file system's: sort for the same report everywhere.
    names.sort();
    folders.push((dir.clone(), shown.clone()));
    for name in names {
        let relative = format!("{shown}/{}", name.to_string_lossy());
        folders.push((dir.join(&name), relative));
    }
    Ok(folders)
}

/// What the output folders hold, each folder listed once.
struct FilesOnDisk {
    /// `<out>/<family>/<context>.md` files (and their tool definitions), sorted.
    outputs: BTreeSet<String>,
    /// promptc's temporary files, left by a build that was killed (not those of a build that
    /// runs meanwhile): in the folders' order, and sorted within each.
    strays: Vec<(PathBuf, String)>,
}

fn files_on_disk(workspace: &Workspace) -> Result<FilesOnDisk, PathError> {
    let mut outputs = BTreeSet::new();
    let mut strays = Vec::new();
    for (index, (real, relative)) in output_folders(workspace)?.into_iter().enumerate() {
        let mut found = Vec::new();
        for file in std::fs::read_dir(&real).map_err(|error| PathError::io(&relative, error))? {
            let file = file.map_err(|error| PathError::io(&relative, error))?;
            let name = file.file_name();
            let name_text = name.to_string_lossy();
            // Outputs lie in the family folders, below the output folder itself.
            if index > 0 && (name_text.ends_with(".md") || name_text.ends_with(DEFINITIONS_SUFFIX))
            {
                outputs.insert(format!("{relative}/{name_text}"));
            }
            let is_file = file.file_type().is_ok_and(|kind| kind.is_file());
            let modified = || crate::emit::write::last_changed(&file.metadata().ok()?);
            if is_file && is_temporary(&name) && is_left_behind(&name, modified()) {
                found.push(name);
            }
        }
        found.sort();
        for name in found {
            strays.push((
                real.join(&name),
                format!("{relative}/{}", name.to_string_lossy()),
            ));
        }
    }
    Ok(FilesOnDisk { outputs, strays })
}

/// Each family routing may choose (one whose variants have a `match`, and the fallback
/// family) that no entry of the build matrix compiles, or whose version routing chooses no
/// entry compiles: `validate` compiles the matrix, so an error in such a prompt would first
/// show when an agent routes a model to it. Said once per family, at the `match` of the
/// version routing chooses, else its first (the fallback at its setting); not when the matrix
/// compiles nothing at all.
fn routed_not_built(compiler: &Compiler<'_>, out: &mut Diagnostics) {
    use crate::problem::RoutingProblem;
    use crate::workspace::inheritance::EffectiveVariant;

    let workspace = compiler.workspace();
    let entries = entries(workspace);
    // A matrix of nothing (a workspace without contexts yet) leaves every family out alike.
    if entries.is_empty() {
        return;
    }
    let context = crate::model::Context::default();
    let chosen = |selection: &Selection| {
        compiler
            .select(selection, &context)
            .ok()
            .map(|(variant, _)| variant)
    };
    let built_families: BTreeSet<&str> = entries.iter().map(|e| e.family.as_str()).collect();
    // The variants the matrix compiles: a family's entry compiles the version routing
    // chooses, an entry naming a variant (or `family@version`) that one.
    let built: BTreeSet<&str> = entries
        .iter()
        .filter_map(|entry| {
            let selection = match &entry.variant {
                Some(id) => Selection::variant(id),
                None => Selection::family(&entry.family),
            };
            chosen(&selection).map(EffectiveVariant::id)
        })
        .collect();
    // The problem of a family (and the version routing chooses, `routed`), if any.
    let not_built = |family: &str, fallback: bool, routed: Option<&EffectiveVariant>| {
        let version = if built_families.contains(family) {
            let routed = routed.filter(|routed| !built.contains(routed.id()))?;
            Some(
                routed
                    .variant
                    .version
                    .clone()
                    .unwrap_or_else(|| routed.id().to_string()),
            )
        } else {
            None
        };
        Some(RoutingProblem::RoutedNotBuilt {
            family: family.to_string(),
            fallback,
            version,
        })
    };
    let mut said: BTreeSet<&str> = BTreeSet::new();
    for entry in workspace.variants.values() {
        let family = entry.value.family_or_id();
        if entry.value.route_match.is_none() || !said.insert(family) {
            continue;
        }
        let routed = chosen(&Selection::family(family));
        if let Some(problem) = not_built(family, false, routed) {
            // At the `match` of the version routing chooses, where it writes one.
            let at = routed
                .and_then(|routed| workspace.variants.get(routed.id()))
                .filter(|routed| routed.value.route_match.is_some())
                .unwrap_or(entry);
            out.push(Diagnostic::new(
                Problem::Routing(problem),
                at.value_span("/match"),
            ));
        }
    }
    let fallback = &workspace.settings().fallback_family;
    if !said.contains(fallback.as_str())
        && let Some(problem) = not_built(fallback, true, chosen(&Selection::family(fallback)))
    {
        // At the setting, or (left to its default) where the manifest's nearest place is.
        let span = workspace.manifest.value_span("/fallback_family");
        out.push(Diagnostic::new(Problem::Routing(problem), span));
    }
}

/// Where a selection problem of the matrix is told: at the manifest's matrix.
fn selection_diagnostic(workspace: &Workspace, problem: Problem) -> Option<Diagnostic> {
    let manifest = &workspace.manifest;
    Some(Diagnostic::new(problem, manifest.key_span("/build")))
}

/// Everything wrong with the compiled matrix, as diagnostics: entries that fail to compile,
/// prompts over budget, and volatile values early in a prompt (warnings); with the checks of
/// a sound workspace that only `validate` pays for (see [`crate::validate::context_paths`]).
pub fn diagnostics(
    workspace: &Workspace,
    source_date_epoch: impl Into<SourceDateEpoch>,
) -> Diagnostics {
    let source_date_epoch = source_date_epoch.into();
    let mut found_in_templates = crate::validate::context_paths(workspace);
    found_in_templates.extend(crate::analysis::unused_specs::check(workspace));
    let compiler = Compiler::new(workspace);
    // Each output is looked at as it compiles, then dropped.
    let mut warnings = Vec::new();
    let mut findings: Vec<Diagnostic> = Vec::new();
    let mut findings_at: HashMap<Span, Vec<usize>> = HashMap::new();
    let mut documented_twice: BTreeSet<String> = BTreeSet::new();
    let mut looked_for_tools: BTreeSet<String> = BTreeSet::new();
    let mut tools_reading_left = TOOLS_READING;
    let run = compile_each(
        &compiler,
        entries(workspace),
        source_date_epoch,
        |entry, compiled| {
            let Some(request) = request(workspace, &entry, source_date_epoch) else {
                return Ok::<(), std::convert::Infallible>(());
            };
            warnings.extend(volatile_warning(
                &compiler,
                &request,
                compiled,
                &entry.label(),
            ));
            // Once per variant (what documents the tools rarely depends on the context), and
            // within what the run may spend reading prompts for it.
            if looked_for_tools.insert(compiled.variant.clone())
                && documents_its_native_tools(compiled, &mut tools_reading_left)
            {
                documented_twice.insert(compiled.variant.clone());
            }
            // What writing the tool definitions found that does not stop a compile (a
            // keyword a dialect drops, an MCP tool left out).
            if let Some(variant) = compiler.variant(&compiled.variant)
                && let Ok(Some(made)) =
                    compiler.tool_definitions(&request, variant, &compiled.tools, None)
            {
                for finding in &made.2 {
                    let finding = place(workspace, finding, &request.mcp_places);
                    // The same finding recurs in every output that has the tool: kept once,
                    // found by its place rather than by comparing with every one kept.
                    let at_place = findings_at.entry(finding.span).or_default();
                    if !at_place.iter().any(|&i| findings[i] == finding) {
                        at_place.push(findings.len());
                        findings.push(finding);
                    }
                }
            }
            Ok(())
        },
    );
    let run = match run {
        Ok(run) => run,
        Err(never) => match never {},
    };
    // The routing table is checked with the matrix: both need a sound workspace.
    let mut diagnostics = compiler.routing_diagnostics();
    let routing = diagnostics.len();
    routed_not_built(&compiler, &mut diagnostics);
    // A template reading a field the context does not have fails to render at that line as
    // "undefined value": the field, named, is said instead.
    let line = |span: Span| {
        let file = workspace.sources.get(span.source);
        (span.source, file.line_col(span.start).0)
    };
    let named_lines: BTreeSet<_> = found_in_templates
        .iter()
        .map(|found| line(found.span))
        .collect();
    for (entry, error) in run.failed {
        match error {
            // Each said once for the matrix, with the compile that met it first: the same
            // template can fail in one context and render in another.
            CompileError::Diagnostics(found) => {
                for diagnostic in found.iter() {
                    // A predicate that fails fails for the routing table first, at the same
                    // place: said once.
                    let said = diagnostics.iter().take(routing).any(|earlier| {
                        earlier.span == diagnostic.span && earlier.problem == diagnostic.problem
                    });
                    let named = matches!(diagnostic.problem, Problem::RenderFailed { .. })
                        && named_lines.contains(&line(diagnostic.span));
                    if said || named {
                        continue;
                    }
                    diagnostics.push(diagnostic.clone().note(
                        crate::problem::NoteKind::FirstMetCompiling {
                            family: entry.compiles(),
                            context: entry.context.clone(),
                        },
                    ));
                }
            }
            // Several variants for one family: reported at the second of them, once for the
            // whole matrix.
            CompileError::Selection(problem) => {
                if let Some(diagnostic) = selection_diagnostic(workspace, problem)
                    && !diagnostics.iter().any(|d| *d == diagnostic)
                {
                    diagnostics.push(diagnostic);
                }
            }
            // Only a valid workspace's matrix is compiled.
            CompileError::InvalidWorkspace => {}
        }
    }
    let template_errors = found_in_templates.has_errors();
    diagnostics.extend(found_in_templates);
    diagnostics.extend(run.over_budget);
    for variant in documented_twice {
        if let Some(warning) = tools_documented_twice(&compiler, &variant) {
            diagnostics.push(warning);
        }
    }
    // A probe that did not compile where the templates' checks found errors (a misspelt
    // field in a line only the probe's values reach) most likely met one of them: its
    // advice, to change `tokens.volatile` or turn the check off, would send the reader the
    // wrong way. An error elsewhere (a budget, routing) says nothing of the probe.
    let errors_found = template_errors;
    for warning in grouped_by_place(warnings.into_iter()) {
        if errors_found && matches!(warning.problem, Problem::StablePrefixUnchecked { .. }) {
            continue;
        }
        diagnostics.push(warning);
    }
    // Once per place and message (the findings are already once each).
    let earlier: Vec<Diagnostic> = diagnostics.iter().cloned().collect();
    for diagnostic in findings {
        if !earlier.contains(&diagnostic) {
            diagnostics.push(diagnostic);
        }
    }
    diagnostics
}

/// The bytes of prompt a run may read looking for native tools' descriptions (each search
/// of one description reads the prompt): a matrix of thousands of tools in prompts of
/// megabytes would read terabytes, for a warning.
const TOOLS_READING: usize = 256 << 20;

/// Whether a compile sends its tools as native definitions and documents them in its prompt
/// as well: every tool's description (its first line, which a tool format copies whole) is in
/// the prompt. A prompt that only names its tools, or tells how to use them, does not hold
/// their descriptions. Each search is paid from `left`; none is made past it.
fn documents_its_native_tools(compiled: &Compiled, left: &mut usize) -> bool {
    if compiled.tool_definitions.is_none() || compiled.tools.is_empty() {
        return false;
    }
    let mut lines: Vec<&str> = compiled
        .tools
        .iter()
        .map(|tool| tool.description.trim().lines().next().unwrap_or("").trim())
        .collect();
    lines.sort_unstable();
    lines.dedup();
    if lines.first().is_none_or(|line| line.is_empty()) {
        return false;
    }
    let cost = compiled.prompt.len().saturating_mul(lines.len());
    let Some(after) = left.checked_sub(cost) else {
        *left = 0;
        return false;
    };
    *left = after;
    lines.iter().all(|line| compiled.prompt.contains(line))
}

/// The warning for a variant whose prompt documents its native tools, at the `native_tools`
/// of the nearest file of its chain that writes it.
fn tools_documented_twice(compiler: &Compiler<'_>, variant: &str) -> Option<Diagnostic> {
    let workspace = compiler.workspace();
    let effective = compiler.variant(variant)?;
    let at = effective
        .chain
        .iter()
        .filter_map(|id| workspace.variants.get(id))
        .find(|entry| entry.document.writes("/native_tools"))?;
    Some(Diagnostic::new(
        Problem::ToolsDocumentedTwice {
            variant: variant.to_string(),
            count: effective.tools().len(),
        },
        at.value_span("/native_tools"),
    ))
}

/// Whether two findings at one place are one: a volatile value early, or the prefix unchecked
/// for the same reason.
fn same_finding(kept: &Problem, found: &Problem) -> bool {
    match (kept, found) {
        (
            Problem::VolatileEarly { in_definitions, .. },
            Problem::VolatileEarly {
                in_definitions: other,
                ..
            },
        ) => in_definitions == other,
        (
            Problem::StablePrefixUnchecked { reason, .. },
            Problem::StablePrefixUnchecked { reason: other, .. },
        ) => reason == other,
        _ => false,
    }
}

/// One volatile-value finding per place: the outputs that share it are listed together, with
/// the earliest position among them (and one unchecked prefix per place and reason).
fn grouped_by_place(warnings: impl Iterator<Item = Diagnostic>) -> Vec<Diagnostic> {
    let mut grouped: Vec<Diagnostic> = Vec::new();
    for warning in warnings {
        let same_place = grouped
            .iter_mut()
            .find(|d| d.span == warning.span && same_finding(&d.problem, &warning.problem));
        match (same_place, warning.problem) {
            (
                Some(Diagnostic {
                    problem:
                        Problem::VolatileEarly {
                            outputs, percent, ..
                        },
                    ..
                }),
                Problem::VolatileEarly {
                    outputs: more,
                    percent: here,
                    ..
                },
            ) => {
                outputs.extend(more);
                *percent = (*percent).min(here);
            }
            (
                Some(Diagnostic {
                    problem: Problem::StablePrefixUnchecked { outputs, .. },
                    ..
                }),
                Problem::StablePrefixUnchecked { outputs: more, .. },
            ) => outputs.extend(more),
            (_, problem) => grouped.push(Diagnostic::new(problem, warning.span)),
        }
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::{
        Compiling, DEFERRED_BUDGETS, DEFERRED_BYTES, DIFF_DEADLINE, DiffTime, MAX_DIFF_LINES,
        MatrixEntry, RUN, RUN_DIFF_TIME, TOOLS_READING, WINDOW, compile_threads,
        documents_its_native_tools, in_order, in_taking_order, is_output_path, may_wait, runs_of,
        unified_diff,
    };

    /// Outputs wait for the token tables up to a count and up to a number of bytes: a few
    /// large prompts fill the room that many small ones share, and one larger than the room
    /// never waits (its budget is checked as it compiles).
    #[test]
    fn outputs_wait_for_the_token_tables_within_a_count_and_a_size() {
        let mut held = 0;
        let mut waiting = 0;
        while may_wait(waiting, held, 20_000) {
            waiting += 1;
            held += 20_000;
        }
        assert_eq!(waiting, DEFERRED_BUDGETS);
        let prompt = 15 * 1024 * 1024;
        let (mut held, mut waiting) = (0, 0);
        while may_wait(waiting, held, prompt) {
            waiting += 1;
            held += prompt;
        }
        assert_eq!(waiting, 2);
        assert!(!may_wait(0, 0, DEFERRED_BYTES + 1));
        assert!(!may_wait(1, usize::MAX, 1));
    }

    fn entry(family: &str, variant: Option<&str>, context: &str) -> MatrixEntry {
        MatrixEntry {
            family: family.into(),
            variant: variant.map(str::to_string),
            context: context.into(),
            path: format!("out/{family}/{context}.md"),
        }
    }

    #[test]
    fn a_run_is_consecutive_entries_of_one_variant_at_most_run_long() {
        let mut entries = Vec::new();
        for context in 0..RUN + 3 {
            entries.push(entry("xs", None, &context.to_string()));
        }
        entries.push(entry("gpt", None, "a"));
        entries.push(entry("gpt", Some("gpt@2"), "a"));
        entries.push(entry("gpt", Some("gpt@2"), "b"));
        entries.push(entry("xs", None, "late"));
        let runs = runs_of(&entries);
        let n = RUN + 3;
        assert_eq!(
            runs,
            vec![0..RUN, RUN..n, n..n + 1, n + 1..n + 3, n + 3..n + 4]
        );
        // Every entry in exactly one run, in order.
        let flat: Vec<usize> = runs.into_iter().flatten().collect();
        assert_eq!(flat, (0..entries.len()).collect::<Vec<_>>());
        assert!(runs_of(&[]).is_empty());
    }

    #[test]
    fn compiles_run_at_once_only_as_many_as_their_memory_allows() {
        use crate::model::limits::{DEFAULT_COMPILE_BYTES, MAX_BYTES};
        // The default limit: one thread per core, up to eight, no more than there are runs.
        assert_eq!(compile_threads(2, 48, DEFAULT_COMPILE_BYTES), 2);
        assert_eq!(compile_threads(16, 48, DEFAULT_COMPILE_BYTES), 8);
        assert_eq!(compile_threads(16, 3, DEFAULT_COMPILE_BYTES), 3);
        assert_eq!(compile_threads(8, 0, DEFAULT_COMPILE_BYTES), 1);
        // The largest: two at once, whatever the cores.
        assert_eq!(compile_threads(8, 48, MAX_BYTES), 2);
        assert_eq!(compile_threads(1, 48, MAX_BYTES), 1);
        // Past what memory holds at all, still one.
        assert_eq!(compile_threads(8, 48, u64::MAX), 1);
    }

    #[test]
    fn threads_start_on_the_first_runs_of_different_variants_within_the_window() {
        // Three variants of RUN + 2 contexts each: two runs apiece.
        let mut entries = Vec::new();
        for family in ["generic", "next-gen", "xs"] {
            for context in 0..RUN + 2 {
                entries.push(entry(family, None, &context.to_string()));
            }
        }
        let runs = runs_of(&entries);
        let ordered = in_taking_order(runs.clone(), &entries);
        let per = RUN + 2;
        assert!(
            2 * per < WINDOW,
            "the third variant starts within the window"
        );
        assert_eq!(
            ordered,
            vec![
                0..RUN,
                per..per + RUN,
                2 * per..2 * per + RUN,
                RUN..per,
                per + RUN..2 * per,
                2 * per + RUN..3 * per,
            ]
        );
        // The same runs, each once.
        let mut sorted = ordered.clone();
        sorted.sort_by_key(|run| run.start);
        assert_eq!(sorted, runs);
        // A run moved ahead starts within the window; the rest keep their order.
        for (position, run) in ordered.iter().enumerate() {
            let behind = ordered[position + 1..]
                .iter()
                .any(|later| later.start < run.start);
            assert!(
                run.start < WINDOW || !behind,
                "{run:?} is ahead of a run before it"
            );
        }
        // One variant's runs keep their order.
        let one: Vec<_> = entries[..per].to_vec();
        assert_eq!(in_taking_order(runs_of(&one), &one), runs_of(&one));
    }

    /// Runs `in_order` on `count` entries of runs of seven, with results of `bytes(index)`
    /// bytes, the entries that are multiples of 17 slow to compile, and three helper threads.
    /// Returns the entries handled, in the order handled, and the most results that were
    /// compiled and not handled at once.
    fn scheduled(
        count: usize,
        window_bytes: usize,
        bytes: impl Fn(usize) -> usize + Sync,
        ran_out_at: Option<usize>,
        fail_at: Option<usize>,
    ) -> (Vec<usize>, usize, Result<(), usize>, usize) {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let entries: Vec<MatrixEntry> = (0..count)
            .map(|index| entry(&format!("v{}", index / 7), None, &index.to_string()))
            .collect();
        let runs = in_taking_order(runs_of(&entries), &entries);
        let waiting = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let compile = |index: usize| {
            if index.is_multiple_of(17) {
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
            let now = waiting.fetch_add(1, SeqCst) + 1;
            most.fetch_max(now, SeqCst);
            Compiling {
                result: index,
                bytes: bytes(index),
                ran_out: Some(index) == ran_out_at,
            }
        };
        let mut handled = Vec::new();
        let (outcome, resume) =
            in_order(&runs, count, 3, window_bytes, &compile, |index, result| {
                waiting.fetch_sub(1, SeqCst);
                assert_eq!(index, *result);
                handled.push(index);
                if Some(index) == fail_at {
                    return Err(index);
                }
                Ok(())
            });
        (handled, most.into_inner(), outcome, resume)
    }

    /// However the threads race, every result is handed over once and in order; and the
    /// results compiled ahead of the one handled stay within the window's size (give or take
    /// one per thread and a run this thread took), where counted in entries alone the window
    /// holds many more of them.
    #[test]
    fn results_come_in_order_and_what_waits_stays_within_the_window() {
        let size = 1000;
        let (handled, unbounded, outcome, resume) =
            scheduled(200, usize::MAX, |_| size, None, None);
        assert_eq!(handled, (0..200).collect::<Vec<_>>());
        assert_eq!((outcome, resume), (Ok(()), 200));
        let (handled, bounded, outcome, resume) = scheduled(200, 2 * size, |_| size, None, None);
        assert_eq!(handled, (0..200).collect::<Vec<_>>());
        assert_eq!((outcome, resume), (Ok(()), 200));
        let threads = 4;
        assert!(
            bounded <= 2 + threads + RUN,
            "{bounded} results waited at once"
        );
        if std::thread::available_parallelism().map_or(1, std::num::NonZero::get) > 1 {
            assert!(
                unbounded > 2 + threads + RUN,
                "{unbounded} results waited at once without a size"
            );
        }
        assert!(unbounded <= WINDOW + RUN + threads);
        // Results larger than the whole window, and of every size between: nothing waits
        // for ever.
        let (handled, _, outcome, _) = scheduled(
            120,
            5 * size,
            |index| (index * 7919 % 13) * size,
            None,
            None,
        );
        assert_eq!(handled, (0..120).collect::<Vec<_>>());
        assert_eq!(outcome, Ok(()));
    }

    /// What a helper compiled is dropped on that helper, not on the thread that handles every
    /// result: all but what is handled after its helper has ended (at most what a helper can
    /// have compiled ahead); and dropped as the run goes, not held until the helper ends. Each
    /// result is dropped once.
    #[test]
    fn results_are_dropped_on_the_thread_that_compiled_them() {
        use std::sync::Mutex;
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        use std::thread::ThreadId;
        struct Marked<'d> {
            made_on: ThreadId,
            drops: &'d Mutex<Vec<(ThreadId, ThreadId)>>,
            alive: &'d AtomicUsize,
        }
        impl Drop for Marked<'_> {
            fn drop(&mut self) {
                let here = std::thread::current().id();
                self.drops.lock().unwrap().push((self.made_on, here));
                self.alive.fetch_sub(1, SeqCst);
            }
        }
        let count = 300;
        let helpers = 3;
        let entries: Vec<MatrixEntry> = (0..count)
            .map(|index| entry(&format!("v{}", index / 7), None, &index.to_string()))
            .collect();
        let runs = in_taking_order(runs_of(&entries), &entries);
        let drops = Mutex::new(Vec::new());
        let (alive, most_alive) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let compile = |_: usize| {
            // Long enough that every helper starts and takes its share.
            std::thread::sleep(std::time::Duration::from_micros(100));
            most_alive.fetch_max(alive.fetch_add(1, SeqCst) + 1, SeqCst);
            Compiling {
                result: Marked {
                    made_on: std::thread::current().id(),
                    drops: &drops,
                    alive: &alive,
                },
                bytes: 1,
                ran_out: false,
            }
        };
        let mut handled = 0;
        let (outcome, resume) = in_order(&runs, count, helpers, usize::MAX, &compile, |_, _| {
            handled += 1;
            Ok::<(), ()>(())
        });
        assert_eq!((outcome, resume, handled), (Ok(()), count, count));
        let drops = drops.into_inner().unwrap();
        assert_eq!(drops.len(), count);
        let here = std::thread::current().id();
        let by_helpers = drops.iter().filter(|(made, _)| *made != here).count();
        assert!(by_helpers > count / 4, "helpers compiled {by_helpers}");
        let elsewhere = drops
            .iter()
            .filter(|(made, dropped)| dropped != made && *dropped != here)
            .count();
        assert_eq!(
            elsewhere, 0,
            "results dropped on a helper that did not compile them"
        );
        let dropped_here = drops
            .iter()
            .filter(|(made, dropped)| *made != here && *dropped == here)
            .count();
        assert!(
            dropped_here <= helpers * (WINDOW + RUN),
            "{dropped_here} of the {by_helpers} results the helpers compiled were dropped here"
        );
        // What waits for its turn, plus what waits to be dropped: at most about twice the
        // window, where holding each until its helper ended held most of the results.
        let most_alive = most_alive.into_inner();
        assert!(
            most_alive <= 2 * (WINDOW + RUN) + helpers + 1,
            "{most_alive} results alive at once"
        );
    }

    /// A `handle` that panics (the bindings unwind) stops the threads too: they waited for
    /// their turn, and the scope for them, for ever. The window is tiny, so that the others
    /// are waiting when it panics.
    #[test]
    fn a_panic_while_handling_stops_the_threads() {
        let entries: Vec<MatrixEntry> = (0..60)
            .map(|index| entry(&format!("v{}", index / 3), None, &index.to_string()))
            .collect();
        let runs = in_taking_order(runs_of(&entries), &entries);
        let compile = |index: usize| Compiling {
            result: index,
            bytes: 1000,
            ran_out: false,
        };
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            in_order(&runs, entries.len(), 3, 1000, &compile, |index, _| {
                if index == 5 {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    panic!("handling {index}");
                }
                Ok::<(), ()>(())
            })
        }));
        assert!(unwound.is_err());
    }

    /// A compile that ran out of fuel stops the threads: it is not handled, nor is anything
    /// after it, and the caller resumes (on one thread) from the first entry not handled. An
    /// error from `handle` stops them at its entry.
    #[test]
    fn running_out_or_failing_stops_the_threads_at_that_entry() {
        let (handled, _, outcome, resume) = scheduled(100, 4000, |_| 1000, Some(50), None);
        assert!(resume <= 50, "{resume}");
        assert_eq!(handled, (0..resume).collect::<Vec<_>>());
        assert_eq!(outcome, Ok(()));
        let (handled, _, outcome, _) = scheduled(100, 4000, |_| 1000, None, Some(30));
        assert_eq!(handled, (0..=30).collect::<Vec<_>>());
        assert_eq!(outcome, Err(30));
    }

    /// Three variants of seven contexts: the threads take each variant's first run ahead of
    /// the others and wait on the window, and what comes out is still what one compiler
    /// compiling the entries in order gives, a template that runs out of fuel on one context
    /// (whose later entries take its error) included.
    #[test]
    fn a_matrix_taken_out_of_order_comes_out_as_compiled_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "promptc.toml",
            "fallback_family = \"a\"\ndefault_context = \"c0\"\nfuel = 60000\n\
             [build]\nfamilies = [\"a\", \"b\", \"c\"]\nout = \"out\"\n",
        );
        for family in ["a", "b", "c"] {
            write(
                &format!("variants/{family}.toml"),
                &format!(
                    "id = \"{family}\"\ntemplate = \"{family} {{{{ cwd }}}} \
                     {{% for i in range(cwd | length * 300) %}}.{{% endfor %}}\\n\"\n"
                ),
            );
        }
        for context in 0..7 {
            // The fifth context's loop is long enough to run out of fuel.
            let cwd = if context == 4 {
                "/a/much/longer/path/to/a/project/folder/deep/below/the/home/of/someone/x"
            } else {
                "/p"
            };
            write(
                &format!("examples/contexts/c{context}.toml"),
                &format!("cwd = \"{cwd}{context}\"\n"),
            );
        }
        let loaded = crate::load_workspace(dir.path()).unwrap();
        assert!(loaded.workspace.is_valid(), "{:?}", loaded.diagnostics);
        let workspace = &loaded.workspace;
        let entries = super::entries(workspace);
        assert_eq!(entries.len(), 21);
        let runs = in_taking_order(runs_of(&entries), &entries);
        assert_ne!(runs, runs_of(&entries), "the runs are taken out of order");

        // A run reports an error once, with the first entry that met it; the entries after it
        // fail without repeating it. So failures compare as failures.
        let run = super::compile_all(&crate::Compiler::new(workspace), None);
        let mut threaded: Vec<(String, Result<String, ()>)> = run
            .outputs
            .iter()
            .map(|(entry, compiled)| (entry.path.clone(), Ok(compiled.prompt.clone())))
            .chain(
                run.failed
                    .iter()
                    .map(|(entry, _)| (entry.path.clone(), Err(()))),
            )
            .collect();
        // Handed out in the entries' order.
        let handed: Vec<&str> = run.outputs.iter().map(|(e, _)| e.path.as_str()).collect();
        let mut sorted_by_entry = handed.clone();
        sorted_by_entry.sort_by_key(|path| entries.iter().position(|e| e.path == *path));
        assert_eq!(handed, sorted_by_entry);
        threaded.sort();
        for family in ["a", "b", "c"] {
            let first = run
                .failed
                .iter()
                .find(|(entry, _)| entry.family == family)
                .map(|(entry, error)| (entry.context.as_str(), error.to_string()));
            assert!(
                first
                    .as_ref()
                    .is_some_and(|(context, error)| *context == "c4" && error.contains("fuel")),
                "{family}: {first:?}"
            );
        }

        let compiler = crate::Compiler::new(workspace);
        let mut in_order: Vec<(String, Result<String, ()>)> = entries
            .iter()
            .map(|entry| {
                let request =
                    super::request(workspace, entry, super::SourceDateEpoch::Unset).unwrap();
                let result = compiler.compile_in_run(&request);
                (entry.path.clone(), result.map(|c| c.prompt).map_err(|_| ()))
            })
            .collect();
        in_order.sort();
        assert_eq!(threaded, in_order);
        // Each variant ran out on the long context, and its later contexts took the error.
        let failed = in_order
            .iter()
            .filter(|(_, result)| result.is_err())
            .count();
        assert_eq!(failed, 9);
    }

    fn native(prompt: &str, descriptions: &[&str]) -> crate::compiled::Compiled {
        use crate::compiled::{Compiled, CompiledTool, SourceRange};
        let tools: Vec<CompiledTool> = descriptions
            .iter()
            .enumerate()
            .map(|(index, description)| CompiledTool {
                id: format!("t{index}"),
                name: format!("t{index}"),
                spec: "generic".into(),
                from_family: false,
                source: SourceRange {
                    file: "tools/t.toml".into(),
                    first_line: 1,
                    last_line: 1,
                },
                description: (*description).to_string(),
                parameters: Vec::new(),
                item: None,
            })
            .collect();
        Compiled {
            family: "native".into(),
            variant: "native".into(),
            version: None,
            prompt: prompt.into(),
            sections: Vec::new(),
            tools: tools.into(),
            model: crate::model::ModelConfig::default(),
            inputs: Vec::new(),
            dialect: Some("openai"),
            tool_definitions: Some(serde_json::json!([])),
        }
    }

    // A native prompt that holds every tool's description (its first line) documents them
    // twice; one that names them only does not. Each search is paid for, and none is made
    // past what the run may read.
    #[test]
    fn a_native_prompt_holding_every_description_documents_its_tools() {
        let tools = ["Read a file.\nWith line numbers.", "List a folder."];
        let mut left = TOOLS_READING;
        let twice = native("Tools:\nRead a file.\nList a folder.\n", &tools);
        assert!(documents_its_native_tools(&twice, &mut left));
        assert_eq!(left, TOOLS_READING - twice.prompt.len() * 2);
        let named = native("Use read_file and list_files.\n", &tools);
        assert!(!documents_its_native_tools(&named, &mut left));
        let mut little = twice.prompt.len();
        assert!(!documents_its_native_tools(&twice, &mut little));
        assert_eq!(little, 0);
    }

    // Once the run's diffs have taken their time, a stale output's diff is a line saying so,
    // made without diffing: a pull request committing a crafted text for every output ran
    // `check` into the process's time limit, two seconds of diffing each.
    #[test]
    fn a_run_s_diffs_stop_once_they_took_their_time() {
        let time = DiffTime::default();
        let shown = unified_diff("out/f/c.md", "one\ntwo\n", "one\nthree\n", &time);
        assert!(shown.contains("-two\n+three\n"), "{shown}");
        assert_eq!(time.left(), Some(DIFF_DEADLINE));

        let time = DiffTime::default();
        time.spend(RUN_DIFF_TIME - std::time::Duration::from_millis(500));
        assert_eq!(time.left(), Some(std::time::Duration::from_millis(500)));

        time.spend(std::time::Duration::from_secs(1));
        assert_eq!(time.left(), None);
        let old = "a\n".repeat(1_000_000);
        let started = std::time::Instant::now();
        let not_shown = unified_diff("out/f/c.md", &old, "b\n", &time);
        assert_eq!(
            not_shown,
            "--- a/out/f/c.md\n+++ b/out/f/c.md\n… the diff of out/f/c.md is not shown: this run's diffs took their 10 s\n"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    /// The diff of the whole texts, as `similar` makes it.
    fn whole_diff(old: &str, new: &str) -> String {
        similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header("a/p.md", "b/p.md")
            .to_string()
    }

    proptest::proptest! {
        // The diff made of what differs, the lines both texts begin and end with set aside,
        // is the diff of the whole texts: the same hunks, counting lines from the file's start.
        #[test]
        fn a_diff_of_what_differs_is_the_diff_of_the_whole_texts(
            old in proptest::collection::vec("[abc]\n|c|\r|\r\n|a\rb\n", 0..40),
            new in proptest::collection::vec("[abc]\n|c|\r|\r\n|a\rb\n", 0..40),
        ) {
            let (old, new) = (old.concat(), new.concat());
            proptest::prop_assume!(old != new);
            let time = DiffTime::default();
            let whole = super::unified_diff_of(
                "p.md",
                &old,
                &new,
                super::DiffMiddle::whole(&old, &new),
                "--- a/p.md\n+++ b/p.md\n".to_string(),
                DIFF_DEADLINE,
                &time,
            );
            proptest::prop_assert_eq!(unified_diff("p.md", &old, &new, &time), whole);
        }

        // Where lines end at line feeds alone (no carriage return but before one), it is
        // `similar`'s diff of the texts' lines.
        #[test]
        fn a_diff_is_similar_s_where_lines_end_alike(
            old in proptest::collection::vec("[abc]\n|c|\r\n", 0..40),
            new in proptest::collection::vec("[abc]\n|c|\r\n", 0..40),
        ) {
            let (old, new) = (old.concat(), new.concat());
            proptest::prop_assume!(old != new);
            let time = DiffTime::default();
            proptest::prop_assert_eq!(
                unified_diff("p.md", &old, &new, &time),
                whole_diff(&old, &new)
            );
        }
    }

    // A carriage return inside a line is part of it: `similar` ended a line there too, and
    // showed the line after it glued to its marker (` a␍-b`).
    #[test]
    fn a_carriage_return_inside_a_line_is_part_of_it() {
        let time = DiffTime::default();
        let diff = unified_diff("p.md", "p\np\na\rb\nq\n", "p\np\na\rc\nq\n", &time);
        assert_eq!(
            diff,
            "--- a/p.md\n+++ b/p.md\n@@ -1,4 +1,4 @@\n p\n p\n-a\rb\n+a\rc\n q\n"
        );
        let diff = unified_diff("p.md", "p\nq\r", "p\nq\n", &time);
        assert_eq!(
            diff,
            "--- a/p.md\n+++ b/p.md\n@@ -1,2 +1,2 @@\n p\n-q\r\n\\ No newline at end of file\n+q\n"
        );
    }

    #[test]
    fn a_change_deep_in_long_texts_is_diffed_where_it_is() {
        let lines: Vec<String> = (0..5000).map(|n| format!("line {n}\n")).collect();
        let old = lines.concat();
        let mut changed = lines.clone();
        changed[2500] = "changed\n".into();
        changed.insert(4000, "added\n".into());
        let new = changed.concat();
        let diff = unified_diff("p.md", &old, &new, &DiffTime::default());
        assert_eq!(diff, whole_diff(&old, &new));
        assert!(diff.contains("@@ -2498,7 +2498,7 @@"), "{diff}");
    }

    // A pull request committing an output of millions of lines, every one changed (with the
    // limits raised, the fresh one as long), was diffed whole: 2.7 GB, then a failed allocation.
    #[test]
    fn a_diff_of_more_lines_than_a_diff_is_made_of_is_not_shown() {
        let old = "a\n".repeat(MAX_DIFF_LINES);
        let new = "b\n".repeat(10);
        let diff = unified_diff("p.md", &old, &new, &DiffTime::default());
        assert_eq!(
            diff,
            format!(
                "--- a/p.md\n+++ b/p.md\n… the diff of p.md is not shown: {} lines would be diffed (those between what the committed text and the fresh one share at their ends, with the context kept around them), more than a diff is made of ({MAX_DIFF_LINES})\n",
                MAX_DIFF_LINES + 10
            )
        );
        // Alike lines at both ends are not what differs.
        let alike = "x\n".repeat(MAX_DIFF_LINES);
        let old = format!("{alike}a\n{alike}");
        let new = format!("{alike}b\n{alike}");
        let diff = unified_diff("p.md", &old, &new, &DiffTime::default());
        assert!(diff.contains("-a\n+b\n"), "{diff}");
    }

    #[test]
    fn only_plain_output_paths_are_owned() {
        let out = "examples/prompts";
        assert!(is_output_path(out, "examples/prompts/xs/basic.md"));
        assert!(!is_output_path(out, "/tmp/victim.txt"));
        assert!(!is_output_path(out, "../../../tmp/victim.md"));
        assert!(!is_output_path(out, "examples/prompts/../promptc.toml"));
        assert!(!is_output_path(out, "examples/prompts/../x/basic.md"));
        assert!(!is_output_path(out, "examples/prompts/xs/../../x.md"));
        assert!(!is_output_path(out, "examples/prompts/xs/basic.txt"));
        assert!(!is_output_path(out, "promptc.toml"));
    }
}
