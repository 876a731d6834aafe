//! The memory's one commit path: an update's record, state and overview committed as one
//! unit under the session's lock, finished by the next lock holder after a crash.

use super::*;

/// An applied update, ready to commit as one unit (see [`Session::commit`]).
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
    /// meta.json as part of the commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<(String, String)>,
}

/// The one field of an update-log record the store reads.
#[derive(Deserialize)]
struct SeqOnly {
    seq: u32,
}

/// Named points between a commit's steps where a test stops it as a crash would, so the test
/// exercises the real order of the steps (a test that wrote the files itself could not notice
/// them reordered). Only a build with the `failpoints` feature (the integration tests') can arm
/// one; elsewhere a point is nothing.
pub mod failpoint {
    /// The points, in the order a commit passes them.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Step {
        /// The pending record is written.
        Pending,
        /// The update log's record is appended.
        Log,
        /// `state.json` is written.
        State,
        /// `overview.md` is written.
        Overview,
        /// `meta.json` counts the update.
        Meta,
    }

    pub const STEPS: [Step; 5] = [Step::Pending, Step::Log, Step::State, Step::Overview, Step::Meta];

    #[cfg(feature = "failpoints")]
    thread_local! {
        static ARMED: std::cell::Cell<Option<Step>> = const { std::cell::Cell::new(None) };
    }

    /// Makes this thread's next commit stop after `step`.
    #[cfg(feature = "failpoints")]
    pub fn arm(step: Step) {
        ARMED.with(|a| a.set(Some(step)));
    }

    #[cfg(feature = "failpoints")]
    pub(crate) fn stop(step: Step) -> crate::Result<()> {
        if ARMED.with(|a| a.get()) != Some(step) {
            return Ok(());
        }
        ARMED.with(|a| a.set(None));
        Err(crate::Error::Io { path: format!("{step:?}").into(), source: std::io::Error::other(format!("stopped at failpoint {step:?}")) })
    }

    #[cfg(not(feature = "failpoints"))]
    #[inline(always)]
    pub(crate) fn stop(_: Step) -> crate::Result<()> {
        Ok(())
    }
}

impl Session {
    /// The serialized memory (`state.json`), or `None` before the first update. Under the
    /// lock, so that a commit a crash interrupted has been finished. A state that is missing
    /// although updates were committed is an error, never a silent fresh start.
    pub fn load_memory(&self, _: &Locked) -> Result<Option<String>> {
        match self.files.read(STATE) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.is_not_found() => match self.last_update_seq()? {
                0 => Ok(None),
                updates => Err(Error::MissingState { dir: self.dir.clone(), updates }),
            },
            Err(e) => Err(self.err()(e)),
        }
    }

    /// The committed memory (`state.json`, `None` before the first update) and its
    /// `overview.md`, as one commit left them, read without the session's lock: a reader
    /// must not wait on a writer that holds the lock while its model thinks. A commit under
    /// way is read from its pending record (all of it is there); one that starts while
    /// this reads is noticed (its pending record, or meta.json's count moved) and the read
    /// is made again. `None` when writers kept it moving for every try.
    pub fn committed_memory(&self) -> Result<Option<(Option<String>, String)>> {
        for _ in 0..8 {
            let before = self.meta()?.updates;
            if let Some(commit) = self.pending()? {
                return Ok(Some((Some(commit.state), commit.overview)));
            }
            let state = match self.files.read(STATE) {
                Ok(text) => Some(text),
                Err(e) if e.is_not_found() => None,
                Err(e) => return Err(self.err()(e)),
            };
            let overview = self.overview()?;
            if self.pending()?.is_none() && self.meta()?.updates == before {
                if state.is_none() && before > 0 {
                    return Err(Error::MissingState { dir: self.dir.clone(), updates: u32::try_from(before).unwrap_or(u32::MAX) });
                }
                return Ok(Some((state, overview)));
            }
        }
        Ok(None)
    }

    pub(super) fn pending(&self) -> Result<Option<Commit>> {
        match self.files.read(PENDING) {
            Ok(text) => Ok(Some(serde_json::from_str(&text).map_err(|source| Error::Corrupt { path: self.path(PENDING), source })?)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(self.err()(e)),
        }
    }

    /// The update log, one JSON record per applied update, oldest first.
    pub fn log(&self) -> Result<Vec<serde_json::Value>> {
        self.read_jsonl(LOG)
    }

    /// The sequence number of the update log's last record (0 when it has none).
    pub(super) fn last_update_seq(&self) -> Result<u32> {
        let mut file = match self.files.open(LOG, Access::Read) {
            Err(e) if e.is_not_found() => return Ok(0),
            other => other.map_err(self.err())?,
        };
        Ok(self.last_record::<SeqOnly>(LOG, &mut file)?.map_or(0, |r| r.seq))
    }

    /// The update made with idempotency key `key`, if one was: meta.json's latest first, else
    /// every keyed update the session has made (`requests.jsonl`), so that a key is honoured as
    /// long as the update it made is in the log, however many keyed updates came after it.
    pub fn keyed_update(&self, key: &str) -> Result<Option<KeyedUpdate>> {
        if let Some(found) = self.meta()?.requests.into_iter().find(|r| r.key == key) {
            return Ok(Some(found));
        }
        let text = match self.files.read(REQUESTS) {
            Ok(text) => text,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(self.err()(e)),
        };
        // A torn last line (a crash mid-append) was never committed: it is skipped.
        Ok(text.lines().rev().filter(|l| l.contains(key)).filter_map(|l| serde_json::from_str::<KeyedUpdate>(l).ok()).find(|r| r.key == key))
    }

    /// Takes `parent`'s committed memory as this session's own: its update log, `state.json`
    /// and `overview.md`, committed here as one unit under `locked` (for a session that
    /// continues another's conversation from a point its client knows, such as the proxy's
    /// branch for a request retried after its answer was lost). Nothing is taken from a parent
    /// never updated, or one a writer keeps busy; the memory files under `detail/` stay the
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
        let lines: Vec<String> = parent
            .read_jsonl::<serde_json::Value>(LOG)?
            .into_iter()
            .filter(|r| r["seq"].as_u64().is_some_and(|at| at <= updates))
            .map(|r| r.to_string())
            .collect();
        if lines.is_empty() {
            return Ok(false);
        }
        self.commit(locked, &Commit { seq, log_entry: lines.join("\n"), state, overview: overview.clone(), request: None })?;
        self.update_meta_locked(locked, |m| m.memory_chain = Some(MemoryChain::at(&overview)))?;
        Ok(true)
    }

    /// Commits an applied update: the log record, the state, the overview and meta.json's
    /// count, as one unit. What could refuse a step (a meta.json that does not parse, a
    /// symlinked or unwritable `working-memory/`) is checked first, so a refused commit has
    /// changed nothing. The commit is then written whole to `commit.pending.json`
    /// (atomically), carried out step by step, and removed; a crash at any point leaves
    /// either no pending file (before: the session as it was; after: as it is now) or a
    /// complete one, which the next lock holder finishes. So memory, log and meta always
    /// agree once the session is loaded.
    pub fn commit(&self, _: &Locked, commit: &Commit) -> Result<()> {
        self.meta()?;
        self.files.create_dir_all(MEMORY_DIR).map_err(self.err())?;
        if let Err(e) = self.files.open(OVERVIEW, Access::Read)
            && !e.is_not_found()
        {
            return Err(self.err()(e));
        }
        self.write_json(PENDING, commit)?;
        failpoint::stop(failpoint::Step::Pending)?;
        self.finish(commit)
    }

    pub(super) fn finish_pending(&self) -> Result<()> {
        match self.pending()? {
            Some(commit) => self.finish(&commit),
            None => Ok(()),
        }
    }

    /// The steps of a commit, each safe to repeat.
    pub(super) fn finish(&self, commit: &Commit) -> Result<()> {
        let log = self.path(LOG);
        let mut file = self.files.open(LOG, Access::Append).map_err(self.err())?;
        // A record cut short by a crash mid-append was never committed: drop it.
        fsio::truncate_partial_line(&mut file).map_err(Error::io(&log))?;
        if self.last_record::<SeqOnly>(LOG, &mut file)?.map_or(0, |r| r.seq) < commit.seq {
            fsio::append(&mut file, format!("{}\n", commit.log_entry).as_bytes()).map_err(Error::io(&log))?;
        }
        if let Some((key, digest)) = &commit.request {
            let path = self.path(REQUESTS);
            let mut file = self.files.open(REQUESTS, Access::Append).map_err(self.err())?;
            fsio::truncate_partial_line(&mut file).map_err(Error::io(&path))?;
            if self.last_record::<SeqOnly>(REQUESTS, &mut file)?.map_or(0, |r| r.seq) < commit.seq {
                let line =
                    serde_json::to_string(&KeyedUpdate { key: key.clone(), digest: digest.clone(), seq: commit.seq }).expect("a keyed update serializes");
                fsio::append(&mut file, format!("{line}\n").as_bytes()).map_err(Error::io(&path))?;
            }
        }
        failpoint::stop(failpoint::Step::Log)?;
        self.write(STATE, commit.state.as_bytes())?;
        failpoint::stop(failpoint::Step::State)?;
        self.write(OVERVIEW, commit.overview.as_bytes())?;
        failpoint::stop(failpoint::Step::Overview)?;
        let mut meta = self.meta()?;
        if meta.updates != u64::from(commit.seq) {
            meta.updated_at = crate::now();
            meta.updates = commit.seq.into();
            meta.memory_updated_round = meta.rounds;
            if let Some((key, digest)) = &commit.request {
                meta.requests.push(KeyedUpdate { key: key.clone(), digest: digest.clone(), seq: commit.seq });
                let over = meta.requests.len().saturating_sub(MAX_REQUESTS);
                meta.requests.drain(..over);
            }
            self.write_json(META, &meta)?;
        }
        failpoint::stop(failpoint::Step::Meta)?;
        self.files.remove(PENDING).map_err(self.err())
    }
}
