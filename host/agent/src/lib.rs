//! The agent side of workmem: it puts the engine, a session store and a model together
//! (and, for a worker on a shared board, the board: [`board`]).
//! [`apply`] is the one commit path for an update, [`context`] builds each request,
//! [`compact`] keeps it bounded (spec 003), [`window`] bounds what of a history crosses into
//! the engine, [`update`] drives spec 000's memory update inside the
//! sandbox, [`tools`] is the one registry of LLM-callable tools, and [`turn`] is a minimal
//! agent loop over them.

pub mod board;
pub mod compact;
pub mod context;
mod error;
mod tool_names;
pub mod tools;
pub mod turn;
pub mod update;
pub mod window;

pub use error::{Error, Result};
