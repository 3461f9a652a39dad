#![allow(missing_docs)]
/// This module contains the internals of the compiler.
pub mod ast;
pub mod codegen;
pub mod instructions;
// promptc patch: the fields a template reads from the values its names stand for.
pub mod filters_and_tests;
pub mod item_reads;
pub mod lexer;
pub mod meta;
pub mod parser;
pub mod tokens;
