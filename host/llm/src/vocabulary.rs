//! The vocabularies of the two encodings counted with, built into the binary compact (see
//! build.rs) and made into tiktoken's `CoreBPE` on first use, once per process.

use rustc_hash::FxHashMap;
use std::sync::LazyLock;
use tiktoken_rs::{CoreBPE, Rank};

/// GPT-4o's, 4.1's, 5's and the o-series'.
pub(crate) fn o200k_base() -> &'static CoreBPE {
    static BPE: LazyLock<CoreBPE> = LazyLock::new(|| load(include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.deflate")), tiktoken_rs::O200K_BASE_PAT_STR));
    &BPE
}

/// GPT-4's and 3.5's.
pub(crate) fn cl100k_base() -> &'static CoreBPE {
    static BPE: LazyLock<CoreBPE> = LazyLock::new(|| load(include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.deflate")), CL100K_BASE_PATTERN));
    &BPE
}

/// cl100k_base's pre-tokenizer, as tiktoken-rs has it inside its `cl100k_base()`, which is
/// not public (o200k_base's is); the unit test below holds the two to the same counts.
const CL100K_BASE_PATTERN: &str =
    "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// A vocabulary from what the build script wrote: its special tokens, then its ordinary
/// tokens in rank order. The bytes are this build's own, so a malformed one is a bug.
fn load(deflated: &[u8], pattern: &str) -> CoreBPE {
    let stream = miniz_oxide::inflate::decompress_to_vec(deflated).expect("the build script's vocabulary inflates");
    let (&specials, mut rest) = stream.split_first().expect("a vocabulary");
    let mut special = FxHashMap::default();
    for _ in 0..specials {
        let (name, after) = rest[1..].split_at(usize::from(rest[0]));
        let (rank, after) = after.split_at(4);
        special.insert(String::from_utf8(name.to_vec()).expect("a special token's name is text"), Rank::from_le_bytes(rank.try_into().expect("four bytes")));
        rest = after;
    }
    let mut ordinary = FxHashMap::with_capacity_and_hasher(200_000, Default::default());
    let mut rank: Rank = 0;
    while let Some((&len, after)) = rest.split_first() {
        let (token, after) = after.split_at(usize::from(len));
        ordinary.insert(token.to_vec(), rank);
        rank += 1;
        rest = after;
    }
    CoreBPE::new(ordinary, special, pattern).expect("tiktoken takes the vocabulary it gave the build script")
}

#[cfg(test)]
mod tests {
    /// The vocabularies as embedded count what tiktoken-rs's own count, special tokens
    /// included, on text that exercises every branch of both pre-tokenizers.
    #[test]
    fn each_vocabulary_counts_as_tiktoken_rs_does() {
        let text = format!(
            "{}<|endoftext|> They'll SAY 12345 numbers\r\n\n   fn main() {{ println!(\"日本語 🙂\"); }}  \t\n<|endofprompt|>{}",
            include_str!("tokenizer.rs"),
            "ÀÉÎ naïve café — ok?!\n".repeat(50)
        );
        for (ours, theirs) in [(super::o200k_base(), tiktoken_rs::o200k_base_singleton()), (super::cl100k_base(), tiktoken_rs::cl100k_base_singleton())] {
            assert_eq!(ours.encode_with_special_tokens(&text), theirs.encode_with_special_tokens(&text));
            assert_eq!(ours.encode_ordinary(&text), theirs.encode_ordinary(&text));
        }
    }
}
