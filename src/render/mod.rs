//! Stage 4: render templates with minijinja.

pub mod budget;
pub mod memo;
pub mod renderer;
