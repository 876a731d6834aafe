//! The half of a session's lock that every runtime can take. The lock is `flock` on `.lock`
//! and, while it is held, the file `.lock.holder`, made with `O_EXCL` and naming its process
//! (`<pid> <nonce> flock`, or `<pid> <nonce>` from a writer without `flock`). Node has no file
//! locks: its writer (`packages/js/session.js`) takes the holder file alone, and the Rust,
//! Python and Go writers take it after their `flock`, so each waits for the other. `flock`
//! still orders the writers that have it, and frees itself when its process dies. A holder
//! file is broken by the next writer when it is a crash's: its process is gone, it was left
//! empty (a crash between its creation and its write) for [`EMPTY_STALE`], or, seen by a
//! writer that holds the `flock`, it was written under the `flock` (whose holder must then be
//! gone, whatever process took its number since). The four runtimes keep this protocol alike
//! (`session.py`, `session.go`, `session.js`).

use crate::confine::{Access, Confined, PathError};
use crate::fsio;
use std::io::Write;
use std::time::{Duration, Instant};

pub const HOLDER: &str = ".lock.holder";
/// How long a holder file may stay empty before it counts as a crash's: its writer writes it
/// straight after making it.
const EMPTY_STALE: Duration = Duration::from_secs(2);
/// The mark of a holder file written under the `flock`.
const FLOCKED: &str = "flock";
/// How often a waiting writer looks again.
const POLL: Duration = Duration::from_millis(5);

/// The holder file, removed when dropped.
#[derive(Debug)]
pub struct Holder {
    files: Confined,
}

impl Drop for Holder {
    fn drop(&mut self) {
        // Not synced: a holder file a crash brings back names a dead process, and is broken.
        let _ = self.files.remove_unsynced(HOLDER);
    }
}

/// Takes the holder file, its caller holding the `flock`, waiting for another holder until
/// `deadline` (`None`: as long as it takes); `None` when the deadline passed first.
pub fn claim(files: &Confined, deadline: Option<Instant>) -> Result<Option<Holder>, PathError> {
    let mut nonce = [0u8; 8];
    // Without randomness the pid alone still tells holders apart while they live.
    let _ = getrandom::fill(&mut nonce);
    let claim = format!("{} {} {FLOCKED}\n", std::process::id(), nonce.iter().map(|b| format!("{b:02x}")).collect::<String>());
    loop {
        match files.open(HOLDER, Access::CreateNew) {
            Ok(mut file) => {
                file.write_all(claim.as_bytes()).map_err(|e| PathError::Io { name: HOLDER.into(), kind: e.kind(), message: e.to_string() })?;
                return Ok(Some(Holder { files: files.clone() }));
            }
            Err(e) if e.is_already_exists() => {}
            Err(e) => return Err(e),
        }
        if let Some(stale) = stale(files)? {
            // Broken only if it still says what was judged stale: another writer may have
            // broken it and taken its own since.
            if files.read(HOLDER).ok().as_deref() == Some(stale.as_str()) {
                files.remove_unsynced(HOLDER)?;
            }
            continue;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
}

/// The holder file's text when its holder is gone (as seen by a holder of the `flock`).
fn stale(files: &Confined) -> Result<Option<String>, PathError> {
    let text = match files.read(HOLDER) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e),
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some(pid) = words.first() else {
        let age = files.open(HOLDER, Access::Read).ok().and_then(|f| f.metadata().ok()?.modified().ok()?.elapsed().ok());
        return Ok(age.is_some_and(|age| age > EMPTY_STALE).then_some(text));
    };
    let gone = words.get(2) == Some(&FLOCKED) || !pid.parse().is_ok_and(|pid| pid > 0 && fsio::alive(pid));
    Ok(gone.then_some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> (std::path::PathBuf, Confined) {
        let dir = std::env::temp_dir().join(format!("workmem-holder-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let files = Confined::new(&dir);
        (dir, files)
    }

    fn soon() -> Option<Instant> {
        Some(Instant::now() + Duration::from_millis(60))
    }

    #[test]
    fn a_live_holder_is_waited_for_and_a_gone_one_broken() {
        let (dir, files) = scratch("live");
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        std::fs::write(dir.join(HOLDER), format!("{} 00\n", child.id())).unwrap();
        assert!(claim(&files, soon()).unwrap().is_none(), "a live process's holder file holds the lock");
        child.kill().unwrap();
        child.wait().unwrap();
        let held = claim(&files, soon()).unwrap().expect("a dead process's holder file is broken");
        let text = std::fs::read_to_string(dir.join(HOLDER)).unwrap();
        assert!(text.starts_with(&format!("{} ", std::process::id())) && text.ends_with(" flock\n"), "{text:?}");
        drop(held);
        assert!(!dir.join(HOLDER).exists(), "released");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_empty_holder_is_a_claim_being_written_until_it_is_old() {
        let (dir, files) = scratch("empty");
        std::fs::write(dir.join(HOLDER), "").unwrap();
        assert!(claim(&files, soon()).unwrap().is_none(), "a fresh empty holder file is being written");
        let old = std::time::SystemTime::now() - EMPTY_STALE * 2;
        std::fs::File::options().write(true).open(dir.join(HOLDER)).unwrap().set_modified(old).unwrap();
        assert!(claim(&files, soon()).unwrap().is_some(), "an old empty holder file is a crash's");
        // One written under the flock, which this writer now holds, is a crash's even where its
        // process number is alive (taken since by another process).
        let flocked = format!("{} 0123 flock\n", std::process::id());
        for garbage in ["not-a-pid 1\n", "0 1\n", "-1 1\n", flocked.as_str()] {
            std::fs::write(dir.join(HOLDER), garbage).unwrap();
            assert!(claim(&files, soon()).unwrap().is_some(), "{garbage:?} names no process");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
