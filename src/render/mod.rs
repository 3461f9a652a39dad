//! Stage 4: render templates with minijinja.

pub mod budget;
pub mod environment;
pub mod globals;
pub mod limits;
pub mod renderer;
