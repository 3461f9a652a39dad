//! promptc: a declarative prompt compiler.

pub mod diagnostic;
pub mod load;
pub mod model;
pub mod problem;
pub mod source;
pub mod span;
pub mod render;
pub mod schema;
pub mod validate;
