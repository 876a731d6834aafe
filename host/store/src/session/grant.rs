//! Fresh session IDs and uids, and the name a grant gives a session, whichever store keeps it.

use crate::GrantName;
use crate::error::{Error, Result};
use std::path::PathBuf;

impl GrantName {
    /// The session `session` is, as a grant names it: the folder its name is in (a store
    /// names a session `<root>/<folder>/<id>`), its ID, and its uid (sessions made before
    /// [`Meta::uid`](super::Meta::uid) are told apart by their creation time).
    pub(crate) fn of(session: &super::Session) -> Result<Self> {
        let meta = session.meta()?;
        let folder = session.dir().parent().and_then(|p| p.file_name()).map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let uid = if meta.uid.is_empty() { meta.created_at } else { meta.uid };
        Ok(GrantName::new(folder, meta.id, uid))
    }
}

/// A new session's [`Meta::uid`].
pub(crate) fn random_uid() -> Result<String> {
    let mut seed = [0u8; 16];
    getrandom::fill(&mut seed).map_err(|e| Error::Io { path: PathBuf::from("/dev/urandom"), source: std::io::Error::other(e.to_string()) })?;
    Ok(seed.iter().map(|b| format!("{b:02x}")).collect())
}

/// How many fresh IDs a store's `create` draws before it gives up on a directory whose
/// second is that full.
pub(crate) const FRESH_ID_DRAWS: u32 = 64;

/// `20261122-052054-3f9a`: sortable by creation time; drawn again where taken.
pub(crate) fn new_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let stamp: String = crate::now().chars().filter(|c| c.is_ascii_digit()).collect();
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{}-{}-{:04x}", &stamp[..8], &stamp[8..14], h.finish() & 0xffff)
}
