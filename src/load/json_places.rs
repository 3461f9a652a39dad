//! The places of a JSON document's keys and values, for a text serde_json has accepted and
//! the YAML reader (which places JSON as YAML 1.2) refuses: a key longer than the 1024
//! characters YAML's simple keys may have, values nested deeper than its reader goes. Without
//! them every problem of such a file was placed at its start, and a warning that needs a
//! place was dropped.

use std::ops::Range;

use crate::load::document::{Location, Locations};
use crate::pointer::child_pointer;

/// Records in `locations` where each key and value of `text` lies, by JSON pointer, as the
/// YAML reader records them (a string with its quotes; the root as the whole text). `text`
/// must be JSON that serde_json accepts, whose nesting is bounded (128 levels).
pub(super) fn place(text: &str, locations: &mut Locations) {
    locations.insert(
        String::new(),
        Location {
            key: None,
            value: 0..text.len(),
        },
    );
    let mut scanner = Scanner { text, at: 0 };
    scanner.skip_space();
    scanner.value("", locations);
}

struct Scanner<'t> {
    text: &'t str,
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_space(&mut self) {
        // A byte order mark is not JSON's, but a file may start with one.
        if self
            .text
            .get(self.at..)
            .is_some_and(|rest| rest.starts_with('\u{feff}'))
        {
            self.at += '\u{feff}'.len_utf8();
        }
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The value starting here, its inner keys and values recorded below `pointer`. A table
    /// or list is placed at its opening bracket, as the YAML reader places it.
    fn value(&mut self, pointer: &str, locations: &mut Locations) -> Range<usize> {
        let start = self.at;
        match self.peek() {
            Some(b'{') => {
                self.at += 1;
                loop {
                    self.skip_space();
                    match self.peek() {
                        Some(b'"') => {}
                        Some(b',') => {
                            self.at += 1;
                            continue;
                        }
                        _ => break,
                    }
                    let key = self.string();
                    // The key's text, escapes read: serde_json read the same.
                    let name: String =
                        serde_json::from_str(&self.text[key.clone()]).unwrap_or_default();
                    self.skip_space();
                    if self.peek() == Some(b':') {
                        self.at += 1;
                    }
                    self.skip_space();
                    let child = child_pointer(pointer, &name);
                    let value = self.value(&child, locations);
                    locations.insert(
                        child,
                        Location {
                            key: Some(key),
                            value,
                        },
                    );
                }
                if self.peek() == Some(b'}') {
                    self.at += 1;
                }
                return start..start + 1;
            }
            Some(b'[') => {
                self.at += 1;
                let mut index = 0usize;
                loop {
                    self.skip_space();
                    match self.peek() {
                        Some(b']') | None => break,
                        Some(b',') => {
                            self.at += 1;
                            continue;
                        }
                        Some(_) => {}
                    }
                    let child = child_pointer(pointer, &index.to_string());
                    let value = self.value(&child, locations);
                    locations.insert(child, Location { key: None, value });
                    index += 1;
                }
                if self.peek() == Some(b']') {
                    self.at += 1;
                }
                return start..start + 1;
            }
            Some(b'"') => return self.string(),
            // A number, `true`, `false` or `null`: up to the next delimiter.
            _ => {
                while let Some(byte) = self.peek() {
                    if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.at += 1;
                }
            }
        }
        start..self.at
    }

    /// The string starting here, with its quotes.
    fn string(&mut self) -> Range<usize> {
        let start = self.at;
        self.at += 1;
        while let Some(byte) = self.peek() {
            self.at += 1;
            match byte {
                b'\\' => self.at += 1,
                b'"' => break,
                _ => {}
            }
        }
        self.at = self.at.min(self.text.len());
        start..self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;
    use std::path::PathBuf;

    fn placed(text: &str) -> Vec<(String, Option<Range<usize>>, Range<usize>)> {
        let mut locations = Locations::new();
        place(text, &mut locations);
        let mut placed: Vec<_> = locations
            .into_iter()
            .map(|(pointer, at)| (pointer, at.key, at.value))
            .collect();
        placed.sort_by(|a, b| a.0.cmp(&b.0));
        placed
    }

    /// Wherever the YAML reader places a JSON text, this places it alike.
    #[test]
    fn places_json_as_the_yaml_reader_does() {
        for text in [
            r#"{"date": "2026-01-01", "mode": "fly", "extra": {"a": [1, 2.5, true, null]}}"#,
            "{\n  \"a\\\"b\": {\"c\": [ [], {}, \"x,]}\" ]},\n  \"e\\u00e9\": -1e3\n}\n",
            "[{\"k\": \"v\"}, [\"w\"], 3]",
            "  \"alone\"  ",
            "{}",
        ] {
            let file = SourceFile::new(PathBuf::from("a.json"), text.to_string());
            let mut by_yaml = Locations::new();
            crate::load::yaml_document::places_of_json(&file, &mut by_yaml).unwrap();
            let mut by_yaml: Vec<_> = by_yaml
                .into_iter()
                .map(|(pointer, at)| (pointer, at.key, at.value))
                .collect();
            by_yaml.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(placed(text), by_yaml, "{text}");
        }
    }

    /// Past what the YAML reader takes: a long key, values nested 100 deep.
    #[test]
    fn places_what_the_yaml_reader_refuses() {
        let key = "k".repeat(1100);
        let text = format!("{{\"date\": \"2026-01-01\",\n \"extra\": {{\"{key}\": 1}}}}");
        let places = placed(&text);
        let extra = places
            .iter()
            .find(|(pointer, ..)| *pointer == format!("/extra/{key}"))
            .unwrap();
        assert_eq!(&text[extra.1.clone().unwrap()], format!("\"{key}\""));
        assert_eq!(&text[extra.2.clone()], "1");
        let deep = format!("{{\"x\": {}7{}}}", "[".repeat(100), "]".repeat(100));
        let places = placed(&deep);
        let innermost = format!("/x{}", "/0".repeat(100));
        let (_, _, at) = places.iter().find(|(p, ..)| *p == innermost).unwrap();
        assert_eq!(&deep[at.clone()], "7");
    }
}
