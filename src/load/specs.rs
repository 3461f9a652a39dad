//! Reading a workspace's data files into specs: each file parsed, schema-checked and
//! deserialized, ids checked for duplicates. What a broken file would have declared is
//! recorded, so that it is reported once, where it is broken.

use std::io;
use std::path::Path;

use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::confine::Origin;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::{Document, Format};
use crate::load::entry::Entry;
use crate::load::invalid_ids::InvalidIds;
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
    /// Named contexts, by file stem.
    pub contexts: IndexMap<String, Entry<Context>>,
}

/// Reads every data file of the workspace at `root` (canonical) into `sources`. Problems are
/// diagnostics; only I/O failures are errors.
pub fn load_specs(
    root: &Path,
    sources: &mut Sources,
    diagnostics: &mut Diagnostics,
    invalid: &mut InvalidIds,
) -> io::Result<Specs> {
    let mut loader = Loader {
        root,
        origin: Origin::Workspace,
        limits: Limits::default(),
        sources,
        diagnostics,
        validators: SchemaValidators::shared(),
        invalid,
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
    loader.limits = manifest.value.limits.clone();
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
    let paths = &manifest.value.paths;
    let variants = loader.load_all(
        &paths.variants,
        Kind::Variant,
        RefKind::Variant,
        |v: &Variant| v.id.clone(),
    )?;
    let components = loader.load_all(
        &paths.components,
        Kind::Component,
        RefKind::Component,
        |c: &Component| c.id.clone(),
    )?;
    let tools = loader.load_all(&paths.tools, Kind::Tool, RefKind::Tool, |t: &ToolSpec| {
        t.id.clone()
    })?;
    let contexts = loader.load_contexts(&paths.contexts)?;
    Ok(Specs {
        manifest,
        variants,
        components,
        tools,
        contexts,
    })
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
    };
    let Some(document) = loader.checked_document(path, Kind::Context)? else {
        return Ok(None);
    };
    Ok(load::contexts::resolve_one(&document, bases, diagnostics))
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
    let id = sources.add(std::path::PathBuf::from(name), text);
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
    let entry = Entry {
        value: document.value.clone(),
        document,
        path: std::path::PathBuf::from(name),
    };
    load::contexts::resolve_one(&entry, bases, diagnostics)
}

/// JSON starts with `{`; TOML has a `key =` or `[table]` line before any YAML `key:` line;
/// anything else is YAML (of which JSON is a part).
fn detect_format(text: &str) -> Format {
    if text.trim_start().starts_with('{') {
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

struct Loader<'a> {
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
}

impl Loader<'_> {
    /// Reads, parses, schema-checks and deserializes one file. `None` when it has problems
    /// (they are recorded).
    fn load_typed<T: DeserializeOwned>(
        &mut self,
        path: &Path,
        kind: Kind,
    ) -> io::Result<Option<Entry<T>>> {
        Ok(self.load_raw(path, kind)?.and_then(|raw| self.typed(raw)))
    }

    fn load_raw(&mut self, path: &Path, kind: Kind) -> io::Result<Option<load::RawFile>> {
        load::load_file(
            self.sources,
            self.diagnostics,
            self.root,
            path,
            kind,
            self.origin,
            &self.limits,
        )
    }

    /// The data files under `dir`; links that promptc will not follow are reported.
    fn data_files(&mut self, dir: &Path, kind: Kind) -> io::Result<Vec<std::path::PathBuf>> {
        let found = load::data_files(self.root, dir, kind)?;
        for error in found.refused {
            let display = error.path.clone();
            if let Err(diagnostic) = load::read::refused(self.sources, display, error)? {
                self.diagnostics.push(diagnostic);
            }
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

    fn typed<T: DeserializeOwned>(&mut self, raw: load::RawFile) -> Option<Entry<T>> {
        typed(self.validators, self.diagnostics, raw)
    }

    fn load_all<T: DeserializeOwned>(
        &mut self,
        dir: &str,
        kind: Kind,
        ref_kind: RefKind,
        id_of: impl Fn(&T) -> String,
    ) -> io::Result<IndexMap<String, Entry<T>>> {
        let mut entries: IndexMap<String, Entry<T>> = IndexMap::new();
        // A folder outside the workspace is reported by validation and never walked.
        let Some(dir) = load::read::resolve_inside(self.root, self.root, dir) else {
            return Ok(IndexMap::new());
        };
        for path in self.data_files(&dir, kind)? {
            let Some(raw) = self.load_raw(&path, kind)? else {
                // A file that cannot be read or parsed still declares the id of its name.
                self.declare_invalid(ref_kind, &path, None);
                continue;
            };
            let document = raw.document.value.clone();
            let Some(entry) = self.typed::<T>(raw) else {
                self.declare_invalid(ref_kind, &path, Some(&document));
                continue;
            };
            let id = id_of(&entry.value);
            self.insert_unique(&mut entries, id, entry, ref_kind, "/id");
        }
        Ok(entries)
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
        let ids: Vec<String> = field("id").into_iter().chain([stem]).collect();
        for id in ids {
            if kind == RefKind::Variant {
                let family = field("family").unwrap_or_else(|| id.clone());
                self.invalid.insert(RefKind::Family, family, None);
                self.invalid.insert(RefKind::Family, id.clone(), None);
                self.invalid.placeholders_unknown = true;
            }
            self.invalid.insert(kind, id, field("slot"));
        }
    }

    fn load_contexts(&mut self, dir: &str) -> io::Result<IndexMap<String, Entry<Context>>> {
        let mut documents = IndexMap::new();
        // A folder outside the workspace is reported by validation and never walked.
        let Some(dir) = load::read::resolve_inside(self.root, self.root, dir) else {
            return Ok(IndexMap::new());
        };
        for path in self.data_files(&dir, Kind::Context)? {
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
            &documents,
            &|name| invalid.contains(RefKind::Context, name),
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
        if !self
            .validators
            .check(raw.kind, &raw.document, self.diagnostics)
        {
            return Ok(None);
        }
        Ok(Some(Entry {
            value: raw.document.value.clone(),
            document: raw.document,
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

/// Schema-checks and deserializes one parsed file. `None` when it has problems (they are
/// recorded).
fn typed<T: DeserializeOwned>(
    validators: &SchemaValidators,
    diagnostics: &mut Diagnostics,
    raw: load::RawFile,
) -> Option<Entry<T>> {
    if !validators.check(raw.kind, &raw.document, diagnostics) {
        return None;
    }
    match serde_json::from_value::<T>(raw.document.value.clone()) {
        Ok(value) => Some(Entry {
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
            None
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
    let format = load::document::Format::of(path);
    // As when loading: JSON is for contexts only, other extensions are not data files.
    let Some(format) = format.filter(|f| *f != Format::Json || kind == Kind::Context) else {
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
        Kind::Manifest => typed::<Manifest>(validators, &mut diagnostics, raw).is_some(),
        Kind::Variant => typed::<Variant>(validators, &mut diagnostics, raw).is_some(),
        Kind::Component => typed::<Component>(validators, &mut diagnostics, raw).is_some(),
        Kind::Tool => typed::<ToolSpec>(validators, &mut diagnostics, raw).is_some(),
        Kind::Context => typed::<Context>(validators, &mut diagnostics, raw).is_some(),
    };
    (sources, diagnostics, accepted)
}

/// Whether a name is an id-like plain name: an ASCII letter or digit, then those, `_`, `.`
/// and `-` (the `ID_PATTERN` of ids).
fn is_plain_name(name: &str) -> bool {
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
