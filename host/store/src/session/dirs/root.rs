//! The sessions root: where sessions are filed by working directory, made, listed and found,
//! and the names their grants go by.

use super::{LOCK, LOG, MESSAGES, META, OVERVIEW, SessionDir};
use crate::GrantName;
use crate::confine::Confined;
use crate::error::{Error, Result};
use crate::passed::Passed;
use crate::session::store::{ProxyState, SessionGrants, SessionStore, StoredSession};
use crate::session::{FRESH_ID_DRAWS, Meta, Session, checked_id, new_id, random_uid};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Overrides the sessions root (default `~/.ai/sessions`).
pub const ROOT_ENV: &str = "WORKMEM_SESSIONS_DIR";

/// The session directories of one working directory, `<root>/--<cwd>--/`: the first
/// [`SessionStore`].
#[derive(Debug, Clone)]
pub struct SessionDirs {
    root: PathBuf,
    dir: PathBuf,
    cwd: PathBuf,
}

impl SessionDirs {
    pub fn new(root: &Path, cwd: &Path) -> Self {
        SessionDirs { root: root.to_path_buf(), dir: root.join(encode_cwd(cwd)), cwd: cwd.to_path_buf() }
    }

    /// This working directory's sessions, as directories.
    fn listed(&self) -> Result<Vec<(SessionDir, Meta)>> {
        let mut out = Vec::new();
        for path in entries(&self.dir)? {
            if let Ok(session) = SessionDir::open(&path) {
                let meta = session.meta()?;
                out.push((session, meta));
            }
        }
        Ok(oldest_first(out))
    }

    /// The sessions of every working directory, as directories.
    fn all_listed(&self) -> Result<Vec<(SessionDir, Meta)>> {
        let mut out = Vec::new();
        for dir in entries(&self.root)? {
            if dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("--") && n.ends_with("--")) {
                out.extend(SessionDirs { root: self.root.clone(), dir, cwd: self.cwd.clone() }.listed()?);
            }
        }
        Ok(oldest_first(out))
    }
}

/// What `dir` holds: nothing where it is not there yet (no session was made under it).
fn entries(dir: &Path) -> Result<Vec<PathBuf>> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(entries.flatten().map(|e| e.path()).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io(dir)(e)),
    }
}

fn oldest_first(mut sessions: Vec<(SessionDir, Meta)>) -> Vec<(SessionDir, Meta)> {
    sessions.sort_by(|a, b| (&a.1.created_at, &a.1.id).cmp(&(&b.1.created_at, &b.1.id)));
    sessions
}

fn handle(session: SessionDir) -> Session {
    Session::new(Arc::new(session))
}

fn handles(listed: Vec<(SessionDir, Meta)>) -> Vec<(Session, Meta)> {
    listed.into_iter().map(|(s, m)| (handle(s), m)).collect()
}

impl SessionStore for SessionDirs {
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn create(&self, id: Option<&str>, overview: &str) -> Result<Session> {
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
        let session = SessionDir::at(&dir);
        for sub in ["working-memory/detail", "working-memory/archive"] {
            session.files().create_dir_all(sub).map_err(session.err())?;
        }
        session.write(OVERVIEW, overview.as_bytes())?;
        session.write(MESSAGES, b"")?;
        session.write(LOG, b"")?;
        session.write(LOCK, b"")?;
        let meta = Meta::new(id, &self.cwd, overview)?;
        // meta.json last: its marker makes the directory a session.
        session.write_json(META, &meta)?;
        Ok(handle(session))
    }

    fn list(&self) -> Result<Vec<(Session, Meta)>> {
        self.listed().map(handles)
    }

    /// An ID in several directories is [`Error::Ambiguous`].
    fn resolve(&self, spec: &str) -> Result<Session> {
        if spec.contains(std::path::MAIN_SEPARATOR) || spec == "." || spec == ".." {
            return Session::open(Path::new(spec));
        }
        self.find(spec)
    }

    fn find(&self, id: &str) -> Result<Session> {
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
        let mut found: Vec<PathBuf> =
            self.all_listed()?.into_iter().map(|(s, _)| s.dir().to_path_buf()).filter(|d| d.file_name().is_some_and(|n| n == id)).collect();
        match found.len() {
            0 if !here.exists() => Err(Error::NoSuchSession { id: id.to_string(), cwd: self.cwd.clone() }),
            0 => Session::open(&here),
            1 => Session::open(&found.remove(0)),
            _ => Err(Error::Ambiguous { id: id.to_string(), dirs: found }),
        }
    }

    fn all(&self) -> Result<Vec<(Session, Meta)>> {
        self.all_listed().map(handles)
    }
}

/// A grant names a session directory beneath the sessions root by its working directory's
/// folder, its ID and its uid.
impl SessionGrants for SessionDirs {
    fn grant_name(&self, session: &Session) -> Result<GrantName> {
        GrantName::of(session)
    }

    /// Beneath the root by handle: neither the project's folder nor the session's may be a
    /// symlink (to elsewhere, or swapped in while the session is used).
    fn open_granted(&self, name: &GrantName) -> Result<Session> {
        let dir = self.root.join(name.folder()).join(name.id());
        let files = Confined::new(&self.root)
            .subdir(&format!("{}/{}", name.folder(), name.id()))
            .map_err(|source| Error::NotASession { dir: dir.clone(), why: source.to_string() })?;
        let session = handle(SessionDir::open_in(files, dir.clone())?);
        if GrantName::of(&session)? != *name {
            return Err(Error::NotASession { dir, why: "it is a newer session with the granted one's ID".into() });
        }
        Ok(session)
    }
}

/// The proxy's secret and counts are files beside the working directory's sessions.
impl ProxyState for SessionDirs {
    /// Kept in a file of that name beside the sessions, read beneath the directory's handle
    /// like every file of the store's.
    fn secret(&self, name: &str) -> Result<String> {
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

    fn passed(&self) -> Result<Passed> {
        crate::passed::read(&self.dir)
    }

    fn write_passed(&self, passed: &Passed) -> Result<()> {
        crate::passed::write(&self.dir, passed)
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
