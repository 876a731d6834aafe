//! Bearer tokens, each granted to one agent for one scope (a board, a vault of context
//! documents, a session) and enforced by the host. The database keeps only a token's
//! SHA-256, so reading it gives no one a token.

use super::sql::{self, Sql, Value};
use super::{Error, Result};
use sha2::{Digest, Sha256};

/// What a token opens: one board, one vault, or one session, and nothing else. A session
/// is named as [`crate::GrantName`] writes it (its folder, ID and identity), never by ID alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    Board(&'a str),
    Vault(&'a str),
    Session(&'a str),
}

impl Scope<'_> {
    /// The scope as the grants table keeps it: `board:ID`, `vault:ID`, `session:ID`.
    fn key(&self) -> String {
        match self {
            Scope::Board(id) => format!("board:{id}"),
            Scope::Vault(id) => format!("vault:{id}"),
            Scope::Session(id) => format!("session:{id}"),
        }
    }
}

impl std::fmt::Display for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::Board(id) => write!(f, "board {id}"),
            Scope::Vault(id) => write!(f, "vault {id}"),
            Scope::Session(id) => write!(f, "session {id}"),
        }
    }
}

fn digest(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Deletes every grant of `scope` (the board or vault is gone).
pub(crate) fn revoke_all(db: &mut dyn Sql, scope: Scope<'_>) -> Result<u64> {
    db.execute("DELETE FROM grants WHERE scope = $1", &[scope.key().as_str().into()])
}

/// How a grant is limited.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantOptions {
    /// When the token stops opening anything (RFC 3339, UTC); never when `None`.
    pub expires_at: Option<String>,
    /// The token reads its scope and writes nothing (what a page needs).
    pub read_only: bool,
}

/// A grant as [`Grants::list`] shows it: never the token, only its ID.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GrantInfo {
    /// The first 16 hex digits of the token's SHA-256: what [`Grants::revoke`] takes.
    pub id: String,
    /// `board:ID`, `vault:ID` or `session:<folder>/<id>#<uid>`.
    pub scope: String,
    pub agent: String,
    /// When it was granted (empty for grants from before this was kept).
    pub created_at: String,
    pub expires_at: Option<String>,
    pub read_only: bool,
}

/// A newly granted token and its grant's ID.
#[derive(Debug, Clone)]
pub struct Granted {
    pub token: String,
    pub id: String,
}

/// What a request wants of its scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// Grants for any scope, in a database of their own handle: what the server authorizes
/// requests with, and what `workmem grant` writes.
pub struct Grants {
    db: Box<dyn Sql>,
}

impl Grants {
    /// Whether its database connection still answers ([`Sql::healthy`](crate::db::sql::Sql::healthy)).
    pub fn healthy(&mut self) -> bool {
        self.db.healthy()
    }

    pub fn open(target: &str) -> Result<Self> {
        Ok(Grants { db: super::connect(target)? })
    }

    /// A new token for `agent` and `scope`, limited as `options` says. A board must exist to
    /// be granted; a vault or a session need not (a vault comes to be with its first put).
    pub fn grant(&mut self, scope: Scope<'_>, agent: &str, options: &GrantOptions) -> Result<Granted> {
        crate::ids::check("agent", agent).map_err(Error::InvalidId)?;
        match scope {
            Scope::Board(id) => crate::ids::check("board", id),
            Scope::Vault(id) => crate::ids::check("vault", id),
            Scope::Session(_) => Ok(()),
        }
        .map_err(Error::InvalidId)?;
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| Error::Db(e.to_string().into()))?;
        let token = format!("wm_{}", secret.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let digest = digest(&token);
        let now = crate::now();
        sql::write(self.db.as_mut(), |db| {
            if let Scope::Board(id) = scope
                && db.query("SELECT 1 FROM boards WHERE id = $1", &[id.into()])?.is_empty()
            {
                return Err(Error::NoBoard(id.into()));
            }
            db.execute(
                "INSERT INTO grants (token_sha256, scope, agent, created_at, expires_at, read_only) VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    digest.as_str().into(),
                    scope.key().as_str().into(),
                    agent.into(),
                    now.as_str().into(),
                    options.expires_at.as_deref().into(),
                    i64::from(options.read_only).into(),
                ],
            )
        })?;
        Ok(Granted { id: digest[..16].to_string(), token })
    }

    /// The agent `token` was granted `scope` for, to read it; [`Error::Forbidden`] when it
    /// was not, or the grant has expired.
    pub fn authorize(&mut self, token: &str, scope: Scope<'_>) -> Result<String> {
        self.authorize_for(token, scope, Access::Read)
    }

    /// [`Grants::authorize`] for a write: a read-only grant is [`Error::ReadOnly`].
    pub fn authorize_write(&mut self, token: &str, scope: Scope<'_>) -> Result<String> {
        self.authorize_for(token, scope, Access::Write)
    }

    fn authorize_for(&mut self, token: &str, scope: Scope<'_>, access: Access) -> Result<String> {
        let rows = self.db.query(
            "SELECT agent, expires_at, read_only FROM grants WHERE token_sha256 = $1 AND scope = $2",
            &[digest(token).as_str().into(), scope.key().as_str().into()],
        )?;
        match rows.into_iter().next() {
            Some(row) => checked(row, scope, access),
            None => Err(Error::Forbidden(scope.to_string())),
        }
    }

    /// The agent `token` was granted session `id` for, and that session as the grant names
    /// it; [`Error::Forbidden`] when it was granted none by that ID (or the grant expired),
    /// [`Error::ReadOnly`] for a write with a read-only grant.
    pub fn authorize_session(&mut self, token: &str, id: &str, access: Access) -> Result<(String, crate::GrantName)> {
        let rows = self.db.query(
            "SELECT agent, expires_at, read_only, scope FROM grants WHERE token_sha256 = $1 AND scope LIKE 'session:%'",
            &[digest(token).as_str().into()],
        )?;
        for mut row in rows {
            let scope = row.pop().unwrap_or(Value::Null).text()?;
            // Grants from before sessions were named by directory (`session:ID`) parse as
            // none: they no longer open anything.
            if let Some(name) = scope.strip_prefix("session:").and_then(crate::GrantName::parse).filter(|n| n.id() == id) {
                return Ok((checked(row, Scope::Session(id), access)?, name));
            }
        }
        Err(Error::Forbidden(Scope::Session(id).to_string()))
    }

    /// Every grant, oldest first.
    pub fn list(&mut self) -> Result<Vec<GrantInfo>> {
        let rows = self.db.query("SELECT token_sha256, scope, agent, created_at, expires_at, read_only FROM grants ORDER BY created_at, scope", &[])?;
        rows.into_iter()
            .map(|row| {
                let mut r = row.into_iter();
                let mut next = || r.next().unwrap_or(Value::Null);
                Ok(GrantInfo {
                    id: next().text()?.chars().take(16).collect(),
                    scope: next().text()?,
                    agent: next().text()?,
                    created_at: next().opt_text()?.unwrap_or_default(),
                    expires_at: next().opt_text()?,
                    read_only: next().int()? != 0,
                })
            })
            .collect()
    }

    /// Deletes the grant (or grants: one token may hold several) whose ID is `id`; how many
    /// went. An ID is 16 hex digits, as [`Grants::list`] shows it.
    pub fn revoke(&mut self, id: &str) -> Result<u64> {
        if id.len() != 16 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::InvalidId(format!("the grant ID {id:?} is refused: a grant ID is 16 hex digits, as `workmem token list` shows")));
        }
        let id = id.to_ascii_lowercase();
        sql::write(self.db.as_mut(), |db| db.execute("DELETE FROM grants WHERE substr(token_sha256, 1, 16) = $1", &[id.as_str().into()]))
    }
}

/// A grant's agent, if it is in force and allows `access`.
fn checked(row: Vec<Value>, scope: Scope<'_>, access: Access) -> Result<String> {
    let mut r = row.into_iter();
    let mut next = || r.next().unwrap_or(Value::Null);
    let (agent, expires_at, read_only) = (next().text()?, next().opt_text()?, next().int()? != 0);
    if let Some(at) = expires_at.filter(|at| at.as_str() <= crate::now().as_str()) {
        return Err(Error::Expired { scope: scope.to_string(), at });
    }
    if read_only && access == Access::Write {
        return Err(Error::ReadOnly(scope.to_string()));
    }
    Ok(agent)
}
