//! The session store seam: a second store, kept in memory, written against the traits alone,
//! runs the callers as they are (the commit path, the tools, a compaction with its archive, a
//! request build, keyed updates, a branch taking its parent's memory) and ends where the
//! directory store ends. Were any caller to reach past the traits into the directory, this
//! store could not be handed to it, or would end elsewhere.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use workmem_agent::context::{self, Options};
use workmem_llm::Tokenizer;
use workmem_store::{
    Commit, Durability, Entry, KeyedUpdate, LogRecord, MemoryChain, MemoryCommit, MemoryFileStore, Message, Meta, PathError, Session, SessionLog, SessionStore,
    Sessions, StoredSession, ToolCall, Usage, View,
};

/// What one in-memory session holds.
#[derive(Debug, Default)]
struct Held {
    locked: bool,
    meta: Option<Meta>,
    records: Vec<LogRecord>,
    updates: Vec<serde_json::Value>,
    state: Option<String>,
    files: BTreeMap<String, String>,
    keyed: Vec<KeyedUpdate>,
}

#[derive(Debug, Default)]
struct Shared {
    held: Mutex<Held>,
    free: Condvar,
}

#[derive(Debug, Clone)]
struct InMemory {
    name: PathBuf,
    shared: Arc<Shared>,
}

/// Let go of when the [`workmem_store::Locked`] holding it is dropped.
struct Release(Arc<Shared>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.held.lock().unwrap().locked = false;
        self.0.free.notify_one();
    }
}

impl InMemory {
    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.shared.held.lock().unwrap()
    }
}

const OVERVIEW: &str = "working-memory/overview.md";

impl SessionLog for InMemory {
    fn records(&self) -> workmem_store::Result<Vec<LogRecord>> {
        Ok(self.held().records.clone())
    }

    /// Folded whole at every read: a store need not keep its view to be correct.
    fn view_to(&self) -> workmem_store::Result<(View, u64)> {
        let records = self.records()?;
        let mut view = View::default();
        for mut record in records.clone() {
            if let Entry::Message(m) = &mut record.entry {
                workmem_store::messages::expand_read(m, &records, record.seq);
            }
            view.push(record);
        }
        Ok((view, records.last().map_or(0, |r| r.seq)))
    }

    fn view_after(&self, _: u64) -> workmem_store::Result<Option<(View, u64)>> {
        Ok(None)
    }

    fn release_view(&self) {}

    fn next_seq(&self) -> workmem_store::Result<u64> {
        Ok(self.held().records.last().map_or(1, |r| r.seq + 1))
    }

    fn append_all(&self, _: &workmem_store::Locked, entries: Vec<(Entry, Option<Usage>)>, _: Durability) -> workmem_store::Result<Vec<LogRecord>> {
        let mut held = self.held();
        let mut added = Vec::new();
        for (entry, usage) in entries {
            let record = LogRecord { seq: held.records.last().map_or(1, |r| r.seq + 1), at: workmem_store::now(), entry, usage };
            held.records.push(record.clone());
            added.push(record);
        }
        Ok(added)
    }

    /// Held in memory: as durable as it gets at once.
    fn sync_log(&self) -> workmem_store::Result<()> {
        Ok(())
    }
}

impl MemoryCommit for InMemory {
    fn load_memory(&self, _: &workmem_store::Locked) -> workmem_store::Result<Option<String>> {
        Ok(self.held().state.clone())
    }

    fn committed_memory(&self) -> workmem_store::Result<Option<(Option<String>, String)>> {
        let state = self.held().state.clone();
        Ok(Some((state, self.overview()?)))
    }

    fn log(&self) -> workmem_store::Result<Vec<serde_json::Value>> {
        Ok(self.held().updates.clone())
    }

    fn keyed_update(&self, key: &str) -> workmem_store::Result<Option<KeyedUpdate>> {
        Ok(self.held().keyed.iter().find(|k| k.key == key).cloned())
    }

    /// All of it under the one mutex: wholly visible or not at all.
    fn commit(&self, _: &workmem_store::Locked, commit: &Commit) -> workmem_store::Result<()> {
        let mut held = self.held();
        for line in commit.log_entry.lines() {
            held.updates.push(serde_json::from_str(line).expect("the engine writes JSON"));
        }
        held.state = Some(commit.state.clone());
        held.files.insert(OVERVIEW.into(), commit.overview.clone());
        if let Some((key, digest)) = &commit.request {
            held.keyed.push(KeyedUpdate { key: key.clone(), digest: digest.clone(), seq: commit.seq });
        }
        held.meta.as_mut().expect("a made session has meta").count(commit);
        Ok(())
    }
}

/// The memory files, by name, under the rule every store keeps.
struct Files(InMemory);

impl MemoryFileStore for Files {
    fn read(&self, name: &str) -> Result<String, PathError> {
        workmem_store::confine::memory_name(name)?;
        let missing = || PathError::Io { name: name.into(), kind: std::io::ErrorKind::NotFound, message: "no such file".into() };
        self.0.held().files.get(name).cloned().ok_or_else(missing)
    }

    fn write(&self, name: &str, content: &str) -> Result<(), PathError> {
        workmem_store::confine::memory_name(name)?;
        self.0.held().files.insert(name.into(), content.into());
        Ok(())
    }

    fn list(&self, name: &str) -> Result<Vec<String>, PathError> {
        workmem_store::confine::memory_name(name)?;
        let under = format!("{}/", name.trim_end_matches('/'));
        Ok(self.0.held().files.keys().filter(|f| f.starts_with(&under)).cloned().collect())
    }
}

impl StoredSession for InMemory {
    fn dir(&self) -> &Path {
        &self.name
    }

    fn meta(&self) -> workmem_store::Result<Meta> {
        Ok(self.held().meta.clone().expect("a made session has meta"))
    }

    fn write_meta(&self, _: &workmem_store::Locked, meta: &Meta) -> workmem_store::Result<()> {
        self.held().meta = Some(meta.clone());
        Ok(())
    }

    fn overview(&self) -> workmem_store::Result<String> {
        Ok(self.held().files.get(OVERVIEW).cloned().unwrap_or_default())
    }

    fn lock(&self) -> workmem_store::Result<workmem_store::Locked> {
        let mut held = self.held();
        while held.locked {
            held = self.shared.free.wait(held).unwrap();
        }
        held.locked = true;
        Ok(workmem_store::Locked::holding(Release(self.shared.clone())))
    }

    fn waiting_at_most(&self, _: std::time::Duration) -> Arc<dyn StoredSession> {
        Arc::new(self.clone())
    }

    fn memory_files(&self) -> Box<dyn MemoryFileStore> {
        Box::new(Files(self.clone()))
    }

    fn remove(&self) -> workmem_store::Result<()> {
        *self.held() = Held::default();
        Ok(())
    }
}

/// The sessions root of the in-memory store.
#[derive(Debug, Default)]
struct Root {
    sessions: Mutex<Vec<InMemory>>,
}

impl SessionStore for Root {
    fn dir(&self) -> &Path {
        Path::new("memory:")
    }

    fn create(&self, id: Option<&str>, overview: &str) -> workmem_store::Result<Session> {
        let id = id.map_or_else(|| format!("s{}", self.sessions.lock().unwrap().len() + 1), str::to_string);
        let now = workmem_store::now();
        let meta = Meta {
            format: workmem_store::session::FORMAT.into(),
            id: id.clone(),
            cwd: "memory:".into(),
            created_at: now.clone(),
            updated_at: now,
            updates: 0,
            workmem_version: "test".into(),
            rounds: 0,
            memory_updated_round: 0,
            token_correction: 0,
            uid: format!("uid-{id}"),
            requests: Vec::new(),
            memory_chain: Some(MemoryChain::at(overview)),
            proxied: None,
        };
        let session = InMemory { name: PathBuf::from(format!("memory:/{id}")), shared: Arc::default() };
        session.held().meta = Some(meta);
        session.held().files.insert(OVERVIEW.into(), overview.into());
        self.sessions.lock().unwrap().push(session.clone());
        Ok(Session::new(Arc::new(session)))
    }

    fn list(&self) -> workmem_store::Result<Vec<(Session, Meta)>> {
        self.sessions.lock().unwrap().iter().map(|s| Ok((Session::new(Arc::new(s.clone())), s.meta()?))).collect()
    }

    fn all(&self) -> workmem_store::Result<Vec<(Session, Meta)>> {
        self.list()
    }

    fn find(&self, id: &str) -> workmem_store::Result<Session> {
        let found = self.sessions.lock().unwrap().iter().find(|s| s.meta().is_ok_and(|m| m.id == id)).cloned();
        found.map(|s| Session::new(Arc::new(s))).ok_or_else(|| workmem_store::Error::NoSuchSession { id: id.into(), cwd: "memory:".into() })
    }

    fn resolve(&self, spec: &str) -> workmem_store::Result<Session> {
        self.find(spec.trim_start_matches("memory:/"))
    }
}

/// What a session ended as, without what differs by store or by clock.
#[derive(Debug, PartialEq)]
struct Ended {
    overview: String,
    view: Vec<(u64, Message)>,
    updates: Vec<u64>,
    meta: (u64, u64, usize),
    files: Vec<String>,
    request: Vec<String>,
    keyed_again: bool,
    branch: (bool, String, u64),
}

/// The same conversation through the callers as they are, on the sessions `sessions` keeps.
fn converse(sessions: &Sessions) -> Ended {
    let runtime = common::runtime();
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let template = runtime.instance().unwrap().overview_template().unwrap();
    let s = sessions.create(Some("seam"), &template).unwrap();
    s.append_message(Message::new("user", "Find why the nightly build fails and fix it.")).unwrap();
    for k in 0..6 {
        let call = ToolCall { id: format!("c{k}"), name: "run".into(), arguments: format!("{{\"step\": {k}}}") };
        s.append_message(Message { tool_calls: vec![call], ..Message::new("assistant", "") }).unwrap();
        let output = format!("step {k}: {}", "the linker ran out of memory on the release target; ".repeat(40));
        s.append_reply(
            Message { tool_call_id: Some(format!("c{k}")), ..Message::new("tool", output) },
            Usage { sent: 100 * k, prompt_tokens: None, completion_tokens: None },
            workmem_store::Durability::Synced,
        )
        .unwrap();
    }
    // The commit path, from the CLI's caller and from the model's tool.
    workmem_commit::apply(&runtime, &s, "KEY_LEARNINGS:\n  ADD:\n    - because step 3 showed it: the release link needs 8 GB\n").unwrap();
    let mut cx = workmem_agent::tools::ToolContext { session: &s, runtime: &runtime, tokenizer: &tokenizer, llm: None, board: None, documents: None };
    let out = workmem_agent::tools::call(
        &mut cx,
        "update_memory",
        &serde_json::json!({"dsl": "CURRENT_PROGRESS:\n  In Progress:\n    - Linking with fewer jobs\n"}).to_string(),
    )
    .unwrap();
    assert!(out.ok, "{}", out.text);
    let out =
        workmem_agent::tools::call(&mut cx, "write_file", &serde_json::json!({"path": "working-memory/detail/linker.md", "content": "jobs=2\n"}).to_string())
            .unwrap();
    assert!(out.ok, "{}", out.text);
    let refused = workmem_agent::tools::call(&mut cx, "write_file", &serde_json::json!({"path": "meta.json", "content": "{}"}).to_string()).unwrap();
    assert!(!refused.ok, "outside working-memory/ is refused on every store: {}", refused.text);
    // A compaction, with its archive among the memory files, then what it replaced read back.
    s.append_message(Message::new("assistant", "Linking with two jobs now.")).unwrap();
    let args = workmem_agent::compact::Args { keep_recent: 1, ..Default::default() };
    let done = workmem_agent::compact::compact(&s, &runtime, &tokenizer, None, &args).unwrap();
    assert!(!done.replaced.is_empty(), "{done:?}");
    let read = workmem_agent::compact::read_history(&s, "3").unwrap();
    assert!(read.contains("step 0: the linker ran out of memory"), "{read}");
    // A request built from all of it.
    let mut engine = runtime.instance().unwrap();
    let options = Options::new("gpt-4o", workmem_agent::tools::openai_tools(false, false));
    let built = context::build(&s, &mut engine, &tokenizer, &options).unwrap();
    // Keyed updates: the same request twice is one update.
    let dsl = "CURRENT_PROGRESS:\n  Completed:\n    - Linked\n  In Progress:\n    - Verifying\n";
    let key = workmem_store::db::RequestKey::new("k-1", &[dsl]).unwrap();
    assert!(matches!(workmem_commit::apply_once(&runtime, &s, &s.lock().unwrap(), dsl, &key).unwrap(), workmem_commit::Once::Applied(_)));
    let keyed_again = matches!(workmem_commit::apply_once(&runtime, &s, &s.lock().unwrap(), dsl, &key).unwrap(), workmem_commit::Once::Before(_));
    // A branch takes its parent's memory, found again by ID.
    let branch = sessions.create(Some("branch"), &template).unwrap();
    let took = branch.with_lock(|l| branch.inherit_memory(l, &sessions.find("seam").unwrap())).unwrap();
    let meta = s.meta().unwrap();
    Ended {
        overview: s.overview().unwrap(),
        view: s.view().unwrap().entries,
        updates: s.log().unwrap().iter().map(|r| r["seq"].as_u64().unwrap()).collect(),
        meta: (meta.updates, meta.memory_updated_round, meta.requests.len()),
        files: s.memory_files().list("working-memory").unwrap(),
        request: built.messages.iter().map(|m| serde_json::to_string(m).unwrap()).collect(),
        keyed_again,
        branch: (took, branch.overview().unwrap(), branch.meta().unwrap().updates),
    }
}

#[test]
fn a_second_store_behind_the_traits_runs_every_caller_as_the_directories_do() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("seam-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let on_disk = converse(&Sessions::new(&root.join("sessions"), &root));
    let in_memory = converse(&Sessions::with_store(Arc::new(Root::default())));
    assert_eq!(on_disk.updates, vec![1, 2, 3]);
    assert!(on_disk.keyed_again && on_disk.branch.0, "{on_disk:?}");
    assert!(on_disk.files.iter().any(|f| f.contains("history-")), "the compaction archived to a memory file: {:?}", on_disk.files);
    assert_eq!(in_memory, on_disk);
    let _ = std::fs::remove_dir_all(&root);
}

/// The PostgreSQL store (issue 74) runs every caller as the directories do, against a real
/// server; a second process's handle (another connection) sees what the first committed, and
/// waits for its lock within the handle's bound, naming what holds it.
#[test]
fn the_postgres_store_runs_every_caller_as_the_directories_do() {
    let Some(server) = common::postgres::Server::start() else { return };
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("seam-pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let on_disk = converse(&Sessions::new(&root.join("sessions"), &root));
    let url = server.database("seam");
    let store = Arc::new(workmem_store::PgSessions::connect(&url, &root).unwrap());
    assert_eq!(converse(&Sessions::with_store(store.clone())), on_disk);

    let other = workmem_store::PgSessions::connect(&url, &root).unwrap();
    let (mine, theirs) = (store.find("seam").unwrap(), other.find("seam").unwrap());
    assert_eq!(theirs.records().unwrap(), mine.records().unwrap(), "another connection reads what was committed");
    assert_eq!(theirs.overview().unwrap(), mine.overview().unwrap());
    let held = mine.lock().unwrap();
    let waited = std::time::Instant::now();
    let busy = theirs.clone().waiting_at_most(std::time::Duration::from_millis(300)).lock().map(drop).unwrap_err();
    assert!(matches!(busy, workmem_store::Error::Busy { .. }) && busy.to_string().contains("advisory lock"), "{busy}");
    assert!(waited.elapsed() < std::time::Duration::from_secs(5));
    drop(held);
    theirs.append_message(Message::new("user", "and now?")).unwrap();
    assert_eq!(mine.records().unwrap().last().map(|r| r.seq), Some(theirs.next_seq().unwrap() - 1));
    assert!(matches!(store.create(Some("seam"), "x"), Err(workmem_store::Error::Exists { .. })));
    let _ = std::fs::remove_dir_all(&root);
}

/// Sessions made at once by several processes on one database are each taken in by a reader
/// of `made_after` running beside them (issue 74: a session whose row number was drawn before
/// another's but committed after it was passed over for good, and the replicas that never took
/// it in started sessions of their own for its conversation: 42 of 64 in `make bench-proxy`'s
/// three-replica load).
#[test]
fn every_session_made_at_once_is_taken_in() {
    let Some(server) = common::postgres::Server::start() else { return };
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("seam-made-{}", std::process::id()));
    let url = server.database("made");
    let (makers, each) = (6, 25);
    let reader = workmem_store::PgSessions::connect(&url, &root).unwrap();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let seen = std::thread::scope(|scope| {
        for m in 0..makers {
            let (url, root, done) = (&url, &root, &done);
            scope.spawn(move || {
                let store = workmem_store::PgSessions::connect(url, root).unwrap();
                for i in 0..each {
                    store.create(Some(&format!("m{m}-{i}")), "x").unwrap();
                }
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
        let (mut seen, mut cursor) = (std::collections::BTreeSet::new(), 0);
        loop {
            let finished = done.load(std::sync::atomic::Ordering::SeqCst) == makers;
            let (made, next) = reader.made_after(cursor).unwrap();
            seen.extend(made.into_iter().map(|(_, meta)| meta.id));
            cursor = next;
            if finished {
                break seen;
            }
        }
    });
    assert_eq!(
        seen.len(),
        makers * each,
        "sessions passed over: {:?}",
        (0..makers).flat_map(|m| (0..each).map(move |i| format!("m{m}-{i}"))).filter(|id| !seen.contains(id)).collect::<Vec<_>>()
    );
}
