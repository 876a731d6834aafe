//! Byte scans shaped for wasm SIMD. In a component, `==` on strings calls `memcmp`, which the
//! wasm target links a byte at a time, and every loop turn pays wasmtime's epoch check; these
//! go sixteen bytes a turn in vector instructions (SSE2 natively).

/// Bytes looked at in one turn.
pub const CHUNK: usize = 16;

/// Whether `test` holds for a byte of `chunk`. Every byte is tested, none skipped, which is the
/// shape LLVM makes a few vector instructions of; a `test` of one condition each (an `any` per
/// condition, joined by `|`), since one of several joined by `||` is not.
// Inlined into each caller, where `test` is known: called, it is a call per byte.
#[inline(always)]
pub fn any(chunk: &[u8; CHUNK], test: impl Fn(u8) -> bool) -> bool {
    chunk.iter().fold(false, |found, &b| found | test(b))
}

/// Whether `a` and `b` are the same text.
pub fn equal(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(CHUNK), b.chunks_exact(CHUNK));
    let differ = |x: &[u8], y: &[u8]| {
        let (x, y): (&[u8; CHUNK], &[u8; CHUNK]) = (x.try_into().expect("a whole chunk"), y.try_into().expect("a whole chunk"));
        x.iter().zip(y).fold(false, |differ, (p, q)| differ | (p != q))
    };
    !x.by_ref().zip(y.by_ref()).any(|(x, y)| differ(x, y)) && x.remainder() == y.remainder()
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
        let a = "x".repeat(40);
        for at in 0..40 {
            let mut b = a.clone().into_bytes();
            b[at] = b'y';
            assert!(!super::equal(&a, std::str::from_utf8(&b).unwrap()), "at {at}");
        }
    }
}
