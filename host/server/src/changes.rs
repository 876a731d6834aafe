//! Wake-ups for the change feed. A request waiting for a board's events holds no slot while
//! it waits: followers are many (every worker of a board), and with a slot each they would
//! take them all, and the very writes they wait for would queue behind them. Instead one
//! thread, with a database connection of its own, waits for a change to any board and wakes
//! every waiting request, which then takes a slot for the moment its read lasts.

use crate::error::ApiError;
use axum::http::StatusCode;
use std::time::Duration;
use tokio::sync::watch;
use workmem_runtime::Runtime;
use workmem_store::board::{self, Boards};

/// The longest the watcher waits before waking the waiting requests anyway (each then reads
/// once more): how late a change the database did not signal is seen, and how soon the
/// watcher stops once the server is gone.
const TICK: Duration = Duration::from_secs(1);

/// Starts the watcher on `db`. Its receiver changes whenever a board may have; the watcher
/// stops once every receiver is dropped.
pub fn watch(db: &str, runtime: Runtime) -> Result<watch::Receiver<u64>, ApiError> {
    let (tx, rx) = watch::channel(0u64);
    let db = db.to_string();
    std::thread::Builder::new()
        .name("workmem-changes".into())
        .spawn(move || {
            let mut boards: Option<Boards> = None;
            while !tx.is_closed() {
                let waited = match &mut boards {
                    Some(b) => b.wait_for_change(TICK),
                    None => Boards::open(&db, runtime.clone(), board::Config::default()).map(|b| boards = Some(b)),
                };
                // A lost connection is opened again; meanwhile the waiters poll each tick.
                if waited.is_err() {
                    boards = None;
                    std::thread::sleep(TICK);
                }
                tx.send_modify(|n| *n = n.wrapping_add(1));
            }
        })
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("starting the change-feed watcher: {e}")))?;
    Ok(rx)
}
