//! Helpers for conditions over model ids (routing's `match`, and any other condition):
//! case-insensitive containment and prefix, globs, regular expressions, and the version
//! number inside an id.

use minijinja::{Environment, Error, ErrorKind, Value};

use crate::built::Built;

/// The most memory a `matching` pattern may compile to: a pattern from a workspace file must
/// not exhaust memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

pub fn install(env: &mut Environment<'static>) {
    env.add_test("icontaining", |text: &str, needle: &str| {
        text.to_lowercase().contains(&needle.to_lowercase())
    });
    env.add_test("istartingwith", |text: &str, prefix: &str| {
        text.to_lowercase().starts_with(&prefix.to_lowercase())
    });
    env.add_test("glob", glob);
    env.add_test("matching", matching);
    env.add_filter("model_version", model_version);
}

/// A shell-style glob over the whole text, case-insensitive: `*` and `?` also match `/`, as
/// in `openrouter/*`.
fn glob(text: &str, pattern: &str) -> Result<bool, Error> {
    static GLOBS: Built<globset::GlobMatcher> = Built::new();
    let matcher = GLOBS.get(pattern, || {
        globset::GlobBuilder::new(pattern)
            .case_insensitive(true)
            .literal_separator(false)
            .build()
            .map(|glob| glob.compile_matcher())
            .map_err(|error| format!("glob `{pattern}`: {}", error.kind()))
    });
    Ok(matcher.map_err(invalid)?.is_match(text))
}

/// A regular expression found anywhere in the text (anchor it with `^…$`; `(?i)` for case).
fn matching(text: &str, pattern: &str) -> Result<bool, Error> {
    static REGEXES: Built<regex::Regex> = Built::new();
    let regex = REGEXES.get(pattern, || {
        regex::RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|error| format!("regular expression `{pattern}`: {error}"))
    });
    Ok(regex.map_err(invalid)?.is_match(text))
}

/// The `index`-th number in a model id (0: the first), read as digits with an optional
/// `.fraction`: 4 in `claude-sonnet-4-5`, 5.1 in `gpt-5.1-codex`, 2.5 in `gemini-2.5-pro`.
/// 0 when there is none, so `model.id | model_version >= 4` is simply false.
fn model_version(text: &str, index: Option<usize>) -> Value {
    let numbers = numbers(text);
    match numbers.get(index.unwrap_or(0)) {
        Some(number) => match number.parse::<i64>() {
            Ok(whole) => Value::from(whole),
            Err(_) => Value::from(number.parse::<f64>().unwrap_or(0.0)),
        },
        None => Value::from(0),
    }
}

fn numbers(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        // One fraction: `5.1` in `gpt-5.1-codex`, not `1.2.3` as one number.
        if at + 1 < bytes.len() && bytes[at] == b'.' && bytes[at + 1].is_ascii_digit() {
            at += 1;
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
        }
        found.push(&text[start..at]);
    }
    found
}

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(condition: &str, id: &str) -> bool {
        let mut env = Environment::new();
        install(&mut env);
        env.compile_expression(condition)
            .unwrap()
            .eval(minijinja::context! { id => id })
            .unwrap()
            .is_true()
    }

    #[test]
    fn model_ids_are_matched_as_routing_needs() {
        assert!(holds(
            "id is icontaining('Claude')",
            "anthropic/claude-sonnet-4"
        ));
        assert!(holds("id is istartingwith('GPT-5')", "gpt-5.1-codex"));
        assert!(!holds("id is istartingwith('gpt-5')", "openai/gpt-5"));
        assert!(holds(
            "id is glob('*/gemini-2.5-*')",
            "google/Gemini-2.5-Pro"
        ));
        assert!(holds("id is matching('^qwen[0-9]')", "qwen3-coder"));
        assert!(!holds("id is matching('^qwen[0-9]')", "myqwen3"));
    }

    #[test]
    fn the_version_number_in_an_id_compares_as_a_number() {
        assert!(holds("id | model_version >= 4", "claude-sonnet-4-5"));
        assert!(!holds(
            "id | model_version >= 4",
            "claude-3-7-sonnet-20250219"
        ));
        assert!(holds("id | model_version == 5.1", "gpt-5.1-codex"));
        assert!(holds("id | model_version == 2.5", "gemini-2.5-pro"));
        assert!(holds("id | model_version(1) == 5", "claude-sonnet-4-5"));
        assert!(holds("id | model_version == 0", "grok-code-fast"));
        assert!(holds("id | model_version >= 10", "gpt-10"));
    }

    #[test]
    fn a_bad_pattern_is_an_error_not_false() {
        let mut env = Environment::new();
        install(&mut env);
        let result = env
            .compile_expression("id is matching('(')")
            .unwrap()
            .eval(minijinja::context! { id => "x" });
        assert!(result.is_err());
    }
}
