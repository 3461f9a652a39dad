//! The name a template meant when it names a filter, test, function or statement that its
//! environment lacks: minijinja says `filter uppper is unknown`, and the fix is the near name
//! (`upper`), which only the environment's own lists can tell.

use std::collections::BTreeSet;

use minijinja::value::ValueKind;
use minijinja::{Environment, ErrorKind, Value};

use crate::namespace::closest;
use crate::problem::KnownNames;

/// The statements minijinja parses (`{% … %}`), their closing tags, and the branches of `if`
/// and `for`: the names `unknown statement` may have meant.
const STATEMENTS: &[&str] = &[
    "autoescape",
    "block",
    "break",
    "call",
    "continue",
    "do",
    "elif",
    "else",
    "endautoescape",
    "endblock",
    "endcall",
    "endfilter",
    "endfor",
    "endif",
    "endmacro",
    "endset",
    "endwith",
    "extends",
    "filter",
    "for",
    "from",
    "if",
    "import",
    "include",
    "macro",
    "set",
    "with",
];

/// The near name `error` may have meant, when it names something `env` lacks.
pub fn meant(env: &Environment<'_>, error: &minijinja::Error) -> Option<String> {
    let (name, _, known) = unknown_name(env, error)?;
    closest(name, &known).filter(|near| near != name)
}

/// Every name of its kind `env` has, when `error` names a filter, test, function or statement
/// that `env` lacks and none near it: what a template can write instead.
pub fn known(env: &Environment<'_>, error: &minijinja::Error) -> Option<KnownNames> {
    let (name, what, names) = unknown_name(env, error)?;
    closest(name, &names)
        .is_none()
        .then_some(KnownNames { what, names })
}

/// The name `error` says `env` lacks, what kind of name it is (`filters`), and the names of
/// that kind `env` has, in name order.
fn unknown_name<'e>(
    env: &Environment<'_>,
    error: &'e minijinja::Error,
) -> Option<(&'e str, &'static str, Vec<String>)> {
    let detail = error.detail()?;
    let (name, what, mut known): (&str, &'static str, Vec<String>) = match error.kind() {
        ErrorKind::UnknownFilter => (
            detail
                .strip_prefix("filter ")?
                .strip_suffix(" is unknown")?,
            "filters",
            env.filter_names().map(str::to_owned).collect(),
        ),
        ErrorKind::UnknownTest => (
            detail.strip_prefix("test ")?.strip_suffix(" is unknown")?,
            "tests",
            env.test_names().map(str::to_owned).collect(),
        ),
        ErrorKind::UnknownFunction => (
            detail.strip_suffix(" is unknown")?,
            "functions",
            env.globals().map(|(name, _)| name.to_owned()).collect(),
        ),
        ErrorKind::SyntaxError => (
            detail.strip_prefix("unknown statement ")?,
            "statements",
            STATEMENTS.iter().map(|name| (*name).to_owned()).collect(),
        ),
        _ => return None,
    };
    known.sort_unstable();
    Some((name, what, known))
}

/// The most items of a list a loop walks whose keys are looked at for a suggestion.
const ITEMS_LOOKED_AT: usize = 64;

/// The path a render meant when it reads an attribute or key that is not there
/// (`tool.descripton`, `extra.teem`, `extra['teem']`): the same path with the missing name
/// replaced by the near name the value it was looked up in has. The value is found from the
/// render's own `values`, or, for a loop variable (`p` in `{% for p in tool.parameters %}`),
/// from the items of the list the template's loop walks.
pub fn attribute(error: &minijinja::Error, values: &Value) -> Option<String> {
    // minijinja's detail names the expression: "`tool.descripton` is undefined", alone or
    // after what failed with it ("cannot calculate length of value of type undefined
    // (`tool.descripton` is undefined)").
    let detail = error.detail()?;
    if error.kind() != ErrorKind::UndefinedError && !detail.contains("` is undefined") {
        return None;
    }
    let expression = detail.split('`').nth(1)?;
    // minijinja names a subscript with `'`, whichever quote the template wrote; the text
    // read is the tag up to what failed, which may be a filter after the value.
    let written = error
        .range()
        .zip(error.template_source())
        .and_then(|(range, source)| {
            let before = source.get(..range.end)?;
            let tag = before
                .rfind("{{")
                .into_iter()
                .chain(before.rfind("{%"))
                .max();
            before.get(tag.unwrap_or(range.start).min(range.start)..)
        });
    let quote = if written.is_some_and(|text| text.contains("[\"")) {
        '"'
    } else {
        '\''
    };
    near_path(expression, values, error.template_source(), quote)
}

/// The path `expression` (`extra.teem`, `extra['teem']`) meant, as [`attribute`] finds it, among
/// `values` alone.
pub fn path(expression: &str, values: &Value) -> Option<String> {
    let quote = if expression.contains("[\"") {
        '"'
    } else {
        '\''
    };
    near_path(expression, values, None, quote)
}

/// One step of a path, and its text as written (`.name`, `['key']`, `[0]`).
enum Step<'a> {
    Name(&'a str),
    Key(&'a str),
    Index(i64),
}

/// The steps of a path minijinja names: a name, then `.name`, `['key']`, `["key"]` or `[0]`.
fn steps(expression: &str) -> Option<Vec<(Step<'_>, &str)>> {
    let end = expression.find(['.', '[']).unwrap_or(expression.len());
    let head = &expression[..end];
    if !is_name(head) {
        return None;
    }
    let mut steps = vec![(Step::Name(head), head)];
    let mut rest = &expression[end..];
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if !is_name(name) {
                return None;
            }
            steps.push((Step::Name(name), &rest[..=end]));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let close = after.find(']')?;
            let inner = &after[..close];
            let quoted = ['\'', '"'].into_iter().find_map(|quote| {
                inner
                    .strip_prefix(quote)?
                    .strip_suffix(quote)
                    .filter(|key| !key.contains(quote))
            });
            let step = match quoted {
                Some(key) => Step::Key(key),
                None => Step::Index(inner.parse().ok()?),
            };
            steps.push((step, &rest[..close + 2]));
            rest = &after[close + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

fn near_path(
    expression: &str,
    values: &Value,
    source: Option<&str>,
    quote: char,
) -> Option<String> {
    let steps = steps(expression)?;
    let (Step::Name(head), _) = steps.first()? else {
        return None;
    };
    if steps.len() < 2 {
        return None;
    }
    let head_value = values.get_attr(head).ok().filter(|v| !v.is_undefined());
    let mut candidates: Vec<Value> = match head_value {
        Some(value) => vec![value],
        None => loop_items(source?, head, values),
    };
    for (index, (step, _)) in steps.iter().enumerate().skip(1) {
        let found: Vec<Value> = candidates
            .iter()
            .filter_map(|value| match step {
                Step::Name(name) => value.get_attr(name).ok(),
                Step::Key(key) => value.get_item(&Value::from(*key)).ok(),
                Step::Index(at) => value.get_item(&Value::from(*at)).ok(),
            })
            .filter(|value| !value.is_undefined())
            .collect();
        if !found.is_empty() {
            candidates = found;
            continue;
        }
        let missing = match step {
            Step::Name(name) | Step::Key(name) => *name,
            Step::Index(_) => return None,
        };
        let keys: BTreeSet<String> = candidates
            .iter()
            .filter(|value| value.kind() == ValueKind::Map)
            .filter_map(|value| value.try_iter().ok())
            .flatten()
            .filter_map(|key| key.as_str().map(str::to_owned))
            .collect();
        let near = closest(missing, &keys).filter(|near| near != missing)?;
        let mut meant: String = steps[..index].iter().map(|(_, text)| *text).collect();
        // Written as it was, and a key that is no name as a subscript.
        match step {
            Step::Name(_) if is_name(&near) => meant.push_str(&format!(".{near}")),
            _ => meant.push_str(&format!("[{quote}{near}{quote}]")),
        }
        return Some(meant);
    }
    None
}

fn is_name(segment: &str) -> bool {
    !segment.is_empty()
        && segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The items of the list that `{% for name in a.b %}` in `source` walks, when the list is a
/// path of the render's values.
fn loop_items(source: &str, name: &str, values: &Value) -> Vec<Value> {
    let Some(list) = source.match_indices("for").find_map(|(at, _)| {
        let mut words = source[at + 3..].split_whitespace();
        let before = source[..at].trim_end();
        if !(before.ends_with("{%") || before.ends_with("{%-")) {
            return None;
        }
        (words.next() == Some(name) && words.next() == Some("in"))
            .then(|| words.next())
            .flatten()
    }) else {
        return Vec::new();
    };
    let list = list.trim_end_matches(['%', '}', '-']);
    let mut value = values.clone();
    for segment in list.split('.') {
        if !is_name(segment) {
            return Vec::new();
        }
        match value.get_attr(segment) {
            Ok(next) if !next.is_undefined() => value = next,
            _ => return Vec::new(),
        }
    }
    if value.kind() != ValueKind::Seq {
        return Vec::new();
    }
    value
        .try_iter()
        .map(|items| items.take(ITEMS_LOOKED_AT).collect())
        .unwrap_or_default()
}

/// The comparison a condition meant when it compares with `=` (`mode = 'plan'`), which
/// minijinja reads as an assignment it does not allow in an expression.
pub fn comparison(condition: &str, error: &minijinja::Error) -> Option<String> {
    if error.kind() != ErrorKind::SyntaxError {
        return None;
    }
    let at = error.range()?.start;
    let after = condition.get(at..)?;
    // A lone `=`: `==`, `!=`, `<=` and `>=` parse, and `=>`, `=<`, `===` or `!==` meant
    // something else.
    let before = condition[..at].chars().next_back();
    if !after.starts_with('=')
        || after[1..].starts_with(['=', '<', '>', '!'])
        || before.is_some_and(|c| matches!(c, '=' | '!' | '<' | '>'))
    {
        return None;
    }
    Some(format!("{}=={}", &condition[..at], &after[1..]))
}

/// What minijinja writes for an operator written as other languages write it (`&&`, `||`,
/// `!`, `<>`) where a syntax error stops in `source`: its word (`and`, `or`, `not`), and the range
/// of `source` the word replaces. minijinja says only "unexpected character" of `&` and `!`,
/// and of `||` that it expected a filter's name after the first `|`.
pub fn foreign_operator(
    source: &str,
    error: &minijinja::Error,
) -> Option<(&'static str, std::ops::Range<usize>)> {
    if error.kind() != ErrorKind::SyntaxError {
        return None;
    }
    let at = error.range()?.start;
    let after = source.get(at..)?;
    let before = source.get(..at)?;
    if after.starts_with("&&") {
        Some(("and", at..at + 2))
    } else if after.starts_with('&') {
        Some(("and", at..at + 1))
    } else if after.starts_with('|') && before.ends_with('|') {
        Some(("or", at - 1..at + 1))
    } else if after.starts_with("||") {
        Some(("or", at..at + 2))
    } else if after.starts_with('!')
        && after[1..]
            .trim_start()
            .starts_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | '(' | '\'' | '"'))
    {
        // `!x` before an operand; `'x'!` is no negation to rewrite.
        Some(("not", at..at + 1))
    } else if after.starts_with('>') && before.ends_with('<') && !after[1..].trim().is_empty() {
        Some(("!=", at - 1..at + 1))
    } else {
        None
    }
}

/// `condition` with the operator [`foreign_operator`] finds written as minijinja writes it:
/// `mode == 'plan' and yolo` for `mode == 'plan' && yolo`, `not yolo` for `!yolo`.
pub fn operator(condition: &str, error: &minijinja::Error) -> Option<String> {
    let (word, range) = foreign_operator(condition, error)?;
    let before = condition.get(..range.start)?.trim_end();
    let after = condition.get(range.end..)?.trim_start();
    let gap = if before.is_empty() { "" } else { " " };
    Some(
        format!("{before}{gap}{word} {after}")
            .trim_end()
            .to_string(),
    )
}

/// `condition` with every `=` meant as a comparison ([`comparison`]) and every operator
/// written as other languages write it ([`operator`]) rewritten, one syntax error after
/// another: `mode = 'plan' && !yolo` is `mode == 'plan' and not yolo`, where fixing only the
/// first left a suggestion that failed again. `None` when the first error is neither.
pub fn rewritten(
    env: &minijinja::Environment<'_>,
    condition: &str,
    error: &minijinja::Error,
) -> Option<String> {
    // Each rewrite fixes one operator; a condition has few.
    const MAX_REWRITES: usize = 16;
    let mut current = comparison(condition, error).or_else(|| operator(condition, error))?;
    for _ in 0..MAX_REWRITES {
        let Err(error) = env.compile_expression(&current) else {
            break;
        };
        match comparison(&current, &error).or_else(|| operator(&current, &error)) {
            Some(next) => current = next,
            None => break,
        }
    }
    Some(current)
}

/// The expression inside `{{ … }}` when a whole condition is written as a template's
/// expression: a condition is the expression alone.
pub fn unbraced(condition: &str) -> Option<String> {
    let inner = condition
        .trim()
        .strip_prefix("{{")?
        .strip_suffix("}}")?
        .trim_matches(['-', '+'])
        .trim();
    (!inner.is_empty() && !inner.contains("{{") && !inner.contains("}}")).then(|| inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_error(env: &Environment<'_>, source: &str) -> minijinja::Error {
        match env.render_str(source, minijinja::context! { x => "a" }) {
            Ok(text) => panic!("{source} rendered: {text}"),
            Err(error) => error,
        }
    }

    #[test]
    fn a_near_filter_test_function_or_statement_is_named() {
        let mut env = Environment::new();
        env.add_filter("pretty_json", |value: minijinja::Value| value);
        for (source, near) in [
            ("{{ x | uppper }}", "upper"),
            ("{{ x | pretty_jsn }}", "pretty_json"),
            ("{% if x is stirng %}{% endif %}", "string"),
            ("{{ rnage(3) }}", "range"),
            ("{% if x %}a{% endfi %}", "endif"),
            ("{% iff x %}{% endif %}", "if"),
        ] {
            let error = render_error(&env, source);
            assert_eq!(
                meant(&env, &error).as_deref(),
                Some(near),
                "{source}: {error}"
            );
        }
    }

    #[test]
    fn an_operator_of_another_language_is_given_minijinja_s_word() {
        let env = Environment::new();
        for (condition, meant) in [
            ("mode == 'plan' && yolo", Some("mode == 'plan' and yolo")),
            ("yolo&&cwd", Some("yolo and cwd")),
            ("mode == 'plan' || yolo", Some("mode == 'plan' or yolo")),
            ("!yolo", Some("not yolo")),
            ("yolo and !cwd", Some("yolo and not cwd")),
            ("mode <> 'plan'", Some("mode != 'plan'")),
            ("a != b and", None),
            // No operand after `!`, no side after `<>`: nothing to rewrite.
            ("'x'!", None),
            ("mode <>", None),
        ] {
            let Err(error) = env.compile_expression(condition) else {
                panic!("{condition} compiled");
            };
            assert_eq!(
                operator(condition, &error).as_deref(),
                meant,
                "{condition}: {error}"
            );
        }
        // A whole condition written as a template's expression.
        assert_eq!(unbraced("{{ yolo }}").as_deref(), Some("yolo"));
        assert_eq!(unbraced("{{- a and b -}}").as_deref(), Some("a and b"));
        assert_eq!(unbraced("{{ a }} {{ b }}"), None);
        assert_eq!(unbraced("yolo"), None);
    }

    #[test]
    fn a_comparison_written_with_one_equals_sign_is_given_two() {
        let env = Environment::new();
        for (condition, meant) in [
            ("mode = 'plan'", Some("mode == 'plan'")),
            ("a == 1 and b = 2", Some("a == 1 and b == 2")),
            ("a == 1 and", None),
            ("a => 1", None),
            ("mode === 'plan'", None),
            ("a !== b", None),
        ] {
            let Err(error) = env.compile_expression(condition) else {
                panic!("{condition} compiled");
            };
            assert_eq!(
                comparison(condition, &error).as_deref(),
                meant,
                "{condition}: {error}"
            );
        }
    }

    /// Every operator of another language and every lone `=` is rewritten, so that the
    /// suggestion parses.
    #[test]
    fn a_condition_is_rewritten_until_it_parses() {
        let env = Environment::new();
        for (condition, meant) in [
            (
                "mode = 'plan' && extra.review_enabled",
                Some("mode == 'plan' and extra.review_enabled"),
            ),
            ("!plan_mode || yolo", Some("not plan_mode or yolo")),
            ("a = 1 || !b && c = 2", Some("a == 1 or not b and c == 2")),
            // A mistake of another kind after the first stays: the rewrite goes as far as it can.
            ("a && b +", Some("a and b +")),
            ("a +", None),
        ] {
            let Err(error) = env.compile_expression(condition) else {
                panic!("{condition} compiled");
            };
            let rewritten = rewritten(&env, condition, &error);
            assert_eq!(rewritten.as_deref(), meant, "{condition}: {error}");
            if let Some(rewritten) = rewritten.filter(|r| !r.ends_with('+')) {
                assert!(env.compile_expression(&rewritten).is_ok(), "{rewritten}");
            }
        }
    }

    #[test]
    fn nothing_is_named_when_no_name_is_near_or_the_error_names_none() {
        let env = Environment::new();
        for source in ["{{ x | zzzzqq }}", "{{ x + }}", "{{ 1 / 0 }}"] {
            let error = render_error(&env, source);
            assert_eq!(meant(&env, &error), None, "{source}: {error}");
        }
    }

    #[test]
    fn with_no_name_near_every_name_of_its_kind_is_listed() {
        let mut env = Environment::new();
        env.add_filter("pretty_json", |value: minijinja::Value| value);
        for (source, what, has) in [
            ("{{ x | zzzzqq }}", "filters", "pretty_json"),
            ("{% if x is zzzzqq %}{% endif %}", "tests", "string"),
            ("{{ zzzzqq(3) }}", "functions", "range"),
            ("{% zzzzqq %}", "statements", "endif"),
        ] {
            let error = render_error(&env, source);
            let known = known(&env, &error).unwrap_or_else(|| panic!("{source}: {error}"));
            assert_eq!(known.what, what, "{source}");
            assert!(known.names.iter().any(|name| name == has), "{source}");
            assert!(known.names.is_sorted(), "{source}");
        }
        // A near name is said instead; an error that names nothing lists nothing.
        for source in ["{{ x | uppper }}", "{{ x + }}", "{{ 1 / 0 }}"] {
            let error = render_error(&env, source);
            assert_eq!(known(&env, &error), None, "{source}: {error}");
        }
    }

    #[test]
    fn a_key_near_the_missing_one_is_named_with_its_path() {
        let mut env = Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        let values = minijinja::context! {
            tool => minijinja::context! {
                description => "d",
                parameters => vec![minijinja::context! { name => "path", instruction => "i" }],
            },
            extra => minijinja::context! { team => "core" },
        };
        for (source, near) in [
            ("{{ tool.descripton }}", Some("tool.description")),
            ("{{ extra.teem }}", Some("extra.team")),
            (
                "{% for p in tool.parameters %}{{ p.instrution }}{% endfor %}",
                Some("p.instruction"),
            ),
            (
                "{%- for p in tool.parameters -%}{{ p.nmae }}{% endfor %}",
                Some("p.name"),
            ),
            ("{{ extra.zzzzqq }}", None),
            ("{{ nothing.team }}", None),
        ] {
            let error = match env.render_str(source, values.clone()) {
                Ok(text) => panic!("{source} rendered: {text}"),
                Err(error) => error,
            };
            assert_eq!(
                attribute(&error, &values).as_deref(),
                near,
                "{source}: {error}"
            );
        }
    }

    /// A path read by subscripts and indexes is walked as it is written, and the near key is
    /// said in the form the path used for it.
    #[test]
    fn a_path_of_subscripts_and_indexes_names_the_near_key() {
        let values = Value::from(minijinja::value::Serde(serde_json::json!({
            "extra": {"team": "core", "my-key": 1},
            "roots": [{"name": "shop"}],
        })));
        for (expression, near) in [
            ("extra['teem']", Some("extra['team']")),
            ("extra[\"teem\"]", Some("extra[\"team\"]")),
            ("extra.teem", Some("extra.team")),
            ("extra.my_key", Some("extra['my-key']")),
            ("roots[0].nmae", Some("roots[0].name")),
            ("roots[0]['nmae']", Some("roots[0]['name']")),
            ("roots[3].nmae", None),
            ("extra['zzzz']", None),
            ("extra[teem]", None),
            ("extra", None),
        ] {
            assert_eq!(path(expression, &values).as_deref(), near, "{expression}");
        }
    }
}
