//! Work done inside one instruction, paid for with fuel (promptc patch).
//!
//! Fuel counts instructions, but one instruction can walk a whole value: `x in big` over a
//! hundred thousand items, `==` over two lists that share their parts (walked as trees, so
//! `[a, a]` doubled forty times has a trillion paths), `a[i]` on a merge of a million parts,
//! `chain` flattening every part it merged so far. Repeated in a loop, such instructions ran
//! for minutes within a fuel of a few million instructions. The walkers charge what they walk
//! here, on the thread's counter, and the running render's fuel tracker takes one unit of fuel
//! for each item (or 16 bytes of text) before each instruction: a render that
//! walks more than its fuel allows runs out of fuel, deterministically, as one that runs too
//! many instructions does. A walk that could take longer than a render's whole fuel (a tree of
//! shared parts) also asks [`exhausted`] and stops early; the render then fails at its next
//! instruction, or when it ends, so what the cut walk computed is never used.
//!
//! The counters are per thread: a render runs on one thread, and a value is only walked by the
//! thread that reads it.

use std::cell::Cell;

/// Items walked (or 16-byte pieces of text read) per unit of fuel. An instruction costs one
/// unit and takes about 20 ns; walking an item (reading it, comparing it, copying it into a
/// merge) takes 30-60 ns, and a piece of text a few.
pub(crate) const PER_FUEL: u64 = 1;

thread_local! {
    /// Items walked on this thread since it started; only differences are ever read.
    static DONE: Cell<u64> = const { Cell::new(0) };
    /// The count past which the render running on this thread has spent all its fuel on
    /// walks alone (`u64::MAX` when no render with fuel runs).
    static LIMIT: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Charges `items` walked.
#[inline]
pub(crate) fn charge(items: usize) {
    DONE.with(|done| done.set(done.get().saturating_add(items as u64)));
}

/// Charges `bytes` of text read or written.
#[inline]
pub(crate) fn charge_text(bytes: usize) {
    charge(bytes / 16);
}

/// Items walked on this thread so far.
#[inline]
pub(crate) fn done() -> u64 {
    DONE.with(Cell::get)
}

/// Whether the running render has walked more than its whole fuel pays for: a walk that can
/// outgrow any fuel stops here (the render fails before using what it computed).
#[inline]
pub(crate) fn exhausted() -> bool {
    done() > LIMIT.with(Cell::get)
}

/// `items`, each paid for as it is made; ends early once the render has walked its whole
/// fuel (for what builds a list from a text: sixteen million lines from 16 MB).
pub(crate) fn paid<I: Iterator>(items: I) -> impl Iterator<Item = I::Item> {
    items.take_while(|_| {
        charge(1);
        !exhausted()
    })
}

/// The limit of one render, set while it runs and given back to the render around it (a
/// render a function starts inside another) when it ends.
pub(crate) struct Scope {
    previous: u64,
}

impl Scope {
    /// Sets the limit at `fuel` units from now.
    pub(crate) fn enter(fuel: u64) -> Scope {
        let limit = done().saturating_add(fuel.saturating_mul(PER_FUEL));
        Scope {
            previous: LIMIT.with(|current| current.replace(limit)),
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        LIMIT.with(|current| current.set(self.previous));
    }
}
