//! The model, as workmem's host reaches it: an OpenAI-compatible Chat Completions client
//! ([`Client`]) and the model's own tokenizer for exact token counts ([`Tokenizer`]).

mod client;
mod tokenizer;

pub use client::*;
pub use tokenizer::Tokenizer;
