//! Rendering diagnostics for people and machines.
