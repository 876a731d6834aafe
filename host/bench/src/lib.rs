//! workmem's economy benchmark: replays a recorded agent trajectory turn by turn under a
//! context policy, and measures what each request would have cost and what it kept (issue
//! 24's benchmark, `workmem-replay`); the generated histories' shapes and the facts they need;
//! and, in `benches/`, the timing benchmarks (`make bench`). Nothing here is part of what a user
//! installs: the `workmem` CLI does not depend on it.
//!
//! A trajectory is the JSONL of `tests/data/trajectories/SOURCES.md`: one message a line,
//! each assistant message one model call. The request of a call is what the policy makes of
//! everything before it. The workmem policies run the real thing: a session on disk, the
//! log, the engine's compaction, the request builder `workmem agent` and `workmem context`
//! use (tool definitions, the guide, the working memory, context_meta), and a stand-in for
//! the model's side of the memory protocol ([`standin`]). Every policy gets the same window;
//! a request over it is unsendable.

mod baseline;
mod chart;
pub mod command;
pub mod facts;
mod meter;
mod policy;
mod proxied;
mod readback;
mod replay;
pub mod shapes;
mod standin;

pub use meter::MODEL;
pub use policy::{Policy, Run};
pub use replay::replay;
