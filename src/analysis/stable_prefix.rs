//! Prompt-cache stability. Providers cache a prompt's prefix; the first value that changes
//! between requests (the date, the working directory, the mode, anything the manifest marks
//! volatile) ends what can be reused. It is found by compiling a second time with every
//! volatile value changed and comparing: the common prefix is the stable one.
//!
//! A variant with native tool calls sends its tool definitions with every request, and the
//! providers' caches take them as the start of the prefix (Anthropic's documented order is
//! tools, then system, then messages; OpenAI's and Gemini's caches cover the tools with the
//! prompt too). They are compared the same way: definitions the probe leaves the same are
//! part of the stable prefix, in front of the prompt's; definitions it changes leave nothing
//! of the request cacheable. What changes them is only what changes per request: the texts
//! the tools render (a description reading `{{ cwd }}`), a tool's `when` over a volatile value,
//! and the context's MCP servers when `tokens.volatile` lists them (`mcp_servers`,
//! `mcp_servers.name`). By default the MCP servers are not volatile: they are the user's
//! settings, the same from one request to the next of a session, and a server connected or
//! switched off changes the prompt's MCP section as well; a workspace whose agents change
//! them per request says so in `tokens.volatile`, and the definitions then count as volatile.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::analysis::budget::definitions_sent;
use crate::compile::{Compiler, Request};
use crate::compiled::{CompileError, Compiled, Section};
use crate::diagnostic::Diagnostic;
use crate::model::{Context, LintLevel, StandardPlaceholder};
use crate::namespace::{TOOLS_DATA, TOOLS_TEXT};
use crate::problem::Problem;
use crate::resolve::tool_spec::resolve_tool;
use crate::templates::TemplateId;
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;
use crate::workspace::template_choice::component_template;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StablePrefix {
    pub bytes: usize,
    pub tokens: usize,
    /// How far into what is sent (the tool definitions, then the prompt) the first volatile
    /// value sits, in percent: of the bytes where the prefix is found, of the tokens once
    /// [`stable_prefix`] counts them (what `stats` shows beside `tokens`).
    pub percent: usize,
    /// SHA-256 of the prefix, hex: equal hashes mean a shared cache entry.
    pub sha256: String,
    /// The section holding the first volatile value, when one does.
    pub section: Option<String>,
    /// For a variant with native tool calls: whether its tool definitions stay the same from
    /// one request to the next. When they do, they begin the stable prefix (its `tokens`,
    /// `percent` and `sha256` include them, `bytes` is the prompt's part alone); when they do
    /// not, nothing is stable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_definitions_stable: Option<bool>,
}

/// The request with every volatile value changed: a standard placeholder's field, else a
/// context field or a path into one (`extra`, `extra.team`, `model.id`, `mcp_servers.name`:
/// every value under it, by its type), else a runtime placeholder of that name. A context
/// field whose values cannot be changed is the reason the prefix is not known.
fn probe(
    workspace: &Workspace,
    request: &Request,
    variant: Option<&EffectiveVariant>,
) -> Result<Request, String> {
    let mut probe = request.clone();
    let fields = crate::namespace::context_fields();
    let declared = &workspace.settings().context_fields;
    let volatile = &workspace.settings().tokens.volatile;
    // A declared `extra` key the context leaves out reads as its default: that is the value
    // the probe changes.
    if volatile
        .iter()
        .any(|name| name.split('.').next() == Some(crate::namespace::EXTRA))
    {
        for (key, field) in declared {
            if !probe.context.extra.contains_key(key) {
                probe
                    .context
                    .extra
                    .insert(key.clone(), field.default_value());
            }
        }
    }
    let mut paths = Vec::new();
    for name in volatile {
        if let Some(placeholder) = StandardPlaceholder::named(name)
            && placeholder.perturb(&mut probe.context)
        {
            continue;
        }
        let in_context = name
            .split('.')
            .next()
            .is_some_and(|first| fields.contains(first));
        if in_context {
            paths.push(name.as_str());
        } else {
            let text = placeholder_probe(workspace, variant, name, &probe);
            probe.set.insert(name.clone(), text);
        }
    }
    // All at once: the context is made a value and back once, not once per path (a list of
    // thousands of paths ran validate out of processor time).
    if !paths.is_empty() {
        perturb_paths(&mut probe.context, &paths)?;
    }
    Ok(probe)
}

/// The text a runtime placeholder is set to for the probe: the value it replaces (see
/// `compile::set_values::replaced`: `YOLO`'s is flipped, as it is no field the probe changes
/// in the context, which would change what the conditions decide) changed as its type
/// allows, written as a set value is; the probe's text for a text or an undeclared name.
fn placeholder_probe(
    workspace: &Workspace,
    variant: Option<&EffectiveVariant>,
    name: &str,
    request: &Request,
) -> String {
    let probe = StandardPlaceholder::probe_text();
    let (_, value) =
        crate::compile::set_values::replaced(workspace, variant, &request.context, name);
    match value {
        Some(Value::String(_) | Value::Null) | None => probe.into(),
        // An empty list or table changes by gaining an item.
        Some(Value::Array(items)) if items.is_empty() => Value::from(vec![probe]).to_string(),
        Some(Value::Object(table)) if table.is_empty() => {
            serde_json::json!({ probe: probe }).to_string()
        }
        Some(mut changed) => {
            perturb_value(&mut changed, &Value::Null, &Value::Null);
            changed.to_string()
        }
    }
}

/// Changes every value at each of `paths` (dotted; a list's items stand for the list) in
/// `context`, each as its type allows (see [`perturb_value`]), in their order; a key the
/// context leaves out at the end of a path is given one. Nothing there to change (an empty
/// list) changes nothing.
fn perturb_paths(context: &mut Context, paths: &[&str]) -> Result<(), String> {
    let mut value = serde_json::to_value(&*context).map_err(|error| error.to_string())?;
    let root = crate::schema::context_schema();
    for path in paths {
        let segments: Vec<&str> = path.split('.').collect();
        perturb_at(&mut value, root, root, &segments);
    }
    *context = serde_json::from_value(value).map_err(|error| {
        let mut named: Vec<String> = paths
            .iter()
            .take(3)
            .map(|path| format!("`{path}`"))
            .collect();
        if paths.len() > 3 {
            named.push(format!("{} more", paths.len() - 3));
        }
        format!("{} cannot be changed: {error}", named.join(", "))
    })?;
    Ok(())
}

fn perturb_at(value: &mut Value, schema: &Value, root: &Value, segments: &[&str]) {
    let schema = crate::schema::resolved(root, schema);
    if let (Value::Array(items), Some(item_schema)) = (&mut *value, schema.get("items"))
        && !segments.is_empty()
    {
        for item in items {
            perturb_at(item, item_schema, root, segments);
        }
        return;
    }
    let Some((first, rest)) = segments.split_first() else {
        perturb_value(value, schema, root);
        return;
    };
    let Some(table) = value.as_object_mut() else {
        return;
    };
    let child_schema = schema
        .get("properties")
        .and_then(|properties| properties.get(*first))
        .or_else(|| schema.get("additionalProperties").filter(|s| s.is_object()))
        .unwrap_or(&Value::Null);
    if rest.is_empty() && !table.contains_key(*first) {
        table.insert((*first).to_string(), Value::Null);
    }
    if let Some(child) = table.get_mut(*first) {
        perturb_at(child, child_schema, root, rest);
    }
}

/// Every value in `value` changed as its schema allows: one of a few words becomes another
/// of them, text starts with the probe's, numbers grow by one, booleans flip, an empty table of the
/// user's own keys gains one; lists and tables change item by item.
fn perturb_value(value: &mut Value, schema: &Value, root: &Value) {
    let schema = crate::schema::resolved(root, schema);
    let probe = StandardPlaceholder::probe_text();
    if let Some(words) = schema.get("enum").and_then(Value::as_array) {
        if let Some(other) = words.iter().find(|word| *word != value) {
            *value = other.clone();
        }
        return;
    }
    match value {
        Value::Null => *value = Value::String(probe.into()),
        Value::Bool(flag) => *flag = !*flag,
        Value::Number(number) => {
            *value = match (number.as_u64(), number.as_i64(), number.as_f64()) {
                (Some(n), _, _) => Value::from(n.wrapping_add(1)),
                (_, Some(n), _) => Value::from(n.wrapping_add(1)),
                (_, _, Some(n)) => Value::from(n + 1.0),
                _ => Value::String(probe.into()),
            }
        }
        // Before the text: the prompt changes where the value starts, not where it ends.
        Value::String(text) => text.insert_str(0, probe),
        Value::Array(items) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            for item in items {
                perturb_value(item, item_schema, root);
            }
        }
        Value::Object(table) => {
            let properties = schema.get("properties");
            let free = schema.get("additionalProperties");
            if table.is_empty() && free == Some(&Value::Bool(true)) {
                table.insert(probe.into(), Value::String(probe.into()));
            }
            for (key, item) in table.iter_mut() {
                let item_schema = properties
                    .and_then(|properties| properties.get(key))
                    .or(free.filter(|free| free.is_object()))
                    .unwrap_or(&Value::Null);
                perturb_value(item, item_schema, root);
            }
        }
    }
}

/// How many sections deep [`shows_tools_through`] follows slots: sections gather a few
/// others, and a loop of slots is no prompt.
const SLOTS_FOLLOWED: usize = 8;

/// Whether `template` writes the tools (`TOOLS`, `tools`), itself, through what it includes,
/// or through the slot of a section whose template does, `depth` slots down.
fn shows_tools_through(
    workspace: &Workspace,
    variant: &EffectiveVariant,
    template: TemplateId,
    depth: usize,
) -> bool {
    let names: Vec<&String> = workspace
        .templates
        .with_used(template)
        .flat_map(|template| workspace.templates.variables(template))
        .collect();
    if names
        .iter()
        .any(|name| *name == TOOLS_TEXT || *name == TOOLS_DATA)
    {
        return true;
    }
    depth < SLOTS_FOLLOWED
        && names.iter().any(|name| {
            variant
                .components()
                .iter()
                .find(|id| {
                    workspace
                        .components
                        .get(*id)
                        .is_some_and(|entry| entry.value.slot() == name.as_str())
                })
                .and_then(|id| component_template(workspace, variant, id))
                .is_some_and(|(slotted, _)| {
                    slotted != template
                        && shows_tools_through(workspace, variant, slotted, depth + 1)
                })
        })
}

/// The stable prefix of a compiled prompt; `None` when the probe does not compile.
pub fn stable_prefix(
    compiler: &Compiler<'_>,
    request: &Request,
    compiled: &Compiled,
) -> Option<StablePrefix> {
    let (mut prefix, _, _) = probe_and_compare(compiler, request, compiled).ok()?;
    let encoding = compiler
        .workspace()
        .settings()
        .tokens
        .encoding_for(&compiled.family);
    let definitions = definitions_sent(compiled).map_or(0, |sent| encoding.count(&sent));
    let stable_definitions = match prefix.tool_definitions_stable {
        Some(true) => definitions,
        _ => 0,
    };
    prefix.tokens =
        stable_definitions.saturating_add(encoding.count(&compiled.prompt[..prefix.bytes]));
    // Shown beside the tokens, the share is of the tokens sent, where finding the prefix
    // measured it in bytes.
    let sent = definitions.saturating_add(encoding.count(&compiled.prompt));
    prefix.percent = (prefix.tokens.saturating_mul(100))
        .checked_div(sent)
        .unwrap_or(100)
        .min(100);
    Some(prefix)
}

/// The stable prefix, its tokens not counted (the warning needs none), the prompt compiled
/// with every volatile value changed, and the request that compiled it; else what stopped
/// that compile.
fn probe_and_compare(
    compiler: &Compiler<'_>,
    request: &Request,
    compiled: &Compiled,
) -> Result<(StablePrefix, Compiled, Request), String> {
    let workspace = compiler.workspace();
    let probe = probe(workspace, request, compiler.variant(&compiled.variant))?;
    let probed = compiler
        .compile(&probe)
        .map_err(|error| first_problem(&error))?;
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
    // Sections by id: a probe that routes elsewhere compiles another variant's.
    let changed: Vec<&Section> = compiled
        .sections
        .iter()
        .filter(|ours| {
            probed
                .sections
                .iter()
                .find(|theirs| theirs.id == ours.id)
                .is_none_or(|theirs| theirs.text != ours.text)
        })
        .collect();
    // The smallest changed section that holds the changed line. When none does and no
    // tool's text changed (which no section holds: it is in the tools' documentation), clean-up
    // rules rewrote the line past recognising, or the section is only in the probe (its
    // condition reads the value): the smallest changed section.
    let tools_changed = compiled.tools.len() != probed.tools.len()
        || compiled
            .tools
            .iter()
            .zip(probed.tools.iter())
            .any(|(ours, theirs)| {
                ours.description != theirs.description
                    || ours
                        .parameters
                        .iter()
                        .zip(&theirs.parameters)
                        .any(|(a, b)| {
                            a.instruction != b.instruction || a.usage != b.usage || a.note != b.note
                        })
            });
    // Next, the first section in one prompt and not the other (its condition reads the
    // value): a section switched on by the probe holds no line of this prompt, and the tools it
    // may switch too (plan mode's) left no section to blame.
    let section = changed
        .iter()
        .filter(|ours| ours.text.contains(changed_line))
        .min_by_key(|ours| ours.text.len())
        .or_else(|| {
            changed
                .iter()
                .find(|ours| shown_in_one(compiled, &probed, &ours.id))
        })
        .or_else(|| {
            changed
                .iter()
                .filter(|_| !tools_changed)
                .min_by_key(|ours| ours.text.len())
        })
        .map(|ours| ours.id.clone());
    // The tool definitions come before the prompt (see the module's comment): the same in
    // both compiles, they begin the prefix; changed, nothing is left of it.
    let sent = definitions_sent(compiled);
    let definitions_stable = sent
        .as_ref()
        .map(|ours| definitions_sent(&probed).as_ref() == Some(ours));
    let (bytes, section) = match definitions_stable {
        Some(false) => (0, None),
        _ => (bytes, section),
    };
    let stable_definitions = sent.as_deref().filter(|_| definitions_stable == Some(true));
    let mut hasher = Sha256::new();
    if let Some(definitions) = stable_definitions {
        // Compact JSON holds no line break: the one after it ends it.
        hasher.update(definitions.as_bytes());
        hasher.update(b"\n");
    }
    hasher.update(&prompt.as_bytes()[..bytes]);
    let before = stable_definitions.map_or(0, str::len);
    let sent_bytes = sent.as_ref().map_or(0, String::len) + prompt.len();
    let prefix = StablePrefix {
        bytes,
        tokens: 0,
        percent: ((before + bytes) * 100)
            .checked_div(sent_bytes)
            .unwrap_or(100),
        sha256: hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect(),
        section,
        tool_definitions_stable: definitions_stable,
    };
    Ok((prefix, probed, probe))
}

/// What stopped a compile, in a few words: its first problem.
fn first_problem(error: &CompileError) -> String {
    match error {
        CompileError::Diagnostics(diagnostics) => diagnostics
            .iter()
            .next()
            .map_or_else(|| "it failed".to_string(), |d| d.problem.to_string()),
        CompileError::Selection(problem) => problem.to_string(),
        CompileError::InvalidWorkspace => "the workspace has errors".to_string(),
    }
}

/// The warning for a volatile value early in the prompt, if there is one, at the place that
/// holds the value: the component's template, the tool text, or else the base template.
/// `output` names the compile (`next-gen × basic`).
pub fn volatile_warning(
    compiler: &Compiler<'_>,
    request: &Request,
    compiled: &Compiled,
    output: &str,
) -> Option<Diagnostic> {
    let workspace = compiler.workspace();
    let settings = &workspace.settings().tokens;
    let threshold = usize::from(settings.stable_prefix_percent);
    if threshold == 0 || settings.stable_prefix_level == LintLevel::Off {
        return None;
    }
    let (prefix, probed, probe) = match probe_and_compare(compiler, request, compiled) {
        Ok(compared) => compared,
        // Not knowing is said: a list the probe cannot compile with left the prefix
        // unchecked without a word.
        Err(reason) => {
            return Some(Diagnostic::new(
                Problem::StablePrefixUnchecked {
                    outputs: vec![output.to_string()],
                    reason,
                    error: settings.stable_prefix_level == LintLevel::Error,
                },
                workspace.manifest.key_span("/tokens/volatile"),
            ));
        }
    };
    let definitions_change = prefix.tool_definitions_stable == Some(false);
    if !definitions_change && (prefix.percent >= threshold || prefix.bytes == compiled.prompt.len())
    {
        return None;
    }
    let variant = compiler.variant(&compiled.variant)?;
    // The predicates over a volatile value whose value the probe changed: one that holds the
    // same either way (`has_cwd`, with a folder given in both) changed nothing.
    let ours = compiler.predicate_values(&request.context);
    let theirs = compiler.predicate_values(&probe.context);
    let changed: std::collections::BTreeSet<&String> = workspace
        .settings()
        .predicates
        .keys()
        .zip(ours.iter().zip(&theirs))
        .filter(|(_, (a, b))| a != b)
        .map(|(name, _)| name)
        .collect();
    let predicates: std::collections::BTreeSet<String> = volatile_predicates(compiler)
        .into_iter()
        .filter(|name| changed.contains(name))
        .collect();
    // The first volatile name a template reads itself (a predicate that reads one counts), if
    // it reads one; the name found is kept, for the message to say which value it is.
    let found: std::cell::RefCell<Option<String>> = std::cell::RefCell::new(None);
    // A partial it includes or imports reads for it: the template's own text is looked at
    // first, then theirs.
    let reads_volatile = |template: TemplateId| {
        let first = workspace
            .templates
            .with_used(template)
            .find_map(|template| {
                workspace
                    .templates
                    .variables(template)
                    .iter()
                    .filter(|variable| {
                        is_volatile(&settings.volatile, variable)
                            || predicates.contains(variable.as_str())
                    })
                    .filter_map(|variable| {
                        Some((workspace.templates.find_name(template, variable)?, variable))
                    })
                    .min_by_key(|(span, _)| span.start)
            })?;
        *found.borrow_mut() = Some(first.1.clone());
        Some(first.0)
    };
    // A tool's text holds the value only where the prompt shows the tools: a template that
    // reads `TOOLS` or `tools`, itself, through what it includes, or through the slot of a
    // section that does (`{{ TOOL_LIST_SECTION }}` in a section that gathers others: a tool
    // offered in plan mode only was blamed on that section's first line, not its `when`).
    // Native definitions and tools no template writes are not in the prompt's text.
    let shows_tools = |template: TemplateId| shows_tools_through(workspace, variant, template, 0);
    let tool_text = |template: TemplateId| {
        shows_tools(template)
            .then(|| changed_tool_text(workspace, variant.family(), compiled, &probed))
            .flatten()
    };
    // Tool definitions that change per request leave nothing cacheable, wherever the
    // prompt's first change is: said at the tool text that changed, else at the `when` of a
    // tool offered in one compile only, else at the volatile list (an MCP server's tools,
    // listed there).
    if definitions_change {
        let read_by_when: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
        let span = changed_tool_text(workspace, variant.family(), compiled, &probed)
            .and_then(|tool| reads_volatile(tool).or_else(|| workspace.templates.span_of(tool)))
            .or_else(|| {
                let offered = |tools: &[crate::compiled::CompiledTool], id: &str| {
                    tools.iter().any(|tool| tool.id == id)
                };
                compiled
                    .tools
                    .iter()
                    .chain(probed.tools.iter())
                    .find(|tool| {
                        offered(&compiled.tools, &tool.id) != offered(&probed.tools, &tool.id)
                    })
                    .and_then(|tool| workspace.tools.get(&tool.id))
                    .map(|entry| match &entry.value.when {
                        Some(condition) => {
                            *read_by_when.borrow_mut() =
                                volatile_read_by(workspace, condition, &predicates);
                            entry.value_span("/when")
                        }
                        None => entry.value_span("/id"),
                    })
            })
            .or_else(|| {
                let (condition, span, _) =
                    parameter_shown_in_one(workspace, variant.family(), compiled, &probed)?;
                *read_by_when.borrow_mut() = volatile_read_by(workspace, &condition, &predicates);
                Some(span)
            })
            .unwrap_or_else(|| workspace.manifest.key_span("/tokens/volatile"));
        let read_by_when = read_by_when.into_inner();
        let volatile = match found.into_inner() {
            Some(name) if predicates.contains(&name) => {
                vec![format!("{name}, a predicate that reads one")]
            }
            Some(name) => vec![name],
            None if !read_by_when.is_empty() => read_by_when,
            None => settings.volatile.clone(),
        };
        return Some(Diagnostic::new(
            Problem::VolatileEarly {
                outputs: vec![output.to_string()],
                percent: 0,
                section: None,
                volatile,
                in_definitions: true,
                at_condition: false,
                error: settings.stable_prefix_level == LintLevel::Error,
            },
            span,
        ));
    }
    // A section in one prompt and not the other: its condition reads the value, and names
    // which (itself, or through a predicate).
    let condition = match &prefix.section {
        Some(id) if shown_in_one(compiled, &probed, id) => workspace
            .components
            .get(id)
            .and_then(|entry| Some((entry, entry.value.condition.as_deref()?))),
        _ => None,
    };
    // Else a tool offered in one prompt and not the other, where the prompt shows the tools
    // and the first change is that tool's documentation (its name on the first line that
    // differs): its `when` reads the value. A change before it (a date the template writes
    // above the tools) is blamed as before.
    let first_changed_line = |prompt: &str| {
        let at = prefix.bytes.min(prompt.len());
        let start = prompt
            .get(..at)
            .and_then(|before| before.rfind('\n'))
            .map_or(0, |i| i + 1);
        let rest = prompt.get(start..).unwrap_or_default();
        rest.find('\n').map_or(rest, |end| &rest[..end]).to_string()
    };
    let changed_lines = (
        first_changed_line(&compiled.prompt),
        first_changed_line(&probed.prompt),
    );
    let shown_by = |template: TemplateId| {
        shows_tools(template)
            .then(|| tool_offered_in_one(workspace, compiled, &probed))
            .flatten()
            .filter(|(_, _, name)| {
                changed_lines.0.contains(name.as_str()) || changed_lines.1.contains(name.as_str())
            })
            .map(|(entry, condition, _)| (entry, condition))
    };
    // Or a template that counts the tools (`{{ enabled_tools | length }}`), where the first
    // line that differs holds each prompt's count: the number changes where a tool is offered
    // in one prompt only, whatever else the template reads further on.
    let enabled = |compiled: &Compiled| {
        let ids: HashSet<&str> = compiled.tools.iter().map(|tool| tool.id.as_str()).collect();
        ids.len().to_string()
    };
    let holds_number = |line: &str, number: &str| {
        line.split(|c: char| !c.is_ascii_digit())
            .any(|digits| digits == number)
    };
    let (counted, counted_probe) = (enabled(compiled), enabled(&probed));
    let count_changed = counted != counted_probe
        && holds_number(&changed_lines.0, &counted)
        && holds_number(&changed_lines.1, &counted_probe);
    let counted_by = |template: TemplateId| {
        (count_changed
            && workspace
                .templates
                .variables(template)
                .iter()
                .any(|name| name == crate::namespace::ENABLED_TOOLS))
        .then(|| tool_offered_in_one(workspace, compiled, &probed))
        .flatten()
        .map(|(entry, condition, _)| (entry, condition))
    };
    let tool_condition = match (&condition, &prefix.section) {
        (Some(_), _) => None,
        (None, Some(id)) => component_template(workspace, variant, id)
            .and_then(|(template, _)| shown_by(template).or_else(|| counted_by(template))),
        (None, None) => shown_by(variant.base).or_else(|| counted_by(variant.base)),
    };
    // Else a parameter shown in one prompt and not the other, in the same way: its `when`
    // reads the value.
    let parameter_condition = match (&condition, &tool_condition) {
        (None, None) => {
            let template = match &prefix.section {
                Some(id) => component_template(workspace, variant, id).map(|(t, _)| t),
                None => Some(variant.base),
            };
            template
                .filter(|template| shows_tools(*template))
                .and_then(|_| {
                    parameter_shown_in_one(workspace, variant.family(), compiled, &probed)
                })
                .filter(|(_, _, name)| {
                    changed_lines.0.contains(name.as_str())
                        || changed_lines.1.contains(name.as_str())
                })
                .map(|(condition, span, _)| (condition, span))
        }
        _ => None,
    };
    let span = condition
        .map(|(entry, _)| entry.value_span("/when"))
        .or_else(|| tool_condition.map(|(entry, _)| entry.value_span("/when")))
        .or_else(|| parameter_condition.as_ref().map(|(_, span)| *span));
    let at_condition = span.is_some();
    let read_by_condition = condition
        .map(|(_, condition)| condition)
        .or(tool_condition.map(|(_, condition)| condition))
        .or(parameter_condition
            .as_ref()
            .map(|(condition, _)| &**condition))
        .map(|condition| volatile_read_by(workspace, condition, &predicates))
        .unwrap_or_default();
    let span = match (span, &prefix.section) {
        (Some(span), _) => span,
        (None, Some(id)) => {
            let (template, _) = component_template(workspace, variant, id)?;
            // A section in one prompt and not the other, whose own `when` does not decide it:
            // the template that writes its slot does, under a condition of its own (`{% if
            // plan_mode %}{{ OBJECTIVE_SECTION }}{% endif %}`).
            let writer = shown_in_one(compiled, &probed, id)
                .then(|| slot_writer(workspace, variant, id))
                .flatten();
            // A section that shows the tools (`{{ TOOLS }}`) holds the value in a tool's
            // text when it reads none itself.
            writer
                .and_then(reads_volatile)
                .or_else(|| reads_volatile(template))
                .or_else(|| {
                    tool_text(template).and_then(|tool| {
                        reads_volatile(tool).or_else(|| workspace.templates.span_of(tool))
                    })
                })
                .or_else(|| workspace.templates.span_of(template))?
        }
        (None, None) => {
            let template = tool_text(variant.base).unwrap_or(variant.base);
            reads_volatile(template).or_else(|| workspace.templates.span_of(template))?
        }
    };
    // The value read where the finding points; every volatile name when the place is a
    // section's condition or a template as a whole.
    let volatile = match found.into_inner() {
        Some(name) if predicates.contains(&name) => {
            vec![format!("{name}, a predicate that reads one")]
        }
        Some(name) => vec![name],
        None if !read_by_condition.is_empty() => read_by_condition,
        None => settings.volatile.clone(),
    };
    Some(Diagnostic::new(
        Problem::VolatileEarly {
            outputs: vec![output.to_string()],
            percent: prefix.percent,
            section: prefix.section,
            volatile,
            in_definitions: false,
            at_condition,
            error: settings.stable_prefix_level == LintLevel::Error,
        },
        span,
    ))
}

/// Whether a template reads a `tokens.volatile` value by `name`: a path (`extra.team`) is
/// read through its first name, a placeholder in any case.
fn is_volatile(volatile: &[String], name: &str) -> bool {
    volatile.iter().any(|v| {
        let v = v.split('.').next().unwrap_or(v);
        v == name || v.eq_ignore_ascii_case(name)
    })
}

/// The predicates whose condition reads a volatile value, or such a predicate: a section that
/// says `{% if plan_mode %}` reads the mode through its predicate.
fn volatile_predicates(compiler: &Compiler<'_>) -> std::collections::BTreeSet<String> {
    let workspace = compiler.workspace();
    let volatile = &workspace.settings().tokens.volatile;
    let mut found = std::collections::BTreeSet::new();
    // A predicate reads those before it: one pass in their order finds every volatile one.
    for (name, condition) in &workspace.settings().predicates {
        let reads = compiler.conditions().reads(condition).unwrap_or_default();
        if reads
            .iter()
            .any(|read| is_volatile(volatile, read) || found.contains(read))
        {
            found.insert(name.clone());
        }
    }
    found
}

/// The volatile values a condition reads (`tokens.volatile`'s names, and predicates that read
/// one), as the warning names them.
fn volatile_read_by(
    workspace: &Workspace,
    condition: &str,
    predicates: &std::collections::BTreeSet<String>,
) -> Vec<String> {
    let Ok(expression) = workspace.templates.env().compile_expression(condition) else {
        return Vec::new();
    };
    let names: std::collections::BTreeSet<String> =
        expression.undeclared_variables(false).into_iter().collect();
    let volatile = &workspace.settings().tokens.volatile;
    let mut read: Vec<String> = volatile
        .iter()
        .filter(|v| {
            names
                .iter()
                .any(|name| is_volatile(std::slice::from_ref(v), name))
        })
        .cloned()
        .collect();
    read.extend(
        names
            .iter()
            .filter(|name| predicates.contains(name.as_str()))
            .map(|name| format!("{name}, a predicate that reads one")),
    );
    read
}

/// The first tool offered in one compile and not the other, when its `when` is what decides:
/// the tool's file, its condition, and the name it is offered by.
fn tool_offered_in_one<'w>(
    workspace: &'w Workspace,
    compiled: &Compiled,
    probed: &Compiled,
) -> Option<(
    &'w crate::load::entry::Entry<crate::workspace::ToolDef>,
    &'w str,
    String,
)> {
    // Looked up, not searched for: a workspace of eighty `for_each` specs over a thousand
    // items (eighty thousand tools) searched one list per tool for minutes.
    let ours: HashSet<&str> = compiled.tools.iter().map(|tool| tool.id.as_str()).collect();
    let theirs: HashSet<&str> = probed.tools.iter().map(|tool| tool.id.as_str()).collect();
    compiled
        .tools
        .iter()
        .chain(probed.tools.iter())
        .filter(|tool| ours.contains(tool.id.as_str()) != theirs.contains(tool.id.as_str()))
        .find_map(|tool| {
            let entry = workspace.tools.get(&tool.id)?;
            Some((entry, entry.value.when.as_deref()?, tool.name.clone()))
        })
}

/// A parameter of a tool both prompts offer that one of them shows and the other does not,
/// with its `when` (the condition and where it is written) and its name: the first such,
/// in the tools' order.
fn parameter_shown_in_one(
    workspace: &Workspace,
    family: &str,
    compiled: &Compiled,
    probed: &Compiled,
) -> Option<(std::sync::Arc<str>, crate::span::Span, String)> {
    let theirs = by_id_and_item(probed);
    compiled.tools.iter().find_map(|tool| {
        let other = *theirs.get(&(tool.id.as_str(), tool.item))?;
        let names = |tool: &'_ crate::compiled::CompiledTool| -> HashSet<String> {
            tool.parameters
                .iter()
                .map(|parameter| parameter.name.clone())
                .collect()
        };
        let (ours, its) = (names(tool), names(other));
        let name = tool
            .parameters
            .iter()
            .map(|parameter| &parameter.name)
            .find(|name| !its.contains(*name))
            .or_else(|| {
                other
                    .parameters
                    .iter()
                    .map(|parameter| &parameter.name)
                    .find(|name| !ours.contains(*name))
            })?;
        let resolved = resolve_tool(workspace, &tool.id, family)?;
        let (condition, span) = resolved
            .parameters
            .iter()
            .find(|parameter| &parameter.name == name)?
            .when
            .clone()?;
        Some((condition, span, name.clone()))
    })
}

/// The template that writes the slot of section `id`: the base template when it reads the
/// slot (itself or through what it uses), else the first of the variant's sections whose
/// template does.
fn slot_writer(
    workspace: &Workspace,
    variant: &crate::workspace::inheritance::EffectiveVariant,
    id: &str,
) -> Option<TemplateId> {
    let slot = workspace.components.get(id)?.value.slot();
    let reads_slot = |template: TemplateId| {
        workspace
            .templates
            .with_used(template)
            .any(|used| workspace.templates.variables(used).contains(&slot))
    };
    if reads_slot(variant.base) {
        return Some(variant.base);
    }
    variant
        .components()
        .iter()
        .filter(|other| other.as_str() != id)
        .filter_map(|other| component_template(workspace, variant, other))
        .map(|(template, _)| template)
        .find(|template| reads_slot(*template))
}

/// Whether the section `id` is in one of the prompts and not in the other.
fn shown_in_one(compiled: &Compiled, probed: &Compiled, id: &str) -> bool {
    let included = |prompt: &Compiled| {
        prompt
            .sections
            .iter()
            .find(|section| section.id == id)
            .is_some_and(|section| section.included)
    };
    included(compiled) != included(probed)
}

/// A prompt's tools by id and `for_each` item.
fn by_id_and_item(
    prompt: &Compiled,
) -> HashMap<(&str, Option<usize>), &crate::compiled::CompiledTool> {
    let mut tools = HashMap::with_capacity(prompt.tools.len());
    for tool in &prompt.tools {
        // The first of an id and item, as a search in order finds it.
        tools.entry((tool.id.as_str(), tool.item)).or_insert(tool);
    }
    tools
}

/// The first tool text (a description, or a parameter's instruction, usage or note) that
/// the probe changed: the template that holds the volatile value when no section does.
fn changed_tool_text(
    workspace: &Workspace,
    family: &str,
    compiled: &Compiled,
    probed: &Compiled,
) -> Option<TemplateId> {
    // Paired by id: a tool offered in one compile only (its `when` reads the value) shifts
    // the others, and pairing by position blamed a tool whose text is the same in both.
    // By id and item: every tool a `for_each` spec makes has the spec's id.
    let by_id = by_id_and_item(probed);
    compiled
        .tools
        .iter()
        .filter_map(|ours| Some((ours, *by_id.get(&(ours.id.as_str(), ours.item))?)))
        .find_map(|(ours, theirs)| {
            // Parameters paired by name, as tools are by id: one shown in one compile only
            // (its `when` reads the value) shifts the others, and pairing by position blamed
            // the text of the parameter after it, the same in both.
            let their_parameters: HashMap<&str, &crate::compiled::CompiledParameter> = theirs
                .parameters
                .iter()
                .map(|b| (b.name.as_str(), b))
                .collect();
            let paired = || {
                ours.parameters
                    .iter()
                    .filter_map(|a| Some((a, *their_parameters.get(a.name.as_str())?)))
            };
            // Resolved only for a tool whose texts differ: resolving each of tens of
            // thousands of tools cost more than comparing them.
            let differs = ours.description != theirs.description
                || paired().any(|(a, b)| {
                    a.instruction != b.instruction || a.usage != b.usage || a.note != b.note
                });
            if !differs {
                return None;
            }
            let tool = resolve_tool(workspace, &ours.id, family)?;
            if ours.description != theirs.description {
                // Unless only a parameter's note, added to the description, changed.
                let own_notes_same = paired().all(|(a, b)| a.note == b.note)
                    && ours.parameters.len() == theirs.parameters.len();
                if own_notes_same {
                    return Some(tool.description);
                }
            }
            paired().find_map(|(a, b)| {
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
