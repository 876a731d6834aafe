//! The two vocabularies the token counts use (o200k_base, cl100k_base), written as the crate
//! embeds them (src/vocabulary.rs): each token's bytes in rank order, deflated. tiktoken-rs
//! embeds them as base64 text (5.3 MB of the binary); this form is 1.5 MB. They are read back
//! from tiktoken-rs itself, so they are its vocabularies exactly.

use std::path::PathBuf;
use tiktoken_rs::CoreBPE;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    for (name, bpe) in [("o200k_base", tiktoken_rs::o200k_base()), ("cl100k_base", tiktoken_rs::cl100k_base())] {
        let bpe = bpe.unwrap_or_else(|e| panic!("tiktoken-rs's {name}: {e}"));
        std::fs::write(out.join(format!("{name}.deflate")), miniz_oxide::deflate::compress_to_vec(&stream(&bpe), 10))
            .unwrap_or_else(|e| panic!("writing {name}: {e}"));
    }
}

/// The special tokens (how many; then each one's name's length, its name and its rank, u32
/// little-endian), then the ordinary tokens from rank 0 on, each its length (one byte) and its
/// bytes. tiktoken's ordinary ranks run from 0 with no gap (checked), so a rank is its place.
fn stream(bpe: &CoreBPE) -> Vec<u8> {
    let mut specials: Vec<(&str, u32)> = bpe.special_tokens().into_iter().map(|s| (s, bpe.encode_with_special_tokens(s)[0])).collect();
    specials.sort_unstable_by_key(|&(_, rank)| rank);
    let mut out = vec![u8::try_from(specials.len()).expect("a few special tokens")];
    for (name, rank) in &specials {
        out.push(u8::try_from(name.len()).expect("a short name"));
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&rank.to_le_bytes());
    }
    let first_special = specials.first().map_or(u32::MAX, |s| s.1);
    let mut rank = 0;
    while let Ok(token) = bpe.decode_bytes(&[rank]) {
        assert!(rank < first_special, "an ordinary rank at or past the first special token's");
        out.push(u8::try_from(token.len()).expect("no token is longer than 255 bytes"));
        out.extend_from_slice(&token);
        rank += 1;
    }
    assert!((rank + 1..first_special).all(|r| bpe.decode_bytes(&[r]).is_err()), "the ordinary ranks have a gap at {rank}");
    out
}
