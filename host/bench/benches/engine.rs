//! `cargo bench -p workmem-bench --bench engine`: the engine through the component vs the same
//! engine compiled natively, measured in one run, with the targets of issue #2 beside them.

use std::time::{Duration, Instant};
use workmem_runtime::{COMPONENT, Options, Runtime, Wants};

const SETUP: &str = include_str!("data/setup.dsl");
/// A realistic update: 4 KB written after the astropy-13579 trajectory in shared/data.
const UPDATE: &str = include_str!("data/update-4k.dsl");
const NOW: &str = "2026-11-22T12:00:00Z";

/// A no-op update (archiving an ID that does not exist): the fixed cost of an apply,
/// carrying a short text in and a short outcome out.
const NOOP: &str = include_str!("data/noop.dsl");

/// Median of `samples` timings of `f`, each on a fresh value from `setup` (not timed).
fn median_each<T>(samples: usize, mut setup: impl FnMut() -> T, mut f: impl FnMut(T)) -> Duration {
    let mut times: Vec<Duration> = (0..samples)
        .map(|_| {
            let value = setup();
            let start = Instant::now();
            f(value);
            start.elapsed()
        })
        .collect();
    times.sort();
    times[samples / 2]
}

/// Median of `samples` timings, each the mean over `batch` calls.
fn median(samples: usize, batch: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..batch.max(3) {
        f();
    }
    let mut times: Vec<Duration> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                f();
            }
            start.elapsed() / batch as u32
        })
        .collect();
    times.sort();
    times[samples / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// 500 messages (user, assistant with a tool call, tool result, in turn), sized like an
/// agent's, and a 5 KB overview.
fn history() -> Vec<workmem_store::Message> {
    use workmem_store::{Message, ToolCall};
    (0..500)
        .map(|i| {
            let body = &UPDATE[(i * 37) % 2000..][..600 + (i * 53) % 1200];
            match i % 3 {
                0 => Message::new("user", format!("Step {i}: {}", &body[..200])),
                1 => Message {
                    tool_calls: vec![ToolCall {
                        id: format!("call_{i}"),
                        name: "read_file".into(),
                        arguments: "{\"path\": \"working-memory/detail/notes.md\"}".into(),
                    }],
                    ..Message::new("assistant", body)
                },
                _ => Message { tool_call_id: Some(format!("call_{}", i - 1)), ..Message::new("tool", body) },
            }
        })
        .collect()
}

fn overview() -> String {
    let mut o = String::from("# Working Memory\n\n## Current task\n");
    while o.len() < 5 * 1024 {
        o.push_str("- Fix SlicedLowLevelWCS.world_to_pixel for dropped world dimensions\n");
    }
    o
}

fn context_request() -> workmem_runtime::ContextRequest {
    use workmem_runtime::{ChatMessage, ContextRequest, HistoryMode, ToolCall};
    let history: Vec<ChatMessage> = history()
        .into_iter()
        .map(|m| ChatMessage {
            role: m.role,
            content: m.content,
            tool_call_id: m.tool_call_id,
            tool_calls: m.tool_calls.into_iter().map(|c| ToolCall { id: c.id, name: c.name, arguments: c.arguments }).collect(),
        })
        .collect();
    ContextRequest {
        system_prompt: "You are a capable software agent.".into(),
        agents_md: Some("Run the tests before you stop.".into()),
        overview: overview(),
        active_turn: 498,
        history,
        history_mode: HistoryMode::All,
        overview_path: "working-memory/overview.md".into(),
        detail_path: "working-memory/detail/".into(),
    }
}

/// The same session on disk, for the host's whole request build.
fn context_session() -> (workmem_store::Session, workmem_agent::context::Options) {
    let root = std::env::temp_dir().join(format!("workmem-bench-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let runtime = Runtime::new(&Options { cache_dir: None, ..Options::default() }).unwrap();
    let template = runtime.instance().unwrap().overview_template().unwrap();
    let session = workmem_store::Sessions::new(&root, &root).create(Some("bench"), &template).unwrap();
    for m in history() {
        session.append_message(m).unwrap();
    }
    session.memory_files().write("working-memory/overview.md", &overview()).unwrap();
    let options = workmem_agent::context::Options {
        history: workmem_runtime::HistoryMode::All,
        ..workmem_agent::context::Options::new("gpt-4o", workmem_agent::tools::openai_tools(false, false))
    };
    (session, options)
}

/// Real text: this repository's sources, docs and corpus, repeated to `len` bytes.
fn real_text(len: usize) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap();
    let mut files = Vec::new();
    for dir in ["guest/src", "host/runtime/src", "host/store/src", "host/llm/src", "host/agent/src", "host/cli/src", "tests/corpus", "examples/responses"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            files.push(e.path());
        }
    }
    files.push(root.join("README.md"));
    files.sort();
    let all: String = files.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    let mut text = String::with_capacity(len + all.len());
    while text.len() < len {
        text.push_str(&all);
    }
    text.truncate(text.floor_char_boundary(len));
    text
}

/// `--instructions MODE N`: N iterations of one path and nothing else, for callgrind to count
/// (host/bench/benches/instructions.py). MODE is `native` or `wasm`, each with `-noop` for the
/// no-op update instead (the fixed cost of an apply) and `-setup` for the same iterations
/// without the apply, whose count is subtracted.
fn instructions(mode: &str, n: usize) {
    let text = if mode.ends_with("-noop") { NOOP } else { UPDATE };
    let nothing = Wants { overview: false, state: false };
    let mut native_setup = workmem_guest::Memory::new();
    native_setup.apply(SETUP, NOW, workmem_guest::Wants::default()).unwrap();
    let runtime = Runtime::new(&Options::default()).expect("loads");
    let state = native_setup.save();
    for _ in 0..n {
        match mode {
            "native" | "native-noop" | "native-setup" => {
                let mut m = native_setup.clone();
                m.apply(UPDATE, NOW, workmem_guest::Wants::default()).unwrap();
                if mode != "native-setup" {
                    assert!(m.apply(text, NOW, workmem_guest::Wants::default()).is_ok());
                }
            }
            _ => {
                let mut m = runtime.load_memory(&state).unwrap().unwrap();
                m.apply(UPDATE, NOW, nothing).unwrap().unwrap();
                if mode != "wasm-setup" {
                    assert!(m.apply(text, NOW, nothing).unwrap().is_ok());
                }
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--instructions") {
        return instructions(&args[i + 1], args[i + 2].parse().unwrap());
    }
    let options = Options::default();

    let nothing = Wants { overview: false, state: false };
    // Native baseline: the same engine, the same memory, the same update.
    let mut native_setup = workmem_guest::Memory::new();
    native_setup.apply(SETUP, NOW, workmem_guest::Wants::default()).unwrap();
    let native = median_each(201, || native_setup.clone(), |mut m| assert!(m.apply(UPDATE, NOW, workmem_guest::Wants::default()).is_ok()));

    // Through the component: the memory lives in the instance; an apply carries the DSL in
    // and the outcome out.
    let runtime = Runtime::new(&options).expect("loads");
    let mut setup = runtime.new_memory().unwrap();
    setup.apply(SETUP, NOW, nothing).unwrap().unwrap();
    let setup_state = setup.save().unwrap();
    assert_eq!(setup_state, native_setup.save(), "the component and the native engine serialize differently");
    let load = || runtime.load_memory(&setup_state).unwrap().unwrap();
    // Each memory has an instance of its own, and the first calls into a fresh instance pay
    // for it (copy-on-write pages, lazy tables): that is the fresh-instance figure, what one CLI
    // call pays. The other runtimes' benches load every memory into one warm instance; to
    // measure the same thing here, each sample's memory has had the same call once before
    // (untimed), so the timed apply is the update's second, on a state one update larger.
    let warmed = |text: &'static str| {
        move || {
            let mut m = load();
            m.apply(text, NOW, nothing).unwrap().unwrap();
            m
        }
    };
    let warm = warmed(UPDATE);
    let cold_apply = median_each(201, load, |mut m| assert!(m.apply(UPDATE, NOW, nothing).unwrap().is_ok()));
    let wasm = median_each(201, warm, |mut m| assert!(m.apply(UPDATE, NOW, nothing).unwrap().is_ok()));
    let with_outputs = median_each(101, warm, |mut m| assert!(m.apply(UPDATE, NOW, Wants { overview: true, state: true }).unwrap().is_ok()));
    // Same engine, same answer.
    let mut m = load();
    m.apply(UPDATE, NOW, nothing).unwrap().unwrap();
    let mut n = native_setup.clone();
    n.apply(UPDATE, NOW, workmem_guest::Wants::default()).unwrap();
    assert_eq!(m.render().unwrap(), n.render(), "the component and the native engine disagree");

    let mut engine = runtime.instance().unwrap();
    let parse_native = median(201, 20, || drop(workmem_guest::parse(UPDATE)));
    let parse_wasm = median(201, 20, || drop(engine.parse(UPDATE).unwrap()));

    // The fixed cost of an apply: a no-op update, nothing carried but the short text and outcome.
    let noop_native = median_each(201, || native_setup.clone(), |mut m| drop(m.apply(NOOP, NOW, workmem_guest::Wants::default())));
    let noop_wasm = median_each(201, warmed(NOOP), |mut m| drop(m.apply(NOOP, NOW, nothing).unwrap()));
    let call = median(201, 200, || drop(engine.overview_template().unwrap()));

    // Context assembly (issue #4): a session of 500 messages and a 5 KB overview.
    let (session, context_options) = context_session();
    let request = context_request();
    let assemble = median(101, 10, || drop(engine.assemble_context(&request).unwrap()));
    let tokenizer = workmem_llm::Tokenizer::for_model("gpt-4o");
    let start = Instant::now();
    workmem_agent::context::build(&session, &mut engine, &tokenizer, &context_options).unwrap();
    let build_cold = start.elapsed();
    // Each next request follows a new message, as in a real turn: the session changes between
    // builds, and only what is new is counted.
    let mut step = 0;
    let build = median(21, 1, || {
        step += 1;
        session.append_message(workmem_store::Message::new("user", format!("step {step}: the test still fails on line {step}"))).unwrap();
        drop(workmem_agent::context::build(&session, &mut engine, &tokenizer, &context_options).unwrap())
    });

    // Token counting of 1 MB of real text (this repository's sources and corpus), through
    // the host's tokenizer and through tiktoken-rs directly.
    let text = real_text(1 << 20);
    let bpe = tiktoken_rs::o200k_base().unwrap();
    assert_eq!(tokenizer.count(&text) as usize, bpe.encode_with_special_tokens(&text).len(), "counts differ");
    let ours = median(5, 1, || {
        std::hint::black_box(tokenizer.count(&text));
    });
    let theirs = median(5, 1, || drop(std::hint::black_box(bpe.encode_with_special_tokens(&text))));

    // Instantiation from the InstancePre.
    let instantiate = median(201, 20, || drop(runtime.instance().unwrap()));

    // Cold start: a new engine loads the component the build compiled, links, instantiates and
    // answers a first call, as a CLI invocation does.
    let cold = median(51, 1, || {
        let rt = Runtime::new(&options).unwrap();
        rt.new_memory().unwrap().render().unwrap();
    });
    // And compiling it, for scale (what a component of an embedder's own costs uncached).
    let compile = median(5, 1, || drop(Runtime::from_bytes(COMPONENT.bytes(), &Options { cache_dir: None, ..Options::default() }).unwrap()));

    let ratio = wasm.as_secs_f64() / native.as_secs_f64();
    let size = COMPONENT.bytes().len();
    let _ = std::fs::remove_dir_all(session.dir().parent().unwrap().parent().unwrap());
    // For examples/bench_runtimes.py, which sets this table beside the other runtimes'.
    if std::env::args().any(|a| a == "--json") {
        println!(
            "{{\"runtime\": \"wasmtime (Rust host)\", \"apply_us\": {:.2}, \"fresh_apply_us\": {:.2}, \"noop_us\": {:.2}, \"call_us\": {:.2}, \"cold_ms\": {:.3}, \"compile_ms\": {:.2}, \"native_apply_us\": {:.2}}}",
            us(wasm),
            us(cold_apply),
            us(noop_wasm),
            us(call),
            us(cold) / 1e3,
            us(compile) / 1e3,
            us(native)
        );
        return;
    }
    println!("workmem engine benchmark ({} byte update, median)", UPDATE.len());
    println!("{:<44} {:>12} {:>12}", "measure", "value", "target");
    let row = |name: &str, value: String, target: &str, ok: bool| {
        println!("{name:<44} {value:>12} {target:>12}  {}", if ok { "ok" } else { "MISSED" });
    };
    row("apply, native", format!("{:.1} µs", us(native)), "", true);
    row("apply, component (wasmtime)", format!("{:.1} µs", us(wasm)), "< 50 µs", us(wasm) < 50.0);
    row("apply, component, first call of a fresh instance", format!("{:.1} µs", us(cold_apply)), "", true);
    row("apply ratio component / native", format!("{ratio:.2}x"), "<= 1.5x", ratio <= 1.5);
    row("parse only, native", format!("{:.1} µs", us(parse_native)), "", true);
    row("parse only, component", format!("{:.1} µs", us(parse_wasm)), "", true);
    row("apply, component, returning overview + state", format!("{:.1} µs", us(with_outputs)), "", true);
    row("no-op apply (fixed cost), native", format!("{:.1} µs", us(noop_native)), "", true);
    let share = noop_wasm.as_secs_f64() / wasm.as_secs_f64() * 100.0;
    row("no-op apply (fixed cost), component", format!("{:.1} µs", us(noop_wasm)), "", true);
    row("fixed cost / apply, component", format!("{share:.0}%"), "<= 10%", share <= 10.0);
    row("context assembly in the engine, 500 messages", format!("{:.2} ms", us(assemble) / 1e3), "< 1 ms", us(assemble) < 1000.0);
    row("request build, first (files, assembly, exact count)", format!("{:.2} ms", us(build_cold) / 1e3), "", true);
    row("request build, next ones (a message added before each; counts remembered)", format!("{:.2} ms", us(build) / 1e3), "< 10 ms", us(build) < 10_000.0);
    let mbps = |d: Duration| (text.len() as f64 / 1e6) / d.as_secs_f64();
    row("token counting, host (o200k_base)", format!("{:.1} MB/s", mbps(ours)), "", true);
    row("token counting, tiktoken-rs", format!("{:.1} MB/s", mbps(theirs)), "", true);
    row("instantiate from InstancePre", format!("{:.1} µs", us(instantiate)), "< 100 µs", us(instantiate) < 100.0);
    row("cold start (load the build's compiled component + instantiate)", format!("{:.2} ms", us(cold) / 1e3), "< 5 ms", us(cold) < 5000.0);
    row("compiling the component instead (from_bytes, no cache)", format!("{:.1} ms", us(compile) / 1e3), "", true);
    row("component size", format!("{size} B"), "<= 400 KB", size <= 400 * 1024);
}
