//! The words of a diagnostic's labels (a secondary place) and notes.

use std::fmt;

/// What a secondary place of a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelKind {
    /// The first definition of a duplicated id or name.
    FirstDefinedHere,
    /// The first occurrence of an id listed twice.
    FirstListedHere,
    /// The first of two keys of one mapping that read as the same key.
    FirstSetHere,
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
            LabelKind::FirstSetHere => "first set here",
            LabelKind::AlsoSetHere => "also set here",
            LabelKind::FillsTheSlot => "this component fills it",
            LabelKind::FirstVariantOfFamily => "first variant of the family",
        })
    }
}

/// Background a diagnostic adds to its message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// A tool parameter without `use` lacks `name` or `instruction`.
    ParameterNeedsNameAndInstruction,
    /// The build-matrix entry whose compile first met a problem (a template can fail for one
    /// context and not another): its family, or the variant it names, and its context.
    FirstMetCompiling { family: String, context: String },
    /// A tool a `for_each` spec made from the item at this index of its list.
    MadeFromItem { index: usize, list: String },
    /// An unknown name in a parameter's `depends_on`, which names tools, not parameters.
    DependsOnNamesTools,
    /// A condition of a `for_each` tool reads the name its item has in the texts.
    ItemNotInConditions { item: String },
}

impl fmt::Display for NoteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoteKind::ParameterNeedsNameAndInstruction => {
                f.write_str("a parameter needs `name` and `instruction`, or `use` of a shared one")
            }
            NoteKind::FirstMetCompiling { family, context } => {
                write!(f, "first met compiling {family} × {context}")
            }
            NoteKind::MadeFromItem { index, list } => {
                write!(f, "made from item {index} of `{list}` (counted from 0)")
            }
            NoteKind::ItemNotInConditions { item } => write!(
                f,
                "`{item}` is the `for_each` item, which the tool's texts see; conditions are decided once for the spec, before any item, and see the context only"
            ),
            NoteKind::DependsOnNamesTools => f.write_str(
                "`depends_on` names tools by id, not parameters: the parameter is offered only while each tool it names is",
            ),
        }
    }
}
