//! One `build --all` at a time per workspace, and no `check` while one writes: a file watcher
//! and a save hook that build the same workspace at once each removed what the other was
//! renaming into place, and left an output set that neither manifest makes. The lock is the
//! operating system's advisory lock (`flock`) on the workspace's folder itself, so no file is
//! made for it, and it ends with the process, however it ends.

use std::path::Path;

use super::Printer;
use super::message::Message;

/// Held while a command reads or writes the workspace's outputs.
pub struct OutputsLock {
    _folder: std::fs::File,
}

/// Waits until no other promptc process writes the outputs of the workspace at `root` (a
/// build with `exclusive`, a check with a shared lock, which other checks share), saying so
/// when it must wait, then holds it. `None` where the system takes no lock (a file system
/// without `flock`): the command runs as it did without one.
pub fn lock_outputs(root: &Path, exclusive: bool, printer: &Printer) -> Option<OutputsLock> {
    use rustix::fs::FlockOperation;
    let folder = std::fs::File::open(root).ok()?;
    let (now, wait) = if exclusive {
        (
            FlockOperation::NonBlockingLockExclusive,
            FlockOperation::LockExclusive,
        )
    } else {
        (
            FlockOperation::NonBlockingLockShared,
            FlockOperation::LockShared,
        )
    };
    match rustix::fs::flock(&folder, now) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            printer.message(Message::WaitingForOutputs);
            rustix::fs::flock(&folder, wait).ok()?;
        }
        Err(_) => return None,
    }
    Some(OutputsLock { _folder: folder })
}
