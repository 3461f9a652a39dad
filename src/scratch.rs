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
    output
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
    dir: tempfile::TempDir,
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
        Ok(Self { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if let Ok(mut folders) = FOLDERS.lock() {
            folders.retain(|folder| folder != self.dir.path());
        }
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
