//! `promptc explain` as text or JSON: each component, tool and parameter with why it is in the
//! prompt or not.

use crate::compile::explain::{Explanation, Item};
use crate::compiled::SourceRange;

use super::json_document;

/// The variant and its chain, then the components in rendering order and the tools in
/// documentation order, `+` for included and `-` for left out.
pub fn text(explanation: &Explanation) -> String {
    let mut out = format!(
        "variant `{}` (family `{}`), from {}\n",
        explanation.variant,
        explanation.family,
        explanation
            .chain
            .iter()
            .map(|s| s.file.as_str())
            .collect::<Vec<_>>()
            .join(" <- ")
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
    out.push_str(&format!(
        "{indent}{mark} {}: {}{}\n",
        item.id,
        item.reason,
        at(&item.source)
    ));
    if let Some(choice) = &item.choice {
        out.push_str(&format!("{indent}    uses {choice}\n"));
    }
    if !item.partials.is_empty() {
        out.push_str(&format!("{indent}    with {}\n", item.partials.join(", ")));
    }
    if let Some(condition) = &item.condition {
        let values: Vec<String> = condition
            .values
            .iter()
            .map(|(name, value)| format!("{name} = {value}"))
            .collect();
        out.push_str(&format!(
            "{indent}    when `{}` is {} with {}\n",
            condition.expression,
            condition.holds,
            values.join(", ")
        ));
    }
    for parameter in &item.parameters {
        self::item(out, parameter, &format!("{indent}    "));
    }
}

/// `  [file:line]`, or nothing for an item without a file.
fn at(source: &Option<SourceRange>) -> String {
    source
        .as_ref()
        .map(|s| format!("  [{}:{}]", s.file, s.first_line))
        .unwrap_or_default()
}
