//! Stage 3: decide what one compile contains — the variant after inheritance, the components
//! and tools in order, with their templates — for one family and context.

pub mod conditions;
pub mod date;
pub mod effective_variant;
pub mod order;
pub mod plan;
pub mod template_choice;
pub mod tool_spec;
