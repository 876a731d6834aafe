//! A request's history as the proxy reads it: its messages in the session's shape, each with its
//! items ([`items`], what a session is found by). A client resends its whole history
//! with every request, and reading and keying all of it again took a quarter of the time the
//! proxy adds to a 1,000-message request; so a Chat Completions request whose bytes begin with
//! those of a recent request of the same caller's, up to the end of its last message, takes that
//! request's history and reads only what follows ([`Recent`]).

use crate::locks::lock;
use crate::parts::Unread;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use workmem_store::Message;

/// Items are matched by SipHash under keys drawn at random once a process (the sessions'
/// views are rebuilt from their logs when the proxy starts): a keyed hash, so that a model or
/// client that cannot know the keys cannot make one item pass for another and have it left
/// out of the log. A fast unkeyed or merely seeded hash (foldhash, SipHash's fixed keys)
/// would not promise that.
static ITEM_KEYS: std::sync::LazyLock<std::collections::hash_map::RandomState> = std::sync::LazyLock::new(Default::default);

fn key(parts: &[&str]) -> u64 {
    ITEM_KEYS.hash_one(parts)
}

/// Who sends a request, as far as the upstream can tell: a keyed hash of the credentials it
/// carries, byte for byte (read as text, any two headers that differ only in bytes that are
/// not UTF-8 would be one caller). A request is read on from a recent one only where the same
/// caller sent that one, so that how fast a request is read tells nobody what another client
/// sent.
pub(crate) fn caller(credentials: &[&[u8]]) -> u64 {
    ITEM_KEYS.hash_one(("caller", credentials))
}

/// The sessions a client's requests are looked for among: those of its protocol, of its
/// caller (`owner`, see [`crate::sessions::Index::owner`]) and of its own name for its session
/// (or of no name), as one key.
pub(crate) fn scope(protocol: &str, owner: &str, client: Option<&str>) -> u64 {
    match client {
        Some(name) => key(&["scope", protocol, owner, name]),
        None => key(&["scope", protocol, owner]),
    }
}

/// Maps and sets of items, which are keyed hashes already: hashed again (SipHash once more,
/// `HashMap`'s default), they took a tenth of a 1,000-message request's work in the proxy.
pub(crate) type ItemMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<ItemHasher>>;
pub(crate) type ItemSet = std::collections::HashSet<u64, std::hash::BuildHasherDefault<ItemHasher>>;

/// The hasher of [`ItemMap`]: an item is its own hash.
#[derive(Default)]
pub(crate) struct ItemHasher(u64);

impl std::hash::Hasher for ItemHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64`s are hashed here; anything else still gets a hash, if a poor one.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, item: u64) {
        self.0 = item;
    }
}

/// A message's items: an assistant's tool calls (its text goes with them, wherever the client
/// regroups it), else the message itself. A call is its ID and name: clients write its
/// arguments again as they please (the Vercel AI SDK resends `JSON.stringify` of what it
/// parsed, without the model's spaces), and a call's ID is what its result answers.
pub(crate) fn items(m: &Message) -> Vec<u64> {
    match (m.role.as_str(), m.tool_call_id.as_deref()) {
        ("assistant", _) if !m.tool_calls.is_empty() => m.tool_calls.iter().map(|c| key(&["call", &c.id, &c.name])).collect(),
        ("tool", id) => vec![key(&["result", id.unwrap_or_default(), &m.content])],
        (role, _) => vec![key(&[role, &m.content])],
    }
}

pub(crate) struct History {
    pub messages: Vec<Message>,
    /// Each message's items, in order.
    pub keys: Vec<Vec<u64>>,
    /// The request's bytes up to the end of its last message (Chat Completions only): what a
    /// request that continues it begins with.
    prefix: Vec<u8>,
    /// The request's fields before `messages`.
    before: Map<String, Value>,
    /// Who sent it ([`caller`]).
    caller: u64,
}

impl History {
    /// A history read as a whole: nothing to reuse.
    pub fn new(messages: Vec<Message>) -> Self {
        History { keys: messages.iter().map(items).collect(), messages, prefix: Vec::new(), before: Map::new(), caller: 0 }
    }

    /// Whether `body`, from `caller`, begins with this history's request up to its last
    /// message. The end is compared first: another client's request almost always differs there.
    fn continued_by(&self, body: &[u8], caller: u64) -> bool {
        let n = self.prefix.len();
        let tail = n.saturating_sub(64);
        caller == self.caller && n > 0 && n <= body.len() && self.prefix[tail..] == body[tail..n] && self.prefix[..tail] == body[..tail]
    }

    fn push(&mut self, message: Message) {
        self.keys.push(items(&message));
        self.messages.push(message);
    }
}

/// A Chat Completions request read as far as its messages: the fields before and after them,
/// and each message as the client wrote it.
struct Split<'a> {
    before: Map<String, Value>,
    messages: Option<Vec<&'a RawValue>>,
    after: Map<String, Value>,
    /// `messages` came more than once (the last counts): such a request is not kept.
    repeated: bool,
}

impl<'de> Deserialize<'de> for Split<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Split<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Split<'de>, A::Error> {
                let mut split = Split { before: Map::new(), messages: None, after: Map::new(), repeated: false };
                while let Some(key) = map.next_key::<String>()? {
                    if key == "messages" {
                        split.repeated |= split.messages.is_some();
                        split.messages = Some(map.next_value()?);
                    } else {
                        let value = map.next_value()?;
                        match split.messages {
                            None => split.before.insert(key, value),
                            Some(_) => split.after.insert(key, value),
                        };
                    }
                }
                Ok(split)
            }
        }
        d.deserialize_map(Fields)
    }
}

/// A request's fields but its history, and its history as the client wrote it.
pub(crate) type Fields<'a> = (Map<String, Value>, Option<&'a RawValue>);

/// A request's fields but `key` (its history: Anthropic's `messages`, the Responses API's
/// `input`), and that field as the client wrote it, for a protocol that reads each message on
/// its own rather than through a `Value` of the whole history. Where `key` comes more than once
/// the last counts, as it would in a `Value`.
pub(crate) fn fields_and_raw<'a>(body: &'a [u8], key: &'static str) -> Result<Fields<'a>, serde_json::Error> {
    struct Seed(&'static str);
    impl<'de> DeserializeSeed<'de> for Seed {
        type Value = Fields<'de>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fields<'de>, D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Seed {
        type Value = Fields<'de>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
            let (mut rest, mut history) = (Map::new(), None);
            while let Some(name) = map.next_key::<String>()? {
                if name == self.0 {
                    history = Some(map.next_value()?);
                } else {
                    rest.insert(name, map.next_value()?);
                }
            }
            Ok((rest, history))
        }
    }
    let mut d = serde_json::Deserializer::from_slice(body);
    let fields = Seed(key).deserialize(&mut d)?;
    d.end()?;
    Ok(fields)
}

/// A request whose history is the field `key`, each message read by `read` from what the client
/// wrote: the rest of the request as JSON, and the history (Anthropic's `messages`, the
/// Responses API's `input`).
pub(crate) fn read_field(
    body: &[u8],
    key: &'static str,
    read: impl FnOnce(Option<&RawValue>) -> Result<Vec<Message>, Unread>,
) -> Result<(Value, Arc<History>), Unread> {
    let (rest, raw) = fields_and_raw(body, key).map_err(|e| Unread::Invalid(format!("the request is not JSON: {e}")))?;
    Ok((Value::Object(rest), Arc::new(History::new(read(raw)?))))
}

/// `history` of the field `key` holding `value`, read from a request as JSON writes it and
/// from the same pretty-printed, as some clients send it: both must read alike.
#[cfg(test)]
pub(crate) fn read_both<T: PartialEq + fmt::Debug>(key: &'static str, value: Value, history: impl Fn(Option<&RawValue>) -> T) -> T {
    let request = serde_json::json!({"model": "m", key: value});
    let [compact, pretty] = [request.to_string(), serde_json::to_string_pretty(&request).unwrap()].map(|body| {
        let (rest, raw) = fields_and_raw(body.as_bytes(), key).unwrap();
        assert_eq!(rest.keys().collect::<Vec<_>>(), ["model"], "the fields but {key}");
        history(raw)
    });
    assert_eq!(compact, pretty);
    compact
}

/// Where `inner`, a slice of `outer`, ends in it.
fn end_in(outer: &[u8], inner: &str) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize + inner.len()
}

/// What a continued request is read as: its messages array opened, a stand-in for the messages
/// the recent request held, and the rest of the request from the end of those on.
const CONTINUED: &[u8] = b"{\"messages\":[0";

/// A Chat Completions request as [`Recent::chat`] reads it: its fields but `messages`, and its
/// history.
pub(crate) type Read = (Map<String, Value>, Arc<History>);

/// The raw bytes the histories kept for reuse may hold in all (each history's messages take
/// about as much again), and how many they may be: past either the least recently used go.
const RECENT_BYTES: usize = 64 << 20;
const RECENT_HISTORIES: usize = 256;

/// The histories of the last Chat Completions requests, the most recent first, for the
/// requests that continue them. Finding the one a request continues compares at most the bytes
/// kept ([`RECENT_BYTES`]), each history's last 64 first.
pub(crate) struct Recent {
    histories: Mutex<VecDeque<Arc<History>>>,
    max_bytes: usize,
}

impl Default for Recent {
    fn default() -> Self {
        Recent { histories: Mutex::default(), max_bytes: RECENT_BYTES }
    }
}

impl Recent {
    /// A Chat Completions request from `caller`: its fields but `messages`, and its history,
    /// each new message converted by `parse` (given its index), whose first error is the
    /// answer. Where `body` continues a recent request of the same caller's (the longest it
    /// does), that request's history is taken and only what follows it read; a request read
    /// whole is refused as it was before, errors naming where. The history is kept for the next
    /// request, in place of the one it continues.
    pub fn chat(&self, body: &[u8], caller: u64, parse: impl Fn(usize, &str) -> Result<Message, Unread>) -> Result<Read, Unread> {
        // Compared outside the lock: another client's request need not wait on this one.
        let all: Vec<Arc<History>> = lock(&self.histories).iter().cloned().collect();
        if let Some(base) = all.into_iter().filter(|h| h.continued_by(body, caller)).max_by_key(|h| h.prefix.len())
            && let Some(read) = self.continue_from(base, body, &parse)
        {
            return read;
        }
        let split: Split = serde_json::from_slice(body).map_err(|e| Unread::Invalid(format!("the request is not a chat request: {e}")))?;
        let raw = split.messages.ok_or("the request has no messages array")?;
        let mut history =
            History { messages: Vec::with_capacity(raw.len()), keys: Vec::with_capacity(raw.len()), prefix: Vec::new(), before: Map::new(), caller };
        for (at, message) in raw.iter().enumerate() {
            history.push(parse(at, message.get())?);
        }
        if let Some(last) = raw.last().filter(|_| !split.repeated) {
            history.prefix = body[..end_in(body, last.get())].to_vec();
            history.before = split.before.clone();
        }
        let mut rest = split.before;
        rest.extend(split.after);
        Ok((rest, self.keep(history)))
    }

    /// `body` read on from the end of `base`'s messages. None where that fails, for the whole
    /// request to be read again and its error told with its place in what the client sent.
    fn continue_from(&self, base: Arc<History>, body: &[u8], parse: &impl Fn(usize, &str) -> Result<Message, Unread>) -> Option<Result<Read, Unread>> {
        let from = base.prefix.len();
        let doc = [CONTINUED, &body[from..]].concat();
        let split: Split = serde_json::from_slice(&doc).ok()?;
        let raw = split.messages.filter(|m| !split.repeated && m.first().is_some_and(|r| r.get() == "0"))?;
        let mut new = Vec::with_capacity(raw.len() - 1);
        for (at, message) in (base.messages.len()..).zip(&raw[1..]) {
            match parse(at, message.get()) {
                Ok(m) => new.push(m),
                Err(_) => return None,
            }
        }
        let mut histories = lock(&self.histories);
        if let Some(at) = histories.iter().position(|h| Arc::ptr_eq(h, &base)) {
            histories.remove(at);
        }
        drop(histories);
        // Taken over where no other request holds it still, else copied.
        let mut history = Arc::try_unwrap(base).unwrap_or_else(|shared| History {
            messages: shared.messages.clone(),
            keys: shared.keys.clone(),
            prefix: shared.prefix.clone(),
            before: shared.before.clone(),
            caller: shared.caller,
        });
        let end = end_in(&doc, raw[raw.len() - 1].get()) - CONTINUED.len();
        history.prefix.extend_from_slice(&body[from..from + end]);
        new.into_iter().for_each(|m| history.push(m));
        let mut rest = history.before.clone();
        rest.extend(split.after);
        Some(Ok((rest, self.keep(history))))
    }

    /// Keeps `history` first among the recent ones, within the bounds.
    fn keep(&self, history: History) -> Arc<History> {
        let history = Arc::new(history);
        if history.prefix.is_empty() {
            return history;
        }
        let mut histories = lock(&self.histories);
        histories.push_front(history.clone());
        let (mut bytes, mut count) = (0, 0);
        histories.retain(|h| {
            (bytes, count) = (bytes + h.prefix.len(), count + 1);
            bytes <= self.max_bytes && count <= RECENT_HISTORIES
        });
        history
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn body(messages: &[&str], after: &str) -> String {
        let messages: Vec<String> = messages.iter().map(|m| format!(r#"{{"role":"user","content":"{m}"}}"#)).collect();
        format!(r#"{{"model":"m","messages":[{}]{after}}}"#, messages.join(","))
    }

    /// Reads `body` through `recent`: its fields, its history, and how many messages were parsed.
    fn read(recent: &Recent, body: &str) -> Result<(Read, usize), Unread> {
        read_from(recent, body, 0)
    }

    fn read_from(recent: &Recent, body: &str, caller: u64) -> Result<(Read, usize), Unread> {
        let parsed = Cell::new(0);
        let (rest, h) = recent.chat(body.as_bytes(), caller, |at, m| {
            parsed.set(parsed.get() + 1);
            let v: Value = serde_json::from_str(m).map_err(|e| e.to_string())?;
            v["content"].as_str().map(|t| Message::new("user", t)).ok_or(Unread::Invalid(format!("messages[{at}]: no content")))
        })?;
        Ok(((rest, h), parsed.get()))
    }

    fn parsed(recent: &Recent, body: &str) -> usize {
        read(recent, body).unwrap().1
    }

    /// A request that continues one parses only its new messages, and reads the same as from
    /// nothing; one that differs anywhere before (a message edited, even in its spelling, a
    /// field before the messages) parses all of them.
    #[test]
    fn only_what_follows_a_recent_request_is_parsed() {
        let recent = Recent::default();
        let ((_, first), n) = read(&recent, &body(&["a", "b"], "")).unwrap();
        assert_eq!(n, 2);
        let longer = body(&["a", "b", "c"], r#","stream":true"#);
        let ((rest, history), n) = read(&recent, &longer).unwrap();
        assert_eq!(n, 1);
        let ((whole_rest, whole), _) = read(&Recent::default(), &longer).unwrap();
        assert_eq!((rest, &history.messages, &history.keys), (whole_rest, &whole.messages, &whole.keys));
        assert_eq!(history.prefix, whole.prefix);
        assert_eq!(parsed(&recent, &body(&["a", "b", "c"], r#","stream":false"#)), 0, "the same messages again");
        assert_eq!(parsed(&recent, &body(&["a", "B", "c", "d"], "")), 4);
        assert_eq!(parsed(&recent, r#"{"model":"m","messages":[{"role":"user","content":"a"}, {"content":"b","role":"user"}]}"#), 2);
        assert_eq!(parsed(&recent, &body(&["a", "b", "c"], "").replace(r#""model":"m""#, r#""model":"n""#)), 3);
        // The first request's history was held while the second took it over: copied, not changed.
        assert_eq!(first.messages.len(), 2);
    }

    /// A history field read raw is the one a `Value` of the request would hold: the last of a
    /// repeated one counts, and a request that is not one JSON object is refused.
    #[test]
    fn a_history_field_is_read_raw_as_a_value_reads_it() {
        let (rest, raw) = fields_and_raw(br#"{"input":[1],"model":"m","input":[2, 3]}"#, "input").unwrap();
        assert_eq!((raw.map(RawValue::get), Value::Object(rest)), (Some("[2, 3]"), serde_json::json!({"model": "m"})));
        assert_eq!(fields_and_raw(br#"{"model":"m"}"#, "input").unwrap().1.map(RawValue::get), None);
        for bad in [&br#"{"input":[]} {}"#[..], br#"[{"input":[]}]"#, br#"{"input":[}"#] {
            assert!(fields_and_raw(bad, "input").is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    /// A request is read on only from one its own caller sent: another caller's request that
    /// begins with the same bytes is read whole, and takes nothing of the first one's.
    #[test]
    fn only_a_callers_own_request_is_read_on_from() {
        let recent = Recent::default();
        let (alice, bob) = (caller(&[b"Bearer a", b""]), caller(&[b"Bearer b", b""]));
        assert_ne!(alice, bob);
        assert_ne!(caller(&[b"Bearer \xff", b""]), caller(&[b"Bearer \xfe", b""]), "bytes that are not UTF-8 tell callers apart too");
        assert_ne!(caller(&[b"ab", b""]), caller(&[b"a", b"b"]), "where one header ends tells callers apart");
        assert_eq!(read_from(&recent, &body(&["a", "b"], ""), alice).unwrap().1, 2);
        assert_eq!(read_from(&recent, &body(&["a", "b", "c"], ""), bob).unwrap().1, 3, "another caller's request is read whole");
        assert_eq!(read_from(&recent, &body(&["a", "b", "c", "d"], ""), alice).unwrap().1, 2, "the caller's own is read on from");
    }

    /// Of the recent requests one continues, the longest is taken.
    #[test]
    fn the_longest_request_continued_is_taken() {
        let recent = Recent::default();
        parsed(&recent, &body(&["a", "b"], ""));
        parsed(&recent, &body(&["a"], ""));
        assert_eq!(parsed(&recent, &body(&["a", "b", "c"], "")), 1);
    }

    /// What follows a recent request is held to the same rules: an error is the one a whole
    /// read gives (its place in what the client sent), and nothing of the failed request is kept.
    #[test]
    fn a_continued_request_fails_as_a_whole_one_does() {
        let recent = Recent::default();
        parsed(&recent, &body(&["a"], ""));
        for bad in
            [r#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user"}]}"#, r#"{"model":"m","messages":[{"role":"user","content":"a"},]}"#]
        {
            let whole = read(&Recent::default(), bad).err().unwrap();
            assert_eq!(read(&recent, bad).err(), Some(whole));
        }
        let twice = r#"{"model":"m","messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"z"}]}"#;
        let ((_, history), _) = read(&recent, twice).unwrap();
        assert_eq!(history.messages, vec![Message::new("user", "z")], "the last messages array counts, as in a whole read");
        assert_eq!(lock(&recent.histories).len(), 1);
    }

    /// However many requests come, at most [`RECENT_HISTORIES`] histories are kept, and none
    /// without messages.
    #[test]
    fn the_histories_kept_are_bounded() {
        let recent = Recent::default();
        for i in 0..RECENT_HISTORIES + 10 {
            parsed(&recent, &body(&[&i.to_string()], ""));
            parsed(&recent, &body(&[], ""));
        }
        assert_eq!(lock(&recent.histories).len(), RECENT_HISTORIES);
    }

    /// The bytes kept are bounded too: past them the least recently used go, and a request
    /// larger than all of them is not kept at all.
    #[test]
    fn the_bytes_kept_are_bounded() {
        let recent = Recent { max_bytes: 200, ..Recent::default() };
        let kept = |r: &Recent| lock(&r.histories).iter().map(|h| h.prefix.len()).collect::<Vec<_>>();
        parsed(&recent, &body(&["a"], ""));
        parsed(&recent, &body(&["b"], ""));
        let each = kept(&recent)[0];
        assert_eq!(kept(&recent), [each, each]);
        parsed(&recent, &body(&["c"], ""));
        parsed(&recent, &body(&["d"], ""));
        assert_eq!(kept(&recent).len(), 200 / each);
        assert!(kept(&recent).iter().sum::<usize>() <= 200);
        assert_eq!(parsed(&recent, &body(&["d"], "")), 0, "the most recent is kept");
        parsed(&recent, &body(&[&"x".repeat(300)], ""));
        assert!(kept(&recent).iter().all(|&n| n < 300), "a request over the bound is not kept");
        assert_eq!(parsed(&recent, &body(&[&"x".repeat(300)], "")), 1);
    }
}
