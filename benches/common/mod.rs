//! Timing helpers the benches share.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// `runs` timings of `f`, sorted, after a tenth as many untimed runs to warm up.
#[allow(dead_code)] // each bench binary compiles this module; not every one uses all of it
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

/// `runs` timings of each measurement, sorted, taken in turn: `rounds` rounds, each of which
/// runs every measurement `runs / rounds` times (after a tenth as many untimed runs), so that
/// a second in which the machine runs slow falls on all of them alike. Each measurement runs
/// `runs + runs / 10` times in all.
#[allow(dead_code)] // each bench binary compiles this module; not every one uses all of it
pub fn latencies_in_turn<const N: usize>(
    runs: usize,
    rounds: usize,
    mut measures: [&mut dyn FnMut(); N],
) -> [Vec<Duration>; N] {
    assert!(
        runs.is_multiple_of(rounds) && (runs / rounds).is_multiple_of(10),
        "{runs} runs in {rounds} rounds"
    );
    let mut samples: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(runs));
    let per_round = runs / rounds;
    for _ in 0..rounds {
        for (measure, samples) in measures.iter_mut().zip(samples.iter_mut()) {
            for _ in 0..per_round / 10 {
                measure();
            }
            for _ in 0..per_round {
                let start = Instant::now();
                measure();
                samples.push(start.elapsed());
            }
        }
    }
    for samples in &mut samples {
        samples.sort();
    }
    samples
}

/// The `p`th percentile of sorted timings.
pub fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

pub fn us(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}
