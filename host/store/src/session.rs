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

use crate::confine::MEMORY_DIR;
use crate::confine::{Access, Confined, PathError};
use crate::error::{Error, Result};
use crate::fsio;
use crate::messages::{self, Entry, LogRecord, Message, Usage, View};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Overrides the sessions root (default `~/.ai/sessions`).
pub const ROOT_ENV: &str = "WORKMEM_SESSIONS_DIR";

/// The sessions of one working directory: `<root>/--<cwd>--/`.
#[derive(Debug, Clone)]
pub struct Sessions {
    dir: PathBuf,
    cwd: PathBuf,
}

/// What meta.json's `format` says of a session directory this version reads.
pub const FORMAT: &str = "workmem-session/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    /// [`FORMAT`]: a directory is a session because it says so, not because it holds a
    /// file named meta.json.
    #[serde(default)]
    pub format: String,
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
    /// Random at creation: tells this session from a later one made with its ID in its
    /// folder, so a grant for it opens nothing else (empty in sessions made before it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The latest updates made with an idempotency key (at most [`MAX_REQUESTS`]): a
    /// request retried with one of them gets that update back instead of a second one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<KeyedUpdate>,
    /// The copy of the working memory requests carry, and the changes since it that the
    /// history shows (the model's own memory tool calls); see [`MemoryChain`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_chain: Option<MemoryChain>,
    /// Set on a session `workmem proxy` keeps for a client: see [`Proxied`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxied: Option<Proxied>,
}

/// What `workmem proxy` knows of the client whose requests a session logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proxied {
    /// The client's protocol: `chat` (Chat Completions), `messages` (Anthropic Messages) or
    /// `responses` (the Responses API).
    pub protocol: String,
    /// The client's own name for its session (an `X-Workmem-Session` header, or the session
    /// id the protocol carries), when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The session this one branched from: the client sent a history that did not extend it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_of: Option<String>,
    /// Whose session it is: a keyed hash of the credentials its first request carried (see
    /// [`Sessions::secret`]). Only requests that carry the same credentials continue it; a
    /// session made before callers were recorded is continued by none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
}

/// The working memory as requests carry it in their prefix, and the memory the history leads
/// it to. The model's own memory tool calls stay in the history, so after one a request can
/// carry the memory as it was (which the provider has cached) and let the history show what
/// changed, instead of rewriting the prefix at every update (issue 24: an update every few
/// requests made the whole history a cache miss each time). Any other change (an update from
/// outside the loop, an edit by hand) leaves `overview.md` at a text the chain does not lead
/// to, and requests carry the memory as it is; so does a compaction that replaces one of
/// those calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryChain {
    /// The text requests carry.
    pub shown: String,
    /// The digest of `overview.md` after the last change the history shows.
    pub to: String,
}

impl MemoryChain {
    pub fn digest(text: &str) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A chain that shows `memory` as it is.
    pub fn at(memory: &str) -> MemoryChain {
        MemoryChain { shown: memory.to_string(), to: Self::digest(memory) }
    }

    /// The chain after a change the history shows, from `before` to `after`.
    pub fn extended(chain: Option<&MemoryChain>, before: &str, after: &str) -> MemoryChain {
        match chain {
            Some(c) if c.to == Self::digest(before) => MemoryChain { shown: c.shown.clone(), to: Self::digest(after) },
            // Requests showed `before` (the chain no longer led to it).
            _ => MemoryChain { shown: before.to_string(), to: Self::digest(after) },
        }
    }

    /// What a request's prefix carries when `overview.md` holds `live`.
    pub fn shown<'a>(chain: Option<&'a MemoryChain>, live: &'a str) -> &'a str {
        match chain {
            Some(c) if c.to == Self::digest(live) => &c.shown,
            _ => live,
        }
    }
}

/// Updates remembered by their idempotency key, the latest.
pub const MAX_REQUESTS: usize = 64;

/// An update made with an idempotency key: the key, the digest of the request, its seq.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyedUpdate {
    pub key: String,
    pub digest: String,
    pub seq: u32,
}

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

/// The session's lock, held until dropped (see [`Session::lock`]).
pub struct Locked {
    // Dropped in this order: the holder file goes before the `flock` is let go.
    _holder: crate::holder::Holder,
    _file: std::fs::File,
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

    /// Creates a session with a fresh (or the given) ID and `overview` (the engine's
    /// template). Its memory is the empty one until the first update is committed.
    pub fn create(&self, id: Option<&str>, overview: &str) -> Result<Session> {
        let given = id.map(checked_id).transpose()?;
        std::fs::create_dir_all(&self.dir).map_err(Error::io(&self.dir))?;
        // A fresh ID taken already is drawn again: its 16 random bits collide among a few dozen
        // sessions made in one second (the proxy makes one for each new client).
        let mut draws = 0;
        let (id, dir) = loop {
            let id = given.map_or_else(new_id, str::to_string);
            let dir = self.dir.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => break (id, dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    draws += 1;
                    if given.is_some() || draws == FRESH_ID_DRAWS {
                        return Err(Error::Exists { id, dir });
                    }
                }
                Err(e) => return Err(Error::io(&dir)(e)),
            }
        };
        let session = Session::at(&dir);
        for sub in ["working-memory/detail", "working-memory/archive"] {
            session.files.create_dir_all(sub).map_err(session.err())?;
        }
        let now = crate::now();
        let cwd = self.cwd.display().to_string();
        session.write(OVERVIEW, overview.as_bytes())?;
        session.write(MESSAGES, b"")?;
        session.write(LOG, b"")?;
        session.write(LOCK, b"")?;
        let meta = Meta {
            format: FORMAT.into(),
            id,
            cwd,
            created_at: now.clone(),
            updated_at: now,
            updates: 0,
            workmem_version: env!("CARGO_PKG_VERSION").into(),
            rounds: 0,
            memory_updated_round: 0,
            token_correction: 0,
            uid: random_uid()?,
            requests: Vec::new(),
            memory_chain: Some(MemoryChain::at(overview)),
            proxied: None,
        };
        // meta.json last: its marker makes the directory a session.
        session.write_json(META, &meta)?;
        Ok(session)
    }

    /// This directory's secret named `name`: 32 random bytes as hex, drawn on first use and
    /// kept in a file of that name beside the sessions (read beneath the directory's handle,
    /// like every file of the store's), so that what is keyed with it today is keyed alike
    /// after a restart.
    pub fn secret(&self, name: &str) -> Result<String> {
        std::fs::create_dir_all(&self.dir).map_err(Error::io(&self.dir))?;
        let files = Confined::new(&self.dir);
        let err = |source| Error::File { dir: self.dir.clone(), source };
        let valid = |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
        match files.read_at_most(name, 64) {
            Ok(secret) if valid(&secret) => return Ok(secret),
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(err(e)),
        }
        let secret = format!("{}{}", random_uid()?, random_uid()?);
        files.write_private(name, secret.as_bytes()).map_err(err)?;
        // Another process may have drawn one at the same moment: the one on disk is the one.
        files.read_at_most(name, 64).map_err(err)
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
            if let Ok(session) = Session::open(&entry.path()) {
                let meta = session.meta()?;
                out.push((session, meta));
            }
        }
        out.sort_by(|a, b| (&a.1.created_at, &a.1.id).cmp(&(&b.1.created_at, &b.1.id)));
        Ok(out)
    }

    /// A session named by its directory path, or by ID: under this directory's sessions,
    /// else under any directory's when exactly one has that ID (so a session can be named
    /// from anywhere); an ID in several directories is [`Error::Ambiguous`].
    pub fn resolve(&self, spec: &str) -> Result<Session> {
        if spec.contains(std::path::MAIN_SEPARATOR) || spec == "." || spec == ".." {
            return Session::open(Path::new(spec));
        }
        self.find(spec)
    }

    /// A session named by ID only (never a path: what a remote caller names): under this
    /// directory's sessions, else under any directory's when exactly one has that ID.
    pub fn find(&self, id: &str) -> Result<Session> {
        let id = checked_id(id)?;
        let here = self.dir.join(id);
        // Two directories may map to one folder (`/x/a-b` and `/x/a/b`): a session is this
        // directory's only if it says so.
        if here.exists() {
            let session = Session::open(&here)?;
            if session.meta()?.cwd == self.cwd.display().to_string() {
                return Ok(session);
            }
        }
        let mut found: Vec<PathBuf> = self.all()?.into_iter().map(|(s, _)| s.dir).filter(|d| d.file_name().is_some_and(|n| n == id)).collect();
        match found.len() {
            0 if !here.exists() => Err(Error::NoSuchSession { id: id.to_string(), cwd: self.cwd.clone() }),
            0 => Session::open(&here),
            1 => Session::open(&found.remove(0)),
            _ => Err(Error::Ambiguous { id: id.to_string(), dirs: found }),
        }
    }

    /// The sessions of every directory under the sessions root, oldest first.
    pub fn all(&self) -> Result<Vec<(Session, Meta)>> {
        let root = self.dir.parent().unwrap_or(&self.dir);
        let entries = match std::fs::read_dir(root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(root)(e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let dir = entry.path();
            if dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("--") && n.ends_with("--")) {
                out.extend(Sessions { dir, cwd: self.cwd.clone() }.list()?);
            }
        }
        out.sort_by(|a, b| (&a.1.created_at, &a.1.id).cmp(&(&b.1.created_at, &b.1.id)));
        Ok(out)
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

/// A new session's [`Meta::uid`].
fn random_uid() -> Result<String> {
    let mut seed = [0u8; 16];
    getrandom::fill(&mut seed).map_err(|e| Error::Io { path: PathBuf::from("/dev/urandom"), source: std::io::Error::other(e.to_string()) })?;
    Ok(seed.iter().map(|b| format!("{b:02x}")).collect())
}

/// What a session grant names: one session directory, `<folder>/<id>#<uid>`, beneath the
/// sessions root (the folder is its working directory's, see [`encode_cwd`]; sessions made
/// before [`Meta::uid`] are told apart by their creation time instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantName {
    folder: String,
    id: String,
    uid: String,
}

impl GrantName {
    /// The session `session` is, as a grant names it.
    pub fn of(session: &Session) -> Result<Self> {
        let meta = session.meta()?;
        let folder = session.dir.parent().and_then(|p| p.file_name()).map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
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

    /// The session it names beneath the sessions root `root`, if that session is still the
    /// one granted: not one made since with the same ID.
    pub fn open(&self, root: &Path) -> Result<Session> {
        let dir = root.join(&self.folder).join(&self.id);
        // Beneath the root by handle: neither the project's folder nor the session's may be a
        // symlink (to elsewhere, or swapped in while the session is used).
        let files = Confined::new(root)
            .subdir(&format!("{}/{}", self.folder, self.id))
            .map_err(|source| Error::NotASession { dir: dir.clone(), why: source.to_string() })?;
        let session = Session::open_in(files, dir.clone())?;
        if GrantName::of(&session)? != *self {
            return Err(Error::NotASession { dir, why: "it is a newer session with the granted one's ID".into() });
        }
        Ok(session)
    }
}

impl std::fmt::Display for GrantName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}#{}", self.folder, self.id, self.uid)
    }
}

/// Session IDs become directory names, so only a safe alphabet is allowed.
fn checked_id(id: &str) -> Result<&str> {
    let ok = !id.is_empty() && id.len() <= 128 && !id.starts_with('.') && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok { Ok(id) } else { Err(Error::BadId(id.to_string())) }
}

/// How many fresh IDs [`Sessions::create`] draws before it gives up on a directory whose
/// second is that full.
const FRESH_ID_DRAWS: u32 = 64;

/// `20261122-052054-3f9a`: sortable by creation time; drawn again where taken.
fn new_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let stamp: String = crate::now().chars().filter(|c| c.is_ascii_digit()).collect();
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{}-{}-{:04x}", &stamp[..8], &stamp[8..14], h.finish() & 0xffff)
}

const MESSAGES: &str = "messages.jsonl";
const VIEW: &str = "view.json";
/// The kept view is rewritten once this many records were folded into it since.
const KEEP_VIEW_EVERY: usize = 64;

/// view.json: the view derived from the log up to `offset` bytes (through record `seq`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Checkpoint {
    seq: u64,
    offset: u64,
    view: View,
    /// The last record that rewrote the view rather than add to it (a compaction), or where
    /// the view was last read back from view.json or the log: what a view built on from an
    /// earlier one must not come before ([`Session::view_after`]).
    #[serde(default)]
    rewritten: u64,
}
const META: &str = "meta.json";
const STATE: &str = "state.json";
const LOG: &str = "updates.jsonl";
/// Every keyed update's key, kept as long as the update log keeps the update (meta.json keeps
/// only the latest [`MAX_REQUESTS`], for the common retry at once).
const REQUESTS: &str = "requests.jsonl";
const LOCK: &str = ".lock";
const PENDING: &str = "commit.pending.json";
const OVERVIEW: &str = "working-memory/overview.md";

/// Whether an append waits for the disk.
enum Durability {
    Synced,
    /// A later append to the same log syncs it.
    Deferred,
}

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

    pub fn overview(&self) -> Result<String> {
        self.files.read(OVERVIEW).map_err(self.err())
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

    fn pending(&self) -> Result<Option<Commit>> {
        match self.files.read(PENDING) {
            Ok(text) => Ok(Some(serde_json::from_str(&text).map_err(|source| Error::Corrupt { path: self.path(PENDING), source })?)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(self.err()(e)),
        }
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

    /// The session log (messages.jsonl), oldest first.
    pub fn records(&self) -> Result<Vec<LogRecord>> {
        self.read_jsonl(MESSAGES)
    }

    /// The history the model sees (see [`View`]). It is kept in view.json, derived from
    /// the log up to a byte offset, so that building a request reads the kept view and the
    /// log's tail, not the whole log: a long session costs what its view does.
    pub fn view(&self) -> Result<View> {
        Ok(self.view_to()?.0)
    }

    /// What the view gained after the log's record `seq`, and the record it now ends at, where
    /// it only gained: nothing logged after `seq` rewrote it (a compaction), and this handle
    /// has held the view in memory since it ended at `seq`. Then the view is the one that ended
    /// at `seq` with these entries after it, and a request built on from one built at `seq`
    /// need not copy the whole view again. None where the view may have changed otherwise.
    pub fn view_after(&self, seq: u64) -> Result<Option<(View, u64)>> {
        let kept = self.folded()?;
        let gained = (kept.rewritten <= seq && seq <= kept.seq).then(|| {
            let from = kept.view.entries.partition_point(|(s, _)| *s <= seq);
            (View { entries: kept.view.entries[from..].to_vec(), last_compaction: kept.view.last_compaction.clone() }, kept.seq)
        });
        self.hold(kept);
        Ok(gained)
    }

    /// The view as [`Session::view`] reads it, and the record it ends at.
    pub fn view_to(&self) -> Result<(View, u64)> {
        let kept = self.folded()?;
        let view = (kept.view.clone(), kept.seq);
        self.hold(kept);
        Ok(view)
    }

    /// Keeps `kept` for the next read of the view, unless a later one is kept already.
    fn hold(&self, kept: Checkpoint) {
        let mut held = self.kept.view.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.as_ref().is_none_or(|h| h.offset <= kept.offset) {
            *held = Some(kept);
        }
    }

    /// The view folded up to the log's end, from the one this handle holds, else view.json's.
    fn folded(&self) -> Result<Checkpoint> {
        let log = self.path(MESSAGES);
        let held = self.kept.view.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        // A view not held since is not known to have only gained ([`Session::view_after`]).
        let unheld = held.is_none();
        let kept: Option<Checkpoint> = held.or_else(|| self.read_json(VIEW).ok());
        let mut file = self.files.open(MESSAGES, Access::Read).map_err(self.err())?;
        let len = fsio::complete_len(&mut file).map_err(Error::io(&log))?;
        // A kept view ends where a record ends, within the log.
        let mut ends_a_record = |offset: u64| -> Result<bool> {
            Ok(offset == 0 || (offset <= len && fsio::read_range(&mut file, offset - 1, 1).map_err(Error::io(&log))? == b"\n"))
        };
        let mut kept = match kept {
            Some(k) if ends_a_record(k.offset)? => k,
            _ => Checkpoint::default(),
        };
        let tail = fsio::read_range(&mut file, kept.offset, len - kept.offset).map_err(Error::io(&log))?;
        let (mut folded, mut compacted, mut expanded) = (0, false, false);
        // The whole log, read only when a read kept by reference is folded in.
        let mut all: Option<Vec<LogRecord>> = None;
        for line in tail.split(|&b| b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)) {
            let mut record: LogRecord = serde_json::from_slice(line).map_err(|source| Error::Corrupt { path: log.clone(), source })?;
            // A kept view from another log (a session copied over) does not continue this one.
            if folded == 0 && kept.offset > 0 && Some(record.seq) != kept.seq.checked_add(1) {
                self.files.remove(VIEW).map_err(self.err())?;
                self.release_view();
                return self.folded();
            }
            kept.seq = record.seq;
            if matches!(record.entry, Entry::Compaction(_)) {
                compacted = true;
                kept.rewritten = record.seq;
            }
            if let Entry::Message(m) = &mut record.entry
                && let Some(spec) = m.reads.take()
            {
                let records = match &mut all {
                    Some(records) => records,
                    none => none.insert(self.records()?),
                };
                m.content = messages::read_result(records, &spec, record.seq).unwrap_or_else(|why| format!("error: {why}"));
                expanded = true;
            }
            kept.view.push(record);
            folded += 1;
        }
        kept.offset += tail.len() as u64;
        // Kept after a compaction (the view just shrank), after a read kept by reference was
        // read back (so the log is read whole once for it), and every so many records.
        if compacted || expanded || folded >= KEEP_VIEW_EVERY {
            // Derived data: a failed write only means the next reader folds more.
            let _ = self.write_json(VIEW, &kept);
        }
        if unheld {
            kept.rewritten = kept.seq;
        }
        Ok(kept)
    }

    /// Lets go of the view this handle keeps in memory: the next [`Session::view`] reads
    /// view.json's checkpoint again. For a server that keeps many sessions and bounds what it
    /// holds of them all.
    pub fn release_view(&self) {
        *self.kept.view.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// The message logged with sequence number `seq`, as it was first written, whatever
    /// compacted it since.
    pub fn original(&self, seq: u64) -> Result<Option<Message>> {
        Ok(self.records()?.into_iter().find(|r| r.seq == seq).and_then(|r| match r.entry {
            Entry::Message(m) => Some(m),
            Entry::Compaction(_) | Entry::Withdrawal(_) => None,
        }))
    }

    /// The number after `seq` in the log; a log whose last number is the largest there is
    /// (a record written by hand) takes no more entries, and says so rather than wrapping.
    fn after(&self, seq: u64) -> Result<u64> {
        seq.checked_add(1).ok_or_else(|| Error::Corrupt {
            path: self.path(MESSAGES),
            source: serde::de::Error::custom(format!("its last record's seq is {seq}, after which there is no number")),
        })
    }

    /// The sequence number the next entry of the log gets.
    pub fn next_seq(&self) -> Result<u64> {
        let mut file = self.files.open(MESSAGES, Access::Read).map_err(self.err())?;
        self.last_record::<LogRecord>(MESSAGES, &mut file)?.map_or(Ok(1), |r| self.after(r.seq))
    }

    /// The last whole record of log `name`, read through a handle the caller already holds.
    fn last_record<T: serde::de::DeserializeOwned>(&self, name: &str, file: &mut std::fs::File) -> Result<Option<T>> {
        let path = self.path(name);
        match fsio::last_line(file).map_err(Error::io(&path))? {
            Some(line) => Ok(Some(serde_json::from_slice(&line).map_err(|source| Error::Corrupt { path, source })?)),
            None => Ok(None),
        }
    }

    /// Appends one message to messages.jsonl, which is never rewritten, with the next
    /// sequence number (under the session's lock, so concurrent writers never share one).
    pub fn append_message(&self, message: Message) -> Result<LogRecord> {
        self.with_lock(|locked| self.append_with(locked, Entry::Message(message), None))
    }

    /// Appends a model's reply with what its request cost (see [`Usage`]).
    pub fn append_reply(&self, message: Message, usage: Usage) -> Result<LogRecord> {
        self.with_lock(|locked| self.append_with(locked, Entry::Message(message), Some(usage)))
    }

    /// Appends an entry under a lock the caller holds (a compaction is planned and logged
    /// under one lock, so no message slips in between).
    pub fn append(&self, locked: &Locked, entry: Entry) -> Result<LogRecord> {
        self.append_with(locked, entry, None)
    }

    /// Appends `messages` in one write under one lock, numbered in order, and does not wait
    /// for the disk: what a proxy's client sends before the model answers, which the client
    /// holds and sends again with its next request. The answer's append syncs the log, these
    /// records with it, before the client is answered; a sync of their own would add its
    /// time to every request before it went upstream.
    pub fn append_messages(&self, messages: Vec<Message>) -> Result<Vec<LogRecord>> {
        self.with_lock(|locked| self.append_all(locked, messages.into_iter().map(|m| (Entry::Message(m), None)).collect(), Durability::Deferred))
    }

    fn append_with(&self, locked: &Locked, entry: Entry, usage: Option<Usage>) -> Result<LogRecord> {
        let mut records = self.append_all(locked, vec![(entry, usage)], Durability::Synced)?;
        Ok(records.pop().expect("one record was appended"))
    }

    fn append_all(&self, _: &Locked, entries: Vec<(Entry, Option<Usage>)>, durability: Durability) -> Result<Vec<LogRecord>> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let path = self.path(MESSAGES);
        let mut file = self.files.open(MESSAGES, Access::Append).map_err(self.err())?;
        // A record a crash cut short was never written: the next starts a line of its own.
        fsio::truncate_partial_line(&mut file).map_err(Error::io(&path))?;
        let mut seq = self.last_record::<LogRecord>(MESSAGES, &mut file)?.map_or(Ok(1), |r| self.after(r.seq))?;
        let at = crate::now();
        let (mut records, mut lines) = (Vec::with_capacity(entries.len()), Vec::new());
        for (entry, usage) in entries {
            if !records.is_empty() {
                seq = self.after(seq)?;
            }
            let record = LogRecord { seq, at: at.clone(), entry, usage };
            serde_json::to_writer(&mut lines, &record).expect("a log record serializes");
            lines.push(b'\n');
            records.push(record);
        }
        match durability {
            Durability::Synced => fsio::append(&mut file, &lines),
            Durability::Deferred => fsio::append_unsynced(&mut file, &lines),
        }
        .map_err(Error::io(&path))?;
        Ok(records)
    }

    /// The update log, one JSON record per applied update, oldest first.
    pub fn log(&self) -> Result<Vec<serde_json::Value>> {
        self.read_jsonl(LOG)
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

    /// The sequence number of the update log's last record (0 when it has none).
    fn last_update_seq(&self) -> Result<u32> {
        let mut file = match self.files.open(LOG, Access::Read) {
            Err(e) if e.is_not_found() => return Ok(0),
            other => other.map_err(self.err())?,
        };
        Ok(self.last_record::<SeqOnly>(LOG, &mut file)?.map_or(0, |r| r.seq))
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

    fn finish_pending(&self) -> Result<()> {
        match self.pending()? {
            Some(commit) => self.finish(&commit),
            None => Ok(()),
        }
    }

    /// The steps of a commit, each safe to repeat.
    fn finish(&self, commit: &Commit) -> Result<()> {
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
