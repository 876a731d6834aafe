//! The first session store: sessions as directories on disk (spec 001 US-1):
//!
//! ```text
//! <root>/--<cwd>--/<session-id>/
//!   messages.jsonl          every message and compaction, append-only
//!   view.json               the history view derived from it up to an offset (rebuilt if lost)
//!   meta.json               the format marker, id, cwd, times, update count
//!   state.json              the memory, as the engine serializes it (absent until the first update)
//!   updates.jsonl           append-only log: one record per applied update, as the engine writes it
//!   requests.jsonl          append-only: the idempotency key and digest of each keyed update, with its seq
//!   commit.pending.json     only between the steps of a commit (see `MemoryCommit::commit`)
//!   working-memory/overview.md, detail/, archive/
//! ```
//!
//! Every whole-file write is atomic, and every update runs under the session's lock, so
//! concurrent updates all land, one after another. Every file is opened beneath the session
//! directory through [`Confined`]: a symlink swapped in anywhere is refused, never followed.
//!
//! After a crash at any moment (`kill -9` included) the session loads: a commit is wholly
//! visible or not at all (see `MemoryCommit::commit`), a torn last line of a log is ignored
//! by readers and dropped before the next append, and temporary files a dead writer left are
//! removed by the next lock holder and never listed.

mod commit;
mod log;
mod root;

pub use commit::failpoint;
pub use root::{ROOT_ENV, SessionDirs, encode_cwd, root_dir};

use super::store::StoredSession;
use super::{FORMAT, Locked, Meta};
use crate::confine::MEMORY_DIR;
use crate::confine::MemoryFileStore;
use crate::confine::{Access, Confined, PathError};
use crate::error::{Error, Result};
use crate::fsio;
use log::Checkpoint;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a directory's lock holds: dropped in this order, the holder file goes before the
/// `flock` is let go.
struct Held {
    _holder: crate::holder::Holder,
    _file: std::fs::File,
}

const MESSAGES: &str = "messages.jsonl";

const VIEW: &str = "view.json";

/// The kept view is rewritten once this many records were folded into it since.
const KEEP_VIEW_EVERY: usize = 64;

const META: &str = "meta.json";

const STATE: &str = "state.json";

const LOG: &str = "updates.jsonl";

/// Every keyed update's key, kept as long as the update log keeps the update (meta.json keeps
/// only the latest [`MAX_REQUESTS`], for the common retry at once).
const REQUESTS: &str = "requests.jsonl";

const LOCK: &str = ".lock";

const PENDING: &str = "commit.pending.json";

pub(super) const OVERVIEW: &str = "working-memory/overview.md";

/// A session directory: the first [`StoredSession`].
#[derive(Debug, Clone)]
pub struct SessionDir {
    dir: PathBuf,
    files: Confined,
    /// How long [`StoredSession::lock`] waits for another holder; `None`: as long as it takes.
    lock_wait: Option<std::time::Duration>,
    kept: std::sync::Arc<Kept>,
}

/// What a handle (and its clones) keeps between calls: a server holds a session for many
/// requests, and each request would otherwise read back what the last one read.
#[derive(Debug, Default)]
struct Kept {
    /// Whether a lock taken through this handle has swept the temporary files a dead writer
    /// left. Once per handle: a temporary file is invisible to every reader, and sweeping
    /// four folders at each lock cost a server more than the append it guarded.
    swept: std::sync::atomic::AtomicBool,
    /// The view as the last read of it left it: view.json's checkpoint without reading
    /// and parsing view.json (the whole view) again.
    view: std::sync::Mutex<Option<Checkpoint>>,
    /// The holder file's spare, from this handle's second lock on, in a process that keeps
    /// spares (`holder::claim_from_spares`).
    claims: crate::holder::Claims,
}

impl SessionDir {
    fn at(dir: &Path) -> Self {
        SessionDir { dir: dir.to_path_buf(), files: Confined::new(dir), lock_wait: None, kept: Arc::default() }
    }

    /// The session in `files`' directory (already open), with the checks of
    /// [`SessionDir::open`].
    fn open_in(files: Confined, dir: PathBuf) -> Result<Self> {
        SessionDir::check(SessionDir { dir, files, lock_wait: None, kept: Arc::default() })
    }

    /// The session at `dir`: its meta.json must carry the [`FORMAT`] marker.
    pub fn open(dir: &Path) -> Result<Self> {
        SessionDir::check(SessionDir::at(dir))
    }

    fn check(session: SessionDir) -> Result<Self> {
        let dir = session.dir.clone();
        match session.meta() {
            Ok(meta) if meta.format == FORMAT => Ok(session),
            Ok(meta) => Err(Error::NotASession { dir, why: format!("meta.json's format is {:?}, not {FORMAT:?}", meta.format) }),
            Err(Error::File { source, .. }) if source.is_not_found() => Err(Error::NotASession { dir, why: "it has no meta.json".into() }),
            Err(e) => {
                let why = match std::error::Error::source(&e) {
                    Some(source) => format!("{e}: {source}"),
                    None => e.to_string(),
                };
                Err(Error::NotASession { dir, why })
            }
        }
    }

    fn err(&self) -> impl Fn(PathError) -> Error {
        let dir = self.dir.clone();
        move |source| Error::File { dir: dir.clone(), source }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn files(&self) -> &Confined {
        &self.files
    }

    fn kept_view(&self) -> std::sync::MutexGuard<'_, Option<Checkpoint>> {
        self.kept.view.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The last whole record of log `name`, read through a handle the caller already holds.
    fn last_record<T: serde::de::DeserializeOwned>(&self, name: &str, file: &std::fs::File) -> Result<Option<T>> {
        self.parse_last(name, fsio::last_line(file).map_err(Error::io(self.path(name)))?)
    }

    /// The record `line` of log `name` holds, the log's last ([`fsio::Tail::last`]).
    fn parse_last<T: serde::de::DeserializeOwned>(&self, name: &str, line: Option<Vec<u8>>) -> Result<Option<T>> {
        line.map(|line| serde_json::from_slice(&line).map_err(|source| Error::Corrupt { path: self.path(name), source })).transpose()
    }

    /// The records of an append-only log; a torn last line (no newline yet) is not one.
    fn read_jsonl<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<Vec<T>> {
        let p = self.path(name);
        let file = self.files.open(name, Access::Read).map_err(self.err())?;
        let len = fsio::complete_len(&file).map_err(Error::io(&p))?;
        let bytes = fsio::read_range(&file, 0, len).map_err(Error::io(&p))?;
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .map(|l| serde_json::from_slice(l).map_err(|source| Error::Corrupt { path: p.clone(), source }))
            .collect()
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        self.files.write(name, bytes).map_err(self.err())
    }

    fn write_json<T: Serialize>(&self, name: &str, value: &T) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(value).expect("session files serialize");
        bytes.push(b'\n');
        self.write(name, &bytes)
    }

    fn read_json<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T> {
        let text = self.files.read(name).map_err(self.err())?;
        serde_json::from_str(&text).map_err(|source| Error::Corrupt { path: self.path(name), source })
    }
}

impl StoredSession for SessionDir {
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn meta(&self) -> Result<Meta> {
        self.read_json(META)
    }

    fn write_meta(&self, _: &Locked, meta: &Meta) -> Result<()> {
        self.write_json(META, meta)
    }

    fn overview(&self) -> Result<String> {
        self.files.read(OVERVIEW).map_err(self.err())
    }

    fn lock(&self) -> Result<Locked> {
        let wait = self.lock_wait.unwrap_or(crate::holder::LOCK_WAIT);
        let deadline = std::time::Instant::now() + wait;
        let busy = |holder| Error::Busy { dir: self.dir.clone(), waited: wait, holder };
        let file = self.files.open(LOCK, Access::Append).map_err(self.err())?;
        let file = fsio::lock_within(file, wait)
            .map_err(Error::io(self.path(LOCK)))?
            .ok_or_else(|| busy(format!("another process holds with flock on {LOCK} (a workmem writer in Rust, Python or Go)")))?;
        // A writer without `flock` (Node's) may hold the session: see [`crate::holder`].
        let holder = crate::holder::claim(&self.files, &self.kept.claims, deadline).map_err(self.err())?.map_err(busy)?;
        let locked = Locked::holding(Held { _holder: holder, _file: file });
        self.finish_pending()?;
        if !self.kept.swept.swap(true, std::sync::atomic::Ordering::Relaxed) {
            for dir in [".", MEMORY_DIR, "working-memory/detail", "working-memory/archive"] {
                // A symlink in the way is refused here as anywhere; the lock does not depend on it.
                let _ = self.files.sweep_temps(dir);
            }
        }
        Ok(locked)
    }

    fn waiting_at_most(&self, wait: std::time::Duration) -> Arc<dyn StoredSession> {
        Arc::new(SessionDir { lock_wait: Some(wait), ..self.clone() })
    }

    /// `working-memory/` only, every path checked, opened beneath the session's handle.
    fn memory_files(&self) -> Box<dyn MemoryFileStore> {
        Box::new(crate::MemoryFiles::within(&self.files))
    }

    /// The directory's own handle-safe removal follows no symlink inside it.
    fn remove(&self) -> Result<()> {
        std::fs::remove_dir_all(&self.dir).map_err(Error::io(&self.dir))
    }
}
