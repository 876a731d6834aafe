//! What the proxy keeps of its sessions in memory between requests, bounded in total. A
//! session's next request is cheaper for it (the last body upstream to write on from, the
//! store's view, the texts already counted), but every client that ever came keeps a session,
//! and their histories together could fill the machine's memory.

use crate::locks::lock;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// Something that keeps what it was given in memory until it is told to let go of it.
pub(crate) trait Cools {
    /// Lets go of what it keeps; nothing is lost but speed. One busy with a request may keep it.
    fn cool(&self);
}

/// The sessions that keep something in memory, the least recently used first, with what each
/// keeps: past `max_bytes` in all, the least recently used let go of theirs.
pub(crate) struct Warm<T> {
    max_bytes: usize,
    held: Mutex<Held<T>>,
}

/// Each session by when it was last used, and when that was by session (its address, which
/// stays its own while it is held here); each use costs a look-up, not a pass over them all
/// (threat model rule 5: anyone who reaches the proxy can start sessions).
struct Held<T> {
    by_use: BTreeMap<u64, (Arc<T>, usize)>,
    used_at: HashMap<usize, u64>,
    clock: u64,
    total: usize,
}

impl<T: Cools> Warm<T> {
    pub fn new(max_bytes: usize) -> Self {
        Warm { max_bytes, held: Mutex::new(Held { by_use: BTreeMap::new(), used_at: HashMap::new(), clock: 0, total: 0 }) }
    }

    /// `this` was just used and keeps about `bytes`. The one just used is never told to let
    /// go, even alone past the bound: its next request would only build it all again.
    pub fn keep(&self, this: &Arc<T>, bytes: usize) {
        let address = |t: &Arc<T>| Arc::as_ptr(t) as usize;
        let mut cooled = Vec::new();
        {
            let held = &mut *lock(&self.held);
            if let Some((_, b)) = held.used_at.remove(&address(this)).and_then(|at| held.by_use.remove(&at)) {
                held.total -= b;
            }
            held.clock += 1;
            held.by_use.insert(held.clock, (this.clone(), bytes));
            held.used_at.insert(address(this), held.clock);
            held.total += bytes;
            while held.total > self.max_bytes && held.by_use.len() > 1 {
                let (_, (t, b)) = held.by_use.pop_first().expect("more than one held");
                held.used_at.remove(&address(&t));
                held.total -= b;
                cooled.push(t);
            }
        }
        // Outside the list's lock: letting go waits for nothing, but takes each one's own.
        cooled.iter().for_each(|t| t.cool());
    }

    /// What is held now, by all of them.
    #[cfg(test)]
    fn total(&self) -> usize {
        lock(&self.held).total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Default)]
    struct Session(AtomicUsize);

    impl Cools for Session {
        fn cool(&self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn cooled(s: &Session) -> usize {
        s.0.load(Ordering::Relaxed)
    }

    /// Past the bound the least recently used let go first; a session used again moves to
    /// the end and counts once, with what it keeps now; the one just used stays warm alone.
    #[test]
    fn the_least_recently_used_let_go_past_the_bound() {
        let warm = Warm::new(100);
        let (a, b, c) = (Arc::new(Session::default()), Arc::new(Session::default()), Arc::new(Session::default()));
        warm.keep(&a, 40);
        warm.keep(&b, 40);
        warm.keep(&a, 50);
        assert_eq!((warm.total(), cooled(&a), cooled(&b)), (90, 0, 0));
        warm.keep(&c, 30);
        assert_eq!((cooled(&a), cooled(&b), cooled(&c)), (0, 1, 0), "b was used least recently");
        assert_eq!(warm.total(), 80);
        warm.keep(&b, 500);
        assert_eq!((cooled(&a), cooled(&b), cooled(&c)), (1, 1, 1), "all but the one just used let go");
        assert_eq!(warm.total(), 500);
    }
}
