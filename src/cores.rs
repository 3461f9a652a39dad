//! Room for a thread just started. Linux often queues a new thread on the core of the thread
//! that starts it, and a core with nothing to run takes it over only at its next balancing, up
//! to a scheduler tick later (4 ms where this was measured): a helper started for a few
//! milliseconds' work could wait as long as the work, the other core idle meanwhile. So a
//! thread that has just started a helper looks where the helper waits, and if that is its own
//! core, moves the helper to another core it may run on, then gives it back the mask it had:
//! the helper runs at once beside its starter. Moving the waiting helper costs its starter
//! nothing; moving the starter itself, as this did first, made it wait for the kernel to stop
//! it and carry it over (about 0.1 ms a time on the machine measured, on the main thread).
//!
//! A woken thread fares the same: it is queued on its waker's core or the core it last ran
//! on, even with another idle. The matrix's compile threads wake each other often (a value
//! both need and one of them is computing, a lock on what their compiles remember), and the
//! one woken could wait a tick behind the other. So while they compile, each holds a core of
//! its own ([`Stage`]).

/// The stack of every thread promptc starts. Reading, checking and rendering data recurse
/// once per level of its nesting, and a debug build's frames are large: a context nested 60
/// levels deep overflowed the 2 MiB std gives a thread, and the process aborted. 16 MiB holds
/// the deepest data promptc reads (128 levels) in any build; it is address space, taken from
/// memory only as it is used.
pub const STACK_BYTES: usize = 16 << 20;

/// The stack a deep read or compile may take on any thread (a debug build reading JSON nested
/// 127 levels takes about 3 MiB), with room to spare.
const ROOM_BYTES: usize = 6 << 20;

/// Runs `work` where at least [`ROOM_BYTES`] of stack are left: on this thread when it has
/// them (promptc's own threads, a main thread's 8 MiB), else on a stack of [`STACK_BYTES`]
/// made for it (a caller's thread of 2 MiB, a test's). Every public way into reading data
/// goes through this, so a caller's thread cannot be overflowed by a deep file.
pub fn with_stack_room<R>(work: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(ROOM_BYTES, STACK_BYTES, work)
}

/// Runs `work` on a stack of [`STACK_BYTES`] made for it, whatever room this thread has left:
/// for work known to nest deep (a run-time request whose context does).
pub fn on_a_stack_of_its_own<R>(work: impl FnOnce() -> R) -> R {
    stacker::grow(STACK_BYTES, work)
}

/// A thread with [`STACK_BYTES`] of stack: every thread promptc starts is built so.
pub fn builder() -> std::thread::Builder {
    std::thread::Builder::new().stack_size(STACK_BYTES)
}

/// What starting a thread returned, after making room for it (see [`make_room`]) when it
/// started: every helper thread is started through this.
pub fn started<T>(spawned: std::io::Result<T>) -> std::io::Result<T> {
    if spawned.is_ok() {
        make_room();
    }
    spawned
}

/// Called right after starting a thread: moves the new thread to another core it may run on
/// if it waits on this one. Does nothing where there is no other core, or off Linux.
#[cfg(target_os = "linux")]
fn make_room() {
    use rustix::thread::{sched_getaffinity, sched_getcpu};
    let here = sched_getcpu();
    let Some(newest) = newest_other_thread() else {
        return;
    };
    if queued_on(newest) != Some(here) {
        return;
    }
    let Ok(allowed) = sched_getaffinity(None) else {
        return;
    };
    if let Some(other) = other_core(here, &allowed) {
        move_thread(newest, other, &allowed);
    }
}

#[cfg(not(target_os = "linux"))]
fn make_room() {}

/// The next core after `here`, counting round, that `allowed` lets this thread run on.
#[cfg(target_os = "linux")]
fn other_core(here: usize, allowed: &rustix::thread::CpuSet) -> Option<usize> {
    use rustix::thread::CpuSet;
    (1..CpuSet::MAX_CPU)
        .map(|step| (here + step) % CpuSet::MAX_CPU)
        .find(|&cpu| allowed.is_set(cpu))
}

/// Moves thread `id` of this process, waiting to run, to `core`, then gives it back the
/// choice of `allowed`: the first call moves it from one core's queue to the other's, and it
/// stays there until the scheduler balances it again.
#[cfg(target_os = "linux")]
fn move_thread(id: i32, core: usize, allowed: &rustix::thread::CpuSet) {
    use rustix::thread::sched_setaffinity;
    let Some(thread) = rustix::thread::Pid::from_raw(id) else {
        return;
    };
    if sched_setaffinity(Some(thread), &only(core)).is_ok() {
        let _ = sched_setaffinity(Some(thread), allowed);
    }
}

/// The id of the process's newest thread (the highest id) other than this one.
#[cfg(target_os = "linux")]
fn newest_other_thread() -> Option<i32> {
    let me = rustix::thread::gettid().as_raw_nonzero().get();
    std::fs::read_dir("/proc/self/task")
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&id| id != me)
        .max()
}

/// The core where thread `id` of this process waits to run, if it is runnable; `None` if it
/// sleeps, has ended, or cannot be read. A runnable thread on another core may be running
/// there; on the caller's own core, it waits.
#[cfg(target_os = "linux")]
fn queued_on(id: i32) -> Option<usize> {
    let mut line = [0; 2048];
    let stat = read_whole(&format!("/proc/self/task/{id}/stat"), &mut line)?;
    let (runnable, core) = state_and_core(stat)?;
    runnable.then_some(core)
}

/// A small `/proc` file in one read: `read_to_string` asks for its size (it gives none), then
/// reads it in growing steps, on the thread that waits for the helper. `None` if it does not
/// fit.
#[cfg(target_os = "linux")]
fn read_whole<'b>(path: &str, buffer: &'b mut [u8]) -> Option<&'b str> {
    use std::io::Read;
    let read = std::fs::File::open(path).ok()?.read(buffer).ok()?;
    if read == buffer.len() {
        return None;
    }
    std::str::from_utf8(buffer.get(..read)?).ok()
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
            let before = rustix::thread::sched_getcpu();
            let queued = queued_on(me);
            // The thread may have moved between the questions and the read.
            if before == rustix::thread::sched_getcpu() {
                assert_eq!(queued, Some(before));
                return;
            }
        }
        panic!("the thread moved between cores at every try");
    }

    /// A `/proc` file is read whole in one call, or not at all: never a part of it.
    #[test]
    fn a_proc_file_is_read_whole_or_not_at_all() {
        let mut buffer = [0; 8192];
        let whole = read_whole("/proc/self/status", &mut buffer).unwrap();
        assert!(whole.starts_with("Name:"), "{whole}");
        assert!(whole.ends_with('\n'), "{whole}");
        assert_eq!(read_whole("/proc/self/status", &mut [0; 16]), None);
        assert_eq!(read_whole("/proc/self/no-such-file", &mut [0; 64]), None);
    }

    /// Room is made on the next core this thread may run on, counting round past the last;
    /// there is none where this is the only one.
    #[test]
    fn room_is_made_on_the_next_allowed_core() {
        let set = |cores: &[usize]| {
            let mut set = CpuSet::new();
            cores.iter().for_each(|&core| set.set(core));
            set
        };
        assert_eq!(other_core(0, &set(&[0, 1])), Some(1));
        assert_eq!(other_core(1, &set(&[0, 1])), Some(0));
        assert_eq!(other_core(1, &set(&[1, 5, 7])), Some(5));
        assert_eq!(other_core(7, &set(&[1, 5, 7])), Some(1));
        assert_eq!(other_core(3, &set(&[3])), None);
        assert_eq!(other_core(3, &set(&[])), None);
    }

    /// A thread that spins where it is pinned reads as runnable on that core; one blocked
    /// reads as not runnable, and so, soon, does one that has ended. The newest thread is the one
    /// just started, or one started later by another test.
    #[test]
    fn a_thread_reads_as_queued_where_it_runs_and_not_while_it_sleeps() {
        use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
        let allowed = cores_in(&sched_getaffinity(None).unwrap());
        let core = *allowed.last().unwrap();
        let spinner = AtomicI32::new(0);
        let stop = AtomicBool::new(false);
        // Read while it spins, asserted once it has stopped: a failed assertion must not
        // leave the scope waiting on a thread that never ends.
        let (id, newest, queued) = std::thread::scope(|scope| {
            scope.spawn(|| {
                rustix::thread::sched_setaffinity(None, &only(core)).unwrap();
                spinner.store(
                    rustix::thread::gettid().as_raw_nonzero().get(),
                    Ordering::SeqCst,
                );
                while !stop.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
            });
            let id = wait_for(|| Some(spinner.load(Ordering::SeqCst)).filter(|&id| id != 0));
            let read = (id, newest_other_thread(), queued_on(id));
            stop.store(true, Ordering::SeqCst);
            read
        });
        assert!(newest.is_some_and(|newest| newest >= id), "{newest:?} {id}");
        assert_eq!(queued, Some(core));

        let (id, wake, sleeper) = waiting_thread(|| ());
        // Sent its id, it goes to sleep on the channel: it reads as not runnable once there.
        wait_for(|| queued_on(id).is_none().then_some(()));
        wake.send(()).unwrap();
        sleeper.join().unwrap();
        // Joined, it may linger a moment in its last steps of ending.
        wait_for(|| queued_on(id).is_none().then_some(()));
    }

    /// A thread started to wait for a word from this one, then run `then`: its id, the sender
    /// of the word, and the thread.
    #[allow(clippy::unwrap_used)] // a helper of tests: an unwrap is an assertion
    fn waiting_thread<T: Send + 'static>(
        then: impl FnOnce() -> T + Send + 'static,
    ) -> (i32, std::sync::mpsc::Sender<()>, std::thread::JoinHandle<T>) {
        let (id_sender, id) = std::sync::mpsc::channel();
        let (go, start) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            id_sender
                .send(rustix::thread::gettid().as_raw_nonzero().get())
                .unwrap();
            start.recv().unwrap();
            then()
        });
        (id.recv().unwrap(), go, thread)
    }

    /// What `found` finds, asked again until it does (for up to ten seconds).
    fn wait_for<T>(found: impl Fn() -> Option<T>) -> T {
        for _ in 0..10_000 {
            if let Some(value) = found() {
                return value;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("not found in ten seconds");
    }

    /// Room is made by moving the thread just started, waiting on its starter's core, to the
    /// other core, with the choice of cores it had given back; its starter stays where it is.
    /// The scheduler may balance it back at any time after the move, so of several tries one
    /// must find it running where it was moved.
    #[test]
    fn a_waiting_thread_is_moved_to_the_other_core_with_its_choice_of_cores() {
        use rustix::thread::sched_setaffinity;
        let before = sched_getaffinity(None).unwrap();
        let cores = cores_in(&before);
        let [first, second, ..] = cores[..] else {
            return; // one core: nowhere to move
        };
        let mut both = only(first);
        both.set(second);
        let moved = (0..50).any(|_| {
            // Started while this thread may run on `first` alone, the new thread waits there.
            sched_setaffinity(None, &only(first)).unwrap();
            // Its mask is read once the move is over: moved, it may run on `second` before
            // the move gives it back the choice of both cores.
            let (moved, over) = std::sync::mpsc::channel::<()>();
            let (id, go, new) = waiting_thread(move || {
                let ran_on = sched_getcpu();
                over.recv().unwrap();
                (ran_on, sched_getaffinity(None).unwrap())
            });
            // Woken, it waits on `first` behind this thread.
            go.send(()).unwrap();
            move_thread(id, second, &both);
            moved.send(()).unwrap();
            let (ran_on, mask) = new.join().unwrap();
            assert!(mask == both);
            ran_on == second
        });
        sched_setaffinity(None, &before).unwrap();
        assert!(moved);
    }
}
