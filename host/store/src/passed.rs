//! What `workmem proxy` sent upstream as the client sent it, where it meant to keep the
//! request in a session and did not (content a session cannot keep, a request it refused, a
//! failure, a `previous_response_id` chain): counted by reason in `proxy-passed.json` beside
//! the proxied sessions, so that a request passed through is never silent. `workmem view
//! --proxy` shows the counts.

use crate::{Confined, Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The file beside the proxied sessions that holds [`Passed`].
const FILE: &str = "proxy-passed.json";

/// The longest request path kept for [`LastPassed::path`]: the client chooses it.
const MAX_PATH: usize = 200;

/// The requests a proxy passed through untouched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passed {
    /// How many, by reason (`unkept`, `refused`, `failed`, `previous_response_id`,
    /// `conversation`).
    pub by_reason: BTreeMap<String, u64>,
    /// The latest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<LastPassed>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastPassed {
    /// When (RFC 3339).
    pub at: String,
    pub reason: String,
    /// The request's path, its first [`MAX_PATH`] bytes.
    pub path: String,
}

impl Passed {
    /// Counts one more request passed through for `reason` on `path`.
    pub fn add(&mut self, reason: &str, path: &str) {
        let count = self.by_reason.entry(reason.to_string()).or_default();
        *count = count.saturating_add(1);
        let mut end = path.len().min(MAX_PATH);
        while !path.is_char_boundary(end) {
            end -= 1;
        }
        self.last = Some(LastPassed { at: crate::now(), reason: reason.to_string(), path: path[..end].to_string() });
    }

    /// All of them, every reason together (counts read from a file another may have written
    /// stop at `u64::MAX`, where a sum of them would overflow).
    pub fn total(&self) -> u64 {
        self.by_reason.values().fold(0, |sum, n| sum.saturating_add(*n))
    }
}

/// The requests a proxy on the sessions in `dir` passed through: none when it never did.
pub(crate) fn read(dir: &Path) -> Result<Passed> {
    let err = |source| Error::File { dir: dir.to_path_buf(), source };
    // The file holds a few reasons and one path: anything larger is not the proxy's.
    match Confined::new(dir).read_at_most(FILE, 64 << 10) {
        Ok(text) => serde_json::from_str(&text).map_err(|source| Error::Corrupt { path: dir.join(FILE), source }),
        Err(e) if e.is_not_found() => Ok(Passed::default()),
        Err(e) => Err(err(e)),
    }
}

/// Replaces the counts kept in `dir` with `passed` (whoever writes holds them all; see
/// [`Passed::add`]).
pub(crate) fn write(dir: &Path, passed: &Passed) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let text = serde_json::to_vec_pretty(passed).map_err(|source| Error::Corrupt { path: dir.join(FILE), source })?;
    Confined::new(dir).write(FILE, &text).map_err(|source| Error::File { dir: dir.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts from a file whose sum is past u64 (written by hand, or by a stranger) stop at the
    /// most, where `workmem view --proxy` panicked.
    #[test]
    fn counts_past_u64_stop_at_the_most() {
        let mut passed: Passed = serde_json::from_str(&format!(r#"{{"by_reason": {{"failed": {max}, "unkept": {max}}}}}"#, max = u64::MAX)).unwrap();
        assert_eq!(passed.total(), u64::MAX);
        passed.add("failed", "/v1/chat/completions");
        assert_eq!(passed.by_reason["failed"], u64::MAX);
    }

    /// Counts survive a reader in another process (a file), a client's long path is cut on a
    /// character boundary, and a directory with no proxy has none.
    #[test]
    fn counts_are_kept_beside_the_sessions() {
        let dir = std::env::temp_dir().join(format!("workmem-passed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(read(&dir).unwrap(), Passed::default());
        let mut passed = Passed::default();
        passed.add("unkept", "/v1/responses");
        passed.add("unkept", &"é".repeat(150));
        passed.add("failed", "/v1/chat/completions");
        write(&dir, &passed).unwrap();
        let back = read(&dir).unwrap();
        assert_eq!((back.by_reason["unkept"], back.by_reason["failed"], back.total()), (2, 1, 3));
        assert_eq!(back.last.as_ref().map(|l| (l.reason.as_str(), l.path.as_str())), Some(("failed", "/v1/chat/completions")));
        passed.add("unkept", &"é".repeat(150));
        assert_eq!(passed.last.unwrap().path.len(), MAX_PATH);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
