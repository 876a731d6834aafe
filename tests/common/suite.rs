//! One suite of cases run against SQLite and a real PostgreSQL alike.

use super::postgres::Server;
use std::path::{Path, PathBuf};

/// Where a suite's case keeps its database: a fresh SQLite file or a fresh PostgreSQL
/// database, so one suite runs against both.
pub trait Target: Sync {
    fn fresh(&self, case: &str) -> String;
}

impl Target for Server {
    fn fresh(&self, case: &str) -> String {
        self.database(case)
    }
}

/// SQLite files in a directory of the test's own, removed when dropped.
pub struct SqliteFiles(PathBuf);

impl SqliteFiles {
    pub fn new(name: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        SqliteFiles(dir)
    }
}

impl Target for SqliteFiles {
    fn fresh(&self, case: &str) -> String {
        self.0.join(format!("{case}.sqlite3")).display().to_string()
    }
}

impl Drop for SqliteFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A suite's case: it asks the target for the databases it needs.
pub type Case = fn(&dyn Target);

/// Runs every case against `target`, naming each on stderr as it starts.
pub fn suite(target: &dyn Target, cases: &[(&str, Case)]) {
    for (name, case) in cases {
        eprintln!("case {name}");
        case(target);
    }
}
