//! Stage 5: write the compiled matrix to its output folder, and check outputs against it.

pub mod matrix;
pub mod write;
