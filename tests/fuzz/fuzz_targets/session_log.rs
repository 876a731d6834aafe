//! Any bytes as a session's messages.jsonl (and any as its kept view.json): reading the
//! history, a record, or the next sequence number never panics; a clean error or a value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use workmem_store::{Session, Sessions};

fn session() -> &'static Session {
    static SESSION: OnceLock<Session> = OnceLock::new();
    SESSION.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("workmem-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        Sessions::new(&root, &root).create(Some("fuzz"), "# Working Memory\n").expect("a session")
    })
}

fuzz_target!(|data: &[u8]| {
    let s = session();
    // The input splits at its first NUL: the log before it, a kept view after it.
    let (log, view) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    std::fs::write(s.path("messages.jsonl"), log).unwrap();
    match view {
        Some(v) => std::fs::write(s.path("view.json"), v).unwrap(),
        None => {
            let _ = std::fs::remove_file(s.path("view.json"));
        }
    }
    let _ = s.view();
    let _ = s.records();
    let _ = s.next_seq();
    let _ = s.original(1);
});
