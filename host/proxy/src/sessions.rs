//! Finding a client's session without its help. A client resends its whole history with each
//! request; the session a request belongs to is one whose history, as that client saw it, the
//! request holds all of (the most such, among the sessions of the client's own name for its
//! session when it gives one). A request that holds none starts a session, recorded as a branch
//! of the last one of that name: a client that edited or compacted its own history is never
//! merged into a history it did not send.
//!
//! "Holds" is by item, not by position: clients regroup what they resend (Claude Code merges
//! an assistant's successive tool uses, and their results, into one message each), so each
//! message counts as its items (each tool call by its ID, each result by its call's, each text
//! by its role and text), and a request holds a history when it holds each of its items.
//!
//! What the client saw differs from the log: the log also holds workmem's own tool calls and
//! their answers, which the client never received. [`Seen`] keeps the client's view of the log.
//!
//! A session belongs to its caller: the credentials its first request carried, as a keyed
//! hash ([`Index::owner`]). A request is tried only against the sessions of its own caller, so
//! two keys that send the same history never share a session, and a stranger's request never
//! continues, extends or reads another's (threat model rule 11). A session made by a request is
//! held by nobody until the upstream has accepted that request ([`Index::accept`]); one whose
//! first request was refused is removed ([`Index::forget`]). A request under other
//! credentials that gives another caller's name for a session (a rotated key, or a guess)
//! starts a branch of that session that says so, with none of its memory.
//!
//! A request is not held against every session of its name: anyone who reaches the proxy can
//! start sessions, and a search through all of them made each request cost as much as all of
//! them together (threat model rule 5). A request that holds a view holds its last items, so
//! each session is filed by those ([`Lookup`]), and only sessions filed under the request's own
//! items are tried, at most [`CANDIDATES`](crate::lookup::CANDIDATES), those filed under its rarest items first: many
//! sessions may end alike (an answer of "ok"), but seldom in all of their last few items.

use crate::history::{self, History, ItemMap};
use crate::locks::lock;
use crate::lookup::Lookup;
use crate::seen::Seen;
use sha2::Digest;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use workmem_llm::Tokenizer;
use workmem_store::{Entry, Message, Proxied, Session, Sessions};

/// One session the proxy keeps.
pub(crate) struct Tracked {
    pub id: String,
    proxied: Proxied,
    /// Its place in the index, and where the index files it.
    slot: usize,
    lookup: Arc<Mutex<Lookup>>,
    /// The client's view, which every search reads: locked only for a moment, never across
    /// a request upstream.
    seen: Mutex<Seen>,
    /// Whether the upstream has accepted a request of this session's: until then no other
    /// request may continue it ([`Index::accept`]).
    accepted: AtomicBool,
    /// The session's files, for what reads them while a request holds its exchange (a branch
    /// taking its memory).
    files: Session,
    /// Held for a whole exchange: one client request at a time per session.
    pub exchange: Mutex<Exchange>,
    /// The sequence number the log's next record gets, as this process last knew it: on a
    /// [shared](workmem_store::SessionStore::shared) store, a log that has moved past it was
    /// written by another replica, and the view is read again ([`Index::reload`]).
    logged: std::sync::atomic::AtomicU64,
}

/// What one exchange at a time works with.
pub(crate) struct Exchange {
    pub session: Session,
    /// Counts texts once per session: each request repeats most of the last.
    pub tokenizer: Option<(String, Tokenizer)>,
    /// The last request sent upstream, which the next one is built on from, and its body, which
    /// the next one mostly repeats and is written on from.
    pub written: crate::written::Written,
    /// The length of the last body sent upstream, in any protocol.
    pub sent: usize,
}

impl Exchange {
    /// About what this session keeps in memory between requests, at most: the last body
    /// upstream, its messages, the store's view and the texts counted are each about the size
    /// of that body.
    pub fn warm_bytes(&self) -> usize {
        self.sent.saturating_mul(4)
    }

    /// Lets go of all that (see [`crate::warm`]); the next request builds it again.
    fn cool(&mut self) {
        self.written = Default::default();
        self.tokenizer = self.tokenizer.take().map(|(model, tokenizer)| (model, tokenizer.fresh()));
        self.session.release_view();
    }
}

impl crate::warm::Cools for Tracked {
    fn cool(&self) {
        lock(&self.seen).forget_matching();
        match self.exchange.try_lock() {
            Ok(mut held) => held.cool(),
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner().cool(),
            // Busy with a request: it is kept again, as just used, when the request ends.
            Err(std::sync::TryLockError::WouldBlock) => {}
        }
    }
}

/// The key a session's scope is filed under ([`history::scope`]).
fn scope_of(p: &Proxied) -> u64 {
    history::scope(&p.protocol, p.caller.as_deref().unwrap_or_default(), p.client.as_deref())
}

impl Tracked {
    fn new(session: Session, id: String, proxied: Proxied, slot: usize, lookup: Arc<Mutex<Lookup>>, accepted: bool) -> Self {
        if accepted {
            lock(&lookup).scopes.entry(scope_of(&proxied)).or_default().last_made = Some(id.clone());
        }
        let files = session.clone();
        let exchange = Mutex::new(Exchange { session, tokenizer: None, written: Default::default(), sent: 0 });
        Tracked { id, proxied, slot, lookup, seen: Mutex::default(), accepted: AtomicBool::new(accepted), files, exchange, logged: 1.into() }
    }

    /// Whether another process wrote the log since this one last did, as far as the store
    /// can tell now (a store it cannot ask is taken as unchanged: the request then fails on
    /// its own where the store does).
    pub fn outdated(&self, exchange: &Exchange) -> bool {
        exchange.session.next_seq().is_ok_and(|next| next != self.logged.load(Ordering::Acquire))
    }

    /// The log as this process leaves it, once an exchange ends.
    pub fn note_logged(&self, exchange: &Exchange) {
        if let Ok(next) = exchange.session.next_seq() {
            self.logged.store(next, Ordering::Release);
        }
    }

    /// Whether the upstream has accepted one of its requests.
    pub fn accepted(&self) -> bool {
        self.accepted.load(Ordering::Acquire)
    }

    /// See [`Seen::new_in`].
    pub fn new_in(&self, history: &History) -> Option<(usize, Vec<Message>)> {
        lock(&self.seen).new_in(history)
    }

    /// About what it keeps in memory between requests, held by `exchange` (see
    /// [`Exchange::warm_bytes`]), its view's last match included.
    pub fn warm_bytes(&self, exchange: &Exchange) -> usize {
        exchange.warm_bytes().saturating_add(lock(&self.seen).matching_bytes())
    }

    /// Whether the view is still the one `found` was found in: then what is new in the request
    /// is still what it found.
    pub fn unchanged_since(&self, found: &Found) -> bool {
        lock(&self.seen).generation == found.generation
    }

    /// Logs what is new (under the exchange the caller holds) and folds it into the view.
    pub fn append(&self, exchange: &Exchange, new: Vec<Message>) -> workmem_store::Result<()> {
        for record in exchange.session.append_messages(new)? {
            if let Entry::Message(m) = &record.entry {
                self.observe(record.seq, m);
            }
        }
        Ok(())
    }

    /// Folds in one message the log holds as `seq`.
    pub fn observe(&self, seq: u64, m: &Message) {
        let mut seen = lock(&self.seen);
        if m.role == "assistant" {
            seen.answered = true;
        } else if !seen.answered {
            seen.pinned.push(seq);
        }
        seen.push(m);
        let keys = seen.file_keys();
        if !keys.iter().eq(seen.filed.iter().map(|(k, _)| k)) {
            seen.filed = lock(&self.lookup).file(scope_of(&self.proxied), self.slot, &seen.filed, &keys);
        }
        if let Some(id) = &m.response {
            let key = history::answer(&self.proxied.protocol, self.proxied.caller.as_deref().unwrap_or_default(), id);
            lock(&self.lookup).answers.insert(key, self.slot);
            seen.answers.push(key);
        }
    }

    /// The client's opening, by `seq`: its system prompt and its first turn (the task), all it
    /// sent before the model first answered. Compactions never replace them: an agent that
    /// lost its task would go on without it, as `workmem agent` pins its own.
    pub fn pinned(&self) -> Vec<u64> {
        lock(&self.seen).pinned.clone()
    }
}

/// Every session this proxy keeps.
pub(crate) struct Index {
    sessions: Sessions,
    /// The key callers' credentials are hashed with ([`Index::owner`]): this directory's own,
    /// kept beside its sessions, so that a session is its caller's after a restart too.
    secret: String,
    /// Each by its slot; locked before the lookup, never while a view is.
    tracked: Mutex<Slots>,
    lookup: Arc<Mutex<Lookup>>,
    /// The most sessions kept in memory (`--max-sessions`): past it the least recently used
    /// is let go of (its files stay).
    max_sessions: usize,
    /// The sessions on disk no request has asked for since the start, by scope
    /// ([`history::scope`]): a scope's are read from disk by its caller's first request
    /// ([`Index::wake`]), and a stranger's requests read nobody's.
    dormant: Mutex<ItemMap<Arc<Mutex<Vec<Dormant>>>>>,
    /// Whose session, and which, each client name for a session was last given to, by
    /// protocol ([`history::named`]), of the sessions kept: a request under other credentials
    /// that gives a name of another caller's is told apart from a new conversation (a rotated
    /// key) and starts a branch of that session, said so, rather than a session that nothing
    /// links to the conversation it goes on with.
    names: Mutex<ItemMap<(String, String)>>,
    /// Whether other replicas make and write these sessions too
    /// ([`workmem_store::SessionStore::shared`]): then each request first takes in the sessions
    /// they made ([`Index::catch_up`]) and checks its session's log against the store.
    shared: bool,
    /// Where the sessions made since are asked from ([`workmem_store::SessionStore::made_after`]);
    /// held while they are taken in, so that two requests do not take one in twice.
    cursor: Mutex<u64>,
}

/// A session on disk no request has asked for yet: its files, its ID, its client, and since
/// when it has been found empty (see [`Index::wake`]).
type Dormant = (Session, String, Proxied, Option<Instant>);

/// How long a session another replica made, found with nothing logged yet, is read again at
/// each request of its scope before it is left out (its maker logs its first messages a moment
/// after making it; one that never does was left so by a crash).
const EMPTY_WAIT: Duration = Duration::from_secs(10);

/// The sessions by slot, the next slot to give, and when each was last used.
#[derive(Default)]
struct Slots {
    by_slot: HashMap<usize, Arc<Tracked>>,
    next: usize,
    clock: u64,
    used_at: HashMap<usize, u64>,
    /// The slots by when they were last used, the least recently used first.
    by_use: BTreeMap<u64, usize>,
}

impl Slots {
    fn add(&mut self, make: impl FnOnce(usize) -> Tracked) -> Arc<Tracked> {
        let slot = self.next;
        self.next += 1;
        let tracked = Arc::new(make(slot));
        self.by_slot.insert(slot, tracked.clone());
        self.touch(slot);
        tracked
    }

    /// `slot` was just used.
    fn touch(&mut self, slot: usize) {
        if let Some(at) = self.used_at.remove(&slot) {
            self.by_use.remove(&at);
        }
        self.clock += 1;
        self.used_at.insert(slot, self.clock);
        self.by_use.insert(self.clock, slot);
    }

    fn remove(&mut self, slot: usize) -> Option<Arc<Tracked>> {
        if let Some(at) = self.used_at.remove(&slot) {
            self.by_use.remove(&at);
        }
        self.by_slot.remove(&slot)
    }

    /// The least recently used session past `max` that no request holds, taken out.
    fn least_used_past(&mut self, max: usize) -> Option<Arc<Tracked>> {
        if self.by_slot.len() <= max {
            return None;
        }
        let idle = self.by_use.values().copied().find(|slot| self.by_slot.get(slot).is_some_and(|t| t.exchange.try_lock().is_ok()))?;
        self.remove(idle)
    }
}

/// The name of the file beside the proxied sessions that holds [`Index::secret`].
const SECRET: &str = "proxy-callers.key";

/// A session found for a request, and what of the request's history is new to it.
pub(crate) struct Found {
    pub tracked: Arc<Tracked>,
    pub new: Vec<Message>,
    /// The view's generation it was found in.
    generation: u64,
}

impl Index {
    /// The sessions a proxy kept in `sessions` before, at most `max_sessions` of them, those
    /// made last: each filed under its scope, its log not read until a request of that scope
    /// comes ([`Index::wake`]).
    pub fn load(sessions: &Sessions, max_sessions: usize) -> workmem_store::Result<Self> {
        let secret = sessions.proxy_state()?.secret(SECRET)?;
        let shared = sessions.shared();
        // On a shared store, those made up to a cursor, from which the ones made later are asked.
        let (listed, cursor) = if shared { sessions.made_after(0)? } else { (sessions.list()?, 0) };
        let proxied: Vec<_> = listed.into_iter().filter_map(|(session, meta)| Some((session, meta.id, meta.proxied?))).collect();
        let left_out = proxied.len().saturating_sub(max_sessions);
        if left_out > 0 {
            eprintln!("workmem proxy: {left_out} older sessions not loaded (--max-sessions {max_sessions}); their clients' next requests start new ones");
        }
        let mut dormant: ItemMap<Vec<_>> = ItemMap::default();
        let mut names = ItemMap::default();
        for (session, id, proxied) in proxied.into_iter().skip(left_out) {
            if let (Some(name), Some(caller)) = (&proxied.client, &proxied.caller) {
                names.insert(history::named(&proxied.protocol, name), (caller.clone(), id.clone()));
            }
            dormant.entry(scope_of(&proxied)).or_default().push((session, id, proxied, None));
        }
        let dormant = Mutex::new(dormant.into_iter().map(|(scope, list)| (scope, Arc::new(Mutex::new(list)))).collect());
        Ok(Index {
            sessions: sessions.clone(),
            secret,
            tracked: Mutex::default(),
            lookup: Arc::default(),
            max_sessions: max_sessions.max(1),
            dormant,
            names: Mutex::new(names),
            shared,
            cursor: Mutex::new(cursor),
        })
    }

    /// Reads in the sessions of `scope` that wait on disk, oldest first, each with the
    /// client's view rebuilt from its log: once, at the scope's first request. A request of
    /// the same scope meanwhile waits for them; other scopes' requests do not wait while
    /// their logs are read. On a shared store, one another replica made but has logged nothing
    /// in yet stays on the shelf, read again at the scope's next request (for [`EMPTY_WAIT`]):
    /// taken in empty, it would be filed under nothing, and no request of its conversation
    /// would find it. The shelf stays, empty, for what [`Index::catch_up`] puts on it next.
    fn wake(&self, scope: u64) {
        let Some(shelf) = lock(&self.dormant).get(&scope).cloned() else { return };
        let mut shelf = lock(&shelf);
        let mut empty = Vec::new();
        for (session, id, proxied, since) in std::mem::take(&mut *shelf) {
            // A session whose log cannot be read is left alone, not a reason to fail the
            // request: its client's next request starts a session of its own.
            let records = match session.records() {
                Ok(records) => records,
                Err(e) => {
                    eprintln!("workmem proxy: session {id} left out: {e}");
                    continue;
                }
            };
            if self.shared && records.is_empty() {
                let since = since.unwrap_or_else(Instant::now);
                if since.elapsed() < EMPTY_WAIT {
                    empty.push((session, id, proxied, Some(since)));
                    continue;
                }
            }
            let mut all = lock(&self.tracked);
            let t = all.add(|slot| Tracked::new(session, id, proxied, slot, Arc::clone(&self.lookup), true));
            t.logged.store(records.last().map_or(1, |r| r.seq + 1), Ordering::Release);
            for record in records {
                if let Entry::Message(m) = record.entry {
                    t.observe(record.seq, &m);
                }
            }
            self.used(&mut all, t.slot);
        }
        *shelf = empty;
    }

    /// Whether other replicas make and write these sessions too.
    pub fn shared(&self) -> bool {
        self.shared
    }

    /// On a shared store, takes in the sessions other replicas made since the last time, each
    /// waiting on its scope's shelf until a request of that scope reads it ([`Index::wake`]);
    /// those this process made are known already.
    fn catch_up(&self) {
        if !self.shared {
            return;
        }
        let mut cursor = lock(&self.cursor);
        let (made, next) = match self.sessions.made_after(*cursor) {
            Ok(made) => made,
            Err(e) => return eprintln!("workmem proxy: the sessions other replicas made could not be read: {e}"),
        };
        for (session, meta) in made {
            let Some(proxied) = meta.proxied else { continue };
            if lock(&self.tracked).by_slot.values().any(|t| t.id == meta.id) {
                continue;
            }
            if let (Some(name), Some(caller)) = (&proxied.client, &proxied.caller) {
                lock(&self.names).insert(history::named(&proxied.protocol, name), (caller.clone(), meta.id.clone()));
            }
            let shelf = lock(&self.dormant).entry(scope_of(&proxied)).or_default().clone();
            lock(&shelf).push((session, meta.id, proxied, None));
        }
        *cursor = next.max(*cursor);
    }

    /// `t`'s view read again from its log, which another replica wrote (see
    /// [`Tracked::outdated`]), under its exchange; what the exchange kept is let go of.
    pub fn reload(&self, t: &Tracked, exchange: &mut Exchange) {
        self.unfile(t);
        *lock(&t.seen) = Seen::default();
        exchange.cool();
        match exchange.session.records() {
            Ok(records) => {
                for record in &records {
                    if let Entry::Message(m) = &record.entry {
                        t.observe(record.seq, m);
                    }
                }
                t.logged.store(records.last().map_or(1, |r| r.seq + 1), Ordering::Release);
            }
            Err(e) => eprintln!("workmem proxy: session {}: its log, which another replica wrote, could not be read again: {e}", t.id),
        }
    }

    /// Takes `t` out of the lookup: no request finds it any more.
    fn unfile(&self, t: &Tracked) {
        let mut seen = lock(&t.seen);
        let mut lookup = lock(&self.lookup);
        seen.filed = lookup.file(scope_of(&t.proxied), t.slot, &seen.filed, &[]);
        for key in std::mem::take(&mut seen.answers) {
            if lookup.answers.get(&key) == Some(&t.slot) {
                lookup.answers.remove(&key);
            }
        }
    }

    /// `slot` was just used; past [`Index::max_sessions`], the least recently used sessions
    /// that no request holds are let go of (their files stay: a client that comes back
    /// starts a new session).
    fn used(&self, all: &mut Slots, slot: usize) {
        all.touch(slot);
        while let Some(gone) = all.least_used_past(self.max_sessions) {
            self.unfile(&gone);
            if let Some(name) = &gone.proxied.client {
                let mut names = lock(&self.names);
                let key = history::named(&gone.proxied.protocol, name);
                if names.get(&key).is_some_and(|(_, id)| *id == gone.id) {
                    names.remove(&key);
                }
            }
            eprintln!("workmem proxy: session {} let go of (--max-sessions {})", gone.id, self.max_sessions);
        }
    }

    /// Who sends a request, as a session records it: SHA-256 over this proxy's secret and the
    /// credential headers' bytes, each with its length, so where one ends counts. Keyed, so
    /// that meta.json does not hold a hash of a key anyone could test guesses against.
    pub fn owner(&self, credentials: &[&[u8]]) -> String {
        let mut hash = sha2::Sha256::new();
        hash.update(self.secret.as_bytes());
        for c in credentials {
            hash.update((c.len() as u64).to_le_bytes());
            hash.update(c);
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The session `history` extends, among those of `owner`'s (the caller, [`Index::owner`])
    /// of the client's name `client` (or of no name), of `protocol`. A new session when none is
    /// found, made with `template` as its memory, held by no other request until the upstream
    /// accepts this one ([`Index::accept`]). The caller checks again once it holds the
    /// session's exchange: another request may have extended the session in between.
    pub fn find(
        &self,
        protocol: &str,
        owner: &str,
        client: Option<&str>,
        history: &History,
        template: &str,
        parent: Option<&str>,
    ) -> workmem_store::Result<(Found, bool)> {
        self.catch_up();
        self.wake(history::scope(protocol, owner, client));
        let mut all = lock(&self.tracked);
        let (best, last_of_name) = self.best(&all, protocol, owner, client, history);
        if let Some(found) = best {
            self.used(&mut all, found.tracked.slot);
            return Ok((found, false));
        }
        let retried = self.retried(&all, protocol, owner, client, history);
        // A name none of this caller's sessions has, last used under other credentials.
        let elsewhere = match (client, &last_of_name) {
            (Some(name), None) => lock(&self.names).get(&history::named(protocol, name)).filter(|(by, _)| by != owner).map(|(_, id)| id.clone()),
            _ => None,
        };
        let (branch_of, why) = match (retried.as_ref(), parent, elsewhere, last_of_name.filter(|_| client.is_some())) {
            (Some(t), ..) => (Some(t.id.clone()), "retried"),
            (None, Some(p), ..) => (Some(p.to_string()), "chained"),
            (None, None, Some(other), _) => (Some(other), "credentials"),
            (None, None, None, last) => (last, "edited"),
        };
        if why == "credentials" {
            eprintln!(
                "workmem proxy: a request under other credentials names session {} (a rotated key?): it starts a branch of it, without its memory, which stays with the credentials that made it",
                branch_of.as_deref().unwrap_or_default()
            );
        }
        let proxied = Proxied {
            protocol: protocol.to_string(),
            client: client.map(str::to_string),
            branched: branch_of.as_ref().map(|_| why.to_string()),
            branch_of,
            caller: Some(owner.to_string()),
        };
        // The client's name is the session's ID where it makes a valid, unused one.
        let session = match client.map(|c| self.sessions.create_proxied(Some(c), template, &proxied)) {
            Some(Ok(s)) => s,
            _ => self.sessions.create_proxied(None, template, &proxied)?,
        };
        // A request resent after its answer was lost goes on with the memory that answer left
        // (an update the model made in it, which the client never saw, included).
        if let Some(parent) = &retried {
            match session.with_lock(|locked| session.inherit_memory(locked, &parent.files)) {
                Ok(_) => {}
                Err(e) => eprintln!("workmem proxy: a retried request's new session starts with the template memory: {e}"),
            }
        }
        let id = session.meta()?.id;
        let tracked = all.add(|slot| Tracked::new(session, id, proxied, slot, Arc::clone(&self.lookup), false));
        self.used(&mut all, tracked.slot);
        Ok((Found { tracked, new: history.messages.to_vec(), generation: 0 }, true))
    }

    /// The session of `owner`'s in `protocol` that logged the answer the provider gave the ID
    /// `id`, and its client's view up to that answer ([`crate::seen::seen_until`]): what a
    /// request chained to `id` continues, read from the session's log. None where no session
    /// of the caller's logged it (or the session was let go of).
    pub fn chained(&self, protocol: &str, owner: &str, client: Option<&str>, id: &str) -> workmem_store::Result<Option<(String, Vec<Message>)>> {
        self.catch_up();
        self.wake(history::scope(protocol, owner, client));
        let slot = lock(&self.lookup).answers.get(&history::answer(protocol, owner, id)).copied();
        let Some(t) = slot.and_then(|slot| lock(&self.tracked).by_slot.get(&slot).cloned()) else { return Ok(None) };
        // Answers are told apart by a hash: the names are compared too.
        if t.proxied.protocol != protocol || t.proxied.caller.as_deref() != Some(owner) || !t.accepted() {
            return Ok(None);
        }
        let log = t.files.records()?.into_iter().filter_map(|r| match r.entry {
            Entry::Message(m) => Some(m),
            _ => None,
        });
        Ok(crate::seen::seen_until(log, id).map(|prefix| (t.id.clone(), prefix)))
    }

    /// The upstream accepted a request of `t`'s: other requests of its caller may continue it.
    pub fn accept(&self, t: &Tracked) {
        if !t.accepted.swap(true, Ordering::AcqRel) {
            lock(&self.lookup).scopes.entry(scope_of(&t.proxied)).or_default().last_made = Some(t.id.clone());
            if let (Some(name), Some(caller)) = (&t.proxied.client, &t.proxied.caller) {
                lock(&self.names).insert(history::named(&t.proxied.protocol, name), (caller.clone(), t.id.clone()));
            }
        }
    }

    /// Takes back `t`, made by a request whose upstream never accepted it: out of the index,
    /// and its files removed (the caller holds its exchange). Nothing of a refused request
    /// stays behind. A session the upstream accepted once is kept.
    pub fn forget(&self, t: &Tracked, exchange: &Exchange) -> workmem_store::Result<()> {
        if t.accepted() {
            return Ok(());
        }
        lock(&self.tracked).remove(t.slot);
        self.unfile(t);
        exchange.session.remove()
    }

    /// The session whose last answer `history` resends the request of ([`Seen::retried_by`]),
    /// among the candidates of its scope the upstream has accepted.
    fn retried(&self, all: &Slots, protocol: &str, owner: &str, client: Option<&str>, history: &History) -> Option<Arc<Tracked>> {
        let (slots, _) = lock(&self.lookup).candidates(history::scope(protocol, owner, client), history);
        slots.into_iter().filter_map(|slot| all.by_slot.get(&slot)).find(|t| t.accepted() && lock(&t.seen).retried_by(history)).cloned()
    }

    /// The session `history` extends, as [`Index::find`] finds it, or none: nothing is created.
    pub fn lookup(&self, protocol: &str, owner: &str, client: Option<&str>, history: &History) -> Option<Found> {
        self.catch_up();
        self.wake(history::scope(protocol, owner, client));
        self.best(&lock(&self.tracked), protocol, owner, client, history).0
    }

    /// The session of `protocol`, `owner` and `client` whose view `history` holds the most of,
    /// among the candidates ([`Lookup::candidates`]) the upstream has accepted, and the last
    /// session of that scope.
    fn best(&self, all: &Slots, protocol: &str, owner: &str, client: Option<&str>, history: &History) -> (Option<Found>, Option<String>) {
        let (slots, last_of_name) = lock(&self.lookup).candidates(history::scope(protocol, owner, client), history);
        let mut best: Option<(usize, Found)> = None;
        let mut held = Vec::new();
        for candidate in slots.into_iter().filter_map(|slot| all.by_slot.get(&slot)) {
            // Scopes are told apart by a hash: the names are compared too.
            let p = &candidate.proxied;
            if p.protocol != protocol || p.caller.as_deref() != Some(owner) || p.client.as_deref() != client || !candidate.accepted() {
                continue;
            }
            let mut seen = lock(&candidate.seen);
            if let Some((n, new)) = seen.new_in(history) {
                held.push(candidate);
                if best.as_ref().is_none_or(|(b, _)| n > *b) {
                    best = Some((n, Found { tracked: candidate.clone(), new, generation: seen.generation }));
                }
            }
        }
        // The others whose view the request holds keep no match of it: what a session keeps
        // between requests is counted only for the one a request goes on (`warm`).
        for other in held.into_iter().filter(|t| best.as_ref().is_none_or(|(_, b)| !Arc::ptr_eq(t, &b.tracked))) {
            lock(&other.seen).forget_matching();
        }
        (best.map(|(_, found)| found), last_of_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup::CANDIDATES;
    use workmem_store::ToolCall;

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: "{}".into() }
    }

    fn said(role: &str, text: &str) -> Message {
        Message::new(role, text)
    }

    fn calls(text: &str, ids: &[&str]) -> Message {
        Message { tool_calls: ids.iter().map(|id| call(id, "bash")).collect(), ..Message::new("assistant", text) }
    }

    fn result(id: &str) -> Message {
        Message { tool_call_id: Some(id.into()), ..Message::new("tool", format!("output of {id}")) }
    }

    fn seen(log: &[Message]) -> Seen {
        let mut seen = Seen::default();
        log.iter().for_each(|m| seen.push(m));
        seen
    }

    fn new_in(seen: &mut Seen, history: &[Message]) -> Option<Vec<Message>> {
        seen.new_in(&History::new(history.to_vec())).map(|(_, new)| new)
    }

    /// A session told to let go while a request holds it is not waited for (the request keeps
    /// what it uses, and the session is counted again when it ends); one that is free lets go
    /// of all it kept but the length of its last body, which says what it would keep again.
    #[test]
    fn letting_go_waits_for_no_request() {
        let dir = std::env::temp_dir().join(format!("workmem-proxy-cool-{}", std::process::id()));
        let sessions = Sessions::new(&dir, &dir);
        let session = sessions.create(None, "# Memory\n").unwrap();
        let proxied = Proxied { protocol: "chat".into(), client: None, branch_of: None, branched: None, caller: None };
        let tracked = Arc::new(Tracked::new(session, "s".into(), proxied, 0, Arc::default(), true));
        {
            let mut exchange = lock(&tracked.exchange);
            exchange.sent = 1000;
            crate::written::chat_body(
                &serde_json::json!({"model": "m"}),
                vec![workmem_llm::Message::new("user", "go")].into(),
                0,
                Default::default(),
                &serde_json::json!([]),
                &mut exchange.written,
            );
            let (done, waited) = std::sync::mpsc::channel();
            let other = tracked.clone();
            std::thread::spawn(move || {
                crate::warm::Cools::cool(&*other);
                done.send(()).unwrap();
            });
            waited.recv_timeout(std::time::Duration::from_secs(10)).expect("cool returned while the exchange was held");
            assert!(!exchange.written.bytes().is_empty(), "a busy session keeps its body");
        }
        crate::warm::Cools::cool(&*tracked);
        let exchange = lock(&tracked.exchange);
        assert!(exchange.written.bytes().is_empty());
        assert_eq!(exchange.warm_bytes(), 4000);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A scratch index, and the sessions made in it for each history in turn.
    fn index_of(name: &str, histories: &[Vec<Message>]) -> (Index, std::path::PathBuf, Vec<String>) {
        let dir = std::env::temp_dir().join(format!("workmem-proxy-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let index = Index::load(&Sessions::new(&dir, &dir), 4096).unwrap();
        let mut made = Vec::new();
        for h in histories {
            let (found, created) = index.find("chat", ALICE, None, &History::new(h.clone()), "# Memory\n", None).unwrap();
            assert!(created, "{h:?} extends none of the sessions before it");
            found.tracked.append(&lock(&found.tracked.exchange), found.new).unwrap();
            index.accept(&found.tracked);
            made.push(found.tracked.id.clone());
        }
        (index, dir, made)
    }

    /// A request that holds the views of two sessions goes on one: only that one keeps its
    /// match for the next request (the other's would be memory no bound counts).
    #[test]
    fn only_the_session_found_keeps_the_match() {
        let (index, dir, made) = index_of("kept-match", &[vec![said("user", "first")], vec![said("user", "second")]]);
        let both = History::new(vec![said("user", "first"), said("user", "second"), said("user", "more")]);
        let (found, created) = index.find("chat", ALICE, None, &both, "# Memory\n", None).unwrap();
        assert!(!created);
        let all = lock(&index.tracked);
        let kept: Vec<(&String, usize)> = all.by_slot.values().map(|t| (&t.id, lock(&t.seen).matching_bytes())).collect();
        assert_eq!(kept.len(), 2);
        for (id, bytes) in kept {
            assert_eq!(bytes > 0, *id == found.tracked.id, "session {id} of {made:?}");
        }
        drop(all);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// However many sessions a client's scope holds, a request is tried against at most
    /// [`CANDIDATES`] of them (threat model rule 5), n sessions or 4n: whether they all end as
    /// the request does, or each ends with one of its messages. The oldest of the sessions that
    /// end alike is found still (one of its last items is its own), and of those the request
    /// holds alike, the most recent.
    #[test]
    fn a_request_is_tried_against_a_bounded_number_of_sessions() {
        let tried = |n: usize, same_end: bool| {
            let opening = |i: usize| match same_end {
                true => vec![said("user", "go"), said("assistant", &format!("try {i}")), said("user", "same")],
                false => vec![said("user", &format!("go {i}"))],
            };
            let (index, dir, made) = index_of(&format!("tried-{n}-{same_end}"), &(0..n).map(opening).collect::<Vec<_>>());
            let (mut next, extended) = match same_end {
                true => (opening(0), &made[0]),
                false => ((0..n).flat_map(opening).collect(), &made[n - 1]),
            };
            next.push(said("assistant", "more"));
            let history = History::new(next);
            let tried = lock(&index.lookup).candidates(history::scope("chat", ALICE, None), &history).0.len();
            let found = index.lookup("chat", ALICE, None, &history).expect("a session is found");
            assert_eq!((&found.tracked.id, found.new.last()), (extended, Some(&said("assistant", "more"))));
            let _ = std::fs::remove_dir_all(&dir);
            tried
        };
        for same_end in [true, false] {
            assert_eq!((tried(CANDIDATES, same_end), tried(4 * CANDIDATES, same_end)), (CANDIDATES, CANDIDATES));
        }
    }

    /// The caller every scratch index's sessions are made by.
    const ALICE: &str = "alice";

    /// A session that holds system messages only is continued by a request of its caller's
    /// that holds them; by no other caller's, whatever it sends (it once was "held by any
    /// request", and a stranger's planted system prompt became the next client's opening).
    #[test]
    fn a_session_of_system_messages_only_is_its_callers() {
        let (index, dir, made) = index_of("system-only", &[vec![said("system", "rules")]]);
        let next = History::new(vec![said("system", "rules"), said("user", "hi")]);
        let found = index.lookup("chat", ALICE, None, &next).expect("found");
        assert_eq!((found.tracked.id.as_str(), found.new), (made[0].as_str(), vec![said("user", "hi")]));
        assert!(index.lookup("chat", "bob", None, &next).is_none(), "another caller's request");
        assert!(index.lookup("chat", ALICE, None, &History::new(vec![said("system", "mine"), said("user", "hi")])).is_none(), "another opening");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Past `--max-sessions` the least recently used session is let go of: no request finds
    /// it; a session a request holds is not; after a restart the sessions made last are
    /// there, each read from disk only once a request of its caller's asks.
    #[test]
    fn sessions_in_memory_are_bounded() {
        let history = |i: usize| vec![said("user", &format!("task {i}"))];
        let (mut index, dir, made) = index_of("bounded", &[history(0), history(1)]);
        index.max_sessions = 2;
        let held = index.lookup("chat", ALICE, None, &History::new(history(0))).unwrap();
        let busy = lock(&held.tracked.exchange);
        let (third, _) = index.find("chat", ALICE, None, &History::new(history(2)), "# Memory\n", None).unwrap();
        third.tracked.append(&lock(&third.tracked.exchange), third.new).unwrap();
        index.accept(&third.tracked);
        let found = |i: usize| index.lookup("chat", ALICE, None, &History::new(history(i))).map(|f| f.tracked.id.clone());
        assert_eq!((found(0), found(1)), (Some(made[0].clone()), None), "the idle one went, not the held one");
        drop(busy);
        let again = Index::load(&Sessions::new(&dir, &dir), 2).unwrap();
        assert_eq!(lock(&again.tracked).by_slot.len(), 0, "no log is read before a request asks");
        assert!(again.lookup("chat", "bob", None, &History::new(history(2))).is_none());
        assert_eq!(lock(&again.tracked).by_slot.len(), 0, "another caller's request reads none of Alice's");
        // Made in one second, which of them were made last is up to their IDs: two are there.
        let found = (0..3).filter(|&i| again.lookup("chat", ALICE, None, &History::new(history(i))).is_some()).count();
        assert_eq!((found, lock(&again.tracked).by_slot.len()), (2, 2));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Two callers with the same history get a session each; a session made by a request the
    /// upstream has not accepted yet is continued by nobody, and once forgotten it is gone
    /// from the disk and the index; an accepted one is never forgotten.
    #[test]
    fn sessions_are_their_callers_and_refused_ones_leave_nothing() {
        let (index, dir, made) = index_of("callers", &[vec![said("system", "secret"), said("user", "hi"), said("assistant", "hello")]]);
        let next = History::new(vec![said("system", "secret"), said("user", "hi"), said("assistant", "hello"), said("user", "more")]);
        assert!(index.lookup("chat", "bob", None, &next).is_none());
        let (bobs, created) = index.find("chat", "bob", None, &next, "# Memory\n", None).unwrap();
        assert!(created && bobs.tracked.id != made[0]);
        let exchange = lock(&bobs.tracked.exchange);
        bobs.tracked.append(&exchange, bobs.new).unwrap();
        assert!(index.lookup("chat", "bob", None, &next).is_none(), "not accepted yet");
        let bobs_dir = exchange.session.dir().to_path_buf();
        assert!(bobs_dir.exists());
        index.forget(&bobs.tracked, &exchange).unwrap();
        assert!(!bobs_dir.exists(), "a refused request leaves no session on disk");
        assert!(!lock(&index.tracked).by_slot.contains_key(&bobs.tracked.slot));
        drop(exchange);
        let alices = index.lookup("chat", ALICE, None, &next).expect("Alice's own");
        index.forget(&alices.tracked, &lock(&alices.tracked.exchange)).unwrap();
        assert!(index.lookup("chat", ALICE, None, &next).is_some(), "an accepted session stays");
        let again = Index::load(&Sessions::new(&dir, &dir), 4096).unwrap();
        assert_eq!(again.owner(&[b"k"]), index.owner(&[b"k"]), "the same caller after a restart");
        let key = Sessions::new(&dir, &dir).dir().join(SECRET);
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(key).unwrap().permissions()) & 0o777, 0o600, "the key is its owner's alone");
        assert_ne!(index.owner(&[b"ab", b""]), index.owner(&[b"a", b"b"]));
        assert!(again.lookup("chat", ALICE, None, &next).is_some());
        assert_eq!(lock(&again.tracked).by_slot.len(), 1, "Bob's refused session was not kept");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Claude Code resends two rounds as one assistant message and one user message, its
    /// reminder after the results: only the new result is new.
    #[test]
    fn a_regrouped_history_continues() {
        let log = [said("user", "go"), calls("", &["a"]), result("a"), calls("next", &["b"])];
        let history = [said("user", "go"), calls("next", &["a", "b"]), result("a"), result("b"), said("user", "<reminder>")];
        assert_eq!(new_in(&mut seen(&log), &history), Some(vec![result("b"), said("user", "<reminder>")]));
    }

    /// A round that called only workmem's tools is one answer for the client; Codex keeps its
    /// text as a message of its own, before the call it led to.
    #[test]
    fn workmem_rounds_are_not_the_clients() {
        let mut own = calls("Reading back. ", &[]);
        own.tool_calls.push(call("w", "read_history"));
        let log = [said("user", "go"), own, result("w"), calls("Step 2. ", &["b"])];
        let joined = [said("user", "go"), calls("Reading back. Step 2. ", &["b"]), result("b")];
        assert_eq!(new_in(&mut seen(&log), &joined), Some(vec![result("b")]));
        let split = [said("user", "go"), said("assistant", "Reading back. "), calls("Step 2. ", &["b"]), result("b")];
        assert_eq!(new_in(&mut seen(&log), &split), Some(vec![result("b")]));
    }

    /// A reworded reminder amid the history is left out; an edited result, or a logged message
    /// missing, is not this session's history.
    #[test]
    fn edits_start_a_branch() {
        let log = [said("user", "go"), said("system", "reminder 1"), calls("", &["a"]), result("a")];
        let reworded = [said("user", "go"), said("system", "reminder 2"), calls("", &["a"]), result("a"), said("user", "more")];
        assert_eq!(new_in(&mut seen(&log), &reworded), Some(vec![said("user", "more")]));
        let edited = [said("user", "go"), calls("", &["a"]), Message { content: "changed".into(), ..result("a") }, said("user", "more")];
        assert_eq!(new_in(&mut seen(&log), &edited), None);
        let dropped = [said("user", "go"), said("user", "more")];
        assert_eq!(new_in(&mut seen(&log), &dropped), None);
    }

    /// A call resent with its arguments written another way (the Vercel AI SDK's
    /// `JSON.stringify` drops the model's spaces) is the same call: the history continues.
    #[test]
    fn a_call_is_its_id() {
        let spaced =
            Message { tool_calls: vec![ToolCall { id: "a".into(), name: "bash".into(), arguments: "{\"cmd\": \"ls\"}".into() }], ..said("assistant", "") };
        let log = [said("user", "go"), spaced.clone(), result("a")];
        let mut compact = spaced;
        compact.tool_calls[0].arguments = "{\"cmd\":\"ls\"}".into();
        let history = [said("user", "go"), compact, result("a"), said("user", "next")];
        assert_eq!(new_in(&mut seen(&log), &history), Some(vec![said("user", "next")]));
    }

    /// A request resent after its answer was lost holds what the client had sent and nothing
    /// of the answer (workmem's own rounds in it included); one that holds the answer, or
    /// anything new, or less than all the client sent, is not a retry.
    #[test]
    fn a_resent_request_is_told_from_the_rest() {
        let mut own = calls("", &[]);
        own.tool_calls.push(call("w", "update_memory"));
        let log = [said("user", "go"), calls("", &["a"]), result("a"), said("user", "next"), own, result("w"), said("assistant", "done")];
        let seen = seen(&log);
        let retried = |h: &[Message]| seen.retried_by(&History::new(h.to_vec()));
        assert!(retried(&log[..4]), "the request the last answer was for");
        assert!(retried(&[&log[..4], &[said("system", "a reminder")]].concat()), "with a system reminder of its own");
        assert!(!retried(&log), "the answer itself");
        assert!(!retried(&log[..3]), "less than the client had sent");
        assert!(!retried(&[&log[..4], &[said("user", "more")]].concat()), "something new");
        assert!(!retried(&[said("user", "go"), said("user", "next")]), "without the round in between");
    }

    /// The same text twice is two items: a history with it once does not hold a log with it twice.
    #[test]
    fn repeated_messages_count() {
        let log = [said("user", "again"), said("assistant", "ok"), said("user", "again"), said("assistant", "ok")];
        assert_eq!(new_in(&mut seen(&log), &log[..2]), None);
        assert_eq!(new_in(&mut seen(&log[..2]), &log), Some(log[2..].to_vec()));
    }
}
