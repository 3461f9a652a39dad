//! Stage 3: decide what one compile contains — the variant after inheritance, the components
//! and tools in order, with their templates — for one family and context.

pub mod conditions;
pub mod date;
pub mod plan;
pub mod scope;
pub mod tool_spec;
