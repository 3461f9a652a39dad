//! Declared context fields (`[context_fields]` in the manifest): their defaults have their
//! types, and every context's `extra` keys are declared and of the declared type.

use crate::diagnostic::{Diagnostic, Diagnostics};
use indexmap::IndexMap;

use crate::load::document::Document;
use crate::load::entry::Entry;
use crate::load::schema_check::{article, json_type};
use crate::model::{Context, ContextField};
use crate::namespace::closest;
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
    check_extra(&workspace.settings().context_fields, &entry.document, out);
}

/// The `extra` keys of a context file's document against the fields `declared`: also run
/// on a file its schema refuses (an unknown key elsewhere in it), so that one report has
/// every problem of the file.
pub fn check_extra(
    declared: &IndexMap<String, ContextField>,
    document: &Document,
    out: &mut Diagnostics,
) {
    let Some(own) = document
        .value
        .get("extra")
        .and_then(|extra| extra.as_object())
    else {
        return;
    };
    // Undeclared, `extra` takes any key: one named like a field of the context (`mode`,
    // `cwd`) was most likely meant for the field, which it leaves as it was.
    if declared.is_empty() {
        let fields = top_level_keys();
        for key in own.keys().filter(|key| fields.contains(*key)) {
            out.push(Diagnostic::new(
                Problem::ExtraKeyIsAField { key: key.clone() },
                document.key_span(&child_pointer("/extra", key)),
            ));
        }
        return;
    }
    let mut expected: Option<std::sync::Arc<[String]>> = None;
    let fields = top_level_keys();
    for (key, value) in own {
        let pointer = child_pointer("/extra", key);
        match declared.get(key) {
            None => {
                let suggestion = closest(key, declared.keys());
                // A field of the context written below `[extra]` (TOML puts every key after a
                // table header in that table): it belongs at the top level.
                let top_level = suggestion.is_none() && fields.contains(key.as_str());
                out.error(
                    Problem::UnknownKey {
                        key: key.clone(),
                        expected: expected
                            .get_or_insert_with(|| declared.keys().cloned().collect())
                            .clone(),
                        suggestion,
                        belongs_in: top_level.then(String::new),
                        set_there: top_level && document.value.get(key.as_str()).is_some(),
                    },
                    document.key_span(&pointer),
                );
            }
            Some(field) if !field.accepts(value) => out.error(
                Problem::WrongType {
                    expected: article(field.kind.name()),
                    found: json_type(value).into(),
                    instead: None,
                },
                document.value_span(&pointer),
            ),
            Some(_) => {}
        }
    }
}

/// The keys of a context file's top level: the context's fields, and `extends`, which names
/// the context it builds on.
fn top_level_keys() -> std::collections::BTreeSet<String> {
    let mut keys = crate::namespace::context_fields();
    keys.insert("extends".to_string());
    keys
}
