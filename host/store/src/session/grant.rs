//! What the HTTP server's grants name a session by, whichever store keeps it, and session IDs:
//! their alphabet, and fresh ones.

use crate::error::{Error, Result};
use std::path::PathBuf;

/// What a session grant names: one session, `<folder>/<id>#<uid>`, the folder its working
/// directory's (see [`encode_cwd`](super::encode_cwd)) and the uid what tells it from a
/// session made later with the same ID. A store resolves it
/// ([`SessionGrants`](super::SessionGrants)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantName {
    folder: String,
    id: String,
    uid: String,
}

impl GrantName {
    /// The session `session` is, as a grant names it: the folder its name is in (a store
    /// names a session `<root>/<folder>/<id>`), its ID, and its uid (sessions made before
    /// [`Meta::uid`](super::Meta::uid) are told apart by their creation time).
    pub(crate) fn of(session: &super::Session) -> Result<Self> {
        let meta = session.meta()?;
        let folder = session.dir().parent().and_then(|p| p.file_name()).map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let uid = if meta.uid.is_empty() { meta.created_at } else { meta.uid };
        Ok(GrantName { folder, id: meta.id, uid })
    }

    /// The name as a grant stores it; `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        let (folder, rest) = name.split_once('/')?;
        let (id, uid) = rest.split_once('#')?;
        let folder_ok = folder.len() > 4 && folder.starts_with("--") && folder.ends_with("--") && !folder.contains(['/', '\\', '\0']) && folder != "..";
        (folder_ok && checked_id(id).is_ok() && !uid.is_empty()).then(|| GrantName { folder: folder.into(), id: id.into(), uid: uid.into() })
    }

    /// The session ID it names.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its working directory's folder.
    pub fn folder(&self) -> &str {
        &self.folder
    }
}

impl std::fmt::Display for GrantName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}#{}", self.folder, self.id, self.uid)
    }
}

/// Session IDs become directory names, so only a safe alphabet is allowed.
pub(crate) fn checked_id(id: &str) -> Result<&str> {
    let ok = !id.is_empty() && id.len() <= 128 && !id.starts_with('.') && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok { Ok(id) } else { Err(Error::BadId(id.to_string())) }
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
