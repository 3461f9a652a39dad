//! A progress bar on stderr for matrix runs that take longer than a moment: only on a
//! terminal (never in a CI log or a pipe), never with `--quiet`, and gone once the run ends.

use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before its bar appears: a quick run shows none.
const DELAY: Duration = Duration::from_millis(300);

pub struct Progress {
    total: u64,
    done: u64,
    started: Instant,
    enabled: bool,
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(total: usize, quiet: bool) -> Self {
        Self {
            total: total as u64,
            done: 0,
            started: Instant::now(),
            enabled: !quiet && std::io::stderr().is_terminal(),
            bar: None,
        }
    }

    /// One more entry of the matrix is done; `what` names it.
    pub fn step(&mut self, what: &str) {
        self.done += 1;
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() >= DELAY {
            let bar = ProgressBar::with_draw_target(
                Some(self.total),
                ProgressDrawTarget::stderr_with_hz(10),
            );
            if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} {wide_msg}") {
                bar.set_style(style);
            }
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(self.done);
            bar.set_message(what.to_string());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
