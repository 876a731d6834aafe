//! The proxy's in-memory locks.

/// A lock whose holder panicked still guards consistent data here (every change is a push).
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
