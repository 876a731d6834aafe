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
//!
//! In a process that keeps spares ([`claim_from_spares`]: the proxy, which locks the same
//! sessions again and again), a handle that claims the holder file again links it from a spare
//! it made once ([`Claims`]) rather than making a new file each time: the same `.lock.holder`
//! with the same words for every reader, at a fraction of the cost (a new file is a new inode,
//! which ext4 without a journal looks for past every one recently freed; about 0.1 ms of the
//! proxy's 1 ms per request, two claims an exchange). Elsewhere no spare is made: it is one
//! more file in the session's folder for as long as its handle lives.

use crate::confine::{Access, Confined, PathError, Spare};
use crate::fsio;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Whether this process claims from spares: see the module's docs.
static SPARES: AtomicBool = AtomicBool::new(false);

/// Makes every later claim of this process's handles after their first a link from a spare.
pub fn claim_from_spares() {
    SPARES.store(true, Ordering::Relaxed);
}

/// What a handle keeps between its claims: whether it has claimed before, and from the second
/// claim on, the spare it links the holder file from. A process that claims once (a CLI call)
/// makes no spare; a spare is removed when its handle goes, and a dead process's is swept.
#[derive(Debug, Default)]
pub struct Claims {
    claimed: AtomicBool,
    linking: Mutex<Linking>,
}

#[derive(Debug, Default)]
enum Linking {
    #[default]
    Unmade,
    Made(Spare),
    /// Linking failed other than by a name taken or a spare gone (a filesystem without hard
    /// links): the holder file is made anew each time.
    Off,
}

/// A claim's words: this process, a nonce, and the mark of a claim made under the `flock`.
fn words() -> String {
    let mut nonce = [0u8; 8];
    // Without randomness the pid alone still tells holders apart while they live.
    let _ = getrandom::fill(&mut nonce);
    format!("{} {} {FLOCKED}\n", std::process::id(), nonce.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Takes the holder file if it is free: linked from the handle's spare, or made and written.
fn take(files: &Confined, claims: &Claims) -> Result<bool, PathError> {
    if claims.claimed.swap(true, Ordering::Relaxed) && SPARES.load(Ordering::Relaxed) {
        let mut linking = claims.linking.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // A second turn where the spare was gone (swept, or the folder replaced).
        for _ in 0..2 {
            if matches!(*linking, Linking::Unmade) {
                // A spare that cannot be made leaves the claim to the path below, and its error.
                *linking = files.spare(HOLDER, words().as_bytes()).map_or(Linking::Off, Linking::Made);
            }
            let Linking::Made(spare) = &*linking else { break };
            match spare.link_as(HOLDER) {
                Ok(()) => return Ok(true),
                Err(e) if e.is_already_exists() => return Ok(false),
                Err(e) if e.is_not_found() => *linking = Linking::Unmade,
                Err(_) => *linking = Linking::Off,
            }
        }
    }
    match files.open(HOLDER, Access::CreateNew) {
        Ok(mut file) => {
            file.write_all(words().as_bytes()).map_err(|e| PathError::Io { name: HOLDER.into(), kind: e.kind(), message: e.to_string() })?;
            Ok(true)
        }
        Err(e) if e.is_already_exists() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Takes the holder file, its caller holding the `flock`, waiting for another holder until
/// `deadline` (`None`: as long as it takes); `None` when the deadline passed first.
pub fn claim(files: &Confined, claims: &Claims, deadline: Option<Instant>) -> Result<Option<Holder>, PathError> {
    loop {
        if take(files, claims)? {
            return Ok(Some(Holder { files: files.clone() }));
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
        assert!(claim(&files, &Claims::default(), soon()).unwrap().is_none(), "a live process's holder file holds the lock");
        child.kill().unwrap();
        child.wait().unwrap();
        let held = claim(&files, &Claims::default(), soon()).unwrap().expect("a dead process's holder file is broken");
        let text = std::fs::read_to_string(dir.join(HOLDER)).unwrap();
        assert!(text.starts_with(&format!("{} ", std::process::id())) && text.ends_with(" flock\n"), "{text:?}");
        drop(held);
        assert!(!dir.join(HOLDER).exists(), "released");
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    fn links(dir: &std::path::Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(dir.join(HOLDER)).unwrap().nlink()
    }

    /// A handle's first claim makes the holder file; its later ones link it from one spare,
    /// with the same words each time, for every runtime to read as before; the spare goes with
    /// the handle, and one that was swept is made again.
    #[test]
    fn a_handle_claiming_again_links_its_spare() {
        claim_from_spares();
        let (dir, files) = scratch("spare");
        let claims = Claims::default();
        let first = claim(&files, &claims, soon()).unwrap().unwrap();
        assert_eq!((names(&dir), links(&dir)), (vec![HOLDER.to_string()], 1), "the first claim makes no spare");
        drop(first);
        assert!(names(&dir).is_empty());

        let second = claim(&files, &claims, soon()).unwrap().unwrap();
        assert_eq!(links(&dir), 2, "linked from the spare");
        let words = std::fs::read_to_string(dir.join(HOLDER)).unwrap();
        assert!(words.starts_with(&format!("{} ", std::process::id())) && words.ends_with(" flock\n"), "{words:?}");
        let spare = format!("{HOLDER}.tmp-{}-", std::process::id());
        let spares = |dir: &std::path::Path| names(dir).into_iter().filter(|n| n.starts_with('.') && n[1..].starts_with(&spare)).count();
        assert_eq!((names(&dir).len(), spares(&dir)), (2, 1));
        drop(second);
        assert_eq!(spares(&dir), 1, "the spare outlives a claim");
        assert!(!dir.join(HOLDER).exists(), "released");

        let third = claim(&files, &claims, soon()).unwrap().unwrap();
        assert_eq!(std::fs::read_to_string(dir.join(HOLDER)).unwrap(), words, "the same spare");
        drop(third);
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        std::fs::write(dir.join(HOLDER), format!("{} 00\n", child.id())).unwrap();
        assert!(claim(&files, &claims, soon()).unwrap().is_none(), "a live process's holder file holds the lock");
        child.kill().unwrap();
        child.wait().unwrap();
        drop(claim(&files, &claims, soon()).unwrap().expect("a dead process's holder file is broken"));
        for name in names(&dir) {
            std::fs::remove_file(dir.join(name)).unwrap();
        }
        let fourth = claim(&files, &claims, soon()).unwrap().unwrap();
        assert_eq!((links(&dir), spares(&dir)), (2, 1), "a swept spare is made again");
        assert_ne!(std::fs::read_to_string(dir.join(HOLDER)).unwrap(), words);
        drop(fourth);
        drop(claims);
        assert!(names(&dir).is_empty(), "the spare goes with its handle: {:?}", names(&dir));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_empty_holder_is_a_claim_being_written_until_it_is_old() {
        let (dir, files) = scratch("empty");
        std::fs::write(dir.join(HOLDER), "").unwrap();
        assert!(claim(&files, &Claims::default(), soon()).unwrap().is_none(), "a fresh empty holder file is being written");
        let old = std::time::SystemTime::now() - EMPTY_STALE * 2;
        std::fs::File::options().write(true).open(dir.join(HOLDER)).unwrap().set_modified(old).unwrap();
        assert!(claim(&files, &Claims::default(), soon()).unwrap().is_some(), "an old empty holder file is a crash's");
        // One written under the flock, which this writer now holds, is a crash's even where its
        // process number is alive (taken since by another process).
        let flocked = format!("{} 0123 flock\n", std::process::id());
        for garbage in ["not-a-pid 1\n", "0 1\n", "-1 1\n", flocked.as_str()] {
            std::fs::write(dir.join(HOLDER), garbage).unwrap();
            assert!(claim(&files, &Claims::default(), soon()).unwrap().is_some(), "{garbage:?} names no process");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
