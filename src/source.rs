//! The text of every file a run reads, kept so that diagnostics can quote it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Index of a file in [`Sources`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceId(u32);

/// One file as read from disk. `path` is relative to the workspace root when the file lies
/// inside it, so diagnostics and JSON output do not depend on where the checkout lives.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(path: PathBuf, text: String) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        };
        let start = self.line_starts[line];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line + 1, column + 1)
    }

    /// Byte offset of the start of a 1-based line, clamped to the end of the text.
    pub fn line_offset(&self, line: usize) -> usize {
        line.checked_sub(1)
            .and_then(|index| self.line_starts.get(index))
            .copied()
            .unwrap_or(self.text.len())
    }
}

/// Every file read during a run, addressed by [`SourceId`].
#[derive(Debug, Default)]
pub struct Sources {
    files: Vec<SourceFile>,
    by_path: HashMap<PathBuf, SourceId>,
    /// Bytes of text held, so that a run can bound what it reads in all.
    total_bytes: u64,
}

impl Sources {
    pub fn add(&mut self, path: PathBuf, text: String) -> SourceId {
        let id = SourceId(u32::try_from(self.files.len()).unwrap_or(u32::MAX));
        self.by_path.insert(path.clone(), id);
        self.total_bytes = self.total_bytes.saturating_add(text.len() as u64);
        self.files.push(SourceFile::new(path, text));
        id
    }

    /// Bytes of text of every file read so far.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    pub fn get(&self, id: SourceId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = &SourceFile> {
        self.files.iter()
    }

    pub fn find(&self, path: &Path) -> Option<SourceId> {
        self.by_path.get(path).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_not_bytes() {
        let file = SourceFile::new("x".into(), "ab\nçé = 1\n".into());
        assert_eq!(file.line_col(0), (1, 1));
        assert_eq!(file.line_col(3), (2, 1));
        // "çé" is four bytes, two characters.
        assert_eq!(file.line_col(7), (2, 3));
        assert_eq!(file.line_offset(2), 3);
    }
}
