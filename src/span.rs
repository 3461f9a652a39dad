//! A byte range in one source file.

use std::ops::Range;

use crate::source::SourceId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub source: SourceId,
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(source: SourceId, range: Range<usize>) -> Self {
        Self {
            source,
            start: range.start,
            end: range.end.max(range.start),
        }
    }

    /// The start of a file: where problems with a whole file are reported.
    pub fn file_start(source: SourceId) -> Self {
        Self::new(source, 0..0)
    }

    pub fn range(self) -> Range<usize> {
        self.start..self.end
    }
}
