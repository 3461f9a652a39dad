//! Ceilings on the `promptc` process's memory and processor time: the last line of defence
//! against a template that builds or works without bound.
//!
//! promptc bounds what its filters and renders may build ([`crate::render`]) and counts
//! template instructions as fuel, but minijinja gives no hook into its operators. A recursive
//! macro or a namespace that doubles a string with `~` at each step builds it in one
//! operation; one instruction can walk a whole value (`x in big` compares every item of a
//! list of a hundred thousand, `a == b` over lists that share their parts walks them as trees,
//! which grow exponentially with the steps that built them). Rather than let such a template
//! take the machine's memory or hold a CI runner for hours, the command line asks the
//! operating system to refuse the process more than [`MEMORY`]'s default (an allocation past
//! it stops the process at once: "memory allocation of N bytes failed") and to stop it once it
//! has used [`TIME`]'s default of processor time (SIGXCPU). Real work is far below both: the
//! largest matrix the benchmark builds (2,000 outputs) takes a few seconds and 150 MB. The
//! library sets neither: a program embedding promptc owns its process.

/// One ceiling: the variable that changes it, its default, and the units it is written in.
pub struct ProcessLimit {
    pub variable: &'static str,
    pub default: u64,
    /// Each unit's names (lower case) and how many of the limit's own unit it is.
    units: &'static [(&'static [&'static str], u64)],
    /// What a value looks like, for the error that refuses one.
    examples: &'static str,
    resource: Resource,
}

#[derive(Clone, Copy)]
enum Resource {
    /// Bytes of the data segment (every heap allocation).
    Memory,
    /// Seconds of processor time, all threads together.
    Time,
}

/// 4 GiB: far above what compiling even a large registry needs.
pub const MEMORY: ProcessLimit = ProcessLimit {
    variable: "PROMPTC_MEMORY_LIMIT",
    default: 4 << 30,
    units: &[
        (&["", "b"], 1),
        (&["k", "kb", "kib"], 1 << 10),
        (&["m", "mb", "mib"], 1 << 20),
        (&["g", "gb", "gib"], 1 << 30),
    ],
    examples: "a size (e.g. 4G, 512M, or `none`)",
    resource: Resource::Memory,
};

/// Two minutes of processor time.
pub const TIME: ProcessLimit = ProcessLimit {
    variable: "PROMPTC_TIME_LIMIT",
    default: 120,
    units: &[(&["", "s"], 1), (&["m", "min"], 60), (&["h"], 60 * 60)],
    examples: "a duration (e.g. 120, 90s, 10m, or `none`)",
    resource: Resource::Time,
};

impl ProcessLimit {
    /// The limit a value of the variable asks for: `Ok(None)` for no limit.
    pub fn parse(&self, text: &str) -> Result<Option<u64>, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let refused = || format!("{}: `{text}` is not {}", self.variable, self.examples);
        let (number, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
            Some((at, _)) => text.split_at(at),
            None => (text, ""),
        };
        let unit = unit.trim().to_ascii_lowercase();
        let scale = self
            .units
            .iter()
            .find(|(names, _)| names.contains(&unit.as_str()))
            .map(|(_, scale)| *scale)
            .ok_or_else(refused)?;
        number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(scale))
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(refused)
    }

    /// Sets the limit from the environment, or to its default. Never raises a limit the
    /// process already has.
    pub fn apply(&self) -> Result<(), String> {
        let limit = match std::env::var(self.variable) {
            Ok(text) => self.parse(&text)?,
            Err(_) => Some(self.default),
        };
        if let Some(limit) = limit {
            set(self.resource, limit);
        }
        Ok(())
    }
}

#[cfg(unix)]
fn set(resource: Resource, limit: u64) {
    use rustix::process::{Rlimit, getrlimit, setrlimit};
    let resource = match resource {
        Resource::Memory => rustix::process::Resource::Data,
        Resource::Time => rustix::process::Resource::Cpu,
    };
    // The allocator reserves its first arena (1 GiB of address space, which the data limit
    // counts though little of it is in use) before `main`: a ceiling below that would refuse
    // every later mapping, a thread's stack or the allocator's bookkeeping, at random points.
    // The limit is what the process may map beyond what it holds when the limit is set.
    let limit = match resource {
        rustix::process::Resource::Data => limit.saturating_add(mapped_data_bytes()),
        _ => limit,
    };
    let current = getrlimit(resource);
    let soft = current
        .current
        .map_or(limit, |existing| existing.min(limit));
    if resource == rustix::process::Resource::Cpu {
        // Compiles stop, saying why, at three quarters of the soft limit: the signal at the
        // limit ends the process without a word (and a `diff` without removing its copies).
        crate::deadline::set(soft.saturating_mul(750));
    }
    let maximum = match resource {
        // SIGXCPU at the soft limit; a hard limit a few seconds past it (if there was none)
        // kills the process should the signal be ignored.
        rustix::process::Resource::Cpu => current.maximum.or(Some(soft.saturating_add(5))),
        _ => current.maximum,
    };
    // A failure leaves the process as it was: the limit is a safety net, not a requirement.
    let _ = setrlimit(
        resource,
        Rlimit {
            current: Some(soft),
            maximum,
        },
    );
}

/// The bytes of the process's data mappings (what the data limit counts), from
/// `/proc/self/status`; 0 where there is none.
#[cfg(unix)]
fn mapped_data_bytes() -> u64 {
    use std::io::Read;
    // Into room for all of it: a file of `/proc` gives no size, and `read_to_string` read it
    // in many growing steps, at the start of every run.
    let mut status = Vec::with_capacity(8192);
    if std::fs::File::open("/proc/self/status")
        .and_then(|mut file| file.read_to_end(&mut status))
        .is_err()
    {
        return 0;
    }
    String::from_utf8_lossy(&status)
        .lines()
        .find(|line| line.starts_with("VmData:"))
        .and_then(|line| {
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(0)
}

#[cfg(not(unix))]
fn set(_: Resource, _: u64) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_with_their_unit() {
        assert_eq!(MEMORY.parse("512M"), Ok(Some(512 << 20)));
        assert_eq!(MEMORY.parse("4G"), Ok(Some(4 << 30)));
        assert_eq!(MEMORY.parse("1000"), Ok(Some(1000)));
        assert_eq!(MEMORY.parse("none"), Ok(None));
        assert!(MEMORY.parse("0").is_err());
        assert!(MEMORY.parse("4T").is_err());
        assert!(MEMORY.parse("lots").is_err());
    }

    /// What the process maps already is read (the memory ceiling is set above it).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_data_already_mapped_is_read() {
        let mapped = mapped_data_bytes();
        assert!(mapped > 0);
        assert_eq!(mapped % 1024, 0, "{mapped}");
    }

    #[test]
    fn durations_are_read_with_their_unit() {
        assert_eq!(TIME.parse("120"), Ok(Some(120)));
        assert_eq!(TIME.parse("90s"), Ok(Some(90)));
        assert_eq!(TIME.parse("10m"), Ok(Some(600)));
        assert_eq!(TIME.parse("1h"), Ok(Some(3600)));
        assert_eq!(TIME.parse("none"), Ok(None));
        assert!(TIME.parse("0").is_err());
        assert!(TIME.parse("2d").is_err());
        assert_eq!(
            TIME.parse("soon"),
            Err(
                "PROMPTC_TIME_LIMIT: `soon` is not a duration (e.g. 120, 90s, 10m, or `none`)"
                    .into()
            )
        );
    }
}
