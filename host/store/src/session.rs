//! Sessions on disk (spec 001 US-1):
//!
//! ```text
//! <root>/--<cwd>--/<session-id>/
//!   messages.jsonl          every message, append-only
//!   meta.json               id, cwd, times, update count
//!   state.json              the structured memory (source of truth for DSL updates)
//!   updates.jsonl           append-only log: one entry per applied update, with its diff
//!   working-memory/overview.md, detail/, archive/
//! ```
//!
//! Every whole-file write is atomic, and every update runs under the session's lock, so
//! concurrent updates all land, one after another.

use crate::error::{Error, Result};
use crate::fsio;
use crate::messages::{Entry, LogRecord, Message};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use workmem_runtime::{Instance, MemoryState};

/// Overrides the sessions root (default `~/.ai/sessions`).
pub const ROOT_ENV: &str = "WORKMEM_SESSIONS_DIR";

/// The sessions of one working directory: `<root>/--<cwd>--/`.
#[derive(Debug, Clone)]
pub struct Sessions {
    dir: PathBuf,
    cwd: PathBuf,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    pub id: String,
    pub cwd: String,
    pub created_at: String,
    pub updated_at: String,
    pub updates: u64,
    pub workmem_version: String,
    /// Requests an agent has sent to its LLM in this session.
    #[serde(default)]
    pub rounds: u64,
    /// The round in which working memory last changed.
    #[serde(default)]
    pub memory_updated_round: u64,
    /// What the provider's prompt-token count last differed from ours by; added to ours.
    #[serde(default)]
    pub token_correction: i64,
}

/// One line of `updates.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogEntry {
    pub at: String,
    pub added: Vec<String>,
    pub archived: Vec<String>,
    pub ignored: Vec<String>,
    pub diff: String,
    /// The DSL text exactly as it was applied.
    pub input: String,
}

/// What an applied update did.
#[derive(Debug, Clone)]
pub struct Report {
    pub entry: LogEntry,
    pub diff: String,
    pub overview: String,
    pub warnings: Vec<workmem_runtime::Diagnostic>,
}

impl Sessions {
    pub fn for_current_dir() -> Result<Self> {
        let cwd = std::env::current_dir().map_err(Error::io("."))?;
        Ok(Self::new(&root_dir()?, &cwd))
    }

    pub fn new(root: &Path, cwd: &Path) -> Self {
        Sessions { dir: root.join(encode_cwd(cwd)), cwd: cwd.to_path_buf() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates a session with a fresh (or the given) ID and the template overview.
    pub fn create(&self, engine: &mut Instance, id: Option<&str>) -> Result<Session> {
        let id = match id {
            Some(id) => checked_id(id)?.to_string(),
            None => new_id(),
        };
        let dir = self.dir.join(&id);
        if dir.exists() {
            return Err(Error::Exists { id, dir });
        }
        for sub in ["working-memory/detail", "working-memory/archive"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(Error::io(dir.join(sub)))?;
        }
        let session = Session { dir };
        let now = workmem_runtime::now();
        let cwd = self.cwd.display().to_string();
        session.write(&session.path(OVERVIEW), engine.overview_template()?.as_bytes())?;
        session.write_json(&session.path(STATE), &engine.empty_state()?)?;
        session.write(&session.path(MESSAGES), b"")?;
        session.write(&session.path(LOG), b"")?;
        session.write(&session.path(LOCK), b"")?;
        let meta = Meta {
            id,
            cwd,
            created_at: now.clone(),
            updated_at: now,
            updates: 0,
            workmem_version: env!("CARGO_PKG_VERSION").into(),
            rounds: 0,
            memory_updated_round: 0,
            token_correction: 0,
        };
        // meta.json last: its presence marks a complete session.
        session.write_json(&session.path(META), &meta)?;
        Ok(session)
    }

    /// Sessions of this directory, oldest first.
    pub fn list(&self) -> Result<Vec<(Session, Meta)>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&self.dir)(e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let session = Session { dir: entry.path() };
            if let Ok(meta) = session.meta() {
                out.push((session, meta));
            }
        }
        out.sort_by(|a, b| (&a.1.created_at, &a.1.id).cmp(&(&b.1.created_at, &b.1.id)));
        Ok(out)
    }

    /// A session named by ID (under this directory's sessions) or by its directory path.
    pub fn resolve(&self, spec: &str) -> Result<Session> {
        let as_path = Path::new(spec);
        let dir =
            if spec.contains(std::path::MAIN_SEPARATOR) || spec == "." || spec == ".." { as_path.to_path_buf() } else { self.dir.join(checked_id(spec)?) };
        Session::open(&dir)
    }
}

/// The sessions root: `$WORKMEM_SESSIONS_DIR`, else `~/.ai/sessions`.
pub fn root_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(ROOT_ENV) {
        return Ok(dir.into());
    }
    let home = std::env::var_os("HOME").ok_or(Error::NoHome(ROOT_ENV))?;
    Ok(Path::new(&home).join(".ai").join("sessions"))
}

/// `/work/main` becomes `--work-main--`.
pub fn encode_cwd(cwd: &Path) -> String {
    let s = cwd.display().to_string();
    let s = s.trim_start_matches(['/', '\\']);
    format!("--{}--", s.replace(['/', '\\', ':'], "-"))
}

/// Session IDs become directory names, so only a safe alphabet is allowed.
fn checked_id(id: &str) -> Result<&str> {
    let ok = !id.is_empty() && id.len() <= 128 && !id.starts_with('.') && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok { Ok(id) } else { Err(Error::BadId(id.to_string())) }
}

/// `20261122-052054-3f9a`: sortable by creation time, unique enough per directory.
fn new_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let stamp: String = workmem_runtime::now().chars().filter(|c| c.is_ascii_digit()).collect();
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{}-{}-{:04x}", &stamp[..8], &stamp[8..14], h.finish() & 0xffff)
}

const MESSAGES: &str = "messages.jsonl";
const META: &str = "meta.json";
const STATE: &str = "state.json";
const LOG: &str = "updates.jsonl";
const LOCK: &str = ".lock";
const OVERVIEW: &str = "working-memory/overview.md";

/// A session directory.
#[derive(Debug, Clone)]
pub struct Session {
    dir: PathBuf,
}

impl Session {
    pub fn open(dir: &Path) -> Result<Self> {
        let session = Session { dir: dir.to_path_buf() };
        if !session.path(META).is_file() {
            return Err(Error::NotASession { dir: dir.to_path_buf() });
        }
        Ok(session)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The memory file tools for this session: `working-memory/` only, every path checked.
    pub fn memory_files(&self) -> crate::MemoryFiles {
        crate::MemoryFiles::new(&self.dir)
    }

    pub fn overview_path(&self) -> PathBuf {
        self.path(OVERVIEW)
    }

    pub fn meta(&self) -> Result<Meta> {
        self.read_json(&self.path(META))
    }

    pub fn state(&self) -> Result<MemoryState> {
        self.read_json(&self.path(STATE))
    }

    pub fn overview(&self) -> Result<String> {
        let p = self.path(OVERVIEW);
        std::fs::read_to_string(&p).map_err(Error::io(p))
    }

    /// Changes meta.json under the session's lock.
    pub fn update_meta(&self, change: impl FnOnce(&mut Meta)) -> Result<()> {
        self.with_lock(|| {
            let mut meta = self.meta()?;
            change(&mut meta);
            self.write_json(&self.path(META), &meta)
        })
    }

    /// The session log (messages.jsonl), oldest first.
    pub fn records(&self) -> Result<Vec<LogRecord>> {
        self.read_jsonl(&self.path(MESSAGES))
    }

    /// Every message of the session, oldest first.
    pub fn messages(&self) -> Result<Vec<Message>> {
        Ok(self
            .records()?
            .into_iter()
            .map(|r| match r.entry {
                Entry::Message(m) => m,
            })
            .collect())
    }

    /// Appends one message to messages.jsonl, which is never rewritten, with the next
    /// sequence number (under the session's lock, so concurrent writers never share one).
    pub fn append_message(&self, message: Message) -> Result<LogRecord> {
        let path = self.path(MESSAGES);
        self.with_lock(|| {
            let last = fsio::last_line(&path).map_err(Error::io(&path))?;
            let seq = match last {
                Some(line) => serde_json::from_slice::<LogRecord>(&line).map_err(|source| Error::Corrupt { path: path.clone(), source })?.seq + 1,
                None => 1,
            };
            let record = LogRecord { seq, at: workmem_runtime::now(), entry: Entry::Message(message) };
            let mut line = serde_json::to_vec(&record).expect("a log record serializes");
            line.push(b'\n');
            fsio::append(&path, &line).map_err(Error::io(&path))?;
            Ok(record)
        })
    }

    pub fn log(&self) -> Result<Vec<LogEntry>> {
        self.read_jsonl(&self.path(LOG))
    }

    fn read_jsonl<T: serde::de::DeserializeOwned>(&self, p: &Path) -> Result<Vec<T>> {
        let text = std::fs::read_to_string(p).map_err(Error::io(p))?;
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(_, l)| serde_json::from_str(l).map_err(|source| Error::Corrupt { path: p.to_path_buf(), source }))
            .collect()
    }

    /// Runs `f` holding the session's lock. Locks do not nest: `f` must not take it again.
    pub fn with_lock<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let _lock = fsio::lock(&self.path(LOCK)).map_err(Error::io(self.path(LOCK)))?;
        f()
    }

    /// meta.json after an applied update; the caller holds the lock.
    pub fn record_update(&self) -> Result<()> {
        let mut meta = self.meta()?;
        meta.updated_at = workmem_runtime::now();
        meta.updates += 1;
        meta.memory_updated_round = meta.rounds;
        self.write_json(&self.path(META), &meta)
    }

    /// Applies a DSL update: under the session lock, reads the state, runs the engine's
    /// `apply`, then writes state.json, overview.md and meta.json and appends the log.
    /// Invalid DSL returns [`Error::InvalidDsl`] and a trap [`Error::Trap`], both before
    /// anything is written.
    pub fn apply(&self, engine: &mut Instance, text: &str) -> Result<Report> {
        self.with_lock(|| {
            let now = workmem_runtime::now();
            let state = self.state()?;
            let outcome = engine.apply(&state, text, &now)?;
            if !outcome.ok {
                return Err(Error::InvalidDsl(outcome.diagnostics));
            }
            let merged = outcome.merged;
            let overview = engine.render(&merged.state)?;

            self.write_json(&self.path(STATE), &merged.state)?;
            self.write(&self.path(OVERVIEW), overview.as_bytes())?;
            let entry = LogEntry {
                at: now,
                added: merged.added,
                archived: merged.archived,
                ignored: merged.ignored,
                diff: merged.diff.clone(),
                input: text.to_string(),
            };
            let mut line = serde_json::to_vec(&entry).expect("a log entry serializes");
            line.push(b'\n');
            fsio::append(&self.path(LOG), &line).map_err(Error::io(self.path(LOG)))?;
            self.record_update()?;
            Ok(Report { entry, diff: merged.diff, overview, warnings: outcome.diagnostics })
        })
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        fsio::write_atomic(path, bytes).map_err(Error::io(path))
    }

    fn write_json<T: Serialize>(&self, path: &Path, value: &T) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(value).expect("session files serialize");
        bytes.push(b'\n');
        self.write(path, &bytes)
    }

    fn read_json<T: serde::de::DeserializeOwned>(&self, path: &Path) -> Result<T> {
        let text = std::fs::read_to_string(path).map_err(Error::io(path))?;
        serde_json::from_str(&text).map_err(|source| Error::Corrupt { path: path.to_path_buf(), source })
    }
}
