//! `apply SETUP UPDATE TEXT N`: N times, a memory set up with SETUP is cloned and UPDATE
//! applied to it, then TEXT (none if `-`). `make bench-instructions` (host/bench/benches/
//! instructions.py) counts these applies under callgrind with the example built with the
//! `guest` profile, the components' own (fat LTO, one codegen unit), so that the component is
//! also held to a native build optimized as it is, in a process of its own.

use workmem_guest::{Memory, Wants};

const NOW: &str = "2026-11-22T12:00:00Z";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [setup, update, text, n] = &args[..] else {
        eprintln!("usage: apply SETUP UPDATE TEXT N (TEXT - for none)");
        std::process::exit(2);
    };
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    let (update, text) = (read(update), (text != "-").then(|| read(text)));
    let mut base = Memory::new();
    base.apply(&read(setup), NOW, Wants::default()).expect("the setup applies");
    for _ in 0..n.parse::<usize>().expect("N is a number") {
        let mut m = base.clone();
        m.apply(&update, NOW, Wants::default()).expect("the update applies");
        if let Some(text) = &text {
            assert!(m.apply(text, NOW, Wants::default()).is_ok());
        }
    }
}
