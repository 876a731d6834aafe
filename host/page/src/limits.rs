//! How much of a session or a proxy a page shows: past these it counts what it leaves out.

/// Updates shown, the latest; the rest are counted (`workmem log` prints them all).
pub const MAX_UPDATES: usize = 200;
/// Compactions shown, the latest.
pub const MAX_COMPACTIONS: usize = 100;
/// Proxied sessions listed, the latest.
pub const MAX_SESSIONS: usize = 200;
/// Characters of one message shown where a compaction replaced it.
pub const MAX_MESSAGE_CHARS: usize = 2000;
