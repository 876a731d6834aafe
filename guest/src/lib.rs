//! The workmem engine. Everything here is pure: text and state in, text and state out.
//! The same code is the components (wasm32-unknown-unknown, one build per world) and a
//! native library, so tests and benchmarks can hold one against the other.

pub mod board;
pub mod call;
mod context;
pub mod document;
mod exports;
#[cfg(any(target_arch = "wasm32", test))]
mod heap;
pub mod history;
mod ids;
mod json;
mod limits;
mod lines;
mod memory;
mod merge;
mod model;
mod parse;
mod prompt;
mod render;
mod run;
mod scan;
mod syntax;

#[cfg(all(target_arch = "wasm32", not(feature = "go")))]
mod component;
#[cfg(all(target_arch = "wasm32", feature = "go"))]
mod go;

// Every component allocates through the size lists (see `heap`); the native library leaves
// the choice to the program that links it.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static HEAP: heap::Global = heap::Global;

pub use exports::*;
pub use memory::{Applied, FORMAT, Memory, Wants};
pub use model::*;
pub use run::{Message, Step, UpdateRun, problems};
