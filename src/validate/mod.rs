//! Stage 2: check every file against its schema, then the workspace as a whole.

pub mod schema_check;
