//! Every template of a workspace, compiled once into one minijinja environment, with where each
//! came from so a syntax or render error points into the right file.

use std::collections::HashMap;
use std::sync::OnceLock;

use minijinja::Environment;

use crate::diagnostic::Diagnostic;
use crate::model::Limits;
use crate::problem::Problem;
use crate::render::environment::new_environment;
use crate::source::{SourceId, Sources};
use crate::span::Span;

/// Where a template's text lies.
#[derive(Clone, Debug)]
struct Origin {
    source: SourceId,
    /// Byte offset of the template's first byte in the source, when the template's bytes
    /// appear there unchanged (template files, TOML literal strings); otherwise errors point
    /// at `fallback`.
    exact_start: Option<usize>,
    fallback: Span,
    /// Facts about the text, computed on first use and kept: a large template is scanned once
    /// however many names, errors and matrix entries ask about it.
    facts: OnceLock<Facts>,
}

#[derive(Clone, Debug, Default)]
struct Facts {
    /// Top-level names the template reads and does not set, sorted.
    variables: Vec<String>,
    /// Byte offset of the first whole-word occurrence of each identifier-like word.
    first_word: HashMap<String, usize>,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
}

pub struct Templates {
    env: Environment<'static>,
    /// (file, JSON pointer of the field naming the template) → template name.
    by_field: HashMap<(SourceId, String), String>,
    origins: HashMap<String, Origin>,
}

impl Templates {
    pub fn new(fuel: Option<u64>, limits: &Limits) -> Self {
        Self {
            env: new_environment(fuel, limits.render_bytes),
            by_field: HashMap::new(),
            origins: HashMap::new(),
        }
    }

    pub fn env(&self) -> &Environment<'static> {
        &self.env
    }

    /// Compiles a template given inline in a data file at `span` (the string's value span).
    pub fn add_inline(
        &mut self,
        sources: &Sources,
        span: Span,
        pointer: &str,
        text: &str,
    ) -> Result<(), Diagnostic> {
        let file = sources.get(span.source);
        let name = format!("{}#{}", file.path.display(), pointer);
        // Find the template's bytes inside the quoted value, if they are there verbatim.
        let exact_start = file
            .text
            .get(span.range())
            .and_then(|quoted| quoted.find(text).filter(|_| !text.is_empty()))
            .map(|offset| span.start + offset);
        let origin = Origin {
            source: span.source,
            exact_start,
            fallback: span,
            facts: OnceLock::new(),
        };
        self.add(span.source, pointer, name, text.to_string(), origin)
    }

    /// Compiles a template file (already read into `sources` as `file`). A file referenced
    /// from several places is compiled once.
    pub fn add_file(
        &mut self,
        sources: &Sources,
        referrer: SourceId,
        pointer: &str,
        file: SourceId,
    ) -> Result<(), Diagnostic> {
        let source = sources.get(file);
        let name = source.path.display().to_string();
        if self.origins.contains_key(&name) {
            self.by_field.insert((referrer, pointer.to_string()), name);
            return Ok(());
        }
        let origin = Origin {
            source: file,
            exact_start: Some(0),
            fallback: Span::new(file, 0..source.text.len()),
            facts: OnceLock::new(),
        };
        self.add(referrer, pointer, name, source.text.clone(), origin)
    }

    fn add(
        &mut self,
        referrer: SourceId,
        pointer: &str,
        name: String,
        text: String,
        origin: Origin,
    ) -> Result<(), Diagnostic> {
        self.origins.insert(name.clone(), origin);
        match self.env.add_template_owned(name.clone(), text) {
            Ok(()) => {
                self.by_field.insert((referrer, pointer.to_string()), name);
                Ok(())
            }
            Err(error) => Err(Diagnostic::new(
                Problem::TemplateSyntax {
                    message: error.detail().unwrap_or("invalid syntax").to_string(),
                },
                self.error_span(&error)
                    .unwrap_or(Span::file_start(referrer)),
            )),
        }
    }

    /// The name of the template a field (`template`, `template_file`, `description`, …) holds.
    pub fn lookup(&self, source: SourceId, pointer: &str) -> Option<&str> {
        self.by_field
            .get(&(source, pointer.to_string()))
            .map(String::as_str)
    }

    /// The template set by a `template`/`template_file` pair under `prefix`.
    pub fn lookup_pair(&self, source: SourceId, prefix: &str) -> Option<&str> {
        self.lookup(source, &format!("{prefix}/template"))
            .or_else(|| self.lookup(source, &format!("{prefix}/template_file")))
    }

    /// Names of every compiled template, for whole-workspace checks.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.origins.keys().map(String::as_str)
    }

    /// Maps a minijinja error to the place in the user's file it is about.
    pub fn error_span(&self, error: &minijinja::Error) -> Option<Span> {
        let name = error.name()?;
        if let Some(range) = error.range() {
            let range = error
                .template_source()
                .and_then(|source| unclosed_block(source, error, &range))
                .unwrap_or(range);
            return self.span_in(name, range);
        }
        let line = error.line()?;
        let offset = self
            .facts(name)?
            .line_starts
            .get(line.saturating_sub(1))
            .copied()?;
        self.span_in(name, offset..offset)
    }

    /// A byte range of a template's text, as a span of the file it lies in.
    pub fn span_in(&self, name: &str, range: std::ops::Range<usize>) -> Option<Span> {
        let origin = self.origins.get(name)?;
        Some(match origin.exact_start {
            // minijinja may point one past the end ("unexpected end of input"): keep the
            // span inside the template's text.
            Some(start) => {
                let end = origin.fallback.end.max(start);
                let clamp = |at: usize| (start + at).min(end);
                Span::new(origin.source, clamp(range.start)..clamp(range.end))
            }
            None => origin.fallback,
        })
    }

    /// Where a variable is first used in a template, for "undefined" diagnostics.
    pub fn find_name(&self, template: &str, variable: &str) -> Option<Span> {
        let offset = self
            .facts(template)?
            .first_word
            .get(variable)
            .copied()
            .unwrap_or(0);
        self.span_in(template, offset..offset + variable.len())
    }

    /// Top-level names a template reads that it does not set itself, sorted.
    pub fn variables(&self, template: &str) -> Vec<String> {
        self.facts(template)
            .map(|facts| facts.variables.clone())
            .unwrap_or_default()
    }

    fn facts(&self, name: &str) -> Option<&Facts> {
        let origin = self.origins.get(name)?;
        Some(origin.facts.get_or_init(|| {
            let Ok(template) = self.env.get_template(name) else {
                return Facts::default();
            };
            let mut variables: Vec<String> =
                template.undeclared_variables(false).into_iter().collect();
            variables.sort();
            let source = template.source();
            Facts {
                variables,
                first_word: first_words(source),
                line_starts: std::iter::once(0)
                    .chain(source.match_indices('\n').map(|(at, _)| at + 1))
                    .collect(),
            }
        }))
    }

    /// Where a problem with the template as a whole is reported: the start of its file, or
    /// its inline value.
    pub fn span_of(&self, name: &str) -> Option<Span> {
        self.origins
            .get(name)
            .map(|origin| match origin.exact_start {
                Some(0) if origin.fallback.start == 0 => Span::file_start(origin.source),
                _ => origin.fallback,
            })
    }

    /// All of the template's text: its whole file, or its inline value (for source maps).
    pub fn extent(&self, name: &str) -> Option<Span> {
        self.origins.get(name).map(|origin| origin.fallback)
    }
}

/// For a block left open (`{% if %}` without `{% endif %}`), minijinja's range runs from
/// somewhere after the opening tag to the end of the template; the tag left open is what needs
/// closing. It is found by pairing the block tags before the error.
fn unclosed_block(
    source: &str,
    error: &minijinja::Error,
    range: &std::ops::Range<usize>,
) -> Option<std::ops::Range<usize>> {
    let detail = error.detail()?;
    if !detail.starts_with("unexpected end of input") || detail.contains("variable block") {
        return None;
    }
    let before = source.get(..range.start)?;
    let mut open: Vec<std::ops::Range<usize>> = Vec::new();
    let mut rest = 0;
    while let Some(at) = before[rest..].find("{%").map(|at| rest + at) {
        let end = before[at..].find("%}").map_or(before.len(), |e| at + e + 2);
        let tag = &before[at..end];
        let keyword = tag
            .trim_start_matches("{%")
            .trim_start_matches(['-', '+'])
            .split_whitespace()
            .next()
            .unwrap_or_default();
        match keyword {
            "if" | "for" | "macro" | "call" | "filter" | "block" | "with" | "autoescape"
            | "raw" => open.push(at..end),
            // `{% set x %}…{% endset %}` opens a block; `{% set x = 1 %}` does not.
            "set" if !tag.contains('=') => open.push(at..end),
            k if k.starts_with("end") => {
                open.pop();
            }
            _ => {}
        }
        rest = end;
    }
    open.pop()
}

/// The offset of the first occurrence of each word (a maximal run of letters, digits and `_`).
fn first_words(source: &str) -> HashMap<String, usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut first = HashMap::new();
    let mut start = None;
    for (at, c) in source
        .char_indices()
        .chain(std::iter::once((source.len(), ' ')))
    {
        match (is_ident(c), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                first.entry(source[from..at].to_string()).or_insert(from);
                start = None;
            }
            _ => {}
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_at_the_end_of_a_template_points_inside_it() {
        let mut sources = Sources::default();
        let text = "Hello {{ 'unterminated";
        let file = sources.add("a.md".into(), text.into());
        let mut templates = Templates::new(None, &crate::model::Limits::default());
        let error = templates.add_file(&sources, file, "", file).unwrap_err();
        // minijinja reports 22..23, one byte past the end.
        assert_eq!(error.span.range(), text.len()..text.len(), "{error:?}");
    }

    #[test]
    fn first_words_are_whole_words() {
        let words = first_words("xcwd {{ cwd }} cwd_2 é1 cwd");
        assert_eq!(words.get("cwd"), Some(&8));
        assert_eq!(words.get("xcwd"), Some(&0));
        assert_eq!(words.get("cwd_2"), Some(&15));
        assert_eq!(words.get("é1"), Some(&21));
    }
}
