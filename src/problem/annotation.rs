//! The words of a diagnostic's labels (a secondary place) and notes.

use std::fmt;

/// What a secondary place of a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelKind {
    /// The first definition of a duplicated id or name.
    FirstDefinedHere,
    /// The first occurrence of an id listed twice.
    FirstListedHere,
    /// The other of two settings that exclude each other.
    AlsoSetHere,
    /// The component that already fills a slot.
    FillsTheSlot,
    /// The first of several variants that share a family.
    FirstVariantOfFamily,
}

impl fmt::Display for LabelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LabelKind::FirstDefinedHere => "first defined here",
            LabelKind::FirstListedHere => "first listed here",
            LabelKind::AlsoSetHere => "also set here",
            LabelKind::FillsTheSlot => "this component fills it",
            LabelKind::FirstVariantOfFamily => "first variant of the family",
        })
    }
}

/// Background a diagnostic adds to its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// A tool parameter without `use` lacks `name` or `instruction`.
    ParameterNeedsNameAndInstruction,
}

impl fmt::Display for NoteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NoteKind::ParameterNeedsNameAndInstruction => {
                "a parameter needs `name` and `instruction`, or `use` of a shared one"
            }
        })
    }
}
