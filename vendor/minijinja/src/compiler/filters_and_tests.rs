//! promptc patch: the filters and tests a template names, wherever they lie (`x | uper`,
//! `x is plann`, `{% filter uper %}`), found by the lexer. A name the environment lacks is
//! an error only when a render reaches it, so a misspelt filter in a branch no context of a
//! matrix takes passed every check and failed the first request that took it.

use std::ops::Range;

use crate::compiler::lexer::Tokenizer;
use crate::compiler::tokens::Token;
use crate::syntax::SyntaxConfig;

/// Whether a name is used as a filter or a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallableKind {
    Filter,
    Test,
}

/// A filter or test a template names, and where the name lies in its source, in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedCallable {
    pub kind: CallableKind,
    pub name: String,
    pub range: Range<usize>,
}

/// Every filter and test `source` (a template, or an expression alone) names, in the order
/// written; those before the first token the lexer refuses, where it refuses one (the
/// template then does not compile).
pub fn find_filters_and_tests(
    source: &str,
    in_expr: bool,
    syntax_config: SyntaxConfig,
) -> Vec<NamedCallable> {
    let mut tokenizer = Tokenizer::new(source, "<template>", in_expr, syntax_config);
    let mut found = Vec::new();
    // What the tokens just before make of the next identifier.
    let mut expecting: Option<CallableKind> = None;
    // Past `is`, a `not` may come before the test's name.
    let mut after_is = false;
    // `{% filter name %}`: the block's first identifier is `filter`, its second a filter.
    let mut block_start = false;
    // An attribute (`d.is`, `d.filter`) is a name like any other.
    let mut after_dot = false;
    while let Ok(Some((token, span))) = tokenizer.next_token() {
        let attribute = std::mem::replace(&mut after_dot, matches!(token, Token::Dot));
        let next = match token {
            Token::Pipe => Some(CallableKind::Filter),
            Token::Ident(_) if attribute => None,
            Token::Ident("is") if !block_start => {
                after_is = true;
                expecting = Some(CallableKind::Test);
                continue;
            }
            Token::Ident("not") if after_is => {
                after_is = false;
                continue;
            }
            Token::Ident("filter") if block_start => Some(CallableKind::Filter),
            Token::Ident(name) => {
                if let Some(kind) = expecting {
                    found.push(NamedCallable {
                        kind,
                        name: name.to_string(),
                        range: span.start_offset as usize..span.end_offset as usize,
                    });
                }
                None
            }
            _ => None,
        };
        block_start = matches!(token, Token::BlockStart);
        after_is = false;
        expecting = next;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(source: &str) -> Vec<(CallableKind, String, &str)> {
        find_filters_and_tests(source, false, SyntaxConfig::default())
            .into_iter()
            .map(|n| (n.kind, n.name, &source[n.range]))
            .collect()
    }

    #[test]
    fn filters_and_tests_are_found_in_every_branch() {
        use CallableKind::{Filter, Test};
        let source = "{% if yolo %}{{ OS | uper }}{% endif %}{{ a | default('x') | trim }}\
            {% if x is not plann and y is defined %}{% endif %}{{ 1 if m is equalto('p') }}\
            {% filter upperr %}text | not a filter{% endfilter %}{% set s | lower %}x{% endset %}\
            {% raw %}{{ x | rawfilter }}{% endraw %}{# x | commented #}";
        let found = named(source);
        let names: Vec<(CallableKind, &str)> =
            found.iter().map(|(k, n, _)| (*k, n.as_str())).collect();
        assert_eq!(
            names,
            vec![
                (Filter, "uper"),
                (Filter, "default"),
                (Filter, "trim"),
                (Test, "plann"),
                (Test, "defined"),
                (Test, "equalto"),
                (Filter, "upperr"),
                (Filter, "lower"),
            ]
        );
        // Each range is the name as written.
        assert!(found.iter().all(|(_, name, written)| name == written));
    }

    #[test]
    fn an_expression_alone_is_read_as_one() {
        let found = find_filters_and_tests(
            "yolo and (os | uper) == 'x' or m is not plann",
            true,
            SyntaxConfig::default(),
        );
        let names: Vec<&str> = found.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["uper", "plann"]);
    }

    #[test]
    fn a_name_called_is_or_filter_elsewhere_is_no_callable() {
        assert!(named("{{ is }}{{ filter }}{% set filter = 1 %}{{ x.is }}").is_empty());
        // An attribute named `is` is no test keyword: what follows it is no test.
        assert!(
            named("{{ 'a' if d.is else 'b' }}{{ d.is and x }}{% if d.filter %}{% endif %}")
                .is_empty()
        );
        assert!(named("{{ x | ").is_empty());
    }
}
