//! `promptc route` and `promptc list` as text (their JSON is the result serialised).

use crate::compile::{Choice, FamilyListing, RouteRule};

/// The variant chosen, and why: the rule that held, or the fallback.
pub fn choice(choice: &Choice) -> String {
    let mut out = format!("family:  {}\n", choice.family);
    let version = choice.version.as_deref().unwrap_or("(none)");
    match &choice.label {
        Some(label) => out.push_str(&format!("version: {version} (label `{label}`)\n")),
        None => out.push_str(&format!("version: {version}\n")),
    }
    out.push_str(&format!("variant: {}\n", choice.variant));
    if let Some(route) = &choice.route {
        match &route.rule {
            Some(rule) => out.push_str(&format!("rule:    {}\n", rule_text(rule))),
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
        out.push_str(&family.family);
        if family.fallback {
            out.push_str(" (fallback)");
        }
        out.push('\n');
        if let Some((position, rule)) = &family.routing {
            out.push_str(&format!("  routing #{position}: {}\n", rule_text(rule)));
        }
        for variant in &family.variants {
            let version = variant.version.as_deref().unwrap_or("(no version)");
            out.push_str(&format!("  {version}  {}", variant.id));
            if !variant.labels.is_empty() {
                let labels: Vec<String> = variant
                    .labels
                    .iter()
                    .map(|(name, named)| format!("{name}={named}"))
                    .collect();
                out.push_str(&format!("  labels: {}", labels.join(", ")));
            }
            if !variant.tags.is_empty() {
                out.push_str(&format!("  tags: {}", variant.tags.join(", ")));
            }
            out.push('\n');
            if let Some(description) = &variant.description {
                out.push_str(&format!("    {description}\n"));
            }
        }
    }
    out
}
