//! `promptc stats` as a markdown table or JSON: tokens, characters and the cacheable prefix of
//! each compiled prompt.

use crate::analysis::stats::PromptStats;

use super::json_document;
use super::visible::push_line;

/// One table of every prompt; with `with_sections`, a table of sections for each prompt too.
pub fn markdown(rows: &[PromptStats], with_sections: bool) -> String {
    let mut out = String::from(
        "| family | context | tokens | tool definitions | budget | headroom | characters | stable prefix (tokens) | prefix sha256 |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    // A family compiled twice for one context (a build entry's other version) is told apart
    // by its variant; two entries of one variant, by output. Counted once, not per row.
    // A family whose rows compile more than one variant names the variant in each of its
    // rows, not only in those of the contexts it is compiled twice for: `next-gen (next-gen)`
    // beside a plain `next-gen` read as two things.
    let mut variants_of = std::collections::HashMap::new();
    let mut by_variant = std::collections::HashMap::new();
    for row in rows {
        variants_of
            .entry(&row.family)
            .or_insert_with(std::collections::BTreeSet::new)
            .insert(&row.variant);
        *by_variant
            .entry((&row.family, &row.context, &row.variant))
            .or_insert(0) += 1;
    }
    let name = |row: &PromptStats| match &row.output {
        Some(output) if by_variant[&(&row.family, &row.context, &row.variant)] > 1 => {
            format!("{} ({output})", row.family)
        }
        _ if variants_of[&row.family].len() > 1 => {
            format!("{} ({})", row.family, row.variant)
        }
        _ => row.family.clone(),
    };
    for row in rows {
        let estimate = if row.exact { "" } else { "≈ " };
        let (prefix, hash) =
            row.stable_prefix
                .as_ref()
                .map_or(("?".to_string(), "?".to_string()), |p| {
                    (
                        format!("{} ({}%)", p.tokens, p.percent),
                        p.sha256[..12].to_string(),
                    )
                });
        let (budget, headroom) = match (row.budget, row.headroom) {
            (Some(budget), Some(headroom)) => (budget.to_string(), format!("{estimate}{headroom}")),
            _ => ("-".to_string(), "-".to_string()),
        };
        let definitions = row
            .tool_definition_tokens
            .map_or("-".to_string(), |tokens| format!("{estimate}{tokens}"));
        push_line(
            &mut out,
            &format!(
                "| {} | {} | {estimate}{} ({}) | {definitions} | {budget} | {headroom} | {} | {prefix} | `{hash}` |",
                name(row),
                row.context,
                row.tokens,
                row.encoding,
                row.characters
            ),
        );
    }
    out.push_str("\n≈: counted with an encoding that is not the family's own tokenizer.\n");
    if with_sections {
        for row in rows {
            out.push('\n');
            push_line(&mut out, &format!("{} × {}:", name(row), row.context));
            out.push_str("\n| section | tokens |\n| --- | ---: |\n");
            for section in &row.sections {
                // A section inside another is counted in both: said, so that no one adds them.
                let name = match &section.inside {
                    Some(container) => format!("{} (in {container})", section.id),
                    None => section.id.clone(),
                };
                let estimate = if row.exact { "" } else { "≈ " };
                push_line(
                    &mut out,
                    &format!("| {name} | {estimate}{} |", section.tokens),
                );
            }
            // Not a section, but sent with the prompt and counted in its budget.
            if let Some(tokens) = row.tool_definition_tokens {
                let estimate = if row.exact { "" } else { "≈ " };
                push_line(
                    &mut out,
                    &format!("| (tool definitions, beside the prompt) | {estimate}{tokens} |"),
                );
            }
        }
    }
    out
}

/// `{"prompts": [...]}`.
pub fn json(rows: &[PromptStats]) -> String {
    json_document(&serde_json::json!({ "prompts": rows }))
}
