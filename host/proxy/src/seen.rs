//! The client's view of a session's log (see `sessions`): the log less workmem's own tool
//! calls and their answers, which the client never received, as counts of its items.

use crate::history::{History, ItemMap, ItemSet, items};
use crate::own::own_tool;
use std::collections::{BTreeMap, HashSet, VecDeque};
use workmem_store::Message;

/// The client's view of a session's log, as counts of its items.
#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) items: ItemMap<usize>,
    /// The items that are system messages amid the history: the client's to change (Claude
    /// Code rewrites its reminders from one request to the next), so a request may leave them
    /// out and still continue the session; a changed one is logged where it now appears.
    pub(crate) system: ItemSet,
    pub(crate) len: usize,
    /// How the log's messages fold into what the client saw.
    folding: Folding,
    /// The client's opening, by `seq`: everything before the model's first answer.
    pub(crate) pinned: Vec<u64>,
    /// Whether the model has answered yet.
    pub(crate) answered: bool,
    /// The items of messages other than system ones: those a request must hold.
    pub(crate) client_len: usize,
    /// How many of those there were when the model's last answer began: a request that holds
    /// those and nothing of the answer resends the request that answer was for.
    pub(crate) before_answer: usize,
    /// The last [`FILED_BY`] distinct ones of those, the latest last: what the session is
    /// filed by.
    pub(crate) last_items: Vec<u64>,
    /// The last [`FILED_BY`] distinct system items: what a session of system messages only is
    /// filed by.
    pub(crate) last_system: Vec<u64>,
    /// Where the session is filed ([`Lookup`]): each key and when.
    pub(crate) filed: Vec<(u64, u64)>,
    /// The keys its answers a client may chain to are filed under (`Lookup::answers`).
    pub(crate) answers: Vec<u64>,
    /// Counts the messages folded in: a view whose count has not moved is the same view.
    pub(crate) generation: u64,
    /// The last request this view was matched against, kept matched as the view changes.
    matching: Option<Matching>,
}

/// A request matched item by item against a view ([`Seen::new_in`]), kept so that the next
/// request, read on from it (`history::Recent`), is matched from where the two part rather than
/// from its first item: matched whole, a 10,000-message request took an eighth of the proxy's
/// work on it. An item is held by the view where fewer of its key came before it in the request
/// than the view holds, so a request's match is its items' counts, which grow and shrink at its
/// end, against the view's, which grow as it does ([`Seen::add`] keeps it up to date).
struct Matching {
    /// The request ([`History::id`]) and how many of its messages are matched.
    history: u64,
    messages: usize,
    /// Its items in order.
    items: Vec<Item>,
    /// How many times each key comes in it.
    counts: ItemMap<u32>,
    /// Each key's items the view does not hold (those past the view's count of it), by their
    /// place in `items`.
    fresh: ItemMap<VecDeque<u32>>,
    /// How many items of messages other than system ones the view holds.
    matched: usize,
    /// The tool calls and results with an item the view holds, by message, with how many.
    calls: BTreeMap<u32, u32>,
}

/// An item of a matched request: its message, its place there, its key, and whether the
/// message is a tool call or a tool result.
#[derive(Clone, Copy)]
struct Item {
    at: u32,
    i: u32,
    key: u64,
    call: bool,
}

impl Matching {
    fn new(history: u64) -> Self {
        Matching { history, messages: 0, items: Vec::new(), counts: ItemMap::default(), fresh: ItemMap::default(), matched: 0, calls: BTreeMap::new() }
    }

    /// The bytes it keeps, about.
    fn bytes(&self) -> usize {
        self.items.len() * (std::mem::size_of::<Item>() + 32)
    }

    /// `history`'s messages from the `messages` matched on, against `seen`'s items.
    fn extend(&mut self, history: &History, seen: &Seen) {
        for (at, (m, keys)) in history.messages.iter().zip(&history.keys).enumerate().skip(self.messages) {
            let call = m.role == "tool" || !m.tool_calls.is_empty();
            for (i, &key) in keys.iter().enumerate() {
                let item = Item { at: at as u32, i: i as u32, key, call };
                let count = self.counts.entry(key).or_default();
                let before = *count;
                *count += 1;
                if (before as usize) < seen.items.get(&key).copied().unwrap_or(0) {
                    self.held(item, seen);
                } else {
                    self.fresh.entry(key).or_default().push_back(self.items.len() as u32);
                }
                self.items.push(item);
            }
        }
        self.messages = history.messages.len();
    }

    /// `item` is held by the view.
    fn held(&mut self, item: Item, seen: &Seen) {
        self.matched += usize::from(!seen.system.contains(&item.key));
        if item.call {
            *self.calls.entry(item.at).or_default() += 1;
        }
    }

    /// Its messages from `messages` on taken back, last first: each item taken is its key's
    /// last, so it is fresh if any of its key is.
    fn truncate(&mut self, messages: usize, seen: &Seen) {
        while let Some(&item) = self.items.last().filter(|item| item.at as usize >= messages) {
            let at = self.items.len() as u32 - 1;
            self.items.pop();
            match self.fresh.get_mut(&item.key) {
                Some(fresh) => {
                    debug_assert_eq!(fresh.back(), Some(&at));
                    fresh.pop_back();
                    if fresh.is_empty() {
                        self.fresh.remove(&item.key);
                    }
                }
                None => self.matched -= usize::from(!seen.system.contains(&item.key)),
            }
            match self.counts.get_mut(&item.key) {
                Some(1) => drop(self.counts.remove(&item.key)),
                Some(n) => *n -= 1,
                None => unreachable!("a matched item's key is counted"),
            }
        }
        self.calls.split_off(&(messages as u32));
        self.messages = self.messages.min(messages);
    }

    /// The view now holds `held` of `key`, one more: the first of its fresh items, if any,
    /// is held.
    fn gained(&mut self, key: u64, held: usize, seen: &Seen) {
        if self.counts.get(&key).is_some_and(|&n| n as usize >= held)
            && let Some(fresh) = self.fresh.get_mut(&key)
            && let Some(at) = fresh.pop_front()
        {
            if fresh.is_empty() {
                self.fresh.remove(&key);
            }
            self.held(self.items[at as usize], seen);
        }
    }
}

/// How the log's messages fold into what the client saw: workmem's own calls and their
/// answers left out, and an answer that called only workmem's tools joined to the one that
/// continued it (the client got both as one answer). [`Seen`] keeps its view by it, and a
/// request chained to an answer ([`seen_until`]) is given the history it would have resent.
#[derive(Default)]
struct Folding {
    /// The IDs of workmem's own calls: their answers are not the client's.
    own_calls: HashSet<String>,
    /// The last answer called only workmem's tools, so the next one continues it.
    continues: bool,
    /// That answer as the client saw it, while the next one continues it: every other message
    /// is kept as its items alone, not as a copy (a session kept its last message, a tool
    /// result of megabytes, in memory for good).
    last: Option<Message>,
}

/// One logged message as the client saw it.
enum Folded<'m> {
    /// workmem's answer to one of its own calls.
    Hidden,
    /// The client's own message, as logged.
    Same(&'m Message),
    /// An answer as the client saw it, and the one before it that it joins, if any: the
    /// client's view holds `visible` in that one's place.
    Answer { visible: Message, joins: Option<Box<Message>> },
}

impl Folding {
    fn hides(&self, m: &Message) -> bool {
        m.role == "tool" && m.tool_call_id.as_ref().is_some_and(|id| self.own_calls.contains(id))
    }

    fn fold<'m>(&mut self, m: &'m Message) -> Folded<'m> {
        if self.hides(m) {
            return Folded::Hidden;
        }
        if m.role != "assistant" {
            self.continues = false;
            self.last = None;
            return Folded::Same(m);
        }
        let (own, theirs): (Vec<_>, Vec<_>) = m.tool_calls.iter().cloned().partition(|c| own_tool(&c.name));
        self.own_calls.extend(own.iter().map(|c| c.id.clone()));
        let (visible, joins) = match self.last.take() {
            Some(last) if self.continues => {
                let mut visible = last.clone();
                visible.content.push_str(&m.content);
                visible.tool_calls.extend(theirs.iter().cloned());
                (visible, Some(Box::new(last)))
            }
            _ => (Message { tool_calls: theirs.clone(), ..Message::new("assistant", m.content.clone()) }, None),
        };
        self.continues = !own.is_empty() && theirs.is_empty();
        self.last = self.continues.then(|| visible.clone());
        Folded::Answer { visible, joins }
    }
}

/// The client's view of `log` up to the answer the provider gave the ID `id` (see
/// `workmem_store::Message::response`), the rounds that continued it included: the history a
/// client that chained its next request to `id` would have resent. None where no answer of
/// the log has that ID.
pub(crate) fn seen_until(log: impl IntoIterator<Item = Message>, id: &str) -> Option<Vec<Message>> {
    let mut folding = Folding::default();
    let mut out: Vec<Message> = Vec::new();
    let mut found = false;
    for m in log {
        // Past the answer, only workmem's own rounds that continued it are the client's.
        if found && (!folding.continues || !(m.role == "assistant" || folding.hides(&m))) {
            break;
        }
        found |= m.response.as_deref() == Some(id);
        let answer = match folding.fold(&m) {
            Folded::Hidden => continue,
            Folded::Same(_) => None,
            Folded::Answer { visible, joins } => Some((visible, joins.is_some())),
        };
        match answer {
            None => out.push(m),
            Some((visible, joins)) => {
                if joins {
                    out.pop();
                }
                out.push(visible);
            }
        }
    }
    found.then_some(out)
}

/// How many of its last items a session is filed by.
pub(crate) const FILED_BY: usize = 4;

/// Puts `k` last in `last`, which keeps [`FILED_BY`] distinct items.
pub(crate) fn file_last(last: &mut Vec<u64>, k: u64) {
    last.retain(|&l| l != k);
    last.push(k);
    if last.len() > FILED_BY {
        last.remove(0);
    }
}

impl Seen {
    pub(crate) fn add(&mut self, m: &Message) {
        let system = m.role == "system";
        for k in items(m) {
            if system {
                self.system.insert(k);
                file_last(&mut self.last_system, k);
            } else {
                self.client_len += 1;
                file_last(&mut self.last_items, k);
            }
            let held = self.items.entry(k).or_default();
            *held += 1;
            let held = *held;
            self.len += 1;
            if let Some(mut matching) = self.matching.take() {
                matching.gained(k, held, self);
                self.matching = Some(matching);
            }
        }
    }

    pub(crate) fn remove(&mut self, m: &Message) {
        // A request matched item by item is matched again whole: which of its items the view
        // then still holds would take a pass over them.
        self.matching = None;
        for k in items(m) {
            if let Some(n) = self.items.get_mut(&k) {
                *n -= 1;
                self.len -= 1;
                self.client_len -= usize::from(m.role != "system");
                if *n == 0 {
                    self.items.remove(&k);
                    self.last_items.retain(|&l| l != k);
                    self.last_system.retain(|&l| l != k);
                }
            }
        }
    }

    /// The keys the session is filed by now: none for an empty view, which no request holds;
    /// its last system items while it has nothing else (a request that continues it holds
    /// them: it may leave out system items only once the session has others).
    pub(crate) fn file_keys(&self) -> Vec<u64> {
        match self.len {
            0 => Vec::new(),
            _ if self.client_len == 0 => self.last_system.clone(),
            _ => self.last_items.clone(),
        }
    }

    /// Folds in one message as it is logged.
    pub fn push(&mut self, m: &Message) {
        self.generation += 1;
        match self.folding.fold(m) {
            Folded::Hidden => {}
            Folded::Same(m) => {
                self.add(m);
                self.before_answer = self.client_len;
            }
            Folded::Answer { visible, joins } => {
                if let Some(joined) = joins {
                    self.remove(&joined);
                }
                self.add(&visible);
            }
        }
    }

    /// Whether `history` resends the request the model's last answer was for: it holds every
    /// item the client had sent by then, nothing of the answer (which the client never got: it
    /// timed out, or the connection dropped, after the answer was logged), and nothing new but
    /// system items.
    pub fn retried_by(&self, history: &History) -> bool {
        if self.before_answer == 0 || self.before_answer == self.client_len {
            return false;
        }
        let mut used: ItemMap<usize> = ItemMap::default();
        let mut matched = 0;
        for (m, keys) in history.messages.iter().zip(&history.keys) {
            for &k in keys {
                let logged = self.items.get(&k).copied().unwrap_or(0);
                let n = used.entry(k).or_default();
                match (*n < logged, self.system.contains(&k)) {
                    (true, system) => {
                        *n += 1;
                        matched += usize::from(!system);
                    }
                    (false, _) if m.role == "system" => {}
                    (false, _) => return false,
                }
            }
        }
        matched == self.before_answer
    }

    /// When `history` (its messages' items worked out in [`History`]) holds every item of this
    /// view: how many that is, and what of `history` is new (a message with some new calls
    /// keeps only those). Clients move texts around (Claude Code puts its reminders after the
    /// tool results it adds; Codex keeps the text of a round that called only workmem's tools
    /// as a message of its own) and reword them, so a new text before the last logged call or
    /// result is the client's regrouping and is left out; a new result there is an edit, and
    /// the history does not continue this view.
    ///
    /// Its cost is the request's, whatever the view's size: a view with more items than the
    /// request cannot be held, and the view is read item by item only as the request names them.
    /// A request read on from the last one matched here costs what it adds to that one
    /// ([`Matching`]).
    pub fn new_in(&mut self, history: &History) -> Option<(usize, Vec<Message>)> {
        // A request that holds the view has as many items, and holds its last ones: the
        // sessions a request is tried against are filed under one of its items (an answer of
        // "ok" ends many), and most are told apart here rather than by a match of all of it.
        if self.client_len > history.items() || !self.last_items.iter().all(|&k| history.holds(k)) {
            return None;
        }
        self.matched_in(history)
    }

    /// [`Seen::new_in`] by a match of `history`'s items, on from the last request matched
    /// where it continues that one.
    fn matched_in(&mut self, history: &History) -> Option<(usize, Vec<Message>)> {
        if self.len == 0 {
            return None;
        }
        let kept = self.matching.take();
        let (matching, kept) = match kept {
            Some(m) if m.history == history.id => (m, None),
            Some(mut m) if history.base.is_some_and(|(base, from)| base == m.history && from <= m.messages) => {
                m.truncate(history.base.map_or(0, |(_, from)| from), self);
                m.history = history.id;
                m.extend(history, self);
                (m, None)
            }
            kept => {
                let mut m = Matching::new(history.id);
                m.extend(history, self);
                (m, kept)
            }
        };
        let new = self.new_by(&matching, history);
        // Kept only where the request holds this view, so that only a session a request goes
        // on keeps its match, which `warm` then counts (threat model rule 3); another request
        // tried here does not undo what this client's next one uses.
        self.matching = if new.is_some() { Some(matching) } else { kept };
        Some((self.len, new?))
    }

    /// What of `history`, matched as `matching`, is new to this view; none where it does not
    /// hold the view.
    fn new_by(&self, matching: &Matching, history: &History) -> Option<Vec<Message>> {
        // Every item of the client's is held; system ones it may leave out.
        if matching.matched != self.client_len {
            return None;
        }
        let last_logged_call = matching.calls.last_key_value().map(|(&at, _)| at as usize);
        let mut fresh: Vec<u32> = matching.fresh.values().flatten().copied().collect();
        fresh.sort_unstable();
        let mut new = Vec::new();
        for run in fresh.chunk_by(|&a, &b| matching.items[a as usize].at == matching.items[b as usize].at) {
            let at = matching.items[run[0] as usize].at as usize;
            let m = &history.messages[at];
            if last_logged_call.is_some_and(|last| at < last) {
                match (m.role.as_str(), m.tool_calls.is_empty()) {
                    ("tool", _) => return None,
                    (_, true) => continue,
                    _ => {}
                }
            }
            if m.role == "assistant" && !m.tool_calls.is_empty() && run.len() < m.tool_calls.len() {
                let calls = run.iter().map(|&f| m.tool_calls[matching.items[f as usize].i as usize].clone()).collect();
                new.push(Message { tool_calls: calls, content: String::new(), ..m.clone() });
            } else {
                new.push(m.clone());
            }
        }
        Some(new)
    }

    /// The bytes kept for the next request's match, about.
    pub fn matching_bytes(&self) -> usize {
        self.matching.as_ref().map_or(0, Matching::bytes)
    }

    /// Lets go of what is kept for the next request's match: that one is matched whole.
    pub fn forget_matching(&mut self) {
        self.matching = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workmem_store::ToolCall;

    /// A small generator (xorshift), so that the conversations are the same on every run.
    struct Dice(u64);

    impl Dice {
        fn roll(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    fn calls(text: &str, ids: &[String], name: &str) -> Message {
        Message {
            tool_calls: ids.iter().map(|id| ToolCall { id: id.clone(), name: name.into(), arguments: "{}".into() }).collect(),
            ..Message::new("assistant", text)
        }
    }

    fn result(id: &str, text: &str) -> Message {
        Message { tool_call_id: Some(id.into()), ..Message::new("tool", text) }
    }

    /// What a client adds to its history: texts from a few (so that many repeat), system
    /// reminders, tool calls and their results.
    fn added(dice: &mut Dice, n: &mut usize) -> Vec<Message> {
        let text = |dice: &mut Dice| ["ok", "go on", "look again", "done?"][dice.roll(4)].to_string();
        match dice.roll(5) {
            0 => vec![Message::new("user", text(dice))],
            1 => (0..1 + dice.roll(3)).map(|_| Message::new("system", format!("<reminder {}>", dice.roll(3)))).collect(),
            2 => {
                *n += 1;
                let ids: Vec<String> = (0..1 + dice.roll(2)).map(|k| format!("c{n}.{k}")).collect();
                let mut out = vec![calls(&text(dice), &ids, "bash")];
                out.extend(ids.iter().map(|id| result(id, &text(dice))));
                out
            }
            3 => vec![Message::new("assistant", text(dice))],
            _ => vec![Message::new("user", format!("task {}", dice.roll(50)))],
        }
    }

    /// The model's answer as the proxy logs it: a text, a call of the client's tools, or a
    /// call of workmem's own (answered in the log, then answered again: the client sees one
    /// answer), which takes the view's last message back out ([`Seen::remove`]).
    /// Returns what is logged, then what the client sees.
    fn answer(dice: &mut Dice, n: &mut usize) -> (Vec<Message>, Message) {
        *n += 1;
        match dice.roll(4) {
            0 => {
                let own = calls("", &[format!("own{n}")], workmem_agent::tools::OWN[0]);
                (vec![own, result(&format!("own{n}"), "kept"), Message::new("assistant", "ok")], Message::new("assistant", "ok"))
            }
            1 => {
                let call = calls("reading", &[format!("a{n}")], "bash");
                (vec![call.clone()], call)
            }
            _ => {
                let text = Message::new("assistant", ["ok", "done"][dice.roll(2)]);
                (vec![text.clone()], text)
            }
        }
    }

    /// Requests read on from the last one (dropping or rewording its end, regrouping,
    /// resending, adding) are matched against a view that keeps its last match, and against
    /// one matched whole each time: the two agree on every request.
    #[test]
    fn a_request_matched_on_from_the_last_is_matched_as_a_whole_one() {
        for seed in 1..=40u64 {
            let mut dice = Dice(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let (mut kept, mut whole) = (Seen::default(), Seen::default());
            let mut n = 0;
            // What the client sends on from, and the last request (which the next is read on
            // from where they part).
            let mut sent: Vec<Message> = vec![Message::new("system", "guide"), Message::new("user", "the task")];
            let mut last = History::new(sent.clone());
            let mut agreed_on = 0;
            for step in 0..60 {
                // Now and then less up to two of its last messages (retried, edited).
                let dropped = if dice.roll(6) == 0 { dice.roll(3) } else { 0 };
                let mut history = sent[..sent.len().saturating_sub(dropped)].to_vec();
                // Now and then without the system messages among its last few, which a
                // client may leave out (what follows them moves up).
                if dice.roll(4) == 0 {
                    let tail = history.len().saturating_sub(6);
                    let mut at = 0;
                    history.retain(|m| {
                        at += 1;
                        at <= tail || m.role != "system"
                    });
                }
                for _ in 0..1 + dice.roll(3) {
                    history.extend(added(&mut dice, &mut n));
                }
                let from = last.messages.iter().zip(&history).take_while(|(a, b)| a == b).count();
                let on = if dice.roll(8) == 0 { History::new(history.clone()) } else { History::on(&last, from, history.clone()) };
                if kept.len == 0 {
                    // A new session: all of its first request is logged.
                    history.iter().for_each(|m| {
                        kept.push(m);
                        whole.push(m);
                    });
                }
                // Matched whole, and without the checks that tell most other requests apart
                // first, which must refuse nothing the match would take.
                whole.forget_matching();
                let (a, b) = (kept.new_in(&on), whole.matched_in(&History::new(history.clone())));
                assert_eq!(a, b, "seed {seed}, step {step}");
                // Matched again with the view unchanged (the proxy does, once it holds the
                // session), it is the same.
                assert_eq!(kept.new_in(&on), b, "seed {seed}, step {step}, again");
                // A request that does not hold the view leaves no match of itself behind.
                if b.is_none() {
                    assert!(kept.matching.as_ref().is_none_or(|m| m.history != on.id), "seed {seed}, step {step}: a refused request's match kept");
                }
                last = on;
                // Refused: the client goes on from what it sent before.
                let Some((_, new)) = a else { continue };
                agreed_on += 1;
                for m in &new {
                    kept.push(m);
                    whole.push(m);
                }
                sent = history;
                // Most requests the upstream answers, and the client adds the answer; the
                // answers to some are lost on the way.
                if dice.roll(8) != 0 {
                    let (logged, seen_by_client) = answer(&mut dice, &mut n);
                    for m in &logged {
                        kept.push(m);
                        whole.push(m);
                    }
                    sent.push(seen_by_client);
                }
            }
            assert!(agreed_on > 5, "seed {seed}: only {agreed_on} requests continued the view");
        }
    }

    /// A request chained to an answer is given the client's view up to it, workmem's own
    /// rounds folded in as the client got them; that view, and what the request adds, holds
    /// the session's whole view where the answer was the last, and the request's own items
    /// are what is new.
    /// A reasoning item logged alone (the client resent what a broken stream gave it before
    /// its retry was answered) and a client that sends it with the answer that followed, as
    /// one turn: the request still holds the view.
    #[test]
    fn a_reasoning_item_alone_goes_with_what_follows() {
        let reasoning = |id: &str| serde_json::json!({"type": "reasoning", "id": id});
        let alone = Message { opaque: vec![reasoning("r1")], ..Message::new("assistant", "") };
        let mut call = calls("", &["c1".into()], "bash");
        call.opaque = vec![reasoning("r2")];
        let mut seen = Seen::default();
        for m in [Message::new("user", "read a"), alone, call.clone()] {
            seen.add(&m);
        }
        let mut regrouped = call;
        regrouped.opaque.insert(0, reasoning("r1"));
        let history = History::new(vec![Message::new("user", "read a"), regrouped, result("c1", "one line")]);
        let (_, new) = seen.new_in(&history).expect("the request holds the view");
        assert_eq!(new.len(), 1, "only the result is new: {new:?}");
    }

    #[test]
    fn a_chain_is_given_the_view_up_to_its_answer() {
        let answered = |mut m: Message, id: &str| {
            m.response = Some(id.into());
            m
        };
        let log = vec![
            Message::new("user", "read a"),
            answered(calls("noting", &["own1".into()], "update_memory"), "r1"),
            result("own1", "applied update"),
            answered(calls(" and reading", &["c1".into()], "read_file"), "r2"),
            result("c1", "one line"),
            answered(Message::new("assistant", "done"), "r3"),
        ];
        let joined = calls("noting and reading", &["c1".into()], "read_file");
        assert_eq!(seen_until(log.clone(), "r1"), Some(vec![log[0].clone(), joined.clone()]), "an answer that workmem's round continued");
        assert_eq!(seen_until(log.clone(), "r2"), seen_until(log.clone(), "r1"));
        let whole = seen_until(log.clone(), "r3").unwrap();
        assert_eq!(whole, [log[0].clone(), joined, log[4].clone(), Message::new("assistant", "done")]);
        assert_eq!(seen_until(log.clone(), "r9"), None);

        let mut seen = Seen::default();
        for m in &log {
            seen.push(m);
        }
        let request = History::new(vec![Message::new("user", "more")]);
        let (_, new) = seen.new_in(&History::chained(whole, &request)).expect("the chain holds the view");
        assert_eq!(new, [Message::new("user", "more")]);
        let earlier = History::chained(seen_until(log, "r2").unwrap(), &History::new(vec![result("c1", "two lines")]));
        assert!(seen.new_in(&earlier).is_none(), "chained to an earlier answer: not this view");
    }
}
