//! Idempotency keys. A client that retries a write it got no answer to (a 500 while the
//! database restarted, a connection that dropped) sends the key it sent the first time and
//! gets the first write's outcome back, not a second write. The key and a digest of the
//! request are stored with the write itself, in its transaction, so a write and the memory
//! of it commit together or not at all; they are kept as long as the write is (a board's
//! compaction and a document's retention forget them).

use super::{Error, Result};
use sha2::{Digest, Sha256};

/// The most bytes a key may hold.
pub const MAX_KEY: usize = 255;

/// A request's key and the digest of what it asks, as stored beside its write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestKey {
    pub key: String,
    pub digest: String,
}

impl RequestKey {
    /// `key` for a request made of `parts` (who sends it and what it asks, in a fixed order);
    /// a key that is empty, longer than [`MAX_KEY`] or not visible ASCII is refused.
    pub fn new(key: &str, parts: &[&str]) -> Result<Self> {
        if key.is_empty() || key.len() > MAX_KEY || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::BadKey(format!("an Idempotency-Key is 1 to {MAX_KEY} visible ASCII characters, not {key:?}")));
        }
        let mut hash = Sha256::new();
        for part in parts {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part.as_bytes());
        }
        Ok(RequestKey { key: key.to_string(), digest: hash.finalize().iter().map(|b| format!("{b:02x}")).collect() })
    }

    /// The stored write's outcome is this request's if the digests match; a key reused for
    /// another request is refused.
    pub fn same(&self, stored_digest: &str) -> Result<()> {
        if stored_digest == self.digest { Ok(()) } else { Err(Error::KeyReused(self.key.clone())) }
    }
}
