//! Stage 5: post-process compiled prompts and write outputs.

pub mod budget;
pub mod matrix;
pub mod postprocess;
pub mod prompt_diff;
pub mod stable_prefix;
pub mod write;
