//! promptc's own temporary folders (a git revision's copy of the workspace), known to the
//! whole process so that an interrupt can remove them: when Ctrl-C ends the process, no
//! destructor runs, and a folder left behind would hold a copy of the workspace.

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

/// Runs a command that writes into a scratch folder, as `Command::output` does, known to the
/// interrupt handler while it runs.
pub fn output(command: &mut Command) -> io::Result<Output> {
    // Spawned and recorded under the lock, so the interrupt handler either sees the child
    // or stops it from starting.
    let child = {
        let mut children = CHILDREN.lock().map_err(|_| interrupted())?;
        if CLOSED.load(Ordering::SeqCst) {
            return Err(interrupted());
        }
        let child = command
            .stdin(Stdio::null())
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
        let mut folders = FOLDERS.lock().map_err(|_| interrupted())?;
        if CLOSED.load(Ordering::SeqCst) {
            return Err(interrupted());
        }
        let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
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
    CLOSED.store(true, Ordering::SeqCst);
}

/// Whether an interrupt has begun: its handler is removing the folders and will end the
/// process.
pub fn is_closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}

fn interrupted() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "interrupted")
}

/// Removes every scratch folder still alive: what an interrupt handler calls before the
/// process exits.
pub fn remove_all() {
    // A panic elsewhere must not keep the folders: the list is still good after one.
    let folders = match FOLDERS.lock() {
        Ok(mut folders) => std::mem::take(&mut *folders),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for folder in folders {
        let _ = std::fs::remove_dir_all(folder);
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
}
