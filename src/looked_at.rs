//! Which paths of a workspace a load looked at, for a caller that must learn what loading
//! needs before it has the files: `promptc diff` writes out of a git revision only what
//! loading the revision's workspace reads, not the whole folder (a workspace at the root of a
//! large repository, or a pull request that commits a gigabyte beside it).
//!
//! Nothing is noted unless a [`Watch`] runs, and a watch notes only paths below its own
//! folder: loads of other folders, on other threads of the process, neither pay for it nor
//! mix into it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// What a load looked at below a watched folder, as paths relative to it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Paths read or walked, there or not: each is needed with whatever lies below it.
    pub paths: BTreeSet<PathBuf>,
    /// Paths resolved or tested for existence, there or not: each is needed itself (a file,
    /// a link and what it leads to, a folder as a folder), not what lies below it.
    pub names: BTreeSet<PathBuf>,
    /// Folders whose entries were listed for their names only (a suggestion of a near
    /// folder): their sub-folders are needed, not their content.
    pub listings: BTreeSet<PathBuf>,
}

/// Notes that a load read or walked `path`: it needs it with all that lies below it.
pub fn path(path: &Path) {
    note(path, |seen, below| {
        seen.paths.insert(below);
    });
}

/// Notes that a load resolved `path` or asked what it is: it needs the entry itself.
pub fn name(path: &Path) {
    note(path, |seen, below| {
        seen.names.insert(below);
    });
}

/// Notes that a load listed the folder `path` for the names of its sub-folders.
pub fn listing(path: &Path) {
    note(path, |seen, below| {
        seen.listings.insert(below);
    });
}

/// How many watches run: when none does (every command but `diff`), noting costs a load.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
static WATCHES: Mutex<Vec<Watched>> = Mutex::new(Vec::new());

struct Watched {
    id: u64,
    root: PathBuf,
    seen: Seen,
}

fn watches() -> MutexGuard<'static, Vec<Watched>> {
    // A panic while noting leaves the sets whole: each insert is one step.
    WATCHES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn note(path: &Path, insert: impl Fn(&mut Seen, PathBuf)) {
    if RUNNING.load(Ordering::Acquire) == 0 {
        return;
    }
    for watched in watches().iter_mut() {
        if let Ok(below) = path.strip_prefix(&watched.root) {
            insert(&mut watched.seen, below.to_path_buf());
        }
    }
}

/// Notes what loads look at below one folder until [`Watch::finish`].
pub struct Watch {
    id: u64,
}

impl Watch {
    /// Starts noting what is looked at below `root`, named as loads name it (its canonical
    /// path, for the loader's).
    pub fn start(root: &Path) -> Self {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        watches().push(Watched {
            id,
            root: root.to_path_buf(),
            seen: Seen::default(),
        });
        RUNNING.fetch_add(1, Ordering::Release);
        Self { id }
    }

    /// What was looked at since the start.
    pub fn finish(self) -> Seen {
        self.take()
    }

    fn take(&self) -> Seen {
        let mut watches = watches();
        let Some(at) = watches.iter().position(|watched| watched.id == self.id) else {
            return Seen::default();
        };
        RUNNING.fetch_sub(1, Ordering::Release);
        watches.swap_remove(at).seen
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_notes_only_what_lies_below_its_folder_and_only_while_it_runs() {
        let root = Path::new("/watched/root");
        path(&root.join("before"));
        let watch = Watch::start(root);
        path(&root.join("variants"));
        path(Path::new("/elsewhere/variants"));
        listing(root);
        name(&root.join("rules"));
        let other = Watch::start(Path::new("/other"));
        path(Path::new("/other/x"));
        path(&root.join("tools/a.toml"));
        let seen = watch.finish();
        assert_eq!(
            seen.paths,
            BTreeSet::from([PathBuf::from("variants"), PathBuf::from("tools/a.toml")])
        );
        assert_eq!(seen.listings, BTreeSet::from([PathBuf::new()]));
        assert_eq!(seen.names, BTreeSet::from([PathBuf::from("rules")]));
        assert_eq!(other.finish().paths, BTreeSet::from([PathBuf::from("x")]));
        path(&root.join("after"));
    }
}
