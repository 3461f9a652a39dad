//! The `extra` keys of a context file against the manifest's `[context_fields]`: declared,
//! and of the declared type. Part of the load, so that a file its schema refuses (an unknown
//! key elsewhere in it) still has them checked, and one report holds every problem of it.

use indexmap::IndexMap;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::Document;
use crate::load::schema_check::{article, json_type};
use crate::model::ContextField;
use crate::namespace::closest;
use crate::pointer::child_pointer;
use crate::problem::Problem;

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
                // table header in that table), or misspelt there (`mcp_server`): it belongs at
                // the top level.
                let near_field = suggestion
                    .is_none()
                    .then(|| closest(key, fields.iter()))
                    .flatten()
                    .filter(|field| field != key);
                let top_level =
                    suggestion.is_none() && (fields.contains(key.as_str()) || near_field.is_some());
                let set_there =
                    top_level && near_field.is_none() && document.value.get(key.as_str()).is_some();
                let suggestion = suggestion.or(near_field);
                out.error(
                    Problem::UnknownKey {
                        key: key.clone(),
                        expected: expected
                            .get_or_insert_with(|| declared.keys().cloned().collect())
                            .clone(),
                        suggestion,
                        belongs_in: top_level.then(String::new),
                        set_there,
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
