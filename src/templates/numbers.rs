//! Numbers read as Jinja2 reads them: its `int` and `float` filters, and the number in a text
//! that `filesizeformat` takes. Jinja2 converts through Python's `int()` and `float()`, which
//! read `" 42 "` and `1_000`, and gives its `default` (0, 0.0) for what they cannot read;
//! minijinja's filters refused both, so a template ported from Jinja2 (`extra.retries | int`
//! over a value that may be empty) failed to render where it had worked.

use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, State, Value};

use crate::templates::arguments::Arguments;

/// Jinja2's `int(value, default=0, base=10)`: an integer as Python's `int(value, base)` reads
/// it, else the whole part of the number `float()` reads (`"4.7"` is 4), else `default`.
/// An undefined value is an error, as promptc's undefined values are everywhere.
pub fn int(state: &State, value: &Value, args: &Arguments<'_>) -> Result<Value, Error> {
    // Given as `none`, the default is `none` (`x | int(none) is none`).
    let default = args.given(0)?.unwrap_or(Value::from(0));
    let base = args.get::<u32>(1)?.unwrap_or(10);
    args.done()?;
    state
        .undefined_behavior()
        .assert_value_not_undefined(value)?;
    match value.kind() {
        ValueKind::Bool => return Ok(Value::from(u8::from(value.is_true()))),
        ValueKind::Number if value.is_integer() => return Ok(value.clone()),
        _ => {}
    }
    if let Some(text) = value.as_str() {
        match python_int(text, base) {
            Some(Ok(number)) => return Ok(Value::from(number)),
            Some(Err(())) => return Err(too_large(text)),
            None => {}
        }
    }
    match number_of(value) {
        Some(number) if number.is_infinite() => Err(Error::new(
            ErrorKind::InvalidOperation,
            "cannot convert an infinite number to an integer",
        )),
        // Python's `int()` of a float: toward zero, exact for every whole float below 2¹²⁷.
        #[allow(clippy::cast_possible_truncation)]
        Some(number) if !number.is_nan() && number.abs() < 1.7e38 => {
            Ok(Value::from(number.trunc() as i128))
        }
        Some(number) if !number.is_nan() => Err(too_large(&number.to_string())),
        _ => Ok(default),
    }
}

/// Jinja2's `float(value, default=0.0)`: the number Python's `float()` reads, else `default`.
pub fn float(state: &State, value: &Value, args: &Arguments<'_>) -> Result<Value, Error> {
    let default = args.given(0)?.unwrap_or(Value::from(0.0));
    args.done()?;
    state
        .undefined_behavior()
        .assert_value_not_undefined(value)?;
    Ok(number_of(value).map_or(default, Value::from))
}

fn too_large(text: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("the number {text} is too large for an integer of templates"),
    )
}

/// A text as Python's `int(text, base)` reads it: `None` where Python would refuse it,
/// `Some(Err)` for a number past what a template's integers hold. Whitespace around it, a
/// sign, `_` between digits (and after a base's prefix), and the prefix `0x`, `0o` or `0b`
/// where the base is 16, 8 or 2, or 0 (which takes the base from the prefix, and no leading
/// zero in a decimal).
fn python_int(text: &str, base: u32) -> Option<Result<i128, ()>> {
    // Python's `int()` and `float()` take Unicode's white space around a number, but not
    // the four separators below the space that `str.strip` takes too.
    let text = text.trim();
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let prefix_base = |digits: &str| -> Option<u32> {
        let prefix = digits.get(..2)?.to_ascii_lowercase();
        match prefix.as_str() {
            "0x" => Some(16),
            "0o" => Some(8),
            "0b" => Some(2),
            _ => None,
        }
    };
    let (base, digits, prefixed) = match base {
        0 => match prefix_base(unsigned) {
            Some(found) => (found, &unsigned[2..], true),
            None => {
                // `int("010", 0)` is refused: a leading zero says no base.
                let zeros_only = unsigned.bytes().all(|b| b == b'0' || b == b'_');
                if unsigned.starts_with('0') && !zeros_only {
                    return None;
                }
                (10, unsigned, false)
            }
        },
        2 | 8 | 16 if prefix_base(unsigned) == Some(base) => (base, &unsigned[2..], true),
        2..=36 => (base, unsigned, false),
        _ => return None,
    };
    // An `_` between two digits, or first after a prefix (`0x_1f`).
    let bytes = digits.as_bytes();
    let underscore_fits = |at: usize| {
        let before = if at == 0 {
            prefixed
        } else {
            bytes[at - 1] != b'_'
        };
        before && bytes.get(at + 1).is_some_and(|next| *next != b'_')
    };
    if digits.is_empty()
        || (0..bytes.len()).any(|at| bytes[at] == b'_' && !underscore_fits(at))
        || !digits.chars().all(|c| c == '_' || c.is_digit(base))
    {
        return None;
    }
    let digits = digits.replace('_', "");
    let number = match i128::from_str_radix(&digits, base) {
        Ok(number) => number,
        Err(_) => return Some(Err(())),
    };
    Some(Ok(if negative { -number } else { number }))
}

/// A number as Python's `float()` reads it: a number, a truth value (1.0, 0.0), or a text of
/// one; `None` for anything else.
pub fn number_of(value: &Value) -> Option<f64> {
    if value.is_number() {
        return f64::try_from(value.clone()).ok();
    }
    // `True` is 1.0 to Python.
    if value.kind() == ValueKind::Bool {
        return Some(if value.is_true() { 1.0 } else { 0.0 });
    }
    let text = value.as_str()?.trim();
    // An `_` only between two digits, as in Python's numbers (`1_000`, not `1__000` or `_1`).
    let bytes = text.as_bytes();
    let between_digits = |at: usize| {
        at > 0
            && bytes.get(at - 1).is_some_and(u8::is_ascii_digit)
            && bytes.get(at + 1).is_some_and(u8::is_ascii_digit)
    };
    if (0..bytes.len()).any(|at| bytes[at] == b'_' && !between_digits(at)) {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    // Rust reads `inf`, `infinity` and `nan` as Python does; Python reads no other words.
    if unsigned
        .chars()
        .any(|c| c.is_ascii_alphabetic() && c != 'e')
        && !matches!(unsigned, "inf" | "infinity" | "nan")
    {
        return None;
    }
    lower.replace('_', "").parse().ok()
}

#[cfg(test)]
mod tests {
    use minijinja::context;

    fn render(template: &str, value: minijinja::Value) -> Result<String, minijinja::Error> {
        crate::templates::environment::new_environment(None, 1 << 20)
            .render_str(template, context! { value => value })
    }

    /// Each against what Jinja2 3.1 renders for the same template and value (taken from
    /// Jinja2 itself).
    #[test]
    fn int_and_float_read_what_jinja2_reads() {
        let text = minijinja::Value::from;
        let cases = [
            ("{{ value | int }}", text(" 42 "), "42"),
            ("{{ value | int }}", text("1_000"), "1000"),
            ("{{ value | int }}", text("-7"), "-7"),
            ("{{ value | int }}", text("+7"), "7"),
            ("{{ value | int }}", text("4.7"), "4"),
            ("{{ value | int }}", text("-4.7"), "-4"),
            ("{{ value | int }}", text("1e3"), "1000"),
            ("{{ value | int }}", text("abc"), "0"),
            ("{{ value | int }}", text(""), "0"),
            ("{{ value | int }}", text("nan"), "0"),
            ("{{ value | int }}", text("1__0"), "0"),
            ("{{ value | int }}", text("_1"), "0"),
            ("{{ value | int(5) }}", text("abc"), "5"),
            ("{{ value | int(default=-1) }}", text("x"), "-1"),
            ("{{ value | int(base=16) }}", text("0x1F"), "31"),
            ("{{ value | int(base=16) }}", text("ff"), "255"),
            ("{{ value | int(base=16) }}", text("0x_ff"), "255"),
            ("{{ value | int(base=2) }}", text("0b101"), "5"),
            ("{{ value | int(base=0) }}", text("0o17"), "15"),
            ("{{ value | int(base=0) }}", text("017"), "17"),
            ("{{ value | int(base=0) }}", text("000"), "0"),
            ("{{ value | int(base=8) }}", text("9"), "9"),
            ("{{ value | int }}", minijinja::Value::from(3.99), "3"),
            ("{{ value | int }}", minijinja::Value::from(true), "1"),
            ("{{ value | int }}", minijinja::Value::from(()), "0"),
            ("{{ value | int }}", minijinja::Value::from(vec![1]), "0"),
            ("{{ value | float }}", text(" 2.5\n"), "2.5"),
            ("{{ value | float }}", text("1_000.5"), "1000.5"),
            ("{{ value | float }}", text("abc"), "0.0"),
            ("{{ value | float }}", text("-1.5e3"), "-1500.0"),
            ("{{ value | float(1.5) }}", text("x"), "1.5"),
            ("{{ value | float(default=2) }}", text("x"), "2"),
            (
                "{{ value | float }}",
                minijinja::Value::from(vec![1]),
                "0.0",
            ),
            ("{{ value | float }}", minijinja::Value::from(false), "0.0"),
            (
                "{{ 'none' if value | int(none) is none }}",
                text("a"),
                "none",
            ),
            (
                "{{ 'none' if value | int(default=none) is none }}",
                text("a"),
                "none",
            ),
            (
                "{{ 'none' if value | float(none) is none }}",
                text("a"),
                "none",
            ),
            ("{{ value | int }}", text("\u{2003}42\u{a0}"), "42"),
            ("{{ value | int }}", text("\u{1c}42"), "0"),
            ("{{ value | float }}", text("42\u{1f}"), "0.0"),
        ];
        for (template, value, jinja2) in cases {
            let shown = format!("{template} of {value:?}");
            let rendered = render(template, value).map_err(|error| error.to_string());
            assert_eq!(rendered.as_deref(), Ok(jinja2), "{shown}");
        }
    }

    #[test]
    fn what_python_refuses_to_make_an_integer_of_is_an_error() {
        let text = minijinja::Value::from;
        let forty_nines = "9".repeat(40);
        for (value, error) in [
            (text("inf"), "infinite"),
            (text("1e40"), "too large"),
            (text(forty_nines.as_str()), "too large"),
        ] {
            let failed = render("{{ value | int }}", value).unwrap_err();
            assert!(failed.to_string().contains(error), "{failed}");
        }
        let undefined = render("{{ missing | int }}", minijinja::Value::from(1)).unwrap_err();
        assert_eq!(undefined.kind(), minijinja::ErrorKind::UndefinedError);
        let unknown = render("{{ value | int(bogus=1) }}", text("1")).unwrap_err();
        assert!(unknown.to_string().contains("bogus"), "{unknown}");
    }
}
