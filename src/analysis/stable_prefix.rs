//! Prompt-cache stability. Providers cache a prompt's prefix; the first value that changes
//! between requests (the date, the working directory, the mode, anything the manifest marks
//! volatile) ends what can be reused. It is found by compiling a second time with every
//! volatile value changed and comparing: the common prefix is the stable one.

use sha2::{Digest, Sha256};

use crate::compile::{Compiler, Request};
use crate::compiled::Compiled;
use crate::diagnostic::Diagnostic;
use crate::model::{LintLevel, StandardPlaceholder};
use crate::problem::Problem;
use crate::resolve::tool_spec::resolve_tool;
use crate::templates::TemplateId;
use crate::workspace::Workspace;
use crate::workspace::template_choice::component_template;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StablePrefix {
    pub bytes: usize,
    pub tokens: usize,
    /// How far into the prompt (by bytes) the first volatile value sits.
    pub percent: usize,
    /// SHA-256 of the prefix, hex: equal hashes mean a shared cache entry.
    pub sha256: String,
    /// The section holding the first volatile value, when one does.
    pub section: Option<String>,
}

/// The request with every volatile value changed.
fn probe(workspace: &Workspace, request: &Request) -> Request {
    let mut probe = request.clone();
    for name in &workspace.settings().tokens.volatile {
        let changed = StandardPlaceholder::named(name)
            .is_some_and(|placeholder| placeholder.perturb(&mut probe.context));
        if !changed {
            probe
                .set
                .insert(name.clone(), StandardPlaceholder::probe_text().into());
        }
    }
    probe
}

/// The stable prefix of a compiled prompt; `None` when the probe does not compile.
pub fn stable_prefix(
    compiler: &Compiler<'_>,
    request: &Request,
    compiled: &Compiled,
) -> Option<StablePrefix> {
    let (mut prefix, _) = probe_and_compare(compiler, request, compiled)?;
    let encoding = compiler
        .workspace()
        .settings()
        .tokens
        .encoding_for(&compiled.family);
    prefix.tokens = encoding.count(&compiled.prompt[..prefix.bytes]);
    Some(prefix)
}

/// The stable prefix, its tokens not counted (the warning needs none), and the prompt
/// compiled with every volatile value changed.
fn probe_and_compare(
    compiler: &Compiler<'_>,
    request: &Request,
    compiled: &Compiled,
) -> Option<(StablePrefix, Compiled)> {
    let workspace = compiler.workspace();
    let probed = compiler.compile(&probe(workspace, request)).ok()?;
    let prompt = &compiled.prompt;
    let mut bytes = prompt
        .bytes()
        .zip(probed.prompt.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !prompt.is_char_boundary(bytes) {
        bytes -= 1;
    }
    let prefix = &prompt[..bytes];
    // The first changed line lies in some changed sections (a section may hold others); the
    // smallest of them is the one to blame.
    let line_start = prefix.rfind('\n').map_or(0, |i| i + 1);
    let line_end = prompt[bytes..]
        .find('\n')
        .map_or(prompt.len(), |i| bytes + i);
    let changed_line = prompt[line_start..line_end].trim();
    let section = compiled
        .sections
        .iter()
        .zip(&probed.sections)
        .filter(|(ours, theirs)| ours.text != theirs.text && ours.text.contains(changed_line))
        .min_by_key(|(ours, _)| ours.text.len())
        .map(|(ours, _)| ours.id.clone());
    let prefix = StablePrefix {
        bytes,
        tokens: 0,
        percent: (bytes * 100).checked_div(prompt.len()).unwrap_or(100),
        sha256: Sha256::digest(prefix.as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect(),
        section,
    };
    Some((prefix, probed))
}

/// The warning for a volatile value early in the prompt, if there is one, at the place that
/// holds the value: the component's template, the tool text, or else the base template.
pub fn volatile_warning(
    compiler: &Compiler<'_>,
    request: &Request,
    compiled: &Compiled,
    context: &str,
) -> Option<Diagnostic> {
    let workspace = compiler.workspace();
    let settings = &workspace.settings().tokens;
    let threshold = usize::from(settings.stable_prefix_percent);
    if threshold == 0 || settings.stable_prefix_level == LintLevel::Off {
        return None;
    }
    let (prefix, probed) = probe_and_compare(compiler, request, compiled)?;
    if prefix.percent >= threshold || prefix.bytes == compiled.prompt.len() {
        return None;
    }
    let variant = compiler.variant(&compiled.variant)?;
    let template = match &prefix.section {
        Some(id) => {
            let (template, _) = component_template(workspace, variant, id)?;
            template
        }
        None => changed_tool_text(workspace, variant.family(), compiled, &probed)
            .unwrap_or(variant.base),
    };
    // Point at the first volatile name the template reads, when it reads one itself.
    let span = workspace
        .templates
        .variables(template)
        .iter()
        .filter(|variable| {
            settings
                .volatile
                .iter()
                .any(|v| v == *variable || v.eq_ignore_ascii_case(variable))
        })
        .filter_map(|variable| workspace.templates.find_name(template, variable))
        .min_by_key(|span| span.start)
        .or_else(|| workspace.templates.span_of(template))?;
    Some(Diagnostic::new(
        Problem::VolatileEarly {
            outputs: vec![format!("{} × {context}", compiled.family)],
            percent: prefix.percent,
            section: prefix.section,
            volatile: settings.volatile.clone(),
            error: settings.stable_prefix_level == LintLevel::Error,
        },
        span,
    ))
}

/// The first tool text (a description, or a parameter's instruction, usage or note) that
/// the probe changed: the template that holds the volatile value when no section does.
fn changed_tool_text(
    workspace: &Workspace,
    family: &str,
    compiled: &Compiled,
    probed: &Compiled,
) -> Option<TemplateId> {
    compiled
        .tools
        .iter()
        .zip(&probed.tools)
        .find_map(|(ours, theirs)| {
            let tool = resolve_tool(workspace, &ours.id, family)?;
            if ours.description != theirs.description {
                // Unless only a parameter's note, added to the description, changed.
                let own_notes_same = ours
                    .parameters
                    .iter()
                    .zip(&theirs.parameters)
                    .all(|(a, b)| a.note == b.note);
                if own_notes_same {
                    return Some(tool.description);
                }
            }
            ours.parameters
                .iter()
                .zip(&theirs.parameters)
                .find_map(|(a, b)| {
                    let resolved = tool.parameters.iter().find(|p| p.name == a.name)?;
                    if a.instruction != b.instruction {
                        resolved.instruction
                    } else if a.usage != b.usage {
                        resolved.usage
                    } else if a.note != b.note {
                        resolved.note
                    } else {
                        None
                    }
                })
        })
}
