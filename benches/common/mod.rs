//! Timing helpers the benches share.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// `runs` timings of `f`, sorted, after a tenth as many untimed runs to warm up.
pub fn latencies<T>(runs: usize, mut f: impl FnMut() -> T) -> Vec<Duration> {
    for _ in 0..runs / 10 {
        black_box(f());
    }
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .collect();
    samples.sort();
    samples
}

/// The `p`th percentile of sorted timings.
pub fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

pub fn us(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}
