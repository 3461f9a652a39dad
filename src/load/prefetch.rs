//! Data files read and parsed ahead, on another thread, while the load goes through them in
//! order. The load takes the files from the first on, the other thread from the last back, and
//! each file goes to whichever reaches it first: the two meet in the middle, and reading and
//! parsing the workspace takes about half as long on two cores.
//!
//! Nothing the other thread does is seen unless it went cleanly: a file it could not read or
//! parse (or one outside the workspace, too large, not UTF-8) is left for the load to read
//! again in its turn, which reports what is wrong as it would have. A file it parsed joins the
//! sources in the load's order, counted against the workspace's limit by the bytes read, as a
//! file the load reads is: ids, spans and the byte count are the same as when the load reads
//! every file itself. What the other thread reads waits in memory for the load, so it stops
//! once it has read more than the workspace may hold, in bytes or in values.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

use crate::confine;
use crate::load::data_format;
use crate::load::document::Document;
use crate::load::read::{display_path, source_text};
use crate::problem::Kind;
use crate::source::{SourceFile, SourceId};

/// A file read and parsed ahead: its text, under its display path, and its document, whose
/// source is set when the file joins the sources.
pub struct Parsed {
    pub file: SourceFile,
    pub document: Document,
    /// The file's bytes as read, before its byte-order mark was dropped.
    pub bytes_read: u64,
}

/// Who took a file: no one yet, the load, or the other thread, whose result the load then
/// receives once.
const FREE: u8 = 0;
const LOAD: u8 = 1;
const AHEAD: u8 = 2;
const RECEIVED: u8 = 3;

/// A file the other thread is done with: its index, and what it made of it.
type Done = (usize, Option<Parsed>);

pub struct Prefetch<'r> {
    root: &'r Path,
    /// The most bytes a file may hold, and the workspace.
    file_limit: u64,
    workspace_limit: u64,
    /// In the load's order, with their kinds.
    files: Vec<(PathBuf, Kind)>,
    by_path: HashMap<PathBuf, usize>,
    /// Who took each file ([`FREE`], [`LOAD`], [`AHEAD`], [`RECEIVED`]).
    claims: Vec<AtomicU8>,
    /// The files the other thread has done, in the order it did them.
    done: Mutex<Receiver<Done>>,
    sender: Mutex<Option<Sender<Done>>>,
    /// What the load has received but not yet come to.
    received: Mutex<HashMap<usize, Option<Parsed>>>,
}

impl<'r> Prefetch<'r> {
    /// For the files of a workspace at `root` (canonical) that the load will read, in its
    /// order: none larger than `file_limit` bytes, and not much more than `workspace_limit`
    /// read ahead.
    pub fn new(
        root: &'r Path,
        (file_limit, workspace_limit): (u64, u64),
        files: Vec<(PathBuf, Kind)>,
    ) -> Self {
        let by_path = files
            .iter()
            .enumerate()
            .map(|(index, (path, _))| (path.clone(), index))
            .collect();
        let (sender, receiver) = channel();
        Self {
            root,
            file_limit,
            workspace_limit,
            claims: files.iter().map(|_| AtomicU8::new(FREE)).collect(),
            files,
            by_path,
            done: Mutex::new(receiver),
            sender: Mutex::new(Some(sender)),
            received: Mutex::new(HashMap::new()),
        }
    }

    /// The other thread's part: from the last file back, each the load has not taken yet,
    /// until it meets one the load took or has read more than the workspace may hold.
    pub fn read_from_the_end(&self) {
        let Some(sender) = self.sender.lock().ok().and_then(|mut sender| sender.take()) else {
            return;
        };
        let mut read_ahead: u64 = 0;
        let mut values_ahead: usize = 0;
        for (index, claim) in self.claims.iter().enumerate().rev() {
            if read_ahead > self.workspace_limit
                || values_ahead > crate::load::document::MAX_VALUES
                || claim
                    .compare_exchange(FREE, AHEAD, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                return;
            }
            let parsed = self.parse(index);
            read_ahead = read_ahead.saturating_add(parsed.as_ref().map_or(0, |p| p.bytes_read));
            values_ahead =
                values_ahead.saturating_add(parsed.as_ref().map_or(0, |p| p.document.values()));
            if sender.send((index, parsed)).is_err() {
                return;
            }
        }
    }

    /// The load's turn at `path`: the other thread's document of it, waiting for it if that
    /// thread is at work on it; `None` when the load is to read the file itself (the other
    /// thread did not take it, could not read or parse it cleanly, or it was received
    /// already).
    pub fn take(&self, path: &Path) -> Option<Parsed> {
        let &index = self.by_path.get(path)?;
        let claim = self.claims.get(index)?;
        match claim.compare_exchange(FREE, LOAD, Ordering::AcqRel, Ordering::Acquire) {
            Err(AHEAD) => claim.store(RECEIVED, Ordering::Release),
            _ => return None,
        }
        let mut received = self.received.lock().ok()?;
        if let Some(parsed) = received.remove(&index) {
            return parsed;
        }
        let done = self.done.lock().ok()?;
        // The other thread took this file, so it sends it (or stops, and then nothing more
        // comes): what comes first is a file the load reaches later.
        while let Ok((at, parsed)) = done.recv() {
            if at == index {
                return parsed;
            }
            received.insert(at, parsed);
        }
        None
    }

    /// Leaves the files no one has taken to the load: the other thread reads no further.
    pub fn stop(&self) {
        for claim in &self.claims {
            let _ = claim.compare_exchange(FREE, LOAD, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// A file read and parsed as the load reads and parses it, or `None` at anything that
    /// the load would report.
    fn parse(&self, index: usize) -> Option<Parsed> {
        let (path, kind) = self.files.get(index)?;
        let format = data_format(path, *kind)?;
        let (bytes, real) =
            confine::read_content_resolved(self.root, path, self.file_limit).ok()?;
        let bytes_read = bytes.len() as u64;
        let text = source_text(bytes).ok()?;
        let mut file = SourceFile::new(display_path(self.root, path), text);
        file.real = real;
        // The source is set when the file joins the sources.
        let document = Document::parse(SourceId::UNSET, &file, format).ok()?;
        Some(Parsed {
            file,
            document,
            bytes_read,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::document::Format;

    /// Files of every outcome: ones that parse, and ones the load must read itself to report
    /// (bad syntax, not UTF-8, too large, JSON where only contexts may be, a link out).
    #[allow(clippy::type_complexity)]
    fn workspace() -> ([tempfile::TempDir; 2], Vec<(PathBuf, Kind)>, Vec<bool>) {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let root = dir
            .path()
            .canonicalize()
            .unwrap_or_else(|error| panic!("{error}"));
        let outside = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(outside.path().join("secret.toml"), "id = \"secret\"\n")
            .unwrap_or_else(|error| panic!("{error}"));
        let mut files = Vec::new();
        let mut clean = Vec::new();
        let mut add = |name: &str, bytes: &[u8], kind: Kind, parses: bool| {
            let path = root.join(name);
            std::fs::write(&path, bytes).unwrap_or_else(|error| panic!("{error}"));
            files.push((path, kind));
            clean.push(parses);
        };
        for index in 0..40 {
            add(
                &format!("tool{index}.toml"),
                format!("id = \"tool{index}\"\ndescription = \"Tool {index}.\"\n").as_bytes(),
                Kind::Tool,
                true,
            );
            add(
                &format!("part{index}.yaml"),
                format!("\u{feff}id: part{index}\nslot: s{index}\n").as_bytes(),
                Kind::Component,
                true,
            );
        }
        add("broken.toml", b"id = \n", Kind::Tool, false);
        add("latin1.toml", b"id = \"caf\xe9\"\n", Kind::Tool, false);
        add("large.toml", &[b'#'; 5000], Kind::Tool, false);
        add("context.json", b"{\"mode\": \"act\"}", Kind::Context, true);
        add("variant.json", b"{\"id\": \"v\"}", Kind::Variant, false);
        #[cfg(unix)]
        {
            let link = root.join("link.toml");
            std::os::unix::fs::symlink(outside.path().join("secret.toml"), &link)
                .unwrap_or_else(|error| panic!("{error}"));
            files.push((link, Kind::Tool));
            clean.push(false);
        }
        ([dir, outside], files, clean)
    }

    /// The file's text as the load keeps it (without a byte-order mark), under its display
    /// path, its bytes as read, and its document.
    fn assert_read_as_the_load_reads(root: &Path, path: &Path, parsed: &Parsed) {
        let bytes = std::fs::read(path).unwrap_or_default();
        assert_eq!(parsed.bytes_read, bytes.len() as u64);
        let text = String::from_utf8(bytes).unwrap_or_default();
        assert_eq!(
            parsed.file.text,
            text.strip_prefix('\u{feff}').unwrap_or(&text)
        );
        assert_eq!(parsed.file.path, display_path(root, path));
        let format = Format::of(path).unwrap_or(Format::Toml);
        let own = Document::parse(SourceId::UNSET, &parsed.file, format)
            .unwrap_or_else(|_| panic!("{}", path.display()));
        assert_eq!(parsed.document.value, own.value);
    }

    fn canonical(dir: &tempfile::TempDir) -> PathBuf {
        dir.path()
            .canonicalize()
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// The other thread parses the files that parse cleanly, and leaves the others to the
    /// load, each with the text and document the load would have made of it.
    #[test]
    fn what_the_other_thread_parses_is_what_the_load_would_have_parsed() {
        let ([dir, _outside], files, clean) = workspace();
        let root = canonical(&dir);
        let prefetch = Prefetch::new(&root, (4096, 1 << 20), files.clone());
        prefetch.read_from_the_end();
        for ((path, _), &parses) in files.iter().zip(&clean) {
            let parsed = prefetch.take(path);
            assert_eq!(parsed.is_some(), parses, "{}", path.display());
            if let Some(parsed) = parsed {
                assert_read_as_the_load_reads(&root, path, &parsed);
            }
            // Received once: asked again, the file is the load's to read.
            assert!(prefetch.take(path).is_none());
        }
    }

    /// Whichever thread reaches a file, the load gets the document it would have parsed
    /// itself, and nothing it would have reported; and no file is read by both: once the
    /// load has been through every file, nothing the other thread parsed is left over.
    #[test]
    fn each_file_is_read_once_by_whichever_thread_reaches_it() {
        let ([dir, _outside], files, clean) = workspace();
        let root = canonical(&dir);
        for _ in 0..20 {
            let prefetch = Prefetch::new(&root, (4096, 1 << 20), files.clone());
            std::thread::scope(|scope| {
                scope.spawn(|| prefetch.read_from_the_end());
                for ((path, _), &parses) in files.iter().zip(&clean) {
                    if let Some(parsed) = prefetch.take(path) {
                        assert!(parses, "{}", path.display());
                        assert_read_as_the_load_reads(&root, path, &parsed);
                    }
                }
            });
            let received = prefetch.received.lock().map(|received| received.len());
            assert_eq!(received.ok(), Some(0));
            let done = prefetch
                .done
                .lock()
                .unwrap_or_else(|error| panic!("{error}"));
            assert!(done.try_recv().is_err());
        }
    }

    /// Without the other thread (it could not be started), the load is never kept waiting,
    /// even for a file it asks for twice.
    #[test]
    fn without_the_other_thread_the_load_reads_every_file_itself() {
        let ([dir, _outside], files, _) = workspace();
        let root = canonical(&dir);
        let prefetch = Prefetch::new(&root, (4096, 1 << 20), files.clone());
        for (path, _) in files.iter().chain(&files) {
            assert!(prefetch.take(path).is_none());
        }
    }

    /// The other thread stops once it has read more than the workspace may hold: what it
    /// reads waits in memory for the load.
    #[test]
    fn the_other_thread_reads_ahead_no_more_than_the_workspace_may_hold() {
        let ([dir, _outside], files, _) = workspace();
        let root = canonical(&dir);
        // The last files are small; a few of them pass 100 bytes.
        let prefetch = Prefetch::new(&root, (4096, 100), files.clone());
        prefetch.read_from_the_end();
        let done = prefetch
            .done
            .lock()
            .unwrap_or_else(|error| panic!("{error}"));
        let bytes: u64 = std::iter::from_fn(|| done.try_recv().ok())
            .filter_map(|(_, parsed)| parsed.map(|parsed| parsed.bytes_read))
            .sum();
        assert!(bytes > 100 && bytes <= 100 + 4096, "{bytes}");
    }

    /// Once stopped, the other thread reads nothing more.
    #[test]
    fn a_stopped_prefetch_reads_no_further() {
        let ([dir, _outside], files, _) = workspace();
        let root = canonical(&dir);
        let prefetch = Prefetch::new(&root, (4096, 1 << 20), files.clone());
        prefetch.stop();
        prefetch.read_from_the_end();
        let receiver = prefetch
            .done
            .lock()
            .unwrap_or_else(|error| panic!("{error}"));
        assert!(receiver.try_recv().is_err());
    }
}
