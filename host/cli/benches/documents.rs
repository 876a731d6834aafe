//! Issue 12's document benchmark: put and get-latest p50/p99 with 100,000 snapshots stored
//! (1,000 memories × 100 versions), on SQLite and a real PostgreSQL, in one run. The stored
//! snapshots are loaded in bulk (what is measured is the store at that size, not the loading).

#[path = "../../../tests/common/postgres.rs"]
mod pg;

use std::time::{Duration, Instant};
use workmem_runtime::{Options, Runtime};
use workmem_store::documents::{Config, Documents};

const MEMORIES: usize = 1_000;
const VERSIONS: usize = 100;
const SAMPLES: usize = 1_000;

fn text(n: usize) -> String {
    let mut t = format!("# Description\nBench memory.\n\n# Progress\n- step {n}\n\n# Facts\n");
    while t.len() < 1_500 {
        t.push_str("- a stable fact about this memory, one of many\n");
    }
    t
}

/// 100,000 snapshots: each memory's versions a second apart, ending an hour ago.
fn load(db: &str) {
    let base = std::time::SystemTime::now() - Duration::from_secs(3_600 + VERSIONS as u64);
    let body = text(0);
    if db.starts_with("postgres://") {
        let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
        c.execute(
            "INSERT INTO memory_contexts (vault_id, memory_id, context_id, actor_id, context, creation_time, version) \
             SELECT 'bench', 'm' || m, v::text, 'seed', $1, now() - interval '1 hour' - (100 - v) * interval '1 second', v \
             FROM generate_series(0, 999) m, generate_series(1, 100) v",
            &[&body],
        )
        .unwrap();
        c.execute("INSERT INTO memory_contexts_search SELECT 'bench', 'm' || m, $1 FROM generate_series(0, 999) m", &[&body]).unwrap();
        c.batch_execute("ANALYZE memory_contexts; ANALYZE memory_contexts_search").unwrap();
    } else {
        let mut c = rusqlite::Connection::open(db).unwrap();
        let tx = c.transaction().unwrap();
        {
            let mut insert = tx.prepare("INSERT INTO memory_contexts VALUES ('bench', ?1, ?2, 'seed', ?3, ?4, ?5)").unwrap();
            for m in 0..MEMORIES {
                for v in 1..=VERSIONS {
                    let at = humantime::format_rfc3339_micros(base + Duration::from_secs(v as u64)).to_string();
                    insert.execute(rusqlite::params![format!("m{m}"), v.to_string(), body, at, v as i64]).unwrap();
                }
                tx.execute("INSERT INTO memory_contexts_search VALUES ('bench', ?1, ?2)", rusqlite::params![format!("m{m}"), body]).unwrap();
            }
        }
        tx.commit().unwrap();
        c.execute_batch("ANALYZE").unwrap();
    }
}

fn percentiles(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[(times.len() - 1) * 99 / 100])
}

fn main() {
    let runtime = Runtime::new(&Options { cache_dir: Some(std::env::temp_dir().join("workmem-bench-cache")), ..Options::default() }).unwrap();
    let dir = std::env::temp_dir().join(format!("workmem-doc-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = pg::Server::start();
    let mut targets = vec![("sqlite", dir.join("docs.sqlite3").display().to_string())];
    if let Some(s) = &server {
        targets.push(("postgres", s.database("docs")));
    }
    println!("context documents: {MEMORIES} memories x {VERSIONS} versions = {} snapshots stored, {SAMPLES} samples each", MEMORIES * VERSIONS);
    println!("{:<9} {:>16} {:>16} {:>10} {:>10}", "backend", "get-latest p50", "get-latest p99", "put p50", "put p99");
    for (kind, db) in targets {
        let mut docs = Documents::open(&db, runtime.clone(), Config::default()).unwrap();
        load(&db);
        assert_eq!(docs.latest("bench", "m7").unwrap().version, VERSIONS as u64);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % MEMORIES as u64) as usize
        };
        let gets: Vec<Duration> = (0..SAMPLES)
            .map(|_| {
                let memory = format!("m{}", next());
                let started = Instant::now();
                std::hint::black_box(docs.latest("bench", &memory).unwrap());
                started.elapsed()
            })
            .collect();
        let puts: Vec<Duration> = (0..SAMPLES)
            .map(|n| {
                let (memory, body) = (format!("m{}", next()), text(n));
                let started = Instant::now();
                docs.put("bench", &memory, "bench", body.as_bytes(), None).unwrap();
                started.elapsed()
            })
            .collect();
        let ((g50, g99), (p50, p99)) = (percentiles(gets), percentiles(puts));
        println!("{kind:<9} {g50:>16.2?} {g99:>16.2?} {p50:>10.2?} {p99:>10.2?}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
