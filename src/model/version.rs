//! Version strings as people read them: `1.10.0` is above `1.9.2`, and `2` names every `2.x`.

use std::cmp::Ordering;

/// Orders two versions part by part (parts split at `.`). A part's leading digits compare as
/// a number, then the rest as text, where no rest is higher (`0` above `0-beta`, as in
/// semantic versioning); a version that runs out of parts first is lower.
pub fn compare(a: &str, b: &str) -> Ordering {
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => match compare_part(x, y) {
                Ordering::Equal => {}
                different => return different,
            },
        }
    }
}

fn compare_part(a: &str, b: &str) -> Ordering {
    let (number_a, rest_a) = split_number(a);
    let (number_b, rest_b) = split_number(b);
    // Digits without leading zeros compare by length first, so no number is too long.
    let number_a = number_a.trim_start_matches('0');
    let number_b = number_b.trim_start_matches('0');
    number_a
        .len()
        .cmp(&number_b.len())
        .then_with(|| number_a.cmp(number_b))
        .then_with(|| match (rest_a.is_empty(), rest_b.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => rest_a.cmp(rest_b),
        })
}

/// The one spelling of all the versions [`compare`] finds equal (`2.01` and `2.1` are both
/// `2.1`): each part's number without its leading zeros, then its rest. Two versions are the
/// same version exactly when their canonical forms are the same string.
pub fn canonical(version: &str) -> String {
    version
        .split('.')
        .map(|part| {
            let (number, rest) = split_number(part);
            format!("{}{rest}", number.trim_start_matches('0'))
        })
        .collect::<Vec<_>>()
        .join(".")
}

fn split_number(part: &str) -> (&str, &str) {
    let digits = part.bytes().take_while(u8::is_ascii_digit).count();
    part.split_at(digits)
}

/// Whether `version` is `wanted` or starts with it followed by a `.`: `2` and `2.1` both
/// name `2.1.3`; `2` does not name `20.1`. Compared as versions: `2.1` names `2.01`.
pub fn is_named_by(version: &str, wanted: &str) -> bool {
    let (version, wanted) = (canonical(version), canonical(wanted));
    version == wanted
        || version
            .strip_prefix(&wanted)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// The version `wanted` is, with its item, when one is (the first of equal ones); else the
/// highest of those it names. Exactly first: with `1.0` and `1.0.0` in a family, `1.0` names
/// both, and the highest would leave `1.0` no way to be asked for.
pub fn highest_named<'a, T>(
    versions: impl IntoIterator<Item = (&'a str, T)>,
    wanted: &str,
) -> Option<(&'a str, T)> {
    let wanted_canonical = canonical(wanted);
    let mut exact = None;
    let mut named = None;
    for (version, item) in versions {
        if !is_named_by(version, wanted) {
            continue;
        }
        if canonical(version) == wanted_canonical {
            exact = exact.or(Some((version, item)));
        } else {
            named = highest(named.into_iter().chain([(version, item)]));
        }
    }
    exact.or(named)
}

/// The highest version, with its item; the first of equal ones.
pub fn highest<'a, T>(versions: impl IntoIterator<Item = (&'a str, T)>) -> Option<(&'a str, T)> {
    versions
        .into_iter()
        .fold(None, |best, (version, item)| match best {
            Some((top, _)) if compare(version, top) != Ordering::Greater => best,
            _ => Some((version, item)),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_asked_for_exactly_wins_over_longer_ones_it_names() {
        let versions = [("1.0.0", 'a'), ("1.0", 'b'), ("1.0.5", 'c'), ("01.00", 'd')];
        assert_eq!(highest_named(versions, "1.0"), Some(("1.0", 'b')));
        assert_eq!(highest_named(versions, "1.0.0"), Some(("1.0.0", 'a')));
        assert_eq!(highest_named(versions, "1"), Some(("1.0.5", 'c')));
        assert_eq!(highest_named(versions, "1.00"), Some(("1.0", 'b')));
        assert_eq!(highest_named(versions, "2"), None);
    }

    proptest::proptest! {
        // Versions that compare equal must be one version: `2.01` beside `2.1` was taken for
        // another, and which of the two routing chose depended on the variants' ids.
        #[test]
        fn versions_are_the_same_exactly_when_their_canonical_forms_are(
            a in "[0-9a-c]{0,3}(\\.[0-9a-c-]{0,3}){0,3}",
            b in "[0-9a-c]{0,3}(\\.[0-9a-c-]{0,3}){0,3}",
        ) {
            proptest::prop_assert_eq!(
                compare(&a, &b) == Ordering::Equal,
                canonical(&a) == canonical(&b)
            );
        }
    }

    #[test]
    fn a_version_is_named_as_it_compares() {
        assert!(is_named_by("2.01", "2.1"));
        assert!(is_named_by("2.01.3", "2.1"));
        assert!(is_named_by("02", "2"));
        assert!(!is_named_by("2.10", "2.1"));
    }

    #[test]
    fn canonical_forms_drop_leading_zeros_only() {
        assert_eq!(canonical("2.01"), "2.1");
        assert_eq!(canonical("1.0-beta"), "1.-beta");
        assert_eq!(canonical("1.10"), "1.10");
        assert_ne!(canonical("2.1"), canonical("2.10"));
    }

    #[test]
    fn numeric_parts_compare_as_numbers() {
        assert_eq!(compare("1.10.0", "1.9.2"), Ordering::Greater);
        assert_eq!(compare("2.0.0", "10.0.0"), Ordering::Less);
        assert_eq!(compare("1.0", "1.0.0"), Ordering::Less);
        assert_eq!(compare("01.2", "1.2"), Ordering::Equal);
        assert_eq!(compare("2.0.0-beta", "2.0.0"), Ordering::Less);
        assert_eq!(compare("2.0.0-beta", "1.9.9"), Ordering::Greater);
        assert_eq!(
            compare("99999999999999999999999.1", "99999999999999999999998.7"),
            Ordering::Greater
        );
    }

    #[test]
    fn a_prefix_names_whole_parts_only() {
        assert!(is_named_by("2.1.3", "2"));
        assert!(is_named_by("2.1.3", "2.1"));
        assert!(is_named_by("2.1.3", "2.1.3"));
        assert!(!is_named_by("20.1", "2"));
        assert!(!is_named_by("2.10", "2.1"));
    }

    #[test]
    fn the_highest_named_version_wins() {
        let versions = [
            ("1.0.0", 'a'),
            ("2.0.0", 'b'),
            ("2.1.0", 'c'),
            ("10.0", 'd'),
        ];
        assert_eq!(highest_named(versions, "2"), Some(("2.1.0", 'c')));
        assert_eq!(highest(versions), Some(("10.0", 'd')));
        assert_eq!(highest_named(versions, "3"), None);
    }
}
