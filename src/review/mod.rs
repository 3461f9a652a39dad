//! Review of a change: the workspace compiled at two git revisions, and the difference.

pub mod prompt_diff;
pub mod revision;
