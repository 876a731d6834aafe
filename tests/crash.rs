//! `kill -9` at random moments of `apply` and `update`, 1,200 times: after each, the session
//! loads, state, update log and meta.json agree, every update is wholly there or not at all
//! (and there whenever the command said it succeeded), and no temporary file is left.

use crate::common;
use crate::llm_server;

use common::Workspace;
use llm_server::{Reply, Server};
use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use workmem_store::Session;

const APPLY_KILLS: usize = 1000;
const UPDATE_KILLS: usize = 200;
/// Kills between two timings of the command killed (half as many for `update`).
const REMEASURE_EVERY: usize = 100;

/// xorshift64*: the kill moments, reproducible from the seed the test prints.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

fn update_text(i: usize) -> String {
    format!("KEY_LEARNINGS:\n  ADD:\n    - because round {i} ran: learning number {i}\n")
}

/// Starts `apply` of round `i`'s update.
fn apply(ws: &Workspace, i: usize) -> Child {
    let mut child = ws.cmd(None, &["apply", "--session", "s", "-"]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    // The child may be killed before it reads: a closed pipe is expected then.
    let _ = child.stdin.take().unwrap().write_all(update_text(i).as_bytes());
    child
}

fn update(ws: &Workspace, llm: &str, i: usize) -> Child {
    ws.cmd(Some(llm), &["update", "--session", "s", "--task", &format!("round {i}")]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()
}

/// Runs `start` to completion a few times and returns the median time it takes.
fn typical(mut start: impl FnMut() -> Child) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let at = Instant::now();
            assert!(start().wait().unwrap().success(), "an uninterrupted run failed");
            at.elapsed()
        })
        .collect();
    times.sort();
    times[2]
}

/// What a kill left for the next command to finish: (a pending commit, temporary files).
/// Seen before anything recovers, and `memory list` must not show the temporary files.
fn left_behind(ws: &Workspace, round: usize) -> (bool, usize) {
    let pending = ws.session.join("commit.pending.json").exists();
    let mut temps = 0;
    for dir in [ws.session.clone(), ws.session.join("working-memory")] {
        temps += std::fs::read_dir(&dir).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().contains(".tmp-")).count();
    }
    let session = Session::open(&ws.session).unwrap_or_else(|e| panic!("round {round}: the session does not load: {e:#}"));
    let listed = session.memory_files().list("working-memory").unwrap();
    assert!(listed.iter().all(|n| !n.contains(".tmp-")), "round {round}: memory list shows a temporary file: {listed:?}");
    (pending, temps)
}

/// The invariants after a crash; `done` are the rounds whose command reported success.
/// Returns how many updates the session holds.
fn check(ws: &Workspace, done: &[usize], round: usize) -> usize {
    let session = Session::open(&ws.session).unwrap_or_else(|e| panic!("round {round}: the session does not load: {e:#}"));
    // What the next command does first: take the lock, finishing a commit a crash cut short.
    let locked = session.lock().unwrap_or_else(|e| panic!("round {round}: {e:#}"));
    let state: serde_json::Value = match session.load_memory(&locked).unwrap_or_else(|e| panic!("round {round}: {e:#}")) {
        Some(text) => serde_json::from_str(&text).unwrap(),
        None => serde_json::json!({"updates": 0, "learnings": []}),
    };
    let log = session.log().unwrap_or_else(|e| panic!("round {round}: the update log does not read: {e:#}"));
    let meta = session.meta().unwrap();
    let updates = state["updates"].as_u64().unwrap() as usize;
    let learnings = state["learnings"].as_array().unwrap();
    assert_eq!(log.len(), updates, "round {round}: the log and the state disagree");
    assert_eq!(meta.updates as usize, updates, "round {round}: meta.json and the state disagree");
    assert_eq!(learnings.len(), updates, "round {round}: an update is partly there, or twice");
    for (n, (record, learning)) in log.iter().zip(learnings).enumerate() {
        let id = format!("KL-{}", n + 1);
        assert_eq!(record["seq"], n + 1, "round {round}: log record {n}");
        assert_eq!(record["added"], serde_json::json!([id]), "round {round}: log record {n}");
        assert_eq!(learning["id"], id, "round {round}");
        let text = learning["text"].as_str().unwrap();
        assert!(record["diff"].as_str().unwrap().contains(text), "round {round}: {id} is not the update its log record describes");
    }
    let texts: Vec<&str> = learnings.iter().map(|l| l["text"].as_str().unwrap()).collect();
    for &i in done {
        assert!(texts.contains(&format!("learning number {i}").as_str()), "round {round}: round {i} reported success but is not there");
    }
    if let Some(last) = texts.last() {
        assert!(session.overview().unwrap().contains(last), "round {round}: overview.md is not the state's");
    }
    for dir in [ws.session.clone(), ws.session.join("working-memory")] {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(!name.contains(".tmp-"), "round {round}: a temporary file was left: {name}");
        }
    }
    assert_eq!(session.memory_files().list("working-memory").unwrap(), ["working-memory/overview.md"], "round {round}");
    assert!(!ws.session.join("commit.pending.json").exists(), "round {round}: a pending commit was not finished");
    updates
}

#[test]
fn kill_9_at_any_moment_leaves_a_session_that_loads_and_agrees() {
    let ws = Workspace::new("crash");
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    eprintln!("kill moments from seed {seed}");
    let mut rng = Rng(seed);
    let started = Instant::now();
    let (mut done, mut killed) = (Vec::new(), 0);
    let mut round = 0;
    let mut run = |round: usize, child: Child, at: Duration, done: &mut Vec<usize>| {
        let mut child = child;
        std::thread::sleep(at);
        let finished = child.try_wait().unwrap();
        let _ = child.kill();
        let status = child.wait().unwrap();
        match finished {
            Some(s) if s.success() => done.push(round),
            Some(s) => panic!("round {round}: the command failed on its own: {s}"),
            None if status.success() => done.push(round), // it finished just before the kill
            None => killed += 1,
        }
    };

    let (mut pending, mut temps) = (0, 0);
    let mut note = |(p, t): (bool, usize)| {
        pending += usize::from(p);
        temps += usize::from(t > 0);
    };
    let mut apply_time = Duration::ZERO;
    for i in 0..APPLY_KILLS {
        // Timed again every so often: a command's time moves with the machine's load (timed
        // once while CI's other tests started, the kills once came too late to catch 250).
        if i % REMEASURE_EVERY == 0 {
            let first = round + 1;
            apply_time = typical(|| {
                round += 1;
                apply(&ws, round)
            });
            done.extend(first..=round);
        }
        round += 1;
        let at = Duration::from_micros(rng.below(apply_time.as_micros() as u64 * 3 / 2));
        run(round, apply(&ws, round), at, &mut done);
        note(left_behind(&ws, round));
        check(&ws, &done, round);
    }

    let timings = UPDATE_KILLS.div_ceil(REMEASURE_EVERY / 2) * 5;
    let answers = (0..UPDATE_KILLS + timings + 10).map(|i| Reply::streamed(&update_text(10_000 + i))).collect();
    let llm = Server::start(answers);
    let mut served = 10_000;
    let mut update_time = Duration::ZERO;
    for i in 0..UPDATE_KILLS {
        if i % (REMEASURE_EVERY / 2) == 0 {
            update_time = typical(|| {
                served += 1;
                update(&ws, &llm.url, served)
            });
        }
        round += 1;
        let at = Duration::from_micros(rng.below(update_time.as_micros() as u64 * 3 / 2));
        let before = check(&ws, &[], round);
        let mut succeeded = Vec::new();
        run(round, update(&ws, &llm.url, round), at, &mut succeeded);
        note(left_behind(&ws, round));
        // Which answer an update got depends on which earlier ones reached the server, so
        // these rounds are checked for agreement and for their count, not for their texts.
        let after = check(&ws, &[], round);
        assert!(after >= before + succeeded.len(), "round {round}: an update reported success but is not there");
    }
    let updates = check(&ws, &done, round);
    eprintln!(
        "{} rounds ({APPLY_KILLS} of apply, {UPDATE_KILLS} of update) in {:.0?}: {killed} killed before they finished, {pending} leaving a pending commit and {temps} temporary files; {updates} updates landed",
        APPLY_KILLS + UPDATE_KILLS,
        started.elapsed()
    );
    assert!(killed > APPLY_KILLS / 4, "too few commands were cut short to test anything: {killed}");
    // Kills that land mid-commit are what this test is for: on a disk where a commit is too
    // quick to be caught, it would prove nothing (here, 86 of 1,200 rounds left a pending
    // commit and 56 temporary files).
    assert!(pending >= 10 && temps >= 3, "too few kills landed mid-commit: {pending} pending commits, {temps} with temporary files");
}
