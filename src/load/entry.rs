//! A typed value together with the document it was read from.

use std::path::{Path, PathBuf};

use crate::load::document::Document;
use crate::source::SourceId;
use crate::span::Span;

#[derive(Debug)]
pub struct Entry<T> {
    pub value: T,
    pub document: Document,
    /// Absolute path of the data file.
    pub path: PathBuf,
}

impl<T> Entry<T> {
    pub fn source(&self) -> SourceId {
        self.document.source
    }

    /// The folder relative paths in this file are resolved against.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }

    pub fn value_span(&self, pointer: &str) -> Span {
        self.document.value_span(pointer)
    }

    pub fn key_span(&self, pointer: &str) -> Span {
        self.document.key_span(pointer)
    }

    /// The same file with its value turned into another (a spec into its definition).
    pub fn map<U>(self, change: impl FnOnce(T) -> U) -> Entry<U> {
        Entry {
            value: change(self.value),
            document: self.document,
            path: self.path,
        }
    }
}
