//! Byte scans shaped for wasm SIMD. In a component, `==` on strings calls `memcmp`, which the
//! wasm target links a byte at a time, and every loop turn pays wasmtime's epoch check; these
//! go sixteen bytes a turn in vector instructions (SSE2 natively).

/// Bytes looked at in one turn.
pub const CHUNK: usize = 16;

/// Whether `test` holds for a byte of `chunk` (a chunk, or several read in one turn). Every byte
/// is tested, none skipped, which is the shape LLVM makes a few vector instructions of; a `test`
/// of one condition each (an `any` per condition, joined by `|`), since one of several joined by
/// `||` is not.
// Inlined into each caller, where `test` is known: called, it is a call per byte.
#[inline(always)]
pub fn any<const N: usize>(chunk: &[u8; N], test: impl Fn(u8) -> bool) -> bool {
    chunk.iter().fold(false, |found, &b| found | test(b))
}

/// Whether `a` and `b` are the same text.
// Inlined: most texts compared (IDs, in a scan of the few an update archives) differ in their
// length or their last byte, which is then answered without a call.
#[inline(always)]
pub fn equal(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.last() == b.last() && same(a, b)
}

/// Whether `a` and `b`, of the same length, hold the same bytes.
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n < CHUNK {
        return equal_short(a, b);
    }
    let differ = |at: usize| {
        let (x, y): (&[u8; CHUNK], &[u8; CHUNK]) = (a[at..at + CHUNK].try_into().expect("a whole chunk"), b[at..at + CHUNK].try_into().expect("a whole chunk"));
        x.iter().zip(y).fold(false, |differ, (p, q)| differ | (p != q))
    };
    // The last chunk ends at the end, overlapping the one before, so no tail is left over.
    !(0..n).step_by(CHUNK).any(|at| differ(at.min(n - CHUNK)))
}

/// [`equal`] for two texts of the same length below [`CHUNK`], without a loop: a word from
/// each end, overlapping in the middle, covers every byte (IDs such as `KL-12` are compared
/// here, often, and `==` would call `memcmp`, a loop turn per byte in a component).
fn equal_short(a: &[u8], b: &[u8]) -> bool {
    // Arrays compare as integers of their size; slices would call `memcmp`.
    fn ends<const N: usize>(a: &[u8], b: &[u8]) -> bool {
        let word = |x: &[u8], at: usize| -> [u8; N] { x[at..at + N].try_into().expect("N bytes") };
        let last = a.len() - N;
        word(a, 0) == word(b, 0) && word(a, last) == word(b, last)
    }
    match a.len() {
        8.. => ends::<8>(a, b),
        4.. => ends::<4>(a, b),
        2.. => ends::<2>(a, b),
        _ => a.first() == b.first(),
    }
}

/// Whether two lists hold the same texts in the same order.
pub fn equal_lists(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
}

/// Whether `text` holds a line break. `memchr` scans a vector at a time, where `str::contains`
/// on a char goes a word at a time.
pub fn has_newline(text: &str) -> bool {
    memchr::memchr(b'\n', text.as_bytes()).is_some()
}

/// How many lines `str::lines` finds in `text`, by one `memchr` scan.
pub fn line_count(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn equal_is_eq(a in "[ab\n]{0,40}", b in "[ab\n]{0,40}") {
            prop_assert_eq!(super::equal(&a, &b), a == b);
            prop_assert!(super::equal(&a, &a.clone()));
            prop_assert_eq!(super::line_count(&a), a.lines().count());
        }
    }

    #[test]
    fn a_difference_anywhere_is_found() {
        for len in 0..40 {
            let a = "x".repeat(len);
            assert!(super::equal(&a, &a.clone()), "length {len}");
            for at in 0..len {
                let mut b = a.clone().into_bytes();
                b[at] = b'y';
                assert!(!super::equal(&a, std::str::from_utf8(&b).unwrap()), "length {len}, at {at}");
            }
        }
    }
}
