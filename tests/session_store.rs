//! The file session store's commit path: a commit interrupted at any step is finished by
//! the next lock holder, so memory and log agree; a record cut short by a crash is dropped.

use crate::common;

use std::path::{Path, PathBuf};
use workmem_store::{Commit, Sessions};

fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn commit(seq: u32) -> Commit {
    Commit {
        seq,
        log_entry: format!("{{\"seq\":{seq},\"diff\":\"update {seq}\"}}"),
        state: format!("{{\"updates\":{seq}}}\n"),
        overview: format!("# overview after {seq}\n"),
        request: None,
    }
}

fn seqs(log: &[serde_json::Value]) -> Vec<u64> {
    log.iter().map(|r| r["seq"].as_u64().unwrap()).collect()
}

/// A commit stopped after each of its steps in turn (failpoints inside the real commit, so
/// the steps are taken in the order the code takes them) leaves its pending record, and the
/// next lock holder finishes it: memory, overview, log and meta.json agree.
#[test]
fn a_commit_interrupted_at_any_step_is_finished_by_the_next_lock_holder() {
    use workmem_store::session::failpoint;
    let root = tempdir("interrupted");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    session.with_lock(|l| session.commit(l, &commit(1))).unwrap();
    for (step, seq) in failpoint::STEPS.into_iter().zip(2..) {
        let c = commit(seq);
        failpoint::arm(step);
        assert!(session.with_lock(|l| session.commit(l, &c)).is_err(), "{step:?}: the failpoint stopped the commit");
        assert!(session.path("commit.pending.json").exists(), "{step:?}: a stopped commit leaves its pending record");
        // What each step had written when the commit stopped: the order of the steps.
        let done = failpoint::STEPS.iter().position(|s| *s == step).unwrap();
        let logged = seqs(&session.log().unwrap()).last().copied() == Some(u64::from(seq));
        let stated = std::fs::read_to_string(session.path("state.json")).unwrap() == c.state;
        let shown = session.overview().unwrap() == c.overview;
        let counted = session.meta().unwrap().updates == u64::from(seq);
        assert_eq!([logged, stated, shown, counted], [done >= 1, done >= 2, done >= 3, done >= 4], "{step:?}: log, state, overview, meta.json written");
        let state = session.with_lock(|l| session.load_memory(l)).unwrap();
        assert_eq!(state.as_deref(), Some(c.state.as_str()), "{step:?}");
        assert_eq!(session.overview().unwrap(), c.overview, "{step:?}");
        assert_eq!(seqs(&session.log().unwrap()), (1..=u64::from(seq)).collect::<Vec<_>>(), "{step:?}: the log and the memory agree");
        assert_eq!(session.meta().unwrap().updates, u64::from(seq), "{step:?}: meta.json counts it");
        assert!(!session.path("commit.pending.json").exists(), "{step:?}");
    }
}

/// A writer without `flock` (Node's) holds the session through `.lock.holder`: a server's lock
/// waits its bounded time and answers busy, changing nothing; once that process is gone, its
/// holder file is broken and the commit goes through.
#[test]
fn a_holder_file_of_a_live_process_holds_the_lock_and_a_dead_ones_is_broken() {
    let root = tempdir("holder");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    let mut other = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    std::fs::write(session.path(".lock.holder"), format!("{} 0123\n", other.id())).unwrap();
    let waiting = session.clone().waiting_at_most(std::time::Duration::from_millis(100));
    let err = waiting.with_lock(|l| waiting.commit(l, &commit(1))).unwrap_err();
    assert!(matches!(err, workmem_store::Error::Busy { .. }), "{err}");
    assert!(session.log().unwrap().is_empty(), "a busy lock changed nothing");
    other.kill().unwrap();
    other.wait().unwrap();
    waiting.with_lock(|l| waiting.commit(l, &commit(1))).unwrap();
    assert_eq!(seqs(&session.log().unwrap()), [1]);
    assert!(!session.path(".lock.holder").exists(), "the lock's holder file goes with it");
}

/// A reader without the lock gets one commit's state and overview together, never one's state
/// beside another's overview, while a writer commits 300 times under it; a commit a crash
/// left half done is read from its pending record.
#[test]
fn the_committed_memory_is_read_whole_without_the_lock() {
    let root = tempdir("lock-free");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    let number = |text: &str| text.trim_end().rsplit([' ', ':']).next().unwrap().trim_end_matches('}').parse::<u32>().unwrap();
    let writer = {
        let session = session.clone();
        std::thread::spawn(move || {
            for seq in 1..=300 {
                session.with_lock(|l| session.commit(l, &commit(seq))).unwrap();
            }
        })
    };
    let (mut reads, mut whole) = (0, 0);
    while !writer.is_finished() {
        reads += 1;
        if let Some((state, overview)) = session.committed_memory().unwrap() {
            whole += 1;
            match state {
                Some(state) => assert_eq!(number(&state), number(&overview), "{state} beside {overview}"),
                None => assert_eq!(overview, "# template\n"),
            }
        }
    }
    writer.join().unwrap();
    assert!(whole > 0 && whole * 2 >= reads, "{whole} of {reads} reads got through");

    let c = commit(301);
    std::fs::write(session.path("commit.pending.json"), serde_json::to_vec(&c).unwrap()).unwrap();
    std::fs::write(session.path("state.json"), &c.state).unwrap();
    let (state, overview) = session.committed_memory().unwrap().unwrap();
    assert_eq!((state.as_deref(), overview.as_str()), (Some(c.state.as_str()), c.overview.as_str()), "the pending record is the memory");
}

#[test]
fn a_log_record_cut_short_is_dropped_before_the_next_commit() {
    let root = tempdir("torn");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    session.with_lock(|l| session.commit(l, &commit(1))).unwrap();
    let mut log = std::fs::OpenOptions::new().append(true).open(session.path("updates.jsonl")).unwrap();
    std::io::Write::write_all(&mut log, b"{\"seq\":2,\"diff\":\"upd").unwrap();
    // Readers see the whole records only; the torn one is not an error.
    assert_eq!(seqs(&session.log().unwrap()), [1]);
    session.with_lock(|l| session.commit(l, &commit(2))).unwrap();
    assert_eq!(seqs(&session.log().unwrap()), [1, 2]);
    assert!(std::fs::read_to_string(session.path("updates.jsonl")).unwrap().ends_with("}\n"));

    // The same for the session log: a torn message is skipped by readers and dropped before
    // the next append, which gets the next sequence number after the last whole record.
    let m = |text: &str| workmem_store::Message::new("user", text);
    session.append_message(m("one")).unwrap();
    let mut log = std::fs::OpenOptions::new().append(true).open(session.path("messages.jsonl")).unwrap();
    std::io::Write::write_all(&mut log, b"{\"seq\":2,\"at\":\"x\",\"kind\":\"mess").unwrap();
    assert_eq!(session.records().unwrap().len(), 1);
    assert_eq!(session.view().unwrap().entries.len(), 1);
    assert_eq!(session.append_message(m("two")).unwrap().seq, 2);
    let records = session.records().unwrap();
    assert_eq!(records.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn a_missing_state_after_updates_is_an_error_never_a_fresh_start() {
    let root = tempdir("missing");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    assert_eq!(session.with_lock(|l| session.load_memory(l)).unwrap(), None, "a new session has no state yet");
    session.with_lock(|l| session.commit(l, &commit(1))).unwrap();
    std::fs::remove_file(session.path("state.json")).unwrap();
    let err = session.with_lock(|l| session.load_memory(l)).unwrap_err();
    assert!(matches!(err, workmem_store::Error::MissingState { updates: 1, .. }), "{err:?}");
    assert!(err.to_string().contains("1 committed update(s) but no state.json"), "{err}");
}

#[test]
fn a_commit_that_would_fail_midway_is_refused_before_it_starts() {
    let root = tempdir("refused");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    session.with_lock(|l| session.commit(l, &commit(1))).unwrap();
    std::fs::write(session.path("meta.json"), "garbage").unwrap();
    let before = snapshot(session.dir());
    assert!(session.with_lock(|l| session.commit(l, &commit(2))).is_err());
    assert_eq!(snapshot(session.dir()), before, "a refused commit changed the session");
}

/// Every file under `dir`, path and bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The view a reader derives from the log alone, with no kept view.
fn folded(session: &workmem_store::Session) -> workmem_store::View {
    let mut view = workmem_store::View::default();
    for r in session.records().unwrap() {
        view.push(r);
    }
    view
}

fn compaction(replaces: Vec<u64>, text: &str) -> workmem_store::Entry {
    workmem_store::Entry::Compaction(workmem_store::Compaction {
        target: "all".into(),
        strategy: "archive".into(),
        replacements: vec![workmem_store::Replacement { replaces, message: workmem_store::Message::new("assistant", text) }],
        archive: None,
        notice: format!("compacted: {text}"),
        tokens_before: 0,
        tokens_after: 0,
        round: 0,
    })
}

#[test]
fn the_kept_view_is_the_log_folded_whatever_happened_to_view_json() {
    use workmem_store::Message;
    let root = tempdir("view");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    let view_json = session.dir().join("view.json");
    for round in 0..5u64 {
        for k in 0..40 {
            session.append_message(Message::new(if k % 2 == 0 { "user" } else { "assistant" }, format!("round {round} message {k}"))).unwrap();
        }
        let first = session.view().unwrap().entries[0].0;
        let locked = session.lock().unwrap();
        session.append(&locked, compaction((first..first + 30).collect(), &format!("summary {round}"))).unwrap();
        drop(locked);
        assert_eq!(session.view().unwrap(), folded(&session), "round {round}");
        assert!(view_json.exists(), "a compaction keeps the view");
    }
    let expected = folded(&session);
    assert_eq!(expected.last_compaction.as_ref().unwrap().notice, "compacted: summary 4");
    // Lost, garbage, stale (an older offset), from another log: each reads as the log says. A
    // handle keeps the view it read, so each is read by a new one (another process).
    let fresh = || workmem_store::Session::open(session.dir()).unwrap();
    std::fs::remove_file(&view_json).unwrap();
    assert_eq!(fresh().view().unwrap(), expected);
    std::fs::write(&view_json, b"{not json").unwrap();
    assert_eq!(fresh().view().unwrap(), expected);
    let kept = std::fs::read(&view_json).unwrap();
    session.append_message(Message::new("user", "one more")).unwrap();
    std::fs::write(&view_json, &kept).unwrap();
    assert_eq!(fresh().view().unwrap(), folded(&session));
    let mut other: serde_json::Value = serde_json::from_slice(&kept).unwrap();
    other["seq"] = 7.into();
    std::fs::write(&view_json, other.to_string()).unwrap();
    assert_eq!(fresh().view().unwrap(), folded(&session));
    other["offset"] = 3.into();
    std::fs::write(&view_json, other.to_string()).unwrap();
    assert_eq!(fresh().view().unwrap(), folded(&session));
    assert_eq!(session.view().unwrap(), folded(&session));
}

/// A handle keeps the view it read between calls (a server asks for it on every request);
/// what other handles (other processes) log meanwhile, messages and compactions, and a log
/// copied over from another session, are folded in as the log says.
#[test]
fn a_handle_keeps_its_view_and_follows_the_log() {
    use workmem_store::{Message, Session};
    let root = tempdir("held-view");
    let sessions = Sessions::new(&root, &root);
    let session = sessions.create(Some("s"), "# template\n").unwrap();
    let other = Session::open(session.dir()).unwrap();
    for round in 0..4u64 {
        for k in 0..10 {
            other.append_message(Message::new("user", format!("round {round} from the other handle {k}"))).unwrap();
        }
        let logged =
            session.append_messages(vec![Message::new("user", format!("round {round} a")), Message::new("assistant", format!("round {round} b"))]).unwrap();
        assert_eq!(logged[1].seq, logged[0].seq + 1, "one write numbers its records in order");
        assert_eq!(session.view().unwrap(), folded(&session), "round {round}");
        let first = session.view().unwrap().entries[0].0;
        let locked = other.lock().unwrap();
        other.append(&locked, compaction((first..first + 8).collect(), &format!("summary {round}"))).unwrap();
        drop(locked);
        assert_eq!(session.view().unwrap(), folded(&session), "round {round}, compacted by the other handle");
    }
    // Another session's log copied over this one's: its records do not continue the held view.
    let copy = sessions.create(Some("t"), "# template\n").unwrap();
    for k in 0..60 {
        copy.append_message(Message::new("user", format!("the copied session's message {k}"))).unwrap();
    }
    std::fs::copy(copy.dir().join("messages.jsonl"), session.dir().join("messages.jsonl")).unwrap();
    assert_eq!(session.view().unwrap(), folded(&copy));
}

/// The store's fold and the engine's `history.apply-replacements` are one rule written twice (the host
/// reads its log without an engine instance); this holds them together.
#[test]
fn the_store_folds_compactions_as_the_engine_replays_them() {
    use workmem_runtime::history::{Entry as ViewEntry, Replacement};
    use workmem_runtime::{ChatMessage, Options, Runtime};
    let runtime = Runtime::new(&Options { cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache")), ..Options::default() }).unwrap();
    let mut engine = runtime.instance().unwrap();
    let root = tempdir("replay-rule");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    let chat = |m: &workmem_store::Message| ChatMessage { role: m.role.clone(), content: m.content.clone(), tool_call_id: None, tool_calls: vec![] };
    for k in 0..30 {
        session.append_message(workmem_store::Message::new("user", format!("m{k}"))).unwrap();
    }
    let locked = session.lock().unwrap();
    // Overlapping, out of order, naming an earlier replacement, naming nothing that exists.
    for replaces in [vec![3, 4, 5], vec![20, 2, 21], vec![2, 6], vec![99], vec![10, 12, 14]] {
        let before: Vec<ViewEntry> = session.view().unwrap().entries.iter().map(|(seq, m)| ViewEntry { seq: *seq, message: chat(m), tokens: 0 }).collect();
        let text = format!("instead of {replaces:?}");
        let replacement = Replacement {
            replaces: replaces.clone(),
            message: ChatMessage { role: "assistant".into(), content: text.clone(), tool_call_id: None, tool_calls: vec![] },
        };
        let engine_view: Vec<(u64, String)> =
            engine.apply_replacements(&before, &[replacement]).unwrap().into_iter().map(|e| (e.seq, e.message.content)).collect();
        session.append(&locked, compaction(replaces, &text)).unwrap();
        let store_view: Vec<(u64, String)> = session.view().unwrap().entries.into_iter().map(|(seq, m)| (seq, m.content)).collect();
        assert_eq!(store_view, engine_view);
    }
}

const FIXTURE_AT: &str = "2026-11-23T12:00:00Z";
/// What every runtime's commit writes (tests/data/session/README.md).
const FIXTURE_FILES: [&str; 4] = ["state.json", "updates.jsonl", "working-memory/overview.md", "meta.json"];

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A fixture file's bytes, `updated_at` (the committer's clock) set aside.
fn fixture_bytes(dir: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    if name != "meta.json" {
        return text;
    }
    text.lines().filter(|l| !l.trim_start().starts_with("\"updated_at\"")).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_shared_session_fixture_is_what_this_store_commits() {
    let fixture = common::root().join("tests/data/session");
    let dir = tempdir("fixture").join("s");
    copy_dir(&fixture.join("before"), &dir);
    let session = workmem_store::Session::open(&dir).unwrap();
    let runtime = common::runtime();
    let locked = session.lock().unwrap();
    let mut memory = workmem_commit::load(&runtime, &session, &locked).unwrap();
    let applied = memory.apply(&common::read(&fixture.join("update.dsl")), FIXTURE_AT, workmem_commit::COMMIT).unwrap().unwrap();
    let commit = workmem_commit::to_commit(&applied);
    session.commit(&locked, &commit).unwrap();
    drop(locked);
    let mut pending = serde_json::to_string_pretty(&commit).unwrap();
    pending.push('\n');

    if std::env::var_os("WORKMEM_BLESS").is_some() {
        for name in FIXTURE_FILES {
            let to = fixture.join("after").join(name);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(dir.join(name), to).unwrap();
        }
        std::fs::write(fixture.join("pending.json"), &pending).unwrap();
        return;
    }
    for name in FIXTURE_FILES {
        assert_eq!(fixture_bytes(&dir, name), fixture_bytes(&fixture.join("after"), name), "{name}");
    }
    assert_eq!(pending, common::read(&fixture.join("pending.json")));

    // The same commit, left pending by a crash, is finished by the next lock holder.
    let dir = tempdir("fixture-pending").join("s");
    copy_dir(&fixture.join("before"), &dir);
    std::fs::copy(fixture.join("pending.json"), dir.join("commit.pending.json")).unwrap();
    let session = workmem_store::Session::open(&dir).unwrap();
    drop(session.lock().unwrap());
    for name in FIXTURE_FILES {
        assert_eq!(fixture_bytes(&dir, name), fixture_bytes(&fixture.join("after"), name), "{name}, from the pending commit");
    }
    assert!(!dir.join("commit.pending.json").exists());
}

/// Sessions made at once in one directory each get one: a fresh ID has 16 random bits a
/// second, so 400 of them in a second or two collide (the proxy's session tests did, one run
/// in fifteen), and a taken one is drawn again. A given ID that is taken is still refused.
#[test]
fn sessions_made_at_once_each_get_one() {
    let dir = tempdir("made-at-once");
    let sessions = Sessions::new(&dir, &dir);
    let ids: std::collections::HashSet<String> = (0..400).map(|_| sessions.create(None, "# Memory\n").unwrap().meta().unwrap().id).collect();
    assert_eq!(ids.len(), 400);
    let taken = ids.iter().next().unwrap();
    assert!(matches!(sessions.create(Some(taken), "# Memory\n"), Err(workmem_store::Error::Exists { .. })));
    let _ = std::fs::remove_dir_all(&dir);
}
