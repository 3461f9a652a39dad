//! Patterns built once per process. A pattern (a post-processing regex, a routing glob) is
//! checked by validation and used by every compile after it, and building one costs far more
//! than running it: a regex with a Unicode class takes about a millisecond to build.

use std::sync::{Mutex, PoisonError};

/// How many built patterns a [`Built`] keeps; the oldest go first, so that a workspace with
/// endless patterns cannot grow the process.
const KEPT: usize = 64;

/// Patterns and what building each gave, error included, so a bad pattern is not built again.
pub struct Built<T, E = String> {
    patterns: Mutex<Vec<(String, Result<T, E>)>>,
}

impl<T: Clone, E: Clone> Built<T, E> {
    pub const fn new() -> Self {
        Self {
            patterns: Mutex::new(Vec::new()),
        }
    }

    /// What `build` gave for `pattern`, built on its first use in the process.
    pub fn get(&self, pattern: &str, build: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let mut patterns = self.patterns.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, built)) = patterns.iter().find(|(known, _)| known == pattern) {
            return built.clone();
        }
        let built = build();
        if patterns.len() >= KEPT {
            drop(patterns.remove(0));
        }
        patterns.push((pattern.to_string(), built.clone()));
        built
    }
}

/// A post-processing rule's regex (`[[postprocess]] rule = "regex"`), with the regex crate's
/// default limits, as validation checks it and the compiler applies it.
pub fn postprocess_regex(pattern: &str) -> Result<regex::Regex, regex::Error> {
    static REGEXES: Built<regex::Regex, regex::Error> = Built::new();
    REGEXES.get(pattern, || regex::Regex::new(pattern))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_built_once_and_the_oldest_goes_past_the_bound() {
        let built: Built<usize> = Built::new();
        let builds = std::cell::Cell::new(0);
        let get = |pattern: &str| {
            built.get(pattern, || {
                builds.set(builds.get() + 1);
                Ok(pattern.len())
            })
        };
        assert_eq!(get("abc"), Ok(3));
        assert_eq!(get("abc"), Ok(3));
        assert_eq!(builds.get(), 1);
        for n in 0..KEPT {
            get(&n.to_string()).ok();
        }
        // "abc" was the oldest: past the bound, it is built again.
        get("abc").ok();
        assert_eq!(builds.get(), KEPT + 2);
    }

    #[test]
    fn a_bad_pattern_keeps_its_error() {
        assert!(postprocess_regex("(").is_err());
        assert!(postprocess_regex("(").is_err());
        assert!(postprocess_regex("a+").is_ok_and(|regex| regex.is_match("aa")));
    }
}
