//! Stage 4: render templates with minijinja.

pub mod budget;
pub mod renderer;
