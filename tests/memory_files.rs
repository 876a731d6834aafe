//! The memory file tools: every path the LLM names is checked by the host before it
//! touches the disk. Each refusal is tested, and so is what a refusal must not do.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use workmem_store::{MemoryFiles, PathError};

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
    let outside = dir.parent().unwrap().join(format!("escaped-{}", std::process::id()));
    let outside_name = outside.display().to_string();
    type Expected = fn(&str) -> PathError;
    let cases: &[(&str, Expected)] = &[
        ("../escaped", |n| PathError::Escapes(n.into())),
        ("working-memory/../state.json", |n| PathError::Escapes(n.into())),
        ("working-memory/detail/../../meta.json", |n| PathError::Escapes(n.into())),
        ("working-memory/./../../x", |n| PathError::Escapes(n.into())),
        ("state.json", |n| PathError::OutsideMemory(n.into())),
        ("messages.jsonl", |n| PathError::OutsideMemory(n.into())),
        ("detail/notes.md", |n| PathError::OutsideMemory(n.into())),
        ("", |n| PathError::Escapes(n.into())),
        ("working-memory/a\0b", |n| PathError::Escapes(n.into())),
        ("working-memory\\..\\state.json", |n| PathError::OutsideMemory(n.into())),
    ];
    for (name, want) in cases {
        assert_eq!(files.write(name, "pwned"), Err(want(name)), "write {name:?}");
        assert_eq!(files.read(name).map(|_| ()), Err(want(name)), "read {name:?}");
    }
    assert_eq!(files.write(&outside_name, "pwned"), Err(PathError::Escapes(outside_name.clone())));
    assert_eq!(files.write("/etc/passwd", "pwned"), Err(PathError::Escapes("/etc/passwd".into())));
    assert!(!outside.exists());
    assert_eq!(std::fs::read_to_string(dir.join("state.json")).unwrap(), "{}", "a refused write touched the session");
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
