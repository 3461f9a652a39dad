//! JSON pointers (RFC 6901): how a value inside a data file is named, from its schema error
//! to the span a diagnostic underlines.

/// Extends a JSON pointer by one map key or list index.
pub fn child_pointer(parent: &str, key: &str) -> String {
    let mut pointer = String::with_capacity(parent.len() + key.len() + 1);
    pointer.push_str(parent);
    pointer.push('/');
    for c in key.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
    pointer
}
