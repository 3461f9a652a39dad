//! The name a template meant when it names a filter, test, function or statement that its
//! environment lacks: minijinja says `filter uppper is unknown`, and the fix is the near name
//! (`upper`), which only the environment's own lists can tell.

use minijinja::{Environment, ErrorKind};

use crate::namespace::closest;

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
    let detail = error.detail()?;
    let (name, known): (&str, Vec<String>) = match error.kind() {
        ErrorKind::UnknownFilter => (
            detail
                .strip_prefix("filter ")?
                .strip_suffix(" is unknown")?,
            env.filter_names().map(str::to_owned).collect(),
        ),
        ErrorKind::UnknownTest => (
            detail.strip_prefix("test ")?.strip_suffix(" is unknown")?,
            env.test_names().map(str::to_owned).collect(),
        ),
        ErrorKind::UnknownFunction => (
            detail.strip_suffix(" is unknown")?,
            env.globals().map(|(name, _)| name.to_owned()).collect(),
        ),
        ErrorKind::SyntaxError => (
            detail.strip_prefix("unknown statement ")?,
            STATEMENTS.iter().map(|name| (*name).to_owned()).collect(),
        ),
        _ => return None,
    };
    closest(name, &known).filter(|near| near != name)
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

    #[test]
    fn nothing_is_named_when_no_name_is_near_or_the_error_names_none() {
        let env = Environment::new();
        for source in ["{{ x | zzzzqq }}", "{{ x + }}", "{{ 1 / 0 }}"] {
            let error = render_error(&env, source);
            assert_eq!(meant(&env, &error), None, "{source}: {error}");
        }
    }
}
