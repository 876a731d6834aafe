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

/// Grants for any scope, in a database of their own handle: what the server authorizes
/// requests with, and what `workmem grant` writes.
pub struct Grants {
    db: Box<dyn Sql>,
}

impl Grants {
    pub fn open(target: &str) -> Result<Self> {
        Ok(Grants { db: super::connect(target)? })
    }

    /// A new token for `agent` and `scope`. A board must exist to be granted; a vault or a
    /// session need not (a vault comes to be with its first put).
    pub fn grant(&mut self, scope: Scope<'_>, agent: &str) -> Result<String> {
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
        sql::write(self.db.as_mut(), |db| {
            if let Scope::Board(id) = scope
                && db.query("SELECT 1 FROM boards WHERE id = $1", &[id.into()])?.is_empty()
            {
                return Err(Error::NoBoard(id.into()));
            }
            db.execute(
                "INSERT INTO grants (token_sha256, scope, agent) VALUES ($1, $2, $3)",
                &[digest(&token).as_str().into(), scope.key().as_str().into(), agent.into()],
            )
        })?;
        Ok(token)
    }

    /// The agent `token` was granted session `id` for, and that session as the grant names
    /// it; [`Error::Forbidden`] when it was granted none by that ID.
    pub fn authorize_session(&mut self, token: &str, id: &str) -> Result<(String, crate::GrantName)> {
        let rows = self.db.query("SELECT scope, agent FROM grants WHERE token_sha256 = $1 AND scope LIKE 'session:%'", &[digest(token).as_str().into()])?;
        for row in rows {
            let mut row = row.into_iter();
            let (scope, agent) = (row.next().unwrap_or(Value::Null).text()?, row.next().unwrap_or(Value::Null).text()?);
            // Grants from before sessions were named by directory (`session:ID`) parse as
            // none: they no longer open anything.
            if let Some(name) = scope.strip_prefix("session:").and_then(crate::GrantName::parse).filter(|n| n.id() == id) {
                return Ok((agent, name));
            }
        }
        Err(Error::Forbidden(Scope::Session(id).to_string()))
    }

    /// The agent `token` was granted `scope` for; [`Error::Forbidden`] when it was not.
    pub fn authorize(&mut self, token: &str, scope: Scope<'_>) -> Result<String> {
        let rows =
            self.db.query("SELECT agent FROM grants WHERE token_sha256 = $1 AND scope = $2", &[digest(token).as_str().into(), scope.key().as_str().into()])?;
        match rows.into_iter().next().and_then(|r| r.into_iter().next()) {
            Some(Value::Text(agent)) => Ok(agent),
            _ => Err(Error::Forbidden(scope.to_string())),
        }
    }
}
