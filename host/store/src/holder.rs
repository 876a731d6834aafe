//! The half of a session's lock that every runtime can take. The lock is `flock` on `.lock`
//! and, while it is held, the file `.lock.holder`, naming its process (`<pid> <nonce>@<start>
//! flock`, or without `flock` from a writer that has none; `@<start>` is when the process
//! started, in clock ticks after boot, where `/proc` tells it). Node has no file locks: its
//! writer (`packages/js/session.js`) takes the holder file alone, and the Rust, Python and Go
//! writers take it after their `flock`, so each waits for the other. `flock` still orders the
//! writers that have it, and frees itself when its process dies. The four runtimes keep this
//! protocol alike (`session.py`, `session.go`, `session.js`):
//!
//! - A holder file is taken whole: its words are written to a fresh file first, which is then
//!   linked as `.lock.holder` (a link fails where the name is taken, as `O_EXCL` does), so no
//!   writer ever sees one empty or half written. (An empty one, from a filesystem without hard
//!   links or an older writer, counts as a crash's after [`EMPTY_STALE`].)
//! - It is broken only when its writer is provably gone: its process is not there, or is
//!   another process with that number (it started at another time: a restarted container's
//!   PID 1, a busy machine), or, seen by a writer holding the `flock`, it was written under
//!   the `flock` (whose holder must then be gone). A live process's holder is never broken.
//! - One writer at a time breaks one: it first links the holder it judged as `.lock.holder.break`
//!   (refused while another break is under way), checks that the link is the very file it
//!   judged (same inode, same words), and only then removes `.lock.holder`. Without this, two
//!   writers that judged the same crash's holder both removed "it", the second removing the
//!   holder the first had taken since: two writers inside the lock. A break link older than
//!   [`BREAK_STALE`] is its breaker's crash and is removed (a break is three system calls).
//! - Anything but a regular file there (a symlink, a FIFO, a folder) is no holder any writer
//!   makes: refused at once, saying so, never waited on.
//! - Every wait is bounded ([`LOCK_WAIT`] unless the caller says less) and its error says
//!   what it waited for: the holder file's process, or another process's `flock`.
//!
//! In a process that keeps spares ([`claim_from_spares`]: the proxy, which locks the same
//! sessions again and again), a handle that claims the holder file again links it from a spare
//! it made once ([`Claims`]) rather than making a new file each time: the same `.lock.holder`
//! with the same words for every reader, at a fraction of the cost (a new file is a new inode,
//! which ext4 without a journal looks for past every one recently freed; about 0.1 ms of the
//! proxy's 1 ms per request, two claims an exchange). Elsewhere the spare is made for the claim
//! and removed once linked.

use crate::confine::{Access, Confined, PathError, Spare};
use crate::fsio;
use std::io::{Read, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

pub const HOLDER: &str = ".lock.holder";
/// The second name of a holder file being broken.
const BREAK: &str = ".lock.holder.break";
/// How long a holder file may stay empty before it counts as a crash's (see the module docs).
const EMPTY_STALE: Duration = Duration::from_secs(2);
/// How long a break may take before its breaker counts as gone.
const BREAK_STALE: Duration = Duration::from_secs(2);
/// The longest a writer waits for a session's lock unless its caller says less.
pub const LOCK_WAIT: Duration = Duration::from_secs(60);
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
/// keeps no spare; a spare is removed when its handle goes, and a dead process's is swept.
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

/// When process `pid` started, in clock ticks after boot (`/proc/<pid>/stat`'s 22nd field):
/// with the pid, it names one process, where a pid alone is reused. `None` where `/proc` does
/// not tell.
pub fn started(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces; the fields after it do not.
    stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}

/// A claim's words: this process, a nonce with when the process started, and the mark of a
/// claim made under the `flock`.
fn words() -> String {
    let mut nonce = [0u8; 8];
    // Without randomness the pid alone still tells holders apart while they live.
    let _ = getrandom::fill(&mut nonce);
    let pid = std::process::id();
    let start = started(pid).map(|s| format!("@{s}")).unwrap_or_default();
    format!("{pid} {}{start} {FLOCKED}\n", nonce.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Takes the holder file if it is free: linked from a spare made whole first (the handle's
/// own, from its second claim on, in a process that keeps spares).
fn take(files: &Confined, claims: &Claims) -> Result<bool, PathError> {
    let mut linking = claims.linking.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let keep = claims.claimed.swap(true, Ordering::Relaxed) && SPARES.load(Ordering::Relaxed);
    // A second turn where the spare was gone (swept, or the folder replaced).
    for _ in 0..2 {
        if matches!(*linking, Linking::Unmade) {
            // A spare that cannot be made leaves the claim to the path below, and its error.
            *linking = files.spare(HOLDER, words().as_bytes()).map_or(Linking::Off, Linking::Made);
        }
        let Linking::Made(spare) = &*linking else { break };
        match spare.link_as(HOLDER) {
            Ok(()) => {
                // A handle that claims once keeps no spare: one is made for each claim, and
                // kept across its tries.
                if !keep {
                    *linking = Linking::Unmade;
                }
                return Ok(true);
            }
            Err(e) if e.is_already_exists() => return Ok(false),
            Err(e) if e.is_not_found() => *linking = Linking::Unmade,
            Err(_) => *linking = Linking::Off,
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
/// `deadline`; `Err` with what held it when the deadline passed first.
pub fn claim(files: &Confined, claims: &Claims, deadline: Instant) -> Result<Result<Holder, String>, PathError> {
    loop {
        if take(files, claims)? {
            return Ok(Ok(Holder { files: files.clone() }));
        }
        let Some(seen) = Seen::look(files, HOLDER)? else { continue };
        if seen.gone() {
            break_one(files, &seen)?;
            continue;
        }
        if Instant::now() >= deadline {
            return Ok(Err(seen.describe()));
        }
        std::thread::sleep(POLL);
    }
}

/// A holder file as one open of it saw it.
struct Seen {
    text: String,
    inode: u64,
    /// Since it was last written.
    modified: Option<Duration>,
    /// Since its inode last changed (made, written or linked).
    changed: Option<Duration>,
}

impl Seen {
    /// `name` as it is now; `None` where it is not there.
    fn look(files: &Confined, name: &str) -> Result<Option<Seen>, PathError> {
        use std::os::unix::fs::MetadataExt;
        let mut file = match files.open(name, Access::Read) {
            Ok(file) => file,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(PathError::NotAFile(_) | PathError::Symlink(_)) => return Err(not_a_holder()),
            Err(e) => return Err(e),
        };
        let io = |e: std::io::Error| PathError::Io { name: name.into(), kind: e.kind(), message: e.to_string() };
        let meta = file.metadata().map_err(io)?;
        let mut text = String::new();
        // A holder file is a line; more is no holder's, and is judged by its first bytes.
        (&mut file).take(256).read_to_string(&mut text).map_err(io)?;
        let changed = SystemTime::UNIX_EPOCH + Duration::new(meta.ctime().try_into().unwrap_or(0), meta.ctime_nsec().try_into().unwrap_or(0));
        Ok(Some(Seen { text, inode: meta.ino(), modified: meta.modified().ok().and_then(|m| m.elapsed().ok()), changed: changed.elapsed().ok() }))
    }

    /// Whether its writer is provably gone, as seen by a writer that holds the `flock`.
    fn gone(&self) -> bool {
        let words: Vec<&str> = self.text.split_whitespace().collect();
        let Some(pid) = words.first() else {
            return self.modified.is_some_and(|age| age > EMPTY_STALE);
        };
        if words.get(2) == Some(&FLOCKED) {
            return true;
        }
        let Some(pid) = pid.parse::<i32>().ok().filter(|&pid| pid > 0) else { return true };
        if !fsio::alive(pid) {
            return true;
        }
        let said = words.get(1).and_then(|nonce| nonce.split_once('@')).and_then(|(_, start)| start.parse::<u64>().ok());
        matches!((said, started(pid.unsigned_abs())), (Some(said), Some(now)) if said != now)
    }

    /// What holds the lock, for the error of a wait that ran out.
    fn describe(&self) -> String {
        let pid = self.text.split_whitespace().next().unwrap_or("none");
        let age = self.changed.map(|age| format!(" for {} s", age.as_secs())).unwrap_or_default();
        format!("process {pid}, alive, has held its holder file ({HOLDER}){age}; if no workmem writer runs as {pid}, remove {HOLDER}")
    }
}

fn not_a_holder() -> PathError {
    PathError::Io {
        name: HOLDER.into(),
        kind: std::io::ErrorKind::InvalidData,
        message: "is not a regular file (a symlink, a FIFO or a folder), so no workmem writer made it; remove it".into(),
    }
}

/// Breaks the holder file `seen`, judged a crash's, unless another writer is breaking one: see
/// the module's docs.
fn break_one(files: &Confined, seen: &Seen) -> Result<(), PathError> {
    match files.link(HOLDER, BREAK) {
        Ok(()) => {}
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) if e.is_already_exists() => {
            if Seen::look(files, BREAK)?.is_some_and(|b| b.changed.is_some_and(|age| age > BREAK_STALE)) {
                files.remove_unsynced(BREAK)?;
            }
            std::thread::sleep(POLL);
            return Ok(());
        }
        Err(e) => return Err(e),
    }
    // The link is to whatever `.lock.holder` was a moment ago: the holder judged, or one a
    // writer took after another writer broke that one.
    let same = |b: &Seen| b.inode == seen.inode && b.text == seen.text;
    if Seen::look(files, BREAK)?.is_some_and(|b| same(&b)) && Seen::look(files, HOLDER)?.is_some_and(|h| same(&h)) {
        files.remove_unsynced(HOLDER)?;
    }
    files.remove_unsynced(BREAK)
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

    fn soon() -> Instant {
        Instant::now() + Duration::from_millis(60)
    }

    #[test]
    fn a_live_holder_is_waited_for_and_a_gone_one_broken() {
        let (dir, files) = scratch("live");
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        std::fs::write(dir.join(HOLDER), format!("{} 00\n", child.id())).unwrap();
        let waited = claim(&files, &Claims::default(), soon()).unwrap().unwrap_err();
        assert!(
            waited.starts_with(&format!("process {}, alive, has held its holder file", child.id())),
            "a live process's holder file holds the lock, and the wait says so: {waited}"
        );
        // The same number, but a process that started at another time (the number reused).
        let start = started(child.id()).expect("Linux tells when a process started");
        std::fs::write(dir.join(HOLDER), format!("{} 00@{} \n", child.id(), start + 1)).unwrap();
        assert!(claim(&files, &Claims::default(), soon()).unwrap().is_ok(), "a holder naming another process by a reused number is broken");
        std::fs::write(dir.join(HOLDER), format!("{} 00@{start}\n", child.id())).unwrap();
        assert!(claim(&files, &Claims::default(), soon()).unwrap().is_err(), "the very process that wrote it holds the lock");
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
        assert!(claim(&files, &claims, soon()).unwrap().is_err(), "a live process's holder file holds the lock");
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
        assert!(claim(&files, &Claims::default(), soon()).unwrap().is_err(), "a fresh empty holder file is being written");
        let old = std::time::SystemTime::now() - EMPTY_STALE * 2;
        std::fs::File::options().write(true).open(dir.join(HOLDER)).unwrap().set_modified(old).unwrap();
        assert!(claim(&files, &Claims::default(), soon()).unwrap().is_ok(), "an old empty holder file is a crash's");
        // One written under the flock, which this writer now holds, is a crash's even where its
        // process number is alive (taken since by another process).
        let flocked = format!("{} 0123 flock\n", std::process::id());
        for garbage in ["not-a-pid 1\n", "0 1\n", "-1 1\n", flocked.as_str()] {
            std::fs::write(dir.join(HOLDER), garbage).unwrap();
            assert!(claim(&files, &Claims::default(), soon()).unwrap().is_ok(), "{garbage:?} names no process");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[cfg(test)]
mod refused {
    use super::*;

    /// A symlink, a FIFO or a folder where the holder file goes is refused at once, saying
    /// what it is, where it once kept every writer waiting (a FIFO's open never returns).
    #[test]
    fn what_is_not_a_holder_file_is_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("workmem-holder-odd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let files = Confined::new(&dir);
        let far = Instant::now() + Duration::from_secs(30);
        let holder = dir.join(HOLDER);
        let plants: [(&str, &dyn Fn()); 3] = [
            ("symlink", &|| std::os::unix::fs::symlink("/etc/hostname", &holder).unwrap()),
            ("fifo", &|| {
                rustix::fs::mknodat(rustix::fs::CWD, &holder, rustix::fs::FileType::Fifo, rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR, 0).unwrap()
            }),
            ("folder", &|| std::fs::create_dir(&holder).unwrap()),
        ];
        for (what, plant) in plants {
            plant();
            let started = Instant::now();
            let e = claim(&files, &Claims::default(), far).unwrap_err();
            assert!(started.elapsed() < Duration::from_secs(5), "{what}: refused at once");
            assert!(e.to_string().contains("is not a regular file"), "{what}: {e}");
            let _ = std::fs::remove_file(&holder).or_else(|_| std::fs::remove_dir(&holder));
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
