//! Conditions (`when`, predicates): they must compile, and read only names that exist.

use crate::diagnostic::Diagnostics;
use crate::load::entry::Entry;
use crate::model::{Parameter, StandardPlaceholder};
use crate::namespace::{ENABLED_TOOLS, Namespace, TOOLS_DATA, TOOLS_TEXT, closest};
use crate::pointer::child_pointer;
use crate::problem::{NotVisible, NoteKind, Problem};
use crate::source::Sources;
use crate::span::Span;
use crate::templates::meant;
use crate::workspace::Workspace;

pub fn check(workspace: &Workspace, out: &mut Diagnostics) {
    let declared = workspace.settings().context_fields.keys();
    let mut before_tools =
        Namespace::new(workspace.settings().predicates.keys().map(String::as_str));
    before_tools.declare_extra(declared.clone());
    for entry in workspace.variants.values() {
        for name in entry.value.placeholders.keys() {
            before_tools.insert(name.clone());
        }
    }
    if workspace.invalid.names_unknown() {
        before_tools.open();
    }
    let mut after_tools = before_tools.clone();
    after_tools.insert(ENABLED_TOOLS);
    let checker = Checker {
        workspace,
        sources: &workspace.sources,
        everything: after_tools.clone(),
        code_bytes: std::cell::Cell::new(workspace.templates.code_bytes()),
    };

    if let Some(manifest) = workspace.valid_manifest() {
        // A predicate sees the context and the predicates declared before it: a later one
        // (or itself) is not yet defined when it is evaluated.
        let mut earlier = Namespace::new(std::iter::empty());
        earlier.declare_extra(declared.clone());
        if workspace.invalid.names_unknown() {
            earlier.open();
        }
        for entry in workspace.variants.values() {
            for name in entry.value.placeholders.keys() {
                earlier.insert(name.clone());
            }
        }
        for (name, condition) in &manifest.value.predicates {
            let pointer = child_pointer("/predicates", name);
            checker.check(manifest, &pointer, condition, &earlier, out);
            earlier.insert(name.clone());
        }
        for (name, parameter) in &manifest.value.parameters {
            checker.parameter(
                manifest,
                &child_pointer("/parameters", name),
                parameter,
                &after_tools,
                out,
            );
        }
    }
    let mut routing =
        Namespace::for_routing(workspace.settings().predicates.keys().map(String::as_str));
    routing.declare_extra(declared);
    if workspace.invalid.names_unknown() {
        routing.open();
    }
    for entry in workspace.variants.values() {
        if let Some(condition) = &entry.value.route_match {
            checker.check(entry, "/match", condition, &routing, out);
        }
    }
    // A dialect rule reads the context and the predicates, as a `match` does, and the family
    // of the variant chosen.
    if let Some(manifest) = workspace.valid_manifest() {
        let mut dialects = routing.clone();
        dialects.insert(crate::namespace::FAMILY);
        for (index, rule) in manifest.value.tool_definitions.dialects.iter().enumerate() {
            let pointer = format!("/tool_definitions/dialects/{index}/when");
            checker.check(manifest, &pointer, &rule.when, &dialects, out);
        }
    }
    for entry in workspace.components.values() {
        if let Some(condition) = &entry.value.when {
            checker.check(entry, "/when", condition, &after_tools, out);
        }
    }
    for entry in workspace.tools.values() {
        let tool = &entry.value;
        if let Some(condition) = &tool.when {
            let before = out.len();
            checker.check(entry, "/when", condition, &before_tools, out);
            if tool.for_each.is_some() {
                item_not_in_conditions(tool.item_name(), out.since_mut(before));
            }
        }
        // A `for_each` list is an expression over the same names as a tool's condition.
        if let Some(list) = &tool.for_each {
            checker.check(entry, "/for_each", list, &before_tools, out);
            if tool.name.is_none() {
                out.error(
                    Problem::MissingField {
                        field: "name".into(),
                    },
                    entry.value_span("/for_each"),
                );
            }
        }
        for (family, spec) in &tool.families {
            if let Some(condition) = &spec.when {
                let pointer = format!("{}/when", child_pointer("/families", family));
                checker.check(entry, &pointer, condition, &before_tools, out);
            }
        }
        for (list_pointer, parameters) in tool.parameter_lists() {
            for (index, parameter) in parameters.iter().enumerate() {
                let pointer = format!("{list_pointer}/{index}");
                let before = out.len();
                checker.parameter(entry, &pointer, parameter, &after_tools, out);
                if tool.for_each.is_some() {
                    item_not_in_conditions(tool.item_name(), out.since_mut(before));
                }
            }
        }
    }
}

/// What reads a path, by where it is written: a tool's `for_each` list, or a condition.
fn reader_of(pointer: &str) -> crate::problem::PathReader {
    if pointer.ends_with("/for_each") {
        crate::problem::PathReader::ForEach
    } else {
        crate::problem::PathReader::Condition
    }
}

/// A `for_each` tool's condition that reads its item's name: told that conditions do not
/// see the item, rather than only that the context lacks the name.
fn item_not_in_conditions<'d>(
    item: &str,
    found: impl Iterator<Item = &'d mut crate::diagnostic::Diagnostic>,
) {
    for diagnostic in found {
        let path = match &diagnostic.problem {
            Problem::UnknownContextField { path, .. } => path.as_str(),
            Problem::UndefinedPlaceholder { name, .. } => name.as_str(),
            _ => continue,
        };
        if path == item || path.starts_with(&format!("{item}.")) {
            diagnostic.notes.push(NoteKind::ItemNotInConditions {
                item: item.to_string(),
            });
            // What the note says is the fix: not a declaration of the name.
            if let Problem::UnknownContextField { reader, .. } = &mut diagnostic.problem {
                *reader = crate::problem::PathReader::ConditionOfItems;
            }
        }
    }
}

struct Checker<'a> {
    workspace: &'a Workspace,
    sources: &'a Sources,
    /// Every name some condition can see: one missing only from a routing `match`'s
    /// namespace is a name of the variant, not yet chosen there.
    everything: Namespace,
    /// The workspace's code so far: its templates', then the conditions checked (see
    /// [`crate::templates::MAX_CODE_BYTES`]). A condition past the bound is not parsed.
    code_bytes: std::cell::Cell<u64>,
}

impl Checker<'_> {
    fn parameter<T>(
        &self,
        entry: &Entry<T>,
        pointer: &str,
        parameter: &Parameter,
        namespace: &Namespace,
        out: &mut Diagnostics,
    ) {
        if let Some(condition) = &parameter.when {
            self.check(entry, &format!("{pointer}/when"), condition, namespace, out);
        }
    }

    fn check<T>(
        &self,
        entry: &Entry<T>,
        pointer: &str,
        condition: &str,
        namespace: &Namespace,
        out: &mut Diagnostics,
    ) {
        let value_span = entry.value_span(pointer);
        let before = self.code_bytes.get();
        let code_bytes = before.saturating_add(condition.len() as u64);
        self.code_bytes.set(code_bytes);
        // Past the bound, no condition is parsed; the one that went past it is told.
        if before > crate::templates::MAX_CODE_BYTES {
            return;
        }
        if code_bytes > crate::templates::MAX_CODE_BYTES {
            out.error(
                Problem::TooMuchCode {
                    limit: crate::templates::MAX_CODE_BYTES,
                },
                value_span,
            );
            return;
        }
        // minijinja says only that an expression was expected where the text ends.
        if condition.trim().is_empty() {
            out.error(
                Problem::ConditionSyntax {
                    message: if pointer.ends_with("/when") {
                        crate::problem::EMPTY_CONDITION
                    } else {
                        crate::problem::EMPTY_EXPRESSION
                    }
                    .to_string(),
                    meant: None,
                    known: None,
                },
                value_span,
            );
            return;
        }
        let env = self.workspace.templates.env();
        let expression = match env.compile_expression_owned(condition.to_string()) {
            Ok(expression) => expression,
            Err(error) => {
                let span = error.range().map_or(value_span, |range| {
                    self.within(value_span, condition, range)
                });
                out.error(
                    Problem::ConditionSyntax {
                        message: error.detail().unwrap_or("invalid expression").to_string(),
                        meant: meant::meant(env, &error)
                            .or_else(|| meant::rewritten(env, condition, &error))
                            .or_else(|| meant::unbraced(condition)),
                        known: meant::known(env, &error),
                    },
                    span,
                );
                return;
            }
        };
        // A filter or test it names that templates lack fails an evaluation only where the
        // evaluation reaches it (`yolo and (os | uper) == 'x'`).
        // Each name once, at its first place: a condition naming the same unknown filter
        // thousands of times was an error, with its list of every filter, for each.
        if condition.contains('|') || condition.contains("is") {
            let mut told = std::collections::HashSet::new();
            for named in env.filters_and_tests_in_expression(condition) {
                if told.len() >= crate::diagnostic::MAX_PROBLEMS_PER_FILE
                    || told.contains(&(named.kind, named.name.clone()))
                {
                    continue;
                }
                let key = (named.kind, named.name.clone());
                let range = named.range.clone();
                if let Some(problem) = super::filters_and_tests::unknown(env, named) {
                    told.insert(key);
                    out.error(problem, self.within(value_span, condition, range));
                }
            }
        }
        let mut paths: Vec<String> = expression.undeclared_variables(true).into_iter().collect();
        paths.sort();
        // The environment's functions (`range`, `dict`, …) are names too, as in templates.
        let is_global = |path: &str| {
            let first = path.split('.').next().unwrap_or(path);
            env.globals().any(|(name, _)| name == first)
        };
        // A table of the context standing alone as a condition, or as a side of `and` or
        // `or` (`focus_chain`, `not plan_mode and focus_chain`), holds, or fails, whatever
        // the table's fields say.
        let mut sides = Vec::new();
        leaves(condition, 0, false, &mut sides);
        for (range, negated) in sides.iter().cloned() {
            let bare = &condition[range.clone()];
            if !is_plain_path(bare) {
                continue;
            }
            let Some(booleans) = namespace.table_at(bare) else {
                continue;
            };
            let field = match booleans.as_slice() {
                [only] => Some(only.clone()),
                _ => booleans.iter().find(|name| *name == "enabled").cloned(),
            };
            out.push(crate::diagnostic::Diagnostic::new(
                Problem::ConditionOnATable {
                    path: bare.to_string(),
                    field,
                    negated,
                },
                self.within(value_span, condition, range),
            ));
        }
        // A tool id `enabled_tools` is asked about is one of the workspace's (see
        // `validate::template_names`, which asks the templates).
        // Where the condition may read it at all: a tool's condition is told that instead.
        if paths.iter().any(|path| path == ENABLED_TOOLS)
            && namespace.contains(ENABLED_TOOLS)
            && !self.workspace.tools.is_empty()
        {
            let ids: Vec<String> = self.workspace.tools.keys().cloned().collect();
            for (name, range) in crate::templates::literals_tested(condition, ENABLED_TOOLS) {
                // A tool whose file failed to load was reported there: its id is no typo.
                if !ids.contains(&name)
                    && !self
                        .workspace
                        .invalid
                        .contains(crate::problem::RefKind::Tool, &name)
                {
                    out.push(crate::diagnostic::Diagnostic::new(
                        Problem::ToolNeverEnabled {
                            suggestion: closest(&name, &ids),
                            name,
                        },
                        self.within(value_span, condition, range),
                    ));
                }
            }
        }
        // Quoted text standing as a side is a constant: `'false'` holds.
        for (range, _) in sides.iter().cloned() {
            let written = condition[range.clone()].trim();
            let Some(serde_json::Value::String(text)) = literal_of(written) else {
                continue;
            };
            out.push(crate::diagnostic::Diagnostic::new(
                Problem::ConditionIsText {
                    written: written.to_string(),
                    holds: !text.is_empty(),
                },
                self.within(value_span, condition, range),
            ));
        }
        for (range, _) in sides {
            let Some(never) = never_equal(&condition[range.clone()], namespace, self.workspace)
            else {
                continue;
            };
            out.push(crate::diagnostic::Diagnostic::new(
                never,
                self.within(value_span, condition, range),
            ));
        }
        // A field read by a subscript of a literal key (`browser['enabeld']`) is checked as
        // its dotted path is: minijinja names only the table, and a misspelt key read so was
        // silently false.
        for (dotted, range) in subscripted_paths(condition) {
            if is_global(&dotted) || paths.contains(&dotted) {
                continue;
            }
            if let Err((unknown, suggestion)) = namespace.check_path(&dotted)
                && unknown.contains('.')
            {
                out.error(
                    Problem::UnknownContextField {
                        fields: crate::schema::fields_if_none_near(&unknown, &suggestion),
                        path: unknown,
                        suggestion,
                        reader: reader_of(pointer),
                    },
                    self.within(value_span, condition, range),
                );
            }
        }
        for path in paths.into_iter().filter(|path| !is_global(path)) {
            if let Err((unknown, suggestion)) = namespace.check_path(&path) {
                let first = unknown.split('.').next().unwrap_or(&unknown);
                let at = find_name(condition, &unknown)
                    .or_else(|| find_name(condition, first))
                    .unwrap_or(0);
                // A name that exists, but not where this condition runs, is told as such.
                let problem = if self.workspace.settings().predicates.contains_key(first) {
                    Problem::NotYetDefined {
                        name: first.to_string(),
                        reason: if pointer == child_pointer("/predicates", first) {
                            NotVisible::ItsOwnPredicate
                        } else {
                            NotVisible::LaterPredicate
                        },
                    }
                } else if first == ENABLED_TOOLS {
                    Problem::NotYetDefined {
                        name: first.to_string(),
                        reason: NotVisible::EnabledToolsInToolCondition,
                    }
                } else if first == TOOLS_TEXT
                    || first == TOOLS_DATA
                    || self
                        .workspace
                        .components
                        .values()
                        .any(|entry| entry.value.slot() == first)
                {
                    Problem::NotYetDefined {
                        name: first.to_string(),
                        reason: NotVisible::BeforeRenders,
                    }
                } else if !namespace.contains(first) && self.everything.contains(first) {
                    Problem::NotYetDefined {
                        name: first.to_string(),
                        reason: if pointer.starts_with("/tool_definitions/dialects/") {
                            NotVisible::InDialectRule
                        } else {
                            NotVisible::BeforeRouting
                        },
                    }
                } else {
                    Problem::UnknownContextField {
                        fields: crate::schema::fields_if_none_near(&unknown, &suggestion),
                        path: unknown.clone(),
                        suggestion,
                        reader: reader_of(pointer),
                    }
                };
                out.error(
                    problem,
                    self.within(value_span, condition, at..at + unknown.len()),
                );
            }
        }
    }

    /// A range of the condition's text as a span of the file, when the text stands there
    /// verbatim; the whole value otherwise.
    fn within(&self, value_span: Span, text: &str, range: std::ops::Range<usize>) -> Span {
        crate::span::within_value(self.sources, value_span, text, range).unwrap_or(value_span)
    }
}

/// Where `name` is used as a name in an expression: not inside a string literal, not part of a
/// longer name.
fn find_name(expression: &str, name: &str) -> Option<usize> {
    let part_of_name = |c: char| c.is_alphanumeric() || c == '_';
    expression
        .match_indices(name)
        .map(|(at, _)| at)
        .find(|&at| {
            let quotes = expression[..at].matches(['\'', '"']).count();
            let before = expression[..at].chars().next_back();
            let after = expression[at + name.len()..].chars().next();
            quotes.is_multiple_of(2)
                && !before.is_some_and(|c| part_of_name(c) || c == '.')
                && !after.is_some_and(part_of_name)
        })
}

/// The paths a condition reads with at least one subscript of a literal key (`browser['enabled']`,
/// `extra["team"].lead`), written as dotted paths (`browser.enabled`), each with its range in
/// the condition. Text inside string literals is not read.
fn subscripted_paths(condition: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let bytes = condition.as_bytes();
    let is_start = |b: u8| b.is_ascii_alphabetic() || b == b'_';
    let is_part = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte == b'\'' || byte == b'"' {
            // A string literal: skipped whole, escapes included.
            at += 1;
            while at < bytes.len() && bytes[at] != byte {
                at += if bytes[at] == b'\\' { 2 } else { 1 };
            }
            at += 1;
            continue;
        }
        let starts_name =
            is_start(byte) && (at == 0 || !(is_part(bytes[at - 1]) || bytes[at - 1] == b'.'));
        if !starts_name {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && is_part(bytes[at]) {
            at += 1;
        }
        let mut dotted = condition[start..at].to_string();
        let mut subscripted = false;
        loop {
            if bytes.get(at) == Some(&b'.') && bytes.get(at + 1).is_some_and(|b| is_start(*b)) {
                let name_start = at + 1;
                at = name_start;
                while at < bytes.len() && is_part(bytes[at]) {
                    at += 1;
                }
                dotted.push('.');
                dotted.push_str(&condition[name_start..at]);
            } else if bytes.get(at) == Some(&b'[')
                && let Some(quote @ (b'\'' | b'"')) = bytes.get(at + 1).copied()
                && let Some(length) = condition[at + 2..].find(quote as char)
                && bytes.get(at + 2 + length + 1) == Some(&b']')
            {
                let key = &condition[at + 2..at + 2 + length];
                dotted.push('.');
                dotted.push_str(key);
                subscripted = true;
                at += length + 4;
            } else {
                break;
            }
        }
        if subscripted {
            found.push((dotted, start..at));
        }
    }
    found
}

/// A side of a condition that compares a context field with `==` or `!=` to a value the
/// field never holds: a value outside its choices (`mode == 'Plan'`), or of another type
/// (`browser.viewport.width == '800'`, `yolo == 'true'`).
fn never_equal(side: &str, namespace: &Namespace, workspace: &Workspace) -> Option<Problem> {
    let parts = split_operator(side)?;
    let (left, unequal, right) = parts;
    let (path, literal) = if is_plain_path(left) {
        (left, right)
    } else {
        (right, left)
    };
    let first = path.split('.').next()?;
    if !is_plain_path(path) || !namespace.contains(first) {
        return None;
    }
    // A standard placeholder holds its context field's value as it is (`SUPPORTS_BROWSER`
    // the boolean `browser.enabled`), unless a context of the workspace replaces it.
    let field = if crate::namespace::context_fields().contains(first) {
        path
    } else {
        let standard = StandardPlaceholder::ALL
            .into_iter()
            .find(|placeholder| placeholder.name() == path)?;
        let replaced = workspace
            .contexts
            .values()
            .any(|entry| entry.value.placeholders.contains_key(path));
        if replaced {
            return None;
        }
        standard.context_path()?
    };
    let literal_value = literal_of(literal)?;
    let root = crate::schema::context_schema();
    let schema = crate::schema::resolved(root, crate::schema::context_schema_at(field).ok()?);
    let choices: Vec<String> = schema
        .get("enum")
        .and_then(serde_json::Value::as_array)
        .map(|values| {
            values
                .iter()
                .filter_map(|value| value.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let types: Vec<&str> = match schema.get("type") {
        Some(serde_json::Value::String(kind)) => vec![kind.as_str()],
        Some(serde_json::Value::Array(kinds)) => {
            kinds.iter().filter_map(serde_json::Value::as_str).collect()
        }
        _ if !choices.is_empty() => vec!["string"],
        _ => return None,
    };
    let literal_type = match &literal_value {
        serde_json::Value::String(_) => "string",
        serde_json::Value::Number(number) if number.is_f64() => "number",
        serde_json::Value::Number(_) => "integer",
        serde_json::Value::Bool(_) => "boolean",
        _ => return None,
    };
    // minijinja compares numbers as numbers (`900 == 900.0`), and a boolean as the number it
    // is (`true == 1`): only text against another type, or a choice the field lacks, never
    // holds.
    let numeric = |kind: &str| matches!(kind, "integer" | "number" | "boolean");
    let fits_type = types
        .iter()
        .any(|kind| *kind == literal_type || (numeric(kind) && numeric(literal_type)));
    let (holds, suggestion) = if !fits_type {
        let holds = types
            .iter()
            .filter(|kind| **kind != "null")
            .map(|kind| match *kind {
                "string" if !choices.is_empty() => format!("one of {}", choices.join(", ")),
                "string" => "text".to_string(),
                "integer" => "a whole number".to_string(),
                "number" => "a number".to_string(),
                "boolean" => "`true` or `false`".to_string(),
                other => format!("a {other}"),
            })
            .collect::<Vec<_>>()
            .join(" or ");
        (holds, None)
    } else if let (false, serde_json::Value::String(text)) = (choices.is_empty(), &literal_value) {
        if choices.contains(text) {
            return None;
        }
        let near = choices
            .iter()
            .find(|choice| choice.eq_ignore_ascii_case(text))
            .cloned()
            .or_else(|| crate::namespace::closest(text, choices.iter()));
        (format!("one of {}", choices.join(", ")), near)
    } else {
        return None;
    };
    Some(Problem::NeverEqual {
        comparison: side.to_string(),
        path: path.to_string(),
        holds,
        unequal,
        suggestion,
    })
}

/// `left == right` or `left != right` (the operator alone at the top level, outside quotes
/// and brackets): the two sides, trimmed, and whether it is `!=`.
fn split_operator(side: &str) -> Option<(&str, bool, &str)> {
    let bytes = side.as_bytes();
    let mut quote: Option<u8> = None;
    let mut depth = 0i32;
    let mut found = None;
    for at in 0..bytes.len() {
        match (quote, bytes[at]) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(bytes[at]),
            (None, b'(' | b'[' | b'{') => depth += 1,
            (None, b')' | b']' | b'}') => depth -= 1,
            (None, b'=' | b'!') if depth == 0 && bytes.get(at + 1) == Some(&b'=') => {
                let before_ok = at == 0 || !matches!(bytes[at - 1], b'=' | b'<' | b'>' | b'!');
                let after_ok = bytes.get(at + 2) != Some(&b'=');
                if !before_ok || !after_ok || found.is_some() {
                    return None;
                }
                found = Some((at, bytes[at] == b'!'));
            }
            _ => {}
        }
    }
    let (at, unequal) = found?;
    Some((side[..at].trim(), unequal, side[at + 2..].trim()))
}

/// A dotted path of names (`browser.viewport.width`), nothing else.
fn is_plain_path(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))
        && !text.ends_with('.')
        && !matches!(text, "true" | "false" | "none" | "True" | "False" | "None")
}

/// A literal as a condition writes it: a quoted text without escapes, a number, `true` or
/// `false`.
fn literal_of(text: &str) -> Option<serde_json::Value> {
    for quote in ['\'', '"'] {
        if let Some(inner) = text
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            if inner.contains(quote) || inner.contains('\\') {
                return None;
            }
            return Some(serde_json::Value::String(inner.to_string()));
        }
    }
    match text {
        "true" | "True" => return Some(serde_json::Value::Bool(true)),
        "false" | "False" => return Some(serde_json::Value::Bool(false)),
        _ => {}
    }
    if !text.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        return None;
    }
    serde_json::from_str::<serde_json::Number>(text)
        .ok()
        .map(serde_json::Value::Number)
}

/// The names and paths (`focus_chain`, `browser.viewport`) that stand as a truth value in a
/// condition: the whole of it, or a side of `and` or `or`, under any `not` and parentheses;
/// each with its byte range in the condition (from `offset`), and whether a `not` turns it.
/// `check` reads them off the [`leaves`] it walks for its other checks too.
#[cfg(test)]
fn boolean_operands(
    text: &str,
    offset: usize,
    negated: bool,
    out: &mut Vec<(std::ops::Range<usize>, bool)>,
) {
    let mut found = Vec::new();
    leaves(text, offset, negated, &mut found);
    out.extend(
        found
            .into_iter()
            .filter(|(range, _)| is_plain_path(&text[range.start - offset..range.end - offset])),
    );
}

/// The sides of a condition's `and` and `or`, under `not` (`negated`) and parentheses, each
/// trimmed, with its byte range (`offset` on).
fn leaves(text: &str, offset: usize, negated: bool, out: &mut Vec<(std::ops::Range<usize>, bool)>) {
    let start = text.len() - text.trim_start().len();
    let trimmed = text.trim();
    let offset = offset + start;
    let sides = split_at_top_level(trimmed, &["and", "or"]);
    if sides.len() > 1 {
        for (at, side) in sides {
            leaves(side, offset + at, negated, out);
        }
        return;
    }
    if let Some(rest) = trimmed
        .strip_prefix("not")
        .filter(|rest| rest.starts_with(|c: char| c.is_whitespace() || c == '('))
    {
        leaves(rest, offset + 3, !negated, out);
        return;
    }
    if let Some(inner) = trimmed
        .strip_prefix('(')
        .and_then(|inner| inner.strip_suffix(')'))
        .filter(|inner| split_at_top_level(inner, &[]).len() == 1 && balanced(inner))
    {
        leaves(inner, offset + 1, negated, out);
        return;
    }
    if !trimmed.is_empty() {
        out.push((offset..offset + trimmed.len(), negated));
    }
}

/// Whether every parenthesis of `text` (outside quotes) closes in order.
fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    let mut quote = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// `text` cut at each of `words` that stands alone (spaces or parentheses around it) outside
/// parentheses, brackets and quotes; each part with its byte offset in `text`.
fn split_at_top_level<'t>(text: &'t str, words: &[&str]) -> Vec<(usize, &'t str)> {
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        let c = bytes[at];
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(c),
            (None, b'(' | b'[' | b'{') => depth += 1,
            (None, b')' | b']' | b'}') => depth -= 1,
            (None, _) if depth == 0 => {
                let before =
                    at == 0 || matches!(bytes[at - 1], b' ' | b')' | b'\t' | b'\n' | b'\r');
                let found = words.iter().find(|word| {
                    let end = at + word.len();
                    before
                        && text[at..].starts_with(**word)
                        && end < bytes.len()
                        && matches!(bytes[end], b' ' | b'(' | b'\t' | b'\n' | b'\r')
                });
                if let Some(word) = found {
                    parts.push((start, &text[start..at]));
                    at += word.len();
                    start = at;
                    continue;
                }
            }
            _ => {}
        }
        at += 1;
    }
    parts.push((start, &text[start..]));
    parts
}

#[cfg(test)]
mod tests {
    use super::{boolean_operands, find_name, subscripted_paths};

    /// The names that stand as truth values, with whether a `not` turns them: across line
    /// breaks and tabs, under parentheses, not inside strings, comparisons or tests.
    #[test]
    fn truth_values_are_found_under_not_and_parentheses() {
        let operands = |condition: &str| {
            let mut found = Vec::new();
            boolean_operands(condition, 0, false, &mut found);
            found
                .into_iter()
                .map(|(range, negated)| (condition[range].to_string(), negated))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            operands("not\nfocus_chain"),
            [("focus_chain".to_string(), true)]
        );
        assert_eq!(
            operands("a and\t(not b or c.d)\nand 'x and y' in e and f is defined"),
            [
                ("a".to_string(), false),
                ("b".to_string(), true),
                ("c.d".to_string(), false)
            ]
        );
        assert_eq!(operands("(a) or (b == 1)"), [("a".to_string(), false)]);
        assert!(operands("not (a == b)").is_empty());
        assert!(operands("notable").len() == 1);
    }

    #[test]
    fn subscripts_of_literal_keys_are_read_as_dotted_paths() {
        assert_eq!(
            subscripted_paths(
                "browser['enabeld'] and extra[\"team\"].lead == 'x[\\'y\\']' or mode"
            ),
            [
                ("browser.enabeld".to_string(), 0..18),
                ("extra.team.lead".to_string(), 23..41),
            ]
        );
        assert!(subscripted_paths("browser.enabled or items[0] or x[name]").is_empty());
    }

    #[test]
    fn names_are_found_outside_strings_and_longer_names() {
        let expression = "model.id == 'browser' and browser.enabeld";
        assert_eq!(find_name(expression, "browser.enabeld"), Some(26));
        assert_eq!(find_name(expression, "browser"), Some(26));
        assert_eq!(find_name("xbrowser or browser", "browser"), Some(12));
    }
}
