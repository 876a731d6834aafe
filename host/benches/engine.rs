//! `cargo bench -p workmem --bench engine`: the engine through the component vs the same
//! engine compiled natively, measured in one run, with the targets of issue #2 beside them.

use std::time::{Duration, Instant};
use workmem::engine::{COMPONENT, Options, Runtime};

const SETUP: &str = include_str!("data/setup.dsl");
/// A realistic update: 4 KB written after the astropy-13579 trajectory in shared/data.
const UPDATE: &str = include_str!("data/update-4k.dsl");
const NOW: &str = "2026-11-22T12:00:00Z";

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

fn main() {
    let cache = std::env::temp_dir().join(format!("workmem-bench-{}", std::process::id()));
    let options = Options { cache_dir: Some(cache.clone()), ..Options::default() };

    // Native baseline.
    let native_state = workmem_guest::apply(workmem_guest::empty_state(), SETUP, NOW).merged.state;
    // The clone is the native twin of lowering the state into the component.
    let native = median(201, 20, || {
        let out = workmem_guest::apply(native_state.clone(), UPDATE, NOW);
        assert!(out.ok);
    });

    // Through the component.
    let runtime = Runtime::new(&options).expect("loads");
    let mut engine = runtime.instance().unwrap();
    let empty = engine.empty_state().unwrap();
    let state = engine.apply(&empty, SETUP, NOW).unwrap().merged.state;
    let wasm = median(201, 20, || {
        let out = engine.apply(&state, UPDATE, NOW).unwrap();
        assert!(out.ok);
    });
    // Same engine, same answer.
    let next = engine.apply(&state, UPDATE, NOW).unwrap().merged.state;
    let via_wasm = engine.render(&next).unwrap();
    let via_native = workmem_guest::render(&workmem_guest::apply(native_state.clone(), UPDATE, NOW).merged.state);
    assert_eq!(via_wasm, via_native, "the component and the native engine disagree");

    let parse_native = median(201, 20, || drop(workmem_guest::parse(UPDATE)));
    let parse_wasm = median(201, 20, || drop(engine.parse(UPDATE).unwrap()));

    // The canonical ABI's share: merging an empty update does almost no work but moves the
    // whole state into the component and back out.
    let nothing = workmem::engine::Update {
        progress: empty.progress.clone(),
        learnings: workmem::engine::LearningOps { add: vec![], archive: vec![] },
        verbatim: workmem::engine::VerbatimOps { add: vec![], archive: vec![] },
    };
    let native_nothing = workmem_guest::Update {
        progress: workmem_guest::empty_state().progress,
        learnings: workmem_guest::LearningOps { add: vec![], archive: vec![] },
        verbatim: workmem_guest::VerbatimOps { add: vec![], archive: vec![] },
    };
    let roundtrip_native = median(201, 50, || drop(workmem_guest::merge(native_state.clone(), vec![native_nothing.clone()], NOW).unwrap()));
    let roundtrip_wasm = median(201, 50, || drop(engine.merge(&state, std::slice::from_ref(&nothing), NOW).unwrap()));
    let call = median(201, 200, || drop(engine.empty_state().unwrap()));

    // Instantiation from the InstancePre.
    let instantiate = median(201, 20, || drop(runtime.instance().unwrap()));

    // Cold start: a new engine loads the cached precompiled component, links,
    // instantiates and answers a first call, as a CLI invocation does.
    let cold = median(51, 1, || {
        let rt = Runtime::new(&options).unwrap();
        assert!(rt.from_cache);
        rt.instance().unwrap().empty_state().unwrap();
    });
    // And without the cache, for scale.
    let compile = median(5, 1, || drop(Runtime::new(&Options { cache_dir: None, ..Options::default() }).unwrap()));

    let ratio = wasm.as_secs_f64() / native.as_secs_f64();
    let size = COMPONENT.len();
    let _ = std::fs::remove_dir_all(&cache);
    // For examples/bench_runtimes.py, which sets this table beside the other runtimes'.
    if std::env::args().any(|a| a == "--json") {
        println!(
            "{{\"runtime\": \"wasmtime (Rust host)\", \"apply_us\": {:.2}, \"roundtrip_us\": {:.2}, \"call_us\": {:.2}, \"cold_ms\": {:.3}, \"cold_uncached_ms\": {:.2}, \"native_apply_us\": {:.2}}}",
            us(wasm), us(roundtrip_wasm), us(call), us(cold) / 1e3, us(compile) / 1e3, us(native)
        );
        return;
    }
    println!("workmem engine benchmark ({} byte update, median)", UPDATE.len());
    println!("{:<44} {:>12} {:>12}  {}", "measure", "value", "target", "");
    let row = |name: &str, value: String, target: &str, ok: bool| {
        println!("{name:<44} {value:>12} {target:>12}  {}", if ok { "ok" } else { "MISSED" });
    };
    row("apply, native", format!("{:.1} µs", us(native)), "", true);
    row("apply, component (wasmtime)", format!("{:.1} µs", us(wasm)), "< 50 µs", us(wasm) < 50.0);
    row("apply ratio component / native", format!("{ratio:.2}x"), "<= 1.5x", ratio <= 1.5);
    row("parse only, native", format!("{:.1} µs", us(parse_native)), "", true);
    row("parse only, component", format!("{:.1} µs", us(parse_wasm)), "", true);
    row("state round trip (empty merge), native", format!("{:.1} µs", us(roundtrip_native)), "", true);
    row("state round trip (empty merge), component", format!("{:.1} µs", us(roundtrip_wasm)), "", true);
    row("instantiate from InstancePre", format!("{:.1} µs", us(instantiate)), "< 100 µs", us(instantiate) < 100.0);
    row("cold start (load precompiled + instantiate)", format!("{:.2} ms", us(cold) / 1e3), "< 5 ms", us(cold) < 5000.0);
    row("first start without cache (compile)", format!("{:.1} ms", us(compile) / 1e3), "", true);
    row("component size", format!("{size} B"), "<= 400 KB", size <= 400 * 1024);
}
