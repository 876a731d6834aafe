//! The host's integration tests, one binary: each file beside this one is a module of it
//! (`cargo test --test integration board_store::` runs one file's). They run the real parts:
//! the CLI binary, the engine component through wasmtime, SQLite, a PostgreSQL server of their
//! own, a loopback LLM server, headless Chromium.

mod common;
mod llm_server;

mod agent;
mod board_cli;
mod board_store;
mod cli;
mod compaction;
mod component;
mod conformance;
mod context;
mod crash;
mod document_store;
mod layering;
mod llm;
mod mcp_stdio;
mod memory_files;
mod proxy;
mod server;
mod session_seam;
mod session_store;
