//! Reading a workspace's data files into specs: each file parsed, schema-checked and
//! deserialized, ids checked for duplicates. What a broken file would have declared is
//! recorded, so that it is reported once, where it is broken.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::confine::Origin;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::{Document, Format, MAX_VALUES};
use crate::load::entry::Entry;
use crate::load::invalid_ids::InvalidIds;
use crate::load::prefetch::Prefetch;
use crate::load::schema_check::SchemaValidators;
use crate::load::{self, MANIFEST_FILE};
use crate::model::{Component, Context, Limits, Manifest, PostprocessRule, ToolSpec, Variant};
use crate::problem::{InvalidValue, Kind, LabelKind, Problem, RefKind};
use crate::source::Sources;
use crate::span::Span;

/// The specs of a workspace's files, before their templates are registered.
pub struct Specs {
    pub manifest: Entry<Manifest>,
    pub variants: IndexMap<String, Entry<Variant>>,
    pub components: IndexMap<String, Entry<Component>>,
    pub tools: IndexMap<String, Entry<ToolSpec>>,
    /// Named contexts, by file stem, each with its own file's document (not the merged one).
    pub contexts: IndexMap<String, Entry<Context>>,
}

/// The entries of a workspace's folders: variants, components, tools and contexts.
type Folders = (
    IndexMap<String, Entry<Variant>>,
    IndexMap<String, Entry<Component>>,
    IndexMap<String, Entry<ToolSpec>>,
    IndexMap<String, Entry<Context>>,
);

/// When a load checks its files against their schemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SchemaChecks {
    /// Each file before it is used, every problem reported.
    First,
    /// By the caller, once every file is read (see [`load_specs_checked_last`]).
    Last,
}

/// Reads every data file of the workspace at `root` (canonical) into `sources`, each checked
/// against its schema before it is used. Problems are diagnostics; only I/O failures are
/// errors.
pub fn load_specs(
    root: &Path,
    sources: &mut Sources,
    diagnostics: &mut Diagnostics,
    invalid: &mut InvalidIds,
) -> io::Result<Specs> {
    read_specs(root, sources, diagnostics, invalid, SchemaChecks::First).map(|(specs, _)| specs)
}

/// Reads the workspace as [`load_specs`] does, but no file is checked against its schema: the
/// caller checks them once it has done what it can without them (see
/// `loader::load_workspace`: on two threads, beside the templates' compiles), in the
/// documents of the entries it returns (a context's being its own file's,
/// before `extends` merged it; a file it could not make an entry of is a problem, which gives
/// the load up). Nothing it finds is worded: at the first problem of any
/// kind its result is `None`, and the workspace is to be loaded again with [`load_specs`], so
/// what a user sees never depends on this load. Until its manifest is checked, files are read
/// within the largest limits the schema allows.
pub fn load_specs_checked_last(
    root: &Path,
    sources: &mut Sources,
    diagnostics: &mut Diagnostics,
    invalid: &mut InvalidIds,
) -> io::Result<Option<Specs>> {
    let (specs, clean) = read_specs(root, sources, diagnostics, invalid, SchemaChecks::Last)?;
    Ok(clean.then_some(specs))
}

/// The specs, and whether they stand: with `Last`, whether nothing went wrong (the files are
/// still to be checked against their schemas); always with `First`, whose diagnostics say
/// what went wrong.
fn read_specs(
    root: &Path,
    sources: &mut Sources,
    diagnostics: &mut Diagnostics,
    invalid: &mut InvalidIds,
    checks: SchemaChecks,
) -> io::Result<(Specs, bool)> {
    let mut loader = Loader {
        root,
        origin: Origin::Workspace,
        limits: Limits::default(),
        sources,
        diagnostics,
        validators: SchemaValidators::shared(),
        invalid,
        checks,
        given_up: false,
        prefetch: None,
        listed: HashMap::new(),
        not_data_folders: Vec::new(),
        values: 0,
        context_fields: None,
    };
    let manifest_path = root.join(MANIFEST_FILE);
    let manifest = match loader.load_typed::<Manifest>(&manifest_path, Kind::Manifest)? {
        Some(entry) => entry,
        None => {
            // Without a valid manifest its predicates are unknown.
            loader.invalid.manifest_invalid = loader.diagnostics.has_errors();
            loader.unreadable(&manifest_path)
        }
    };
    loader.limits = match checks {
        SchemaChecks::First => manifest.value.limits.clone(),
        SchemaChecks::Last => manifest.value.limits.within_schema(),
    };
    crate::built::build_ahead(
        manifest
            .value
            .postprocess
            .iter()
            .flatten()
            .filter_map(|rule| match rule {
                PostprocessRule::Regex { pattern, .. } => Some(pattern.clone()),
                _ => None,
            })
            .collect(),
    );
    if checks == SchemaChecks::First {
        loader.context_fields = Some(manifest.value.context_fields.clone());
    }
    let paths = &manifest.value.paths;
    folders_apart(root, &manifest, loader.diagnostics);
    loader.not_data_folders = [&paths.contexts, &paths.schema, &manifest.value.build.out]
        .into_iter()
        .filter_map(|folder| load::read::resolve_inside(root, root, folder))
        .collect();
    // A load with its checks last reads and parses the files on two threads (see
    // `load::prefetch`); one that reports what it meets reads them in order, on this one.
    let prefetch = (checks == SchemaChecks::Last).then(|| {
        let files = loader.list_ahead(&[
            (&paths.variants, Kind::Variant),
            (&paths.components, Kind::Component),
            (&paths.tools, Kind::Tool),
            (&paths.contexts, Kind::Context),
        ]);
        Prefetch::new(
            root,
            (loader.limits.file().bytes, loader.limits.workspace().bytes),
            files,
        )
    });
    let (variants, components, tools, contexts) = std::thread::scope(|scope| {
        if let Some(prefetch) = &prefetch {
            let spawned = crate::cores::started(
                crate::cores::builder()
                    .name("read".into())
                    .spawn_scoped(scope, || prefetch.read_from_the_end()),
            );
            // Without a thread (a low memory limit), this one reads every file.
            if spawned.is_err() {
                prefetch.stop();
            }
            loader.prefetch = Some(prefetch);
        }
        let loaded = loader.load_folders(paths);
        if let Some(prefetch) = &prefetch {
            prefetch.stop();
        }
        loaded
    })?;
    let variants = loader.bound_inheritance(variants);
    // A load with its checks last vouches only for having met no problem: the caller checks
    // its files against their schemas.
    let clean = checks == SchemaChecks::First || !loader.giving_up();
    let specs = Specs {
        manifest,
        variants,
        components,
        tools,
        contexts,
    };
    Ok((specs, clean))
}

/// Reads a context file the caller names (`--context FILE`), from anywhere: its text joins
/// `sources` so its diagnostics render like any other; its `extends` names one of `bases`.
/// `None` when it has problems.
pub fn load_context(
    root: &Path,
    sources: &mut Sources,
    limits: &Limits,
    path: &Path,
    bases: &IndexMap<String, Entry<Context>>,
    diagnostics: &mut Diagnostics,
) -> io::Result<Option<Entry<Context>>> {
    let mut invalid = InvalidIds::default();
    let mut loader = Loader {
        root,
        origin: Origin::Caller,
        limits: limits.clone(),
        sources,
        diagnostics,
        validators: SchemaValidators::shared(),
        invalid: &mut invalid,
        checks: SchemaChecks::First,
        given_up: false,
        prefetch: None,
        listed: HashMap::new(),
        not_data_folders: Vec::new(),
        values: 0,
        context_fields: None,
    };
    let Some(document) = loader.checked_document(path, Kind::Context)? else {
        return Ok(None);
    };
    Ok(load::contexts::resolve_one(document, bases, diagnostics))
}

/// A context given as text (standard input, an agent's request): JSON, TOML or YAML, told
/// apart by its first characters. Its `extends` names one of `bases`. `None` when it has
/// problems (recorded).
pub fn context_from_text(
    sources: &mut Sources,
    name: &str,
    text: String,
    bases: &IndexMap<String, Entry<Context>>,
    diagnostics: &mut Diagnostics,
) -> Option<Entry<Context>> {
    let format = detect_format(&text);
    let blank = text.trim().is_empty();
    let id = sources.add(std::path::PathBuf::from(name), text);
    if blank {
        diagnostics.push(Diagnostic::new(
            Problem::EmptyFile { inline: true },
            Span::file_start(id),
        ));
        return None;
    }
    let document = match Document::parse(id, sources.get(id), format) {
        Ok(document) => document,
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return None;
        }
    };
    if !SchemaValidators::shared().check(Kind::Context, &document, diagnostics) {
        return None;
    }
    let mut document = document;
    let entry = Entry {
        value: std::mem::take(&mut document.value),
        document,
        path: std::path::PathBuf::from(name),
    };
    load::contexts::resolve_one(entry, bases, diagnostics)
}

/// JSON starts with `{` and a quoted key (or `}`); TOML has a `key =` or `[table]` line
/// before any YAML `key:` line; anything else is YAML (of which JSON is a part), a flow
/// mapping with plain keys (`{mode: plan}`) included.
fn detect_format(text: &str) -> Format {
    if let Some(rest) = text.trim_start().strip_prefix('{')
        && matches!(rest.trim_start().chars().next(), None | Some('"' | '}'))
    {
        return Format::Json;
    }
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            return Format::Toml;
        }
        let assignment = line.find('=');
        let colon = line.find(':');
        return match (assignment, colon) {
            (Some(equals), Some(colon)) if equals < colon => Format::Toml,
            (Some(_), None) => Format::Toml,
            _ => Format::Yaml,
        };
    }
    Format::Yaml
}

struct Loader<'a, 'p> {
    root: &'a Path,
    /// Workspace files are confined to the workspace; a context file named by the caller is
    /// not.
    origin: Origin,
    /// Read limits: the defaults for the manifest, then the manifest's.
    limits: Limits,
    sources: &'a mut Sources,
    diagnostics: &'a mut Diagnostics,
    validators: &'static SchemaValidators,
    invalid: &'a mut InvalidIds,
    checks: SchemaChecks,
    /// A `SchemaChecks::Last` load met a problem: its result is dropped.
    given_up: bool,
    /// The workspace's files, read and parsed ahead on another thread (a load with its
    /// checks last).
    prefetch: Option<&'p Prefetch<'p>>,
    /// Folders already listed, by folder and kind: the listing the prefetch was given.
    listed: HashMap<(PathBuf, Kind), load::DataFiles>,
    /// Folders whose files are read otherwise or are promptc's own (the contexts', the
    /// schemas', the outputs'), where a folder of data files may lie: nothing under them is
    /// said to be not read as data.
    not_data_folders: Vec<PathBuf>,
    /// The values of the files read so far (see [`MAX_VALUES`]).
    values: usize,
    /// The manifest's `[context_fields]`, which a workspace context's `extra` keys are
    /// checked against even where its schema refuses the file; `None` where the load does
    /// not know them (a context the caller names is checked once it has loaded).
    context_fields: Option<IndexMap<String, crate::model::ContextField>>,
}

impl Loader<'_, '_> {
    /// Whether this is a load with its checks last that has met a problem (see
    /// [`load_specs_checked_last`]).
    fn giving_up(&self) -> bool {
        self.checks == SchemaChecks::Last && (self.given_up || !self.diagnostics.is_empty())
    }

    /// What `read` reads, or nothing once this load is giving up.
    fn unless_giving_up<T: Default>(
        &mut self,
        read: impl FnOnce(&mut Self) -> io::Result<T>,
    ) -> io::Result<T> {
        if self.giving_up() {
            // Nothing more is read: neither is anything read ahead.
            if let Some(prefetch) = self.prefetch {
                prefetch.stop();
            }
            Ok(T::default())
        } else {
            read(self)
        }
    }

    /// The variants, components, tools and contexts of the folders `paths` names. A load
    /// with its checks last that has met a problem reads no further: it is done again.
    fn load_folders(&mut self, paths: &crate::model::Paths) -> io::Result<Folders> {
        let variants = self.unless_giving_up(|loader| {
            loader.load_all(
                &paths.variants,
                Kind::Variant,
                RefKind::Variant,
                |v: &Variant| v.id.clone(),
            )
        })?;
        let components = self.unless_giving_up(|loader| {
            loader.load_all(
                &paths.components,
                Kind::Component,
                RefKind::Component,
                |c: &Component| c.id.clone(),
            )
        })?;
        let tools = self.unless_giving_up(|loader| {
            loader.load_all(&paths.tools, Kind::Tool, RefKind::Tool, |t: &ToolSpec| {
                t.id.clone()
            })
        })?;
        let contexts = self.unless_giving_up(|loader| loader.load_contexts(&paths.contexts))?;
        Ok((variants, components, tools, contexts))
    }

    /// Lists the folders ahead of their loads, for the prefetch: their data files in the
    /// order the loads read them. A folder that cannot be listed is left to its load, which
    /// reports why.
    fn list_ahead(&mut self, folders: &[(&String, Kind)]) -> Vec<(PathBuf, Kind)> {
        let mut files: Vec<(PathBuf, Kind)> = Vec::new();
        // Folders may overlap (`paths.tools` below `paths.components`): a file is read ahead
        // once, for the first load that reads it.
        let mut seen = std::collections::HashSet::new();
        for &(folder, kind) in folders {
            let Some(dir) = load::read::data_folder(self.root, folder) else {
                continue;
            };
            if self.listed.contains_key(&(dir.clone(), kind)) {
                continue;
            }
            let Ok(found) = load::data_files(self.root, &dir, kind) else {
                continue;
            };
            for path in &found.files {
                if seen.insert(path.clone()) {
                    files.push((path.clone(), kind));
                }
            }
            self.listed.insert((dir, kind), found);
        }
        files
    }

    /// Reads, parses, schema-checks and deserializes one file. `None` when it has problems
    /// (they are recorded).
    fn load_typed<T: DeserializeOwned>(
        &mut self,
        path: &Path,
        kind: Kind,
    ) -> io::Result<Option<Entry<T>>> {
        Ok(self
            .load_raw(path, kind)?
            .and_then(|raw| self.typed(raw).ok()))
    }

    /// A file read and parsed (see [`Loader::read_raw`]), unless the values of the files
    /// read so far and its own pass what promptc keeps (reported at the file).
    fn load_raw(&mut self, path: &Path, kind: Kind) -> io::Result<Option<load::RawFile>> {
        // Between files: what the files before found is held only as far as a report shows it.
        self.diagnostics.compact();
        let Some(raw) = self.read_raw(path, kind)? else {
            return Ok(None);
        };
        let values = self.values.saturating_add(raw.document.values());
        if values > MAX_VALUES {
            self.diagnostics.push(Diagnostic::new(
                Problem::TooManyValues {
                    limit: MAX_VALUES,
                    together: true,
                },
                Span::file_start(raw.document.source),
            ));
            return Ok(None);
        }
        self.values = values;
        Ok(Some(raw))
    }

    fn read_raw(&mut self, path: &Path, kind: Kind) -> io::Result<Option<load::RawFile>> {
        if let Some(parsed) = self.prefetch.and_then(|prefetch| prefetch.take(path)) {
            // Past the workspace's limit, the file is read again, which reports it: counted
            // as `read::read_source` counts it, by the bytes read.
            let total = self.limits.workspace().bytes;
            if self.sources.total_bytes().saturating_add(parsed.bytes_read) <= total {
                let room = MAX_VALUES.saturating_sub(self.values);
                let past = load::data_format(path, kind).and_then(|format| {
                    Document::counted_past(
                        &parsed.file.text,
                        format,
                        parsed.document.values(),
                        room,
                    )
                });
                let mut document = parsed.document;
                document.source = self.sources.push(parsed.file);
                if let Some(alone) = past {
                    self.diagnostics.push(Diagnostic::new(
                        Problem::TooManyValues {
                            limit: MAX_VALUES,
                            together: !alone,
                        },
                        Span::file_start(document.source),
                    ));
                    return Ok(None);
                }
                return Ok(Some(load::RawFile {
                    kind,
                    path: path.to_path_buf(),
                    document,
                }));
            }
        }
        load::load_file(
            self.sources,
            self.diagnostics,
            self.root,
            path,
            kind,
            self.origin,
            &self.limits,
            MAX_VALUES.saturating_sub(self.values),
        )
    }

    /// The data files under `dir`; links that promptc will not follow are reported.
    fn data_files(&mut self, dir: &Path, kind: Kind) -> io::Result<Vec<std::path::PathBuf>> {
        let found = match self.listed.remove(&(dir.to_path_buf(), kind)) {
            Some(found) => found,
            None => load::data_files(self.root, dir, kind)?,
        };
        for error in found.refused {
            let display = error.path.clone();
            if let Err(diagnostic) = load::read::refused(self.sources, display, error)? {
                self.diagnostics.push(diagnostic);
            }
        }
        // The workspace's root as a folder of data files holds everything else too.
        let told = dir != self.root;
        for (display, why) in found.not_read {
            let real = self.root.join(&display);
            let elsewhere = |folder: &PathBuf| real.starts_with(folder) && !dir.starts_with(folder);
            if !told || self.not_data_folders.iter().any(elsewhere) {
                continue;
            }
            let path = display.display().to_string();
            let at = Span::file_start(self.sources.add(display, String::new()));
            self.diagnostics
                .push(Diagnostic::new(Problem::NotReadAsData { path, why }, at));
        }
        Ok(found.files)
    }

    /// An empty entry standing for a file that could not be read or parsed (reported): its
    /// spans point at the file's start.
    fn unreadable<T: Default>(&mut self, path: &Path) -> Entry<T> {
        let display = load::read::display_path(self.root, path);
        let source = self
            .sources
            .find(&display)
            .unwrap_or_else(|| self.sources.add(display, String::new()));
        Entry {
            value: T::default(),
            document: Document::empty(source),
            path: path.to_path_buf(),
        }
    }

    /// The file's typed entry; the file itself back when it has problems (recorded).
    fn typed<T: DeserializeOwned>(
        &mut self,
        raw: load::RawFile,
    ) -> Result<Entry<T>, load::RawFile> {
        if self.checks == SchemaChecks::First {
            return typed(self.validators, self.diagnostics, raw);
        }
        // Checked against its schema once every file is read (see `SchemaChecks::Last`).
        match T::deserialize(&raw.document.value) {
            Ok(value) => Ok(Entry {
                value,
                document: raw.document,
                path: raw.path,
            }),
            Err(_) => {
                self.given_up = true;
                Err(raw)
            }
        }
    }

    fn load_all<T: DeserializeOwned>(
        &mut self,
        dir: &str,
        kind: Kind,
        ref_kind: RefKind,
        id_of: impl Fn(&T) -> String,
    ) -> io::Result<IndexMap<String, Entry<T>>> {
        // A folder outside the workspace is reported by validation and never walked.
        let Some(dir) = load::read::data_folder(self.root, dir) else {
            return Ok(IndexMap::new());
        };
        let files = self.data_files(&dir, kind)?;
        // Sized once: an entry is large, and each growth of the map copied them all.
        let mut entries: IndexMap<String, Entry<T>> = IndexMap::with_capacity(files.len());
        for path in files {
            let Some(raw) = self.load_raw(&path, kind)? else {
                // A file that cannot be read or parsed still declares the id of its name.
                self.declare_invalid(ref_kind, &path, None);
                continue;
            };
            let entry = match self.typed::<T>(raw) {
                Ok(entry) => entry,
                Err(raw) => {
                    self.declare_invalid(ref_kind, &path, Some(&raw.document.value));
                    continue;
                }
            };
            let id = id_of(&entry.value);
            self.insert_unique(&mut entries, id, entry, ref_kind, "/id");
        }
        Ok(entries)
    }

    /// Variants count what they inherit through `extends` against `limits.workspace_bytes`,
    /// as contexts do (see `contexts::resolve_all`): validation and the compiler each make a
    /// merged copy of every variant, so a hundred one-line variants extending one with 4 MB
    /// of placeholders took 2 GB, and a chain of 64 links held every prefix of it. Counted
    /// before any merge, from the fields of each variant's ancestors (in memory terms, as a
    /// context's), summed along its chain;
    /// the variants past the limit are left out as broken files are, with one error at the
    /// first of them.
    fn bound_inheritance(
        &mut self,
        mut variants: IndexMap<String, Entry<Variant>>,
    ) -> IndexMap<String, Entry<Variant>> {
        let limit = self.limits.workspace().bytes;
        // Only what is inherited is copied: the variants another extends are measured, the
        // others (most of a workspace) cost nothing here.
        let extended: std::collections::BTreeSet<&str> = variants
            .values()
            .filter_map(|entry| entry.value.extends.as_deref())
            .collect();
        let own: HashMap<&str, u64> = extended
            .into_iter()
            .filter_map(|parent| variants.get_key_value(parent))
            .map(|(id, entry)| {
                let bytes = serde_json::to_value(&entry.value)
                    .map_or(0, |value| load::contexts::value_bytes(&value));
                (id.as_str(), bytes)
            })
            .collect();
        let parent_of = |id: &str| variants.get(id)?.value.extends.as_deref();
        let mut held: u64 = 0;
        let mut over = Vec::new();
        for id in variants.keys() {
            let chain = crate::follow::follow(id, parent_of);
            let inherited: u64 = chain
                .links
                .iter()
                .skip(1)
                .filter_map(|link| own.get(link))
                .sum();
            held = held.saturating_add(inherited);
            if held > limit {
                over.push(id.clone());
            }
        }
        for (index, id) in over.iter().enumerate() {
            let Some(entry) = variants.shift_remove(id) else {
                continue;
            };
            if index == 0 {
                let span = if entry.value.extends.is_some() {
                    entry.value_span("/extends")
                } else {
                    Span::file_start(entry.source())
                };
                self.diagnostics.error(
                    Problem::InheritsTooMuch {
                        kind: RefKind::Variant,
                        limit,
                    },
                    span,
                );
            }
            self.declare_invalid(RefKind::Variant, &entry.path, Some(&entry.document.value));
        }
        variants
    }

    /// Records what an invalid file declares, so that it is reported once (where it is
    /// broken) and not again through everything that refers to it: its id (the `id` it
    /// gives, and its file name, which is what a broken `id` was meant to be), a component's
    /// slot, a variant's family.
    fn declare_invalid(&mut self, kind: RefKind, path: &Path, document: Option<&Value>) {
        let field = |name: &str| {
            document
                .and_then(|value| value.get(name))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let stem = context_name(path);
        if kind == RefKind::Variant {
            let written = |name: &str| document.and_then(|value| value.get(name));
            let unclear = |name: &str| written(name).is_some_and(|value| !value.is_string());
            // A family is never inherited through `extends`: the file's own `family`, or
            // its id, names it.
            self.invalid.variant_family_unknown |= document.is_none()
                || unclear("family")
                || (written("family").is_none() && unclear("id"));
        }
        let ids: Vec<String> = field("id").into_iter().chain([stem]).collect();
        for id in ids {
            if kind == RefKind::Variant {
                let family = field("family").unwrap_or_else(|| id.clone());
                self.invalid.insert(RefKind::Family, family, None);
                self.invalid.insert(RefKind::Family, id.clone(), None);
                self.invalid.variant_invalid = true;
            }
            self.invalid.insert(kind, id, field("slot"));
        }
    }

    fn load_contexts(&mut self, dir: &str) -> io::Result<IndexMap<String, Entry<Context>>> {
        // A folder outside the workspace is reported by validation and never walked.
        let Some(dir) = load::read::data_folder(self.root, dir) else {
            return Ok(IndexMap::new());
        };
        let files = self.data_files(&dir, Kind::Context)?;
        let mut documents = IndexMap::with_capacity(files.len());
        for path in files {
            // The name becomes an output's file name and a command-line argument.
            let name = context_name(&path);
            if !is_plain_name(&name) {
                let display = load::read::display_path(self.root, &path);
                let id = self.sources.add(display, String::new());
                self.diagnostics
                    .error(Problem::BadContextName { name }, Span::file_start(id));
                continue;
            }
            let Some(entry) = self.checked_document(&path, Kind::Context)? else {
                self.invalid
                    .insert(RefKind::Context, context_name(&path), None);
                continue;
            };
            let name = context_name(&path);
            self.insert_unique(&mut documents, name, entry, RefKind::Context, "");
        }
        // Each file is checked on its own; `extends` merges the documents, then they become
        // typed contexts.
        let invalid = &*self.invalid;
        let (entries, broken) = load::contexts::resolve_all(
            documents,
            &|name| invalid.contains(RefKind::Context, name),
            self.limits.workspace().bytes,
            self.diagnostics,
        );
        for name in broken {
            self.invalid.insert(RefKind::Context, name, None);
        }
        Ok(entries)
    }

    /// Reads, parses and schema-checks one file, keeping its document untyped. `None` when it
    /// has problems (they are recorded).
    fn checked_document(&mut self, path: &Path, kind: Kind) -> io::Result<Option<Entry<Value>>> {
        let Some(raw) = self.load_raw(path, kind)? else {
            return Ok(None);
        };
        match self.checks {
            SchemaChecks::First => {
                if !self
                    .validators
                    .check(raw.kind, &raw.document, self.diagnostics)
                {
                    // What validation would say of its `extra` once the rest is fixed is
                    // said now: a misspelt key elsewhere hid a wrong type there.
                    if kind == Kind::Context
                        && let Some(declared) = &self.context_fields
                    {
                        crate::load::context_extra::check_extra(
                            declared,
                            &raw.document,
                            self.diagnostics,
                        );
                    }
                    return Ok(None);
                }
            }
            // Checked by the caller, in the document the context's entry keeps.
            SchemaChecks::Last => {}
        }
        // The value leaves the document for the time contexts merge, and goes back to it
        // with the typed context (see `contexts::resolve_all`): held once, not copied.
        let mut document = raw.document;
        Ok(Some(Entry {
            value: std::mem::take(&mut document.value),
            document,
            path: raw.path,
        }))
    }

    fn insert_unique<T>(
        &mut self,
        entries: &mut IndexMap<String, Entry<T>>,
        id: String,
        entry: Entry<T>,
        kind: RefKind,
        id_pointer: &str,
    ) {
        let span_of = |entry: &Entry<T>| {
            if id_pointer.is_empty() {
                Span::file_start(entry.source())
            } else {
                entry.value_span(id_pointer)
            }
        };
        if let Some(first) = entries.get(&id) {
            // Which of the two variants the others extend and name is not known: what they
            // would be checked against may be the wrong one, and is not judged, as a variant
            // that did not load is not.
            if kind == RefKind::Variant {
                self.invalid.variant_invalid = true;
                self.invalid.insert(kind, id.clone(), None);
            }
            self.diagnostics.push(
                Diagnostic::new(
                    Problem::DuplicateId {
                        kind,
                        name: id.clone(),
                    },
                    span_of(&entry),
                )
                .label(span_of(first), LabelKind::FirstDefinedHere),
            );
        } else {
            entries.insert(id, entry);
        }
    }
}

/// Schema-checks and deserializes one parsed file; the file back when it has problems
/// (they are recorded).
fn typed<T: DeserializeOwned>(
    validators: &SchemaValidators,
    diagnostics: &mut Diagnostics,
    raw: load::RawFile,
) -> Result<Entry<T>, load::RawFile> {
    if !validators.check(raw.kind, &raw.document, diagnostics) {
        return Err(raw);
    }
    match T::deserialize(&raw.document.value) {
        Ok(value) => Ok(Entry {
            value,
            document: raw.document,
            path: raw.path,
        }),
        Err(error) => {
            diagnostics.error(
                Problem::InvalidValue(InvalidValue::Model {
                    message: error.to_string(),
                }),
                raw.document.value_span(""),
            );
            Err(raw)
        }
    }
}

/// Checks one data file given as bytes the way loading a workspace checks it (UTF-8, syntax,
/// schema, types), without a disk: what the fuzz targets drive. `path` names the file in
/// diagnostics and its extension gives the format; checks that need the rest of the
/// workspace (references, templates) are not run. The flag tells whether the file was
/// accepted.
pub fn check_document(kind: Kind, path: &Path, bytes: Vec<u8>) -> (Sources, Diagnostics, bool) {
    let validators = SchemaValidators::shared();
    let mut sources = Sources::default();
    let mut diagnostics = Diagnostics::default();
    // As when loading: JSON is for contexts only, other extensions are not data files.
    let Some(format) = load::data_format(path, kind) else {
        return (sources, diagnostics, false);
    };
    let parsed = load::read::add_bytes(&mut sources, path.to_path_buf(), bytes)
        .and_then(|id| Document::parse(id, sources.get(id), format));
    let raw = match parsed {
        Ok(document) => load::RawFile {
            kind,
            path: path.to_path_buf(),
            document,
        },
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return (sources, diagnostics, false);
        }
    };
    let accepted = match kind {
        Kind::Manifest => typed::<Manifest>(validators, &mut diagnostics, raw).is_ok(),
        Kind::Variant => typed::<Variant>(validators, &mut diagnostics, raw).is_ok(),
        Kind::Component => typed::<Component>(validators, &mut diagnostics, raw).is_ok(),
        Kind::Tool => typed::<ToolSpec>(validators, &mut diagnostics, raw).is_ok(),
        Kind::Context => typed::<Context>(validators, &mut diagnostics, raw).is_ok(),
    };
    (sources, diagnostics, accepted)
}

/// Whether a name is an id-like plain name: an ASCII letter or digit, then those, `_`, `.`
/// and `-` (the `ID_PATTERN` of ids).
pub fn is_plain_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// A context's name: its file stem (`examples/contexts/basic.toml` → `basic`).
pub fn context_name(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Each kind of data file has a folder of its own: two folder settings that name one folder,
/// or one below the other, are an error at the later setting (the overlap of the schemas'
/// folder with the contexts', which read JSON, too).
fn folders_apart(root: &Path, manifest: &Entry<Manifest>, diagnostics: &mut Diagnostics) {
    let paths = &manifest.value.paths;
    let folders = [
        ("paths.variants", &paths.variants),
        ("paths.components", &paths.components),
        ("paths.tools", &paths.tools),
        ("paths.contexts", &paths.contexts),
        ("paths.schema", &paths.schema),
    ];
    let place = |folder: &String| {
        let lexical = crate::confine::lexical(folder);
        let real = crate::confine::real_folder(root, &lexical);
        (lexical, real)
    };
    let overlap = |a: &Path, b: &Path| a.starts_with(b) || b.starts_with(a);
    for (later, (setting, folder)) in folders.iter().enumerate() {
        for (other, other_folder) in &folders[..later] {
            // The schemas' folder holds JSON, which only the contexts' load reads.
            let schema = *setting == "paths.schema" || *other == "paths.schema";
            if schema && *other != "paths.contexts" && *setting != "paths.contexts" {
                continue;
            }
            let ((a, real_a), (b, real_b)) = (place(folder), place(other_folder));
            // The root as a folder (as written, or where a link leads), and a folder outside
            // the workspace, are refused at their settings.
            let refused = |lexical: &Path, real: &Path| {
                lexical.as_os_str().is_empty() || real == root || !real.starts_with(root)
            };
            if refused(&a, &real_a) || refused(&b, &real_b) {
                continue;
            }
            if !(overlap(&a, &b) || overlap(&real_a, &real_b)) {
                continue;
            }
            let pointer = format!("/{}", setting.replace('.', "/"));
            let other_pointer = format!("/{}", other.replace('.', "/"));
            let span = [pointer.as_str(), other_pointer.as_str()]
                .into_iter()
                .find(|pointer| manifest.document.writes(pointer))
                .map_or_else(
                    || Span::file_start(manifest.document.source),
                    |pointer| manifest.value_span(pointer),
                );
            diagnostics.error(
                Problem::FoldersOverlap {
                    setting: (*setting).to_string(),
                    folder: (*folder).clone(),
                    other: (*other).to_string(),
                    other_folder: (*other_folder).clone(),
                },
                span,
            );
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A context on standard input is told apart by its first lines: JSON by a quoted key
    /// after `{`; a YAML flow mapping, whose keys need no quotes, is YAML.
    #[test]
    fn a_context_s_language_is_told_from_its_first_lines() {
        for (text, format) in [
            ("{\"mode\": \"plan\"}", Format::Json),
            ("  {\n  \"mode\": \"plan\"}", Format::Json),
            ("{}", Format::Json),
            ("{mode: plan, extends: basic}", Format::Yaml),
            ("{ 'mode': plan }", Format::Yaml),
            ("mode = \"plan\"", Format::Toml),
            ("[browser]\nenabled = true", Format::Toml),
            ("mode: plan", Format::Yaml),
        ] {
            assert_eq!(detect_format(text), format, "{text}");
        }
    }

    /// A load that reads its files on two threads (its checks last) holds the sources a load
    /// on one thread holds, in the same order and so under the same ids, with the same byte
    /// count, and its entries point at them: here on the shipped library, one file of it
    /// saved with a byte-order mark.
    #[test]
    fn a_load_reading_ahead_holds_the_sources_a_load_on_one_thread_holds() {
        let dir = tempfile::tempdir().unwrap();
        let library = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (relative, bytes) in crate::init::LIBRARY {
            let path = dir.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
        }
        let tool = dir.path().join("tools/read_file.toml");
        let text = std::fs::read(library.join("tools/read_file.toml")).unwrap();
        std::fs::write(&tool, [b"\xef\xbb\xbf".as_slice(), &text].concat()).unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut one = Sources::default();
        let first = load_specs(
            &root,
            &mut one,
            &mut Diagnostics::default(),
            &mut InvalidIds::default(),
        )
        .unwrap();
        let mut two = Sources::default();
        let last = load_specs_checked_last(
            &root,
            &mut two,
            &mut Diagnostics::default(),
            &mut InvalidIds::default(),
        )
        .unwrap()
        .unwrap();
        let files = |sources: &Sources| -> Vec<(PathBuf, String)> {
            sources
                .iter()
                .map(|file| (file.path.clone(), file.text.clone()))
                .collect()
        };
        assert!(one.iter().count() > 40);
        assert_eq!(files(&one), files(&two));
        assert_eq!(one.total_bytes(), two.total_bytes());
        fn sources_of<T>(
            entries: &IndexMap<String, Entry<T>>,
        ) -> impl Iterator<Item = (PathBuf, crate::source::SourceId)> + '_ {
            entries
                .values()
                .map(|entry| (entry.path.clone(), entry.document.source))
        }
        let entries = |specs: &Specs| -> Vec<(PathBuf, crate::source::SourceId)> {
            let manifest = (specs.manifest.path.clone(), specs.manifest.document.source);
            std::iter::once(manifest)
                .chain(sources_of(&specs.variants))
                .chain(sources_of(&specs.components))
                .chain(sources_of(&specs.tools))
                .chain(sources_of(&specs.contexts))
                .collect()
        };
        assert_eq!(entries(&first), entries(&last));
    }

    /// A workspace of a manifest, one variant, one component and one context, with
    /// `manifest` as the manifest, `variant` as the variant's file and `context` as the
    /// context's.
    fn workspace(manifest: &str, variant: &str, context: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("promptc.toml", manifest),
            ("variants/generic.toml", variant),
            ("examples/contexts/basic.toml", context),
            ("variants/generic.md", "{{ intro }}\n"),
            (
                "components/intro.toml",
                "id = \"intro\"\ntemplate_file = \"intro.md\"\n",
            ),
            ("components/intro.md", "Hello.\n"),
        ];
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    const MANIFEST: &str = "name = \"test\"\nfallback_family = \"generic\"\n";
    const VARIANT: &str =
        "id = \"generic\"\ntemplate_file = \"generic.md\"\ncomponents = [\"intro\"]\n";
    const CONTEXT: &str = "cwd = \"/work\"\n";

    /// Both loads of the workspace: checks last (`None` when it gave up), then checks first,
    /// with the diagnostics the second reported.
    fn both_loads(dir: &tempfile::TempDir) -> (Option<Specs>, Specs, Diagnostics) {
        let root = dir.path().canonicalize().unwrap();
        let mut sources = Sources::default();
        let mut diagnostics = Diagnostics::default();
        let mut invalid = InvalidIds::default();
        let last =
            load_specs_checked_last(&root, &mut sources, &mut diagnostics, &mut invalid).unwrap();
        let mut sources = Sources::default();
        let mut diagnostics = Diagnostics::default();
        let mut invalid = InvalidIds::default();
        let first = load_specs(&root, &mut sources, &mut diagnostics, &mut invalid).unwrap();
        (last, first, diagnostics)
    }

    #[test]
    fn a_clean_workspace_loads_the_same_with_checks_last() {
        let dir = workspace(MANIFEST, VARIANT, CONTEXT);
        let (last, first, diagnostics) = both_loads(&dir);
        assert!(diagnostics.is_empty());
        let last = last.expect("nothing to give up on");
        let ids = |specs: &Specs| {
            (
                specs.manifest.value.name.clone(),
                specs.variants.keys().cloned().collect::<Vec<_>>(),
                specs.components.keys().cloned().collect::<Vec<_>>(),
            )
        };
        assert_eq!(ids(&last), ids(&first));
        assert_eq!(ids(&last).1, ["generic"]);
        assert_eq!(last.contexts.keys().collect::<Vec<_>>(), ["basic"]);
        assert_eq!(first.contexts.keys().collect::<Vec<_>>(), ["basic"]);
        // Its files conform, so the workspace is not read a second time.
        let root = dir.path().canonicalize().unwrap();
        let loaded = crate::loader::load_checked_last(&root).expect("every file conforms");
        assert_eq!(
            loaded.workspace.variants.keys().collect::<Vec<_>>(),
            ["generic"]
        );
    }

    // The clean load registers templates without compiling them, and compiles them on two
    // threads with its schema checks: a template that does not compile, in a file or inline,
    // makes it give up, and the careful load report the template at its place, as before.
    #[test]
    fn a_template_that_does_not_compile_sends_the_load_the_careful_way() {
        for (path, text, at) in [
            (
                "components/intro.md",
                "Hello {% if x %}.\n",
                "components/intro.md",
            ),
            (
                "components/intro.toml",
                "id = \"intro\"\ntemplate = \"Hi {{ name \"\n",
                "components/intro.toml",
            ),
        ] {
            let dir = workspace(MANIFEST, VARIANT, CONTEXT);
            if path.ends_with(".toml") {
                std::fs::remove_file(dir.path().join("components/intro.md")).unwrap();
            }
            std::fs::write(dir.path().join(path), text).unwrap();
            let root = dir.path().canonicalize().unwrap();
            assert!(crate::loader::load_checked_last(&root).is_none(), "{path}");
            let loaded = crate::loader::load_workspace(&root).unwrap();
            let syntax: Vec<_> = loaded
                .diagnostics
                .iter()
                .filter(|d| matches!(d.problem, Problem::TemplateSyntax { .. }))
                .map(|d| loaded.workspace.sources.get(d.span.source).path.clone())
                .collect();
            assert_eq!(syntax, [std::path::PathBuf::from(at)], "{path}");
        }
        // A clean workspace's templates all compile, each once, and render.
        let dir = workspace(MANIFEST, VARIANT, CONTEXT);
        std::fs::write(
            dir.path().join("variants/generic.md"),
            "{% if INTRO_SECTION %}{{ INTRO_SECTION }}{% endif %}\n",
        )
        .unwrap();
        let root = dir.path().canonicalize().unwrap();
        let loaded = crate::loader::load_checked_last(&root).expect("every template compiles");
        let problems: Vec<String> = loaded
            .diagnostics
            .iter()
            .map(|d| d.problem.to_string())
            .collect();
        assert!(loaded.diagnostics.is_empty(), "{problems:?}");
        let compiler = crate::compile::Compiler::new(&loaded.workspace);
        let request = crate::compile::Request::new(
            crate::compile::Selection::family("generic"),
            Context::default(),
        );
        assert_eq!(compiler.compile(&request).unwrap().prompt.trim(), "Hello.");
    }

    // Each of these deserializes into its type, so only the schema finds what is wrong: the
    // load with checks last, which registers the templates before the schemas are checked,
    // must give up, and the careful load report it.
    #[test]
    fn a_load_with_checks_last_gives_up_on_what_only_the_schema_refuses() {
        let (variant, context) = (VARIANT.to_string(), CONTEXT.to_string());
        let cases = [
            // An id outside the id pattern.
            (
                MANIFEST.to_string(),
                VARIANT.replace("\"generic\"\nt", "\"has space\"\nt"),
                context.clone(),
            ),
            // A limit above the schema's maximum.
            (
                format!("{MANIFEST}[limits]\nfile_bytes = 999999999999\n"),
                variant.clone(),
                context.clone(),
            ),
            // An integer written as a float, where it does not deserialize.
            (
                format!("{MANIFEST}fuel = 1000.0\n"),
                variant.clone(),
                context.clone(),
            ),
            // An integer written as a float in a context.
            (
                MANIFEST.to_string(),
                variant.clone(),
                format!("{CONTEXT}[browser.viewport]\nwidth = 800.0\n"),
            ),
            // A date that does not exist, in a context, whose file is checked apart from
            // the typed context `extends` merges it into.
            (
                MANIFEST.to_string(),
                variant.clone(),
                format!("{CONTEXT}date = \"2025-02-30\"\n"),
            ),
        ];
        for (manifest, variant, context) in cases {
            let dir = workspace(&manifest, &variant, &context);
            let root = dir.path().canonicalize().unwrap();
            let last = crate::loader::load_checked_last(&root);
            assert!(last.is_none(), "{manifest}\n{variant}\n{context}");
            let (_, _, diagnostics) = both_loads(&dir);
            assert!(diagnostics.has_errors(), "{manifest}\n{variant}\n{context}");
        }
        // An id outside the id pattern in a tool and in a component: the clean load checks
        // each kind (on one of its two threads) before it vouches for the workspace.
        for (path, text) in [
            (
                "tools/extra.toml",
                "id = \"has space\"\ndescription = \"A tool.\"\n",
            ),
            (
                "components/extra.toml",
                "id = \"has space\"\ntemplate_file = \"intro.md\"\n",
            ),
        ] {
            let dir = workspace(MANIFEST, VARIANT, CONTEXT);
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
            let root = dir.path().canonicalize().unwrap();
            assert!(crate::loader::load_checked_last(&root).is_none(), "{path}");
            let (_, _, diagnostics) = both_loads(&dir);
            assert!(diagnostics.has_errors(), "{path}");
        }
        // The float in the context is what the careful load reports there.
        let dir = workspace(
            MANIFEST,
            VARIANT,
            &format!("{CONTEXT}[browser.viewport]\nwidth = 800.0\n"),
        );
        let (_, _, diagnostics) = both_loads(&dir);
        let problems: Vec<String> = diagnostics.iter().map(|d| d.problem.to_string()).collect();
        assert_eq!(
            problems,
            ["wrong type: expected an integer, found a number written as a float"]
        );
    }

    #[test]
    fn limits_brought_within_the_schema_are_its_maxima() {
        let most = Limits {
            render_bytes: u64::MAX,
            compile_bytes: u64::MAX,
            file_bytes: u64::MAX,
            template_bytes: u64::MAX,
            workspace_bytes: u64::MAX,
            outputs: usize::MAX,
        }
        .within_schema();
        let fields = [
            ("render_bytes", most.render_bytes),
            ("compile_bytes", most.compile_bytes),
            ("file_bytes", most.file_bytes),
            ("template_bytes", most.template_bytes),
            ("workspace_bytes", most.workspace_bytes),
            ("outputs", most.outputs as u64),
        ];
        let accepted = |over: Option<&str>| {
            let limits: String = fields
                .iter()
                .map(|(name, value)| {
                    let value = value + u64::from(over == Some(*name));
                    format!("{name} = {value}\n")
                })
                .collect();
            let manifest = format!("{MANIFEST}[limits]\n{limits}");
            check_document(
                Kind::Manifest,
                Path::new("promptc.toml"),
                manifest.into_bytes(),
            )
            .2
        };
        assert!(accepted(None));
        for (name, _) in fields {
            assert!(!accepted(Some(name)), "{name} one above its maximum");
        }
        let least = Limits {
            render_bytes: 0,
            compile_bytes: 0,
            file_bytes: 0,
            template_bytes: 0,
            workspace_bytes: 0,
            outputs: 0,
        }
        .within_schema();
        assert_eq!(least.file_bytes, 1);
    }
}
