//! Helpers shared by the host's integration tests.

pub mod chromium;
pub mod postgres;
pub mod suite;

use std::path::{Path, PathBuf};
use std::process::Command;
use workmem_runtime::{Options, Runtime};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("workspace root").to_path_buf()
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
/// JSON files compare as values; anything else byte for byte, and so do serialized memories
/// (`*.state.json`), whose bytes are the contract.
pub fn golden(path: &Path, actual: &str, failures: &mut Vec<String>) {
    if std::env::var_os("WORKMEM_BLESS").is_some() {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let Ok(expected) = std::fs::read_to_string(path) else {
        failures.push(format!("{}: missing (run with WORKMEM_BLESS=1 to create it)", path.display()));
        return;
    };
    let same = if path.extension().is_some_and(|x| x == "json") && !path.to_string_lossy().ends_with(".state.json") {
        // Compared as JSON: two texts that are not JSON are not thereby the same.
        match (serde_json::from_str::<serde_json::Value>(&expected), serde_json::from_str::<serde_json::Value>(actual)) {
            (Ok(e), Ok(a)) => e == a,
            _ => false,
        }
    } else {
        expected == actual
    };
    if !same {
        failures.push(format!("{}:\n--- expected\n{expected}\n--- actual\n{actual}", path.display()));
    }
}

#[test]
fn golden_files_that_are_not_json_differ() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("golden-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("expected.json");
    std::fs::write(&path, "{not json").unwrap();
    if std::env::var_os("WORKMEM_BLESS").is_some() {
        return;
    }
    let mut failures = Vec::new();
    golden(&path, "{also not json", &mut failures);
    assert_eq!(failures.len(), 1, "two texts that do not parse were taken as equal");
    golden(&path, "{not json", &mut failures);
    assert_eq!(failures.len(), 2, "not even the same text is JSON");
    std::fs::write(&path, "{\"a\": 1}").unwrap();
    golden(&path, "{\"a\":1}", &mut failures);
    assert_eq!(failures.len(), 2, "the same JSON written two ways is the same");
}

/// A directory with a session `s` in it, and the CLI pointed at it.
pub struct Workspace {
    pub root: PathBuf,
    pub session: PathBuf,
}

impl Workspace {
    pub fn new(name: &str) -> Self {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ws-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let ws = Workspace { session: PathBuf::new(), root };
        let out = ws.cmd(None, &["session", "new", "--id", "s"]).output().unwrap();
        assert!(out.status.success());
        let session = ws.root.join("sessions").join(workmem_store::session::encode_cwd(&ws.root)).join("s");
        Workspace { session, ..ws }
    }

    /// The CLI, with the LLM at `llm` (a base URL) when given.
    pub fn cmd(&self, llm: Option<&str>, args: &[&str]) -> Command {
        self.program(Path::new(env!("CARGO_BIN_EXE_workmem")), llm, args)
    }

    /// `workmem-replay` (the benchmark's program, host/bench) in this workspace, as [`Self::cmd`]
    /// runs the CLI. It is a binary of another package: `cargo build --workspace` (which `make
    /// test` runs first) builds it beside `workmem`.
    pub fn replay(&self, args: &[&str]) -> Command {
        let bin = Path::new(env!("CARGO_BIN_EXE_workmem")).with_file_name("workmem-replay");
        assert!(bin.exists(), "{} is not built: `cargo build -p workmem-bench` first (make test does)", bin.display());
        self.program(&bin, None, args)
    }

    fn program(&self, bin: &Path, llm: Option<&str>, args: &[&str]) -> Command {
        let mut c = Command::new(bin);
        c.args(args)
            .current_dir(&self.root)
            .env("WORKMEM_SESSIONS_DIR", self.root.join("sessions"))
            .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
            .env("OPENAI_API_KEY", "test-key")
            .env("WORKMEM_MODEL", "test-model");
        if let Some(url) = llm {
            c.env("OPENAI_BASE_URL", url);
        }
        c
    }

    /// The session's files (and working memory's), to compare before and after.
    pub fn files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        for dir in [self.session.clone(), self.session.join("working-memory")] {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                if e.path().is_file() {
                    out.push((e.path(), std::fs::read(e.path()).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    pub fn learnings(&self) -> serde_json::Value {
        let state: serde_json::Value = serde_json::from_slice(&std::fs::read(self.session.join("state.json")).unwrap()).unwrap();
        state["learnings"].clone()
    }
}

/// The prompt tokens of a Chat Completions request, counted here from the o200k_base BPE
/// itself, not through the host's tokenizer: each message 3 + role + content, each tool call
/// 8 + name + arguments; 3 that prime the reply; a non-empty `tools` array as its JSON text
/// with 12 of framing. An oracle for `tokens_used` that the host's code cannot agree with by
/// construction; the framing itself is held to providers' reported usage by
/// `llm::counts_hold_to_what_a_provider_reported`.
pub fn oracle_tokens(messages: &[workmem_llm::Message], tools: &serde_json::Value) -> u32 {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let n = |text: &str| bpe.encode_with_special_tokens(text).len();
    let message = |m: &workmem_llm::Message| {
        3 + n(&m.role) + n(&m.content) + m.tool_calls.iter().map(|c| 8 + n(&c.function.name) + n(&c.function.arguments)).sum::<usize>()
    };
    let tools = match tools.as_array() {
        Some(list) if !list.is_empty() => 12 + n(&tools.to_string()),
        _ => 0,
    };
    (messages.iter().map(message).sum::<usize>() + 3 + tools) as u32
}

/// The first file named `name` under `dir`, depth first.
pub fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    entries
        .iter()
        .find(|p| p.file_name().is_some_and(|n| n == name))
        .cloned()
        .or_else(|| entries.iter().filter(|p| p.is_dir()).find_map(|p| find_file(p, name)))
}

/// Runs `check` on every case, each named by `name`, and fails once at the end listing every
/// case that failed: a suite of cases in one `#[test]` that stopped at its first failure hid
/// the others.
pub fn each<T>(cases: impl IntoIterator<Item = T>, name: impl Fn(&T) -> String, mut check: impl FnMut(T)) {
    let mut failed = Vec::new();
    let mut ran = 0;
    for case in cases {
        let named = name(&case);
        ran += 1;
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(case))).is_err() {
            failed.push(named);
        }
    }
    assert!(ran > 0, "no cases ran");
    assert!(failed.is_empty(), "{} of {ran} cases failed (each one's message is above): {}", failed.len(), failed.join(", "));
}
