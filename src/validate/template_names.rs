//! Names in templates: every name a template reads must be defined by something, and every
//! listed component should have a slot somewhere.

use std::collections::BTreeSet;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::model::default_slot;
use crate::namespace::{ENABLED_TOOLS, Namespace, TOOL, TOOLS_DATA, TOOLS_TEXT, closest};
use crate::problem::Problem;
use crate::resolve::effective_variant::effective;
use crate::resolve::template_choice::{base_template, component_template, tool_format};
use crate::validate::BUILTIN_TOOL_FORMAT;
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let slots: Vec<String> = workspace
        .components
        .values()
        .map(|entry| entry.value.slot())
        .collect();
    let mut shared = Namespace::new(workspace.manifest.predicates.keys().map(String::as_str));
    for slot in slots.iter().chain(&workspace.invalid.slots) {
        shared.insert(slot.clone());
    }
    for name in [ENABLED_TOOLS, TOOLS_DATA, TOOLS_TEXT] {
        shared.insert(name);
    }

    // Component and tool texts are shared by variants: any variant's placeholder may feed
    // them (rendering catches the rest).
    if workspace.invalid.manifest_invalid {
        shared.open();
    }
    let mut any_variant = shared.clone();
    if workspace.invalid.placeholders_unknown {
        any_variant.open();
    }
    for entry in workspace.variants.values() {
        for name in entry.value.placeholders.keys() {
            any_variant.insert(name.clone());
        }
    }
    let mut with_tool = any_variant.clone();
    with_tool.insert(TOOL);

    let variants: Vec<_> = workspace
        .variants
        .keys()
        .filter_map(|id| effective(&workspace.variants, id))
        .collect();
    let base_templates: BTreeSet<&str> = variants
        .iter()
        .filter_map(|v| base_template(workspace, v))
        .collect();
    let mut tool_formats: BTreeSet<&str> =
        variants.iter().map(|v| tool_format(workspace, v)).collect();
    tool_formats.insert(BUILTIN_TOOL_FORMAT);

    let mut names: Vec<&str> = workspace.templates.names().collect();
    names.sort_unstable();
    for name in names {
        if base_templates.contains(name) {
            continue; // checked per variant below, with that variant's placeholders
        }
        let namespace = if tool_formats.contains(name) {
            &with_tool
        } else {
            &any_variant
        };
        undefined(workspace, name, namespace, out);
    }

    // A variant whose `extends` chain is broken is not merged correctly: its base template
    // and slots would be blamed for what its missing ancestors define.
    let sound = variants
        .iter()
        .filter(|variant| workspace.ancestry_is_sound(variant.id()));
    for variant in sound {
        let Some(base) = base_template(workspace, variant) else {
            continue;
        };
        let mut namespace = shared.clone();
        for name in variant.variant.placeholders.keys() {
            namespace.insert(name.clone());
        }
        // A listed component that does not exist is reported in the list; its slot in the
        // base template is not a second problem.
        for component in variant.components() {
            if !workspace.components.contains_key(component) {
                namespace.insert(default_slot(component));
            }
        }
        undefined(workspace, base, &namespace, out);

        // The template of an invalid or unknown component, or one that does not compile
        // (reported already), is unknown: the slots it would read cannot be told.
        if variant.components().iter().any(|id| {
            !workspace.components.contains_key(id)
                || component_template(workspace, variant, id).is_none()
        }) {
            continue;
        }

        // A slot is used when the base template or a listed component's template reads it.
        let mut used: BTreeSet<String> = workspace.templates.variables(base).into_iter().collect();
        for component in variant.components() {
            if let Some((template, _)) = component_template(workspace, variant, component) {
                used.extend(workspace.templates.variables(template));
            }
        }
        for component in variant.components() {
            let Some(entry) = workspace.components.get(component) else {
                continue;
            };
            let slot = entry.value.slot();
            if used.contains(&slot) {
                continue;
            }
            // Point at the list entry that brought the component in: the nearest variant of
            // the chain that lists or adds it.
            let listed = variant
                .chain
                .iter()
                .filter_map(|id| workspace.variants.get(id))
                .find_map(|v| {
                    [
                        ("components", &v.value.components),
                        ("add_components", &v.value.add_components),
                    ]
                    .into_iter()
                    .find_map(|(field, list)| {
                        let index = list.as_ref()?.iter().position(|c| c == component)?;
                        Some(v.value_span(&format!("/{field}/{index}")))
                    })
                });
            let Some(span) = listed else {
                continue;
            };
            out.push(Diagnostic::new(
                Problem::UnslottedComponent {
                    component: component.clone(),
                    slot,
                },
                span,
            ));
        }
    }
}

fn undefined(workspace: &Workspace, template: &str, namespace: &Namespace, out: &mut Diagnostics) {
    let globals: BTreeSet<&str> = workspace
        .templates
        .env()
        .globals()
        .map(|(n, _)| n)
        .collect();
    for variable in workspace.templates.variables(template) {
        if namespace.contains(&variable) || globals.contains(variable.as_str()) {
            continue;
        }
        let Some(span) = workspace
            .templates
            .find_name(template, &variable)
            .or_else(|| workspace.templates.span_of(template))
        else {
            continue;
        };
        out.push(Diagnostic::new(
            Problem::UndefinedName {
                suggestion: closest(&variable, namespace.names()),
                name: variable,
            },
            span,
        ));
    }
}
