//! Sessions (spec 001 US-1): the handles every caller holds ([`Session`], [`Sessions`]), the
//! seam behind them ([`store`]), and the first store, session directories ([`dir`]). What a
//! handle adds to its store is written once here, on the traits alone: appends that take the
//! lock themselves, changes to meta under the lock, and a branch taking its parent's memory.

mod dirs;
mod grant;
mod meta;
#[cfg(feature = "db")]
mod pg;
pub mod store;

pub(crate) use crate::session_name::checked_id;
pub use dirs::{ROOT_ENV, SessionDir, SessionDirs, encode_cwd, failpoint, root_dir};
pub(crate) use grant::{FRESH_ID_DRAWS, new_id, random_uid};
pub use meta::{FORMAT, KeyedUpdate, MAX_REQUESTS, MemoryChain, Meta, Proxied};
#[cfg(feature = "db")]
pub use pg::PgSessions;
pub use store::{Durability, MemoryCommit, ProxyState, SessionGrants, SessionLog, SessionStore, StoredSession};

use crate::error::Result;
use crate::messages::{Entry, LogRecord, Message, Usage, View};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A session's lock, held until dropped (see [`StoredSession::lock`]): whatever the store
/// holds to keep other writers out (a directory's `flock` and holder file).
pub struct Locked {
    _held: Box<dyn std::any::Any + Send + Sync>,
}

impl Locked {
    /// A lock that lasts as long as `held` does (what keeps other writers out): for a store's
    /// [`StoredSession::lock`] alone. A `Locked` made anywhere else excludes no writer, and the
    /// methods that take one trust that it came from `lock`.
    pub fn holding(held: impl std::any::Any + Send + Sync) -> Self {
        Locked { _held: Box::new(held) }
    }
}

/// An applied update, ready to commit as one unit (see [`MemoryCommit::commit`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    /// The update's sequence number: the update log's next.
    pub seq: u32,
    /// The update log's record, one line of JSON, as the engine wrote it (the first commit of
    /// a session that takes another's memory carries that one's records up to `seq`, a line
    /// each: see [`Session::inherit_memory`]).
    pub log_entry: String,
    /// The new `state.json`, as the engine serialized it.
    pub state: String,
    /// The new `working-memory/overview.md`.
    pub overview: String,
    /// The idempotency key and request digest of the request that made it, remembered in
    /// meta as part of the commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<(String, String)>,
}

/// One session, whichever store keeps it. Every method of [`StoredSession`] (and so of
/// [`SessionLog`] and [`MemoryCommit`]) is called on it directly; a clone is the same
/// session, sharing what the handle keeps between calls.
#[derive(Debug, Clone)]
pub struct Session {
    store: Arc<dyn StoredSession>,
}

impl std::ops::Deref for Session {
    type Target = dyn StoredSession;
    fn deref(&self) -> &Self::Target {
        &*self.store
    }
}

impl Session {
    /// The handle on a session `store` keeps.
    pub fn new(store: Arc<dyn StoredSession>) -> Self {
        Session { store }
    }

    /// The session directory at `dir`: its meta.json must carry the [`FORMAT`] marker.
    pub fn open(dir: &Path) -> Result<Self> {
        SessionDir::open(dir).map(|d| Session::new(Arc::new(d)))
    }

    /// This session, whose lock waits at most `wait` for another holder and then fails with
    /// [`Error::Busy`](crate::Error::Busy): a server must not let one slow writer (`workmem
    /// update` waiting on its model) hold every request that reads the session.
    pub fn waiting_at_most(self, wait: std::time::Duration) -> Self {
        Session::new(self.store.waiting_at_most(wait))
    }

    /// `dir()` joined with `name`: where a directory store keeps the file `name`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir().join(name)
    }

    /// Where a directory store keeps the overview.
    pub fn overview_path(&self) -> PathBuf {
        self.path(dirs::OVERVIEW)
    }

    /// Runs `f` holding the session's lock.
    pub fn with_lock<T>(&self, f: impl FnOnce(&Locked) -> Result<T>) -> Result<T> {
        f(&self.lock()?)
    }

    /// Changes meta under the session's lock.
    pub fn update_meta(&self, change: impl FnOnce(&mut Meta)) -> Result<()> {
        self.with_lock(|locked| self.update_meta_locked(locked, change))
    }

    /// [`Session::update_meta`] under a lock the caller holds.
    pub fn update_meta_locked(&self, locked: &Locked, change: impl FnOnce(&mut Meta)) -> Result<()> {
        let mut meta = self.meta()?;
        change(&mut meta);
        self.write_meta(locked, &meta)
    }

    /// The history the model sees (see [`View`]).
    pub fn view(&self) -> Result<View> {
        Ok(self.view_to()?.0)
    }

    /// The message logged with sequence number `seq`, as it was first written, whatever
    /// compacted it since.
    pub fn original(&self, seq: u64) -> Result<Option<Message>> {
        Ok(self.records()?.into_iter().find(|r| r.seq == seq).and_then(|r| match r.entry {
            Entry::Message(m) => Some(m),
            Entry::Compaction(_) | Entry::Withdrawal(_) => None,
        }))
    }

    /// Appends one message to the log, which is never rewritten, with the next sequence
    /// number (under the session's lock, so concurrent writers never share one).
    pub fn append_message(&self, message: Message) -> Result<LogRecord> {
        self.with_lock(|locked| self.append_one(locked, Entry::Message(message), None))
    }

    /// Appends a model's reply with what its request cost (see [`Usage`]), synced or not
    /// (see [`Session::append_messages`] for when a caller may defer it).
    pub fn append_reply(&self, message: Message, usage: Usage, durability: Durability) -> Result<LogRecord> {
        self.with_lock(|locked| {
            let mut records = self.append_all(locked, vec![(Entry::Message(message), Some(usage))], durability)?;
            Ok(records.pop().expect("one record was appended"))
        })
    }

    /// Appends an entry under a lock the caller holds (a compaction is planned and logged
    /// under one lock, so no message slips in between).
    pub fn append(&self, locked: &Locked, entry: Entry) -> Result<LogRecord> {
        self.append_one(locked, entry, None)
    }

    /// Appends `messages` in one write under one lock, numbered in order, and does not wait
    /// for the disk: what a proxy's client sends before the model answers, which the client
    /// holds and sends again with its next request, and so may defer. A crash of the process
    /// loses none of it (the kernel holds the write); a crash of the machine before the
    /// proxy's [`SessionLog::sync_log`] loses only what the client still holds and resends,
    /// which is then logged again as new. A sync of their own would add its time to every
    /// request before it went upstream.
    pub fn append_messages(&self, messages: Vec<Message>) -> Result<Vec<LogRecord>> {
        self.with_lock(|locked| self.append_all(locked, messages.into_iter().map(|m| (Entry::Message(m), None)).collect(), Durability::Deferred))
    }

    fn append_one(&self, locked: &Locked, entry: Entry, usage: Option<Usage>) -> Result<LogRecord> {
        let mut records = self.append_all(locked, vec![(entry, usage)], Durability::Synced)?;
        Ok(records.pop().expect("one record was appended"))
    }

    /// Takes `parent`'s committed memory as this session's own: its update log, state and
    /// overview, committed here as one unit under `locked` (for a session that continues
    /// another's conversation from a point its client knows, such as the proxy's branch for a
    /// request retried after its answer was lost). Nothing is taken from a parent never
    /// updated, or one a writer keeps busy; the memory files under `detail/` stay the
    /// parent's. Returns whether a memory was taken.
    pub fn inherit_memory(&self, locked: &Locked, parent: &Session) -> Result<bool> {
        // The memory and the count of updates it holds, read with no commit in between.
        let mut read = None;
        for _ in 0..8 {
            let before = parent.meta()?.updates;
            let memory = parent.committed_memory()?;
            if parent.meta()?.updates == before {
                read = memory.map(|m| (before, m));
                break;
            }
        }
        let Some((updates, (Some(state), overview))) = read else { return Ok(false) };
        let Ok(seq) = u32::try_from(updates) else { return Ok(false) };
        // The parent's records up to the update its state holds (one committed since is left),
        // appended here by the commit itself, as one entry: a branch has all of them or none.
        let lines: Vec<String> = parent.log()?.into_iter().filter(|r| r["seq"].as_u64().is_some_and(|at| at <= updates)).map(|r| r.to_string()).collect();
        if lines.is_empty() {
            return Ok(false);
        }
        self.commit(locked, &Commit { seq, log_entry: lines.join("\n"), state, overview: overview.clone(), request: None })?;
        self.update_meta_locked(locked, |m| m.memory_chain = Some(MemoryChain::at(&overview)))?;
        Ok(true)
    }
}

/// The sessions of one working directory, whichever store keeps them, with what is kept
/// beside them. Every method of [`SessionStore`] is called on it directly.
#[derive(Debug, Clone)]
pub struct Sessions {
    store: Arc<dyn SessionStore>,
    grants: Option<Arc<dyn SessionGrants>>,
    proxy: Option<Arc<dyn ProxyState>>,
}

impl std::ops::Deref for Sessions {
    type Target = dyn SessionStore;
    fn deref(&self) -> &Self::Target {
        &*self.store
    }
}

impl Sessions {
    /// The handle on the sessions `store` keeps, with nothing beside them: no grants name
    /// them ([`Sessions::with_grants`]) and no proxy keeps its state there
    /// ([`Sessions::with_proxy_state`]).
    pub fn with_store(store: Arc<dyn SessionStore>) -> Self {
        Sessions { store, grants: None, proxy: None }
    }

    /// These sessions, which `grants` names for the server's grants.
    pub fn with_grants(self, grants: Arc<dyn SessionGrants>) -> Self {
        Sessions { grants: Some(grants), ..self }
    }

    /// These sessions, beside which a proxy keeps its state in `proxy`.
    pub fn with_proxy_state(self, proxy: Arc<dyn ProxyState>) -> Self {
        Sessions { proxy: Some(proxy), ..self }
    }

    /// The session directories of working directory `cwd` under the sessions root `root`:
    /// `<root>/--<cwd>--/`, with their grant names and the proxy's files beside them.
    pub fn new(root: &Path, cwd: &Path) -> Self {
        let dirs = Arc::new(SessionDirs::new(root, cwd));
        Sessions::with_store(dirs.clone()).with_grants(dirs.clone()).with_proxy_state(dirs)
    }

    /// The sessions of working directory `cwd` in the PostgreSQL database at `url`, with their
    /// grant names and the proxy's state beside them: shared by every process, on any machine,
    /// given the same database.
    #[cfg(feature = "db")]
    pub fn postgres(url: &str, cwd: &Path) -> Result<Self> {
        let pg = Arc::new(PgSessions::connect(url, cwd)?);
        Ok(Sessions::with_store(pg.clone()).with_grants(pg.clone()).with_proxy_state(pg))
    }

    /// How grants name these sessions.
    pub fn grants(&self) -> Result<&dyn SessionGrants> {
        self.grants.as_deref().ok_or(crate::Error::NotKept("grant names"))
    }

    /// What a proxy keeps beside these sessions.
    pub fn proxy_state(&self) -> Result<&dyn ProxyState> {
        self.proxy.as_deref().ok_or(crate::Error::NotKept("proxy state"))
    }

    /// [`Sessions::new`] for the current directory under [`root_dir`].
    pub fn for_current_dir() -> Result<Self> {
        let cwd = std::env::current_dir().map_err(crate::Error::io("."))?;
        Ok(Self::new(&root_dir()?, &cwd))
    }
}
