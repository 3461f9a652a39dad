//! Finds, reads and compiles every template of the workspace: inline strings, template files
//! (which must stay inside the workspace), and text fields of tool specs.

use std::io;
use std::path::Path;

use crate::confine::Origin;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::Document;
use crate::load::document::child_pointer;
use crate::load::read::{display_path, read_source, resolve_inside};
use crate::model::Limits;
use crate::model::Parameter;
use crate::problem::Problem;
use crate::source::Sources;
use crate::span::Span;
use crate::templates::Templates;
use crate::workspace::Workspace;

/// The name under which the built-in tool format is registered.
pub const BUILTIN_TOOL_FORMAT: &str = "<built-in>/tool-format.md";

const BUILTIN_TOOL_FORMAT_TEXT: &str = include_str!("../tool_format.md");

pub fn register_all(workspace: &mut Workspace, diagnostics: &mut Diagnostics) -> io::Result<()> {
    let Workspace {
        root,
        sources,
        templates,
        components,
        variants,
        tools,
        manifest_entry,
        manifest,
        ..
    } = workspace;
    let mut registrar = Registrar {
        root,
        sources,
        templates,
        diagnostics,
        limits: &manifest.limits,
    };
    let builtin = registrar
        .sources
        .add(BUILTIN_TOOL_FORMAT.into(), BUILTIN_TOOL_FORMAT_TEXT.into());
    if let Err(diagnostic) = registrar
        .templates
        .add_file(registrar.sources, builtin, "", builtin)
    {
        registrar.diagnostics.push(diagnostic);
    }

    for entry in components.values() {
        let component = &entry.value;
        let doc = &entry.document;
        let found = registrar.pair(
            doc,
            entry.dir(),
            "",
            component.template.as_deref(),
            component.template_file.as_deref(),
        )?;
        if !found {
            // The template of `rules.toml` is `rules.md` beside it.
            let stem = entry.path.file_stem().unwrap_or_default().to_string_lossy();
            let sibling = entry.dir().join(format!("{stem}.md"));
            // Anything at that path, a FIFO or a dangling link too, is read (and refused with
            // its own reason) rather than called missing.
            if sibling.symlink_metadata().is_ok() {
                registrar.file(doc, "/template_file", &sibling, doc.key_span("/id"))?;
            } else {
                registrar.diagnostics.push(Diagnostic::new(
                    Problem::MissingTemplate {
                        expected_file: Some(
                            display_path(registrar.root, &sibling).display().to_string(),
                        ),
                    },
                    doc.key_span("/id"),
                ));
            }
        }
        for (family, alternative) in &component.families {
            let prefix = child_pointer("/families", family);
            let found = registrar.pair(
                doc,
                entry.dir(),
                &prefix,
                alternative.template.as_deref(),
                alternative.template_file.as_deref(),
            )?;
            if !found {
                registrar.diagnostics.push(Diagnostic::new(
                    Problem::MissingTemplate {
                        expected_file: None,
                    },
                    doc.key_span(&prefix),
                ));
            }
        }
    }

    for entry in variants.values() {
        let variant = &entry.value;
        let doc = &entry.document;
        registrar.pair(
            doc,
            entry.dir(),
            "",
            variant.template.as_deref(),
            variant.template_file.as_deref(),
        )?;
        registrar.named_pair(
            doc,
            entry.dir(),
            ("/tool_format", variant.tool_format.as_deref()),
            ("/tool_format_file", variant.tool_format_file.as_deref()),
        )?;
        for (id, change) in &variant.overrides.components {
            registrar.pair(
                doc,
                entry.dir(),
                &child_pointer("/overrides/components", id),
                change.template.as_deref(),
                change.template_file.as_deref(),
            )?;
        }
    }

    for entry in tools.values() {
        let tool = &entry.value;
        let doc = &entry.document;
        registrar.inline(doc, "/description", &tool.description);
        registrar.parameters(doc, "/parameters", &tool.parameters);
        for (family, spec) in &tool.families {
            let prefix = child_pointer("/families", family);
            if let Some(description) = &spec.description {
                registrar.inline(doc, &format!("{prefix}/description"), description);
            }
            if let Some(parameters) = &spec.parameters {
                registrar.parameters(doc, &format!("{prefix}/parameters"), parameters);
            }
        }
    }

    if let Some(entry) = manifest_entry {
        for (name, parameter) in &entry.value.parameters {
            registrar.parameter(
                &entry.document,
                &child_pointer("/parameters", name),
                parameter,
            );
        }
    }
    Ok(())
}

struct Registrar<'a> {
    root: &'a Path,
    sources: &'a mut Sources,
    templates: &'a mut Templates,
    diagnostics: &'a mut Diagnostics,
    limits: &'a Limits,
}

impl Registrar<'_> {
    /// A `template` / `template_file` pair under `prefix`. Returns whether one was given.
    fn pair(
        &mut self,
        doc: &Document,
        dir: &Path,
        prefix: &str,
        inline: Option<&str>,
        file: Option<&str>,
    ) -> io::Result<bool> {
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
    ) -> io::Result<bool> {
        match (inline, file) {
            (Some(_), Some(_)) => {
                self.diagnostics.push(
                    Diagnostic::new(Problem::TemplateAndFile, doc.key_span(file_pointer))
                        .label(doc.key_span(inline_pointer), "also set here"),
                );
                Ok(true)
            }
            (Some(text), None) => {
                self.inline(doc, inline_pointer, text);
                Ok(true)
            }
            (None, Some(relative)) => {
                let at = doc.value_span(file_pointer);
                match resolve_inside(self.root, dir, relative) {
                    Some(path) => self.file(doc, file_pointer, &path, at)?,
                    None => self.diagnostics.push(Diagnostic::new(
                        Problem::PathEscapesWorkspace {
                            path: relative.into(),
                        },
                        at,
                    )),
                }
                Ok(true)
            }
            (None, None) => Ok(false),
        }
    }

    fn inline(&mut self, doc: &Document, pointer: &str, text: &str) {
        let span = doc.value_span(pointer);
        if let Err(diagnostic) = self.templates.add_inline(self.sources, span, pointer, text) {
            self.diagnostics.push(diagnostic);
        }
    }

    fn file(&mut self, doc: &Document, pointer: &str, path: &Path, at: Span) -> io::Result<()> {
        // Missing, or a folder (`template_file = "."`): the field is what needs changing.
        if path.symlink_metadata().is_err() || path.is_dir() {
            self.diagnostics.push(Diagnostic::new(
                Problem::TemplateFileMissing {
                    path: display_path(self.root, path).display().to_string(),
                },
                at,
            ));
            return Ok(());
        }
        let display = display_path(self.root, path);
        let id = match self.sources.find(&display) {
            Some(id) => id,
            None => match read_source(
                self.sources,
                self.root,
                path,
                Origin::Workspace,
                self.limits.template(),
                self.limits.workspace(),
            )? {
                Ok(id) => id,
                Err(diagnostic) => {
                    self.diagnostics.push(diagnostic);
                    return Ok(());
                }
            },
        };
        if let Err(diagnostic) = self
            .templates
            .add_file(self.sources, doc.source, pointer, id)
        {
            self.diagnostics.push(diagnostic);
        }
        Ok(())
    }

    fn parameters(&mut self, doc: &Document, prefix: &str, parameters: &[Parameter]) {
        for (index, parameter) in parameters.iter().enumerate() {
            self.parameter(doc, &format!("{prefix}/{index}"), parameter);
        }
    }

    fn parameter(&mut self, doc: &Document, pointer: &str, parameter: &Parameter) {
        if let Some(instruction) = &parameter.instruction {
            self.inline(doc, &format!("{pointer}/instruction"), instruction);
        }
        if let Some(usage) = &parameter.usage {
            self.inline(doc, &format!("{pointer}/usage"), usage);
        }
    }
}
