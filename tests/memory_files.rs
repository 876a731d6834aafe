//! The memory file tools: every path the LLM names is checked by the host before it
//! touches the disk. Each refusal is tested, and so is what a refusal must not do.

use crate::common;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use workmem_store::{MemoryFileStore, MemoryFiles, PathError};

fn session_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("memfiles-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["working-memory/detail", "working-memory/archive"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("working-memory/overview.md"), "# Working Memory\n").unwrap();
    std::fs::write(dir.join("state.json"), "{}").unwrap();
    dir
}

#[test]
fn memory_files_are_read_written_and_listed() {
    let dir = session_dir("ok");
    let files = MemoryFiles::new(&dir);
    files.write("working-memory/overview.md", "# Working Memory\n\n## Current task\nFix it\n").unwrap();
    files.write("working-memory/detail/parser-notes.md", "notes").unwrap();
    files.write("./working-memory/archive/2026/old-plan.md", "old").unwrap();
    assert_eq!(files.read("working-memory/detail/parser-notes.md").unwrap(), "notes");
    assert!(std::fs::read_to_string(dir.join("working-memory/overview.md")).unwrap().contains("Fix it"));
    assert_eq!(
        files.list("working-memory").unwrap(),
        ["working-memory/archive/2026/old-plan.md", "working-memory/detail/parser-notes.md", "working-memory/overview.md"]
    );
    assert_eq!(files.list("working-memory/detail").unwrap(), ["working-memory/detail/parser-notes.md"]);
}

#[test]
fn names_that_leave_the_session_or_working_memory_are_refused() {
    let dir = session_dir("refused");
    let files = MemoryFiles::new(&dir);
    let corpus: serde_json::Value = serde_json::from_str(include_str!("data/path-refusals.json")).unwrap();
    let cases = corpus["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    common::each(
        cases,
        |case| case["name"].to_string(),
        |case| {
            let name = case["name"].as_str().unwrap();
            let want = match case["refusal"].as_str().unwrap() {
                "escapes" => PathError::Escapes(name.into()),
                "outside_memory" => PathError::OutsideMemory(name.into()),
                "reserved" => PathError::Reserved(name.into()),
                other => panic!("unknown refusal {other}"),
            };
            assert_eq!(files.write(name, "pwned"), Err(want.clone()), "write {name:?}");
            assert_eq!(files.read(name).map(|_| ()), Err(want.clone()), "read {name:?}");
            assert_eq!(files.list(name).map(|_| ()), Err(want), "list {name:?}");
        },
    );
    let outside = dir.parent().unwrap().join(format!("escaped-{}", std::process::id()));
    let outside_name = outside.display().to_string();
    assert_eq!(files.write(&outside_name, "pwned"), Err(PathError::Escapes(outside_name.clone())));
    assert!(!outside.exists());
    assert!(!dir.parent().unwrap().join("escaped").exists());
    assert_eq!(std::fs::read_to_string(dir.join("state.json")).unwrap(), "{}", "a refused write touched the session");
}

/// A hard link planted under working-memory/ names a file that may lie anywhere: reading
/// it is refused, as a symlink is.
#[test]
fn a_planted_hard_link_is_not_read() {
    let dir = session_dir("hard-link");
    let files = MemoryFiles::new(&dir);
    let outside = dir.parent().unwrap().join(format!("hard-link-outside-{}", std::process::id()));
    std::fs::write(&outside, "a secret outside the session").unwrap();
    std::fs::create_dir_all(dir.join("working-memory/detail")).unwrap();
    std::fs::hard_link(&outside, dir.join("working-memory/detail/planted.md")).unwrap();
    let name = "working-memory/detail/planted.md";
    assert_eq!(files.read(name), Err(PathError::HardLink(name.into())));
    // Written anew, it is a file of its own: the write replaces the link, not what it names.
    files.write(name, "mine").unwrap();
    assert_eq!(files.read(name).unwrap(), "mine");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "a secret outside the session");
    std::fs::remove_file(&outside).unwrap();
}

/// A session directory swapped for a symlink to elsewhere while the session is in use: the
/// session was opened once, by handle, so its memory files and logs still go to the directory
/// it opened, never through the symlink.
#[test]
fn a_session_directory_swapped_for_a_symlink_is_not_followed() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("swapped-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let session = workmem_store::Sessions::new(&root.join("sessions"), &root).create(Some("s"), "# Working Memory\n").unwrap();
    let files = session.memory_files();
    files.write("working-memory/detail/a.md", "before").unwrap();
    let dir = session.dir().to_path_buf();
    let moved = root.join("moved");
    let outside = root.join("outside");
    std::fs::create_dir_all(outside.join("working-memory/detail")).unwrap();
    std::fs::rename(&dir, &moved).unwrap();
    std::os::unix::fs::symlink(&outside, &dir).unwrap();
    session.memory_files().write("working-memory/detail/b.md", "after").unwrap();
    files.write("working-memory/detail/c.md", "after").unwrap();
    session.append_message(workmem_store::Message::new("user", "after the swap")).unwrap();
    for name in ["working-memory/detail/b.md", "working-memory/detail/c.md", "messages.jsonl"] {
        assert!(!outside.join(name).exists(), "{name} was written through the swapped-in symlink");
        assert!(moved.join(name).exists(), "{name} went to the directory the session opened");
    }
}

/// Runs `body` (given the round's number) for at most `secs` while a thread swaps
/// working-memory/detail for a symlink to `outside` and back, as fast as it can; `body`
/// returning false stops early. Returns the swaps made.
fn while_swapping(dir: &Path, outside: &Path, secs: u64, mut body: impl FnMut(u64) -> bool) -> u64 {
    let detail = dir.join("working-memory/detail");
    let link = dir.join("working-memory/detail-link");
    symlink(outside, &link).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, detail, link) = (stop.clone(), detail.clone(), link.clone());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            let exchange = || rustix::fs::renameat_with(rustix::fs::CWD, &detail, rustix::fs::CWD, &link, rustix::fs::RenameFlags::EXCHANGE).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // `detail` leads outside, then back inside: the name never goes missing.
                exchange();
                exchange();
                swaps += 1;
            }
            swaps
        })
    };
    let started = std::time::Instant::now();
    let mut i = 0u64;
    while started.elapsed() < std::time::Duration::from_secs(secs) {
        i += 1;
        if !body(i) {
            break;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    std::fs::remove_file(&link).unwrap();
    swaps
}

fn escaped(outside: &Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(outside).unwrap().flatten().map(|e| e.file_name()).filter(|n| n != "outside-secret.md").collect()
}

/// The attack of issue 9: a folder under working-memory/ swapped for a symlink to outside
/// and back, as fast as one thread can, while another writes, reads and lists through it.
/// A check-then-open implementation (kept here) lets writes escape on this very machine;
/// opening component by component from a directory handle lets none, and refuses the writes
/// that met the swap.
#[test]
fn a_symlink_swapped_in_during_the_writes_never_lets_one_escape() {
    let dir = session_dir("race");
    let outside = dir.parent().unwrap().join(format!("race-outside-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&outside);
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("outside-secret.md"), "secret").unwrap();
    std::fs::write(dir.join("working-memory/detail/inside.md"), "inside").unwrap();

    // The naive opener: every component checked not to be a symlink, then the path opened.
    let naive = |rel: &str, text: &str| -> std::io::Result<()> {
        let mut at = dir.clone();
        for part in Path::new(rel).parent().unwrap().components() {
            at.push(part);
            if std::fs::symlink_metadata(&at)?.file_type().is_symlink() {
                return Err(std::io::Error::other("a symlink"));
            }
        }
        std::fs::write(dir.join(rel), text)
    };
    let naive_swaps = while_swapping(&dir, &outside, 3, |i| {
        let _ = naive(&format!("working-memory/detail/n{}.md", i % 50), "pwned");
        escaped(&outside).is_empty()
    });
    let naive_escaped = escaped(&outside);
    assert!(!naive_escaped.is_empty(), "the check-then-open writer let nothing escape in 3 s ({naive_swaps} swaps): the race is not being run");
    for name in &naive_escaped {
        std::fs::remove_file(outside.join(name)).unwrap();
    }

    let files = MemoryFiles::new(&dir);
    let (mut ok, mut write_refused, mut refused, mut leaked) = (0u64, 0u64, 0u64, 0u64);
    let swaps = while_swapping(&dir, &outside, 5, |i| {
        match files.write(&format!("working-memory/detail/w{}.md", i % 50), "pwned") {
            Ok(()) => ok += 1,
            Err(_) => write_refused += 1,
        }
        // Only the outside folder has this file: any answer but a refusal is a leak.
        match files.read("working-memory/detail/outside-secret.md") {
            Ok(_) => leaked += 1,
            Err(_) => refused += 1,
        }
        match files.read("working-memory/detail/inside.md") {
            Ok(_) => ok += 1,
            Err(_) => refused += 1,
        }
        if let Ok(listed) = files.list("working-memory") {
            leaked += listed.iter().filter(|n| n.contains("outside-secret")).count() as u64;
        }
        true
    });
    let escaped = escaped(&outside);
    eprintln!(
        "check-then-open: {} escaped within {naive_swaps} swaps; workmem: {swaps} swaps, {ok} done inside, {write_refused} writes and {refused} reads refused, {} escaped, {leaked} outside reads",
        naive_escaped.len(),
        escaped.len()
    );
    assert!(ok > 0 && swaps > 100, "the race was not run: {ok} done, {swaps} swaps");
    assert!(write_refused > 0, "no write met the swap: the race did not reach the writes");
    assert!(escaped.is_empty(), "files written outside the session: {escaped:?}");
    assert_eq!(leaked, 0, "reads returned the outside file");
    assert_eq!(std::fs::read_to_string(outside.join("outside-secret.md")).unwrap(), "secret");
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn symlinks_are_never_followed() {
    let dir = session_dir("symlinks");
    let target = dir.parent().unwrap().join(format!("symlink-target-{}", std::process::id()));
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("secret.txt"), "secret").unwrap();
    symlink(&target, dir.join("working-memory/detail/out")).unwrap();
    symlink(target.join("secret.txt"), dir.join("working-memory/leak.md")).unwrap();
    // A link that stays inside is refused too: the rule is simple so it cannot be fooled.
    symlink(dir.join("working-memory/overview.md"), dir.join("working-memory/inside.md")).unwrap();
    let files = MemoryFiles::new(&dir);
    for name in ["working-memory/detail/out/secret.txt", "working-memory/leak.md", "working-memory/inside.md"] {
        assert_eq!(files.read(name), Err(PathError::Symlink(name.into())), "read {name}");
        assert_eq!(files.write(name, "x"), Err(PathError::Symlink(name.into())), "write {name}");
    }
    assert_eq!(files.list("working-memory/detail/out"), Err(PathError::Symlink("working-memory/detail/out".into())));
    assert_eq!(std::fs::read_to_string(target.join("secret.txt")).unwrap(), "secret");
    // Listing the memory does not descend through the link either.
    assert!(files.list("working-memory").unwrap().iter().all(|n| !n.contains("secret")));
    let _ = std::fs::remove_dir_all(&target);
}

#[test]
fn the_cli_writes_what_show_then_displays_and_refuses_with_exit_1() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("memfiles-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let run = |args: &[&str], stdin: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_workmem"));
        c.args(args)
            .current_dir(&root)
            .env("WORKMEM_SESSIONS_DIR", root.join("sessions"))
            .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    assert!(run(&["session", "new", "--id", "m"], None).status.success());
    let overview = "# Working Memory\n\n## Current task\nWritten by the LLM itself\n";
    assert!(run(&["memory", "write", "--session", "m", "working-memory/overview.md"], Some(overview)).status.success());
    // Visible on the next read of the memory: `show` prints overview.md.
    assert_eq!(String::from_utf8(run(&["show", "--session", "m"], None).stdout).unwrap(), overview);
    assert!(run(&["memory", "write", "--session", "m", "working-memory/detail/notes.md"], Some("n")).status.success());
    let listed = String::from_utf8(run(&["memory", "list", "--session", "m"], None).stdout).unwrap();
    assert_eq!(listed, "working-memory/detail/notes.md\nworking-memory/overview.md\n");
    let refused = run(&["memory", "write", "--session", "m", "../../outside.md"], Some("x"));
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is refused"));
    let refused = run(&["memory", "read", "--session", "m", "state.json"], None);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("memory files live under working-memory/"));
}

/// The host's own reads go through the same handles: a symlinked overview.md or
/// working-memory/ is refused by `show` and `context` (it would put an outside file in the
/// prompt), and a directory is a session only when its meta.json says so.
#[test]
fn the_host_never_reads_through_a_symlink_and_knows_a_session_by_its_marker() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("memfiles-host-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_workmem"))
            .args(args)
            .current_dir(&root)
            .env("WORKMEM_SESSIONS_DIR", root.join("sessions"))
            .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
            .output()
            .unwrap()
    };
    let secret = root.join("secret.md");
    std::fs::write(&secret, "TOP SECRET outside the session\n").unwrap();
    for (id, swap) in [("o", "working-memory/overview.md"), ("w", "working-memory")] {
        assert!(run(&["session", "new", "--id", id]).status.success());
        let out = run(&["session", "list", "--json"]);
        let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let dir = PathBuf::from(listed.as_array().unwrap().iter().find(|s| s["meta"]["id"] == id).unwrap()["dir"].as_str().unwrap());
        let target = dir.join(swap);
        if target.is_dir() {
            std::fs::remove_dir_all(&target).unwrap();
            std::fs::create_dir_all(root.join("outside-wm")).unwrap();
            std::fs::copy(&secret, root.join("outside-wm/overview.md")).unwrap();
            symlink(root.join("outside-wm"), &target).unwrap();
        } else {
            std::fs::remove_file(&target).unwrap();
            symlink(&secret, &target).unwrap();
        }
        for verb in [&["show", "--session", id][..], &["context", "--session", id, "--json"][..]] {
            let out = run(verb);
            let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert_eq!(out.status.code(), Some(1), "{verb:?} through a symlinked {swap}: {stdout}{stderr}");
            assert!(!stdout.contains("TOP SECRET") && !stderr.contains("TOP SECRET"), "{verb:?} leaked the outside file");
            assert!(stderr.contains("symlink"), "{verb:?}: {stderr}");
        }
        // An update is refused before anything is written, and so leaves the session as it was.
        let apply = Command::new(env!("CARGO_BIN_EXE_workmem"))
            .args(["apply", "--session", id, "-"])
            .current_dir(&root)
            .env("WORKMEM_SESSIONS_DIR", root.join("sessions"))
            .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut apply = apply;
        use std::io::Write;
        apply.stdin.take().unwrap().write_all(b"KEY LEARNINGS:\nADD:\n- because it matters: a learning\n").unwrap();
        let out = apply.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("symlink"), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(!dir.join("state.json").exists() && std::fs::read_to_string(dir.join("updates.jsonl")).unwrap().is_empty());
        assert!(!dir.join("commit.pending.json").exists());
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "TOP SECRET outside the session\n");
    // Any directory with a meta.json is not a session; one whose meta.json has the marker is.
    let fake = root.join("fake");
    std::fs::create_dir_all(fake.join("working-memory")).unwrap();
    std::fs::write(fake.join("meta.json"), r#"{"id": "fake", "cwd": "/", "created_at": "", "updated_at": "", "updates": 0, "workmem_version": "0"}"#).unwrap();
    let out = run(&["show", "--session", fake.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no workmem session"), "{}", String::from_utf8_lossy(&out.stderr));
}
