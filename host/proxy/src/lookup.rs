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
    /// The session that logged each answer a client may chain to, by
    /// [`history::answer`](crate::history::answer).
    pub(crate) answers: ItemMap<usize>,
}

#[derive(Default)]
pub(crate) struct Scope {
    /// The sessions filed under each key: (when filed, the session's place in [`Index`]).
    pub(crate) filed: ItemMap<BTreeSet<(u64, usize)>>,
    /// The session of this scope that was made last, which a new one branches from.
    pub(crate) last_made: Option<String>,
}

/// A filed key a request holds: how many sessions are filed under it, where it comes in the
/// request counted from the last item, and the key.
type Shelf = (usize, usize, u64);

impl Scope {
    /// The shelves of `history`'s items, from the keys filed.
    fn by_filed(&self, history: &History) -> Vec<Shelf> {
        self.filed.iter().filter_map(|(&k, set)| history.last_from_end(k).map(|from_end| (set.len(), from_end, k))).collect()
    }

    /// The same from its items, last first: an item it repeats is a shelf each time it comes.
    fn by_items(&self, history: &History) -> Vec<Shelf> {
        let keys = history.keys.iter().rev().flat_map(|k| k.iter().rev());
        keys.enumerate().filter_map(|(from_end, &k)| self.filed.get(&k).map(|set| (set.len(), from_end, k))).collect()
    }
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
        // Each filed key the request holds, where it comes last: found from the fewer of the
        // keys filed and the request's items (a client's 10,000-message history and its few
        // sessions, or a stranger's short request and the many sessions of its scope).
        let mut shelves = if scope.filed.len() < history.items() { scope.by_filed(history) } else { scope.by_items(history) };
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

#[cfg(test)]
mod tests {
    use super::*;
    use workmem_store::Message;

    /// Found from the keys filed or from the request's items, a request's shelves are the
    /// same once sorted and each key taken where it comes last, whichever are fewer: keys
    /// filed that it holds, holds twice or does not hold.
    #[test]
    fn shelves_from_the_keys_filed_are_those_from_the_items() {
        let texts = ["a", "b", "c", "a", "d", "b", "a"];
        let history = History::new(texts.iter().map(|t| Message::new("user", *t)).collect());
        let filed_as = |texts: &[&str]| {
            let mut lookup = Lookup::default();
            for (slot, t) in texts.iter().enumerate() {
                let key = crate::history::items(&Message::new("user", *t))[0];
                lookup.file(1, slot, &[], &[key]);
                lookup.file(1, slot + 100, &[], &[key]);
            }
            lookup
        };
        for filed in [&["a"][..], &["b", "z"], &["a", "b", "c", "d", "y", "z"], &["y"]] {
            let lookup = filed_as(filed);
            let scope = &lookup.scopes[&1];
            let last = |mut shelves: Vec<Shelf>| {
                shelves.sort_unstable();
                let mut tried = ItemSet::default();
                shelves.retain(|s| tried.insert(s.2));
                shelves
            };
            assert_eq!(last(scope.by_filed(&history)), last(scope.by_items(&history)), "filed under {filed:?}");
            assert_eq!(scope.by_filed(&history).len(), filed.iter().filter(|t| texts.contains(t)).count());
        }
    }
}
