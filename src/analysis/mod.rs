//! What compiled prompts cost: token budgets and the prompt-cache stable prefix; and what of
//! the workspace no compile can use.

pub mod budget;
pub mod stable_prefix;
pub mod stats;
pub mod unused_specs;
