//! The text of every file a run reads, kept so that diagnostics can quote it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Index of a file in [`Sources`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceId(u32);

impl SourceId {
    /// The source of a document parsed before its file joined the sources: replaced when it
    /// does, never looked up.
    pub const UNSET: SourceId = SourceId(u32::MAX);
}

/// One file as read from disk. `path` is relative to the workspace root when the file lies
/// inside it, so diagnostics and JSON output do not depend on where the checkout lives.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    /// Where the file really lies, when it was read through a symbolic link: a link inside
    /// the workspace to one of the build's outputs is refused (see `validate::references`).
    pub real: Option<PathBuf>,
    /// Made when a position in the file is first asked for: most files of a clean run never
    /// are, and a long template has thousands of lines.
    line_starts: std::sync::OnceLock<Vec<usize>>,
    /// How many characters come before each of a few byte offsets (see [`CHARS_MARKED`]),
    /// made when a column far along a line is first asked for: counting from the line's
    /// start took the line's length for each diagnostic, and thousands of them on a line of
    /// megabytes took seconds.
    char_marks: std::sync::OnceLock<Vec<(usize, usize)>>,
}

/// Bytes between two marks of [`SourceFile::char_marks`]: a column is counted from the mark
/// before it, or from its line's start when that is nearer.
const CHARS_MARKED: usize = 4096;

/// The characters before the first character boundary at or past each multiple of
/// [`CHARS_MARKED`] bytes, as (that boundary, characters before it).
fn char_marks(text: &str) -> Vec<(usize, usize)> {
    let mut marks = vec![(0, 0)];
    let mut next = CHARS_MARKED;
    for (chars, (at, _)) in text.char_indices().enumerate() {
        if at >= next {
            marks.push((at, chars));
            next = at - at % CHARS_MARKED + CHARS_MARKED;
        }
    }
    marks
}

/// Byte offset of the start of each line of `text`: 0, then one past each `\n`.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|at| at + 1))
        .collect()
}

impl SourceFile {
    pub fn new(path: PathBuf, text: String) -> Self {
        Self {
            path,
            text,
            real: None,
            line_starts: std::sync::OnceLock::new(),
            char_marks: std::sync::OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| line_starts(&self.text))
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line_starts = self.line_starts();
        let line = match line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        };
        let start = line_starts[line];
        let column = match self.text.get(start..offset) {
            None => offset - start,
            Some(before) if before.len() <= CHARS_MARKED => before.chars().count(),
            Some(_) => self.chars_before(offset) - self.chars_before(start),
        };
        (line + 1, column + 1)
    }

    /// The characters of the text before `offset`, a character boundary.
    fn chars_before(&self, offset: usize) -> usize {
        let marks = self.char_marks.get_or_init(|| char_marks(&self.text));
        let index = marks
            .partition_point(|(at, _)| *at <= offset)
            .saturating_sub(1);
        let (at, chars) = marks.get(index).copied().unwrap_or((0, 0));
        chars + self.text.get(at..offset).map_or(0, |s| s.chars().count())
    }

    /// Byte offset of the start of a 1-based line, clamped to the end of the text.
    pub fn line_offset(&self, line: usize) -> usize {
        line.checked_sub(1)
            .and_then(|index| self.line_starts().get(index))
            .copied()
            .unwrap_or(self.text.len())
    }

    /// Byte offset of a 1-based line and column, the column counted in characters, clamped
    /// to the end of the text. Line 0 and column 0 count as 1.
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        let start = self.line_offset(line.max(1));
        let rest = &self.text[start..];
        start
            + rest
                .char_indices()
                .nth(column.max(1) - 1)
                .map_or(rest.len(), |(at, _)| at)
    }
}

/// Every file read during a run, addressed by [`SourceId`].
#[derive(Debug, Default)]
pub struct Sources {
    /// The id of `files[0]`: a request's own sources continue the numbering of the
    /// workspace's (see [`Sources::after`]), so that a diagnostic's id names one file.
    first: u32,
    files: Vec<SourceFile>,
    by_path: HashMap<PathBuf, SourceId>,
    /// Bytes of text held, so that a run can bound what it reads in all.
    total_bytes: u64,
}

impl Sources {
    /// Empty sources whose ids follow `base`'s: the files one request reads (its context,
    /// its rules files) beside a workspace shared by every request, which stays unchanged.
    pub fn after(base: &Sources) -> Sources {
        let next = u32::try_from(base.files.len()).unwrap_or(u32::MAX);
        Sources {
            first: base.first.saturating_add(next),
            ..Sources::default()
        }
    }

    /// Whether `id` names one of these files (and not one of a base's).
    pub fn holds(&self, id: SourceId) -> bool {
        id.0 >= self.first && ((id.0 - self.first) as usize) < self.files.len()
    }

    pub fn add(&mut self, path: PathBuf, text: String) -> SourceId {
        self.push(SourceFile::new(path, text))
    }

    /// [`Sources::add`] for a file already made (read and parsed on another thread).
    pub fn push(&mut self, file: SourceFile) -> SourceId {
        let next = u32::try_from(self.files.len()).unwrap_or(u32::MAX);
        let id = SourceId(self.first.saturating_add(next));
        self.by_path.insert(file.path.clone(), id);
        self.total_bytes = self.total_bytes.saturating_add(file.text.len() as u64);
        self.files.push(file);
        id
    }

    /// Bytes of text of every file read so far.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Records where a file read through a symbolic link really lies.
    pub fn set_real(&mut self, id: SourceId, real: PathBuf) {
        let index = id.0.saturating_sub(self.first) as usize;
        if let Some(file) = self.files.get_mut(index) {
            file.real = Some(real);
        }
    }

    pub fn get(&self, id: SourceId) -> &SourceFile {
        &self.files[id.0.saturating_sub(self.first) as usize]
    }

    /// The files read through a symbolic link, with their ids and where they really lie.
    pub fn linked(&self) -> impl Iterator<Item = (SourceId, &Path)> {
        self.files.iter().enumerate().filter_map(|(index, file)| {
            let index = u32::try_from(index).ok()?;
            Some((
                SourceId(self.first.saturating_add(index)),
                file.real.as_deref()?,
            ))
        })
    }

    /// Each file with its id, in the order they were read.
    pub fn with_ids(&self) -> impl Iterator<Item = (SourceId, &SourceFile)> {
        self.files.iter().enumerate().map(|(index, file)| {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            (SourceId(self.first.saturating_add(index)), file)
        })
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
        assert_eq!(file.offset_of(2, 3), 7);
        assert_eq!(file.offset_of(0, 0), 0);
        assert_eq!(file.offset_of(9, 1), file.text.len());
    }

    /// Far along a long line, a column is counted from the nearest mark, and is the same as
    /// counting every character from the line's start.
    #[test]
    fn a_column_far_along_a_line_is_counted_from_a_mark() {
        let line: String = (0..20_000)
            .map(|i| if i % 7 == 0 { 'é' } else { 'a' })
            .collect();
        let text = format!("first\n{line}ç{line}\nlast");
        let file = SourceFile::new("x".into(), text.clone());
        let second = 6;
        for (offset, _) in text.char_indices().step_by(997).chain([(text.len(), ' ')]) {
            let start = if offset < second {
                0
            } else if offset <= second + 2 * line.len() + 2 {
                second
            } else {
                text.rfind('\n').unwrap_or(0) + 1
            };
            let expected = text[start..offset].chars().count() + 1;
            assert_eq!(file.line_col(offset).1, expected, "at {offset}");
        }
    }
}
