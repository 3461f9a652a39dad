//! promptc's own temporary folders (a git revision's copy of the workspace), known to the
//! whole process so that an interrupt can remove them: when Ctrl-C ends the process, no
//! destructor runs, and a folder left behind would hold a copy of the workspace. A process
//! that ends without running even that (killed, out of processor time or memory) leaves its
//! folders to the next one: each is named by its process (and pid namespace), and the first
//! folder a process makes removes those of processes of its namespace that are gone (on Linux,
//! where `/proc` tells).
//!
//! The temporary files a build writes beside its outputs before renaming them into place are
//! known to it too: an interrupted build leaves none (a killed one leaves them to the next
//! `build --all`, which removes those of processes gone: see `emit::write::is_left_behind`).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static FOLDERS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Processes (git) that write into scratch folders: stopped first on an interrupt, or they
/// would write the folders anew.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Set by an interrupt: no scratch folder or process is started after it.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Temporary files written beside outputs and not yet renamed into place.
static FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Called once, before the first temporary file is made: the command line installs its
/// interrupt handler then, and a build with nothing to write starts no thread for it.
static BEFORE_FIRST_FILE: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Sets what runs before the process's first temporary file beside an output is made (see
/// [`make_file`]).
pub fn before_first_file(hook: fn()) {
    let _ = BEFORE_FIRST_FILE.set(hook);
}

/// Makes a temporary file beside an output with `make`, known to the interrupt handler from
/// the moment it exists; refused once an interrupt has begun.
pub fn make_file<T>(
    make: impl FnOnce() -> io::Result<T>,
    path: impl Fn(&T) -> &Path,
) -> io::Result<T> {
    static HOOKED: std::sync::Once = std::sync::Once::new();
    HOOKED.call_once(|| {
        if let Some(hook) = BEFORE_FIRST_FILE.get() {
            hook();
        }
    });
    let mut files = FILES.lock().map_err(|_| interrupted())?;
    if CLOSED.load(Ordering::SeqCst) {
        return Err(interrupted());
    }
    let made = make()?;
    files.push(path(&made).to_path_buf());
    Ok(made)
}

/// Forgets temporary files that were renamed into place or removed.
pub fn forget_files<'a>(paths: impl IntoIterator<Item = &'a Path>) {
    let gone: std::collections::HashSet<&Path> = paths.into_iter().collect();
    if gone.is_empty() {
        return;
    }
    let mut files = match FILES.lock() {
        Ok(files) => files,
        Err(poisoned) => poisoned.into_inner(),
    };
    files.retain(|file| !gone.contains(file.as_path()));
}

/// Holds off an interrupt while renames are under way, so that it finds every output either
/// in place or still staged (and removes only what is staged); `None` once one has begun.
pub fn hold_files() -> Option<std::sync::MutexGuard<'static, Vec<PathBuf>>> {
    let files = match FILES.lock() {
        Ok(files) => files,
        Err(poisoned) => poisoned.into_inner(),
    };
    (!CLOSED.load(Ordering::SeqCst)).then_some(files)
}

/// Runs a command that writes into a scratch folder, as `Command::output` does, known to the
/// interrupt handler while it runs.
pub fn output(command: &mut Command) -> io::Result<Output> {
    output_reading(command, Stdio::null())
}

/// [`output`], with `input` as the command's standard input.
pub fn output_reading(command: &mut Command, input: Stdio) -> io::Result<Output> {
    // Spawned and recorded under the lock, so the interrupt handler either sees the child
    // or stops it from starting.
    let child = {
        let mut children = CHILDREN.lock().map_err(|_| interrupted())?;
        if CLOSED.load(Ordering::SeqCst) {
            return Err(interrupted());
        }
        let child = command
            .stdin(input)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        children.push(child.id());
        child
    };
    let id = child.id();
    let output = child.wait_with_output();
    if let Ok(mut children) = CHILDREN.lock() {
        children.retain(|child| *child != id);
    }
    if output.as_ref().is_ok_and(ended_by_interrupt) {
        // A Ctrl-C reaches the whole process group: git may end of it before this process's
        // handler has begun. The handler is about to run; its exit is the one to take, not
        // the failure git's end looks like. It is given seconds: on a loaded machine the
        // handler's thread may wait its turn well past a scheduler tick, and a SIGINT sent to
        // git alone costs only this wait.
        for _ in 0..500 {
            if is_closed() {
                return Err(interrupted());
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    output
}

/// Whether a process ended of SIGINT.
fn ended_by_interrupt(output: &Output) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        output.status.signal() == Some(2)
    }
    #[cfg(not(unix))]
    {
        let _ = output;
        false
    }
}

/// The processes writing into scratch folders now.
pub fn children() -> Vec<u32> {
    match CHILDREN.lock() {
        Ok(children) => children.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// A temporary folder, deleted when dropped or when the process is interrupted.
pub struct ScratchDir {
    /// `None` once dropped.
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl ScratchDir {
    pub fn new(prefix: &str) -> io::Result<Self> {
        // Created and recorded under the lock: an interrupt never finds a folder it does not
        // know, and after one no folder is made.
        // Once a process, before the lock, which an interrupt waits for: those left behind are
        // few, and made by processes gone long ago.
        static SWEPT: AtomicBool = AtomicBool::new(false);
        if !SWEPT.swap(true, Ordering::SeqCst) {
            remove_left_behind(prefix);
        }
        let mut folders = FOLDERS.lock().map_err(|_| interrupted())?;
        if CLOSED.load(Ordering::SeqCst) {
            return Err(interrupted());
        }
        let dir = tempfile::Builder::new()
            .prefix(&format!("{prefix}{}-", owner()))
            .tempdir()?;
        folders.push(dir.path().to_path_buf());
        Ok(Self {
            path: dir.path().to_path_buf(),
            dir: Some(dir),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let mut folders = match FOLDERS.lock() {
            Ok(folders) => folders,
            Err(poisoned) => poisoned.into_inner(),
        };
        let Some(dir) = self.dir.take() else {
            return;
        };
        if CLOSED.load(Ordering::SeqCst) {
            // An interrupt has begun: its handler removes the folder, then ends the process.
            // Removing it here too would race it.
            let _ = dir.keep();
            return;
        }
        // Removed under the lock: an interrupt that comes meanwhile waits for the removal to
        // finish before it ends the process.
        folders.retain(|folder| *folder != self.path);
        let _ = dir.close();
    }
}

/// Refuses new scratch folders and processes from now on: the first thing an interrupt
/// handler does.
pub fn close() {
    let _folders = FOLDERS.lock();
    let _children = CHILDREN.lock();
    let _files = FILES.lock();
    CLOSED.store(true, Ordering::SeqCst);
}

/// Whether an interrupt has begun: its handler is removing the folders and will end the
/// process.
pub fn is_closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}

/// What names the process that makes a folder: `<pid namespace>.<process id>` where the
/// namespace can be read (Linux), else the process id. A process id means something only in
/// its namespace: a temporary folder shared by containers holds the folders of processes that
/// `/proc` here does not show.
pub(crate) fn owner() -> String {
    match pid_namespace() {
        Some(namespace) => format!("{namespace}.{}", std::process::id()),
        None => std::process::id().to_string(),
    }
}

/// The process's pid namespace, as the kernel numbers it (`pid:[4026531836]`).
fn pid_namespace() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
        let text = link.to_str()?;
        text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Removes the folders that processes now gone left in the temporary folder: those named
/// `<prefix><owner>-…` (see [`owner`]) by a process of this pid namespace known to have
/// ended (see [`maker_of`]).
/// A name that only looks like one, a link, a folder of another namespace (or of a process
/// that cannot be asked about), or one this process may not remove is left as it is.
fn remove_left_behind(prefix: &str) {
    // Only where pid namespaces can be read (Linux): elsewhere no folder is taken for left
    // behind.
    if pid_namespace().is_none() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    // A temporary folder of very many entries is not listed whole.
    for entry in entries.flatten().take(LOOKED_AT) {
        let name = entry.file_name();
        let Some(owned) = name.to_str().and_then(|name| name.strip_prefix(prefix)) else {
            continue;
        };
        let is_folder = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_folder && maker_of(owned) == Maker::Ended {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// What can be told of the process that named a file `<namespace>.<process id>-…` (or
/// `<process id>-…` where there are no namespaces; see [`owner`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Maker {
    /// This process, or another that is still running.
    Running,
    /// A process that has ended.
    Ended,
    /// A process of another pid namespace (a container sharing the folder), or of a system
    /// that cannot be asked: it may be running.
    Untold,
    /// The name names no process (an older promptc's).
    Unnamed,
}

/// The process that named a file, after its prefix (`owned_name`), as far as it can be told.
pub(crate) fn maker_of(owned_name: &str) -> Maker {
    let Some((owner, _)) = owned_name.split_once('-') else {
        return Maker::Unnamed;
    };
    let (made_in, process) = match owner.split_once('.') {
        Some((made_in, id)) => match (made_in.parse::<u64>(), id.parse::<u32>()) {
            (Ok(made_in), Ok(process)) => (Some(made_in), process),
            _ => return Maker::Unnamed,
        },
        None => match owner.parse::<u32>() {
            Ok(process) => (None, process),
            Err(_) => return Maker::Unnamed,
        },
    };
    // A process id means something only in the namespace it was given in.
    if made_in != pid_namespace() {
        return Maker::Untold;
    }
    if process == std::process::id() {
        return Maker::Running;
    }
    match has_ended(process) {
        Some(true) => Maker::Ended,
        Some(false) => Maker::Running,
        None => Maker::Untold,
    }
}

/// How many entries of the temporary folder [`remove_left_behind`] looks at.
const LOOKED_AT: usize = 100_000;

/// Whether no process of this namespace has this id now; `None` where that cannot be asked.
#[cfg(target_os = "linux")]
fn has_ended(process: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    proc.join("self")
        .exists()
        .then(|| !proc.join(process.to_string()).exists())
}

/// Whether no process has this id now (a signal of 0 to it finds none); `None` where that
/// cannot be asked.
#[cfg(all(unix, not(target_os = "linux")))]
fn has_ended(process: u32) -> Option<bool> {
    let pid = rustix::process::Pid::from_raw(i32::try_from(process).ok()?)?;
    match rustix::process::test_kill_process(pid) {
        Ok(()) => Some(false),
        Err(rustix::io::Errno::SRCH) => Some(true),
        // Another user's process (`EPERM`) is running.
        Err(rustix::io::Errno::PERM) => Some(false),
        Err(_) => None,
    }
}

#[cfg(not(unix))]
fn has_ended(_process: u32) -> Option<bool> {
    None
}

fn interrupted() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "interrupted")
}

/// Removes every scratch folder still alive, and every temporary file beside an output not
/// yet renamed into place: what an interrupt handler calls before the process exits.
pub fn remove_all() {
    // A panic elsewhere must not keep the folders: the list is still good after one.
    let folders = match FOLDERS.lock() {
        Ok(mut folders) => std::mem::take(&mut *folders),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for folder in folders {
        let _ = std::fs::remove_dir_all(folder);
    }
    let files = match FILES.lock() {
        Ok(mut files) => std::mem::take(&mut *files),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for file in files {
        let _ = std::fs::remove_file(file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_removed_on_drop_and_on_remove_all() {
        let dropped = ScratchDir::new("promptc-test-").unwrap();
        let path = dropped.path().to_path_buf();
        drop(dropped);
        assert!(!path.exists());

        let kept = ScratchDir::new("promptc-test-").unwrap();
        std::fs::write(kept.path().join("file"), "x").unwrap();
        remove_all();
        assert!(!kept.path().exists());
    }

    /// A folder a killed process left is removed by the next one; a running process's, one of
    /// another pid namespace, a file, and a name that only starts alike are not.
    #[cfg(target_os = "linux")]
    #[test]
    fn folders_of_processes_that_are_gone_are_removed_by_the_next() {
        let prefix = "promptc-sweep-test-";
        let temp = std::env::temp_dir();
        let here = pid_namespace().unwrap();
        // An id above the kernel's largest (2^22) runs no process.
        let gone = temp.join(format!("{prefix}{here}.4999999-abc"));
        let running = temp.join(format!("{prefix}{here}.1-abc"));
        let elsewhere = temp.join(format!("{prefix}{}.4999999-abc", here + 1));
        let file = temp.join(format!("{prefix}{here}.4999998-abc"));
        let other = temp.join(format!("{prefix}x{here}.4999999-abc"));
        for folder in [&gone, &running, &elsewhere, &other] {
            std::fs::create_dir_all(folder.join("inner")).unwrap();
        }
        std::fs::write(&file, "x").unwrap();
        remove_left_behind(prefix);
        assert!(!gone.exists());
        assert!(running.exists() && elsewhere.exists() && file.exists() && other.exists());
        for folder in [&running, &elsewhere, &other] {
            std::fs::remove_dir_all(folder).unwrap();
        }
        std::fs::remove_file(&file).unwrap();
    }
}
