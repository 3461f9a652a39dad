//! Filters and tests a template or condition names that templates do not have (`x | uper`,
//! `x is plann`): a render fails on one only where it reaches it, so one in a branch no
//! context of the matrix takes passed `validate` and failed the first request that took it.
//! Found in each template's text, every branch of it, by `validate` alone (with the other
//! checks of templates' text, see [`super::context_paths`]); in conditions, by the checks of
//! conditions every load makes.

use minijinja::{CallableKind, Environment, NamedCallable};

use crate::diagnostic::{Diagnostic, Diagnostics, MAX_PROBLEMS_PER_FILE};
use crate::namespace::closest;
use crate::problem::Problem;
use crate::templates::TemplateId;
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let templates = &workspace.templates;
    let mut ids: Vec<TemplateId> = templates.ids().collect();
    ids.sort_by_key(|id| templates.name(*id));
    for id in ids {
        let Ok(template) = templates.template(id) else {
            continue;
        };
        // Most templates name neither (plain text): their text is not read again.
        let source = template.source();
        if !source.contains('|') && !source.contains("is") && !source.contains("filter") {
            continue;
        }
        let mut told = 0;
        for named in template.filters_and_tests() {
            // As many as a file's report shows: the rest fail their renders as they would.
            if told >= MAX_PROBLEMS_PER_FILE {
                break;
            }
            let range = named.range.clone();
            let Some(problem) = unknown(templates.env(), named) else {
                continue;
            };
            let Some(span) = templates.span_in(templates.name(id), range) else {
                continue;
            };
            told += 1;
            out.push(Diagnostic::new(problem, span));
        }
    }
}

/// The problem with a filter or test that `env` does not have; `None` for one it has.
pub fn unknown(env: &Environment<'_>, named: NamedCallable) -> Option<Problem> {
    let has = match named.kind {
        CallableKind::Filter => env.filter_names().any(|name| name == named.name),
        CallableKind::Test => env.test_names().any(|name| name == named.name),
    };
    if has {
        return None;
    }
    let known: Vec<String> = match named.kind {
        CallableKind::Filter => env.filter_names().map(str::to_owned).collect(),
        CallableKind::Test => env.test_names().map(str::to_owned).collect(),
    };
    let suggestion = closest(&named.name, known.iter());
    let name = named.name;
    Some(match named.kind {
        CallableKind::Filter => Problem::UnknownFilter {
            name,
            suggestion,
            known,
        },
        CallableKind::Test => Problem::UnknownTest {
            name,
            suggestion,
            known,
        },
    })
}
