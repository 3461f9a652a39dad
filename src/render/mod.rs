//! Stage 4: render templates with minijinja.

pub mod environment;
pub mod globals;
pub mod renderer;
