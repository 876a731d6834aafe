//! The engine natively, as plain Rust: one test binary for the crate, one module a concern.

mod board;
mod context;
mod document;
mod history;
mod limits;
mod never_panics;
