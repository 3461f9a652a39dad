//! promptc's own temporary folders (a git revision's copy of the workspace), known to the
//! whole process so that an interrupt can remove them: when Ctrl-C ends the process, no
//! destructor runs, and a folder left behind would hold a copy of the workspace.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static FOLDERS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary folder, deleted when dropped or when the process is interrupted.
pub struct ScratchDir {
    dir: tempfile::TempDir,
}

impl ScratchDir {
    pub fn new(prefix: &str) -> io::Result<Self> {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
        if let Ok(mut folders) = FOLDERS.lock() {
            folders.push(dir.path().to_path_buf());
        }
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
