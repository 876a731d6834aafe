//! The `workmem` binary as a user runs it.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Env {
    root: PathBuf,
}

impl Env {
    fn new(name: &str) -> Self {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Env { root }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_workmem"));
        c.args(args)
            .current_dir(&self.root)
            .env("WORKMEM_SESSIONS_DIR", self.root.join("sessions"))
            .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"));
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn run_stdin(&self, args: &[&str], input: &str) -> Output {
        let mut child = self.cmd(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }

    fn new_session(&self) -> String {
        let out = self.run(&["session", "new", "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["dir"].as_str().unwrap().to_string()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

#[test]
fn parse_json_matches_every_corpus_case() {
    let env = Env::new("corpus");
    let mut failures = Vec::new();
    for (name, path) in common::corpus() {
        let out = env.run(&["parse", "--json", path.to_str().unwrap()]);
        let mut actual: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{name}: {e}"));
        // The CLI's error object around a failed parse is its own, not the corpus's.
        actual.as_object_mut().unwrap().remove("error");
        let expected: serde_json::Value = serde_json::from_str(&common::read(&path.with_extension("json"))).unwrap();
        let want_code = if expected["ok"] == true { 0 } else { 1 };
        if actual != expected || code(&out) != want_code {
            failures.push(format!("{name}: exit {} (want {want_code})\n{actual:#}", code(&out)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn exit_codes_and_readable_errors() {
    let env = Env::new("errors");
    // Usage errors exit 2.
    assert_eq!(code(&env.run(&["parse", "--no-such-flag"])), 2);
    assert_eq!(code(&env.run(&["apply"])), 2);
    assert_eq!(code(&env.run(&["frobnicate"])), 2);
    // Invalid input exits 1 with file:line:column diagnostics.
    let bad = env.root.join("bad.dsl");
    std::fs::write(&bad, "KEY_LEARNINGS:\n  ADD:\n    - no reason given\n").unwrap();
    let out = env.run(&["parse", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("bad.dsl:3:7: error: a Key Learnings ADD bullet must start with `because <reason>:`"), "{stderr}");
    // A missing file or session is a sentence, exit 1.
    let out = env.run(&["parse", "missing.dsl"]);
    assert_eq!(code(&out), 1);
    assert!(text(&out.stderr).contains("cannot read missing.dsl"), "{}", text(&out.stderr));
    let out = env.run(&["show", "--session", "nope"]);
    assert_eq!(code(&out), 1);
    assert!(text(&out.stderr).contains("no session nope here"), "{}", text(&out.stderr));
    let out = env.run(&["show", "--session", env.root.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    assert!(text(&out.stderr).contains("no workmem session at"), "{}", text(&out.stderr));
    // IDs that would escape the sessions directory are refused.
    for id in ["../escape", "..", ".hidden", "a/b", ""] {
        let out = env.run(&["session", "new", "--id", id]);
        assert_eq!(code(&out), 1, "id {id:?} was accepted");
    }
    assert!(!env.root.join("escape").exists());
}

#[test]
fn session_lifecycle_apply_show_log_prompt() {
    let env = Env::new("lifecycle");
    let out = env.run(&["session", "new", "--id", "alpha"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = env.root.join("sessions").join(workmem_store::session::encode_cwd(&env.root)).join("alpha");
    for f in ["messages.jsonl", "meta.json", "updates.jsonl", "working-memory/overview.md"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    assert!(!dir.join("state.json").exists(), "a new session's memory is the empty one, with nothing on disk yet");
    for d in ["working-memory/detail", "working-memory/archive"] {
        assert!(dir.join(d).is_dir(), "{d} missing");
    }
    let template = std::fs::read_to_string(dir.join("working-memory/overview.md")).unwrap();
    assert!(template.contains("## Key decisions") && template.contains("This is YOUR memory"));

    let list = text(&env.run(&["session", "list"]).stdout);
    assert!(list.contains("alpha"), "{list}");

    let update = "CURRENT_PROGRESS:\n  In Progress:\n    - Writing tests\nKEY_LEARNINGS:\n  ADD:\n    - because it matters: the CLI reads stdin\n";
    let out = env.run_stdin(&["apply", "--session", "alpha"], update);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("+ KL-1 the CLI reads stdin"), "{}", text(&out.stdout));

    let shown = text(&env.run(&["show", "--session", "alpha"]).stdout);
    assert!(shown.contains("- **KL-1**: the CLI reads stdin") && shown.contains("- Writing tests"), "{shown}");
    let state: serde_json::Value = serde_json::from_slice(&env.run(&["show", "--session", "alpha", "--json"]).stdout).unwrap();
    assert_eq!(state["learnings"][0]["id"], "KL-1");
    assert_eq!((state["format"].as_str(), state["next_learning"].as_u64(), state["updates"].as_u64()), (Some("workmem-memory/1"), Some(2), Some(1)));
    assert_eq!(env.run(&["show", "--session", "alpha", "--json"]).stdout, std::fs::read(dir.join("state.json")).unwrap(), "show --json is state.json");

    let archive = "KEY_LEARNINGS:\n  ARCHIVE:\n    - KL-1 because it is obvious\n    - KL-5 because it never existed\n";
    let out = env.run_stdin(&["apply", "--session", dir.to_str().unwrap()], archive);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("<stdin>:4:7: warning: KL-5 does not exist"), "{}", text(&out.stderr));

    let log: serde_json::Value = serde_json::from_slice(&env.run(&["log", "--session", "alpha", "--json"]).stdout).unwrap();
    assert_eq!(log.as_array().unwrap().len(), 2);
    assert_eq!(log[1]["archived"][0], "KL-1");
    assert_eq!(log[1]["input"], archive);
    assert_eq!((log[0]["seq"].as_u64(), log[1]["seq"].as_u64()), (Some(1), Some(2)));

    let prompt = text(&env.run(&["prompt", "--session", "alpha", "--task", "Fix the flaky test"]).stdout);
    assert!(prompt.contains("Fix the flaky test") && prompt.contains("CURRENT_PROGRESS:") && prompt.contains("- Writing tests"));
    assert!(!prompt.contains("KL-1: the CLI reads stdin"), "archived entries are not offered to the model");

    let meta: serde_json::Value = serde_json::from_slice(&env.run(&["session", "show", "alpha", "--json"]).stdout).unwrap();
    assert_eq!(meta["meta"]["updates"], 2);
    assert_eq!(meta["learnings"]["archived"], 1);
}

/// The writers are made to contend: the test holds the session's lock while all eight start,
/// sees every one at it (its `.lock` open) and waiting, then lets go. Each must land, one after another.
#[test]
fn concurrent_applies_all_land() {
    let env = Env::new("concurrent");
    let dir = env.new_session();
    let n = 8;
    let session = workmem_store::Session::open(Path::new(&dir)).unwrap();
    let held = session.lock().unwrap();
    let mut children: Vec<_> = (0..n)
        .map(|i| {
            let update = format!("KEY_LEARNINGS:\n  ADD:\n    - because writer {i} ran: fact from writer {i}\n");
            let mut child = env.cmd(&["apply", "--session", &dir]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
            child.stdin.take().unwrap().write_all(update.as_bytes()).unwrap();
            child
        })
        .collect();
    // Each writer is seen at the session's lock (its `.lock` open: a writer polls its `flock`,
    // so that its wait is bounded) and still waiting, not merely still running after a while.
    let lock = std::fs::canonicalize(Path::new(&dir).join(".lock")).unwrap();
    let at_lock =
        |pid: u32| std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == lock)));
    let started = std::time::Instant::now();
    loop {
        let waiting: Vec<u32> = children.iter().map(|c| c.id()).filter(|&pid| at_lock(pid)).collect();
        if waiting.len() == children.len() {
            break;
        }
        for (i, c) in children.iter_mut().enumerate() {
            assert!(c.try_wait().unwrap().is_none(), "writer {i} finished while the lock was held");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "not every writer waits on the lock: {waiting:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    for (i, c) in children.iter_mut().enumerate() {
        assert!(c.try_wait().unwrap().is_none(), "writer {i} finished while the lock was held");
    }
    drop(held);
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let state: serde_json::Value = serde_json::from_slice(&env.run(&["show", "--session", &dir, "--json"]).stdout).unwrap();
    let learnings = state["learnings"].as_array().unwrap();
    let mut ids: Vec<_> = learnings.iter().map(|l| l["id"].as_str().unwrap().to_string()).collect();
    ids.sort_by_key(|id| id[3..].parse::<u32>().unwrap());
    assert_eq!(ids, (1..=n).map(|i| format!("KL-{i}")).collect::<Vec<_>>(), "an update was lost or an ID reused");
    for i in 0..n {
        assert!(learnings.iter().any(|l| l["text"] == format!("fact from writer {i}")), "writer {i}'s update is missing");
    }
    let log: serde_json::Value = serde_json::from_slice(&env.run(&["log", "--session", &dir, "--json"]).stdout).unwrap();
    assert_eq!(log.as_array().unwrap().len(), n);
}

#[test]
fn demo_runs() {
    let env = Env::new("demo");
    let out = env.run(&["demo"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("02-malformed.dsl:7:7: error:"), "{stdout}");
    assert!(stdout.contains("Rejected: the memory is unchanged"));
    assert!(stdout.contains("- **KL-3**: CompositeUnit._to applies the scale twice"));
    assert!(!stdout.contains("- **KL-2**"), "KL-2 was archived");
    // The same story as JSON: each response's result as `apply --json` gives it.
    let out = env.run(&["demo", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results: Vec<&serde_json::Value> = v["steps"].as_array().unwrap().iter().map(|s| &s["result"]).collect();
    assert_eq!(results.iter().map(|r| r["ok"].as_bool().unwrap()).collect::<Vec<_>>(), [true, false, true]);
    assert_eq!((results[1]["error"]["kind"].as_str(), results[1]["diagnostics"][0]["line"].as_u64()), (Some("invalid_dsl"), Some(7)));
    assert!(v["overview"].as_str().unwrap().contains("- **KL-3**: CompositeUnit._to applies the scale twice"));
}

/// An update with errors, under --json: the verb's own fields, and the error object every
/// failure carries (README: `error.kind: "invalid_dsl"`).
#[test]
fn invalid_dsl_is_an_error_object_too() {
    let env = Env::new("invalid-dsl");
    let dir = env.new_session();
    let bad = "KEY_LEARNINGS:\n  ADD:\n    - no reason here\n";
    for args in [vec!["apply", "--session", dir.as_str(), "--json"], vec!["validate", "--session", dir.as_str(), "--json"], vec!["parse", "--json"]] {
        let out = env.run_stdin(&args, bad);
        assert_eq!(code(&out), 1, "{args:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((&v["ok"], v["error"]["kind"].as_str()), (&serde_json::json!(false), Some("invalid_dsl")), "{args:?}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().starts_with("the update has 1 error(s)"), "{v}");
        assert_eq!((v["error"]["diagnostics"][0]["line"].as_u64(), v["error"]["diagnostics"][0]["column"].as_u64()), (Some(3), Some(7)), "{v}");
        assert_eq!(v["diagnostics"], v["error"]["diagnostics"], "{args:?}");
    }
}

#[test]
fn component_command_writes_the_engine() {
    let env = Env::new("component");
    let out_path = env.root.join("engine.wasm");
    assert!(env.run(&["component", "--out", out_path.to_str().unwrap()]).status.success());
    assert_eq!(std::fs::read(&out_path).unwrap(), workmem_runtime::COMPONENT.bytes());
}

#[test]
fn a_byte_order_mark_is_ignored_and_invalid_utf8_is_a_positioned_diagnostic() {
    let env = Env::new("encodings");
    let out = env.run_stdin(&["--json", "parse"], "\u{FEFF}CURRENT_PROGRESS:\n  In Progress:\n    - reading\n");
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["update"]["progress"]["in_progress"][0], "reading");
    // Latin-1 "café" on line 3: the bad byte is the 10th character of the line.
    let file = env.root.join("latin1.dsl");
    std::fs::write(&file, b"CURRENT_PROGRESS:\n  In Progress:\n    - caf\xe9\n").unwrap();
    let out = env.run(&["--json", "parse", file.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "invalid_input");
    assert_eq!((v["error"]["diagnostics"][0]["line"].as_u64(), v["error"]["diagnostics"][0]["column"].as_u64()), (Some(3), Some(10)));
    // parse's own shape, as for any input it cannot take: no update, the bad byte a diagnostic.
    assert_eq!((&v["ok"], &v["update"], &v["diagnostics"]), (&serde_json::json!(false), &serde_json::Value::Null, &v["error"]["diagnostics"]), "{v}");
    assert!(text(&out.stderr).contains("latin1.dsl:3:10: the input is not valid UTF-8 (byte 0xe9)"), "{}", text(&out.stderr));
    // UTF-16, as some editors on Windows save it: named as such.
    let utf16: Vec<u8> = [0xff, 0xfe].into_iter().chain("CURRENT_PROGRESS:\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    std::fs::write(&file, utf16).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&env.run(&["--json", "parse", file.to_str().unwrap()]).stdout).unwrap();
    assert_eq!(v["error"]["diagnostics"][0]["message"], "the input is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8");
    // Input past the cap is refused before it is all read, naming the setting.
    std::fs::write(&file, "CURRENT_PROGRESS:\n".repeat(100)).unwrap();
    let out = env.cmd(&["--json", "parse", file.to_str().unwrap()]).env("WORKMEM_MAX_INPUT_BYTES", "1000").output().unwrap();
    assert_eq!(code(&out), 1);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "invalid_input");
    assert!(
        v["error"]["message"].as_str().unwrap().ends_with("is larger than 1000 bytes, the most an input may be ($WORKMEM_MAX_INPUT_BYTES raises it)"),
        "{v}"
    );
}

/// `workmem log | head` ends quietly when the reader goes away; a command line clap refuses
/// is a JSON error under --json; an engine trap under --json is a JSON error too.
#[test]
fn closed_pipes_usage_errors_and_traps_keep_their_contracts() {
    let env = Env::new("contracts");
    let dir = env.new_session();
    let many = "KEY_LEARNINGS:\n  ADD:\n".to_string() + &"    - because it is long: a learning line\n".repeat(2000);
    assert!(env.run_stdin(&["apply", "--session", &dir], &many).status.success());
    let mut log = env.cmd(&["log", "--session", &dir]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(log.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(log.stdout.take());
    let out = log.wait_with_output().unwrap();
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
    use std::os::unix::process::ExitStatusExt;
    assert!(out.status.success() || out.status.signal() == Some(13 /* SIGPIPE */), "{:?}", out.status);

    let out = env.run(&["prompt", "--session", &dir, "--json"]);
    assert_eq!(code(&out), 2);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "usage");
    assert_eq!(v["error"]["message"], "the following required arguments were not provided: --task <TASK>");
    assert!(env.run(&["--help"]).status.success());

    let out = env
        .cmd(&["parse", "--json", "-"])
        .env("WORKMEM_MAX_MEMORY_BYTES", (2 << 20).to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = out;
    out.stdin.take().unwrap().write_all(many.repeat(40).as_bytes()).unwrap();
    let out = out.wait_with_output().unwrap();
    assert_eq!(code(&out), 1);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "engine");
    assert!(v["error"]["message"].as_str().unwrap().contains("$WORKMEM_MAX_MEMORY_BYTES"), "{v}");
}

/// A session named by ID from another directory is found when its ID is unique under the
/// sessions root (and refused, naming both, when it is not); every verb's --json is JSON.
#[test]
fn sessions_are_found_from_anywhere_and_every_verb_speaks_json() {
    let env = Env::new("anywhere");
    let elsewhere = env.root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    assert!(env.run(&["session", "new", "--id", "only-here"]).status.success());
    let from = |dir: &Path, args: &[&str]| env.cmd(args).current_dir(dir).output().unwrap();
    let json = |out: &Output| -> serde_json::Value {
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
    };
    assert!(from(&elsewhere, &["show", "--session", "only-here"]).status.success());
    assert_eq!(json(&from(&elsewhere, &["session", "list", "--json"])), serde_json::json!([]));
    let all = json(&from(&elsewhere, &["session", "list", "--all", "--json"]));
    assert_eq!(all[0]["meta"]["id"], "only-here");
    assert!(from(&elsewhere, &["session", "new", "--id", "only-here"]).status.success(), "the same ID in another directory");
    let ambiguous = env.cmd(&["show", "--session", "only-here", "--json"]).current_dir(env.root.join("sessions")).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&ambiguous.stdout).unwrap();
    assert!(v["error"]["message"].as_str().unwrap().contains("session ID only-here is in 2 directories"), "{v}");

    let s = "only-here";
    let prompt = json(&env.run(&["prompt", "--session", s, "--task", "fix it", "--json"]));
    assert!(prompt["prompt"].as_str().unwrap().contains("fix it"));
    let wrote = json(&env.run_stdin(&["memory", "write", "--session", s, "working-memory/detail/a.md", "--json"], "notes"));
    assert_eq!(wrote, serde_json::json!({"ok": true, "path": "working-memory/detail/a.md", "bytes": 5}));
    let read = json(&env.run(&["memory", "read", "--session", s, "working-memory/detail/a.md", "--json"]));
    assert_eq!(read["content"], "notes");
    let listed = json(&env.run(&["memory", "list", "--session", s, "--json"]));
    assert_eq!(listed, serde_json::json!(["working-memory/detail/a.md", "working-memory/overview.md"]));
    let dir = all[0]["dir"].as_str().unwrap();
    let session = workmem_store::Session::open(Path::new(dir)).unwrap();
    session.append_message(workmem_store::Message::new("user", "the task")).unwrap();
    let history = json(&env.run(&["history", "--session", s, "--seq", "1", "--json"]));
    assert_eq!(history, serde_json::json!([{"seq": 1, "message": {"role": "user", "content": "the task"}}]));
    let out = env.root.join("c.wasm");
    let component = json(&env.run(&["component", "--out", out.to_str().unwrap(), "--json"]));
    assert_eq!(component["bytes"].as_u64().unwrap(), std::fs::metadata(&out).unwrap().len());
}

/// The verbs of `path` (`["board"]`), from clap's own help: its `Commands:` section.
fn subcommands(env: &Env, path: &[String]) -> Vec<String> {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let help = text(&env.run(&args).stdout);
    let Some((_, rest)) = help.split_once("Commands:\n") else { return Vec::new() };
    rest.lines().take_while(|l| l.starts_with("  ")).filter_map(|l| l.split_whitespace().next()).filter(|name| *name != "help").map(str::to_string).collect()
}

/// Arguments that satisfy `path`'s usage line: a made-up value for every required option
/// and argument, so the verb gets past clap and fails (or not) on its own.
fn required_args(env: &Env, path: &[String]) -> Vec<String> {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let help = text(&env.run(&args).stdout);
    let usage = help.lines().find_map(|l| l.strip_prefix("Usage: ")).unwrap_or_default();
    let mut out = Vec::new();
    let mut depth = 0;
    for token in usage.split_whitespace().skip(1 + path.len()) {
        let outside = depth == 0;
        depth += token.matches('[').count();
        depth -= token.matches(']').count().min(depth);
        if !outside {
            continue;
        }
        if token.starts_with("--") {
            out.push(token.to_string());
        } else if token.starts_with('<') {
            out.push("nosuch".to_string());
        }
    }
    out
}

/// The --json contract, held on every verb clap knows, walked from its help: whatever the verb
/// does with made-up arguments, stdout is one JSON document, and a failure is
/// `{"ok": false, "error": {"kind", "message"}}` (exit 1, or 2 for usage).
#[test]
fn every_verb_keeps_the_json_contract() {
    let env = Env::new("json-everywhere");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut verbs = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let subs = subcommands(&env, &path);
        if subs.is_empty() && !path.is_empty() {
            verbs.push(path.clone());
        }
        todo.extend(subs.into_iter().map(|s| [path.clone(), vec![s]].concat()));
    }
    assert!(verbs.len() > 40, "the walk found only {verbs:?}");
    let mut broken = Vec::new();
    // Servers run until stopped: their --json is a first line, tested with them.
    for path in verbs.iter().filter(|p| !matches!(p[0].as_str(), "serve" | "mcp")) {
        let mut args = path.clone();
        args.extend(required_args(&env, path));
        args.push("--json".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = env
            .cmd(&args)
            .env("HOME", &env.root)
            .env("OPENAI_BASE_URL", format!("http://{closed}/v1"))
            .env("OPENAI_API_KEY", "k")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                broken.push(format!("{args:?}: still running after 30 s"));
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let stdout = text(&out.stdout);
        let v: serde_json::Value = match serde_json::from_str(&stdout) {
            Ok(v) => v,
            Err(e) => {
                broken.push(format!(
                    "{args:?}: exit {:?}, stdout is not one JSON document ({e}): {}",
                    out.status.code(),
                    stdout.chars().take(200).collect::<String>()
                ));
                continue;
            }
        };
        let failed = !out.status.success();
        let error_ok =
            v["ok"] == false && v["error"]["kind"].as_str().is_some_and(|k| !k.is_empty()) && v["error"]["message"].as_str().is_some_and(|m| !m.is_empty());
        if failed && !error_ok {
            broken.push(format!("{args:?}: exit {:?} without an error object: {}", out.status.code(), stdout.chars().take(200).collect::<String>()));
        }
        if !failed && v["ok"] == false {
            broken.push(format!("{args:?}: says ok false but exits 0"));
        }
    }
    assert!(broken.is_empty(), "{} of {} verbs break the --json contract:\n{}", broken.len(), verbs.len(), broken.join("\n"));
}

/// What a user meets in the first hour: an unknown session says where to look and how to make
/// one; `session list` elsewhere points at --all; help shows the LLM call's defaults and every
/// source of the model; an empty history says so; a missing input file is invalid input.
#[test]
fn first_hour_messages() {
    let env = Env::new("first-hour");
    let out = env.run(&["show", "--session", "s1", "--json"]);
    assert_eq!(code(&out), 1);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("no session s1 here (") && message.contains("`workmem session list --all`") && message.contains("`workmem session new --id s1`"),
        "{message}"
    );

    let elsewhere = env.root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    assert!(env.run(&["session", "new", "--id", "s1"]).status.success());
    let out = env.cmd(&["session", "list"]).current_dir(&elsewhere).output().unwrap();
    assert!(text(&out.stderr).contains("1 under other directories: `workmem session list --all`"), "{}", text(&out.stderr));

    let help = text(&env.run(&["update", "--help"]).stdout);
    assert!(help.contains("[default: 120]") && help.contains("[default: 3]"), "{help}");
    let help = text(&env.run(&["agent", "--help"]).stdout);
    assert!(help.contains("the config file's `model`"), "{help}");
    let help = text(&env.run(&["--help"]).stdout);
    assert!(!help.contains("replay"), "the benchmark is workmem-replay's, not a verb of the CLI: {help}");

    let out = env.run(&["history", "--session", "s1"]);
    assert!(out.status.success() && text(&out.stdout).starts_with("no messages yet"), "{}", text(&out.stdout));

    let out = env.run(&["apply", "--session", "s1", "missing.dsl", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((code(&out), v["error"]["kind"].as_str()), (1, Some("invalid_input")), "{v}");
    assert!(v["error"]["message"].as_str().unwrap().starts_with("cannot read missing.dsl: "), "{v}");
}
