//! Prompt-cache stability. Providers cache a prompt's prefix; the first value that changes
//! between requests (the date, the working directory, the mode, anything the manifest marks
//! volatile) ends what can be reused. It is found by compiling a second time with every
//! volatile value changed and comparing: the common prefix is the stable one.

use sha2::{Digest, Sha256};

use crate::compile::{Compiler, Request};
use crate::compiled::Compiled;
use crate::diagnostic::Diagnostic;
use crate::model::StandardPlaceholder;
use crate::problem::Problem;
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
    let encoding = workspace.settings().tokens.encoding_for(&compiled.family);
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
    Some(StablePrefix {
        bytes,
        tokens: encoding.count(prefix),
        percent: (bytes * 100).checked_div(prompt.len()).unwrap_or(100),
        sha256: Sha256::digest(prefix.as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect(),
        section,
    })
}

/// The warning for a volatile value early in the prompt, if there is one.
pub fn volatile_warning(
    compiler: &Compiler<'_>,
    request: &Request,
    compiled: &Compiled,
    context: &str,
) -> Option<Diagnostic> {
    let workspace = compiler.workspace();
    let threshold = usize::from(workspace.settings().tokens.stable_prefix_percent);
    if threshold == 0 {
        return None;
    }
    let prefix = stable_prefix(compiler, request, compiled)?;
    if prefix.percent >= threshold || prefix.bytes == compiled.prompt.len() {
        return None;
    }
    let variant = compiler.select(&request.selection).ok()?;
    let template = match &prefix.section {
        Some(id) => {
            let (template, _) = component_template(workspace, variant, id)?;
            template
        }
        None => variant.base,
    };
    // Point at the first volatile name the template reads, when it reads one itself.
    let span = workspace
        .templates
        .variables(template)
        .iter()
        .filter(|variable| {
            workspace
                .settings()
                .tokens
                .volatile
                .iter()
                .any(|v| v == *variable || v.eq_ignore_ascii_case(variable))
        })
        .filter_map(|variable| workspace.templates.find_name(template, variable))
        .min_by_key(|span| span.start)
        .or_else(|| workspace.templates.span_of(template))?;
    Some(Diagnostic::new(
        Problem::VolatileEarly {
            family: compiled.family.clone(),
            context: context.to_string(),
            percent: prefix.percent,
            section: prefix.section,
            volatile: workspace.settings().tokens.volatile.clone(),
        },
        span,
    ))
}
