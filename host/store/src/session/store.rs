//! The seam between the code that uses sessions and where sessions live. Callers hold a
//! [`Session`] or [`Sessions`] handle and never learn which store is behind it; a store is
//! these traits implemented once: [`SessionStore`] for the sessions root, [`StoredSession`]
//! (with its two halves [`SessionLog`] and [`MemoryCommit`]) for one session. What is kept
//! beside the sessions for one surface has a trait of its own, which a store's maker may
//! implement apart: the server's grant names ([`SessionGrants`]) and the proxy's secret and
//! counts ([`ProxyState`]). Today's
//! session directories ([`SessionDir`](super::SessionDir), [`SessionDirs`](super::SessionDirs))
//! are the first store; a store shared by several machines (PostgreSQL) is a second
//! implementation of the same traits.
//!
//! What every store keeps, whatever it keeps it in:
//! - the message log is append-only, numbered from 1 without gaps, and a record once
//!   acknowledged is durable (or, for [`Durability::Deferred`], made durable by the next
//!   synced append or [`SessionLog::sync_log`]);
//! - a [`Commit`] is wholly visible or not at all, and a crash at any moment leaves a session
//!   that opens with memory, update log and meta agreeing;
//! - [`StoredSession::lock`] excludes every other writer of the session, in this process or
//!   any other, and its wait is bounded where the handle says so;
//! - the memory files are confined to `working-memory/` (spec 001 US-4b), every name checked.
//!
//! Architecture invariant: nothing outside `workmem-store` names a store's implementation
//! except to make one (`Sessions::new`, `Session::open`); every other caller goes through
//! the handles.

use super::{Commit, KeyedUpdate, Locked, Meta, Proxied, Session};
use crate::GrantName;
use crate::confine::MemoryFileStore;
use crate::error::Result;
use crate::messages::{Entry, LogRecord, Usage, View};
use crate::passed::Passed;
use std::path::Path;
use std::sync::Arc;

/// Whether an append waits for the store's storage to hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    Synced,
    /// A later synced append to the same log, or [`SessionLog::sync_log`], makes it durable.
    Deferred,
}

/// A session's message log (`messages.jsonl` in a directory) and the view folded from it.
pub trait SessionLog {
    /// The log, oldest first.
    fn records(&self) -> Result<Vec<LogRecord>>;

    /// The history the model sees (see [`View`]), and the log's record it ends at. A store
    /// keeps it folded as far as it got, so building a request costs what the view does,
    /// not what the whole log does.
    fn view_to(&self) -> Result<(View, u64)>;

    /// What the view gained after the log's record `seq`, and the record it now ends at,
    /// where it only gained: nothing logged after `seq` rewrote it (a compaction), and this
    /// handle has held the view since it ended at `seq`. None where the view may have changed
    /// otherwise (the caller then reads it whole).
    fn view_after(&self, seq: u64) -> Result<Option<(View, u64)>>;

    /// Lets go of the view this handle keeps in memory (for a server that bounds what it
    /// holds of many sessions).
    fn release_view(&self);

    /// The sequence number the next entry of the log gets.
    fn next_seq(&self) -> Result<u64>;

    /// Appends `entries` in one write under `locked`, numbered in order from
    /// [`SessionLog::next_seq`], each with what its request cost where it is a reply.
    fn append_all(&self, locked: &Locked, entries: Vec<(Entry, Option<Usage>)>, durability: Durability) -> Result<Vec<LogRecord>>;

    /// Makes every append made so far durable, the [`Durability::Deferred`] ones included.
    fn sync_log(&self) -> Result<()>;
}

/// A session's working memory: its one commit path and the update log.
pub trait MemoryCommit {
    /// The serialized memory (`state.json`), or `None` before the first update. Under the
    /// lock, so that a commit a crash interrupted has been finished. A state that is missing
    /// although updates were committed is an error, never a silent fresh start.
    fn load_memory(&self, locked: &Locked) -> Result<Option<String>>;

    /// The committed memory (`None` before the first update) and its overview, as one commit
    /// left them, read without the lock (a reader must not wait on a writer whose model is
    /// thinking). `None` when writers kept it moving for every try.
    fn committed_memory(&self) -> Result<Option<(Option<String>, String)>>;

    /// The update log, one JSON record per applied update, oldest first.
    fn log(&self) -> Result<Vec<serde_json::Value>>;

    /// The update made with idempotency key `key`, for as long as the update log keeps it.
    fn keyed_update(&self, key: &str) -> Result<Option<KeyedUpdate>>;

    /// Commits an applied update (the log record, the state, the overview and meta's count)
    /// as one unit; a refused commit has changed nothing.
    fn commit(&self, locked: &Locked, commit: &Commit) -> Result<()>;
}

/// One session, wherever it is stored.
pub trait StoredSession: SessionLog + MemoryCommit + std::fmt::Debug + Send + Sync {
    /// Where the session lives, as messages and errors show it: its directory for the
    /// directory store; a store without directories gives a path-shaped name of its own.
    fn dir(&self) -> &Path;

    fn meta(&self) -> Result<Meta>;

    /// Replaces meta under a lock the caller holds.
    fn write_meta(&self, locked: &Locked, meta: &Meta) -> Result<()>;

    /// The rendered memory the model is shown (`working-memory/overview.md`).
    fn overview(&self) -> Result<String>;

    /// Takes the session's lock, waiting for another holder (at most as long as
    /// [`StoredSession::waiting_at_most`] said), and finishes any commit a crash interrupted.
    /// Locks do not nest: a holder must not take it again.
    fn lock(&self) -> Result<Locked>;

    /// Holds the session for one exchange of its conversation (a client's request, the model's
    /// answer and the tools run in between) against every process the store is shared with,
    /// waiting at most `wait` for another holder and then failing with
    /// [`Error::Busy`](crate::Error::Busy). Apart from [`StoredSession::lock`]: a holder still
    /// locks each write. `None` from a store one process keeps ([`SessionStore::shared`] is
    /// false), whose caller serializes its own exchanges.
    fn hold_exchange(&self, wait: std::time::Duration) -> Result<Option<Locked>> {
        let _ = wait;
        Ok(None)
    }

    /// This session (sharing what the handle keeps), whose lock waits at most `wait` and then
    /// fails with [`Error::Busy`](crate::Error::Busy).
    fn waiting_at_most(&self, wait: std::time::Duration) -> Arc<dyn StoredSession>;

    /// The memory file tools for this session.
    fn memory_files(&self) -> Box<dyn MemoryFileStore>;

    /// Removes the session and everything of it (one its maker takes back).
    fn remove(&self) -> Result<()>;
}

/// Where sessions live: made, listed and found, by the working directory they belong to.
pub trait SessionStore: std::fmt::Debug + Send + Sync {
    /// Where this working directory's sessions live, as messages show it.
    fn dir(&self) -> &Path;

    /// Creates a session with a fresh (or the given) ID and `overview` (the engine's
    /// template). Its memory is the empty one until the first update is committed.
    fn create(&self, id: Option<&str>, overview: &str) -> Result<Session>;

    /// [`SessionStore::create`] for the proxy: the session's meta says whose it is
    /// (`proxied`) from the start. On a shared store that is one write, so that another
    /// process never takes in the session without it.
    fn create_proxied(&self, id: Option<&str>, overview: &str, proxied: &Proxied) -> Result<Session> {
        let session = self.create(id, overview)?;
        session.update_meta(|m| m.proxied = Some(proxied.clone()))?;
        Ok(session)
    }

    /// This working directory's sessions, oldest first.
    fn list(&self) -> Result<Vec<(Session, Meta)>>;

    /// Whether other processes, on this machine or others, make and write these sessions as
    /// this one does (a database several replicas share): then what a caller keeps of them
    /// between requests (the proxy's index) is a cache, checked against the store before use.
    fn shared(&self) -> bool {
        false
    }

    /// The sessions of this working directory made after `cursor` (0: all of them), oldest
    /// first, and the cursor to ask from next: how a caller that keeps an index of a
    /// [shared](SessionStore::shared) store learns of the sessions others made. A store no one
    /// else writes has none to tell: nothing, and `cursor`.
    fn made_after(&self, cursor: u64) -> Result<(Vec<(Session, Meta)>, u64)> {
        Ok((Vec::new(), cursor))
    }

    /// The sessions of every working directory, oldest first.
    fn all(&self) -> Result<Vec<(Session, Meta)>>;

    /// A session named by ID only (what a remote caller names): this directory's, else any
    /// directory's when exactly one has that ID.
    fn find(&self, id: &str) -> Result<Session>;

    /// A session named by where it lives ([`StoredSession::dir`]) or by ID (see
    /// [`SessionStore::find`]).
    fn resolve(&self, spec: &str) -> Result<Session>;
}

/// How the HTTP server's grants name the sessions of a store ([`GrantName`]): kept by the
/// store that keeps the sessions, apart from what a store is.
pub trait SessionGrants: std::fmt::Debug + Send + Sync {
    /// What a grant for `session` names.
    fn grant_name(&self, session: &Session) -> Result<GrantName>;

    /// The session a grant names, if it is still the one granted (not one made since with
    /// its ID).
    fn open_granted(&self, name: &GrantName) -> Result<Session>;
}

/// What a proxy keeps beside the sessions it proxies, apart from what a store is.
pub trait ProxyState: std::fmt::Debug + Send + Sync {
    /// The secret named `name`: 32 random bytes as hex, drawn on first use and kept, so that
    /// what is keyed with it today is keyed alike after a restart.
    fn secret(&self, name: &str) -> Result<String>;

    /// The requests a proxy on these sessions passed through (none when it never did).
    fn passed(&self) -> Result<Passed>;

    /// Replaces the counts with `passed` (whoever writes holds them all).
    fn write_passed(&self, passed: &Passed) -> Result<()>;
}
