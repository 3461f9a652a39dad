//! Names a workspace declares for templates and conditions (predicates, placeholders) must not
//! take a name the template scope already has, where one would silently hide the other: a
//! predicate `yolo` would replace the context's `yolo` in every condition and template.
//!
//! What is an error (the README's "Templates and conditions" says the same):
//! - a predicate named like a context field, a standard placeholder, a name promptc defines
//!   (`family`, `variant`, `tools`, `enabled_tools`, `TOOLS`, `tool`), a section slot, or a
//!   variant placeholder;
//! - a variant placeholder named like a context field, a name promptc defines, a standard
//!   placeholder or a section slot (those always replace it);
//! - a context placeholder named like a context field, a name promptc defines, or a
//!   predicate.
//!
//! - a component's slot named like a context field, a name promptc defines or a standard
//!   placeholder (the section would silently replace `CWD` or the tool list);
//! - a `for_each` tool's item name (`as`) named like a context field, a name promptc
//!   defines, a standard placeholder, a slot, a variant placeholder or a predicate (the item
//!   would hide it from the tool's texts).
//!
//! A context placeholder (or `--set`) named like a standard placeholder, a slot or a variant
//! placeholder replaces it by design: that is how a runtime value overrides a default.

use std::collections::BTreeSet;

use crate::diagnostic::Diagnostics;
use crate::load::entry::Entry;
use crate::model::Context;
use crate::model::StandardPlaceholder;
use crate::namespace::{COMPILE_NAMES, context_fields};
use crate::pointer::child_pointer;
use crate::problem::{DeclaredName, Problem, TakenBy};
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let fields = context_fields();
    let slot_of = |name: &str| -> Option<TakenBy> {
        workspace
            .components
            .values()
            .find(|entry| entry.value.slot() == name)
            .map(|entry| TakenBy::SlotOf {
                component: entry.value.id.clone(),
            })
            .or_else(|| {
                workspace
                    .invalid
                    .slots
                    .contains(name)
                    .then_some(TakenBy::SomeComponentSlot)
            })
    };
    let placeholder_of = |name: &str| -> Option<TakenBy> {
        workspace
            .variants
            .values()
            .find(|entry| entry.value.placeholders.contains_key(name))
            .map(|entry| TakenBy::PlaceholderOf {
                variant: entry.value.id.clone(),
            })
    };

    if let Some(manifest) = workspace.valid_manifest() {
        for name in manifest.value.predicates.keys() {
            let taken_by = scope_name(&fields, name)
                .or_else(|| standard(name))
                .or_else(|| slot_of(name))
                .or_else(|| placeholder_of(name));
            if let Some(taken_by) = taken_by {
                out.error(
                    Problem::NameTaken {
                        name: name.clone(),
                        what: DeclaredName::Predicate,
                        taken_by,
                    },
                    manifest.key_span(&child_pointer("/predicates", name)),
                );
            }
        }
    }
    for entry in workspace.variants.values() {
        for name in entry.value.placeholders.keys() {
            let span = entry.key_span(&child_pointer("/placeholders", name));
            // Only a key TOML put in the table because it follows the `[placeholders]`
            // header, and that the file does not set at its top level: one written inline
            // (`placeholders = { … }`, or in YAML) is where its author put it. The schema is
            // asked last, and only then read (once per process).
            if !entry.document.writes(&child_pointer("", name))
                && under_placeholders_header(&workspace.sources.get(span.source).text, span.start)
                && is_variant_key(name)
            {
                out.push(crate::diagnostic::Diagnostic::new(
                    Problem::PlaceholderIsAKey { key: name.clone() },
                    span,
                ));
            }
            let taken_by = scope_name(&fields, name)
                .or_else(|| standard(name))
                .or_else(|| slot_of(name));
            if let Some(taken_by) = taken_by {
                out.error(
                    Problem::NameTaken {
                        name: name.clone(),
                        what: DeclaredName::VariantPlaceholder,
                        taken_by,
                    },
                    entry.key_span(&child_pointer("/placeholders", name)),
                );
            }
        }
    }
    for entry in workspace.components.values() {
        let slot = entry.value.slot();
        let taken_by = scope_name(&fields, &slot).or_else(|| standard(&slot));
        if let Some(taken_by) = taken_by {
            let span = if entry.value.slot.is_some() {
                entry.value_span("/slot")
            } else {
                entry.value_span("/id")
            };
            out.error(
                Problem::NameTaken {
                    name: slot,
                    what: DeclaredName::ComponentSlot,
                    taken_by,
                },
                span,
            );
        }
    }
    // A `for_each` item is in scope in its tool's texts only, where it would hide the value
    // of the same name from them.
    for entry in workspace.tools.values() {
        let Some(name) = entry.value.item_name.as_deref() else {
            continue;
        };
        let taken_by = scope_name(&fields, name)
            .or_else(|| standard(name))
            .or_else(|| slot_of(name))
            .or_else(|| placeholder_of(name))
            .or_else(|| predicate(workspace, name));
        if let Some(taken_by) = taken_by {
            out.error(
                Problem::NameTaken {
                    name: name.to_string(),
                    what: DeclaredName::ItemName,
                    taken_by,
                },
                entry.value_span("/as"),
            );
        }
    }
    let readable = Readable::default();
    for entry in workspace.contexts.values() {
        check_context_reading(workspace, entry, &readable, out);
    }
}

/// The placeholders of one context (a workspace's, or one given with `--context FILE`).
pub fn check_context(workspace: &Workspace, entry: &Entry<Context>, out: &mut Diagnostics) {
    check_context_reading(workspace, entry, &Readable::default(), out);
}

/// What templates may read, and what they do read, worked out once for all contexts.
#[derive(Default)]
struct Readable {
    /// The names a variant or promptc defines.
    defined: std::sync::OnceLock<crate::namespace::Namespace>,
    /// Every name a template reads, defined or not: one read only where it is asked whether
    /// it is defined (`{% if TEAM is defined %}`) takes a context's placeholder of that name.
    read: std::sync::OnceLock<BTreeSet<String>>,
}

/// [`check_context`], with the names templates may read worked out once for all contexts.
fn check_context_reading(
    workspace: &Workspace,
    entry: &Entry<Context>,
    readable: &Readable,
    out: &mut Diagnostics,
) {
    let fields = context_fields();
    for name in entry.value.placeholders.keys() {
        let taken_by = scope_name(&fields, name).or_else(|| predicate(workspace, name));
        if let Some(taken_by) = taken_by {
            out.error(
                Problem::NameTaken {
                    name: name.clone(),
                    what: DeclaredName::ContextPlaceholder,
                    taken_by,
                },
                entry.key_span(&child_pointer("/placeholders", name)),
            );
            continue;
        }
        // A template may read only names a variant or promptc defines (validation refuses
        // any other): a context's placeholder of another name replaces nothing. Unknown while
        // a file that declares names is invalid.
        // Said in the file that writes it, not again in each context extending that one.
        if !entry.document.writes(&child_pointer("/placeholders", name)) {
            continue;
        }
        let read = readable
            .read
            .get_or_init(|| workspace.templates.variables_anywhere());
        let defined = readable
            .defined
            .get_or_init(|| crate::validate::readable_names(workspace));
        if !defined.contains(name) && !read.contains(name) {
            out.push(crate::diagnostic::Diagnostic::new(
                Problem::PlaceholderUnread {
                    name: name.clone(),
                    suggestion: crate::namespace::closest(name, defined.names()),
                },
                entry.key_span(&child_pointer("/placeholders", name)),
            ));
        }
    }
}

/// A predicate of the manifest.
fn predicate(workspace: &Workspace, name: &str) -> Option<TakenBy> {
    workspace
        .settings()
        .predicates
        .contains_key(name)
        .then_some(TakenBy::Predicate)
}

/// A context field or a name promptc defines for the compile.
fn scope_name(fields: &BTreeSet<String>, name: &str) -> Option<TakenBy> {
    if fields.contains(name) {
        Some(TakenBy::ContextField)
    } else if COMPILE_NAMES.contains(&name) {
        Some(TakenBy::CompileName)
    } else {
        None
    }
}

fn standard(name: &str) -> Option<TakenBy> {
    StandardPlaceholder::ALL
        .iter()
        .any(|placeholder| placeholder.name() == name)
        .then_some(TakenBy::StandardPlaceholder)
}

/// Whether `name` is a key of a variant file's top level (but `placeholders` itself), as the
/// variant schema the load checks files against says.
fn is_variant_key(name: &str) -> bool {
    name != "placeholders"
        && crate::load::schema_check::SchemaValidators::shared()
            .schema(crate::problem::Kind::Variant)
            .get("properties")
            .and_then(serde_json::Value::as_object)
            .is_some_and(|properties| properties.contains_key(name))
}

/// Whether the key at `offset` of a TOML text follows a `[placeholders]` header (the last
/// table header before it).
fn under_placeholders_header(text: &str, offset: usize) -> bool {
    text.get(..offset)
        .and_then(|before| {
            before
                .lines()
                .map(str::trim_start)
                .rfind(|line| line.starts_with('['))
        })
        .is_some_and(|header| {
            header
                .trim_start_matches('[')
                .split(']')
                .next()
                .is_some_and(|name| name.trim() == "placeholders")
        })
}
