//! `cargo bench -p workmem-bench --bench compaction`: issue 8's two timing targets, in one run.
//!
//! - A `tools` compaction of a 100-turn trajectory (django-16560's first 100 model calls):
//!   the engine's plan through the component, and the whole host path (plan, archive file,
//!   log entry) on a session on disk. Target: < 5 ms.
//! - A request build in a session whose log holds 100,000 messages against one holding
//!   1,000, both compacted as an agent's would be (the view stays bounded). Target: within
//!   1.5x, which holds only because the view is kept, not folded from the whole log.

use std::path::Path;
use std::time::{Duration, Instant};
use workmem_agent::compact::{self, Args};
use workmem_agent::context::{self, Options as BuildOptions};
use workmem_llm::Tokenizer;
use workmem_runtime::history::{CompactRequest, Strategy, Target};
use workmem_runtime::{Options, Runtime};
use workmem_store::{Compaction, Entry, LogRecord, Message, Replacement, Session, Sessions};

fn median(samples: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..samples).map(|_| f()).collect();
    times.sort();
    times[samples / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn session(root: &Path, name: &str, runtime: &Runtime) -> Session {
    let template = runtime.instance().unwrap().overview_template().unwrap();
    Sessions::new(root, root).create(Some(name), &template).unwrap()
}

/// The first `turns` model calls of a trajectory: the messages before the next one.
fn trajectory(turns: usize) -> Vec<Message> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap();
    let all = workmem_store::messages::read_trajectory(&root.join("tests/data/trajectories/minisweagent-gemini3pro-django__django-16560.jsonl")).unwrap();
    let end = all.iter().enumerate().filter(|(_, m)| m.role == "assistant").nth(turns).map_or(all.len(), |(i, _)| i);
    all[1..end].to_vec()
}

/// A log of `n` messages, compacted every 200 (all but the last 20 archived, as the safety
/// net would), written in one go: appending 100,000 entries with an fsync each takes minutes.
fn long_log(session: &Session, n: u64) {
    let mut out = String::new();
    let mut seq = 0;
    let mut view: Vec<u64> = Vec::new();
    for k in 0..n {
        seq += 1;
        let role = if k % 2 == 0 { "user" } else { "assistant" };
        let message = Message::new(role, format!("message {k}: {}", "some words of an agent's work ".repeat(8)));
        out.push_str(&serde_json::to_string(&LogRecord { seq, at: "2026-11-22T12:00:00Z".into(), entry: Entry::Message(message), usage: None }).unwrap());
        out.push('\n');
        view.push(seq);
        if view.len() >= 200 {
            let replaces: Vec<u64> = view.drain(..view.len() - 20).collect();
            seq += 1;
            let compaction = Compaction {
                target: "all".into(),
                strategy: "archive".into(),
                replacements: vec![Replacement {
                    replaces: replaces.clone(),
                    message: Message::new("assistant", format!("[compacted messages #{}-{}]", replaces[0], replaces[replaces.len() - 1])),
                }],
                archive: None,
                notice: "History was compacted".into(),
                tokens_before: 0,
                tokens_after: 0,
                round: 0,
            };
            out.push_str(
                &serde_json::to_string(&LogRecord { seq, at: "2026-11-22T12:00:00Z".into(), entry: Entry::Compaction(compaction), usage: None }).unwrap(),
            );
            out.push('\n');
            view.insert(0, replaces[0]);
        }
    }
    std::fs::write(session.dir().join("messages.jsonl"), out).unwrap();
}

fn main() {
    let root = std::env::temp_dir().join(format!("workmem-bench-compaction-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let runtime = Runtime::new(&Options { cache_dir: Some(root.join("cache")), ..Options::default() }).unwrap();
    let tokenizer = Tokenizer::for_model("gpt-4o");

    // A tools compaction of 100 turns.
    let messages = trajectory(100);
    let s = session(&root, "tools", &runtime);
    for m in &messages {
        s.append_message(m.clone()).unwrap();
    }
    let view = context::view(&s, &tokenizer).unwrap();
    let request = CompactRequest {
        target: Target::Tools,
        strategy: Strategy::Archive,
        keep_recent: 5,
        archive_to: "working-memory/detail/history.md".into(),
        archive_lines: 0,
        never_compact: vec![],
        min_free: 0,
        summary: None,
        keep: vec![],
    };
    let mut engine = runtime.instance().unwrap();
    let plan = median(21, || {
        let start = Instant::now();
        engine.compact(&view, &request).unwrap().unwrap();
        start.elapsed()
    });
    let mut copies = 0;
    let host = median(11, || {
        copies += 1;
        let copy = session(&root, &format!("tools-{copies}"), &runtime);
        std::fs::copy(s.dir().join("messages.jsonl"), copy.dir().join("messages.jsonl")).unwrap();
        let start = Instant::now();
        compact::compact(&copy, &runtime, &tokenizer, None, &Args { target: Target::Tools, ..Args::default() }).unwrap();
        start.elapsed()
    });

    // A request build, 100,000 messages against 1,000.
    let build = |n: u64| {
        let s = session(&root, &format!("log-{n}"), &runtime);
        long_log(&s, n);
        let options =
            BuildOptions { history: workmem_runtime::HistoryMode::All, ..BuildOptions::new("gpt-4o", workmem_agent::tools::openai_tools(false, false)) };
        let mut engine = runtime.instance().unwrap();
        context::build(&s, &mut engine, &tokenizer, &options).unwrap();
        median(21, || {
            s.append_message(Message::new("user", "one more step")).unwrap();
            let start = Instant::now();
            context::build(&s, &mut engine, &tokenizer, &options).unwrap();
            start.elapsed()
        })
    };
    let small = build(1_000);
    let large = build(100_000);
    let _ = std::fs::remove_dir_all(&root);

    let ratio = large.as_secs_f64() / small.as_secs_f64();
    let row = serde_json::json!({
        "tools_compaction_100_turns_engine_ms": ms(plan),
        "tools_compaction_100_turns_host_ms": ms(host),
        "build_1k_ms": ms(small),
        "build_100k_ms": ms(large),
        "build_ratio": ratio,
    });
    if std::env::args().any(|a| a == "--json") {
        println!("{row}");
        return;
    }
    println!("| measure | time | target |");
    println!("|---|---|---|");
    println!("| `tools` compaction of 100 turns, engine (component) | {:.2} ms | < 5 ms {} |", ms(plan), if ms(plan) < 5.0 { "✓" } else { "✗" });
    println!("| the same, whole host path (plan, archive file, log entry) | {:.2} ms | < 5 ms {} |", ms(host), if ms(host) < 5.0 { "✓" } else { "✗" });
    println!("| request build, log of 1,000 messages | {:.2} ms | |", ms(small));
    println!("| request build, log of 100,000 messages | {:.2} ms | |", ms(large));
    println!("| ratio 100,000 / 1,000 | {ratio:.2}x | ≤ 1.5x {} |", if ratio <= 1.5 { "✓" } else { "✗" });
}
