//! Entries' IDs (`KL-3`, `VC-12`): written, and gathered in a set for the checks of one
//! update, a list while it is short, a tree past that. Most updates archive a few entries, and
//! a tree compares through `Ord`, a `memcmp` call per step (and a loop turn per byte in a
//! component), where a scan of a few short IDs compares them whole ([`scan::equal`]). An update
//! of a million ARCHIVEs still costs a logarithm per lookup.

use crate::scan;
use std::collections::BTreeSet;

/// Past this many IDs, the tree.
const FEW: usize = 16;

pub enum Ids<'a> {
    Few(Vec<&'a str>),
    Many(BTreeSet<&'a str>),
}

impl<'a> Ids<'a> {
    pub fn new() -> Self {
        Ids::Few(Vec::new())
    }

    pub fn contains(&self, id: &str) -> bool {
        match self {
            Ids::Few(ids) => ids.iter().any(|i| scan::equal(i, id)),
            Ids::Many(ids) => ids.contains(id),
        }
    }

    /// Adds `id`; false if it was there already.
    pub fn insert(&mut self, id: &'a str) -> bool {
        match self {
            Ids::Many(ids) => ids.insert(id),
            Ids::Few(ids) if ids.iter().any(|i| scan::equal(i, id)) => false,
            Ids::Few(ids) if ids.len() < FEW => {
                ids.push(id);
                true
            }
            Ids::Few(ids) => {
                *self = Ids::Many(ids.iter().copied().chain([id]).collect());
                true
            }
        }
    }
}

/// An entry's ID: `KL-7`, `VC-12`.
pub fn id(prefix: &str, n: u32) -> String {
    let mut id = String::with_capacity(prefix.len() + 11);
    id.push_str(prefix);
    id.push('-');
    push_number(&mut id, n.into());
    id
}

/// Appends `n` in decimal. `format!` and `to_string` go through `fmt::write`, about a thousand
/// instructions a number in a component, and an apply writes one per ID it hands out.
pub fn push_number(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // A char at a time: `str::from_utf8` would check the digits again, a call and a loop.
    out.reserve(digits.len() - at);
    for &d in &digits[at..] {
        out.push(d as char);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        #[test]
        fn numbers_are_written_as_to_string_writes_them(n in any::<u64>(), small in 0u64..1000, id in any::<u32>()) {
            for n in [n, small, u64::MAX] {
                let mut out = "x".to_string();
                super::push_number(&mut out, n);
                prop_assert_eq!(out, format!("x{n}"));
            }
            prop_assert_eq!(super::id("KL", id), format!("KL-{id}"));
        }

        #[test]
        fn ids_are_a_set(ops in prop::collection::vec(("(KL|VC)-[0-9]{1,2}", any::<bool>()), 0..60)) {
            let (mut ids, mut set) = (super::Ids::new(), BTreeSet::new());
            for (id, insert) in &ops {
                if *insert {
                    prop_assert_eq!(ids.insert(id), set.insert(id.as_str()));
                } else {
                    prop_assert_eq!(ids.contains(id), set.contains(id.as_str()));
                }
            }
        }
    }
}
