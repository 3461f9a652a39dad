//! A ceiling on the memory of the `promptc` process: the last line of defence against a
//! template that builds text without bound.
//!
//! promptc bounds what its filters and renders may build ([`crate::render`]), but minijinja
//! gives no hook into its operators: a recursive macro or a namespace that doubles a string
//! with `~` at each step builds it in one operation. Rather than let such a template take the
//! machine's memory (and a CI runner with it), the command line asks the operating system to
//! refuse the process more than [`DEFAULT_MEMORY_LIMIT`]; an allocation past it stops the
//! process at once ("memory allocation of N bytes failed"). The library does not set it: a
//! program embedding promptc owns its process.

/// 4 GiB: far above what compiling even a large registry needs.
pub const DEFAULT_MEMORY_LIMIT: u64 = 4 * 1024 * 1024 * 1024;

/// The variable that changes the limit: a number of bytes with an optional `K`, `M` or `G`
/// (powers of 1024), or `none`.
pub const MEMORY_LIMIT_VARIABLE: &str = "PROMPTC_MEMORY_LIMIT";

/// The limit `PROMPTC_MEMORY_LIMIT` asks for: `Ok(None)` for no limit.
pub fn parse_limit(text: &str) -> Result<Option<u64>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let (number, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let scale: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return Err(not_a_size(text)),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|n| *n > 0)
        .map(Some)
        .ok_or_else(|| not_a_size(text))
}

fn not_a_size(text: &str) -> String {
    format!("{MEMORY_LIMIT_VARIABLE}: `{text}` is not a size (e.g. 4G, 512M, or `none`)")
}

/// Sets the process's data-segment limit from the environment, or to the default. Never
/// raises a limit the process already has.
pub fn apply() -> Result<(), String> {
    let limit = match std::env::var(MEMORY_LIMIT_VARIABLE) {
        Ok(text) => parse_limit(&text)?,
        Err(_) => Some(DEFAULT_MEMORY_LIMIT),
    };
    if let Some(limit) = limit {
        set(limit);
    }
    Ok(())
}

#[cfg(unix)]
fn set(limit: u64) {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let current = getrlimit(Resource::Data);
    let lower = |existing: Option<u64>| existing.map_or(limit, |existing| existing.min(limit));
    let wanted = Rlimit {
        current: Some(lower(current.current)),
        maximum: current.maximum,
    };
    // A failure leaves the process as it was: the limit is a safety net, not a requirement.
    let _ = setrlimit(Resource::Data, wanted);
}

#[cfg(not(unix))]
fn set(_: u64) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_with_their_unit() {
        assert_eq!(parse_limit("512M"), Ok(Some(512 << 20)));
        assert_eq!(parse_limit("4G"), Ok(Some(4 << 30)));
        assert_eq!(parse_limit("1000"), Ok(Some(1000)));
        assert_eq!(parse_limit("none"), Ok(None));
        assert!(parse_limit("0").is_err());
        assert!(parse_limit("4T").is_err());
        assert!(parse_limit("lots").is_err());
    }
}
