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

/// How often the watcher looks up from its wait to see whether the server is gone.
const TICK: Duration = Duration::from_secs(1);

/// Starts the watcher on `db`. Its value is bumped whenever a board changes; the watcher stops
/// once every receiver is dropped.
pub fn watch(db: &str, runtime: Runtime) -> Result<watch::Receiver<u64>, ApiError> {
    let (tx, rx) = watch::channel(0u64);
    let db = db.to_string();
    std::thread::Builder::new()
        .name("workmem-changes".into())
        .spawn(move || {
            let mut boards: Option<Boards> = None;
            while !tx.is_closed() {
                let woke = match boards.as_mut() {
                    Some(b) => b.wait_for_change(TICK),
                    // (Re)opened: what changed before it listened was not seen, so the waiters
                    // read once more.
                    None => listening(&db, &runtime).map(|b| {
                        boards = Some(b);
                        true
                    }),
                };
                match woke {
                    Ok(true) => wake(&tx),
                    Ok(false) => {}
                    // A lost connection is opened again; meanwhile the waiters read each tick.
                    Err(_) => {
                        boards = None;
                        wake(&tx);
                        std::thread::sleep(TICK);
                    }
                }
            }
        })
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("starting the change-feed watcher: {e}")))?;
    Ok(rx)
}

fn listening(db: &str, runtime: &Runtime) -> Result<Boards, board::Error> {
    let mut boards = Boards::open(db, runtime.clone(), board::Config::default())?;
    boards.listen()?;
    Ok(boards)
}

fn wake(tx: &watch::Sender<u64>) {
    tx.send_modify(|n| *n = n.wrapping_add(1));
}
