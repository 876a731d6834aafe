//! Any text applied to a memory that already holds entries: no panic; a refusal changes
//! nothing; an applied update saves to a state that loads back to the same memory, with
//! every ID once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use workmem_guest::{Memory, Wants};

const SETUP: &str = "CURRENT_PROGRESS:\n  In Progress:\n    - fuzzing\nKEY_LEARNINGS:\n  ADD:\n    - because a: KL one\n    - because b: KL two\nVERBATIM_CONTEXT:\n  ADD:\n    - because c: label => snippet\n";

fuzz_target!(|text: &str| {
    let mut memory = Memory::new();
    memory.apply(SETUP, "t0", Wants::default()).expect("the setup applies");
    let before = memory.save();
    match memory.apply(text, "t1", Wants { overview: true, state: true }) {
        Err(_) => assert_eq!(memory.save(), before, "a refused update changed the memory"),
        Ok(applied) => {
            let saved = applied.state.expect("asked for");
            let loaded = Memory::load(&saved).expect("a saved memory loads");
            assert_eq!(loaded.save(), saved);
            let mut ids: Vec<&str> = loaded.state().learnings.iter().map(|l| l.id.as_str()).collect();
            ids.extend(loaded.state().verbatim.iter().map(|v| v.id.as_str()));
            let count = ids.len();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), count, "an ID was handed out twice");
        }
    }
});
