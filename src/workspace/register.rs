//! Finds, reads and compiles every template of the workspace: inline strings, template files
//! (which must stay inside the workspace), and text fields of tool specs. Each spec comes out
//! as a definition carrying the ids of its templates.

use std::io;
use std::path::Path;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::confine::Origin;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::Document;
use crate::load::entry::Entry;
use crate::load::read::{display_path, read_source, resolve_inside};
use crate::model::{Component, Limits, Manifest, Parameter, ToolSpec, Variant};
use crate::pointer::child_pointer;
use crate::problem::{Form, InvalidValue, LabelKind, Problem};
use crate::source::Sources;
use crate::span::Span;
use crate::templates::{TemplateId, Templates};
use crate::workspace::{
    ComponentDef, FamilyTexts, ManifestDef, ParameterParts, ParameterTexts, ToolDef, ToolTexts,
    VariantDef, VariantTemplates,
};

/// Registers the templates of each kind of spec, turning specs into definitions.
pub struct Registrar<'a> {
    pub root: &'a Path,
    pub sources: &'a mut Sources,
    pub templates: &'a mut Templates,
    pub diagnostics: &'a mut Diagnostics,
    pub limits: &'a Limits,
    /// Folders listed so far for a file near a missing one (see [`near_file`]).
    pub near_lookups: usize,
}

impl Registrar<'_> {
    pub fn components(
        &mut self,
        specs: IndexMap<String, Entry<Component>>,
    ) -> io::Result<IndexMap<String, Entry<ComponentDef>>> {
        let mut definitions = IndexMap::with_capacity(specs.len());
        for (id, entry) in specs {
            let without_default = self.has_no_default(&entry);
            let (template, family_templates) = self.component_templates(&entry)?;
            let condition = entry.value.when.as_deref().map(Arc::from);
            let definition = entry.map(|spec| ComponentDef {
                spec,
                condition,
                template,
                family_templates,
                without_default,
            });
            definitions.insert(id, definition);
        }
        Ok(definitions)
    }

    pub fn variants(
        &mut self,
        specs: IndexMap<String, Entry<Variant>>,
    ) -> io::Result<IndexMap<String, Entry<VariantDef>>> {
        let mut definitions = IndexMap::with_capacity(specs.len());
        for (id, entry) in specs {
            let templates = self.variant_templates(&entry)?;
            definitions.insert(id, entry.map(|spec| VariantDef { spec, templates }));
        }
        Ok(definitions)
    }

    pub fn tools(
        &mut self,
        specs: IndexMap<String, Entry<ToolSpec>>,
    ) -> IndexMap<String, Entry<ToolDef>> {
        let mut definitions = IndexMap::with_capacity(specs.len());
        for (id, entry) in specs {
            let (texts, family_texts) = self.tool_texts(&entry);
            let definition = entry.map(|spec| ToolDef {
                spec,
                texts,
                family_texts,
            });
            definitions.insert(id, definition);
        }
        definitions
    }

    /// The templates of the partials folder (`paths.partials`), each registered under its
    /// workspace-relative path so that any template can include, import or extend it. A
    /// folder that is missing has none; one outside the workspace is reported by validation.
    pub fn partials(&mut self, folder: &str) -> io::Result<Vec<TemplateId>> {
        let Some(dir) = crate::load::read::data_folder(self.root, folder) else {
            return Ok(Vec::new());
        };
        let found = crate::load::partial_files(self.root, &dir)?;
        for error in found.refused {
            let display = error.path.clone();
            if let Err(diagnostic) = crate::load::read::refused(self.sources, display, error)? {
                self.diagnostics.push(diagnostic);
            }
        }
        let mut partials = Vec::with_capacity(found.files.len());
        for path in found.files {
            // Partials are read after the specs: one read already is a spec's own template
            // (`tool_format_file = "../partials/tool.md"`), used whether or not a tag names
            // it, so it is no partial that could go unused.
            let named_by_a_spec = self.sources.find(&display_path(self.root, &path)).is_some();
            if let Some(id) = self.read_template(&path, None)?
                && !named_by_a_spec
            {
                partials.push(id);
            }
        }
        Ok(partials)
    }

    /// The manifest's shared parameters, with their texts.
    pub fn manifest(&mut self, manifest: Entry<Manifest>) -> Entry<ManifestDef> {
        let shared_parameters = manifest
            .value
            .parameters
            .iter()
            .map(|(name, parameter)| {
                let pointer = child_pointer("/parameters", name);
                let texts = self.parameter(&manifest.document, &pointer, parameter);
                (name.clone(), ParameterParts::new(parameter, texts))
            })
            .collect();
        manifest.map(|spec| ManifestDef {
            spec,
            shared_parameters,
        })
    }
}

/// A `template` / `template_file` pair: not given, or given (and compiled, unless it was
/// reported).
enum Pair {
    Absent,
    Given(Option<TemplateId>),
}

impl Pair {
    fn template(self) -> Option<TemplateId> {
        match self {
            Pair::Absent => None,
            Pair::Given(template) => template,
        }
    }
}

impl Registrar<'_> {
    /// A component's own template (`None` when it is missing or does not compile, reported)
    /// and its families' templates.
    fn component_templates(
        &mut self,
        entry: &Entry<Component>,
    ) -> io::Result<(Option<TemplateId>, IndexMap<String, TemplateId>)> {
        let component = &entry.value;
        let doc = &entry.document;
        let own = match self.pair(
            doc,
            entry.dir(),
            "",
            component.template.as_deref(),
            component.template_file.as_deref(),
        )? {
            Pair::Given(template) => template,
            Pair::Absent if self.has_no_default(entry) => None,
            Pair::Absent => self.sibling_template(entry)?,
        };
        let mut families = IndexMap::new();
        for (family, alternative) in &component.families {
            let prefix = child_pointer("/families", family);
            match self.pair(
                doc,
                entry.dir(),
                &prefix,
                alternative.template.as_deref(),
                alternative.template_file.as_deref(),
            )? {
                Pair::Given(Some(template)) => {
                    families.insert(family.clone(), template);
                }
                Pair::Given(None) => {}
                Pair::Absent => self.diagnostics.push(Diagnostic::new(
                    Problem::MissingTemplate {
                        expected_file: None,
                        near: None,
                    },
                    doc.key_span(&prefix),
                )),
            }
        }
        Ok((own, families))
    }

    /// A component that names no template, has no `.md` beside it, and gives its families
    /// templates of their own: it has no default by design (a variant of a family without one
    /// is reported by validation).
    fn has_no_default(&self, entry: &Entry<Component>) -> bool {
        let component = &entry.value;
        component.template.is_none()
            && component.template_file.is_none()
            && !component.families.is_empty()
            && entry.path.with_extension("md").symlink_metadata().is_err()
    }

    /// The template of `rules.toml` that names none: `rules.md` beside it.
    fn sibling_template(&mut self, entry: &Entry<Component>) -> io::Result<Option<TemplateId>> {
        let doc = &entry.document;
        let stem = entry.path.file_stem().unwrap_or_default().to_string_lossy();
        let sibling = entry.dir().join(format!("{stem}.md"));
        crate::looked_at::name(&sibling);
        // Anything at that path, a FIFO or a dangling link too, is read (and refused with
        // its own reason) rather than called missing.
        if sibling.symlink_metadata().is_ok() {
            return self.file(&sibling, doc.key_span("/id"), None);
        }
        // A template file renamed (`capability.md`), which no other file of the folder
        // claims as its own (`tool_list.md` beside `tool_list.toml` is that component's).
        let written = format!("{stem}.md");
        let near = self
            .near_file(&sibling, Some((doc.key_span("/id"), &written)))
            .filter(|near| {
                let near = entry.dir().join(near);
                !["toml", "yaml", "yml", "json"]
                    .iter()
                    .any(|extension| near.with_extension(extension).symlink_metadata().is_ok())
            })
            .map(|near| {
                display_path(self.root, &entry.dir().join(near))
                    .display()
                    .to_string()
            });
        self.diagnostics.push(Diagnostic::new(
            Problem::MissingTemplate {
                expected_file: Some(display_path(self.root, &sibling).display().to_string()),
                near,
            },
            doc.key_span("/id"),
        ));
        Ok(None)
    }

    fn variant_templates(&mut self, entry: &Entry<Variant>) -> io::Result<VariantTemplates> {
        let variant = &entry.value;
        let doc = &entry.document;
        let base = self
            .pair(
                doc,
                entry.dir(),
                "",
                variant.template.as_deref(),
                variant.template_file.as_deref(),
            )?
            .template();
        let tool_format = self
            .named_pair(
                doc,
                entry.dir(),
                ("/tool_format", variant.tool_format.as_deref()),
                ("/tool_format_file", variant.tool_format_file.as_deref()),
            )?
            .template();
        let mut overrides = IndexMap::new();
        for (id, change) in &variant.overrides.components {
            let pair = self.pair(
                doc,
                entry.dir(),
                &child_pointer("/overrides/components", id),
                change.template.as_deref(),
                change.template_file.as_deref(),
            )?;
            if let Some(template) = pair.template() {
                overrides.insert(id.clone(), template);
            }
        }
        Ok(VariantTemplates {
            base,
            tool_format,
            overrides,
        })
    }

    /// A tool's texts: the generic spec's and each family's.
    fn tool_texts(
        &mut self,
        entry: &Entry<ToolSpec>,
    ) -> (ToolTexts, IndexMap<String, FamilyTexts>) {
        let tool = &entry.value;
        let doc = &entry.document;
        let description = self.inline(doc, "/description", &tool.description);
        // A `for_each` tool's name comes from its item, so it is a template; any other's is
        // plain text.
        let templated = tool.for_each.is_some();
        let name = tool
            .name
            .as_ref()
            .filter(|_| templated)
            .and_then(|name| self.inline(doc, "/name", name));
        let parameters = self.parameters(doc, "/parameters", &tool.parameters);
        let mut families = IndexMap::new();
        for (family, spec) in &tool.families {
            let prefix = child_pointer("/families", family);
            let texts = FamilyTexts {
                when: spec.when.as_deref().map(Arc::from),
                name: spec
                    .name
                    .as_ref()
                    .filter(|_| templated)
                    .and_then(|name| self.inline(doc, &format!("{prefix}/name"), name)),
                description: spec.description.as_ref().and_then(|description| {
                    self.inline(doc, &format!("{prefix}/description"), description)
                }),
                parameters: spec.parameters.as_ref().map(|parameters| {
                    self.parameters(doc, &format!("{prefix}/parameters"), parameters)
                }),
            };
            families.insert(family.clone(), texts);
        }
        (
            ToolTexts {
                when: tool.when.as_deref().map(Arc::from),
                name,
                description,
                parameters,
            },
            families,
        )
    }

    /// A `template` / `template_file` pair under `prefix`.
    fn pair(
        &mut self,
        doc: &Document,
        dir: &Path,
        prefix: &str,
        inline: Option<&str>,
        file: Option<&str>,
    ) -> io::Result<Pair> {
        self.named_pair(
            doc,
            dir,
            (&format!("{prefix}/template"), inline),
            (&format!("{prefix}/template_file"), file),
        )
    }

    fn named_pair(
        &mut self,
        doc: &Document,
        dir: &Path,
        (inline_pointer, inline): (&str, Option<&str>),
        (file_pointer, file): (&str, Option<&str>),
    ) -> io::Result<Pair> {
        Ok(match (inline, file) {
            (Some(_), Some(_)) => {
                self.diagnostics.push(
                    Diagnostic::new(Problem::TemplateConflict, doc.key_span(file_pointer))
                        .label(doc.key_span(inline_pointer), LabelKind::AlsoSetHere),
                );
                Pair::Given(None)
            }
            (Some(text), None) => Pair::Given(self.inline(doc, inline_pointer, text)),
            (None, Some(relative)) => {
                let at = doc.value_span(file_pointer);
                // No file has an empty name or a NUL in it: said as such, not as a missing
                // folder or a link out of the workspace.
                let malformed = if relative.trim().is_empty() {
                    Some(InvalidValue::Empty)
                } else if relative.contains('\0') {
                    Some(InvalidValue::BadForm {
                        value: format!("{relative:?}"),
                        key: false,
                        expected: Form::FilePath,
                    })
                } else {
                    None
                };
                if let Some(invalid) = malformed {
                    self.diagnostics.error(Problem::InvalidValue(invalid), at);
                    return Ok(Pair::Given(None));
                }
                match resolve_inside(self.root, dir, relative) {
                    Some(path) => Pair::Given(self.file(&path, at, Some((at, relative)))?),
                    None => {
                        let problem =
                            match crate::load::read::relative_form(self.root, dir, relative) {
                                Some(inside) => Problem::AbsolutePath {
                                    path: relative.into(),
                                    relative: inside,
                                },
                                None => Problem::PathEscapesWorkspace {
                                    path: relative.into(),
                                    default_of: None,
                                    through_link: crate::confine::inside_as_written(relative),
                                },
                            };
                        self.diagnostics.push(Diagnostic::new(problem, at));
                        Pair::Given(None)
                    }
                }
            }
            (None, None) => Pair::Absent,
        })
    }

    fn inline(&mut self, doc: &Document, pointer: &str, text: &str) -> Option<TemplateId> {
        let span = doc.value_span(pointer);
        self.templates
            .add_inline(self.sources, span, pointer, text)
            .map_err(|diagnostic| self.diagnostics.push(diagnostic))
            .ok()
    }

    /// A template file expected because of `at`; a refused one is reported at `named_at`,
    /// the field naming it with the path it writes, or else at the file itself (a component's
    /// sibling `.md`, which no field names).
    fn file(
        &mut self,
        path: &Path,
        at: Span,
        named_at: Option<(Span, &str)>,
    ) -> io::Result<Option<TemplateId>> {
        // Missing, or a folder (`template_file = "."`): the field is what needs changing. A
        // link is judged by where it leads (a dangling one is reported as such by the read).
        crate::looked_at::name(path);
        let missing = match path.symlink_metadata() {
            Err(_) => true,
            Ok(metadata) if metadata.file_type().is_symlink() => path.is_dir(),
            Ok(metadata) => metadata.is_dir(),
        };
        if missing {
            let suggestion = self.near_file(path, named_at);
            self.diagnostics.push(Diagnostic::new(
                Problem::TemplateFileMissing {
                    path: display_path(self.root, path).display().to_string(),
                    suggestion,
                    named: named_at.is_some(),
                },
                at,
            ));
            return Ok(None);
        }
        self.read_template(path, named_at.map(|(span, _)| span))
    }

    /// [`near_file`] for a template file a field names, while fewer than
    /// [`MAX_NEAR_LOOKUPS`] folders have been listed for one: a workspace of thousands of
    /// variants naming missing files listed a large folder for each.
    fn near_file(&mut self, path: &Path, named_at: Option<(Span, &str)>) -> Option<String> {
        let (_, written) = named_at?;
        if self.near_lookups >= MAX_NEAR_LOOKUPS {
            return None;
        }
        self.near_lookups += 1;
        near_file(self.root, path, written)
    }

    /// Reads (once) and compiles a template file that exists.
    fn read_template(
        &mut self,
        path: &Path,
        named_at: Option<Span>,
    ) -> io::Result<Option<TemplateId>> {
        let display = display_path(self.root, path);
        let id = match self.sources.find(&display) {
            Some(id) => {
                // Refused already where its folder was walked (and recorded empty there):
                // the field naming it is what leads to it, so it is told why too.
                if let Some(at) = named_at
                    && let Some(refusal) = self.refusal_at_start_of(id)
                {
                    self.diagnostics.push(Diagnostic::new(refusal, at));
                    return Ok(None);
                }
                id
            }
            None => match read_source(
                self.sources,
                self.root,
                path,
                Origin::Workspace,
                (self.limits.template(), self.limits.workspace()),
                named_at,
            )? {
                Ok(id) => id,
                Err(diagnostic) => {
                    self.diagnostics.push(diagnostic);
                    return Ok(None);
                }
            },
        };
        Ok(self
            .templates
            .add_file(self.sources, id)
            .map_err(|diagnostic| self.diagnostics.push(diagnostic))
            .ok())
    }

    /// The refusal reported at the start of file `id`, if it was refused.
    fn refusal_at_start_of(&self, id: crate::source::SourceId) -> Option<Problem> {
        let start = Span::file_start(id);
        self.diagnostics
            .iter()
            .find(|d| d.span == start && matches!(d.problem, Problem::PathRefused { .. }))
            .map(|d| d.problem.clone())
    }

    fn parameters(
        &mut self,
        doc: &Document,
        prefix: &str,
        parameters: &[Parameter],
    ) -> Vec<ParameterParts> {
        parameters
            .iter()
            .enumerate()
            .map(|(index, parameter)| {
                let texts = self.parameter(doc, &format!("{prefix}/{index}"), parameter);
                ParameterParts::new(parameter, texts)
            })
            .collect()
    }

    fn parameter(
        &mut self,
        doc: &Document,
        pointer: &str,
        parameter: &Parameter,
    ) -> ParameterTexts {
        ParameterTexts {
            instruction: parameter.instruction.as_ref().and_then(|instruction| {
                self.inline(doc, &format!("{pointer}/instruction"), instruction)
            }),
            usage: parameter
                .usage
                .as_ref()
                .and_then(|usage| self.inline(doc, &format!("{pointer}/usage"), usage)),
            note: parameter
                .note
                .as_ref()
                .and_then(|note| self.inline(doc, &format!("{pointer}/note"), note)),
        }
    }
}

/// The file beside `path` (a template file that is not there) whose name is nearest its own,
/// written as `written` (the field's path) is: `generic.md` for `generc.md`. Data files are
/// no templates, and are not offered. Only a folder inside the workspace `root` is looked at,
/// and only one of at most [`NEAR_FILES_LOOKED_AT`] entries; and only for a path written to
/// end in the file's name (not `generc.md/`).
fn near_file(root: &Path, path: &Path, written: &str) -> Option<String> {
    let folder = path.parent()?;
    crate::confine::real_path_inside(root, folder).ok()?;
    let name = path.file_name()?.to_str()?;
    let (written_folder, written_name) = match written.rsplit_once('/') {
        Some((folder, last)) => (Some(folder), last),
        None => (None, written),
    };
    if written_name != name {
        return None;
    }
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .ok()?
        .take(NEAR_FILES_LOOKED_AT + 1)
        .filter_map(|entry| {
            let entry = entry.ok()?;
            entry.file_type().ok()?.is_file().then_some(())?;
            let name = entry.file_name().into_string().ok()?;
            crate::load::document::Format::of(Path::new(&name))
                .is_none()
                .then_some(name)
        })
        .collect();
    // Past the limit, which entries were looked at would depend on the order the system
    // lists them in; sorted, the one chosen of two as near is the same whatever that order.
    if names.len() > NEAR_FILES_LOOKED_AT {
        return None;
    }
    names.sort();
    let near = crate::namespace::closest(name, &names)?;
    Some(match written_folder {
        Some(folder) => format!("{folder}/{near}"),
        None => near,
    })
}

/// The most folders listed in one load for files near missing ones.
const MAX_NEAR_LOOKUPS: usize = 20;

/// The most entries of a folder looked at for a file name near a missing one.
const NEAR_FILES_LOOKED_AT: usize = 10_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_near_file_is_a_template_beside_the_missing_one_written_as_the_field_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("variants")).unwrap();
        for name in ["generic.md", "gpt.toml", "xs.toml"] {
            std::fs::write(root.join("variants").join(name), "x").unwrap();
        }
        std::fs::create_dir(root.join("variants/gemini")).unwrap();
        let near = |missing: &str, written: &str| {
            near_file(&root, &root.join("variants").join(missing), written)
        };
        assert_eq!(
            near("generc.md", "generc.md").as_deref(),
            Some("generic.md")
        );
        assert_eq!(
            near("generc.md", "./generc.md").as_deref(),
            Some("./generic.md")
        );
        // Data files and folders are no templates.
        assert_eq!(near("gpt.md", "gpt.md"), None);
        assert_eq!(near("xs.yaml", "xs.yaml"), None);
        assert_eq!(near("gemini", "gemini"), None);
        // A path not written to end in the file's name gets none.
        assert_eq!(near("generc.md", "generc.md/"), None);
    }
}
