//! Room for a thread just started. Linux often queues a new thread on the core of the thread
//! that starts it, and a core with nothing to run takes it over only at its next balancing, up
//! to a scheduler tick later (4 ms where this was measured): a helper started for a few
//! milliseconds' work could wait as long as the work, the other core idle meanwhile. So a
//! thread that has just started a helper looks where the helper waits, and if that is its own
//! core, moves itself to another core it may run on, then back under the mask it had: the
//! helper runs at once where its starter was, and the starter goes on beside it.
//!
//! A woken thread fares the same: it is queued on its waker's core or the core it last ran
//! on, even with another idle. The matrix's compile threads wake each other often (a value
//! both need and one of them is computing, a lock on what their compiles remember), and the
//! one woken could wait a tick behind the other. So while they compile, each holds a core of
//! its own ([`Stage`]).

/// What starting a thread returned, after making room for it (see [`make_room`]) when it
/// started: every helper thread is started through this.
pub fn started<T>(spawned: std::io::Result<T>) -> std::io::Result<T> {
    if spawned.is_ok() {
        make_room();
    }
    spawned
}

/// Called right after starting a thread: moves this thread to another core it may run on if
/// the new thread waits on this one. Does nothing where there is no other core, or off Linux.
#[cfg(target_os = "linux")]
fn make_room() {
    use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
    let here = sched_getcpu();
    if newest_thread_queued_on() != Some(here) {
        return;
    }
    let Ok(allowed) = sched_getaffinity(None) else {
        return;
    };
    let Some(other) = (1..CpuSet::MAX_CPU)
        .map(|step| (here + step) % CpuSet::MAX_CPU)
        .find(|&cpu| allowed.is_set(cpu))
    else {
        return;
    };
    // The move happens within the first call; the second gives back the choice of cores.
    if sched_setaffinity(None, &only(other)).is_ok() {
        let _ = sched_setaffinity(None, &allowed);
    }
}

#[cfg(not(target_os = "linux"))]
fn make_room() {}

/// The core where the process's newest thread (the highest id, other than this one) waits to
/// run, if it waits; `None` if it runs, sleeps, or cannot be read.
#[cfg(target_os = "linux")]
fn newest_thread_queued_on() -> Option<usize> {
    let me = rustix::thread::gettid().as_raw_nonzero().get();
    let newest = std::fs::read_dir("/proc/self/task")
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&id| id != me)
        .max()?;
    let stat = std::fs::read_to_string(format!("/proc/self/task/{newest}/stat")).ok()?;
    let (runnable, core) = state_and_core(&stat)?;
    // A runnable thread on another core may be running there; on this one, it waits.
    runnable.then_some(core)
}

/// Whether a thread is runnable (running or waiting to run), and the core it was last on,
/// from its `stat` line (proc(5)): the state is field 3 and the core field 39, counted past a
/// name in parentheses that may hold spaces and parentheses itself.
#[cfg(target_os = "linux")]
fn state_and_core(stat: &str) -> Option<(bool, usize)> {
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_ascii_whitespace();
    let state = fields.next()?;
    let core = fields.nth(35)?.parse().ok()?;
    Some((state == "R", core))
}

/// The mask of one core.
#[cfg(target_os = "linux")]
fn only(core: usize) -> rustix::thread::CpuSet {
    let mut set = rustix::thread::CpuSet::new();
    set.set(core);
    set
}

/// The cores held by the threads of one stage (the matrix's compile threads), each thread on
/// a core of its own while it holds it.
#[derive(Default)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct Stage {
    taken: std::sync::Mutex<Vec<usize>>,
}

/// A core held by the thread that took it: the thread runs only there until this drops, when
/// it may run where it could before.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct Held<'s> {
    stage: &'s Stage,
    #[cfg(target_os = "linux")]
    held: Option<(usize, rustix::thread::CpuSet)>,
    /// Held by the thread that took it (a thread's own mask).
    _not_send: std::marker::PhantomData<std::rc::Rc<()>>,
}

impl Stage {
    /// Keeps this thread on a core no other thread of the stage holds: the one it runs on if
    /// no other holds it, else another it may run on. Nothing is held where every allowed core
    /// is taken, or off Linux.
    pub fn hold(&self) -> Held<'_> {
        Held {
            stage: self,
            #[cfg(target_os = "linux")]
            held: self.take(),
            _not_send: std::marker::PhantomData,
        }
    }

    #[cfg(target_os = "linux")]
    fn take(&self) -> Option<(usize, rustix::thread::CpuSet)> {
        use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
        let allowed = sched_getaffinity(None).ok()?;
        let mut taken = self.taken.lock().ok()?;
        let here = sched_getcpu();
        let core = std::iter::once(here)
            .chain(0..CpuSet::MAX_CPU)
            .find(|&core| allowed.is_set(core) && !taken.contains(&core))?;
        sched_setaffinity(None, &only(core)).ok()?;
        taken.push(core);
        Some((core, allowed))
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some((core, allowed)) = self.held.take() {
            let _ = rustix::thread::sched_setaffinity(None, &allowed);
            if let Ok(mut taken) = self.stage.taken.lock() {
                taken.retain(|&held| held != core);
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu};

    fn cores_in(set: &CpuSet) -> Vec<usize> {
        (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect()
    }

    /// Threads of one stage each hold a core no other holds, run only there meanwhile, and
    /// may run where they could before once they let go; a thread past the last free core
    /// holds none and runs where it could.
    #[test]
    fn threads_of_a_stage_hold_cores_of_their_own() {
        let before = sched_getaffinity(None).unwrap();
        let allowed = cores_in(&before);
        let stage = Stage::default();
        let holders = allowed.len().min(4);
        let barrier = std::sync::Barrier::new(holders + 1);
        let held: Vec<Vec<usize>> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..holders)
                .map(|_| {
                    scope.spawn(|| {
                        let held = stage.hold();
                        let mask = cores_in(&sched_getaffinity(None).unwrap());
                        assert_eq!(mask, vec![sched_getcpu()]);
                        barrier.wait(); // every core held
                        barrier.wait(); // the extra thread has tried
                        drop(held);
                        assert!(sched_getaffinity(None).unwrap() == before);
                        mask
                    })
                })
                .collect();
            barrier.wait();
            if holders == allowed.len() {
                let extra = stage.hold();
                assert!(extra.held.is_none());
                assert!(sched_getaffinity(None).unwrap() == before);
            }
            barrier.wait();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let mut cores: Vec<usize> = held.concat();
        cores.sort_unstable();
        cores.dedup();
        assert_eq!(cores.len(), holders, "{held:?}");
        // Let go, a core may be held again.
        let again = stage.hold();
        assert!(again.held.is_some());
    }

    #[test]
    fn the_state_and_core_are_read_past_any_name() {
        let tail = "20459 20459 1271 0 -1 4194304 97 0 0 0 0 0 0 0 20 0 1 0 214421 3133440 361 \
            18446744073709551615 93853473431552 93853473451433 140720380222272 0 0 0 0 0 0 0 0 0 \
            17 1 0 0 0 0 0 93853473467440 93853473469056 93853995036672 140720380230370 \
            140720380230390 140720380230390 140720380231659 0";
        assert_eq!(
            state_and_core(&format!("20462 (cat) R {tail}")),
            Some((true, 1))
        );
        assert_eq!(
            state_and_core(&format!("20462 (a) S (b) ) S {tail}")),
            Some((false, 1))
        );
        assert_eq!(state_and_core("20462 (cat) R 1 2 3"), None);
        assert_eq!(state_and_core("20462 cat R"), None);
    }

    /// This thread's own line reads as runnable, on the core it runs on.
    #[test]
    fn a_running_thread_reads_as_runnable_on_its_core() {
        for _ in 0..100 {
            let me = rustix::thread::gettid().as_raw_nonzero().get();
            let stat = std::fs::read_to_string(format!("/proc/self/task/{me}/stat")).unwrap();
            let before = rustix::thread::sched_getcpu();
            let (runnable, core) = state_and_core(&stat).unwrap();
            // The thread may have moved between the read and the question.
            if before == rustix::thread::sched_getcpu() {
                assert!(runnable);
                assert_eq!(core, before);
                return;
            }
        }
        panic!("the thread moved between cores at every try");
    }

    /// A thread that waits on this core gets it: this thread moves to the other core, and
    /// may again run on both. The new thread can run only on the first core, where this one
    /// runs when it starts it. Other tests' threads run in this process too, and the newest
    /// thread may be one of theirs, or the scheduler may let the new one run first: of
    /// several tries, one must find the new thread waiting and make room for it.
    #[test]
    fn a_thread_waiting_on_this_core_gets_it() {
        use rustix::thread::sched_setaffinity;
        use std::sync::atomic::{AtomicBool, Ordering};
        let before = sched_getaffinity(None).unwrap();
        let cores: Vec<usize> = (0..CpuSet::MAX_CPU).filter(|&c| before.is_set(c)).collect();
        let [first, second, ..] = cores[..] else {
            return; // one core: no room to make
        };
        let only_first = only(first);
        let mut both = only_first;
        both.set(second);
        let made_room = (0..50).any(|_| {
            sched_setaffinity(None, &only_first).unwrap();
            let started = AtomicBool::new(false);
            std::thread::scope(|scope| {
                scope.spawn(|| started.store(true, Ordering::SeqCst));
                sched_setaffinity(None, &both).unwrap();
                let waiting = !started.load(Ordering::SeqCst);
                make_room();
                let moved = sched_getcpu() == second;
                assert!(sched_getaffinity(None).unwrap() == both);
                waiting && moved
            })
        });
        sched_setaffinity(None, &before).unwrap();
        assert!(made_room);
    }
}
