//! The memory's one commit path: an update's record, state and overview committed as one
//! unit under the session's lock, finished by the next lock holder after a crash.

use super::{LOG, META, OVERVIEW, PENDING, REQUESTS, STATE, SessionDir};
use crate::confine::{Access, MEMORY_DIR};
use crate::error::{Error, Result};
use crate::fsio;
use crate::session::store::{MemoryCommit, StoredSession};
use crate::session::{Commit, KeyedUpdate, Locked};
use serde::Deserialize;

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

impl MemoryCommit for SessionDir {
    fn load_memory(&self, _: &Locked) -> Result<Option<String>> {
        match self.files().read(STATE) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.is_not_found() => match self.last_update_seq()? {
                0 => Ok(None),
                updates => Err(Error::MissingState { dir: self.dir().to_path_buf(), updates }),
            },
            Err(e) => Err(self.err()(e)),
        }
    }

    /// A commit under way is read from its pending record (all of it is there); one that
    /// starts while this reads is noticed (its pending record, or meta.json's count moved)
    /// and the read is made again.
    fn committed_memory(&self) -> Result<Option<(Option<String>, String)>> {
        for _ in 0..8 {
            let before = self.meta()?.updates;
            if let Some(commit) = self.pending()? {
                return Ok(Some((Some(commit.state), commit.overview)));
            }
            let state = match self.files().read(STATE) {
                Ok(text) => Some(text),
                Err(e) if e.is_not_found() => None,
                Err(e) => return Err(self.err()(e)),
            };
            let overview = self.overview()?;
            if self.pending()?.is_none() && self.meta()?.updates == before {
                if state.is_none() && before > 0 {
                    return Err(Error::MissingState { dir: self.dir().to_path_buf(), updates: u32::try_from(before).unwrap_or(u32::MAX) });
                }
                return Ok(Some((state, overview)));
            }
        }
        Ok(None)
    }

    fn log(&self) -> Result<Vec<serde_json::Value>> {
        self.read_jsonl(LOG)
    }

    fn keyed_update(&self, key: &str) -> Result<Option<KeyedUpdate>> {
        if let Some(found) = self.meta()?.requests.into_iter().find(|r| r.key == key) {
            return Ok(Some(found));
        }
        let text = match self.files().read(REQUESTS) {
            Ok(text) => text,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(self.err()(e)),
        };
        // A torn last line (a crash mid-append) was never committed: it is skipped.
        Ok(text.lines().rev().filter(|l| l.contains(key)).filter_map(|l| serde_json::from_str::<KeyedUpdate>(l).ok()).find(|r| r.key == key))
    }

    /// What could refuse a step (a meta.json that does not parse, a symlinked or unwritable
    /// `working-memory/`) is checked first, so a refused commit has changed nothing. The
    /// commit is then written whole to `commit.pending.json` (atomically), carried out step
    /// by step, and removed; a crash at any point leaves either no pending file (before: the
    /// session as it was; after: as it is now) or a complete one, which the next lock holder
    /// finishes. So memory, log and meta always agree once the session is loaded.
    fn commit(&self, _: &Locked, commit: &Commit) -> Result<()> {
        self.meta()?;
        self.files().create_dir_all(MEMORY_DIR).map_err(self.err())?;
        if let Err(e) = self.files().open(OVERVIEW, Access::Read)
            && !e.is_not_found()
        {
            return Err(self.err()(e));
        }
        self.write_json(PENDING, commit)?;
        failpoint::stop(failpoint::Step::Pending)?;
        self.finish(commit)
    }
}

impl SessionDir {
    pub(super) fn pending(&self) -> Result<Option<Commit>> {
        match self.files().read(PENDING) {
            Ok(text) => Ok(Some(serde_json::from_str(&text).map_err(|source| Error::Corrupt { path: self.path(PENDING), source })?)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(self.err()(e)),
        }
    }

    /// The sequence number of the update log's last record (0 when it has none).
    pub(super) fn last_update_seq(&self) -> Result<u32> {
        let file = match self.files().open(LOG, Access::Read) {
            Err(e) if e.is_not_found() => return Ok(0),
            other => other.map_err(self.err())?,
        };
        Ok(self.last_record::<SeqOnly>(LOG, &file)?.map_or(0, |r| r.seq))
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
        let mut file = self.files().open(LOG, Access::Append).map_err(self.err())?;
        let tail = fsio::tail(&file).map_err(Error::io(&log))?;
        // A record cut short by a crash mid-append was never committed: drop it.
        fsio::drop_torn(&file, &tail).map_err(Error::io(&log))?;
        if self.parse_last::<SeqOnly>(LOG, tail.last)?.map_or(0, |r| r.seq) < commit.seq {
            fsio::append(&mut file, format!("{}\n", commit.log_entry).as_bytes()).map_err(Error::io(&log))?;
        }
        if let Some((key, digest)) = &commit.request {
            let path = self.path(REQUESTS);
            let mut file = self.files().open(REQUESTS, Access::Append).map_err(self.err())?;
            let tail = fsio::tail(&file).map_err(Error::io(&path))?;
            fsio::drop_torn(&file, &tail).map_err(Error::io(&path))?;
            if self.parse_last::<SeqOnly>(REQUESTS, tail.last)?.map_or(0, |r| r.seq) < commit.seq {
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
        if meta.count(commit) {
            self.write_json(META, &meta)?;
        }
        failpoint::stop(failpoint::Step::Meta)?;
        self.files().remove(PENDING).map_err(self.err())
    }
}
