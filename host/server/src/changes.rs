//! Wake-ups for the change feed. A request waiting for a board's events holds no slot while
//! it waits: followers are many (every worker of a board), and with a slot each they would
//! take them all, and the very writes they wait for would queue behind them. Instead one
//! thread, with a database connection of its own, waits for a change to any board and wakes
//! the requests waiting on the boards that changed, each of which then takes a slot for the
//! moment its read lasts.

use crate::error::ApiError;
use axum::http::StatusCode;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
use tokio::sync::watch;
use workmem_runtime::Runtime;
use workmem_store::board::{self, Boards};

/// How often the watcher looks up from its wait to see whether the server is gone.
const TICK: Duration = Duration::from_secs(1);

/// A wake-up per board that someone waits on.
#[derive(Default)]
pub struct Changes {
    boards: Mutex<HashMap<String, watch::Sender<u64>>>,
}

impl Changes {
    /// Starts the watcher on `db`; it stops once the returned `Changes` is dropped.
    pub fn watch(db: &str, runtime: Runtime) -> Result<Arc<Changes>, ApiError> {
        let changes = Arc::new(Changes::default());
        let weak = Arc::downgrade(&changes);
        let db = db.to_string();
        std::thread::Builder::new()
            .name("workmem-changes".into())
            .spawn(move || watcher(&weak, &db, &runtime))
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("starting the change-feed watcher: {e}")))?;
        Ok(changes)
    }

    /// A receiver that sees a change whenever `board` changes. Take it before the first read,
    /// so a change during that read is not missed.
    pub fn subscribe(&self, board: &str) -> watch::Receiver<u64> {
        let mut boards = self.boards.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = boards.get(board) {
            return tx.subscribe();
        }
        // It is taken before the request is authorized, so the boards nobody waits on any
        // more go here too, not only at the next change: requests naming made-up boards
        // cannot grow the map on a quiet server.
        boards.retain(|_, tx| tx.receiver_count() > 0);
        let (tx, rx) = watch::channel(0);
        boards.insert(board.to_string(), tx);
        rx
    }

    /// Wakes the waiters of `which` boards, or of every board.
    fn wake(&self, which: Option<&BTreeSet<String>>) {
        let mut boards = self.boards.lock().unwrap_or_else(PoisonError::into_inner);
        // Boards nobody waits on any more are forgotten.
        boards.retain(|_, tx| tx.receiver_count() > 0);
        let bump = |tx: &watch::Sender<u64>| tx.send_modify(|n| *n = n.wrapping_add(1));
        match which {
            Some(changed) => changed.iter().filter_map(|b| boards.get(b)).for_each(bump),
            None => boards.values().for_each(bump),
        }
    }
}

fn watcher(changes: &Weak<Changes>, db: &str, runtime: &Runtime) {
    let mut boards: Option<Boards> = None;
    while let Some(changes) = changes.upgrade() {
        let changed = match boards.as_mut() {
            Some(b) => b.wait_for_change(TICK).map(Some),
            // (Re)opened: what changed before it listened was not seen, so every waiter reads
            // once more.
            None => listening(db, runtime).map(|b| {
                boards = Some(b);
                None
            }),
        };
        match changed {
            Ok(Some(changed)) if changed.is_empty() => {}
            Ok(changed) => changes.wake(changed.as_ref()),
            // A lost connection is opened again; meanwhile every waiter reads each tick.
            Err(_) => {
                boards = None;
                changes.wake(None);
                drop(changes);
                std::thread::sleep(TICK);
            }
        }
    }
}

fn listening(db: &str, runtime: &Runtime) -> Result<Boards, board::Error> {
    let mut boards = Boards::open(db, runtime.clone(), board::Config::default())?;
    boards.listen()?;
    Ok(boards)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_only_the_changed_boards_waiters() {
        let changes = Changes::default();
        let (mut a, b) = (changes.subscribe("a"), changes.subscribe("b"));
        changes.wake(Some(&BTreeSet::from(["a".to_string(), "c".to_string()])));
        assert!(a.has_changed().unwrap(), "a changed: its waiter wakes");
        assert!(!b.has_changed().unwrap(), "b did not change: its waiter sleeps on");
        a.borrow_and_update();
        changes.wake(None);
        assert!(a.has_changed().unwrap() && b.has_changed().unwrap(), "a change nobody could name wakes everyone");
        drop(a);
        changes.wake(None);
        assert_eq!(changes.boards.lock().unwrap().keys().collect::<Vec<_>>(), ["b"], "a board nobody waits on is forgotten");
        for made_up in 0..100 {
            drop(changes.subscribe(&made_up.to_string()));
        }
        assert_eq!(changes.boards.lock().unwrap().len(), 2, "waits that ended leave one board behind at most");
    }
}
