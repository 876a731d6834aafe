//! A request's history as the proxy reads it: its messages in the session's shape, each with its
//! items ([`sessions::items`], what a session is found by), and, for Chat Completions, each as
//! the client wrote it. A client resends its whole history with every request, and parsing and
//! keying all of it again took a quarter of the time the proxy adds to a 1,000-message request;
//! so a request whose messages begin, byte for byte, with all of a recent request's takes that
//! request's parse and parses only what follows ([`Recent`]).

use crate::sessions::{self, lock};
use serde_json::value::RawValue;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use workmem_store::Message;

pub(crate) struct History {
    pub messages: Vec<Message>,
    /// Each message's items, in order.
    pub keys: Vec<Vec<u64>>,
    /// The messages as the client wrote them, one after another, and where each ends; empty
    /// for a protocol whose history is not parsed message by message.
    raw: Vec<u8>,
    ends: Vec<usize>,
}

impl History {
    /// A history parsed as a whole: nothing to reuse.
    pub fn new(messages: Vec<Message>) -> Self {
        History { keys: messages.iter().map(sessions::items).collect(), messages, raw: Vec::new(), ends: Vec::new() }
    }

    fn raw(&self, i: usize) -> &[u8] {
        &self.raw[if i == 0 { 0 } else { self.ends[i - 1] }..self.ends[i]]
    }

    /// Whether `raw` begins with every message of this history, byte for byte. The last is
    /// compared first: another client's history almost always differs there.
    fn continued_by(&self, raw: &[&RawValue]) -> bool {
        let n = self.ends.len();
        n > 0 && n <= raw.len() && self.raw(n - 1) == raw[n - 1].get().as_bytes() && (0..n - 1).all(|i| self.raw(i) == raw[i].get().as_bytes())
    }

    fn push(&mut self, raw: &str, message: Message) {
        self.raw.extend_from_slice(raw.as_bytes());
        self.ends.push(self.raw.len());
        self.keys.push(sessions::items(&message));
        self.messages.push(message);
    }
}

/// The raw bytes the histories kept for reuse may hold in all (each history's parse takes about
/// as much again), and how many they may be: past either the least recently used go.
const RECENT_BYTES: usize = 64 << 20;
const RECENT_HISTORIES: usize = 256;

/// The histories of the last requests, the most recent first, for the requests that continue
/// them.
#[derive(Default)]
pub(crate) struct Recent {
    histories: Mutex<VecDeque<Arc<History>>>,
}

impl Recent {
    /// The history of the messages `raw`: those a recent history holds are taken from it (from
    /// the one that holds the most), the rest converted by `parse` (given each one's index),
    /// whose first error is the answer. The history is kept for the next request, in place of
    /// the one it continues.
    pub fn history(&self, raw: &[&RawValue], parse: impl Fn(usize, &str) -> Result<Message, String>) -> Result<Arc<History>, String> {
        // Compared outside the lock: another client's request need not wait on this one.
        let all: Vec<Arc<History>> = lock(&self.histories).iter().cloned().collect();
        let base = all.into_iter().filter(|h| h.continued_by(raw)).max_by_key(|h| h.ends.len());
        let mut history = match base {
            Some(base) => {
                let mut histories = lock(&self.histories);
                if let Some(at) = histories.iter().position(|h| Arc::ptr_eq(h, &base)) {
                    histories.remove(at);
                }
                drop(histories);
                // Taken over where no other request holds it still, else copied.
                Arc::try_unwrap(base).unwrap_or_else(|shared| History {
                    messages: shared.messages.clone(),
                    keys: shared.keys.clone(),
                    raw: shared.raw.clone(),
                    ends: shared.ends.clone(),
                })
            }
            None => History { messages: Vec::with_capacity(raw.len()), keys: Vec::with_capacity(raw.len()), raw: Vec::new(), ends: Vec::new() },
        };
        for (at, message) in raw.iter().enumerate().skip(history.messages.len()) {
            history.push(message.get(), parse(at, message.get())?);
        }
        let history = Arc::new(history);
        if history.ends.is_empty() {
            return Ok(history);
        }
        let mut histories = lock(&self.histories);
        histories.push_front(history.clone());
        let (mut bytes, mut count) = (0, 0);
        histories.retain(|h| {
            (bytes, count) = (bytes + h.raw.len(), count + 1);
            bytes <= RECENT_BYTES && count <= RECENT_HISTORIES
        });
        Ok(history)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(messages: &[&str]) -> String {
        format!("[{}]", messages.iter().map(|m| format!(r#"{{"role":"user","content":"{m}"}}"#)).collect::<Vec<_>>().join(","))
    }

    /// Parses `body`'s messages through `recent`, counting the messages parsed.
    fn history(recent: &Recent, body: &str) -> (Arc<History>, usize) {
        let raw: Vec<&RawValue> = serde_json::from_str(body).unwrap();
        let parsed = std::cell::Cell::new(0);
        let h = recent
            .history(&raw, |_, m| {
                parsed.set(parsed.get() + 1);
                let v: serde_json::Value = serde_json::from_str(m).unwrap();
                Ok(Message::new("user", v["content"].as_str().unwrap()))
            })
            .unwrap();
        (h, parsed.get())
    }

    /// A request that continues one parses only its new messages; one that differs anywhere
    /// before (a message edited, even in its spelling) parses all of them; every one gives the
    /// same history as a parse from nothing.
    #[test]
    fn only_what_follows_a_recent_history_is_parsed() {
        let recent = Recent::default();
        let (first, n) = history(&recent, &raw(&["a", "b"]));
        assert_eq!(n, 2);
        let (longer, n) = history(&recent, &raw(&["a", "b", "c"]));
        assert_eq!(n, 1);
        assert_eq!(longer.messages, History::new(vec![Message::new("user", "a"), Message::new("user", "b"), Message::new("user", "c")]).messages);
        assert_eq!(longer.keys, History::new(longer.messages.clone()).keys);
        let (_, n) = history(&recent, &raw(&["a", "B", "c", "d"]));
        assert_eq!(n, 4);
        let (_, n) = history(&recent, r#"[{"role":"user","content":"a"}, {"content":"b","role":"user"}]"#);
        assert_eq!(n, 2);
        // The first request's history was held while the second took it over: copied, not changed.
        assert_eq!(first.messages.len(), 2);
    }

    /// Of the recent histories a request continues, the longest is taken.
    #[test]
    fn the_longest_history_continued_is_taken() {
        let recent = Recent::default();
        history(&recent, &raw(&["a", "b"]));
        history(&recent, &raw(&["a"]));
        let (_, n) = history(&recent, &raw(&["a", "b", "c"]));
        assert_eq!(n, 1);
    }

    /// An error names the message, and nothing of the failed request is kept.
    #[test]
    fn a_failed_parse_keeps_nothing() {
        let recent = Recent::default();
        let raw: Vec<&RawValue> = serde_json::from_str(r#"[{"a":1},{"b":2}]"#).unwrap();
        let why = recent.history(&raw, |at, _| if at == 1 { Err(format!("messages[{at}]: bad")) } else { Ok(Message::new("user", "x")) }).err();
        assert_eq!(why.as_deref(), Some("messages[1]: bad"));
        assert!(lock(&recent.histories).is_empty());
    }

    /// However many requests come, at most [`RECENT_HISTORIES`] histories are kept, and none
    /// without messages.
    #[test]
    fn the_histories_kept_are_bounded() {
        let recent = Recent::default();
        for i in 0..RECENT_HISTORIES + 10 {
            history(&recent, &raw(&[&i.to_string()]));
            history(&recent, "[]");
        }
        assert_eq!(lock(&recent.histories).len(), RECENT_HISTORIES);
    }
}
