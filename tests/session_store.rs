//! The file session store's commit path: a commit interrupted at any step is finished by
//! the next lock holder, so memory and log agree; a record cut short by a crash is dropped.

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
    }
}

fn seqs(log: &[serde_json::Value]) -> Vec<u64> {
    log.iter().map(|r| r["seq"].as_u64().unwrap()).collect()
}

#[test]
fn a_commit_interrupted_at_any_step_is_finished_by_the_next_lock_holder() {
    let root = tempdir("interrupted");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    session.with_lock(|l| session.commit(l, &commit(1))).unwrap();

    // The crash points of a commit: after the pending file, after the log append, after the
    // state, after the overview. Each leaves the pending file behind.
    for (step, seq) in (0..4).zip(2..) {
        let c = commit(seq);
        std::fs::write(session.path("commit.pending.json"), serde_json::to_vec(&c).unwrap()).unwrap();
        if step >= 1 {
            let mut log = std::fs::OpenOptions::new().append(true).open(session.path("updates.jsonl")).unwrap();
            std::io::Write::write_all(&mut log, format!("{}\n", c.log_entry).as_bytes()).unwrap();
        }
        if step >= 2 {
            std::fs::write(session.path("state.json"), &c.state).unwrap();
        }
        if step >= 3 {
            std::fs::write(session.path("working-memory/overview.md"), &c.overview).unwrap();
        }
        let state = session.with_lock(|l| session.load_memory(l)).unwrap();
        assert_eq!(state.as_deref(), Some(c.state.as_str()), "step {step}");
        assert_eq!(session.overview().unwrap(), c.overview, "step {step}");
        assert_eq!(seqs(&session.log().unwrap()), (1..=u64::from(seq)).collect::<Vec<_>>(), "step {step}: the log and the memory agree");
        assert!(!session.path("commit.pending.json").exists());
    }
}

#[test]
fn a_log_record_cut_short_is_dropped_before_the_next_commit() {
    let root = tempdir("torn");
    let session = Sessions::new(&root, &root).create(Some("s"), "# template\n").unwrap();
    session.with_lock(|l| session.commit(l, &commit(1))).unwrap();
    let mut log = std::fs::OpenOptions::new().append(true).open(session.path("updates.jsonl")).unwrap();
    std::io::Write::write_all(&mut log, b"{\"seq\":2,\"diff\":\"upd").unwrap();
    session.with_lock(|l| session.commit(l, &commit(2))).unwrap();
    assert_eq!(seqs(&session.log().unwrap()), [1, 2]);
}
