//! The model, as workmem's host reaches it: an OpenAI-compatible Chat Completions client
//! ([`Client`]) and the model's own tokenizer for exact token counts ([`Tokenizer`]).

mod client;
mod config;
mod error;
mod http;
mod stream;
mod tokenizer;
mod vocabulary;
mod wire;

pub use client::*;
pub use config::*;
pub use error::*;
pub use http::http_agent;
pub use stream::*;
pub use tokenizer::Tokenizer;
pub use wire::*;
