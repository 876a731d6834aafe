//! The verbs, a module each, named as on the command line: each has its `Args` (or a
//! subcommand enum) and a `run`; `main.rs` only dispatches to them.

pub mod agent;
pub mod apply;
pub mod board;
pub mod compact;
pub mod component;
pub mod context;
pub mod demo;
pub mod doc;
pub mod history;
pub mod log;
pub mod mcp;
pub mod memory;
pub mod parse;
pub mod prompt;
pub mod proxy;
pub mod serve;
pub mod session;
pub mod show;
pub mod token;
pub mod update;
pub mod validate;
pub mod view;
