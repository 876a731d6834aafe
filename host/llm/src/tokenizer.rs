//! Exact token counts with the model's own encoding (tiktoken's tables).

use tiktoken_rs::tokenizer::{Tokenizer as Encoding, get_tokenizer};

/// What a tool call costs beside its name and arguments: the call's own framing, and the
/// function's name that the provider shows its result under, which a `tool` message's role
/// does not count. Recorded usage (tests/data/provider-usage) charged 25 tokens for a call
/// and its result where 3 of framing counted 20 and 21; 8 counts 25 and 26.
const CALL_FRAMING: u32 = 8;

/// The longest piece of text tokenized at once (see [`Tokenizer::count`]).
const PIECE: usize = 16 << 10;

/// The longest text remembered by its shape (see [`Tokenizer::count_remembered`]): longer ones
/// are kept as they are, not copied to find their shape.
const SHAPED: usize = 512;

/// The model's own tokenizer: o200k_base for the GPT-4o, 4.1, 5 and o-series models,
/// cl100k_base for GPT-4 and 3.5; o200k_base for a model tiktoken does not know. The models
/// of p50k_base and r50k_base (GPT-3's, retired in 2024) count with cl100k_base: only the two
/// vocabularies this crate embeds (crate::vocabulary) are in the binary.
pub struct Tokenizer {
    bpe: &'static tiktoken_rs::CoreBPE,
    pub encoding: &'static str,
    /// Counts of texts seen before: a request repeats most of the last one, and a chat's
    /// count is the sum of its messages', so only what is new gets tokenized. Every request
    /// hashes all its texts again: foldhash does that several times faster than SipHash.
    seen: std::cell::RefCell<std::collections::HashMap<String, u32, foldhash::fast::RandomState>>,
}

impl Tokenizer {
    pub fn for_model(model: &str) -> Self {
        let encoding = get_tokenizer(model).unwrap_or(Encoding::O200kBase);
        let (bpe, name) = match encoding {
            Encoding::O200kBase | Encoding::O200kHarmony => (crate::vocabulary::o200k_base(), "o200k_base"),
            Encoding::Cl100kBase | Encoding::P50kBase | Encoding::P50kEdit | Encoding::R50kBase | Encoding::Gpt2 => {
                (crate::vocabulary::cl100k_base(), "cl100k_base")
            }
        };
        Tokenizer { bpe, encoding: name, seen: Default::default() }
    }

    /// The same encoding with nothing seen yet: for another thread (the cache of texts seen
    /// is one thread's).
    pub fn fresh(&self) -> Tokenizer {
        Tokenizer { bpe: self.bpe, encoding: self.encoding, seen: Default::default() }
    }

    /// The tokens of `text`, tokenized a piece of at most [`PIECE`] bytes at a time:
    /// tiktoken's regex backtracks over a run of whitespace, and a long enough run (an answer
    /// of a million spaces) passes its limit and panics. A piece ends after a newline that the
    /// encodings' pre-tokenizer always ends a word at (see [`Tokenizer::ends_a_word`]), so the
    /// count is the whole text's; only text with no such newline in the last half of a piece
    /// is cut elsewhere, and may count a token more at the cut.
    pub fn count(&self, text: &str) -> u32 {
        let mut total = 0usize;
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = rest.len();
            if cut > PIECE {
                cut = rest.floor_char_boundary(PIECE);
                // From a character's start: byte PIECE / 2 may be inside one (text in CJK scripts
                // panicked here).
                let half = rest.ceil_char_boundary(PIECE / 2);
                let newlines = || rest[half..cut].match_indices('\n').map(|(i, _)| half + i + 1).rev();
                if let Some(after) = newlines().find(|&after| Self::ends_a_word(&rest[after..])).or_else(|| newlines().next()) {
                    cut = after;
                }
            }
            total += self.bpe.encode_with_special_tokens(&rest[..cut]).len();
            rest = &rest[cut..];
        }
        u32::try_from(total).unwrap_or(u32::MAX)
    }

    /// Whether a newline followed by `next` ends a word of the pre-tokenizer (o200k's and
    /// cl100k's): a run of newlines is one word, and a word of punctuation takes the newlines
    /// and slashes after it (`;\n//`), so the next character must be neither whitespace nor `/`.
    fn ends_a_word(next: &str) -> bool {
        next.chars().next().is_some_and(|c| !c.is_whitespace() && c != '/')
    }

    /// [`Tokenizer::count`], remembered. A short text is remembered by its shape, each ASCII
    /// digit as `0`: both encodings' pre-tokenizer makes a run of digits words of one to three
    /// digits and nothing else, and every such word is one token
    /// (`digits_count_the_same_whatever_they_are`), so a text counts what its shape counts.
    /// The context_meta block that ends every request differs from the last one's in its
    /// numbers alone: counted once, not tokenized cold on every request.
    fn count_remembered(&self, text: &str) -> u32 {
        if text.len() <= SHAPED && text.bytes().any(|b| b.is_ascii_digit()) {
            return self.count_seen(&shape(text));
        }
        self.count_seen(text)
    }

    fn count_seen(&self, text: &str) -> u32 {
        if let Some(&n) = self.seen.borrow().get(text) {
            return n;
        }
        let n = self.count(text);
        self.seen.borrow_mut().insert(text.to_string(), n);
        n
    }

    /// One message's share of a request, as OpenAI frames it: 3 tokens, its role and
    /// content, and for each tool call its name and arguments with [`CALL_FRAMING`] tokens.
    pub fn count_message(&self, m: &crate::Message) -> u32 {
        self.count_parts(&m.role, &m.content, m.tool_calls.iter().map(|c| (c.function.name.as_str(), c.function.arguments.as_str())))
    }

    /// [`Tokenizer::count_message`] of a message in any shape: its role, its content and its
    /// tool calls' `(name, arguments)`; what the host counts the engine's messages with,
    /// without making a request's message of each.
    pub fn count_parts<'a>(&self, role: &str, content: &str, calls: impl IntoIterator<Item = (&'a str, &'a str)>) -> u32 {
        let calls: u32 = calls.into_iter().map(|(name, arguments)| CALL_FRAMING + self.count_remembered(name) + self.count_remembered(arguments)).sum();
        3 + self.count_remembered(role) + self.count_remembered(content) + calls
    }

    /// A chat request's prompt tokens: its messages, and 3 more that prime the reply.
    pub fn count_chat(&self, messages: &[crate::Message]) -> u32 {
        messages.iter().map(|m| self.count_message(m)).sum::<u32>() + 3
    }

    /// What offering `tools` (Chat Completions' `tools` array) adds to a request: the
    /// provider renders the definitions into the prompt; their JSON text is counted, with
    /// 12 tokens of framing (it reconciles with reported usage through the correction).
    pub fn count_tools(&self, tools: &serde_json::Value) -> u32 {
        match tools.as_array() {
            Some(list) if !list.is_empty() => 12 + self.count_remembered(&tools.to_string()),
            _ => 0,
        }
    }
}

/// `text` with each ASCII digit as `0` (see [`Tokenizer::count_remembered`]).
fn shape(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_digit() { '0' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text no answer cap rules out (a megabyte of spaces made tiktoken panic; 300 KB did
    /// not) is counted, not a panic; a count does not move for text under a piece.
    #[test]
    fn pathological_text_is_counted() {
        let t = Tokenizer::for_model("gpt-4o");
        for text in [" ".repeat(1_000_001), " \n".repeat(500_000), "日本語".repeat(10_000), format!("a{}", "日本語\n".repeat(10_000))] {
            let n = t.count(&text);
            assert!(n > 0 && n as usize <= text.len(), "{n}");
        }
        let prose = "The working memory keeps what matters.\n".repeat(300);
        assert_eq!(t.count(&prose), u32::try_from(t.bpe.encode_with_special_tokens(&prose).len()).unwrap());
    }

    /// In both encodings every word of one to three ASCII digits is one token, and a text
    /// counts what it counts with its digits changed: what remembering a short text by its
    /// shape rests on.
    #[test]
    fn digits_count_the_same_whatever_they_are() {
        for model in ["gpt-4o", "gpt-4"] {
            let t = Tokenizer::for_model(model);
            for n in 0..1000 {
                for word in [format!("{n}"), format!("{n:02}"), format!("{n:03}")] {
                    assert_eq!(t.count(&word), 1, "{model}: {word:?}");
                }
            }
            let texts = [
                "<context_meta>\n{\"tokens_used\":123457,\"tokens_percent\":9}\n</context_meta>".to_string(),
                "a1b22c333d4444e55555 x9.5% [7/12] v2.0.10-rc3 ١٢٣ 0x1F 3.14159 -42 1e-9 12:30:05".to_string(),
                "you have 3 rounds left\n\n17 tools\n  42\n2026-12-03T18:00:00Z 'll 99's".to_string(),
            ];
            // And texts drawn from digits beside every kind of character the pre-tokenizer
            // tells apart (a 60,000-text run of this found no difference either).
            let alphabet: Vec<char> = "0123456789012345678901234567890123456789aZé日 \n\t.,:;'\"/-_+%$#{}[]()<>sStTreEvVmMlLdD١٢".chars().collect();
            let mut x: u64 = 88_172_645_463_325_252;
            let mut next = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let drawn = (0..2000).map(|_| {
                let len = next() % 40 + 1;
                (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect::<String>()
            });
            for text in texts.into_iter().chain(drawn) {
                assert_eq!(t.count(&text), t.count(&shape(&text)), "{model}: {text:?}");
                assert_eq!(t.count_remembered(&text), t.count(&text), "{model}: {text:?}");
            }
        }
    }

    /// Text cut into pieces counts what it counts whole: code with blank lines, comment lines
    /// after punctuation (`;\n//`) and indented lines, where a cut after any newline added
    /// tokens (263,361 for 263,360 on a megabyte of this repository).
    #[test]
    fn pieces_count_what_the_whole_counts() {
        let t = Tokenizer::for_model("gpt-4o");
        let code: String = (0..40_000).map(|i| format!("    let x{i} = f(y);\n\n// why {i}\n\n\n}}\n")).collect();
        assert!(code.len() > 32 * PIECE);
        assert_eq!(t.count(&code), u32::try_from(t.bpe.encode_with_special_tokens(&code).len()).unwrap());
    }
}
