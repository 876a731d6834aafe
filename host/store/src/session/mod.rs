//! Sessions on disk (spec 001 US-1):
//!
//! ```text
//! <root>/--<cwd>--/<session-id>/
//!   messages.jsonl          every message and compaction, append-only
//!   view.json               the history view derived from it up to an offset (rebuilt if lost)
//!   meta.json               the format marker, id, cwd, times, update count
//!   state.json              the memory, as the engine serializes it (absent until the first update)
//!   updates.jsonl           append-only log: one record per applied update, as the engine writes it
//!   requests.jsonl          append-only: the idempotency key and digest of each keyed update, with its seq
//!   commit.pending.json     only between the steps of a commit (see [`Session::commit`])
//!   working-memory/overview.md, detail/, archive/
//! ```
//!
//! Every whole-file write is atomic, and every update runs under the session's lock, so
//! concurrent updates all land, one after another. Every file is opened beneath the session
//! directory through [`Confined`]: a symlink swapped in anywhere is refused, never followed.
//!
//! After a crash at any moment (`kill -9` included) the session loads: a commit is wholly
//! visible or not at all (see [`Session::commit`]), a torn last line of a log is ignored by
//! readers and dropped before the next append, and temporary files a dead writer left are
//! removed by the next lock holder and never listed.

mod commit;
mod log;
mod meta;
mod root;

use log::Checkpoint;

pub use commit::{Commit, failpoint};
pub use meta::{FORMAT, KeyedUpdate, MAX_REQUESTS, MemoryChain, Meta, Proxied};
pub use root::{GrantName, ROOT_ENV, Sessions, encode_cwd, root_dir};

use crate::confine::MEMORY_DIR;
use crate::confine::{Access, Confined, PathError};
use crate::error::{Error, Result};
use crate::fsio;
use crate::messages::{self, Entry, LogRecord, Message, Usage, View};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The session's lock, held until dropped (see [`Session::lock`]).
pub struct Locked {
    // Dropped in this order: the holder file goes before the `flock` is let go.
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

const OVERVIEW: &str = "working-memory/overview.md";

/// A session directory.
#[derive(Debug, Clone)]
pub struct Session {
    dir: PathBuf,
    files: Confined,
    /// How long [`Session::lock`] waits for another holder; `None`: as long as it takes.
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
    /// The view as the last [`Session::view`] left it: view.json's checkpoint without reading
    /// and parsing view.json (the whole view) again.
    view: std::sync::Mutex<Option<Checkpoint>>,
}

impl Session {
    fn at(dir: &Path) -> Self {
        Session { dir: dir.to_path_buf(), files: Confined::new(dir), lock_wait: None, kept: std::sync::Arc::default() }
    }

    /// The session in `files`' directory (already open), with the checks of [`Session::open`].
    fn open_in(files: Confined, dir: PathBuf) -> Result<Self> {
        Session::check(Session { dir, files, lock_wait: None, kept: std::sync::Arc::default() })
    }

    /// The session at `dir`: its meta.json must carry the [`FORMAT`] marker.
    pub fn open(dir: &Path) -> Result<Self> {
        Session::check(Session::at(dir))
    }

    fn check(session: Session) -> Result<Self> {
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

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Removes the session, every file of it: for one its maker takes back (the proxy's
    /// session of a request its upstream refused). The directory's own handle-safe removal
    /// follows no symlink inside it.
    pub fn remove(&self) -> Result<()> {
        std::fs::remove_dir_all(&self.dir).map_err(Error::io(&self.dir))
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The memory file tools for this session: `working-memory/` only, every path checked.
    pub fn memory_files(&self) -> crate::MemoryFiles {
        crate::MemoryFiles::within(&self.files)
    }

    pub fn overview_path(&self) -> PathBuf {
        self.path(OVERVIEW)
    }

    pub fn meta(&self) -> Result<Meta> {
        self.read_json(META)
    }

    pub fn overview(&self) -> Result<String> {
        self.files.read(OVERVIEW).map_err(self.err())
    }

    /// Changes meta.json under the session's lock.
    pub fn update_meta(&self, change: impl FnOnce(&mut Meta)) -> Result<()> {
        self.with_lock(|locked| self.update_meta_locked(locked, change))
    }

    /// [`Session::update_meta`] under a lock the caller holds.
    pub fn update_meta_locked(&self, _: &Locked, change: impl FnOnce(&mut Meta)) -> Result<()> {
        let mut meta = self.meta()?;
        change(&mut meta);
        self.write_json(META, &meta)
    }

    /// The last whole record of log `name`, read through a handle the caller already holds.
    fn last_record<T: serde::de::DeserializeOwned>(&self, name: &str, file: &mut std::fs::File) -> Result<Option<T>> {
        let path = self.path(name);
        match fsio::last_line(file).map_err(Error::io(&path))? {
            Some(line) => Ok(Some(serde_json::from_slice(&line).map_err(|source| Error::Corrupt { path, source })?)),
            None => Ok(None),
        }
    }

    /// The records of an append-only log; a torn last line (no newline yet) is not one.
    fn read_jsonl<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<Vec<T>> {
        let p = self.path(name);
        let mut file = self.files.open(name, Access::Read).map_err(self.err())?;
        let len = fsio::complete_len(&mut file).map_err(Error::io(&p))?;
        let bytes = fsio::read_range(&mut file, 0, len).map_err(Error::io(&p))?;
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .map(|l| serde_json::from_slice(l).map_err(|source| Error::Corrupt { path: p.clone(), source }))
            .collect()
    }

    /// This session, whose [`Session::lock`] waits at most `wait` for another holder and then
    /// fails with [`Error::Busy`]: a server must not let one slow writer (`workmem update`
    /// waiting on its model) hold every request that reads the session.
    pub fn waiting_at_most(mut self, wait: std::time::Duration) -> Self {
        self.lock_wait = Some(wait);
        self
    }

    /// Takes the session's lock, waiting for another holder (see [`Session::waiting_at_most`]),
    /// and finishes any commit a crash interrupted. Locks do not nest: a holder must not take
    /// it again.
    pub fn lock(&self) -> Result<Locked> {
        let deadline = self.lock_wait.map(|wait| std::time::Instant::now() + wait);
        let busy = |wait| Error::Busy { dir: self.dir.clone(), waited: wait };
        let file = self.files.open(LOCK, Access::Append).map_err(self.err())?;
        let file = match self.lock_wait {
            None => fsio::lock(file).map_err(Error::io(self.path(LOCK)))?,
            Some(wait) => fsio::lock_within(file, wait).map_err(Error::io(self.path(LOCK)))?.ok_or_else(|| busy(wait))?,
        };
        // A writer without `flock` (Node's) may hold the session: see [`crate::holder`].
        let holder = crate::holder::claim(&self.files, deadline).map_err(self.err())?.ok_or_else(|| busy(self.lock_wait.unwrap_or_default()))?;
        self.finish_pending()?;
        if !self.kept.swept.swap(true, std::sync::atomic::Ordering::Relaxed) {
            for dir in [".", MEMORY_DIR, "working-memory/detail", "working-memory/archive"] {
                // A symlink in the way is refused here as anywhere; the lock does not depend on it.
                let _ = self.files.sweep_temps(dir);
            }
        }
        Ok(Locked { _holder: holder, _file: file })
    }

    /// Runs `f` holding the session's lock.
    pub fn with_lock<T>(&self, f: impl FnOnce(&Locked) -> Result<T>) -> Result<T> {
        f(&self.lock()?)
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
