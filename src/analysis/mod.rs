//! What compiled prompts cost: token budgets and the prompt-cache stable prefix.

pub mod budget;
pub mod stable_prefix;
pub mod stats;
