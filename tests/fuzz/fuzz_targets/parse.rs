//! Any text: parse never panics, reports at most 101 diagnostics, each inside the text, and
//! an update only when there is no error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use workmem_guest as engine;

fuzz_target!(|text: &str| {
    let outcome = engine::parse(text);
    assert!(outcome.diagnostics.len() <= 101);
    let lines = text.split(['\n', '\r']).count().max(1) as u32;
    for d in &outcome.diagnostics {
        assert!(d.line >= 1 && d.line <= lines && d.column >= 1, "{d:?} outside {lines} lines");
    }
    assert_eq!(outcome.ok, !outcome.diagnostics.iter().any(|d| d.severity == engine::ERROR));
});
