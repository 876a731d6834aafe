//! Where sessions are filed for the search (see `sessions`): under the last items of their
//! views, so that a request is tried against those filed under its own items alone.

use crate::history::{History, ItemMap, ItemSet};
use std::collections::BTreeSet;

/// The most sessions one request is tried against.
pub(crate) const CANDIDATES: usize = 16;

/// Where the sessions are filed for the search: per scope ([`history::scope`]), each session
/// under the keys its view gives ([`Seen::file_keys`]), the most recently filed last.
#[derive(Default)]
pub(crate) struct Lookup {
    /// Counts filings, so that each has its place in time.
    pub(crate) clock: u64,
    pub(crate) scopes: ItemMap<Scope>,
}

#[derive(Default)]
pub(crate) struct Scope {
    /// The sessions filed under each key: (when filed, the session's place in [`Index`]).
    pub(crate) filed: ItemMap<BTreeSet<(u64, usize)>>,
    /// The session of this scope that was made last, which a new one branches from.
    pub(crate) last_made: Option<String>,
}

impl Lookup {
    /// Files the session at `slot` of `scope` under `keys`, out of where it was (`was`): where
    /// it now is.
    pub(crate) fn file(&mut self, scope: u64, slot: usize, was: &[(u64, u64)], keys: &[u64]) -> Vec<(u64, u64)> {
        let shelf = &mut self.scopes.entry(scope).or_default().filed;
        for (old, when) in was {
            if let Some(set) = shelf.get_mut(old) {
                set.remove(&(*when, slot));
                if set.is_empty() {
                    shelf.remove(old);
                }
            }
        }
        self.clock += 1;
        let when = self.clock;
        for &key in keys {
            shelf.entry(key).or_default().insert((when, slot));
        }
        keys.iter().map(|&key| (key, when)).collect()
    }

    /// The sessions of `scope` a request with `history` might extend: those filed under its
    /// items, at most [`CANDIDATES`], those under its rarest items first (the last of them
    /// first where as rare), each item's most recently filed first; and the session made last
    /// in the scope.
    pub(crate) fn candidates(&self, scope: u64, history: &History) -> (Vec<usize>, Option<String>) {
        let Some(scope) = self.scopes.get(&scope) else { return (Vec::new(), None) };
        let keys = history.keys.iter().rev().flat_map(|k| k.iter().rev());
        let mut shelves: Vec<(usize, usize, u64)> =
            keys.enumerate().filter_map(|(from_end, &k)| scope.filed.get(&k).map(|set| (set.len(), from_end, k))).collect();
        shelves.sort_unstable();
        // An item the request repeats is tried once, where it comes last.
        let mut tried = ItemSet::default();
        let shelves = shelves.into_iter().filter(|&(_, _, k)| tried.insert(k)).filter_map(|(_, _, k)| scope.filed.get(&k));
        let mut slots = Vec::new();
        for set in shelves {
            for &(_, slot) in set.iter().rev() {
                if !slots.contains(&slot) {
                    slots.push(slot);
                }
                if slots.len() == CANDIDATES {
                    return (slots, scope.last_made.clone());
                }
            }
        }
        (slots, scope.last_made.clone())
    }
}
