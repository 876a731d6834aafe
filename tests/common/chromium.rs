//! Debian's headless Chromium (`.ci/run` installs it; `$CHROMIUM` names another): a page's
//! DOM after its scripts ran, and a screenshot of it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium(profile: &Path) -> Command {
    let mut c = headless(profile);
    // Virtual time runs the page's scripts and fetches to completion before the DOM is read.
    c.arg("--virtual-time-budget=10000");
    c
}

fn headless(profile: &Path) -> Command {
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
    .arg(format!("--user-data-dir={}", profile.display()));
    // Chromium keeps scratch directories of its own under $TMPDIR and leaves some behind.
    std::fs::create_dir_all(profile).unwrap();
    c.env("TMPDIR", profile);
    c
}

/// The DOM of `url` once it has loaded and its scripts have run.
pub fn dom(url: &str, profile: &Path) -> String {
    let out = chromium(profile).args(["--dump-dom", url]).output().unwrap();
    assert!(out.status.success(), "chromium --dump-dom {url}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `url` open in real time (virtual time stands still while a fetch is pending, which hides
/// what a slow server does to a page), until the child is killed.
pub fn open(url: &str, profile: &Path) -> std::process::Child {
    headless(profile).arg(url).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap()
}

/// A PNG screenshot of `url` at 1280x`height`, written to `png`; returns its bytes.
pub fn screenshot(url: &str, png: &Path, height: u32, profile: &Path) -> Vec<u8> {
    let out = chromium(profile).arg(format!("--screenshot={}", png.display())).arg(format!("--window-size=1280,{height}")).arg(url).output().unwrap();
    assert!(out.status.success(), "chromium --screenshot {url}: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::read(png).unwrap()
}
