//! The proxy's in-memory locks.

use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

/// A lock whose holder panicked still guards consistent data here (every change is a push).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// [`lock`], waiting at most `wait` for the holder; `None` past it. Tried again and again
/// (a std mutex has no timed wait), each pause longer up to 50 ms: what waits here is another
/// request of the same conversation, which holds it for a whole exchange.
pub(crate) fn lock_within<T>(m: &Mutex<T>, wait: Duration) -> Option<MutexGuard<'_, T>> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match m.try_lock() {
            Ok(guard) => return Some(guard),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) if started.elapsed() >= wait => return None,
            Err(TryLockError::WouldBlock) => {
                std::thread::sleep(pause.min(wait.saturating_sub(started.elapsed())));
                pause = (pause * 2).min(Duration::from_millis(50));
            }
        }
    }
}
