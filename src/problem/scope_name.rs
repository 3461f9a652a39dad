//! Words for names of the template scope: what a workspace declares, what already has a name,
//! and why a name is not visible where it is read.

use std::fmt;

/// A kind of name a workspace file declares for templates and conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclaredName {
    Predicate,
    VariantPlaceholder,
    ContextPlaceholder,
    ComponentSlot,
    /// The name a `for_each` tool gives its item (`as`).
    ItemName,
}

impl fmt::Display for DeclaredName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeclaredName::Predicate => "predicate",
            DeclaredName::VariantPlaceholder => "variant placeholder",
            DeclaredName::ContextPlaceholder => "context placeholder",
            DeclaredName::ComponentSlot => "component slot",
            DeclaredName::ItemName => "`for_each` item name",
        })
    }
}

/// What already has a name of the scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TakenBy {
    ContextField,
    /// `family`, `variant`, `tools`, ….
    CompileName,
    StandardPlaceholder,
    /// The slot a component fills.
    SlotOf {
        component: String,
    },
    /// The slot of a component whose file failed validation (its id is not known for sure).
    SomeComponentSlot,
    PlaceholderOf {
        variant: String,
    },
    Predicate,
}

impl fmt::Display for TakenBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TakenBy::ContextField => f.write_str("a context field"),
            TakenBy::CompileName => f.write_str("a name promptc defines for every compile"),
            TakenBy::StandardPlaceholder => f.write_str("a standard placeholder"),
            TakenBy::SlotOf { component } => write!(f, "the slot of component `{component}`"),
            TakenBy::SomeComponentSlot => f.write_str("a component's slot"),
            TakenBy::PlaceholderOf { variant } => {
                write!(f, "a placeholder of variant `{variant}`")
            }
            TakenBy::Predicate => f.write_str("a predicate"),
        }
    }
}

/// Why a name that exists is not defined where a condition reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotVisible {
    /// A predicate read by one declared before it.
    LaterPredicate,
    /// A predicate read by itself.
    ItsOwnPredicate,
    /// `enabled_tools` read in a tool's condition.
    EnabledToolsInToolCondition,
    /// A name of the chosen variant (its family, placeholders, slots) read in a routing
    /// `match`, which runs before a variant is chosen.
    BeforeRouting,
    /// A name of the chosen variant other than its family (placeholders, slots) read in a
    /// `tool_definitions.dialects` rule.
    InDialectRule,
    /// A section's slot, `tools` or `TOOLS` read in a condition, which decides what renders
    /// before anything does.
    BeforeRenders,
}

impl fmt::Display for NotVisible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotVisible::LaterPredicate => "predicates see only the predicates declared before them",
            NotVisible::ItsOwnPredicate => "it is the predicate being defined, which cannot read itself",
            NotVisible::EnabledToolsInToolCondition => {
                "a tool's condition decides what `enabled_tools` holds, so it cannot read it"
            }
            NotVisible::BeforeRouting => {
                "a routing `match` runs before a variant is chosen: it sees the context and the predicates only"
            }
            NotVisible::InDialectRule => {
                "a `tool_definitions.dialects` rule sees the context, the predicates and `family` only"
            }
            NotVisible::BeforeRenders => {
                "conditions decide what renders, before anything does: section slots, `tools` and `TOOLS` are not among what they see"
            }
        })
    }
}
