//! JSON strings written sixteen bytes at a time, for the update log's record: its text fields
//! (the update as applied, the diff) are most of what an apply writes, and serde_json escapes
//! a byte at a time, a loop turn per byte, each of which pays wasmtime's epoch check in a
//! component. The bytes are serde_json's own (a test holds them to `serde_json::to_string`).

use crate::scan::{CHUNK, any};
use std::fmt::Write;

/// Whether JSON escapes `b`: a control character, `"` or `\`.
fn escapes(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Whether `chunk` holds a byte JSON escapes: [`escapes`], a condition at a time ([`any`]).
fn needs_escape(chunk: &[u8; CHUNK]) -> bool {
    any(chunk, |b| b < 0x20) | any(chunk, |b| b == b'"') | any(chunk, |b| b == b'\\')
}

/// Where the first byte JSON escapes is in `bytes` from `i` on: eight bytes a turn, as a word
/// whose bytes are tested at once (a chunk that holds one would otherwise be read a byte a turn
/// up to it, an epoch check each in a component).
fn next_escape(bytes: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    // The high bit of each byte of `w` below `n`. A borrow can mark a byte above one that is
    // truly below, never one beneath it, so the lowest mark is exact.
    let below = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH;
    while let Some(word) = bytes.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let marks = below(w, 0x20) | below(w ^ (ONES * u64::from(b'"')), 1) | below(w ^ (ONES * u64::from(b'\\')), 1);
        if marks != 0 {
            return Some(i + marks.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    bytes[i..].iter().position(|&b| escapes(b)).map(|k| i + k)
}

/// Appends `s` as a JSON string.
pub fn string(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push('"');
    // Where the bytes not written yet begin: runs without escapes are copied whole.
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(chunk) = bytes.get(i..i + CHUNK)
            && !needs_escape(chunk.try_into().expect("a whole chunk"))
        {
            i += CHUNK;
            continue;
        }
        // A byte to escape is in this chunk (or in the tail past the last whole one).
        let Some(at) = next_escape(bytes, i) else {
            break;
        };
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
        i = at + 1;
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
