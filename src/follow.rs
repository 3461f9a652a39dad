//! Following a chain of named links (a variant's `extends`, a tool family's `based_on`) until
//! it ends or comes back to a name already met.

use std::collections::HashMap;

/// The names met following links from a start, each once, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain<'a> {
    /// The start, then each name the previous one links to, until one links to nothing or to
    /// a name already met. The last may be a name that is not defined: what to make of a
    /// dangling link is the caller's choice.
    pub links: Vec<&'a str>,
    /// When the last name links back to an earlier one: that one's index in `links` (0 when
    /// the chain comes back to its start, which is then part of a cycle).
    pub cycle: Option<usize>,
    /// Whether the last name links on, past [`MAX_LINKS`]: the chain was not followed further.
    pub too_long: bool,
}

/// The most links a chain is followed through. No real workspace nests inheritance this
/// deep, and following every name's chain in full took time (and, for the lists of ancestors
/// a variant keeps, memory) in the square of the chain's length: 10 000 variants each
/// extending the one before took minutes and gigabytes.
pub const MAX_LINKS: usize = 64;

impl<'a> Chain<'a> {
    /// The last name reached.
    pub fn last(&self) -> &'a str {
        // `links` always holds the start.
        self.links.last().copied().unwrap_or_default()
    }

    /// Whether following comes back to the start.
    pub fn returns_to_start(&self) -> bool {
        self.cycle == Some(0)
    }

    /// The names of a cycle to report from its start (`[a, b, a]` for `a -> b -> a`): only
    /// when the start is part of the cycle, and only at the member whose name sorts first, so
    /// a cycle is reported once. A name that leads into a cycle without being part of it
    /// reports nothing.
    pub fn cycle_to_report(&self) -> Option<Vec<String>> {
        let start = self.links.first()?;
        if !self.returns_to_start() || self.links.iter().min() != Some(start) {
            return None;
        }
        let mut names: Vec<String> = self.links.iter().map(|name| name.to_string()).collect();
        names.push(start.to_string());
        Some(names)
    }
}

/// Follows `next` from `start`; `next` gives the name a name links to, `None` where the chain
/// ends (no link, or a name it does not know). Each name is asked once, so a cycle ends it.
pub fn follow<'a>(start: &'a str, mut next: impl FnMut(&'a str) -> Option<&'a str>) -> Chain<'a> {
    let mut links = vec![start];
    // Chains can be as long as a workspace is large: positions by name keep a walk linear.
    let mut met = HashMap::from([(start, 0)]);
    let mut current = start;
    while let Some(linked) = next(current) {
        if let Some(&at) = met.get(linked) {
            return Chain {
                links,
                cycle: Some(at),
                too_long: false,
            };
        }
        if links.len() > MAX_LINKS {
            return Chain {
                links,
                cycle: None,
                too_long: true,
            };
        }
        met.insert(linked, links.len());
        links.push(linked);
        current = linked;
    }
    Chain {
        links,
        cycle: None,
        too_long: false,
    }
}

/// The names on a cycle of links, each with the smallest name of its cycle: found in one
/// pass over every name (a name links to at most one other), whatever the cycles' lengths. A
/// chain cut at [`MAX_LINKS`] cannot tell a long cycle from a long line; this can.
pub fn on_cycles<'a>(
    names: impl IntoIterator<Item = &'a str>,
    mut next: impl FnMut(&'a str) -> Option<&'a str>,
) -> HashMap<&'a str, &'a str> {
    // 1: on the path being followed; 2: done.
    let mut state: HashMap<&'a str, u8> = HashMap::new();
    let mut cyclic = HashMap::new();
    for start in names {
        let mut path = Vec::new();
        let mut current = Some(start);
        while let Some(name) = current {
            match state.get(name) {
                Some(1) => {
                    let at = path.iter().position(|&n| n == name).unwrap_or(0);
                    let members = &path[at..];
                    let smallest = members.iter().copied().min().unwrap_or(name);
                    cyclic.extend(members.iter().map(|&member| (member, smallest)));
                    break;
                }
                Some(_) => break,
                None => {
                    state.insert(name, 1);
                    path.push(name);
                    current = next(name);
                }
            }
        }
        for name in path {
            state.insert(name, 2);
        }
    }
    cyclic
}

/// What to say about a chain that [`follow`] cut at [`MAX_LINKS`], for the name it started
/// from: it lies on a long cycle (reported once, at the cycle's smallest name, with the whole
/// cycle), or it is too long (reported at the name where it first grows too long), or nothing
/// (reported at another name).
pub enum LongChain {
    Quiet,
    TooLong,
    Cycle(Vec<String>),
}

/// Judges the cut chain from `name`; `cycles` is [`on_cycles`] over the same links.
pub fn judge_long_chain<'a>(
    name: &'a str,
    cycles: &HashMap<&'a str, &'a str>,
    mut next: impl FnMut(&'a str) -> Option<&'a str>,
) -> LongChain {
    match cycles.get(name) {
        Some(&smallest) if smallest == name => {
            let mut members = vec![name.to_string()];
            let mut current = next(name);
            while let Some(member) = current {
                if member == name || members.len() > cycles.len() {
                    break;
                }
                members.push(member.to_string());
                current = next(member);
            }
            members.push(name.to_string());
            LongChain::Cycle(members)
        }
        Some(_) => LongChain::Quiet,
        None => match next(name) {
            Some(parent) if follow(parent, &mut next).too_long => LongChain::Quiet,
            _ => LongChain::TooLong,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn chain_in<'a>(links: &HashMap<&'a str, &'a str>, start: &'a str) -> Chain<'a> {
        follow(start, |name| links.get(name).copied())
    }

    #[test]
    fn a_chain_is_followed_through_at_most_max_links_links() {
        let names: Vec<String> = (0..200).map(|i| format!("n{i}")).collect();
        let links: HashMap<&str, &str> = names
            .windows(2)
            .map(|pair| (pair[0].as_str(), pair[1].as_str()))
            .collect();
        let long = chain_in(&links, "n0");
        assert_eq!(long.links.len(), MAX_LINKS + 1);
        assert!(long.too_long && long.cycle.is_none());
        // Exactly MAX_LINKS links: followed to its end.
        let start = format!("n{}", 199 - MAX_LINKS);
        let exact = chain_in(&links, &start);
        assert_eq!(exact.links.len(), MAX_LINKS + 1);
        assert_eq!(exact.last(), "n199");
        assert!(!exact.too_long);
    }

    #[test]
    fn cycles_of_any_length_are_found_and_the_names_leading_into_them_are_not() {
        let names: Vec<String> = (0..300).map(|i| format!("n{i:03}")).collect();
        let mut links: HashMap<&str, &str> = HashMap::new();
        // n000 → … → n099 → n000: a cycle longer than MAX_LINKS; n100 → … → n149 → n000
        // leads into it; n150 → n151 → n150 is a short one; the rest is a line.
        for i in 0..100 {
            links.insert(&names[i], &names[(i + 1) % 100]);
        }
        for i in 100..150 {
            links.insert(&names[i], &names[if i == 149 { 0 } else { i + 1 }]);
        }
        links.insert(&names[150], &names[151]);
        links.insert(&names[151], &names[150]);
        for i in 152..299 {
            links.insert(&names[i], &names[i + 1]);
        }
        let cyclic = on_cycles(names.iter().map(String::as_str), |n| links.get(n).copied());
        let mut expected: HashMap<&str, &str> =
            names[..100].iter().map(|n| (n.as_str(), "n000")).collect();
        expected.insert("n150", "n150");
        expected.insert("n151", "n150");
        assert_eq!(cyclic, expected);
        assert!(chain_in(&links, "n050").too_long);
    }

    #[test]
    fn a_chain_ends_where_a_link_is_missing() {
        let links = HashMap::from([("c", "b"), ("b", "a")]);
        let chain = chain_in(&links, "c");
        assert_eq!(chain.links, ["c", "b", "a"]);
        assert_eq!(chain.cycle, None);
        assert_eq!(chain.last(), "a");
    }

    #[test]
    fn a_cycle_ends_a_chain_and_says_where_it_closes() {
        let links = HashMap::from([("a", "b"), ("b", "a"), ("x", "a")]);
        let around = chain_in(&links, "a");
        assert_eq!(around.links, ["a", "b"]);
        assert!(around.returns_to_start());
        // A name that leads into a cycle is not part of it.
        let into = chain_in(&links, "x");
        assert_eq!(into.links, ["x", "a", "b"]);
        assert_eq!(into.cycle, Some(1));
        assert!(!into.returns_to_start());
        let own = chain_in(&HashMap::from([("s", "s")]), "s");
        assert_eq!(own.links, ["s"]);
        assert!(own.returns_to_start());
    }
}
