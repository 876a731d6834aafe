//! Per-agent access: a token granted for a board, enforced here in the host. The database
//! keeps only the token's SHA-256, so reading it gives no one a token.

use super::sql::{self, Value};
use super::{Boards, Error, Result};
use sha2::{Digest, Sha256};

fn digest(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

impl Boards {
    /// A new token that lets `agent` read and write board `id`, and nothing else.
    pub fn grant(&mut self, id: &str, agent: &str) -> Result<String> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| Error::Db(e.to_string().into()))?;
        let token = format!("wmb_{}", secret.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let hash = digest(&token);
        sql::write(self.db.as_mut(), |db| {
            if db.query("SELECT 1 FROM boards WHERE id = $1", &[id.into()])?.is_empty() {
                return Err(Error::NoBoard(id.into()));
            }
            db.execute("INSERT INTO board_grants (token_sha256, board, agent) VALUES ($1, $2, $3)", &[hash.as_str().into(), id.into(), agent.into()])
        })?;
        Ok(token)
    }

    /// The agent `token` was granted board `id` for; [`Error::Forbidden`] when it was not.
    pub fn authorize(&mut self, token: &str, id: &str) -> Result<String> {
        let rows = self.db.query("SELECT agent FROM board_grants WHERE token_sha256 = $1 AND board = $2", &[digest(token).as_str().into(), id.into()])?;
        match rows.into_iter().next().and_then(|r| r.into_iter().next()) {
            Some(Value::Text(agent)) => Ok(agent),
            _ => Err(Error::Forbidden(id.into())),
        }
    }
}
