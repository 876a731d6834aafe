//! The names of workmem's own tools, everywhere they are named (below both the tool registry
//! and compaction, which each name them).

pub const READ_HISTORY: &str = "read_history";
pub const UPDATE_MEMORY: &str = "update_memory";
pub const COMPACT_HISTORY: &str = "compact_history";
