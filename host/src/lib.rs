//! The workmem host: runs the sandboxed engine component in wasmtime and keeps each
//! session's working memory on disk in the layout of spec 001.
//!
//! ```no_run
//! use workmem::{engine::{Options, Runtime}, session::Sessions};
//! let runtime = Runtime::new(&Options::default())?;
//! let mut engine = runtime.instance()?;
//! let sessions = Sessions::for_current_dir()?;
//! let session = sessions.create(&mut engine, None)?;
//! let report = session.apply(&mut engine, "CURRENT_PROGRESS:\n  In Progress:\n    - Reading the code\n")?;
//! println!("{}", report.diff);
//! # Ok::<(), workmem::Error>(())
//! ```

pub mod agent;
pub mod context;
pub mod engine;
pub mod error;
pub mod fsio;
pub mod json;
pub mod llm;
pub mod sandbox;
pub mod session;
pub mod store;

pub use error::{Error, Result};

/// The current time as RFC 3339 UTC, second precision: what the engine stores as timestamps.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
