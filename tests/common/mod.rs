//! Helpers shared by the host's integration tests.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use workmem::engine::{Options, Runtime};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

/// A runtime whose compile cache lives in the test's scratch directory.
pub fn runtime() -> Runtime {
    Runtime::new(&options()).expect("the engine component loads")
}

pub fn options() -> Options {
    Options { cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache")), ..Options::default() }
}

/// `(name, path)` of every file in `dir` ending in `ext`, sorted by name.
pub fn files(dir: &Path, ext: &str) -> Vec<(String, PathBuf)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.sort();
    out
}

pub fn corpus() -> Vec<(String, PathBuf)> {
    files(&root().join("tests/corpus"), "dsl")
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compares `actual` with the expected file, or rewrites it under `WORKMEM_BLESS=1`.
/// JSON files compare as values; anything else byte for byte.
pub fn golden(path: &Path, actual: &str, failures: &mut Vec<String>) {
    if std::env::var_os("WORKMEM_BLESS").is_some() {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let Ok(expected) = std::fs::read_to_string(path) else {
        failures.push(format!("{}: missing (run with WORKMEM_BLESS=1 to create it)", path.display()));
        return;
    };
    let same = if path.extension().is_some_and(|x| x == "json") {
        serde_json::from_str::<serde_json::Value>(&expected).ok() == serde_json::from_str::<serde_json::Value>(actual).ok()
    } else {
        expected == actual
    };
    if !same {
        failures.push(format!("{}:\n--- expected\n{expected}\n--- actual\n{actual}", path.display()));
    }
}
