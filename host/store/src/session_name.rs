//! How a session is named outside the store that keeps it: its ID's alphabet, and the name a
//! grant gives it. Both stores and the grant tables use these, so they sit below all three.

use crate::error::{Error, Result};

/// What a session grant names: one session, `<folder>/<id>#<uid>`, the folder its working
/// directory's (see `session::encode_cwd`) and the uid what tells it from a
/// session made later with the same ID. A store resolves it
/// (`SessionGrants`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantName {
    folder: String,
    id: String,
    uid: String,
}

impl GrantName {
    /// The name of session `id` made with `uid` in folder `folder`.
    pub(crate) fn new(folder: String, id: String, uid: String) -> Self {
        GrantName { folder, id, uid }
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
