//! A request's history as the proxy reads it: its messages in the session's shape, each with its
//! items ([`items`], what a session is found by). A client resends its whole history with every
//! request, and reading and keying all of it again took a quarter of the time the proxy adds to
//! a 1,000-message Chat Completions request, and 70% of it in Messages and Responses; so a
//! request, in any protocol, whose bytes begin with those of a recent request of the same
//! caller's, up to the end of one of its items, takes that request's history up to there and
//! reads only what follows ([`Recent`]). Each protocol says how it reads an item ([`Reader`]).

use crate::locks::lock;
use crate::parts::Unread;
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

/// The key a client's name for its session is kept under, whoever's (`Index::names`).
pub(crate) fn named(protocol: &str, name: &str) -> u64 {
    key(&["named", protocol, name])
}

/// The key an answer the provider gave the ID `id` is filed under, in `protocol` for
/// `owner` ([`crate::sessions::Index::owner`]): a chained request finds it only among its own
/// caller's.
pub(crate) fn answer(protocol: &str, owner: &str, id: &str) -> u64 {
    key(&["answer", protocol, owner, id])
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
/// parsed, without the model's spaces), and a call's ID is what its result answers. An
/// assistant's message with neither text nor calls (a reasoning item alone) is none: it goes
/// with what follows wherever the client regroups it (Codex resends the reasoning a broken
/// stream gave it in one turn with the answer of its retry).
pub(crate) fn items(m: &Message) -> Vec<u64> {
    match (m.role.as_str(), m.tool_call_id.as_deref()) {
        ("assistant", _) if !m.tool_calls.is_empty() => m.tool_calls.iter().map(|c| key(&["call", &c.id, &c.name])).collect(),
        ("assistant", _) if m.content.is_empty() => Vec::new(),
        ("tool", id) => vec![key(&["result", id.unwrap_or_default(), &m.content])],
        (role, _) => vec![key(&[role, &m.content])],
    }
}

pub(crate) struct History {
    pub messages: Vec<Message>,
    /// Each message's items, in order.
    pub keys: Vec<Vec<u64>>,
    /// This request's own number in this process, and, where it was read on from an earlier
    /// request's history, that one's number and how many of its messages it kept: a session
    /// matched against that request matches this one from there on (`seen::Matching`).
    pub id: u64,
    pub base: Option<(u64, usize)>,
    /// Where each key comes among the items of `keys`, counted from the first, in order: the
    /// sessions filed under a request's items are found from the keys filed, where those are
    /// fewer than its items ([`crate::lookup::Lookup::candidates`]).
    at: ItemMap<Vec<u32>>,
    /// How many items `keys` holds.
    items: usize,
    /// The request's bytes up to the end of its last settled item: what a request that
    /// continues it begins with.
    prefix: Vec<u8>,
    /// Each settled item ([`Reader::settled`]), in order: where a later request may be read on
    /// from.
    marks: Vec<Mark>,
    /// The request's fields before its history.
    before: Map<String, Value>,
    /// Who sent it ([`caller`]).
    caller: u64,
    /// The field that holds the history ([`Reader::FIELD`]): a request of another protocol
    /// never continues this one.
    field: &'static str,
}

/// A settled item of a history: where it ends in the request, how many items the history held
/// up to it, and how many messages they were read as.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Mark {
    end: usize,
    items: usize,
    messages: usize,
}

impl History {
    /// A history of nothing yet, from `caller`, of the field `field`.
    fn empty(caller: u64, field: &'static str) -> Self {
        History {
            messages: Vec::new(),
            keys: Vec::new(),
            id: next_id(),
            base: None,
            at: ItemMap::default(),
            items: 0,
            prefix: Vec::new(),
            marks: Vec::new(),
            before: Map::new(),
            caller,
            field,
        }
    }

    /// `prefix`, the client's view of a session up to the answer a request chains to (the
    /// Responses API's `previous_response_id`), then that request's own history: what the
    /// client would have sent had it resent its history. Keyed whole, and kept for no later
    /// request to read on from.
    pub fn chained(mut prefix: Vec<Message>, request: &History) -> Self {
        prefix.extend(request.messages.iter().cloned());
        let mut history = History { messages: prefix, ..History::empty(request.caller, request.field) };
        history.key_new();
        history
    }

    /// A history read as a whole: nothing to reuse.
    #[cfg(test)]
    pub fn new(messages: Vec<Message>) -> Self {
        let mut history = History { messages, ..History::empty(0, "") };
        history.key_new();
        history
    }

    /// The same messages read on from `base` ([`History::base`]), as a continued request is.
    #[cfg(test)]
    pub fn on(base: &History, kept: usize, messages: Vec<Message>) -> Self {
        History { base: Some((base.id, kept)), ..History::new(messages) }
    }

    /// The last of this history's marks that `body`, from `caller`, begins with byte for byte:
    /// where a request that repeats this one's history, or the start of it, may be read on from.
    /// A request whose items differ from some item on (a client that moves its cache marks
    /// forward, as Claude Code does, or edits an item) is read on from the item before.
    /// Compares at most `budget` bytes, and says how many it compared: past them the request
    /// is taken to part there.
    fn continued_by(&self, body: &[u8], caller: u64, field: &str, budget: usize) -> (Option<Mark>, usize) {
        if caller != self.caller || field != self.field {
            return (None, 0);
        }
        let same = common_prefix(&self.prefix[..self.prefix.len().min(budget)], body);
        (self.marks.iter().rev().find(|m| m.end <= same).copied(), same)
    }

    /// The messages read by `mark`, for the items after it to be read on from there.
    fn truncate(&mut self, mark: Mark) {
        self.messages.truncate(mark.messages);
        for keys in self.keys.drain(mark.messages.min(self.keys.len())..).rev() {
            for k in keys.into_iter().rev() {
                self.items -= 1;
                if let Some(at) = self.at.get_mut(&k) {
                    at.pop();
                    if at.is_empty() {
                        self.at.remove(&k);
                    }
                }
            }
        }
        self.prefix.truncate(mark.end);
        // Marks are in the order of their items: those past `mark` are the last ones.
        let kept = self.marks.partition_point(|m| m.items <= mark.items);
        self.marks.truncate(kept);
    }

    /// The bytes it keeps for the requests that continue it: the request's, its marks and its
    /// items' places.
    fn kept_bytes(&self) -> usize {
        // Each item's place, in a map of keys to a list each (the map's entry and the list's
        // allocation): about 80 bytes.
        self.prefix.len() + self.marks.len() * std::mem::size_of::<Mark>() + self.items * 80
    }

    /// Keys for the messages read since the last were keyed.
    fn key_new(&mut self) {
        for m in &self.messages[self.keys.len()..] {
            let keys = items(m);
            for &k in &keys {
                self.at.entry(k).or_default().push(self.items as u32);
                self.items += 1;
            }
            self.keys.push(keys);
        }
    }

    /// How many items its messages hold.
    pub fn items(&self) -> usize {
        self.items
    }

    /// Whether `key` comes among its items.
    pub fn holds(&self, key: u64) -> bool {
        self.at.contains_key(&key)
    }

    /// Where `key` last comes among its items, counted from the last.
    pub fn last_from_end(&self, key: u64) -> Option<usize> {
        self.at.get(&key).and_then(|at| at.last()).map(|&at| self.items - 1 - at as usize)
    }
}

/// How many bytes `a` and `b` begin with alike: compared a block at a time, as `memcmp` does,
/// then byte by byte in the block where they part.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let mut same = 0;
    while same + BLOCK <= n && a[same..same + BLOCK] == b[same..same + BLOCK] {
        same += BLOCK;
    }
    same + a[same..n].iter().zip(&b[same..n]).take_while(|(x, y)| x == y).count()
}

/// How a protocol reads a request's history: a fold over the items of one field as the client
/// wrote them, each read on its own (a `Value` of a 1,000-message history first took longer
/// than all the rest of the proxy's work).
pub(crate) trait Reader: Default {
    /// The request's field that holds the history (Chat Completions' and Anthropic's
    /// `messages`, the Responses API's `input`).
    const FIELD: &'static str;

    /// Item `at` of the history, as the client wrote it, read onto `out`.
    fn item(&mut self, at: usize, raw: &str, out: &mut Vec<Message>) -> Result<(), Unread>;

    /// Whether no item that may follow can change `out` and nothing is pending: a later request
    /// may be read on from here, with a new reader.
    fn settled(&self, _out: &[Message]) -> bool {
        true
    }

    /// The history's end: what is pending goes into `out`.
    fn end(self, _out: &mut Vec<Message>) {}

    /// The history where the field holds no list of items (or is missing): none, unless the
    /// protocol takes another shape there.
    fn not_a_list(_raw: Option<&RawValue>) -> Result<Vec<Message>, Unread> {
        Err(format!("the request has no {} array", Self::FIELD).into())
    }
}

/// A request read as far as its history: the fields before and after it, and the history as
/// the client wrote it.
struct Split<'a> {
    before: Map<String, Value>,
    history: Option<&'a RawValue>,
    after: Map<String, Value>,
    /// The history's field came more than once (the last counts): such a request is not kept.
    repeated: bool,
}

impl<'a> Split<'a> {
    fn of(body: &'a [u8], field: &'static str) -> Result<Split<'a>, serde_json::Error> {
        struct Seed(&'static str);
        impl<'de> DeserializeSeed<'de> for Seed {
            type Value = Split<'de>;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Split<'de>, D::Error> {
                d.deserialize_map(self)
            }
        }
        impl<'de> Visitor<'de> for Seed {
            type Value = Split<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Split<'de>, A::Error> {
                let mut split = Split { before: Map::new(), history: None, after: Map::new(), repeated: false };
                while let Some(name) = map.next_key::<String>()? {
                    if name == self.0 {
                        split.repeated |= split.history.is_some();
                        split.history = Some(map.next_value()?);
                    } else {
                        let value = map.next_value()?;
                        match split.history {
                            None => split.before.insert(name, value),
                            Some(_) => split.after.insert(name, value),
                        };
                    }
                }
                Ok(split)
            }
        }
        let mut d = serde_json::Deserializer::from_slice(body);
        let split = Seed(field).deserialize(&mut d)?;
        d.end()?;
        Ok(split)
    }

    /// The history's items as the client wrote them; None where it is not a list.
    fn items(&self) -> Option<Result<Vec<&'a RawValue>, Unread>> {
        let raw = self.history?.get();
        raw.starts_with('[').then(|| serde_json::from_str(raw).map_err(|e| Unread::Invalid(e.to_string())))
    }
}

/// A number no other history of this process has ([`History::id`]).
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Where `inner`, a slice of `outer`, ends in it.
fn end_in(outer: &[u8], inner: &str) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize + inner.len()
}

/// What a continued request is read as: its history field's list opened, a stand-in for the
/// items the recent request held, and the rest of the request from the end of those on.
fn continued(field: &str, rest: &[u8]) -> Vec<u8> {
    let mut doc = Vec::with_capacity(field.len() + rest.len() + 8);
    doc.extend_from_slice(b"{\"");
    doc.extend_from_slice(field.as_bytes());
    doc.extend_from_slice(b"\":[0");
    doc.extend_from_slice(rest);
    doc
}

/// A request as [`Recent::read`] reads it: its fields but its history, and its history.
pub(crate) type Read = (Map<String, Value>, Arc<History>);

/// The bytes the histories kept for reuse may hold in all, their requests' and their marks'
/// (each history's messages take about as much again), and how many they may be: past either
/// the least recently used go.
const RECENT_BYTES: usize = 64 << 20;
const RECENT_HISTORIES: usize = 256;

/// The histories of the last requests, the most recent first, for the requests that continue
/// them. Finding the one a request continues compares only its own caller's requests in its
/// own protocol, and at most twice the request's bytes ([`Recent::continued`]).
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
    /// A request from `caller`: its fields but its history, and its history, read by `R`, whose
    /// first error is the answer. Where `body` begins as a recent request of the same caller's
    /// did, up to the end of a settled item (the furthest one of any), that request's history
    /// up to there is taken and only what follows read; a request read whole is refused as it
    /// was before, errors naming where. The history is kept for the next request, in place of
    /// the one it continues.
    pub fn read<R: Reader>(&self, body: &[u8], caller: u64) -> Result<Read, Unread> {
        if let Some((mark, base)) = self.continued::<R>(body, caller).0
            && let Some(read) = self.continue_from::<R>(base, mark, body)
        {
            return Ok(read);
        }
        let split = Split::of(body, R::FIELD).map_err(|e| Unread::Invalid(format!("the request is not a JSON object: {e}")))?;
        let mut history = History::empty(caller, R::FIELD);
        match split.items() {
            Some(items) => {
                let items = items?;
                history.messages.reserve(items.len());
                let mut reader = R::default();
                for (at, item) in items.iter().enumerate() {
                    reader.item(at, item.get(), &mut history.messages)?;
                    if reader.settled(&history.messages) {
                        history.marks.push(Mark { end: end_in(body, item.get()), items: at + 1, messages: history.messages.len() });
                    }
                }
                reader.end(&mut history.messages);
                if let Some(last) = history.marks.last().filter(|_| !split.repeated) {
                    history.prefix = body[..last.end].to_vec();
                    history.before = split.before.clone();
                } else {
                    history.marks.clear();
                }
            }
            None => history.messages = R::not_a_list(split.history)?,
        }
        history.key_new();
        let mut rest = split.before;
        rest.extend(split.after);
        Ok((rest, self.keep(history)))
    }

    /// The recent request `body` continues furthest, and where; and how many bytes finding it
    /// compared. The most recent are compared first, and at most twice the body's bytes in all
    /// (its own conversation's last request, and what the others take to part from it), so
    /// that a caller's many requests that begin alike cannot make each of its requests compare
    /// all that is kept: the cost grows with the request.
    fn continued<R: Reader>(&self, body: &[u8], caller: u64) -> (Option<(Mark, Arc<History>)>, usize) {
        // Compared outside the lock: another client's request need not wait on this one.
        let all: Vec<Arc<History>> = lock(&self.histories).iter().cloned().collect();
        let (mut best, mut compared): (Option<(Mark, Arc<History>)>, usize) = (None, 0);
        for h in all {
            let budget = (2 * body.len()).saturating_sub(compared);
            if budget == 0 {
                break;
            }
            let (mark, n) = h.continued_by(body, caller, R::FIELD, budget);
            compared += n;
            if let Some(mark) = mark.filter(|m| best.as_ref().is_none_or(|(b, _)| m.end > b.end)) {
                best = Some((mark, h));
            }
        }
        (best, compared)
    }

    /// `body` read on from `base`'s `mark`. None where that fails, for the whole request to be
    /// read again and its error told with its place in what the client sent.
    fn continue_from<R: Reader>(&self, base: Arc<History>, mark: Mark, body: &[u8]) -> Option<Read> {
        let rest = &body[mark.end..];
        let doc = continued(R::FIELD, rest);
        // Where the doc's bytes stand in the body: past the stand-in, at the mark.
        let at_body = |item: &RawValue| end_in(&doc, item.get()) - (doc.len() - rest.len()) + mark.end;
        let split = Split::of(&doc, R::FIELD).ok()?;
        let items = split.items()?.ok().filter(|items| !split.repeated && items.first().is_some_and(|r| r.get() == "0"))?;
        let mut histories = lock(&self.histories);
        if let Some(at) = histories.iter().position(|h| Arc::ptr_eq(h, &base)) {
            histories.remove(at);
        }
        drop(histories);
        // Taken over where no other request holds it still, else copied.
        let mut history = Arc::try_unwrap(base).unwrap_or_else(|shared| {
            let mut copy = History {
                messages: shared.messages[..mark.messages].to_vec(),
                id: shared.id,
                prefix: shared.prefix[..mark.end].to_vec(),
                marks: shared.marks.clone(),
                before: shared.before.clone(),
                ..History::empty(shared.caller, shared.field)
            };
            copy.key_new();
            copy
        });
        history.truncate(mark);
        history.base = Some((history.id, mark.messages));
        history.id = next_id();
        let mut reader = R::default();
        for (at, item) in (mark.items..).zip(&items[1..]) {
            reader.item(at, item.get(), &mut history.messages).ok()?;
            if reader.settled(&history.messages) {
                history.marks.push(Mark { end: at_body(item), items: at + 1, messages: history.messages.len() });
            }
        }
        reader.end(&mut history.messages);
        let end = history.marks.last().map_or(mark.end, |m| m.end);
        history.prefix.extend_from_slice(&body[mark.end..end]);
        history.key_new();
        let mut rest = history.before.clone();
        rest.extend(split.after);
        Some((rest, self.keep(history)))
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
            (bytes, count) = (bytes + h.kept_bytes(), count + 1);
            bytes <= self.max_bytes && count <= RECENT_HISTORIES
        });
        history
    }
}

/// `R`'s history of the field `R::FIELD` holding `value`, read whole from a request as JSON
/// writes it and from the same pretty-printed, as some clients send it: both must read alike.
#[cfg(test)]
pub(crate) fn read_both<R: Reader>(value: Value) -> Result<Vec<Message>, String> {
    let request = serde_json::json!({"model": "m", R::FIELD: value});
    let [compact, pretty] = [request.to_string(), serde_json::to_string_pretty(&request).unwrap()].map(|body| {
        let (rest, history) = Recent::default().read::<R>(body.as_bytes(), 0).map_err(|e| e.to_string())?;
        assert_eq!(rest.keys().collect::<Vec<_>>(), ["model"], "the fields but {}", R::FIELD);
        Ok(history.messages.clone())
    });
    assert_eq!(compact, pretty);
    compact
}

/// `R`'s history of each of `bodies` read on through one [`Recent`], as a client's requests
/// come: each the same history, and the same rest of the request, as a read from nothing gives.
#[cfg(test)]
pub(crate) fn read_on<R: Reader>(bodies: &[Vec<u8>]) -> Vec<Arc<History>> {
    let recent = Recent::default();
    bodies
        .iter()
        .map(|body| {
            let (rest, history) = recent.read::<R>(body, 7).unwrap();
            let (whole_rest, whole) = Recent::default().read::<R>(body, 7).unwrap();
            let text = String::from_utf8_lossy(body);
            assert_eq!((&rest, &history.messages, &history.keys), (&whole_rest, &whole.messages, &whole.keys), "{text}");
            assert_eq!((&history.prefix, &history.marks), (&whole.prefix, &whole.marks), "{text}");
            assert_eq!((&history.at, history.items), (&whole.at, whole.items), "{text}");
            history
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// How many items [`Users`] has read on this thread.
        static READ: Cell<usize> = const { Cell::new(0) };
    }

    /// Reads each item's `content` as a user message.
    #[derive(Default)]
    struct Users;

    impl Reader for Users {
        const FIELD: &'static str = "messages";
        fn item(&mut self, at: usize, raw: &str, out: &mut Vec<Message>) -> Result<(), Unread> {
            READ.set(READ.get() + 1);
            let v: Value = serde_json::from_str(raw).map_err(|e| e.to_string())?;
            out.push(v["content"].as_str().map(|t| Message::new("user", t)).ok_or(Unread::Invalid(format!("messages[{at}]: no content")))?);
            Ok(())
        }
    }

    /// Reads as [`Users`] does, but holds each message back, for the ones after it that start
    /// with `+` to join it; a `!` is never held, so that only after one is nothing pending.
    #[derive(Default)]
    struct Joined(Option<Message>);

    impl Reader for Joined {
        const FIELD: &'static str = "messages";
        fn item(&mut self, at: usize, raw: &str, out: &mut Vec<Message>) -> Result<(), Unread> {
            let mut one = Vec::new();
            Users.item(at, raw, &mut one)?;
            let m = one.pop().unwrap();
            match (&mut self.0, m.content.strip_prefix('+')) {
                (Some(held), Some(more)) => held.content.push_str(more),
                (held, _) => {
                    out.extend(held.take());
                    if m.content == "!" { out.push(m) } else { *held = Some(m) }
                }
            }
            Ok(())
        }
        fn settled(&self, _: &[Message]) -> bool {
            self.0.is_none()
        }
        fn end(self, out: &mut Vec<Message>) {
            out.extend(self.0);
        }
    }

    fn body(messages: &[&str], after: &str) -> String {
        let messages: Vec<String> = messages.iter().map(|m| format!(r#"{{"role":"user","content":"{m}"}}"#)).collect();
        format!(r#"{{"model":"m","messages":[{}]{after}}}"#, messages.join(","))
    }

    /// Reads `body` through `recent`: its fields, its history, and how many items were read.
    fn read(recent: &Recent, body: &str) -> Result<(Read, usize), Unread> {
        read_from(recent, body, 0)
    }

    fn read_from(recent: &Recent, body: &str, caller: u64) -> Result<(Read, usize), Unread> {
        READ.set(0);
        let read = recent.read::<Users>(body.as_bytes(), caller)?;
        Ok((read, READ.get()))
    }

    fn parsed(recent: &Recent, body: &str) -> usize {
        read(recent, body).unwrap().1
    }

    /// A request that continues one reads only its new items, and reads the same as from
    /// nothing; one that differs from some item on (an item edited, even in its spelling)
    /// reads from that item on, and one that differs before its history (a field before it)
    /// reads all of it.
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
        assert_eq!((&history.prefix, &history.marks), (&whole.prefix, &whole.marks));
        assert_eq!(parsed(&recent, &body(&["a", "b", "c"], r#","stream":false"#)), 0, "the same messages again");
        assert_eq!(parsed(&recent, &body(&["a", "B", "c", "d"], "")), 3);
        assert_eq!(parsed(&recent, r#"{"model":"m","messages":[{"role":"user","content":"a"}, {"content":"b","role":"user"}]}"#), 1);
        assert_eq!(parsed(&recent, &body(&["a", "b", "c"], "").replace(r#""model":"m""#, r#""model":"n""#)), 3);
        // The first request's history was held while the second took it over: copied, not changed.
        assert_eq!(first.messages.len(), 2);
    }

    /// A reader that holds an item back is read on from only where nothing was held, and what
    /// it held at the end of the last request is read again with what follows it.
    #[test]
    fn a_history_is_read_on_only_from_a_settled_item() {
        let bodies: Vec<Vec<u8>> = [&["a", "+b"][..], &["a", "+b", "+c", "!"], &["a", "+b", "+c", "!", "d"], &["a", "+b", "+c", "!", "d", "+e", "f"], &["x"]]
            .iter()
            .map(|m| body(m, "").into_bytes())
            .collect();
        let read = read_on::<Joined>(&bodies);
        let contents: Vec<Vec<&str>> = read.iter().map(|h| h.messages.iter().map(|m| m.content.as_str()).collect()).collect();
        assert_eq!(contents, [&["ab"][..], &["abc", "!"], &["abc", "!", "d"], &["abc", "!", "de", "f"], &["x"]]);
        assert_eq!(read.iter().map(|h| h.marks.len()).collect::<Vec<_>>(), [0, 1, 1, 1, 0]);
    }

    /// A request is read on from only where its history's field is the one read before: the
    /// same bytes read as another protocol's history are read whole.
    #[test]
    fn only_the_same_protocols_request_is_read_on_from() {
        #[derive(Default)]
        struct Input;
        impl Reader for Input {
            const FIELD: &'static str = "input";
            fn item(&mut self, at: usize, raw: &str, out: &mut Vec<Message>) -> Result<(), Unread> {
                Users.item(at, raw, out)
            }
        }
        let recent = Recent::default();
        let both = r#"{"input":[{"content":"a"}],"messages":[{"content":"a"}]}"#;
        recent.read::<Users>(both.as_bytes(), 0).unwrap();
        READ.set(0);
        let (rest, history) = recent.read::<Input>(both.as_bytes(), 0).unwrap();
        assert_eq!((READ.get(), rest.keys().map(String::as_str).collect::<Vec<_>>(), history.messages.len()), (1, vec!["messages"], 1));
    }

    /// The history field is read as a `Value` of the request would read it: the last of a
    /// repeated one counts, and a request that is not one JSON object is refused.
    #[test]
    fn a_history_field_is_read_raw_as_a_value_reads_it() {
        let split = Split::of(br#"{"input":[1],"model":"m","input":[2, 3]}"#, "input").unwrap();
        assert_eq!((split.history.map(RawValue::get), split.repeated), (Some("[2, 3]"), true));
        assert_eq!(Value::Object(split.after), serde_json::json!({"model": "m"}));
        assert_eq!(Split::of(br#"{"model":"m"}"#, "input").unwrap().history.map(RawValue::get), None);
        for bad in [&br#"{"input":[]} {}"#[..], br#"[{"input":[]}]"#, br#"{"input":[}"#] {
            assert!(Split::of(bad, "input").is_err(), "{}", String::from_utf8_lossy(bad));
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

    /// Of the recent requests one continues, the one it continues furthest is taken (two such
    /// are kept where two requests read on from one at once); a request that continues one
    /// short of its end (a client that moved its cache mark, or edited a message) replaces it.
    #[test]
    fn the_longest_request_continued_is_taken() {
        let recent = Recent::default();
        let ((_, longer), _) = read(&Recent::default(), &body(&["a", "b"], "")).unwrap();
        parsed(&recent, &body(&["a"], ""));
        lock(&recent.histories).push_back(longer);
        assert_eq!(parsed(&recent, &body(&["a", "b", "c"], "")), 1);
        assert_eq!(parsed(&recent, &body(&["a", "x"], "")), 1);
        assert_eq!(lock(&recent.histories).len(), 2, "[a, x] replaced one of the two it continues as far");
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
        assert!(lock(&recent.histories).len() <= 1);
        assert!(read(&recent, r#"{"messages":7}"#).err().unwrap().to_string().contains("no messages array"));
        assert!(read(&recent, "[1]").err().unwrap().to_string().contains("not a JSON object"));
    }

    /// A caller's many requests that begin alike do not make each of its requests compare all
    /// that is kept: at most twice its own bytes, and it still reads on from the one it
    /// continues where that is the most recent.
    #[test]
    fn finding_the_request_continued_compares_what_the_request_brings() {
        let recent = Recent::default();
        let shared = "x".repeat(10_000);
        for i in 0..100 {
            parsed(&recent, &body(&[&shared, &i.to_string()], ""));
        }
        let next = body(&[&shared, "99", "more"], "");
        let (found, compared) = recent.continued::<Users>(next.as_bytes(), 0);
        assert!(compared <= 2 * next.len(), "{compared} bytes compared for a request of {}", next.len());
        assert_eq!(found.map(|(mark, _)| mark.items), Some(2));
        assert_eq!(parsed(&recent, &next), 1);
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
        let recent = Recent { max_bytes: 400, ..Recent::default() };
        let kept = |r: &Recent| lock(&r.histories).iter().map(|h| h.kept_bytes()).collect::<Vec<_>>();
        parsed(&recent, &body(&["a"], ""));
        parsed(&recent, &body(&["b"], ""));
        let each = kept(&recent)[0];
        assert_eq!(kept(&recent), [each, each]);
        parsed(&recent, &body(&["c"], ""));
        parsed(&recent, &body(&["d"], ""));
        assert_eq!(kept(&recent).len(), 400 / each);
        assert!(kept(&recent).iter().sum::<usize>() <= 400);
        assert_eq!(parsed(&recent, &body(&["d"], "")), 0, "the most recent is kept");
        parsed(&recent, &body(&[&"x".repeat(300)], ""));
        assert!(kept(&recent).iter().all(|&n| n < 300), "a request over the bound is not kept");
        assert_eq!(parsed(&recent, &body(&[&"x".repeat(300)], "")), 1);
    }
}
