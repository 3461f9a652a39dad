//! What one compile may still spend, and what a whole run has learned about templates that
//! ran out of fuel.

use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;

use crate::diagnostic::Diagnostic;
use crate::templates::TemplateId;

/// The fuel and bytes left to one compile (one family × context), shared by all its renders.
#[derive(Debug)]
pub struct Budget {
    pub fuel: u64,
    pub fuel_left: u64,
    pub render_bytes: u64,
    /// `limits.compile_bytes`, which `bytes_left` starts from.
    pub compile_bytes: u64,
    pub bytes_left: u64,
    /// Set once the compile ran out: nothing more is rendered, its error is reported.
    pub stopped: bool,
}

impl Budget {
    pub fn new(fuel: u64, render_bytes: u64, compile_bytes: u64) -> Self {
        Self {
            fuel,
            fuel_left: fuel,
            render_bytes,
            compile_bytes,
            bytes_left: compile_bytes,
            stopped: false,
        }
    }
}

/// Templates that ran out of fuel or built too much text during one run (a matrix,
/// `validate`), with the error reported: they are not rendered again for the other families
/// and contexts, which would spend the whole budget again on each.
#[derive(Debug, Default)]
pub struct Exhausted(Mutex<BTreeMap<TemplateId, Diagnostic>>);

impl Exhausted {
    pub fn get(&self, template: TemplateId) -> Option<Diagnostic> {
        self.0.lock().ok()?.get(&template).cloned()
    }

    /// Whether no template ran out yet.
    pub fn is_empty(&self) -> bool {
        self.0.lock().map_or(true, |map| map.is_empty())
    }

    pub fn insert(&self, template: TemplateId, diagnostic: Diagnostic) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(template, diagnostic);
        }
    }
}

/// A render's output, refused past a number of bytes (minijinja renders into a growing
/// string otherwise, whatever its size).
#[derive(Debug)]
pub struct CappedBuffer {
    pub bytes: Vec<u8>,
    limit: u64,
    pub overflowed: bool,
}

impl CappedBuffer {
    /// A buffer of `limit` bytes at most, with room for `expected` at first.
    pub fn new(limit: u64, expected: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(expected),
            limit,
            overflowed: false,
        }
    }
}

impl io::Write for CappedBuffer {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if (self.bytes.len() + data.len()) as u64 > self.limit {
            self.overflowed = true;
            return Err(io::Error::other("render output limit reached"));
        }
        self.bytes.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
