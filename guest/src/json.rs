//! JSON strings written sixteen bytes at a time, for the update log's record: its text fields
//! (the update as applied, the diff) are most of what an apply writes, and serde_json escapes
//! a byte at a time, a loop turn per byte, each of which pays wasmtime's epoch check in a
//! component. The bytes are serde_json's own (a test holds them to `serde_json::to_string`).

use crate::scan::CHUNK;
use std::fmt::Write;

/// Whether JSON escapes `b`: a control character, `"` or `\`.
fn escapes(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The bytes of `chunk` that JSON escapes ([`escapes`]), bit `k` for byte `k`: three vector
/// compares and a mask, so that a chunk is read once and its escapes are found from the mask
/// (LLVM makes no mask of the portable form below, and reading the chunk again to find them
/// was a loop turn per byte or word, with an epoch check each in a component).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[allow(unsafe_code)]
fn escape_marks(chunk: &[u8; CHUNK]) -> u32 {
    use std::arch::wasm32::*;
    // SAFETY: `chunk` is sixteen bytes to read, and `v128_load` needs no alignment.
    let v = unsafe { v128_load(chunk.as_ptr().cast()) };
    let hits = v128_or(v128_or(u8x16_lt(v, u8x16_splat(0x20)), u8x16_eq(v, u8x16_splat(b'"'))), u8x16_eq(v, u8x16_splat(b'\\')));
    u32::from(u8x16_bitmask(hits))
}

/// [`escape_marks`] in SSE2, which every x86-64 has: the native build the component is measured
/// against does the same work the same way.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn escape_marks(chunk: &[u8; CHUNK]) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: `chunk` is sixteen bytes to read, and `_mm_loadu_si128` needs no alignment; the
    // rest is SSE2, part of every x86-64.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        // Unsigned `v <= 0x1f`: SSE2 compares bytes as signed only.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(control, quote), backslash)) as u32
    }
}

/// [`escape_marks`] a byte at a time, elsewhere.
#[cfg(not(any(all(target_arch = "wasm32", target_feature = "simd128"), target_arch = "x86_64")))]
fn escape_marks(chunk: &[u8; CHUNK]) -> u32 {
    chunk.iter().enumerate().fold(0, |marks, (k, &b)| marks | (u32::from(escapes(b)) << k))
}

/// Appends `s` as a JSON string.
pub fn string(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push('"');
    // Where the bytes not written yet begin: runs without escapes are copied whole.
    let mut run = 0;
    let mut escape = |out: &mut String, at: usize| {
        out.push_str(&s[run..at]);
        match bytes[at] {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            b => write!(out, "\\u{b:04x}").expect("writing to a String"),
        }
        run = at + 1;
    };
    let chunks = bytes.chunks_exact(CHUNK);
    let tail = chunks.remainder();
    for (n, chunk) in chunks.enumerate() {
        let mut marks = escape_marks(chunk.try_into().expect("a whole chunk"));
        while marks != 0 {
            escape(out, n * CHUNK + marks.trailing_zeros() as usize);
            marks &= marks - 1;
        }
    }
    let tail_at = bytes.len() - tail.len();
    for (k, &b) in tail.iter().enumerate() {
        if escapes(b) {
            escape(out, tail_at + k);
        }
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// Appends `items` as a JSON array of strings.
pub fn strings(out: &mut String, items: &[String]) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(out, item);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn strings_are_written_as_serde_json_writes_them(text in "(\\PC|[\\x00-\\x1f\\x7f\"\\\\]|\u{80}|é|\u{2028}){0,40}") {
            let mut out = String::new();
            super::string(&mut out, &text);
            prop_assert_eq!(out, serde_json::to_string(&text).unwrap());
        }
    }

    #[test]
    fn every_byte_below_0x80_is_written_as_serde_json_writes_it() {
        // Each at every offset of two chunks and of the tail past them.
        for b in 0u8..0x80 {
            for at in 0..36 {
                let mut text = "x".repeat(35);
                text.insert(at, char::from(b));
                let mut out = String::new();
                super::strings(&mut out, &[text.clone(), text.clone()]);
                assert_eq!(out, serde_json::to_string(&[&text, &text]).unwrap(), "byte {b:#04x} at {at}");
            }
        }
    }
}
