//! The loader: from a folder to a checked workspace. It runs the stages in order (load the
//! specs, register their templates, check the whole) and keeps every problem found.

use std::io;
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostics;
use crate::load::document::Document;
use crate::load::entry::Entry;
use crate::load::invalid_ids::InvalidIds;
use crate::load::mcp_places::McpPlaces;
use crate::load::rules::{self, RulesReport, RulesRequest};
use crate::load::schema_check::SchemaValidators;
use crate::load::specs::{
    Specs, context_from_text, load_context, load_specs, load_specs_checked_last,
};
use crate::model::{Context, Limits};
use crate::problem::Kind;
use crate::source::Sources;
use crate::templates::Templates;
use crate::validate;
use crate::workspace::Workspace;
use crate::workspace::register::Registrar;

/// A workspace together with everything loading found. The workspace holds every file that
/// could be read, so a run can report all problems at once.
pub struct Loaded {
    pub workspace: Workspace,
    pub diagnostics: Diagnostics,
}

/// Loads and validates the workspace rooted at `root` (the folder holding `promptc.toml`).
/// Only I/O failures are errors; problems in the files are diagnostics, and a workspace with
/// errors does not compile.
///
/// The workspace is read first with its schema checks last (see [`load_specs_checked_last`]):
/// its files read and parsed on two threads, its templates registered and compiled, and only
/// then its files checked against their schemas, on two threads. At the first problem of that
/// load, or when a file does not conform, it is read again the careful way, each file checked
/// before it is used, and only that load's diagnostics are seen.
pub fn load_workspace(root: &Path) -> io::Result<Loaded> {
    // Reading, checking and converting data recurse once per level of its nesting.
    crate::cores::with_stack_room(|| load_workspace_here(root))
}

fn load_workspace_here(root: &Path) -> io::Result<Loaded> {
    let root = root.canonicalize()?;
    if let Some(loaded) = load_checked_last(&root) {
        return Ok(loaded);
    }
    // What that load read was freed before this one reads it again.
    let mut sources = Sources::default();
    let mut diagnostics = Diagnostics::default();
    let mut invalid = InvalidIds::default();
    let specs = load_specs(&root, &mut sources, &mut diagnostics, &mut invalid)?;
    let limits = specs.manifest.value.limits.clone();
    let workspace = assemble(
        root,
        specs,
        &limits,
        sources,
        &mut diagnostics,
        invalid,
        Compiles::AsRegistered,
    )?;
    Ok(validated(workspace, diagnostics))
}

/// The workspace loaded with its schema checks last; `None` at the first problem of reading
/// it, a failing read included, or when a file does not conform to its schema.
pub(crate) fn load_checked_last(root: &Path) -> Option<Loaded> {
    let mut sources = Sources::default();
    let mut diagnostics = Diagnostics::default();
    let mut invalid = InvalidIds::default();
    let specs =
        load_specs_checked_last(root, &mut sources, &mut diagnostics, &mut invalid).ok()??;
    // The manifest is not checked yet: its templates are read and compiled within the largest
    // limits its schema allows, as its files were.
    let limits = specs.manifest.value.limits.within_schema();
    let workspace = assemble(
        root.to_path_buf(),
        specs,
        &limits,
        sources,
        &mut diagnostics,
        invalid,
        Compiles::Deferred,
    )
    .ok()?;
    let found = conform_then_check(&workspace)?;
    Some(validated_with(workspace, diagnostics, found))
}

/// When [`assemble`] compiles the templates it registers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Compiles {
    /// Each as it is registered: one that does not compile is reported, and has no id.
    AsRegistered,
    /// Later, on two threads, by [`conform_then_check`]: registering the templates is the longest
    /// step of a load that one core takes alone (in the shipped library, 1.4 ms, most of it
    /// minijinja compiling them), and the other core has nothing to do meanwhile. A template
    /// that does not compile sends the load the careful way, as a file that does not conform
    /// does, and that load reports it.
    Deferred,
}

/// The findings of the workspace's checks (see [`validate::check`]) if every file read
/// conforms to its schema, each in its entry's document (a context's is its own file's, not
/// what `extends` merged), and every template whose compile was deferred compiles; `None`
/// if not. One thread beside this one checks half the files, then takes its share of the
/// checks: a thread started for each stage cost its start and the first pages of memory of
/// its own.
fn conform_then_check(workspace: &Workspace) -> Option<Diagnostics> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    // Each thread compiles templates first, then checks files.
    let next_template = AtomicUsize::new(0);
    let template_failed = AtomicBool::new(false);
    let compiled = || {
        workspace
            .templates
            .compile_deferred(&next_template, &template_failed)
    };
    let validators = SchemaValidators::shared();
    // Two threads check about half the files each. A file that does not conform stops both:
    // the load is done again the careful way.
    let refused = AtomicBool::new(false);
    let conforms = |kind: Kind, document: &Document| {
        let fits = !refused.load(Ordering::Relaxed) && validators.conforms(kind, document);
        if !fits {
            refused.store(true, Ordering::Relaxed);
        }
        fits
    };
    let contexts_and_tools = || {
        compiled()
            && workspace
                .contexts
                .values()
                .all(|entry| conforms(Kind::Context, &entry.document))
            && workspace
                .tools
                .values()
                .all(|entry| conforms(Kind::Tool, &entry.document))
    };
    let the_rest = || {
        compiled()
            && workspace
                .components
                .values()
                .all(|entry| conforms(Kind::Component, &entry.document))
            && workspace
                .variants
                .values()
                .all(|entry| conforms(Kind::Variant, &entry.document))
            && conforms(Kind::Manifest, &workspace.manifest.document)
    };
    let checks = validate::Checks::new(workspace);
    // The other thread's half conforms; then, whether every file does, so it runs the checks.
    let (half_sender, half) = std::sync::mpsc::channel();
    let (all_sender, all) = std::sync::mpsc::channel();
    let (checks_ref, half_ref) = (&checks, &contexts_and_tools);
    let conforms = std::thread::scope(|scope| {
        // Without a thread (a low memory limit), this one does both halves and every check.
        let other = crate::cores::started(
            crate::cores::builder()
                .name("conform".into())
                .spawn_scoped(scope, move || {
                    let _ = half_sender.send(half_ref());
                    if all.recv() == Ok(true) {
                        checks_ref.run(workspace);
                    }
                }),
        );
        let rest = the_rest();
        let first = match &other {
            // A thread that ended without its answer panicked: its join says how.
            Ok(_) => half.recv().unwrap_or(false),
            Err(_) => contexts_and_tools(),
        };
        let conforms = first && rest;
        let _ = all_sender.send(conforms);
        if conforms {
            checks.run(workspace);
        }
        if let Ok(handle) = other {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
        conforms
    });
    conforms.then(|| {
        let mut found = Diagnostics::default();
        checks.report(&mut found);
        found
    })
}

/// The workspace of the specs: their templates registered and the rules folders of their
/// contexts read, not yet validated.
fn assemble(
    root: PathBuf,
    specs: Specs,
    limits: &Limits,
    mut sources: Sources,
    diagnostics: &mut Diagnostics,
    invalid: InvalidIds,
    compiles: Compiles,
) -> io::Result<Workspace> {
    // The patterns conditions give `matching` and `glob` are built on another thread from
    // here, while this one registers the templates: started with validation, that thread took
    // the second core from the checks' thread.
    crate::templates::model_id::build_ahead(crate::resolve::conditions::conditions_in(
        &specs.manifest.value,
        specs.variants.values().map(|entry| &entry.value),
        specs.components.values().map(|entry| &entry.value),
        specs.tools.values().map(|entry| &entry.value),
    ));
    let mut templates = Templates::new(specs.manifest.value.fuel, limits, &mut sources);
    templates.set_whitespace(&specs.manifest.value.templates);
    templates.defer_compiles(compiles == Compiles::Deferred);
    let mut registrar = Registrar {
        root: &root,
        sources: &mut sources,
        templates: &mut templates,
        diagnostics,
        limits,
        near_lookups: 0,
    };
    let components = registrar.components(specs.components)?;
    let variants = registrar.variants(specs.variants)?;
    let tools = registrar.tools(specs.tools);
    // Partials after the files that name them, so a missing name is reported before the
    // partial it may have meant is called unused.
    let partials = registrar.partials(&specs.manifest.value.paths.partials)?;
    let manifest = registrar.manifest(specs.manifest);
    // Templates added later (a context's rules, at a compile) are compiled as they come.
    templates.defer_compiles(false);
    // A workspace context's rules folders are read once, here: every compile of the matrix
    // and every named use of the context sees the same rules, and problems are reported
    // with the workspace's.
    let mut context_rules = indexmap::IndexMap::new();
    // Contexts that name the same folders (paths from the workspace root) share one reading
    // of them, whose problems are reported once, at the first file that writes them: read
    // again for each, a rules folder of 4 MB named by a hundred contexts of two lines was
    // read, kept and added to the sources a hundred times. Each reading is kept with
    // whether its problems were reported.
    let mut read_by_folders: std::collections::HashMap<&[String], (std::sync::Arc<_>, bool)> =
        std::collections::HashMap::new();
    for (name, entry) in &specs.contexts {
        if entry.value.rules_from.is_empty() {
            continue;
        }
        // A context that inherits its `rules_from` reads the same folders as the one that
        // names them, whose problems are reported once, at its own values.
        let named = rules::writes_rules_from(entry);
        if let Some((read, reported)) = read_by_folders.get(entry.value.rules_from.as_slice())
            && (*reported || !named)
        {
            context_rules.insert(name.clone(), std::sync::Arc::clone(read));
            continue;
        }
        let named_at: Vec<crate::span::Span> = (0..entry.value.rules_from.len())
            .map(|index| entry.value_span(&format!("/rules_from/{index}")))
            .collect();
        let mut inherited = Diagnostics::default();
        let read = rules::read_rules_from(
            &root,
            &mut sources,
            (limits.file_bytes, &manifest.value.build.out),
            &entry.value.rules_from,
            &named_at,
            if named {
                &mut *diagnostics
            } else {
                &mut inherited
            },
        );
        let read = std::sync::Arc::new(read);
        read_by_folders.insert(
            &entry.value.rules_from,
            (std::sync::Arc::clone(&read), named),
        );
        context_rules.insert(name.clone(), read);
    }
    Ok(Workspace {
        context_rules,
        matrix_contexts: crate::workspace::matrix_contexts(),
        templates,
        root,
        sources,
        manifest,
        variants,
        components,
        tools,
        contexts: specs.contexts,
        partials,
        invalid,
        valid: false,
    })
}

/// The workspace checked as a whole, with every problem found loading it.
fn validated(workspace: Workspace, diagnostics: Diagnostics) -> Loaded {
    let mut found = Diagnostics::default();
    validate::check(&workspace, &mut found);
    validated_with(workspace, diagnostics, found)
}

/// The workspace with its checks' findings (`found`) after what the load found.
fn validated_with(
    mut workspace: Workspace,
    mut diagnostics: Diagnostics,
    found: Diagnostics,
) -> Loaded {
    diagnostics.extend(found);
    diagnostics.compact();
    workspace.valid = !diagnostics.has_errors();
    Loaded {
        workspace,
        diagnostics,
    }
}

/// Reads a context file from outside the workspace's context folder (`--context FILE`).
/// Its text joins the workspace's sources so its diagnostics render like any other.
pub fn load_context_file(
    workspace: &mut Workspace,
    path: &Path,
) -> io::Result<Result<Entry<Context>, Diagnostics>> {
    crate::cores::with_stack_room(|| load_context_file_here(workspace, path))
}

fn load_context_file_here(
    workspace: &mut Workspace,
    path: &Path,
) -> io::Result<Result<Entry<Context>, Diagnostics>> {
    let mut diagnostics = Diagnostics::default();
    let limits = workspace.settings().limits.clone();
    let loaded = load_context(
        &workspace.root,
        &mut workspace.sources,
        &limits,
        path,
        &workspace.contexts,
        &mut diagnostics,
    )?;
    if let Some(entry) = &loaded {
        validate::check_context(workspace, entry, &mut diagnostics);
    }
    Ok(match loaded {
        Some(entry) if !diagnostics.has_errors() => Ok(entry),
        _ => Err(diagnostics),
    })
}

/// Reads a context given as text, as an agent passes it (standard input, a request body):
/// JSON, TOML or YAML, detected. `name` stands for it in diagnostics (`<stdin>`).
pub fn load_context_text(
    workspace: &mut Workspace,
    name: &str,
    text: String,
) -> Result<Entry<Context>, Diagnostics> {
    crate::cores::with_stack_room(|| load_context_text_here(workspace, name, text))
}

fn load_context_text_here(
    workspace: &mut Workspace,
    name: &str,
    text: String,
) -> Result<Entry<Context>, Diagnostics> {
    let mut diagnostics = Diagnostics::default();
    // A byte-order mark (a Windows editor's, piped on standard input) is no text, and would
    // shift every column of the first line, as in a file.
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    let loaded = context_from_text(
        &mut workspace.sources,
        name,
        text,
        &workspace.contexts,
        &mut diagnostics,
    );
    if let Some(entry) = &loaded {
        validate::check_context(workspace, entry, &mut diagnostics);
    }
    match loaded {
        Some(entry) if !diagnostics.has_errors() => Ok(entry),
        _ => Err(diagnostics),
    }
}

/// Merges an agent's MCP settings file (`mcpServers`) into a context's servers, with what
/// each offers from the context or the listing file beside the settings; `places` gains
/// where the listing names the tools of each server it adds. `Ok` holds the warnings (a
/// listing entry that gives nothing); `Err` the problems of the files, located, when there are
/// errors: the context is then unchanged.
pub fn apply_mcp_settings(
    workspace: &mut Workspace,
    path: &Path,
    context: &mut Context,
    places: &mut McpPlaces,
) -> io::Result<Result<Diagnostics, Diagnostics>> {
    crate::cores::with_stack_room(|| apply_mcp_settings_here(workspace, path, context, places))
}

fn apply_mcp_settings_here(
    workspace: &mut Workspace,
    path: &Path,
    context: &mut Context,
    places: &mut McpPlaces,
) -> io::Result<Result<Diagnostics, Diagnostics>> {
    let mut diagnostics = Diagnostics::default();
    let limits = workspace.settings().limits.clone();
    let mut servers = context.mcp_servers.clone();
    let applied = crate::load::mcp_settings::apply(
        &mut workspace.sources,
        &workspace.root,
        &limits,
        path,
        &mut servers,
        &mut diagnostics,
    )?;
    if let Some((listed, listing)) = applied
        && !diagnostics.has_errors()
    {
        for (server, tools) in listed {
            places.set(server, &listing, &tools, servers[server].tools.len());
        }
        context.mcp_servers = servers;
        Ok(Ok(diagnostics))
    } else {
        Ok(Err(diagnostics))
    }
}

/// Reads the rules files a context and a request name into the context (see
/// [`crate::load::rules`]): the rules that apply become its `rules` list, its workflows its
/// `workflows`. The report says why each rule applies or not; the diagnostics (warnings for
/// skipped files, errors for folders that cannot be read) point into `workspace.sources`.
///
/// `named` is the name of the workspace context `context` came from, if it did: its rules
/// folders were read when the workspace loaded and are not read again.
pub fn assemble_rules(
    workspace: &mut Workspace,
    context: &mut Context,
    request: &RulesRequest,
    named: Option<&str>,
) -> (RulesReport, Diagnostics) {
    crate::cores::with_stack_room(|| assemble_rules_here(workspace, context, request, named))
}

fn assemble_rules_here(
    workspace: &mut Workspace,
    context: &mut Context,
    request: &RulesRequest,
    named: Option<&str>,
) -> (RulesReport, Diagnostics) {
    let mut diagnostics = Diagnostics::default();
    let file_bytes = workspace.settings().limits.file_bytes;
    let report = rules::assemble(
        &workspace.root,
        &mut workspace.sources,
        file_bytes,
        context,
        request,
        (
            named
                .and_then(|name| workspace.context_rules.get(name))
                .map(AsRef::as_ref),
            named.map(|_| workspace.contexts.len()),
        ),
        &mut diagnostics,
    );
    (report, diagnostics)
}
