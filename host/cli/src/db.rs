//! `--db`: the one database that boards, documents and grants live in, taken the same way by
//! every command that needs it.

use anyhow::Result;

#[derive(clap::Args, Clone)]
pub struct DbArg {
    /// The database of boards, documents and grants: a SQLite file or a postgres:// URL (default: $WORKMEM_DB, else ~/.ai/workmem/boards.sqlite3)
    #[arg(long = "db", alias = "board-db", global = true, value_name = "PATH|URL")]
    db: Option<String>,
}

impl DbArg {
    /// The database named, else the embedded default.
    pub fn target(&self) -> Result<String> {
        Ok(match &self.db {
            Some(db) => db.clone(),
            None => workmem_store::db::default_db()?,
        })
    }
}
