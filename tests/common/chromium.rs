//! Debian's headless Chromium (`.ci/run` installs it; `$CHROMIUM` names another): a page's
//! DOM after its scripts ran, and a screenshot of it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Chromium's own `$TMPDIR`, removed when dropped: Chromium leaves `org.chromium.*` directories
/// behind there. It is short and under the system's temporary directory because Chromium puts
/// its singleton's Unix socket in it, and a socket's path must fit in 108 bytes (a `$TMPDIR`
/// inside the profile, under a CI checkout's `target/tmp`, did not).
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!("workmem-chromium-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn chromium(profile: &Path, tmp: &Scratch) -> Command {
    let mut c = headless(profile, tmp);
    // Virtual time runs the page's scripts and fetches to completion before the DOM is read.
    c.arg("--virtual-time-budget=10000");
    c
}

fn headless(profile: &Path, tmp: &Scratch) -> Command {
    let exe = std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(exe.exists(), "{} is missing: install Debian's chromium (.ci/run does), or set $CHROMIUM", exe.display());
    let mut c = Command::new(exe);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .env("TMPDIR", &tmp.0);
    c
}

/// The DOM of `url` once it has loaded and its scripts have run.
pub fn dom(url: &str, profile: &Path) -> String {
    let tmp = Scratch::new();
    let out = chromium(profile, &tmp).args(["--dump-dom", url]).output().unwrap();
    assert!(out.status.success(), "chromium --dump-dom {url}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A Chromium showing a page, killed when dropped.
pub struct Open {
    child: Child,
    _tmp: Scratch,
}

impl Drop for Open {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `url` open in real time (virtual time stands still while a fetch is pending, which hides
/// what a slow server does to a page), until the result is dropped.
pub fn open(url: &str, profile: &Path) -> Open {
    let tmp = Scratch::new();
    let child = headless(profile, &tmp).arg(url).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    Open { child, _tmp: tmp }
}

/// A PNG screenshot of `url` at 1280x`height`, written to `png`; returns its bytes.
pub fn screenshot(url: &str, png: &Path, height: u32, profile: &Path) -> Vec<u8> {
    let tmp = Scratch::new();
    let out = chromium(profile, &tmp).arg(format!("--screenshot={}", png.display())).arg(format!("--window-size=1280,{height}")).arg(url).output().unwrap();
    assert!(out.status.success(), "chromium --screenshot {url}: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::read(png).unwrap()
}
