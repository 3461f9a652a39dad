//! What would fix a template's or a condition's error when minijinja's message names no near
//! name: its words say what the parser or the render met (`too many arguments`, `unexpected
//! end of input`), not which part of the template to change or how.

/// The help for minijinja's `message` (its detail, as a problem holds it), if one is known.
pub(super) fn help(message: &str) -> Option<String> {
    let help = if message.contains("unexpected end of input, expected end of variable block")
        || message.contains("unexpected `}`, expected end of variable block")
    {
        "close the expression with `}}`: `{{ name }}`"
    } else if message.starts_with("unexpected `=`, expected end of block") {
        // `{% if family = "gpt" %}`: a comparison written as an assignment.
        "to compare, write `==` (`{% if family == \"gpt\" %}`): `=` gives a name its value, \
         in `{% set name = … %}` only"
    } else if let Some(met) = message
        .strip_prefix("unexpected `")
        .and_then(|rest| rest.split_once("`, expected end of "))
        .map(|(met, _)| met)
    {
        return Some(format!(
            "the expression cannot go on with `{met}`: remove it, or write what it needs before \
             it (the `(` or `[` it closes, an operator between two values)"
        ));
    } else if let Some(met) = message
        .strip_prefix("unexpected `")
        .and_then(|rest| rest.strip_suffix('`'))
        .filter(|met| matches!(*met, "}" | "%" | ")" | "]"))
    {
        return Some(format!(
            "the expression is not complete where `{met}` stands: close the `(` or `[` it \
             opened, or finish the operator before it"
        ));
    } else if message == "unexpected input after expression" {
        "a condition is one expression: join its parts with `and` or `or` (`a and b`), or \
         compare them (`a == b`)"
    } else if message.contains("unexpected end of string") {
        "close the text with the quote that opened it: `\"…\"` or `'…'` (a quote inside the \
         text is written `\\\"`, or the text is quoted with the other kind)"
    } else if message.contains("unexpected end of comment") {
        "close the comment with `#}`: `{# a note #}`"
    } else if message.contains("unexpected end of raw block") {
        "close the `{% raw %}` block with `{% endraw %}`"
    } else if message.starts_with("unexpected end of input, expected expression") {
        "the template ends inside a tag or an expression: finish it and close it with `%}` or \
         `}}` (`{% if condition %}`, `{{ name }}`)"
    } else if message.contains("unexpected end of input, expected end of block") {
        "a block is left open: close each `{% if %}`, `{% for %}`, `{% macro %}`, `{% call %}`, \
         `{% filter %}`, `{% with %}` or `{% set %}` block with its end tag (`{% endif %}`, \
         `{% endfor %}`, …) where the block ends"
    } else if let Some(end) = message
        .strip_prefix("unknown statement end")
        .filter(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase()))
    {
        return Some(format!(
            "`{{% end{end} %}}` closes a `{{% {end} %}}` block, and none is open here: remove \
             it, or open the block before it"
        ));
    } else if message == "unknown statement else" || message == "unknown statement elif" {
        "`{% else %}` and `{% elif %}` go inside an `{% if %}` block (`{% else %}` inside a \
         `{% for %}` too), and none is open here: open the block before it, or remove it"
    } else if message.starts_with("unexpected end of block") {
        "the tag ends before what it needs: `{% if condition %}`, `{% for item in list %}`, \
         `{% set name = value %}`, `{% include \"name\" %}`"
    } else if message.starts_with("unexpected end of variable block") {
        "write an expression between `{{` and `}}` (`{{ name }}`), or remove the empty pair"
    } else if let Some(method) = message
        .split_once(" has no method named ")
        .map(|(_, method)| method.trim())
    {
        return Some(python_method(method));
    } else if message.contains("too many arguments") {
        "the call passes more arguments than its function, filter, test or macro takes: \
         remove the extra ones (`range` takes at most three: start, stop and step; a macro, \
         the names its `{% macro %}` line gives)"
    } else if message.contains("missing argument") {
        "the call leaves out an argument its function, filter, test or macro needs: give it \
         (`replace` needs the text to find and the text to put in its place, `cycler` an item \
         or more, a macro the names its `{% macro %}` line gives without a default)"
    } else if message.contains("cannot convert number to usize") {
        "the argument is a count or a length, a whole number of 0 or more (`truncate(20)`, \
         `batch(3)`): a negative number or a decimal is none"
    } else if message.contains("range has too many elements") {
        "`range` makes at most 100 000 numbers: narrow it, or loop over the data itself \
         (`{% for tool in tools %}`)"
    } else if message.contains("recursion limit exceeded") {
        "a macro, include or import calls itself (or a `recursive` loop calls `loop(…)`), \
         directly or through others, without end (or nests past minijinja's limit): give the \
         recursion a case that does not call again, or nest fewer levels"
    } else if message.contains("exceeds maximum recursion limits") {
        "brackets, parentheses or calls are nested too deeply to read: nest fewer levels, or \
         compute a part of it apart (`{% set part = … %}`, a predicate)"
    } else {
        return None;
    };
    Some(help.to_string())
}

/// The help for a method called on a value that no value has: a Python method beyond those
/// promptc gives text, tables and lists (`.split()`, `.startswith()`, `.get()`, `.items()`, …,
/// see `templates::python_methods`), for which a filter or test does the same work.
fn python_method(method: &str) -> String {
    let instead = match method {
        "format" => "the filter `format`: `\"%s of %s\" | format(a, b)`",
        "casefold" => "the filter `lower`: `text | lower`",
        "rsplit" => "the filter `split`, and `[-1]` for the last part: `(text | split(\"/\"))[-1]`",
        "append" | "extend" | "insert" | "pop" | "remove" | "update" | "setdefault" | "clear" => {
            "a new value: lists and tables cannot be changed in place, so build one with `+` \
             (`list + [item]`) and `{% set %}` it, or collect items with `namespace()`"
        }
        _ => {
            return format!(
                "`.{method}()` is not among the Python methods templates have (text's `split`, \
                 `strip`, `startswith`, `replace`, …, a table's `get`, `items`, `keys`, \
                 `values`, a list's `count`, `index`): use a filter or test instead (`value | \
                 {method}`, if there is one of that name)"
            );
        }
    };
    format!("`.{method}()` is not among the Python methods templates have: use {instead}")
}

/// The help for a block `keyword` opened (`if`, `for`, …) and left open: the template ends
/// inside it (the diagnostic is placed at its tag), or, for `set`, the end tag of the block
/// around it is met inside it.
pub(super) fn left_open(keyword: &str) -> String {
    match keyword {
        // A tag (not a block) whose end is missing: the text after it was read as its code.
        "{%" => "this tag is not closed: end it with `%}` (`{% for item in list %}`)".to_string(),
        "{{" => "this expression is not closed: end it with `}}` (`{{ name }}`)".to_string(),
        // `{% set x %}` without `=` is the block form, which people rarely mean.
        "set" => "`{% set %}` without `= value` opens a block whose text is the value, closed by \
                  `{% endset %}`: give the value on the tag (`{% set name = value %}`), or write \
                  `{% endset %}` where the text ends"
            .to_string(),
        // `{% raw %}` is closed only by `{% endraw %}` (minijinja reports it as a raw block).
        _ => format!(
            "this `{{% {keyword} %}}` block is never closed: write `{{% end{keyword} %}}` where \
             the block ends"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{help, left_open};

    #[test]
    fn a_python_method_templates_lack_is_given_the_filter_or_test_that_does_its_work() {
        for (message, says) in [
            (
                "unknown method: string has no method named format",
                "`.format()` is not among the Python methods templates have: use the filter `format`",
            ),
            (
                "unknown method: string has no method named rsplit",
                "`(text | split(\"/\"))[-1]`",
            ),
            (
                "unknown method: seq has no method named append",
                "`list + [item]`",
            ),
            (
                "unknown method: string has no method named frobnicate",
                "`.frobnicate()` is not among the Python methods templates have (text's `split`",
            ),
        ] {
            let help = help(message).unwrap_or_default();
            assert!(help.contains(says), "{message}: {help}");
        }
    }

    #[test]
    fn each_message_gets_the_fix_for_its_own_mistake() {
        let cases = [
            (
                "unexpected end of input, expected end of variable block",
                "`}}`",
            ),
            ("unexpected `}`, expected end of variable block", "`}}`"),
            (
                "unexpected `)`, expected end of variable block",
                "cannot go on with `)`",
            ),
            (
                "unexpected `)`, expected end of block",
                "cannot go on with `)`",
            ),
            (
                "invalid operation: cannot convert number to usize",
                "a whole number of 0 or more",
            ),
            (
                "invalid operation: range has too many elements",
                "at most 100 000 numbers",
            ),
            // `{% if family = "gpt" %}`: a comparison written as an assignment.
            (
                "unexpected `=`, expected end of block",
                "to compare, write `==`",
            ),
            ("unexpected `}`", "close the `(` or `[` it opened"),
            (
                "unexpected input after expression",
                "join its parts with `and`",
            ),
            ("unexpected end of comment", "`#}`"),
            ("unexpected end of string", "the quote that opened it"),
            ("unexpected end of raw block", "`{% endraw %}`"),
            (
                "unexpected end of input, expected end of block",
                "`{% endif %}`",
            ),
            (
                "unknown statement endif",
                "`{% endif %}` closes a `{% if %}`",
            ),
            (
                "unknown statement endfor",
                "`{% endfor %}` closes a `{% for %}`",
            ),
            (
                "unexpected end of input, expected expression",
                "ends inside a tag",
            ),
            ("too many arguments", "remove the extra ones"),
            ("unknown statement else", "inside an `{% if %}` block"),
            ("unexpected end of block", "`{% if condition %}`"),
            ("unexpected end of variable block", "between `{{` and `}}`"),
            ("missing argument", "leaves out an argument"),
            (
                "invalid operation: recursion limit exceeded",
                "calls itself",
            ),
        ];
        for (message, expected) in cases {
            let help = help(message).unwrap_or_default();
            assert!(help.contains(expected), "{message}: {help}");
        }
        // A message no help is known for gets none, rather than a guess.
        assert_eq!(help("unknown statement frobnicate"), None);
        assert_eq!(help("undefined value"), None);
    }

    #[test]
    fn a_block_left_open_is_told_its_own_end_tag() {
        assert!(left_open("if").contains("`{% endif %}`"));
        assert!(left_open("for").contains("`{% endfor %}`"));
        let set = left_open("set");
        assert!(set.contains("`{% set name = value %}`"), "{set}");
        assert!(set.contains("`{% endset %}`"), "{set}");
    }
}
