//! References between files: ids that must exist, `extends` and `based_on` cycles, families,
//! overrides of things a variant does not use, shared parameters and `depends_on`.

use std::collections::{BTreeSet, HashMap, HashSet};

use indexmap::IndexMap;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::entry::Entry;
use crate::load::document::child_pointer;
use crate::model::Parameter;
use crate::namespace::closest;
use crate::problem::{CycleLink, InvalidValue, LabelKind, NoteKind, Problem, RefKind};
use crate::resolve::effective_variant::{chain, effective};
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let families: BTreeSet<String> = workspace.families().into_iter().collect();
    let unknown =
        |kind, name: &str, known: &mut dyn Iterator<Item = &String>| Problem::UnknownReference {
            kind,
            name: name.to_string(),
            suggestion: closest(name, known),
        };

    for entry in workspace.variants.values() {
        check_variant(workspace, entry, out);
    }

    let mut slots: HashMap<String, &Entry<crate::workspace::ComponentDef>> = HashMap::new();
    for entry in workspace.components.values() {
        let slot = entry.value.slot();
        if let Some(first) = slots.get(&slot) {
            out.push(
                Diagnostic::new(
                    Problem::DuplicateSlot {
                        slot: slot.clone(),
                        component: entry.value.id.clone(),
                        other: first.value.id.clone(),
                    },
                    entry.value_span("/id"),
                )
                .label(first.value_span("/id"), LabelKind::FillsTheSlot),
            );
        } else {
            slots.insert(slot, entry);
        }
    }

    for entry in workspace.components.values() {
        for family in entry.value.families.keys() {
            if !workspace.knows_family(&families, family) {
                out.error(
                    unknown(RefKind::Family, family, &mut families.iter()),
                    entry.key_span(&child_pointer("/families", family)),
                );
            }
        }
    }

    for entry in workspace.tools.values() {
        check_tool(workspace, entry, &families, out);
    }

    if let Some(manifest) = workspace.valid_manifest() {
        let value = &manifest.value;
        if !families.is_empty() && !workspace.knows_family(&families, &value.fallback_family) {
            out.error(
                unknown(
                    RefKind::Family,
                    &value.fallback_family,
                    &mut families.iter(),
                ),
                manifest.value_span("/fallback_family"),
            );
        }
        for (index, family) in value.build.families.iter().flatten().enumerate() {
            if !workspace.knows_family(&families, family) {
                out.error(
                    unknown(RefKind::Family, family, &mut families.iter()),
                    manifest.value_span(&format!("/build/families/{index}")),
                );
            }
        }
        if let Some(context) = &value.default_context
            && !workspace.contexts.contains_key(context)
            && !workspace.invalid.contains(RefKind::Context, context)
        {
            out.error(
                unknown(RefKind::Context, context, &mut workspace.contexts.keys()),
                manifest.value_span("/default_context"),
            );
        }
        for (index, context) in value.build.contexts.iter().flatten().enumerate() {
            if !workspace.contexts.contains_key(context)
                && !workspace.invalid.contains(RefKind::Context, context)
            {
                out.error(
                    unknown(RefKind::Context, context, &mut workspace.contexts.keys()),
                    manifest.value_span(&format!("/build/contexts/{index}")),
                );
            }
        }
        for (name, parameter) in &value.parameters {
            let pointer = child_pointer("/parameters", name);
            check_depends_on(workspace, manifest, &pointer, parameter, out);
            if parameter.use_shared.is_some() {
                out.error(
                    Problem::InvalidValue(InvalidValue::SharedParameterUses),
                    manifest.key_span(&format!("{pointer}/use")),
                );
            }
        }
        let tokens = &value.tokens;
        for family in tokens.families.keys() {
            if !workspace.knows_family(&families, family) {
                out.error(
                    unknown(RefKind::Family, family, &mut families.iter()),
                    manifest.key_span(&child_pointer("/tokens/families", family)),
                );
            }
        }
        for (index, family) in tokens.exact.iter().enumerate() {
            if !workspace.knows_family(&families, family) {
                out.error(
                    unknown(RefKind::Family, family, &mut families.iter()),
                    manifest.value_span(&format!("/tokens/exact/{index}")),
                );
            }
        }
        let paths = &value.paths;
        for (pointer, path) in [
            ("/paths/variants", &paths.variants),
            ("/paths/components", &paths.components),
            ("/paths/tools", &paths.tools),
            ("/paths/contexts", &paths.contexts),
            ("/paths/schema", &paths.schema),
            ("/build/out", &value.build.out),
        ] {
            let root = &workspace.root;
            if crate::load::read::resolve_inside(root, root, path).is_none() {
                out.error(
                    Problem::PathEscapesWorkspace { path: path.clone() },
                    manifest.value_span(pointer),
                );
            }
        }
        let out_dir = value.build.out.trim_matches('/');
        for (setting, folder) in [
            ("paths.variants", &paths.variants),
            ("paths.components", &paths.components),
            ("paths.tools", &paths.tools),
            ("paths.contexts", &paths.contexts),
            ("paths.schema", &paths.schema),
        ] {
            let (outputs, sources) = (lexical(out_dir), lexical(folder));
            if !outputs.as_os_str().is_empty()
                && (outputs.starts_with(&sources) || sources.starts_with(&outputs))
            {
                out.error(
                    Problem::OutputOverlapsSources {
                        out: out_dir.to_string(),
                        setting: setting.to_string(),
                        folder: folder.clone(),
                    },
                    manifest.value_span("/build/out"),
                );
            }
        }
        if out_dir.is_empty() || out_dir == "." {
            out.error(
                Problem::InvalidValue(InvalidValue::OutputIsRoot),
                manifest.value_span("/build/out"),
            );
        }
        for (index, rule) in value.postprocess.iter().flatten().enumerate() {
            if let crate::model::PostprocessRule::Regex { pattern, .. } = rule
                && let Err(error) = regex::Regex::new(pattern)
            {
                out.error(
                    Problem::InvalidRegex {
                        message: regex_message(&error),
                    },
                    manifest.value_span(&format!("/postprocess/{index}/pattern")),
                );
            }
        }
    }
}

fn check_variant(
    workspace: &Workspace,
    entry: &Entry<crate::workspace::VariantDef>,
    out: &mut Diagnostics,
) {
    let variant = &entry.value;
    if let Some(parent) = &variant.extends {
        if workspace.invalid.contains(RefKind::Variant, parent) {
            // reported at the parent
        } else if !workspace.variants.contains_key(parent) {
            out.error(
                Problem::UnknownReference {
                    kind: RefKind::Variant,
                    name: parent.clone(),
                    suggestion: closest(parent, workspace.variants.keys()),
                },
                entry.value_span("/extends"),
            );
        } else if let Some(cycle) = extends_cycle(workspace, &variant.id) {
            // Reported once, at the member of the cycle whose id sorts first.
            if cycle.iter().min() == Some(&variant.id) {
                let mut chain = cycle;
                chain.push(variant.id.clone());
                out.error(
                    Problem::Cycle {
                        link: CycleLink::Extends,
                        chain,
                    },
                    entry.value_span("/extends"),
                );
            }
        }
    }

    let lists = [
        ("components", &variant.components, RefKind::Component),
        (
            "add_components",
            &variant.add_components,
            RefKind::Component,
        ),
        ("tools", &variant.tools, RefKind::Tool),
        ("add_tools", &variant.add_tools, RefKind::Tool),
    ];
    for (field, list, kind) in lists {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (index, id) in list.iter().flatten().enumerate() {
            let span = entry.value_span(&format!("/{field}/{index}"));
            if let Some(first) = seen.insert(id, index) {
                out.push(
                    Diagnostic::new(
                        Problem::DuplicateId {
                            kind,
                            name: id.clone(),
                        },
                        span,
                    )
                    .label(
                        entry.value_span(&format!("/{field}/{first}")),
                        LabelKind::FirstListedHere,
                    ),
                );
            }
            if let Err(suggestion) = lookup(workspace, kind, id) {
                out.error(
                    Problem::UnknownReference {
                        kind,
                        name: id.clone(),
                        suggestion,
                    },
                    entry.value_span(&format!("/{field}/{index}")),
                );
            }
        }
    }

    // What the merged variant must have is only known when its whole chain is.
    if !workspace.ancestry_is_sound(&variant.id) {
        return;
    }
    let Some(effective) = effective(&workspace.variants, &variant.id) else {
        return;
    };
    if effective.variant.template.is_none() && effective.variant.template_file.is_none() {
        out.error(
            Problem::MissingTemplate {
                expected_file: None,
            },
            entry.value_span("/id"),
        );
    }
    let overridden: [(&str, RefKind, Vec<&String>, &[String]); 2] = [
        (
            "components",
            RefKind::Component,
            variant.overrides.components.keys().collect(),
            effective.components(),
        ),
        (
            "tools",
            RefKind::Tool,
            variant.overrides.tools.keys().collect(),
            effective.tools(),
        ),
    ];
    for (field, kind, ids, used) in overridden {
        // A list with an unknown id (reported where it is listed, maybe a misspelling of the
        // overridden one) cannot tell whether an override is used.
        let complete = used.iter().all(|id| lookup(workspace, kind, id).is_ok());
        let used: HashSet<&String> = used.iter().collect();
        for id in ids {
            let span = entry.key_span(&child_pointer(&format!("/overrides/{field}"), id));
            match lookup(workspace, kind, id) {
                Err(suggestion) => out.error(
                    Problem::UnknownReference {
                        kind,
                        name: id.clone(),
                        suggestion,
                    },
                    span,
                ),
                Ok(())
                    if complete && !used.contains(id) && !workspace.invalid.contains(kind, id) =>
                {
                    out.push(Diagnostic::new(
                        Problem::UnusedOverride {
                            kind,
                            name: id.clone(),
                            variant: variant.id.clone(),
                        },
                        span,
                    ));
                }
                Ok(()) => {}
            }
        }
    }
}

/// The cycle `id` is part of, starting at `id` (`[a, b]` for `a -> b -> a`); `None` when
/// following `extends` from `id` ends, or loops without coming back to `id`.
fn extends_cycle(workspace: &Workspace, id: &str) -> Option<Vec<String>> {
    let ancestry = chain(&workspace.variants, id);
    let last = workspace.variants.get(ancestry.last()?)?;
    (last.value.extends.as_deref() == Some(id)).then_some(ancestry)
}

/// `Ok` when a component or tool id exists (or was declared by a file that failed its own
/// validation); otherwise the closest known id, if any.
fn lookup(workspace: &Workspace, kind: RefKind, id: &str) -> Result<(), Option<String>> {
    if workspace.invalid.contains(kind, id) {
        return Ok(());
    }
    // The suggestion is computed only for unknown ids: it compares with every known one.
    // A file named after the id that declares another id is the likeliest cause.
    match kind {
        RefKind::Component if workspace.components.contains_key(id) => Ok(()),
        RefKind::Component => Err(declared_by_file(&workspace.components, id)
            .or_else(|| closest(id, workspace.components.keys()))),
        _ if workspace.tools.contains_key(id) => Ok(()),
        _ => {
            Err(declared_by_file(&workspace.tools, id)
                .or_else(|| closest(id, workspace.tools.keys())))
        }
    }
}

/// The id declared by the file named `<name>.toml` (or `.yaml`), when it is another one.
fn declared_by_file<T>(entries: &IndexMap<String, Entry<T>>, name: &str) -> Option<String> {
    entries
        .iter()
        .find(|(_, entry)| entry.path.file_stem().is_some_and(|stem| stem == name))
        .map(|(id, _)| id.clone())
}

fn check_tool(
    workspace: &Workspace,
    entry: &Entry<crate::workspace::ToolDef>,
    families: &BTreeSet<String>,
    out: &mut Diagnostics,
) {
    let tool = &entry.value;
    check_parameter_names(workspace, entry, "/parameters", &tool.parameters, out);
    for (family, spec) in &tool.families {
        if let Some(parameters) = &spec.parameters {
            let pointer = format!("{}/parameters", child_pointer("/families", family));
            check_parameter_names(workspace, entry, &pointer, parameters, out);
        }
    }
    for (index, parameter) in tool.parameters.iter().enumerate() {
        check_parameter(
            workspace,
            entry,
            &format!("/parameters/{index}"),
            parameter,
            out,
        );
    }
    for (family, spec) in &tool.families {
        let pointer = child_pointer("/families", family);
        if !workspace.knows_family(families, family) {
            out.error(
                Problem::UnknownReference {
                    kind: RefKind::Family,
                    name: family.clone(),
                    suggestion: closest(family, families.iter()),
                },
                entry.key_span(&pointer),
            );
        }
        for (index, parameter) in spec.parameters.iter().flatten().enumerate() {
            check_parameter(
                workspace,
                entry,
                &format!("{pointer}/parameters/{index}"),
                parameter,
                out,
            );
        }
        if let Some(base) = &spec.based_on {
            if !tool.families.contains_key(base) {
                out.error(
                    Problem::UnknownReference {
                        kind: RefKind::Family,
                        name: base.clone(),
                        suggestion: closest(base, tool.families.keys()),
                    },
                    entry.value_span(&format!("{pointer}/based_on")),
                );
                continue;
            }
            // Follow `based_on` links; coming back to `family` is a cycle, reported once, at
            // the member whose name sorts first. A family that leads into a cycle without being
            // part of it is not reported.
            let mut seen = vec![family.clone()];
            let mut next = Some(base.clone());
            while let Some(current) = next {
                if current == *family {
                    if seen.iter().min() == Some(family) {
                        seen.push(current);
                        out.error(
                            Problem::Cycle {
                                link: CycleLink::BasedOn,
                                chain: seen,
                            },
                            entry.value_span(&format!("{pointer}/based_on")),
                        );
                    }
                    break;
                }
                if seen.contains(&current) {
                    break;
                }
                seen.push(current.clone());
                next = tool
                    .families
                    .get(&current)
                    .and_then(|spec| spec.based_on.clone());
            }
        }
    }
}

/// Two parameters of one tool with the same name would be documented twice.
fn check_parameter_names(
    workspace: &Workspace,
    entry: &Entry<crate::workspace::ToolDef>,
    pointer: &str,
    parameters: &[Parameter],
    out: &mut Diagnostics,
) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (index, parameter) in parameters.iter().enumerate() {
        let name = parameter.name.clone().or_else(|| {
            let shared = parameter.use_shared.as_ref()?;
            let definition = workspace.settings().parameters.get(shared)?;
            Some(definition.name.clone().unwrap_or_else(|| shared.clone()))
        });
        let Some(name) = name else {
            continue;
        };
        if let Some(first) = seen.insert(name.clone(), index) {
            out.push(
                Diagnostic::new(
                    Problem::DuplicateId {
                        kind: RefKind::Parameter,
                        name,
                    },
                    entry.value_span(&format!("{pointer}/{index}")),
                )
                .label(
                    entry.value_span(&format!("{pointer}/{first}")),
                    LabelKind::FirstDefinedHere,
                ),
            );
        }
    }
}

fn check_parameter(
    workspace: &Workspace,
    entry: &Entry<crate::workspace::ToolDef>,
    pointer: &str,
    parameter: &Parameter,
    out: &mut Diagnostics,
) {
    match &parameter.use_shared {
        Some(shared) => {
            if !workspace.settings().parameters.contains_key(shared)
                && !workspace.invalid.manifest_invalid
            {
                out.error(
                    Problem::UnknownReference {
                        kind: RefKind::SharedParameter,
                        name: shared.clone(),
                        suggestion: closest(shared, workspace.settings().parameters.keys()),
                    },
                    entry.value_span(&format!("{pointer}/use")),
                );
            }
        }
        None => {
            for (field, present) in [
                ("name", parameter.name.is_some()),
                ("instruction", parameter.instruction.is_some()),
            ] {
                if !present {
                    out.push(
                        Diagnostic::new(
                            Problem::MissingField {
                                field: field.into(),
                            },
                            entry.value_span(pointer),
                        )
                        .note(NoteKind::ParameterNeedsNameAndInstruction),
                    );
                }
            }
        }
    }
    check_depends_on(workspace, entry, pointer, parameter, out);
}

fn check_depends_on<T>(
    workspace: &Workspace,
    entry: &Entry<T>,
    pointer: &str,
    parameter: &Parameter,
    out: &mut Diagnostics,
) {
    for (index, tool) in parameter.depends_on.iter().flatten().enumerate() {
        if let Err(suggestion) = lookup(workspace, RefKind::Tool, tool) {
            out.error(
                Problem::UnknownReference {
                    kind: RefKind::Tool,
                    name: tool.clone(),
                    suggestion,
                },
                entry.value_span(&format!("{pointer}/depends_on/{index}")),
            );
        }
    }
}

/// The regex crate's message without its quoted pattern and `error:` prefix.
fn regex_message(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text.lines().last().unwrap_or_default().trim();
    last.strip_prefix("error:")
        .unwrap_or(last)
        .trim()
        .to_string()
}

/// A workspace-relative folder as its plain parts (`./a//b/` → `a/b`), for comparing folders.
fn lexical(path: &str) -> std::path::PathBuf {
    std::path::Path::new(path)
        .components()
        .filter(|part| matches!(part, std::path::Component::Normal(_)))
        .collect()
}
