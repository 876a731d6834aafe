//! Issue 12's document benchmark: put and get-latest p50/p99 with 100,000 snapshots stored
//! (1,000 memories × 100 versions), on SQLite and a real PostgreSQL, in one run. The stored
//! snapshots are loaded in bulk (what is measured is the store at that size, not the loading).
//! Then the same through `workmem serve`'s router on loopback (one client, keep-alive), with
//! the ratio to the store: what HTTP, tokens and the server's slots add.

#[path = "../../../tests/common/postgres.rs"]
mod pg;

use std::time::{Duration, Instant};
use workmem_runtime::{Options, Runtime};
use workmem_store::db::{Grants, Scope};
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
    // The search index as a put writes it (see workmem_store::db::terms).
    let terms = serde_json::to_string(&workmem_store::db::terms::terms(&body)).unwrap();
    if db.starts_with("postgres://") {
        let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
        c.execute(
            "INSERT INTO memory_contexts (vault_id, memory_id, context_id, actor_id, context, creation_time, version) \
             SELECT 'bench', 'm' || m, v::text, 'seed', $1, now() - interval '1 hour' - (100 - v) * interval '1 second', v \
             FROM generate_series(0, 999) m, generate_series(1, 100) v",
            &[&body],
        )
        .unwrap();
        c.execute(
            "INSERT INTO memory_terms SELECT 'bench', t.key, 'm' || m, t.value::bigint FROM generate_series(0, 999) m, json_each_text($1::text::json) t",
            &[&terms],
        )
        .unwrap();
        c.batch_execute("ANALYZE memory_contexts; ANALYZE memory_terms").unwrap();
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
                tx.execute("INSERT INTO memory_terms SELECT 'bench', key, ?1, value FROM json_each(?2)", rusqlite::params![format!("m{m}"), terms]).unwrap();
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

/// `workmem serve`'s router on a free loopback port, in this process; dropping the runtime
/// stops it.
fn serve(runtime: &Runtime, db: &str, dir: &std::path::Path) -> (tokio::runtime::Runtime, String) {
    let config = workmem_server::Config {
        db: db.into(),
        sessions: workmem_store::Sessions::new(&dir.join("sessions"), dir),
        slots: 8,
        max_body_bytes: 1 << 20,
        documents: Config::default(),
    };
    let router = workmem_server::router(runtime.clone(), &config).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    rt.spawn(workmem_listener::serve_until(listener, router, workmem_listener::Limits::default(), std::future::pending()));
    (rt, url)
}

/// `SAMPLES` get-latest then `SAMPLES` puts of random memories, timed one by one.
fn measure(mut get: impl FnMut(&str), mut put: impl FnMut(&str, &str)) -> [(Duration, Duration); 2] {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        format!("m{}", rng % MEMORIES as u64)
    };
    let gets = (0..SAMPLES)
        .map(|_| {
            let memory = next();
            let started = Instant::now();
            get(&memory);
            started.elapsed()
        })
        .collect();
    let puts = (0..SAMPLES)
        .map(|n| {
            let (memory, body) = (next(), text(n));
            let started = Instant::now();
            put(&memory, &body);
            started.elapsed()
        })
        .collect();
    [percentiles(gets), percentiles(puts)]
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
    let mut http_rows = Vec::new();
    for (kind, db) in targets {
        let docs = std::cell::RefCell::new(Documents::open(&db, runtime.clone(), Config::default()).unwrap());
        load(&db);
        assert_eq!(docs.borrow_mut().latest("bench", "m7").unwrap().version, VERSIONS as u64);
        let [(g50, g99), (p50, p99)] = measure(
            |memory| {
                std::hint::black_box(docs.borrow_mut().latest("bench", memory).unwrap());
            },
            |memory, body| {
                docs.borrow_mut().put("bench", memory, "bench", body.as_bytes(), None).unwrap();
            },
        );
        println!("{kind:<9} {g50:>16.2?} {g99:>16.2?} {p50:>10.2?} {p99:>10.2?}");
        let (rt, url) = serve(&runtime, &db, &dir);
        let token = Grants::open(&db).unwrap().grant(Scope::Vault("bench"), "bench", &Default::default()).unwrap().token;
        let http: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(30))).build().into();
        let auth = format!("Bearer {token}");
        let [(hg50, hg99), (hp50, hp99)] = measure(
            |memory| {
                let mut r = http.get(format!("{url}/v1/vaults/bench/memories/{memory}/context")).header("Authorization", &auth).call().unwrap();
                std::hint::black_box(r.body_mut().read_to_vec().unwrap());
            },
            |memory, body| {
                let mut r = http
                    .put(format!("{url}/v1/vaults/bench/memories/{memory}/context"))
                    .header("Authorization", &auth)
                    .content_type("text/plain")
                    .send(body)
                    .unwrap();
                r.body_mut().read_to_vec().unwrap();
            },
        );
        drop(rt);
        let ratio = |http: Duration, store: Duration| http.as_secs_f64() / store.as_secs_f64();
        http_rows.push(format!(
            "{kind:<9} {hg50:>16.2?} {hg99:>16.2?} {hp50:>10.2?} {hp99:>10.2?}   get {:.1}x, put {:.1}x",
            ratio(hg50, g50),
            ratio(hp50, p50)
        ));
    }
    println!("through workmem serve (loopback, one client, keep-alive; p50 ratio to the store):");
    for row in http_rows {
        println!("{row}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
