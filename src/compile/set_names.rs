//! Values a run sets by name (`--set NAME=VALUE`, a request's `set`) under a name no template
//! or condition reads: they change nothing, and a mistyped `AGENT_NAM` left the prompt as it
//! was without a word. Each is told with the near name that is read.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use crate::namespace::Namespace;
use crate::workspace::Workspace;

/// What templates and conditions of one workspace read, to tell which set names they do not;
/// each part worked out at its first use, once per workspace (a run-time workspace answers
/// many requests).
#[derive(Default)]
pub struct UnreadSetNames {
    readable: OnceLock<Namespace>,
    /// Every name a template reads, defined or not: one read only where it is asked whether
    /// it is defined takes the value set.
    read_by_templates: OnceLock<BTreeSet<String>>,
    /// Every path below the context's `extra` that a template or condition reads, or `None`
    /// when one reads `extra` whole (any key may be read).
    extra_read: OnceLock<Option<BTreeSet<String>>>,
}

impl UnreadSetNames {
    /// Of the names a run sets on `workspace` (as given: placeholders, context fields, paths
    /// into them), those nothing reads, each with the near name that is read. A context field
    /// is set into the context and read there, but for a path into `extra`, which is told too.
    /// `workspace` is the same at every call.
    pub fn among<'n>(
        &self,
        workspace: &Workspace,
        set: impl Iterator<Item = &'n str>,
    ) -> Vec<(String, Option<String>)> {
        let fields = crate::namespace::context_fields();
        let mut unread = Vec::new();
        let mut extra_paths = Vec::new();
        for name in set {
            let first = name.split('.').next().unwrap_or(name);
            if first == crate::namespace::EXTRA && name.contains('.') {
                extra_paths.push(name);
                continue;
            }
            if fields.contains(first) {
                continue;
            }
            let readable = self
                .readable
                .get_or_init(|| crate::validate::readable_names(workspace));
            let read = self
                .read_by_templates
                .get_or_init(|| workspace.templates.variables_anywhere());
            if !readable.contains(name) && !read.contains(name) {
                let near = crate::namespace::closest(name, readable.names());
                unread.push((name.to_string(), near));
            }
        }
        if extra_paths.is_empty() {
            return unread;
        }
        let Some(read) = self.extra_read.get_or_init(|| extra_paths_read(workspace)) else {
            return unread;
        };
        // A path read whole (`extra.cfg` for `extra.cfg.depth`) or below it reads it.
        let below = |path: &str, above: &str| {
            path.strip_prefix(above)
                .is_some_and(|rest| rest.starts_with('.'))
        };
        for path in extra_paths {
            let is_read = read
                .iter()
                .any(|other| other == path || below(other, path) || below(path, other));
            if !is_read {
                unread.push((path.to_string(), crate::namespace::closest(path, read)));
            }
        }
        unread
    }
}

/// What templates and conditions read of the context's `extra` table: every path below it
/// that some template or condition reads (`extra.project`, `extra.cfg.depth`), or `None` when
/// one reads it whole, so that any key may be read (`extra[name]`, a loop over it, `extra`
/// handed to a macro or a filter, a template that does not compile).
fn extra_paths_read(workspace: &Workspace) -> Option<BTreeSet<String>> {
    let mut read = BTreeSet::new();
    let templates = &workspace.templates;
    for template in templates.ids() {
        if !templates
            .variables(template)
            .iter()
            .any(|name| name == crate::namespace::EXTRA)
        {
            continue;
        }
        let compiled = templates.template(template).ok()?;
        for path in compiled.undeclared_variables(true) {
            read_below_extra(&path, &mut read)?;
        }
    }
    let env = templates.env();
    for condition in crate::resolve::conditions::all_conditions(workspace) {
        if !condition.contains(crate::namespace::EXTRA) {
            continue;
        }
        let expression = env.compile_expression(condition).ok()?;
        for path in expression.undeclared_variables(true) {
            read_below_extra(&path, &mut read)?;
        }
    }
    Some(read)
}

/// Adds `path` to `read` if it is below `extra`; `None` if it is `extra` itself. (A map has
/// no methods in promptc's templates, so `extra.items` is a key, not a call on the map.)
fn read_below_extra(path: &str, read: &mut BTreeSet<String>) -> Option<()> {
    if path == crate::namespace::EXTRA {
        return None;
    }
    if path.split('.').next() == Some(crate::namespace::EXTRA) {
        read.insert(path.to_string());
    }
    Some(())
}
