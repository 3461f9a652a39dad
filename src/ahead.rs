//! Work done ahead of its first use (patterns built, the processor's features asked for), on
//! one thread for all of it. Each piece of it had a thread of its own, and a thread's start
//! costs its starter a system call and a look at where the new thread waits
//! ([`crate::cores::started`]), and the new thread the first 2 MB page of its own memory,
//! which the kernel clears: a shipped `build --all` started three such threads in its first
//! two milliseconds. The thread takes the work in the order it is handed over and ends once
//! none has come for [`IDLE`]; the next piece starts another.
//!
//! Nothing depends on the work being done: what it builds, a later use builds if it finds it
//! not built. Work handed over as the thread ends, or when no thread can be started (a low
//! memory limit), may be left undone.

use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

type Work = Box<dyn FnOnce() + Send + 'static>;

/// The thread's queue, while it runs.
static QUEUE: Mutex<Option<Sender<Work>>> = Mutex::new(None);

/// How long the thread waits for more work before it ends: longer than a load takes between
/// handing over its pieces, short enough that a program that embeds promptc is not left
/// with a thread that sleeps.
const IDLE: Duration = Duration::from_millis(100);

/// Hands `work` to the thread that works ahead, starting it if it is not running.
pub fn run(work: impl FnOnce() + Send + 'static) {
    run_on(&QUEUE, IDLE, Box::new(work));
}

/// `run`, with the queue and the idle time given (tests use their own).
fn run_on(queue: &Mutex<Option<Sender<Work>>>, idle: Duration, mut work: Work) {
    let mut queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(sender) = queue.as_ref() {
        match sender.send(work) {
            Ok(()) => return,
            // The thread has ended: this work starts the next.
            Err(unsent) => work = unsent.0,
        }
    }
    let (sender, receiver) = channel::<Work>();
    let started =
        crate::cores::started(crate::cores::builder().name("ahead".into()).spawn(move || {
            work();
            while let Ok(work) = receiver.recv_timeout(idle) {
                work();
            }
        }));
    *queue = started.is_ok().then_some(sender);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::Receiver;

    const WAIT: Duration = Duration::from_secs(10);

    /// Work that reports its number and the thread it ran on.
    fn reporting(number: usize, to: &Sender<(usize, std::thread::ThreadId)>) -> Work {
        let to = to.clone();
        Box::new(move || {
            let _ = to.send((number, std::thread::current().id()));
        })
    }

    #[allow(clippy::unwrap_used)]
    fn next(from: &Receiver<(usize, std::thread::ThreadId)>) -> (usize, std::thread::ThreadId) {
        from.recv_timeout(WAIT).unwrap()
    }

    #[test]
    fn work_is_done_in_its_order_on_one_thread_beside_the_caller() {
        static QUEUE: Mutex<Option<Sender<Work>>> = Mutex::new(None);
        let (to, from) = channel();
        for number in 0..3 {
            run_on(&QUEUE, WAIT, reporting(number, &to));
        }
        let done: Vec<_> = (0..3).map(|_| next(&from)).collect();
        assert_eq!(done.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(done.iter().all(|(_, thread)| *thread == done[0].1));
        assert_ne!(done[0].1, std::thread::current().id());
    }

    #[test]
    fn work_handed_over_after_the_thread_has_ended_starts_another() {
        static QUEUE: Mutex<Option<Sender<Work>>> = Mutex::new(None);
        let idle = Duration::from_millis(5);
        let (to, from) = channel();
        run_on(&QUEUE, idle, reporting(0, &to));
        let (_, first) = next(&from);
        // Long past the idle time: the first thread has ended.
        std::thread::sleep(idle * 60);
        run_on(&QUEUE, idle, reporting(1, &to));
        let (number, second) = next(&from);
        assert_eq!(number, 1);
        assert_ne!(first, second);
    }
}
