//! Declared context fields (`[context_fields]` in the manifest): their defaults have their
//! types, and every context's `extra` keys are declared and of the declared type.

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::entry::Entry;
use crate::load::schema_check::{article, json_type};
use crate::model::Context;
use crate::pointer::child_pointer;
use crate::problem::Problem;
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let Some(manifest) = workspace.valid_manifest() else {
        return;
    };
    for (name, field) in &manifest.value.context_fields {
        if let Some(default) = &field.default
            && !field.accepts(default)
        {
            out.error(
                Problem::WrongType {
                    expected: article(field.kind.name()),
                    found: json_type(default).into(),
                    instead: None,
                },
                manifest.value_span(&format!(
                    "{}/default",
                    child_pointer("/context_fields", name)
                )),
            );
        }
    }
    for entry in workspace.contexts.values() {
        check_context(workspace, entry, out);
    }
}

/// The MCP servers a context file writes itself have names of their own: a name is the
/// prefix of its server's tools in tool definitions, and a second server of one name was
/// listed twice in the prompt, its tools' names taken twice.
fn servers_named_once(entry: &Entry<Context>, out: &mut Diagnostics) {
    let Some(servers) = entry
        .document
        .value
        .get("mcp_servers")
        .and_then(|servers| servers.as_array())
    else {
        return;
    };
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (index, server) in servers.iter().enumerate() {
        let Some(name) = server.get("name").and_then(|name| name.as_str()) else {
            continue;
        };
        let pointer = format!("/mcp_servers/{index}/name");
        match first.get(name) {
            Some(&earlier) => {
                let earlier = entry.value_span(&format!("/mcp_servers/{earlier}/name"));
                out.push(
                    Diagnostic::new(
                        Problem::InvalidValue(crate::problem::InvalidValue::DuplicateServer {
                            name: name.to_string(),
                        }),
                        entry.value_span(&pointer),
                    )
                    .label(earlier, crate::problem::LabelKind::FirstDefinedHere),
                );
            }
            None => {
                first.insert(name, index);
            }
        }
    }
}

/// The `extra` keys a context file writes itself (inherited ones are checked in the file
/// that writes them).
pub fn check_context(workspace: &Workspace, entry: &Entry<Context>, out: &mut Diagnostics) {
    servers_named_once(entry, out);
    crate::load::context_extra::check_extra(
        &workspace.settings().context_fields,
        &entry.document,
        out,
    );
}
