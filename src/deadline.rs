//! A point in the process's processor time past which long work stops and says why, rather
//! than run on until the operating system ends the process at its time limit (SIGXCPU, which
//! prints nothing and leaves `diff`'s temporary copies behind). The command line sets it a
//! little short of the limit it asks for (see `process_limits`); a program embedding promptc
//! sets none, and nothing stops. Checked between compiles: one compile is bounded by its fuel.

use std::sync::atomic::{AtomicU64, Ordering};

/// The deadline in milliseconds of processor time; 0 for none.
static DEADLINE_MS: AtomicU64 = AtomicU64::new(0);

/// Long work stops once the process has used `ms` milliseconds of processor time (all its
/// threads together).
pub fn set(ms: u64) {
    DEADLINE_MS.store(ms, Ordering::Relaxed);
}

/// The deadline in milliseconds, when one is set and the process has passed it. The clock is
/// read each time (a system call per compile): a bound from the time passed and the cores
/// could not be trusted where a share of a core is what the process may use.
pub fn passed() -> Option<u64> {
    let deadline = DEADLINE_MS.load(Ordering::Relaxed);
    if deadline == 0 {
        return None;
    }
    processor_ms()
        .is_some_and(|spent| spent >= deadline)
        .then_some(deadline)
}

/// Runs `work` with the deadline brought forward to half of the processor time left before
/// it, then puts it back: `diff` compiles its base side so, so that a base that spends the
/// process's time stops itself, rather than leave none for the head, whose compiles were then
/// refused and blamed.
pub fn within_half<T>(work: impl FnOnce() -> T) -> T {
    let deadline = DEADLINE_MS.load(Ordering::Relaxed);
    let Some(spent) = processor_ms().filter(|_| deadline != 0) else {
        return work();
    };
    set(spent + deadline.saturating_sub(spent) / 2);
    let result = work();
    set(deadline);
    result
}

/// The processor time the process has used, in milliseconds.
#[cfg(target_os = "linux")]
fn processor_ms() -> Option<u64> {
    let spent = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    let seconds = u64::try_from(spent.tv_sec).ok()?;
    let ms = u64::try_from(spent.tv_nsec).ok()? / 1_000_000;
    seconds.checked_mul(1000)?.checked_add(ms)
}

#[cfg(not(target_os = "linux"))]
fn processor_ms() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The processor time read is the process's: it grows with work done.
    #[cfg(target_os = "linux")]
    #[test]
    fn processor_time_is_read() {
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed().as_millis() < 1100 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(processor_ms().is_some_and(|ms| ms >= 1000));
    }

    /// The work runs against half of the time left, and the deadline is whole again after
    /// it. (The deadline is the process's: this is the only test that sets one.)
    #[cfg(target_os = "linux")]
    #[test]
    fn half_of_the_time_left_is_given_and_taken_back() {
        let spent = processor_ms().unwrap_or_default();
        let deadline = spent + 3_600_000;
        set(deadline);
        let inside = within_half(|| DEADLINE_MS.load(Ordering::Relaxed));
        let after = DEADLINE_MS.load(Ordering::Relaxed);
        set(0);
        assert!(
            inside >= spent + 1_800_000 && inside < spent + 1_801_000,
            "{inside} against {spent}"
        );
        assert_eq!(after, deadline);
        assert_eq!(within_half(|| DEADLINE_MS.load(Ordering::Relaxed)), 0);
    }
}
