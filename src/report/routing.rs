//! `promptc route` and `promptc list` as text (their JSON is the result serialised).

use super::visible::push_line;
use crate::compile::{Choice, FamilyListing, RouteRule};

/// The variant chosen, and why: the rule that held, or the fallback.
pub fn choice(choice: &Choice) -> String {
    let mut out = String::new();
    push_line(&mut out, &format!("family:  {}", choice.family));
    let version = choice.version.as_deref().unwrap_or("(none)");
    match &choice.label {
        Some(label) => push_line(&mut out, &format!("version: {version} (label `{label}`)")),
        None => push_line(&mut out, &format!("version: {version}")),
    }
    push_line(&mut out, &format!("variant: {}", choice.variant));
    if let Some(route) = &choice.route {
        match &route.rule {
            Some(rule) => push_line(&mut out, &format!("rule:    {}", rule_text(rule))),
            None => out.push_str("rule:    no `match` holds; the fallback family serves\n"),
        }
    }
    out
}

fn rule_text(rule: &RouteRule) -> String {
    format!(
        "`match` of {} ({}:{}): {}",
        rule.variant, rule.source.file, rule.source.first_line, rule.condition
    )
}

/// Each family, with its routing rule and its versions.
pub fn list(families: &[FamilyListing]) -> String {
    let mut out = String::new();
    for family in families {
        let fallback = if family.fallback { " (fallback)" } else { "" };
        push_line(&mut out, &format!("{}{fallback}", family.family));
        if let Some(routing) = &family.routing {
            push_line(
                &mut out,
                &format!(
                    "  routing #{}: {}",
                    routing.position,
                    rule_text(&routing.rule)
                ),
            );
        }
        for variant in &family.variants {
            let version = variant.version.as_deref().unwrap_or("(no version)");
            let mut line = format!("  {version}  {}", variant.id);
            if !variant.labels.is_empty() {
                let labels: Vec<String> = variant
                    .labels
                    .iter()
                    .map(|(name, named)| format!("{name}={named}"))
                    .collect();
                line.push_str(&format!("  labels: {}", labels.join(", ")));
            }
            if !variant.tags.is_empty() {
                line.push_str(&format!("  tags: {}", variant.tags.join(", ")));
            }
            push_line(&mut out, &line);
            // A YAML block scalar (`>`, `|`) ends with a line break, and `|` keeps those
            // inside: each line of it indented, none shown as a control character.
            if let Some(description) = &variant.description {
                for line in description.trim_end().lines() {
                    push_line(&mut out, &format!("    {}", line.trim_end()));
                }
            }
        }
    }
    out
}
