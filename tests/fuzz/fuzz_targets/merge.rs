//! Updates built field by field from the input, in range and out of it (empty strings,
//! newlines, malformed IDs): merge never panics, and a refusal says why.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use workmem_guest::{self as engine, ArchiveOp, LearningAdd, LearningOps, Progress, Update, VerbatimAdd, VerbatimOps};

fn text(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=4)? {
        0 => String::new(),
        1 => format!("KL-{}", u.arbitrary::<u32>()?),
        2 => format!("VC-{}", u.arbitrary::<u32>()?),
        3 => "line one\nline two".into(),
        _ => u.arbitrary()?,
    })
}

fn list(u: &mut Unstructured) -> Result<Vec<String>> {
    (0..u.int_in_range(0..=3)?).map(|_| text(u)).collect()
}

fn update(u: &mut Unstructured) -> Result<Update> {
    let archive =
        |u: &mut Unstructured| -> Result<Vec<ArchiveOp>> { (0..u.int_in_range(0..=3)?).map(|_| Ok(ArchiveOp { id: text(u)?, reason: text(u)? })).collect() };
    Ok(Update {
        progress: Progress { completed: list(u)?, in_progress: list(u)?, remaining: list(u)? },
        learnings: LearningOps {
            add: (0..u.int_in_range(0..=3)?).map(|_| Ok(LearningAdd { reason: text(u)?, text: text(u)? })).collect::<Result<_>>()?,
            archive: archive(u)?,
        },
        verbatim: VerbatimOps {
            add: (0..u.int_in_range(0..=2)?).map(|_| Ok(VerbatimAdd { reason: text(u)?, label: text(u)?, snippet: text(u)? })).collect::<Result<_>>()?,
            archive: archive(u)?,
        },
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(updates) = (0..u.int_in_range(0..=3).unwrap_or(0)).map(|_| update(&mut u)).collect::<Result<Vec<_>>>() else { return };
    let mut state = engine::empty_state();
    state.next_learning = u.arbitrary().unwrap_or(1);
    if let Err(why) = engine::merge(state, updates, "now") {
        assert!(!why.is_empty());
    }
});
