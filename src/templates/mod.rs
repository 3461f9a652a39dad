//! Every template of a workspace, compiled once into one minijinja environment, with where each
//! came from so a syntax or render error points into the right file. Also the environment
//! itself (filters, limits) and the built-in templates: what every stage that parses or runs
//! a template uses, below all of them.

pub mod arguments;
pub mod environment;
pub mod jinja_globals;
pub mod limits;
pub mod meant;
pub mod model_id;
pub mod numbers;
pub mod placement;
pub mod python_methods;
pub mod references;
pub mod text_filters;
pub mod written;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use minijinja::Environment;

use crate::diagnostic::Diagnostic;
use crate::model::Limits;
use crate::problem::Problem;
use crate::source::{SourceId, Sources};
use crate::span::Span;
use environment::new_environment;
use references::Reference;

/// Why an `{% import … as %}` tag whose alias is not a name is refused.
pub const IMPORT_NEEDS_A_NAME: &str =
    "`import … as` binds what the template exports to a name: write a name after `as`";

/// Where a template's text lies.
#[derive(Clone, Debug)]
struct Origin {
    source: SourceId,
    /// Byte offset of the template's first byte in the source, when the template's bytes
    /// appear there unchanged (template files, TOML literal strings); otherwise errors are
    /// placed through `escaped`, or at `fallback`.
    exact_start: Option<usize>,
    /// For an inline template written with escapes (no `exact_start`): where each byte of its
    /// text lies in the file, from the value's start (see `load::document::raw_offsets`).
    escaped: Option<Arc<[std::ops::Range<usize>]>>,
    fallback: Span,
    /// Facts about the text, computed on first use and kept: a large template is scanned once
    /// however many names and matrix entries ask about it.
    facts: OnceLock<Facts>,
}

#[derive(Clone, Debug, Default)]
struct Facts {
    /// Top-level names the template reads and does not set, sorted.
    variables: Vec<String>,
    /// Those of `variables` a render may read before anything sets them, sorted: not a name
    /// only a macro reads that the template sets later, where the macro's closure finds it.
    unset: Vec<String>,
    /// Where each of `unset` is first read unset (a byte offset in the template's source),
    /// sorted by name: `{% for x in l %}{{ x }}{% endfor %}{{ x }}` reads `x` unset at the
    /// second `{{ x }}`, not where the loop sets it.
    unset_at: Vec<(String, u32)>,
    /// Those of `variables` read only where the template asks whether they are defined
    /// (`x is defined`, `x | default(…)`), sorted.
    guarded: Vec<String>,
    /// The names the template sets in its top frame, sorted: an include renders in the frame
    /// of the template that includes it, which then sees them.
    sets: Vec<String>,
    /// The tags naming other templates (include, import, extends), in order.
    references: Vec<Reference>,
    /// The names its `{% from … import … %}` tags look up (see
    /// [`references::names_imported_from`]).
    imported: Vec<String>,
}

impl Origin {
    /// A byte range of the template's text, as a span of the file it lies in.
    fn span_of(&self, range: std::ops::Range<usize>) -> Span {
        match self.exact_start {
            // minijinja may point one past the end ("unexpected end of input"): keep the
            // span inside the template's text.
            Some(start) => {
                let end = self.fallback.end.max(start);
                let clamp = |at: usize| (start + at).min(end);
                Span::new(self.source, clamp(range.start)..clamp(range.end))
            }
            None => match &self.escaped {
                // minijinja may point one past the end: kept inside the text.
                Some(offsets) => {
                    let len = offsets.len();
                    let range = range.start.min(len)..range.end.min(len);
                    crate::span::raw_range(offsets, range).map_or(self.fallback, |raw| {
                        let start = self.fallback.start;
                        Span::new(self.source, start + raw.start..start + raw.end)
                    })
                }
                None => self.fallback,
            },
        }
    }
}

/// A compiled template: what registration hands out and what the rest of the workspace
/// carries (a variant's base template, a component's template for a family, a tool's
/// description, …), so finding a template again never rebuilds a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TemplateId(u32);

impl TemplateId {
    /// Its place in registration order, from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[cfg(test)]
impl TemplateId {
    /// An id that names no registered template, for tests of what holds ids.
    pub fn for_tests(index: u32) -> Self {
        Self(index)
    }
}

/// The name under which the built-in tool format is registered.
const BUILTIN_TOOL_FORMAT: &str = "<built-in>/tool-format.md";
const BUILTIN_TOOL_FORMAT_TEXT: &str = include_str!("tool_format.md");

pub struct Templates {
    env: Environment<'static>,
    /// The tool format of variants that set none.
    builtin_tool_format: TemplateId,
    /// Template names (file paths, or `file#pointer` for inline ones), by id.
    names: Vec<String>,
    /// By id, the text of a template with no tag, expression or comment: what rendering it
    /// gives, without running it.
    plain: Vec<Option<Arc<str>>>,
    /// The same texts by name, for the environment's loader: a plain template is compiled only
    /// if something asks the environment for it (an include, a render that cannot use the
    /// text as it is), not for every description and instruction of every load. The texts of
    /// templates whose compile was deferred are here too (see `defer_compiles`).
    plain_by_name: Arc<RwLock<HashMap<String, String>>>,
    by_name: HashMap<String, TemplateId>,
    origins: HashMap<String, Origin>,
    /// By id, what `used_by` found, kept: each compile asks for the inputs it read.
    used: Vec<OnceLock<Vec<TemplateId>>>,
    /// While set, a template with tags is registered for the environment's loader rather
    /// than compiled (see [`Templates::defer_compiles`]).
    defer: bool,
    /// The templates registered so, to be compiled by [`Templates::compile_deferred`].
    deferred: Vec<TemplateId>,
    /// Whether a template did not compile (and has no id): what it names is not known.
    some_did_not_compile: bool,
    /// The names of the templates that did not compile (reported): a tag naming one names a
    /// template that exists.
    not_compiled: std::collections::HashSet<String>,
    /// The bytes of code of the templates registered (see [`MAX_CODE_BYTES`]), and the
    /// template that went past the bound.
    code_bytes: u64,
    code_past_bound_at: Option<Span>,
}

/// The most code a workspace's templates and conditions may hold together: the text inside
/// `{{ … }}` and `{% … %}` tags, and conditions. Parsed code takes tens of times its size in
/// memory (a list literal of 8 MB took about 360 MB), and a workspace's templates and
/// conditions are all kept parsed: within the workspace's byte limit, a few dozen such
/// files would have taken the process past its memory limit. The shipped library holds
/// about 6 KB of code; this leaves a real one hundreds of times that.
pub const MAX_CODE_BYTES: u64 = 4 << 20;

/// The bytes of `text` inside `{{ … }}` and `{% … %}` tags (a tag left open runs to the end).
fn code_bytes(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut total = 0u64;
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'{', &bytes[at..]) {
        let open = at + found;
        let close: &[u8] = match bytes.get(open + 1) {
            Some(b'{') => b"}}",
            Some(b'%') => b"%}",
            _ => {
                at = open + 1;
                continue;
            }
        };
        let body = open + 2;
        let end = memchr::memmem::find(&bytes[body..], close)
            .map_or(bytes.len(), |found| body + found + close.len());
        total = total.saturating_add((end - open) as u64);
        at = end;
    }
    total
}

impl Templates {
    /// An environment with the built-in templates registered (their text joins `sources`).
    pub fn new(fuel: Option<u64>, limits: &Limits, sources: &mut Sources) -> Self {
        let mut env = new_environment(fuel, limits.render_bytes);
        let plain_by_name: Arc<RwLock<HashMap<String, String>>> = Arc::default();
        let loadable = Arc::clone(&plain_by_name);
        env.set_loader(move |name| {
            Ok(loadable
                .read()
                .ok()
                .and_then(|texts| texts.get(name).cloned()))
        });
        let mut templates = Self {
            env,
            builtin_tool_format: TemplateId(0),
            names: Vec::new(),
            plain: Vec::new(),
            plain_by_name,
            by_name: HashMap::new(),
            origins: HashMap::new(),
            used: Vec::new(),
            defer: false,
            deferred: Vec::new(),
            some_did_not_compile: false,
            not_compiled: std::collections::HashSet::new(),
            code_bytes: 0,
            code_past_bound_at: None,
        };
        let builtin = sources.add(BUILTIN_TOOL_FORMAT.into(), BUILTIN_TOOL_FORMAT_TEXT.into());
        #[allow(clippy::expect_used)]
        let id = templates
            .add_file(sources, builtin)
            .expect("the built-in tool format compiles (a unit test checks it)");
        templates.builtin_tool_format = id;
        templates
    }

    /// Sets how the templates added from here on treat the white space around their block
    /// tags. The built-in tool format, added already, keeps the default: its text is written
    /// for it.
    pub fn set_whitespace(&mut self, settings: &crate::model::TemplateSettings) {
        if let Some(syntax) = environment::syntax(settings) {
            self.env.set_syntax(syntax);
        }
    }

    /// The tool format of variants that set none.
    pub fn builtin_tool_format(&self) -> TemplateId {
        self.builtin_tool_format
    }

    /// Whether a source holds a built-in template rather than a workspace file.
    pub fn is_builtin(path: &std::path::Path) -> bool {
        path.starts_with("<built-in>")
    }

    pub fn env(&self) -> &Environment<'static> {
        &self.env
    }

    /// Compiles a template given inline in a data file at `span` (the string's value span).
    /// `pointer` names the field in the template's name (`file#pointer`).
    pub fn add_inline(
        &mut self,
        sources: &Sources,
        span: Span,
        pointer: &str,
        text: &str,
    ) -> Result<TemplateId, Diagnostic> {
        let file = sources.get(span.source);
        let name = format!("{}#{}", file.path.display(), pointer);
        // Find the template's bytes inside the quoted value, if they are there verbatim.
        let quoted = file.text.get(span.range());
        let exact_start = quoted
            .and_then(|quoted| quoted.find(text).filter(|_| !text.is_empty()))
            .map(|offset| span.start + offset);
        // Written with escapes: each byte found through them.
        let escaped = match exact_start {
            Some(_) => None,
            None => quoted
                .and_then(|_| crate::span::value_offsets(&file.text, span.range(), text))
                .map(Arc::from),
        };
        let origin = Origin {
            source: span.source,
            exact_start,
            escaped,
            fallback: span,
            facts: OnceLock::new(),
        };
        self.add(name, text.to_string(), origin)
    }

    /// Compiles a template file (already read into `sources` as `file`). A file referenced
    /// from several places is compiled once and has one id.
    pub fn add_file(
        &mut self,
        sources: &Sources,
        file: SourceId,
    ) -> Result<TemplateId, Diagnostic> {
        let source = sources.get(file);
        let name = source.path.display().to_string();
        if let Some(id) = self.by_name.get(&name) {
            return Ok(*id);
        }
        let origin = Origin {
            source: file,
            exact_start: Some(0),
            escaped: None,
            fallback: Span::new(file, 0..source.text.len()),
            facts: OnceLock::new(),
        };
        self.add(name, source.text.clone(), origin)
    }

    /// Compiles one template; only a template that compiles gets an id.
    fn add(
        &mut self,
        name: String,
        text: String,
        origin: Origin,
    ) -> Result<TemplateId, Diagnostic> {
        let fallback = origin.fallback;
        // The environment keeps no other syntax (no line statements), and keeps a trailing
        // newline: such a text renders to itself.
        let plain = is_plain(&text).then(|| Arc::from(text.as_str()));
        if plain.is_none() {
            let before = self.code_bytes;
            self.code_bytes = before.saturating_add(code_bytes(&text));
            if self.code_bytes > MAX_CODE_BYTES {
                self.some_did_not_compile = true;
                self.not_compiled.insert(name);
                // Told at the template that went past the bound; a later one, not compiled
                // either, gives the same diagnostic, which the report gives once.
                if before <= MAX_CODE_BYTES {
                    self.code_past_bound_at = Some(fallback);
                }
                return Err(Diagnostic::new(
                    Problem::TooMuchCode {
                        limit: MAX_CODE_BYTES,
                    },
                    self.code_past_bound_at.unwrap_or(fallback),
                ));
            }
        }
        // A NUL in a prompt is refused by the providers' APIs, and makes git take an output
        // for a binary file, whose changes a review no longer shows. A file saved as UTF-16
        // reads as UTF-8 with a NUL beside each letter.
        if let Some(at) = memchr::memchr(0, text.as_bytes()) {
            self.some_did_not_compile = true;
            self.not_compiled.insert(name);
            return Err(Diagnostic::new(
                Problem::TemplateSyntax {
                    message: NUL_IN_TEMPLATE.into(),
                    meant: None,
                    known: None,
                    left_open: None,
                },
                origin.span_of(at..at + 1),
            ));
        }
        if plain.is_none()
            && let Some(alias) = references::bad_import_aliases(&text).into_iter().next()
        {
            let span = origin.span_of(alias);
            self.some_did_not_compile = true;
            self.not_compiled.insert(name);
            return Err(Diagnostic::new(
                Problem::TemplateSyntax {
                    message: IMPORT_NEEDS_A_NAME.into(),
                    meant: None,
                    known: None,
                    left_open: None,
                },
                span,
            ));
        }
        self.origins.insert(name.clone(), origin);
        let id = TemplateId(u32::try_from(self.names.len()).unwrap_or(u32::MAX));
        // A plain text, or one whose compile waits (see `defer_compiles`), is given to the
        // environment's loader, which compiles it when first asked for it.
        let added = if plain.is_some() || self.defer {
            match self.plain_by_name.write() {
                Ok(mut texts) => {
                    texts.insert(name.clone(), text);
                    if plain.is_none() {
                        self.deferred.push(id);
                    }
                    Ok(())
                }
                Err(_) => self.env.add_template_owned(name.clone(), text),
            }
        } else {
            self.env.add_template_owned(name.clone(), text)
        };
        match added {
            Ok(()) => {
                self.by_name.insert(name.clone(), id);
                self.names.push(name);
                self.plain.push(plain);
                self.used.push(OnceLock::new());
                Ok(id)
            }
            Err(error) => {
                self.some_did_not_compile = true;
                self.not_compiled.insert(name);
                let meant = meant::meant(&self.env, &error).or_else(|| {
                    let source = error.template_source()?;
                    match meant::foreign_operator(source, &error) {
                        Some((word, _)) => Some(word.to_string()),
                        None => end_of_open_block(source, &error),
                    }
                });
                // An end tag met inside `{% set x %}`, which opens a block: `= value` on the
                // tag is likelier meant than `{% endset %}` in place of the end tag.
                let (meant, left_open) = match meant {
                    Some(end) if end == "endset" => (None, Some("set".to_string())),
                    meant => (
                        meant,
                        error.template_source().and_then(|source| {
                            block_left_open(source, &error).or_else(|| {
                                tag_left_unclosed(source, &error)
                                    .map(|(_, opener)| opener.to_string())
                            })
                        }),
                    ),
                };
                Err(Diagnostic::new(
                    Problem::TemplateSyntax {
                        left_open,
                        message: error.detail().unwrap_or("invalid syntax").to_string(),
                        meant,
                        known: meant::known(&self.env, &error),
                    },
                    self.error_span(&error)
                        .unwrap_or(Span::file_start(fallback.source)),
                ))
            }
        }
    }

    /// Whether a template of this name was given, and did not compile (which is reported
    /// where it is): a tag that names it is not naming a template that does not exist.
    pub fn did_not_compile(&self, name: &str) -> bool {
        self.not_compiled.contains(name)
    }

    /// The bytes of code of the templates registered so far (see [`MAX_CODE_BYTES`]).
    pub fn code_bytes(&self) -> u64 {
        self.code_bytes
    }

    /// Whether a template registered did not compile: it has no id, and what its tags name
    /// (a partial, a template it extends) is not known.
    pub fn some_did_not_compile(&self) -> bool {
        self.some_did_not_compile
    }

    /// From now on until told otherwise, registers templates without compiling them: a
    /// template with a syntax error is then given an id like any other, and is found by
    /// [`Templates::compile_deferred`]. The fast load registers a workspace's templates so
    /// and compiles them on two threads with its other checks; a template that does not
    /// compile sends the load the careful way, which compiles each as it registers it and
    /// reports what it finds.
    pub(crate) fn defer_compiles(&mut self, defer: bool) {
        self.defer = defer;
    }

    /// Compiles templates whose compile was deferred, taking each from `next` (shared with
    /// other threads doing the same); `false` once one fails to compile, here or on another
    /// thread (`failed`).
    pub(crate) fn compile_deferred(&self, next: &AtomicUsize, failed: &AtomicBool) -> bool {
        while let Some(&id) = self.deferred.get(next.fetch_add(1, Ordering::Relaxed)) {
            if failed.load(Ordering::Relaxed) {
                return false;
            }
            if self.env.get_template(self.name(id)).is_err() {
                failed.store(true, Ordering::Relaxed);
                return false;
            }
        }
        !failed.load(Ordering::Relaxed)
    }

    /// The text a template renders to whatever the values, when it holds no template syntax
    /// at all.
    pub fn plain(&self, id: TemplateId) -> Option<&Arc<str>> {
        self.plain.get(id.0 as usize)?.as_ref()
    }

    /// The template's name: its file (workspace-relative), or `file#pointer` when inline.
    pub fn name(&self, id: TemplateId) -> &str {
        self.names.get(id.0 as usize).map_or("", String::as_str)
    }

    /// Every compiled template, in registration order.
    pub fn ids(&self) -> impl Iterator<Item = TemplateId> + use<> {
        (0..u32::try_from(self.names.len()).unwrap_or(u32::MAX)).map(TemplateId)
    }

    /// The error that made `error`: an include that failed says only which template it
    /// included ("error in \"partials/a.md\""), and the error of that template, at its own
    /// line, is the one to show. The deepest error of a template this registry holds.
    pub fn cause<'e>(&self, error: &'e minijinja::Error) -> &'e minijinja::Error {
        let mut cause = error;
        let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
        while let Some(inner) = next {
            let Some(inner) = inner.downcast_ref::<minijinja::Error>() else {
                break;
            };
            if inner
                .name()
                .is_some_and(|name| self.origins.contains_key(name))
            {
                cause = inner;
            }
            next = std::error::Error::source(inner);
        }
        cause
    }

    /// Maps a minijinja error to the place in the user's file it is about.
    pub fn error_span(&self, error: &minijinja::Error) -> Option<Span> {
        let name = error.name()?;
        if let Some(range) = error.range() {
            let range = error
                .template_source()
                .and_then(|source| {
                    unclosed_block(source, error, &range)
                        .or_else(|| unclosed_opener(source, error))
                        .or_else(|| tag_left_unclosed(source, error).map(|(range, _)| range))
                        .or_else(|| undefined_operand(source, error, &range))
                })
                .unwrap_or(range);
            return self.span_in(name, range);
        }
        let line = error.line()?;
        // The start of that line: 0 for the first, else one past the newline before it.
        let offset = self
            .with_source(name, |source| match line.checked_sub(2) {
                None => Some(0),
                Some(newlines) => memchr::memchr_iter(b'\n', source.as_bytes())
                    .nth(newlines)
                    .map(|at| at + 1),
            })
            .flatten()?;
        self.span_in(name, offset..offset)
    }

    /// A byte range of a template's text, as a span of the file it lies in.
    pub fn span_in(&self, name: &str, range: std::ops::Range<usize>) -> Option<Span> {
        Some(self.origins.get(name)?.span_of(range))
    }

    /// Where a variable is first used in a template, for "undefined" diagnostics.
    pub fn find_name(&self, template: TemplateId, variable: &str) -> Option<Span> {
        let name = self.name(template);
        // Where an expression reads it, before the same word in the template's prose.
        let offset = self
            .with_source(name, |source| {
                first_word_in_tags(source, variable).or_else(|| first_word(source, variable))
            })
            .flatten()
            .unwrap_or(0);
        self.span_in(name, offset..offset + variable.len())
    }

    /// Where a template writes `variable` whole into its text whenever it renders,
    /// `{{ NAME }}` (or `{{ NAME | filter }}`), outside comments, raw blocks and every block
    /// tag (a branch of an `{% if %}`, a loop, a `{% block %}` a child may replace, a
    /// capture), in a template that extends none: a section's slot written so puts the
    /// section in the prompt there.
    pub fn writes_name(&self, template: TemplateId, variable: &str) -> Option<Span> {
        let name = self.name(template);
        let offset = self
            .with_source(name, |source| {
                let mut quiet = None;
                let mut blocks = None;
                whole_words(source, variable).find(|&at| {
                    let Some(open) = tag_around(source, at) else {
                        return false;
                    };
                    let before = source[open + 2..at].trim_start_matches('-').trim();
                    let after = source[at + variable.len()..].trim_start();
                    source[open..].starts_with("{{")
                        && before.is_empty()
                        && (after.starts_with("}}")
                            || after.starts_with("-}}")
                            || after.starts_with('|'))
                        && {
                            let quiet =
                                quiet.get_or_insert_with(|| references::quiet_ranges(source));
                            !references::is_quiet(quiet, at)
                        }
                        && {
                            let (ranges, extends) =
                                blocks.get_or_insert_with(|| references::block_ranges(source));
                            !*extends && !references::is_quiet(ranges, at)
                        }
                })
            })
            .flatten()?;
        self.span_in(name, offset..offset + variable.len())
    }

    /// Where a template first reads the dotted `path` (`model.name`) in a tag: the whole
    /// path, from its first name to its last (`model . name`, `model["name"]` too). `None`
    /// when no tag reads it so; the last name alone, at its first use, was placed at another
    /// read of the same word (`s.name`).
    pub fn find_path(&self, template: TemplateId, path: &str) -> Option<Span> {
        let name = self.name(template);
        let mut parts = path.split('.');
        let head = parts.next()?;
        let rest: Vec<&str> = parts.collect();
        let range = self
            .with_source(name, |source| {
                whole_words(source, head)
                    .filter(|&at| tag_around(source, at).is_some())
                    .find_map(|at| {
                        let end = path_end(source, at + head.len(), &rest)?;
                        Some(at..end)
                    })
            })
            .flatten()?;
        self.span_in(name, range)
    }

    /// Where each of `variables` is first used in a template, as [`Self::find_name`] finds
    /// one, the template's text read once: looking for each name from the start took time in
    /// proportion to the names times the text (300,000 undefined names in a 4 MB template,
    /// minutes). A name found nowhere is at the template's start.
    pub fn find_names<'v>(
        &self,
        template: TemplateId,
        variables: &[&'v str],
    ) -> std::collections::HashMap<&'v str, Span> {
        let name = self.name(template);
        let offsets = self
            .with_source(name, |source| first_uses(source, variables))
            .unwrap_or_default();
        offsets
            .into_iter()
            .filter_map(|(variable, offset)| {
                Some((
                    variable,
                    self.span_in(name, offset..offset + variable.len())?,
                ))
            })
            .collect()
    }

    /// Where the template reads each of `variables`, unset names of its own (see
    /// [`Templates::unset_variables`]), first while it is unset; a name it has no such read of
    /// is placed as [`Templates::find_names`] places it.
    pub fn unset_places<'v>(
        &self,
        template: TemplateId,
        variables: &[&'v str],
    ) -> std::collections::HashMap<&'v str, Span> {
        let name = self.name(template);
        let read_at = |variable: &str| -> Option<Span> {
            let facts = self.facts(name)?;
            let index = facts
                .unset_at
                .binary_search_by(|(unset, _)| unset.as_str().cmp(variable))
                .ok()?;
            let at = usize::try_from(facts.unset_at[index].1).ok()?;
            self.span_in(name, at..at + variable.len())
        };
        let mut places = std::collections::HashMap::new();
        let mut rest = Vec::new();
        for &variable in variables {
            match read_at(variable) {
                Some(span) => {
                    places.insert(variable, span);
                }
                None => rest.push(variable),
            }
        }
        if !rest.is_empty() {
            places.extend(self.find_names(template, &rest));
        }
        places
    }

    /// Whether a word (a name) occurs anywhere in a template's text.
    pub fn mentions(&self, template: TemplateId, word: &str) -> bool {
        self.with_source(self.name(template), |source| {
            first_word(source, word).is_some()
        })
        .unwrap_or(false)
    }

    /// Whether a template has a `{% for %}` loop, in which what it includes can read `loop`.
    pub fn loops(&self, template: TemplateId) -> bool {
        self.with_source(self.name(template), references::has_loop)
            .unwrap_or(false)
    }

    /// Whether a template has a tag that sets a name (`for`, `set`, `with`).
    pub fn binds_names(&self, template: TemplateId) -> bool {
        self.with_source(self.name(template), references::binds_names)
            .unwrap_or(false)
    }

    /// Whether a template reads `name` only to ask about its items (`"x" in name`,
    /// `name | length`, `name is defined`): what it writes then holds none of them.
    pub fn reads_no_item(&self, template: TemplateId, name: &str) -> bool {
        self.with_source(self.name(template), |source| reads_no_item(source, name))
            .unwrap_or(false)
    }

    /// The string literals a template asks `name` whether it holds (`'web_fetch' in
    /// enabled_tools`, `"a" not in enabled_tools`), with their places in the workspace.
    pub fn literals_tested_in(&self, template: TemplateId, name: &str) -> Vec<(String, Span)> {
        let template_name = self.name(template);
        let found = self
            .with_source(template_name, |source| {
                whole_words(source, name)
                    .filter(|&at| tag_around(source, at).is_some())
                    .filter_map(|at| literal_tested_before(source, at))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        found
            .into_iter()
            .filter_map(|(literal, range)| Some((literal, self.span_in(template_name, range)?)))
            .collect()
    }

    /// Top-level names a template reads that it does not set itself, sorted.
    pub fn variables(&self, template: TemplateId) -> &[String] {
        self.facts(self.name(template))
            .map_or(&[], |facts| facts.variables.as_slice())
    }

    /// The templates whose sets are credited to a template that includes them, or whose
    /// includers' names are credited to it (`validate::template_names`), counted from it:
    /// real chains are a few deep, and a chain of thousands, each template following all of
    /// the others, took minutes to check.
    pub const TEMPLATES_CREDITED: usize = 256;

    /// The names of [`Templates::variables`] read only where the template asks whether they
    /// are defined (`x is defined`, `x | default(…)`): it may leave them undefined on purpose.
    pub fn guarded_variables(&self, template: TemplateId) -> &[String] {
        self.facts(self.name(template))
            .map_or(&[], |facts| facts.guarded.as_slice())
    }

    /// Every name a template of the workspace reads, defined or not (one read only where it is
    /// asked whether it is defined, `{% if TEAM is defined %}`, takes a value set by name).
    pub fn variables_anywhere(&self) -> BTreeSet<String> {
        self.ids()
            .flat_map(|template| self.variables(template).iter().cloned())
            .collect()
    }

    /// Every name a template of the workspace sets in its top frame.
    pub fn names_set_anywhere(&self) -> BTreeSet<&str> {
        self.ids()
            .filter_map(|template| self.facts(self.name(template)))
            .flat_map(|facts| facts.sets.iter().map(String::as_str))
            .collect()
    }

    /// The names of [`Templates::variables`] that may be read where nothing set them, for
    /// the check of names defined nowhere: less those only a macro (or, in a template that
    /// extends another, a block) reads that the template sets later, and those the templates
    /// it includes or extends set (an include renders in its includer's frame, so a name set
    /// there is set after it; a layout runs after its child's top level, before its blocks).
    pub fn unset_variables(&self, template: TemplateId) -> Vec<&str> {
        let Some(facts) = self.facts(self.name(template)) else {
            return Vec::new();
        };
        // Most templates read no name unset: they do not follow their includes.
        if facts.unset.is_empty() {
            return Vec::new();
        }
        let set_there = self.set_in_frame_by_used(template);
        facts
            .unset
            .iter()
            .map(String::as_str)
            .filter(|name| !set_there(name))
            .collect()
    }

    /// Whether a template that `template` includes or extends (at most
    /// [`Templates::TEMPLATES_CREDITED`] of them) sets a name in its top frame: an include
    /// renders in its includer's frame, so what it sets stands for the rest of the includer
    /// (`{% include "p" %}{{ browser.team }}`, where `p` sets `browser`); a layout runs after
    /// its child's top level, before its blocks. An import runs in a frame of its own.
    pub fn set_in_frame_by_used(&self, template: TemplateId) -> impl Fn(&str) -> bool + '_ {
        let used = self.reach(
            template,
            |reference| reference.kind != references::ReferenceKind::Import,
            Self::TEMPLATES_CREDITED,
        );
        move |name: &str| {
            used.iter().any(|&id| {
                self.facts(self.name(id)).is_some_and(|facts| {
                    facts
                        .sets
                        .binary_search_by(|set| set.as_str().cmp(name))
                        .is_ok()
                })
            })
        }
    }

    /// Reads a template's names and references now, so that the checks that ask for them
    /// later find them ready (see `validate::check`).
    pub fn read_facts(&self, template: TemplateId) {
        self.facts(self.name(template));
    }

    /// The tags of a template that name other templates, in order.
    pub fn references(&self, template: TemplateId) -> &[Reference] {
        self.facts(self.name(template))
            .map_or(&[], |facts| facts.references.as_slice())
    }

    /// The template registered under `name`, as an include or extends tag names it.
    pub fn by_name(&self, name: &str) -> Option<TemplateId> {
        self.by_name.get(name).copied()
    }

    /// `template` and every template it uses (see [`Templates::used_by`]): all a render of it
    /// may read.
    pub fn with_used(&self, template: TemplateId) -> impl Iterator<Item = TemplateId> + '_ {
        std::iter::once(template).chain(self.used_by(template).iter().copied())
    }

    /// Every template `template` uses through include, import and extends tags with constant
    /// names, transitively, in the order they are first reached; itself left out. Names that
    /// resolve to nothing, and cycles, are validation's to report: here they just end a path.
    pub fn used_by(&self, template: TemplateId) -> &[TemplateId] {
        match self.used.get(template.0 as usize) {
            Some(used) => used.get_or_init(|| self.reach(template, |_| true, usize::MAX)),
            None => &[],
        }
    }

    /// The templates `template` names by constant names in the tags `follow` takes, and
    /// those they name so, once each, in the order first reached, up to `most` of them;
    /// itself left out.
    fn reach(
        &self,
        template: TemplateId,
        follow: impl Fn(&Reference) -> bool,
        most: usize,
    ) -> Vec<TemplateId> {
        let mut reached = vec![template];
        let mut seen = std::collections::HashSet::from([template]);
        let mut next = 0;
        while let Some(&current) = reached.get(next) {
            if reached.len() > most {
                break;
            }
            next += 1;
            for reference in self.references(current).iter().filter(|r| follow(r)) {
                let Some(used) = reference.name.as_deref().and_then(|n| self.by_name(n)) else {
                    continue;
                };
                if seen.insert(used) {
                    reached.push(used);
                }
            }
        }
        reached.remove(0);
        reached
    }

    /// Every top-level name a render of `template` can read, its own and those of the
    /// templates it includes, imports or extends, sorted; `None` when that cannot be known
    /// from the text: a template named by a computed expression or one that does not exist,
    /// or a call of `debug()`, which reads every name there is.
    pub fn reads(&self, template: TemplateId) -> Option<Vec<String>> {
        let mut names = Vec::new();
        for &id in std::iter::once(&template).chain(self.used_by(template)) {
            let follows = self.references(id).iter().all(|reference| {
                reference
                    .name
                    .as_deref()
                    .is_some_and(|name| self.by_name(name).is_some())
            });
            let variables = self.variables(id);
            if !follows || variables.iter().any(|v| v == "debug") {
                return None;
            }
            names.extend(variables.iter().cloned());
            if let Some(facts) = self.facts(self.name(id)) {
                names.extend(facts.imported.iter().cloned());
            }
        }
        names.sort();
        names.dedup();
        Some(names)
    }

    /// Every template registered under a name, for suggestions.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// A plain template's text, by name.
    fn plain_text(&self, name: &str) -> Option<&str> {
        let id = self.by_name.get(name)?;
        self.plain.get(id.0 as usize)?.as_deref()
    }

    /// `read` of a template's text, without compiling a plain one.
    fn with_source<T>(&self, name: &str, read: impl FnOnce(&str) -> T) -> Option<T> {
        match self.plain_text(name) {
            Some(text) => Some(read(text)),
            None => self
                .env
                .get_template(name)
                .ok()
                .map(|found| read(found.source())),
        }
    }

    /// The compiled template, to render.
    pub fn template(
        &self,
        id: TemplateId,
    ) -> Result<minijinja::Template<'_, '_>, minijinja::Error> {
        self.env.get_template(self.name(id))
    }

    fn facts(&self, name: &str) -> Option<&Facts> {
        let origin = self.origins.get(name)?;
        Some(origin.facts.get_or_init(|| {
            if self.plain_text(name).is_some() {
                // No tag, expression or comment: it reads no name and names no template.
                return Facts::default();
            }
            let Ok(template) = self.env.get_template(name) else {
                return Facts::default();
            };
            let found = template.unset_variables();
            let sorted = |names: std::collections::HashSet<String>| {
                let mut names: Vec<String> = names.into_iter().collect();
                names.sort();
                names
            };
            let mut variables: Vec<String> = found.all().cloned().collect();
            variables.sort();
            variables.dedup();
            let source = template.source();
            let mut unset_at: Vec<(String, u32)> = found.first_read.into_iter().collect();
            unset_at.sort();
            Facts {
                variables,
                unset: sorted(found.names),
                unset_at,
                guarded: sorted(found.guarded),
                sets: sorted(found.set),
                references: self.resolved(references::scan(source)),
                imported: references::names_imported_from(source),
            }
        }))
    }

    /// `references` with each list of literal names (`{% include ["a", "b"] %}`) resolved
    /// as a render resolves it: to the first name registered; to the first of them when none
    /// is, which validation then reports with the others.
    fn resolved(&self, mut references: Vec<Reference>) -> Vec<Reference> {
        for reference in &mut references {
            if reference.name.is_none() && !reference.alternatives.is_empty() {
                reference.name = reference
                    .alternatives
                    .iter()
                    .find(|name| self.by_name(name).is_some())
                    .or(reference.alternatives.first())
                    .cloned();
            }
        }
        references
    }

    /// Where a problem with the template as a whole is reported: the start of its file, or
    /// its inline value.
    pub fn span_of(&self, template: TemplateId) -> Option<Span> {
        self.origins
            .get(self.name(template))
            .map(|origin| match origin.exact_start {
                Some(0) if origin.fallback.start == 0 => Span::file_start(origin.source),
                _ => origin.fallback,
            })
    }

    /// All of the template's text: its whole file, or its inline value (for source maps).
    pub fn extent(&self, template: TemplateId) -> Option<Span> {
        self.origins
            .get(self.name(template))
            .map(|origin| origin.fallback)
    }
}

/// What a template holding a NUL character is told.
const NUL_IN_TEMPLATE: &str = "the template holds a NUL character (U+0000), which no prompt can \
    carry: a file saved as UTF-16 reads so, a NUL beside each letter; save it as UTF-8, or \
    remove the character";

/// Whether a text holds no tag, expression or comment (`{%`, `{{`, `{#`), in one pass over
/// its braces.
fn is_plain(text: &str) -> bool {
    let bytes = text.as_bytes();
    !memchr::memchr_iter(b'{', bytes)
        .any(|at| matches!(bytes.get(at + 1), Some(b'{' | b'%' | b'#')))
}

/// Where an undefined value handed on (`tool.descripton | upper`, `tool.descripton.x`) is
/// written: minijinja points at what failed with it (the filter, the next attribute), while
/// its detail names the value, which is looked for in the same tag, before the failure's end.
/// The last place there is the one: the one before it, read first, did not fail.
fn undefined_operand(
    source: &str,
    error: &minijinja::Error,
    range: &std::ops::Range<usize>,
) -> Option<std::ops::Range<usize>> {
    // "`tool.descripton` is undefined", alone or after what failed with it ("cannot
    // calculate length of value of type undefined (`tool.descripton` is undefined)").
    let detail = error.detail()?;
    let end = detail.find("` is undefined")?;
    let expression = &detail[detail[..end].rfind('`')? + 1..end];
    if source.get(range.clone())? == expression {
        return None;
    }
    let before = source.get(..range.end)?;
    let tag_start = before
        .rfind("{{")
        .into_iter()
        .chain(before.rfind("{%"))
        .max()?;
    let tag = &before[tag_start..];
    // minijinja writes a key as `['key']`, whichever quote the template used.
    let written = [expression.to_string(), expression.replace('\'', "\"")];
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    // A match inside a string literal (`replace("tool.descripton", …)`) is text, not the
    // value: one with an even count of each quote before it is outside any.
    let outside_strings = |at: usize| {
        let before = &tag[..at];
        before.matches('"').count() % 2 == 0 && before.matches('\'').count() % 2 == 0
    };
    written.iter().find_map(|written| {
        tag.match_indices(written.as_str())
            .filter(|(at, _)| {
                let before = tag[..*at].chars().next_back();
                let after = tag[at + written.len()..].chars().next();
                !before.is_some_and(|c| is_word(c) || c == '.')
                    && !after.is_some_and(is_word)
                    && outside_strings(*at)
            })
            .last()
            .map(|(at, _)| tag_start + at..tag_start + at + written.len())
    })
}

/// For a block left open (`{% if %}` without `{% endif %}`), minijinja's range runs from
/// somewhere after the opening tag to the end of the template; the tag left open is what needs
/// closing. It is found by pairing the block tags before the error.
fn unclosed_block(
    source: &str,
    error: &minijinja::Error,
    range: &std::ops::Range<usize>,
) -> Option<std::ops::Range<usize>> {
    innermost_left_open(source, error, range).map(|tag| tag.range)
}

/// The keyword of the block a template ends inside (`if` for `{% if a %}` with no
/// `{% endif %}`), for the help to name its end tag.
fn block_left_open(source: &str, error: &minijinja::Error) -> Option<String> {
    innermost_left_open(source, error, &error.range()?).map(|tag| tag.keyword.to_string())
}

fn innermost_left_open<'s>(
    source: &'s str,
    error: &minijinja::Error,
    range: &std::ops::Range<usize>,
) -> Option<Tag<'s>> {
    // Only where minijinja waited for a block's end tag: a tag cut short at the end of the
    // template (`{% if`, "expected expression") is placed where it is cut, not at a block.
    if error.detail()? != "unexpected end of input, expected end of block" {
        return None;
    }
    open_blocks(source.get(..range.start)?).pop()
}

/// The block tags `source` leaves open at its end, outermost first, paired as minijinja
/// pairs them (an end tag closes the innermost block, whatever its name).
fn open_blocks(source: &str) -> Vec<Tag<'_>> {
    let mut open = Vec::new();
    for tag in tags(source) {
        match tag.keyword {
            "if" | "for" | "macro" | "call" | "filter" | "block" | "with" | "autoescape"
            | "raw" => open.push(tag),
            // `{% set x %}…{% endset %}` opens a block; `{% set x = 1 %}` does not.
            "set" if !source[tag.range.clone()].contains('=') => open.push(tag),
            k if k.starts_with("end") => {
                open.pop();
            }
            _ => {}
        }
    }
    open
}

/// A tag whose `%}` or `}}` is missing (`{% for x in xs %` or `{% endif` at a line's end):
/// minijinja reads on into the text after it and stops on a later line, saying only
/// "unexpected character" or what it expected there. The tag is what needs closing: its range from
/// its opener to the end of its line, and the opener (`{%` or `{{`).
fn tag_left_unclosed<'s>(
    source: &'s str,
    error: &minijinja::Error,
) -> Option<(std::ops::Range<usize>, &'s str)> {
    // Read on into the text after the tag, minijinja stops at the first character no
    // expression has, or at the first word or bracket that cannot follow what it read
    // (`{% endif` then `B` on the next line: "unexpected identifier, expected end of
    // block").
    let detail = error.detail()?;
    let read_on = detail == "unexpected character"
        || (detail.starts_with("unexpected ")
            && !detail.starts_with("unexpected end of")
            && (detail.ends_with("expected end of block")
                || detail.ends_with("expected end of variable block")));
    if !read_on {
        return None;
    }
    let at = error.range()?.start;
    let before = source.get(..at)?;
    let open = before
        .rfind("{%")
        .into_iter()
        .chain(before.rfind("{{"))
        .max()?;
    let opener = source.get(open..open + 2)?;
    let closer = if opener == "{%" { "%}" } else { "}}" };
    let tag = &before[open..];
    // Closed before the error, or on the error's own line (where minijinja's place is the
    // tag already): another mistake.
    if tag.contains(closer) || !tag.contains('\n') {
        return None;
    }
    // A tag may span lines (a list written one item a line): it is left unclosed only when
    // no closer comes after the error before the next tag opens.
    let after = source.get(at..)?;
    let next_opener = [after.find("{%"), after.find("{{")]
        .into_iter()
        .flatten()
        .min();
    match (after.find(closer), next_opener) {
        (Some(closes), Some(opens)) if closes < opens => return None,
        (Some(_), None) => return None,
        _ => {}
    }
    let line_end = open + tag.find('\n')?;
    Some((open..line_end, opener))
}

/// The end tag a stray one meant: `{% endfor %}` where an `{% if %}` is the block open there
/// is `{% endif %}`. minijinja says only that `endfor` is an unknown statement.
fn end_of_open_block(source: &str, error: &minijinja::Error) -> Option<String> {
    let written = error.detail()?.strip_prefix("unknown statement end")?;
    let open = open_blocks(source.get(..error.range()?.start)?).pop()?;
    (open.keyword != written).then(|| format!("end{}", open.keyword))
}

/// For a string, a comment or a raw block left open, minijinja's place is the end of the
/// template, past its last line; what needs closing is where it opened: the quote, the `{#`,
/// or the `{% raw %}` tag.
fn unclosed_opener(source: &str, error: &minijinja::Error) -> Option<std::ops::Range<usize>> {
    let detail = error.detail()?;
    if detail.starts_with("unexpected end of comment") {
        // The first `{#` after the last comment closed: a `{#` inside a comment is its text.
        let from = source.rfind("#}").map_or(0, |end| end + 2);
        let at = from + source.get(from..)?.find("{#")?;
        return Some(at..at + 2);
    }
    if detail.starts_with("unexpected end of raw block") {
        let raw = tags(source).filter(|tag| tag.keyword == "raw").last()?;
        return Some(raw.range);
    }
    if !detail.starts_with("unexpected end of string") {
        return None;
    }
    // The tag whose text a quote opens and nothing closes: a tag's end inside a string does
    // not end the tag, so the open string runs to the end of the template.
    let bytes = source.as_bytes();
    let mut at = 0;
    while let Some(open) = memchr::memmem::find(&bytes[at..], b"{").map(|found| at + found) {
        let closer: &[u8] = match bytes.get(open + 1) {
            Some(b'{') => b"}}",
            Some(b'%') => b"%}",
            Some(b'#') => {
                at = memchr::memmem::find(&bytes[open..], b"#}").map(|end| open + end + 2)?;
                continue;
            }
            _ => {
                at = open + 1;
                continue;
            }
        };
        let mut quote: Option<(u8, usize)> = None;
        let mut index = open + 2;
        let mut end = None;
        while index < bytes.len() {
            let byte = bytes[index];
            match quote {
                Some(_) if byte == b'\\' => index += 1,
                Some((q, _)) if byte == q => quote = None,
                Some(_) => {}
                None if byte == b'"' || byte == b'\'' => quote = Some((byte, index)),
                None if bytes[index..].starts_with(closer) => {
                    end = Some(index + 2);
                    break;
                }
                None => {}
            }
            index += 1;
        }
        match (end, quote) {
            (Some(end), _) => {
                // A raw block's text is not read for tags.
                let keyword = keyword_of(source.get(open..end)?);
                at = if closer == b"%}" && keyword == "raw" {
                    memchr::memmem::find(&bytes[end..], b"endraw").map_or(bytes.len(), |e| end + e)
                } else {
                    end
                };
            }
            (None, Some((_, quote_at))) => return Some(quote_at..quote_at + 1),
            (None, None) => return None,
        }
    }
    None
}

/// A block tag (`{% … %}`) of a template: its keyword and its range.
struct Tag<'s> {
    keyword: &'s str,
    range: std::ops::Range<usize>,
}

/// The block tags of `source`, in order: each from its `{%` to its `%}` (or the end).
/// Comments are skipped, and so is the text of a raw block (its `{% raw %}` tag is given,
/// then its `{% endraw %}`), as minijinja reads neither for tags.
fn tags(source: &str) -> impl Iterator<Item = Tag<'_>> {
    let mut rest = 0;
    std::iter::from_fn(move || {
        loop {
            let at = source.get(rest..)?.find("{%").map(|at| rest + at)?;
            // A comment that opens before the tag holds it.
            if let Some(comment) = source[rest..at].find("{#").map(|c| rest + c) {
                rest = source[comment..]
                    .find("#}")
                    .map_or(source.len(), |e| comment + e + 2);
                continue;
            }
            let end = source[at..].find("%}").map_or(source.len(), |e| at + e + 2);
            let keyword = keyword_of(&source[at..end]);
            rest = end;
            if keyword == "raw" {
                // On to the `{%` of the first `endraw` after it, or the end.
                rest = source[end..]
                    .find("endraw")
                    .and_then(|e| source[end..end + e].rfind("{%").map(|open| end + open))
                    .unwrap_or(source.len());
            }
            return Some(Tag {
                keyword,
                range: at..end,
            });
        }
    })
}

impl Templates {
    /// For `module.name(…)` where `module` is a template imported (`{% import "x" as
    /// module %}`) and has no macro `name`: its macro of the nearest name. `template` and
    /// `call` are where minijinja places the error.
    pub fn macro_meant(
        &self,
        template: &str,
        call: std::ops::Range<usize>,
        missing: &str,
    ) -> Option<String> {
        self.with_source(template, |source| {
            // minijinja's place starts at the `.`: the module's name is the word before it.
            let before = source.get(..call.start)?.trim_end();
            let start = before
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(0, |at| at + 1);
            let module = before.get(start..)?;
            self.macro_in_import(source, module, missing)
        })
        .flatten()
    }

    fn macro_in_import(&self, source: &str, module: &str, missing: &str) -> Option<String> {
        let imported = tags(source).find_map(|tag| {
            let text = &source[tag.range];
            if tag.keyword != "import" {
                return None;
            }
            // `import "x" as m`, with any space around `as` (a line break too).
            let words: Vec<&str> = text.split_whitespace().collect();
            let at = words.iter().position(|word| *word == "as")?;
            let alias = words
                .get(at + 1)?
                .trim_end_matches("%}")
                .trim_end_matches(['-', '+']);
            let path = words[..at].join(" ");
            (alias == module).then(|| path.rsplit(['"', '\'']).nth(1).map(str::to_string))?
        })?;
        let macros: Vec<String> = self
            .with_source(&imported, |partial| {
                tags(partial)
                    .filter(|tag| tag.keyword == "macro")
                    .filter_map(|tag| {
                        let text = &partial[tag.range];
                        let head = text.split_once('(')?.0;
                        head.split_whitespace().last().map(str::to_string)
                    })
                    .collect()
            })
            .unwrap_or_default();
        crate::namespace::closest(missing, &macros)
    }
}

/// The macro, and its argument, that the name at `at` of `source` reads when it is an
/// argument the macro's line gives no default (`what` in `{% macro verify(what) %}`): a call
/// that leaves it out makes it undefined inside the macro, and minijinja says only
/// "undefined value" there.
pub fn macro_argument_at(source: &str, at: std::ops::Range<usize>) -> Option<(String, String)> {
    let name = source.get(at.clone())?.trim();
    // The tags before the name, and which of them open the macros around it.
    let before: Vec<Tag<'_>> = tags(source.get(..at.start)?).collect();
    let mut open: Vec<usize> = Vec::new();
    for (index, tag) in before.iter().enumerate() {
        match tag.keyword {
            "macro" => open.push(index),
            "endmacro" => {
                open.pop();
            }
            _ => {}
        }
    }
    let innermost = open.pop()?;
    // A name the macro's body sets again (`{% set what = … %}`, `{% for what in … %}`) is
    // that value where it is read, not the argument.
    let set_again = before[innermost + 1..].iter().any(|tag| {
        let text = source.get(tag.range.clone()).unwrap_or_default();
        let target = match tag.keyword {
            "set" => text
                .split_once("set")
                .and_then(|(_, rest)| rest.split_once('=')),
            "for" => text
                .split_once("for")
                .and_then(|(_, rest)| rest.split_once(" in ")),
            _ => None,
        };
        target.is_some_and(|(names, _)| {
            names
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == name)
        })
    });
    if set_again {
        return None;
    }
    let tag = source.get(before[innermost].range.clone())?;
    let (head, arguments) = tag.split_once('(')?;
    let macro_name = head.split_whitespace().last()?;
    let arguments = arguments.rsplit_once(')')?.0;
    arguments
        .split(',')
        .map(str::trim)
        .find(|argument| *argument == name)
        .map(|argument| (macro_name.to_string(), argument.to_string()))
}

/// The keyword of a block tag's text (`{%- if x %}` is `if`, `{%raw%}` is `raw`).
fn keyword_of(tag: &str) -> &str {
    let inner = tag.strip_prefix("{%").unwrap_or(tag);
    let inner = inner.strip_suffix("%}").unwrap_or(inner);
    inner
        .trim_start_matches(['-', '+'])
        .trim_end_matches(['-', '+'])
        .split_whitespace()
        .next()
        .unwrap_or_default()
}

/// The offset of the first whole-word occurrence of `word` (a word being a maximal run of
/// letters, digits and `_`). Asked only for a diagnostic or an include's names, so the text
/// is searched then rather than indexed for every template of every load.
fn first_word(source: &str, word: &str) -> Option<usize> {
    whole_words(source, word).next()
}

/// Where the attributes `rest` that follow a name end, when the text at `at` reads them one
/// after another (`.x`, `["x"]`, `['x']`, with spaces around them); `None` when it does not.
fn path_end(source: &str, mut at: usize, rest: &[&str]) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    for part in rest {
        let after = source.get(at..)?;
        let trimmed = after.trim_start();
        at += after.len() - trimmed.len();
        if let Some(name) = trimmed.strip_prefix('.') {
            let name_trimmed = name.trim_start();
            let skipped = 1 + name.len() - name_trimmed.len();
            let word_len = name_trimmed
                .find(|c: char| !is_ident(c))
                .unwrap_or(name_trimmed.len());
            if &name_trimmed[..word_len] != *part {
                return None;
            }
            at += skipped + word_len;
        } else if let Some(subscript) = trimmed.strip_prefix('[') {
            let quoted = [format!("\"{part}\"]"), format!("'{part}']")];
            let inner = subscript.trim_start();
            let matched = quoted.iter().find(|q| inner.starts_with(q.as_str()))?;
            at += 1 + (subscript.len() - inner.len()) + matched.len();
        } else {
            return None;
        }
    }
    Some(at)
}

/// Where `word` (a name) stands whole in `source`, in order; nowhere for a word that is no name.
fn whole_words<'s>(source: &'s str, word: &'s str) -> impl Iterator<Item = usize> + 's {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let name = !word.is_empty() && word.chars().all(is_ident);
    memchr::memmem::find_iter(source.as_bytes(), word.as_bytes())
        .filter(move |_| name)
        .filter(move |&at| {
            let before = source[..at].chars().next_back();
            let after = source[at + word.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
}

/// Where each of `variables` (names) is first used in `source`, as [`first_word_in_tags`],
/// else [`first_word`], else 0 finds it, with one pass over the text.
fn first_uses<'v>(source: &str, variables: &[&'v str]) -> Vec<(&'v str, usize)> {
    let wanted: std::collections::HashSet<&str> = variables.iter().copied().collect();
    // Each wanted name's whole-word places, in order: a name stands whole where a run of
    // name characters is exactly it.
    let mut places: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut run_start = None;
    for (at, c) in source.char_indices().chain([(source.len(), ' ')]) {
        match (is_ident(c), run_start) {
            (true, None) => run_start = Some(at),
            (false, Some(start)) => {
                run_start = None;
                if let Some(word) = wanted.get(&source[start..at]) {
                    places.entry(word).or_default().push(start);
                }
            }
            _ => {}
        }
    }
    // A name in a comment (`{# write {{ NAME }} here #}`) is no use of it.
    let quiet = references::quiet_ranges(source);
    variables
        .iter()
        .map(|variable| {
            let found = places.get(variable).map(Vec::as_slice).unwrap_or_default();
            let offset = found
                .iter()
                .copied()
                .find(|&at| !references::is_quiet(&quiet, at) && tag_around(source, at).is_some())
                .or_else(|| found.first().copied())
                .unwrap_or(0);
            (*variable, offset)
        })
        .collect()
}

/// The first whole `word` inside a tag (`{{ … }}`, `{% … %}`) and outside the tag's quoted
/// strings: where an expression names it.
fn first_word_in_tags(source: &str, word: &str) -> Option<usize> {
    // The comments are found only when a tag holds the word.
    let mut quiet = None;
    whole_words(source, word)
        .filter(|&at| tag_around(source, at).is_some())
        .find(|&at| {
            let quiet = quiet.get_or_insert_with(|| references::quiet_ranges(source));
            !references::is_quiet(quiet, at)
        })
}

/// Where the tag that holds `at` opens (its `{{` or `{%`), when `at` is inside one and outside
/// the tag's quoted strings.
fn tag_around(source: &str, at: usize) -> Option<usize> {
    // The nearest tag delimiter before it, found brace by brace back from it (a search for
    // each delimiter through the whole text before it made 20,000 names in a 1 MB template
    // quadratic): an opening puts it inside a tag.
    let bytes = source.as_bytes();
    let mut end = at;
    let opened = loop {
        let brace = memchr::memrchr2(b'{', b'}', &bytes[..end])?;
        match bytes[brace] {
            b'{' if matches!(bytes.get(brace + 1), Some(b'{' | b'%')) => break brace,
            b'}' if brace > 0 && matches!(bytes[brace - 1], b'}' | b'%') => return None,
            _ => end = brace,
        }
    };
    let inside = &source[opened + 2..at];
    // Inside a quoted string of the tag: an odd number of its quotes precede it.
    let mut quote = None;
    let mut escaped = false;
    for c in inside.chars() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            _ => {}
        }
    }
    quote.is_none().then_some(opened)
}

/// The string literals a condition (an expression, not a template) asks `word` whether it
/// holds, each with its range in `condition`: as [`Templates::literals_tested_in`] finds them
/// in a template's tags.
pub(crate) fn literals_tested(
    condition: &str,
    word: &str,
) -> Vec<(String, std::ops::Range<usize>)> {
    whole_words(condition, word)
        .filter_map(|at| literal_tested_before(condition, at))
        .collect()
}

/// The string literal (without its quotes) and its range, quotes included, that the text
/// before `at` asks about: `'x' in `, `"x" not in `. `None` for anything else (a name, an
/// expression, a literal with escapes).
fn literal_tested_before(source: &str, at: usize) -> Option<(String, std::ops::Range<usize>)> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let before = source.get(..at)?.trim_end();
    let before = before.strip_suffix("in")?;
    if before.ends_with(is_ident) {
        return None;
    }
    let before = before.trim_end();
    let before = match before.strip_suffix("not") {
        Some(rest) if !rest.ends_with(is_ident) => rest.trim_end(),
        _ => before,
    };
    let quote = before
        .chars()
        .next_back()
        .filter(|c| matches!(c, '\'' | '"'))?;
    let body = &before[..before.len() - 1];
    let open = body.rfind(quote)?;
    // An escaped quote (`'a\'b'`) opens nothing: such a literal is not read.
    if body[..open].ends_with('\\') {
        return None;
    }
    let literal = &body[open + 1..];
    if literal.contains('\\') || literal.contains(['\n', '{', '}']) {
        return None;
    }
    Some((literal.to_string(), open..before.len()))
}

/// Whether every expression of `source` that names `word` only asks whether it holds an item
/// (`"x" in word`, `"x" not in word`), so that none of its items reach the text. A loop over it
/// (`{% for x in word %}`), a filter, or any other use reads its items.
fn reads_no_item(source: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    // `word | length` (or `count`) writes a number, `word is …` a truth value.
    let measured_or_tested = |at: usize| {
        let after = source[at + word.len()..].trim_start();
        let filtered = after.strip_prefix('|').map(str::trim_start);
        let measured = filtered.is_some_and(|filter| {
            ["length", "count"].into_iter().any(|name| {
                filter
                    .strip_prefix(name)
                    .is_some_and(|rest| !rest.starts_with(is_ident))
            })
        });
        let tested = after
            .strip_prefix("is")
            .is_some_and(|rest| rest.starts_with(char::is_whitespace));
        measured || tested
    };
    whole_words(source, word).all(|at| {
        let Some(opened) = tag_around(source, at) else {
            // Prose: not read at all.
            return true;
        };
        if measured_or_tested(at) {
            return true;
        }
        let before = source[opened + 2..at].trim_end();
        let Some(operand) = before.strip_suffix("in") else {
            return false;
        };
        if operand.ends_with(is_ident) || operand.trim().is_empty() {
            return false;
        }
        // The `in` of a loop's header: `{% for name, other in word %}`.
        let header = operand.trim_start_matches(['-', '+']).trim();
        let loop_header = source[opened..].starts_with("{%")
            && header.strip_prefix("for").is_some_and(|targets| {
                targets.starts_with(char::is_whitespace)
                    && targets
                        .chars()
                        .all(|c| is_ident(c) || c.is_whitespace() || matches!(c, ',' | '(' | ')'))
                    && !targets
                        .split(|c: char| !is_ident(c))
                        .any(|name| matches!(name, "in" | "if"))
            });
        !loop_header
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_literal_a_membership_test_asks_about_is_found() {
        fn tested(source: &str) -> Option<(String, &str)> {
            let at = source.rfind("enabled_tools").unwrap();
            literal_tested_before(source, at).map(|(name, range)| (name, &source[range]))
        }
        assert_eq!(tested("'a' in enabled_tools"), Some(("a".into(), "'a'")));
        assert_eq!(
            tested("x == 'b' and \"c\"  not   in enabled_tools"),
            Some(("c".into(), "\"c\""))
        );
        for other in [
            "name in enabled_tools",
            "'a' ~ b in enabled_tools",
            "'a' notin enabled_tools",
            "'a\\'b' in enabled_tools",
            "'a' into enabled_tools",
            "enabled_tools",
        ] {
            assert_eq!(tested(other), None, "{other}");
        }
    }

    #[test]
    fn a_name_whose_items_are_never_read_is_told_from_one_whose_items_are_read() {
        let only = |source: &str| reads_no_item(source, "enabled_tools");
        assert!(only("{% if 'a' in enabled_tools %}A{% endif %}"));
        assert!(only(
            "{%- if \"a\" not in enabled_tools and 'b' in enabled_tools -%}{% endif %}"
        ));
        assert!(only("{{ 'a' in enabled_tools }} enabled_tools in prose"));
        assert!(only(
            "{% for t in tools if t.name in enabled_tools %}{% endfor %}"
        ));
        assert!(!only("{% for t in enabled_tools %}{{ t }}{% endfor %}"));
        assert!(!only("{%- for (i, t) in enabled_tools -%}{% endfor %}"));
        assert!(!only("{{ enabled_tools | join(', ') }}"));
        assert!(!only(
            "{% if 'a' in enabled_tools %}{% endif %}{% set e = enabled_tools %}"
        ));
        assert!(!only("{{ 'in' ~ enabled_tools }}"));
        // Measured or tested whole: a number or a truth value is written, no item.
        assert!(only("You have {{ enabled_tools | length }} tools."));
        assert!(only(
            "{{ enabled_tools|count }}{% if enabled_tools is defined %}{% endif %}"
        ));
        assert!(!only("{{ enabled_tools | lengthy }}"));
        assert!(!only(
            "{{ enabled_tools | length }} {{ enabled_tools | first }}"
        ));
        assert!(!only(
            "{{ enabled_tools | list | length }}x{{ enabled_tools }}"
        ));
    }

    /// A name is found where an expression reads it: not in the prose before the tag, nor in
    /// a quoted string inside one.
    #[test]
    fn names_are_found_in_tags_before_prose() {
        let source = "Use the widget: {{ 'widget' ~ x }} and {{ widget }}{% if widget %}";
        assert_eq!(first_word_in_tags(source, "widget"), Some(42));
        assert_eq!(first_word(source, "widget"), Some(8));
        assert_eq!(first_word_in_tags("no tags: widget", "widget"), None);
        assert_eq!(first_word_in_tags("{{ a }} widget {% b %}", "widget"), None);
        assert_eq!(
            first_word_in_tags("{% if \"it's\" %}{{ widget }}", "widget"),
            Some(18)
        );
    }

    /// Many names' first uses, found in one pass, are where each is found alone.
    #[test]
    fn names_found_together_are_where_each_is_found_alone() {
        let source = "Use the widget: {{ 'widget' ~ x }} and {{ widget }}{% if widget %}\n\
            x_y {{ x_y.z }} {{ é }} é {{ \"gadget\" }} gadget2 {{ gadget }} widgets";
        let names = [
            "widget", "x", "x_y", "é", "gadget", "gadget2", "nowhere", "z",
        ];
        for (name, offset) in first_uses(source, &names) {
            let alone = first_word_in_tags(source, name)
                .or_else(|| first_word(source, name))
                .unwrap_or(0);
            assert_eq!(offset, alone, "{name}");
        }
    }

    /// One pass over the braces finds what looking for each opening does.
    #[test]
    fn a_text_is_plain_when_no_brace_opens_a_tag() {
        for text in [
            "", "{", "}", "{ {", "a{b}c", "{}", "x{", "{{", "{%", "{#", "a {{ b", "{ {%", "{{{",
            "é{%", "{\n{",
        ] {
            let opens = ["{{", "{%", "{#"].iter().any(|start| text.contains(start));
            assert_eq!(is_plain(text), !opens, "{text:?}");
        }
    }

    #[test]
    fn plain_text_is_what_rendering_it_gives() {
        let mut sources = Sources::default();
        let mut templates = Templates::new(None, &crate::model::Limits::default(), &mut sources);
        for (index, text) in [
            "Run a command.\n",
            "Braces { alone } and 100% text\n\n",
            "  indented, no newline",
            "}} a closing pair alone",
            "Hello {{ name }}",
            "{% if x %}y{% endif %}",
            "a {# comment #} b",
        ]
        .into_iter()
        .enumerate()
        {
            let file = sources.add(format!("t{index}.md").into(), text.into());
            let id = templates.add_file(&sources, file).unwrap();
            let rendered = templates
                .template(id)
                .unwrap()
                .render(minijinja::context! { name => "N", x => true })
                .unwrap();
            match templates.plain(id) {
                Some(plain) => assert_eq!(&**plain, rendered, "{text:?}"),
                None => assert!(text.contains("{{") || text.contains("{%") || text.contains("{#")),
            }
            assert_eq!(
                templates.plain(id).is_some(),
                index < 4,
                "{text:?} is plain text"
            );
        }
    }

    #[test]
    fn an_import_alias_that_is_not_a_name_is_a_syntax_error_not_a_panic() {
        let mut sources = Sources::default();
        let text = "Intro.\n{% import 'a' as m|list %}\n";
        let file = sources.add("a.md".into(), text.into());
        let mut templates = Templates::new(None, &crate::model::Limits::default(), &mut sources);
        let error = templates.add_file(&sources, file).unwrap_err();
        assert!(matches!(error.problem, Problem::TemplateSyntax { .. }));
        assert_eq!(&text[error.span.range()], "m|list");
    }

    #[test]
    fn an_error_at_the_end_of_a_template_points_inside_it() {
        let mut sources = Sources::default();
        let text = "Hello {{ 'unterminated";
        let file = sources.add("a.md".into(), text.into());
        let mut templates = Templates::new(None, &crate::model::Limits::default(), &mut sources);
        let error = templates.add_file(&sources, file).unwrap_err();
        // minijinja reports 22..23, one byte past the end; the quote left open is the place.
        assert_eq!(&text[error.span.range()], "'", "{error:?}");
        assert_eq!(error.span.range().start, 9, "{error:?}");
        // An error with no opener to find (a block the text ends in) stays inside the text.
        let text = "Hello {{ name";
        let file = sources.add("b.md".into(), text.into());
        let error = templates.add_file(&sources, file).unwrap_err();
        assert!(error.span.range().end <= text.len(), "{error:?}");
    }

    #[test]
    fn a_macro_argument_is_told_only_where_the_macro_reads_it_as_given() {
        let at = |source: &str| {
            let start = source.rfind("{{ what }}").unwrap() + 3;
            super::macro_argument_at(source, start..start + 4)
        };
        let argument = Some(("verify".to_string(), "what".to_string()));
        assert_eq!(
            at("{% macro verify(what, how=1) %}{{ what }}{% endmacro %}"),
            argument
        );
        // Set again, or a loop's name, inside the macro: not the argument.
        assert_eq!(
            at("{% macro verify(what) %}{% set what = what.name %}{{ what }}{% endmacro %}"),
            None
        );
        assert_eq!(
            at(
                "{% macro verify(items) %}{% for what in items %}{{ what }}{% endfor %}{% endmacro %}"
            ),
            None
        );
        // Outside any macro, or after it ends: not an argument.
        assert_eq!(at("{% macro verify(what) %}{% endmacro %}{{ what }}"), None);
        assert_eq!(at("{{ what }}"), None);
    }

    #[test]
    fn an_opener_left_open_is_found_past_comments_and_raw_text() {
        let mut sources = Sources::default();
        let mut templates = Templates::new(None, &crate::model::Limits::default(), &mut sources);
        let mut error_of = |name: &str, text: &str| {
            let file = sources.add(name.into(), text.into());
            templates.add_file(&sources, file).unwrap_err()
        };
        // A stray end tag after a raw block's text or a comment that holds tags: no block is
        // open there, so no end tag is offered.
        for (name, text) in [
            (
                "a.md",
                "{% raw %}{% for x in y %}{% endraw %}\nA{% endfor %}",
            ),
            ("b.md", "{# {% if x %} #}{% endfor %}"),
        ] {
            let error = error_of(name, text);
            let Problem::TemplateSyntax { meant, .. } = &error.problem else {
                panic!("{error:?}")
            };
            assert_eq!(meant, &None, "{text}");
        }
        let error = error_of(
            "c.md",
            "{% if x %}{% raw %}{% endif %}{% endraw %}{% endfor %}",
        );
        let Problem::TemplateSyntax { meant, .. } = &error.problem else {
            panic!("{error:?}")
        };
        assert_eq!(meant.as_deref(), Some("endif"));
        // A raw block written without spaces, and a comment holding `{#`, placed where they
        // open.
        let text = "Hi {%raw%}abc";
        let error = error_of("d.md", text);
        assert_eq!(&text[error.span.range()], "{%raw%}", "{error:?}");
        let text = "{# a {# b\nmore";
        let error = error_of("e.md", text);
        assert_eq!(error.span.range(), 0..2, "{error:?}");
    }

    #[test]
    fn the_builtin_tool_format_compiles() {
        let mut sources = Sources::default();
        let templates = Templates::new(None, &crate::model::Limits::default(), &mut sources);
        let id = templates.builtin_tool_format();
        assert_eq!(templates.name(id), BUILTIN_TOOL_FORMAT);
        assert!(templates.template(id).is_ok());
    }

    /// The names a template reads decide when a render is reused for another context: a
    /// render that changes with a name the template is said not to read would be reused
    /// wrongly. Each template here renders with two values of each name: whenever the output
    /// differs, the name must be among those read. And a name every path sets before reading
    /// it is not read (validation would call it undefined).
    #[test]
    fn the_names_a_template_reads_are_every_name_its_render_looks_up() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("{% set mode = mode %}{{ mode }}", &["mode"], &[]),
            ("{% set cwd = cwd | upper %}{{ cwd }}", &["cwd"], &[]),
            (
                "{% set (a, mode) = (1, mode) %}{{ mode }}",
                &["mode"],
                &["a"],
            ),
            (
                "{% with a = 1, mode = mode %}{{ mode }}{% endwith %}",
                &["mode"],
                &["a"],
            ),
            (
                "{% with a = 1, b = a %}{{ b }}{% endwith %}",
                &[],
                &["a", "b"],
            ),
            (
                "{% set mode %}{{ mode }}{% endset %}{{ mode }}",
                &["mode"],
                &[],
            ),
            (
                "{% set x | replace('a', mode) %}a{% endset %}{{ x }}",
                &["mode"],
                &["x"],
            ),
            (
                "{% filter replace('a', mode) %}a{% endfilter %}",
                &["mode"],
                &[],
            ),
            (
                "{% autoescape mode %}{{ '<' }}{% endautoescape %}",
                &["mode"],
                &[],
            ),
            (
                "{% macro f(mode=mode) %}{{ mode }}{% endmacro %}{{ f() }}",
                &["mode"],
                &[],
            ),
            (
                "{% macro f(a, b=a) %}{{ b }}{% endmacro %}{{ f(1) }}",
                &["a"],
                &["b"],
            ),
            (
                "{% macro f(a=b, b=2) %}{{ a }}{% endmacro %}{{ f() }}",
                &[],
                &["a", "b"],
            ),
            ("v={{ self }}", &["self"], &[]),
            // A bare `super` is a name like any other; `super()` renders the parent block.
            ("{% block b %}[{{ super }}]{% endblock %}", &["super"], &[]),
            (
                "{% block b %}[{{ super() | default('') }}]{% endblock %}",
                &[],
                &["super"],
            ),
            ("{% for x in loop %}{{ x }}{% endfor %}", &["loop"], &["x"]),
            (
                "{% for x in [1, 2] if loop %}{{ x }}{% endfor %}",
                &["loop"],
                &["x"],
            ),
            (
                "{% for x in [] %}{% else %}{% set y = 1 %}{% endfor %}{{ y }}",
                &["y"],
                &["x"],
            ),
            (
                "{% if mode == 'plan' %}{% set label = 'P' %}{% else %}{% set label = 'A' %}{% endif %}{{ label }}",
                &["mode"],
                &["label"],
            ),
            (
                "{% if flag %}{% set label = 'P' %}{% endif %}{{ label }}",
                &["flag", "label"],
                &[],
            ),
            (
                "{% filter upper %}{% set x = 'a' %}{% endfilter %}{{ x }}",
                &[],
                &["x"],
            ),
            (
                "{% set ns = namespace(n=1) %}{% set ns.n = 2 %}{{ ns.n }}",
                &[],
                &["ns"],
            ),
            ("{% set ns.n = 2 %}{{ ns.n }}", &["ns"], &[]),
            ("{{ cwd[:4] }}", &["cwd"], &[]),
            ("{{ (cwd ~ 'x')[1:n] }}", &["cwd", "n"], &[]),
            (
                "{% set word = 'local' %}{% macro g() %}[{{ word[:3] }}]{% endmacro %}{{ g() }}",
                &[],
                &["word"],
            ),
        ];
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
        for &(source, read, not_read) in cases {
            let template = env.template_from_str(source).unwrap();
            let found = template.undeclared_variables(false);
            for name in read {
                assert!(
                    found.contains(*name),
                    "{source}: `{name}` not among {found:?}"
                );
            }
            // Validation reads the paths (`ns.n`): a name not read has none.
            let paths = template.undeclared_variables(true);
            for name in not_read {
                assert!(!found.contains(*name), "{source}: `{name}` among {found:?}");
                let under = format!("{name}.");
                assert!(
                    !paths
                        .iter()
                        .any(|path| path == name || path.starts_with(&under)),
                    "{source}: `{name}` among the paths {paths:?}"
                );
            }
            // Whatever the template is said not to read changes nothing when given.
            let names: Vec<&str> = read.iter().chain(not_read).copied().collect();
            for name in names.iter().filter(|name| !found.contains(**name)) {
                let render = |value: &str| {
                    let values: std::collections::BTreeMap<&str, minijinja::Value> = names
                        .iter()
                        .filter(|other| *other != name)
                        .map(|other| (*other, minijinja::Value::from("base")))
                        .chain([(*name, minijinja::Value::from(value))])
                        .collect();
                    template
                        .render(&values)
                        .unwrap_or_else(|error| format!("{error}"))
                };
                assert_eq!(
                    render("one"),
                    render("two"),
                    "{source}: the output changes with `{name}`, said not to be read"
                );
            }
        }
    }

    /// A macro finds, through its closure, a name its frame sets after it is defined: such
    /// a name is not unset when the macro is called after the set, and a template whose
    /// every name is set where a render reads it renders with no values given.
    #[test]
    fn a_name_a_macro_finds_set_later_is_not_unset() {
        let cases: &[(&str, &[&str])] = &[
            (
                "{% macro show() %}[{{ shown }}]{% endmacro %}{% set shown = 'x' %}{{ show() }}",
                &[],
            ),
            (
                "{% macro show() %}[{{ shown }}]{% endmacro %}{{ shown }}{% set shown = 'x' %}",
                &["shown"],
            ),
            (
                "{% for i in [1] %}{% macro m() %}{{ v }}{% endmacro %}{% set v = i %}{{ m() }}{% endfor %}",
                &[],
            ),
            // Set after the loop's frame has ended: the macro's closure never sees it.
            (
                "{% for i in [1] %}{% macro m() %}{{ v }}{% endmacro %}{{ m() }}{% endfor %}{% set v = 1 %}",
                &["v"],
            ),
            (
                "{% macro outer() %}{% macro inner() %}{{ w }}{% endmacro %}{% set w = 1 %}{{ inner() }}{% endmacro %}{{ outer() }}",
                &[],
            ),
            (
                "{% macro outer() %}{% macro inner() %}{{ w }}{% endmacro %}{{ inner() }}{% endmacro %}{% set w = 1 %}{{ outer() }}",
                &[],
            ),
            (
                "{% macro outer() %}{% macro inner() %}{{ w }}{% endmacro %}{{ inner() }}{% endmacro %}{{ outer() }}",
                &["w"],
            ),
            // A call block's caller runs at once: a later set is not there for it.
            (
                "{% macro wrap() %}{{ caller() }}{% endmacro %}{% call wrap() %}{{ c }}{% endcall %}{% set c = 1 %}",
                &["c"],
            ),
            (
                "{% if flag %}{% macro m() %}{{ z }}{% endmacro %}{% set z = 1 %}{{ m() }}{% endif %}",
                &["flag"],
            ),
        ];
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        for &(source, unset) in cases {
            let template = env.template_from_str(source).unwrap();
            let found = template.unset_variables();
            let mut names: Vec<&str> = found.names.iter().map(String::as_str).collect();
            names.sort();
            assert_eq!(names, unset, "{source}");
            // Every name is still among those a render may read (for reusing renders).
            let read = template.undeclared_variables(false);
            let both: std::collections::HashSet<String> = found.all().cloned().collect();
            assert_eq!(both, read, "{source}");
            let values: std::collections::BTreeMap<&str, bool> =
                unset.iter().map(|name| (*name, true)).collect();
            if unset.iter().all(|name| *name == "flag") {
                assert!(
                    template.render(&values).is_ok(),
                    "{source}: {:?}",
                    template.render(&values)
                );
            }
        }
        let top = env
            .template_from_str("{% if a %}{% set x = 1 %}{% endif %}{% for i in [1] %}{% set y = 1 %}{% endfor %}{% macro m() %}{% set z = 1 %}{% endmacro %}")
            .unwrap()
            .unset_variables();
        let mut set: Vec<&str> = top.set.iter().map(String::as_str).collect();
        set.sort();
        assert_eq!(set, ["m", "x"]);
    }

    /// A name read only where the render asks whether it is defined (`x is defined`,
    /// `x | default(…)`, inside `{% if x is defined %}`, or set when it is not) is guarded,
    /// not unset: such a template renders with no value for it. A read outside the guard is
    /// unset, as before.
    #[test]
    fn a_name_read_only_under_a_defined_guard_is_not_unset() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "{% if T is not defined %}{% set T = 'n' %}{% endif %}{{ T }}",
                &[],
                &["T"],
            ),
            ("{% if E is defined %}{{ E }}{% endif %}", &[], &["E"]),
            ("{{ A | default('d') }}|{{ B | d('e') }}", &[], &["A", "B"]),
            ("{{ A | default('d') }}{{ A }}", &["A"], &[]),
            (
                "{% if X is defined and Y is defined %}{{ X }}{{ Y }}{% endif %}",
                &[],
                &["X", "Y"],
            ),
            (
                "{% if X is defined or Y %}{{ X }}{% endif %}",
                &["X", "Y"],
                &[],
            ),
            (
                "{% if X is undefined %}-{% else %}{{ X }}{% endif %}",
                &[],
                &["X"],
            ),
            ("{% if X is defined %}{% endif %}{{ X }}", &["X"], &[]),
            ("{% if Z is defined and Z %}{{ Z }}{% endif %}", &[], &["Z"]),
            (
                "{% if Z is undefined or Z is none %}-{% endif %}",
                &[],
                &["Z"],
            ),
            ("{{ Y if Y is defined else 'd' }}", &[], &["Y"]),
            ("{% set W = W if W is defined else 1 %}{{ W }}", &[], &["W"]),
            ("{{ Y if Y is undefined else 'd' }}", &["Y"], &[]),
        ];
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        for &(source, unset, guarded) in cases {
            let template = env.template_from_str(source).unwrap();
            let found = template.unset_variables();
            let sorted = |names: &std::collections::HashSet<String>| {
                let mut names: Vec<String> = names.iter().cloned().collect();
                names.sort();
                names
            };
            assert_eq!(sorted(&found.names), unset, "{source}");
            assert_eq!(sorted(&found.guarded), guarded, "{source}");
            // Still among the names a render reads, for reusing renders.
            for name in guarded {
                assert!(
                    template.undeclared_variables(false).contains(*name),
                    "{source}"
                );
            }
            if unset.is_empty() {
                assert!(
                    template.render(()).is_ok(),
                    "{source}: {:?}",
                    template.render(())
                );
            }
        }
    }

    #[test]
    fn first_words_are_whole_words() {
        let source = "xcwd {{ cwd }} cwd_2 é1 cwd";
        assert_eq!(first_word(source, "cwd"), Some(8));
        assert_eq!(first_word(source, "xcwd"), Some(0));
        assert_eq!(first_word(source, "cwd_2"), Some(15));
        assert_eq!(first_word(source, "é1"), Some(21));
        assert_eq!(first_word(source, "1"), None);
        assert_eq!(first_word(source, "wd"), None);
        assert_eq!(first_word(source, "cwd }}"), None);
        assert_eq!(first_word("é_x x", "x"), Some(5));
    }
}
