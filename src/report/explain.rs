//! `promptc explain` as text or JSON: each component, tool and parameter with why it is in the
//! prompt or not.

use crate::compile::explain::{Explanation, Item};
use crate::compiled::SourceRange;

use super::json_document;
use super::visible::push_line;

/// The variant and its chain, then the components in rendering order and the tools in
/// documentation order, `+` for included and `-` for left out.
pub fn text(explanation: &Explanation) -> String {
    let mut out = String::new();
    push_line(
        &mut out,
        &format!(
            "variant `{}` (family `{}`), from {}",
            explanation.variant,
            explanation.family,
            explanation
                .chain
                .iter()
                .map(|s| s.file.as_str())
                .collect::<Vec<_>>()
                .join(" <- ")
        ),
    );
    if !explanation.components.is_empty() {
        out.push_str("\ncomponents, in rendering order:\n");
        for component in &explanation.components {
            item(&mut out, component, "  ");
        }
    }
    if !explanation.tools.is_empty() {
        out.push_str("\ntools, in documentation order:\n");
        for tool in &explanation.tools {
            item(&mut out, tool, "  ");
        }
    }
    out
}

pub fn json(explanation: &Explanation) -> String {
    json_document(explanation)
}

/// One item, its choice and condition below it, then its parameters indented further.
fn item(out: &mut String, item: &Item, indent: &str) {
    let mark = if item.included { '+' } else { '-' };
    push_line(
        out,
        &format!(
            "{indent}{mark} {}{}: {}{}",
            item.id,
            item.name
                .as_ref()
                .map_or_else(String::new, |name| format!(" (named `{name}`)")),
            item.reason,
            at(&item.source)
        ),
    );
    if let Some(choice) = &item.choice {
        push_line(out, &format!("{indent}    uses {choice}"));
    }
    if !item.instances.is_empty() {
        let made: Vec<String> = item
            .instances
            .iter()
            .map(|made| match made.item {
                Some(index) => format!("{} (item {index})", made.name),
                None => made.name.clone(),
            })
            .collect();
        push_line(out, &format!("{indent}    makes {}", made.join(", ")));
    }
    if !item.partials.is_empty() {
        push_line(
            out,
            &format!("{indent}    with {}", item.partials.join(", ")),
        );
    }
    if let Some(condition) = &item.condition {
        let values: Vec<String> = condition
            .values
            .iter()
            .map(|(name, value)| format!("{name} = {}", shortened(value)))
            .collect();
        // A condition that reads no value (`when = "false"`) has none to list.
        let with = if values.is_empty() {
            String::new()
        } else {
            format!(" with {}", values.join(", "))
        };
        push_line(
            out,
            &format!(
                "{indent}    when `{}` is {}{with}",
                condition.expression, condition.holds,
            ),
        );
    }
    for parameter in &item.parameters {
        self::item(out, parameter, &format!("{indent}    "));
    }
}

/// The most characters of a value the text shows: a condition reading `mcp_servers` or
/// `rules` would otherwise print every server's tools and schemas, or every rule's text, on
/// one line (the JSON report keeps them whole).
const SHOWN_VALUE_CHARS: usize = 120;

/// `value` as the text shows it: whole, or its start, `…` and its length.
fn shortened(value: &str) -> String {
    match value.char_indices().nth(SHOWN_VALUE_CHARS) {
        None => value.to_string(),
        Some((cut, _)) => format!(
            "{}… ({} characters; `--format json` shows it whole)",
            &value[..cut],
            value.chars().count()
        ),
    }
}

/// `  [file:line]`, or nothing for an item without a file.
fn at(source: &Option<SourceRange>) -> String {
    source
        .as_ref()
        .map(|s| format!("  [{}:{}]", s.file, s.first_line))
        .unwrap_or_default()
}
