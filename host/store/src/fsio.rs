//! Writes that survive a crash: whole-file replacement by temp file, fsync and rename, and
//! appends that land as one write each; and the reads of an append-only log that a crash
//! may have left with a torn last line.

use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Temporary files are `.<name>.tmp-<pid>-<n>`.
const TEMP_MARK: &str = ".tmp-";

/// Whether `name` is one of [`write_atomic_at`]'s temporary files.
pub fn is_temp(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.') && name.contains(TEMP_MARK)
}

/// Whether process `pid` runs (on this machine, in this PID namespace): EPERM is alive,
/// someone else's.
pub fn alive(pid: i32) -> bool {
    rustix::process::Pid::from_raw(pid).is_some_and(|pid| matches!(rustix::process::test_kill_process(pid), Ok(()) | Err(rustix::io::Errno::PERM)))
}

/// The process that made temporary file `name`.
fn temp_owner(name: &OsStr) -> Option<i32> {
    let name = name.to_string_lossy();
    let (_, tail) = name.rsplit_once(TEMP_MARK)?;
    tail.split('-').next()?.parse().ok()
}

/// A temporary file's name beside `name`'s, this process's and no other of its own.
fn temp_name(name: &OsStr) -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{}{TEMP_MARK}{}-{n}", name.to_string_lossy(), std::process::id())
}

/// Replaces `name` in folder `dir` with `bytes`: readers see the old file or the new one,
/// never a mix, whatever moment a crash comes. A symlink at `name` is replaced, not followed.
pub fn write_atomic_at(dir: BorrowedFd<'_>, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    write_atomic_mode_at(dir, name, bytes, 0o644)
}

/// [`write_atomic_at`] with the file's permission bits `mode` (0o600 for a secret: it is
/// never readable by others, not even for a moment).
pub fn write_atomic_mode_at(dir: BorrowedFd<'_>, name: &OsStr, bytes: &[u8], mode: u32) -> io::Result<()> {
    let tmp = temp_name(name);
    let result = (|| {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut f = File::from(rustix::fs::openat(dir, &tmp, flags, Mode::from_raw_mode(mode))?);
        f.write_all(bytes)?;
        f.sync_all()?;
        rustix::fs::renameat(dir, &tmp, dir, name)?;
        Ok(rustix::fs::fsync(dir)?)
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
    }
    result
}

/// Makes a temporary file beside `name` in `dir` holding `bytes` (not synced: it is never read
/// after a crash, and swept once its process is gone), and says its name.
pub fn make_temp_at(dir: BorrowedFd<'_>, name: &OsStr, bytes: &[u8]) -> io::Result<String> {
    let tmp = temp_name(name);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let written = File::from(rustix::fs::openat(dir, &tmp, flags, Mode::from_raw_mode(0o644))?).write_all(bytes);
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
        return Err(e);
    }
    Ok(tmp)
}

/// [`write_atomic_at`] for a path the user gave (an output file of theirs, not a session's).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "names no file"))?;
    let dir = rustix::fs::open(parent, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    write_atomic_at(dir.as_fd(), name, bytes)
}

/// Removes the temporary files in `dir` whose writer is gone (a crash between create and
/// rename); a live writer's are left alone.
pub fn sweep_temps(dir: BorrowedFd<'_>) -> io::Result<()> {
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = std::os::unix::ffi::OsStrExt::from_bytes(entry.file_name().to_bytes());
        if !is_temp(name) {
            continue;
        }
        if !temp_owner(name).is_some_and(alive) {
            let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
        }
    }
    Ok(())
}

/// Appends records (each ending with a newline) in a single write, then syncs.
pub fn append(f: &mut File, record: &[u8]) -> io::Result<()> {
    append_unsynced(f, record)?;
    f.sync_data()
}

/// [`append`] without the sync: durable once a later sync of the file (any handle's) ends.
pub fn append_unsynced(f: &mut File, record: &[u8]) -> io::Result<()> {
    f.write_all(record)
}

/// Takes an exclusive lock on `f`, held until it is dropped, waiting at most `wait` for
/// another holder: `None` if it kept it that long.
pub fn lock_within(f: File, wait: std::time::Duration) -> io::Result<Option<File>> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(Some(f)),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// The length of `f` up to the end of its last whole line: what a crash cut short mid-append
/// (bytes after the last newline) was never committed.
pub fn complete_len(f: &File) -> io::Result<u64> {
    let len = f.metadata()?.len();
    Ok(Backwards::new(f).rfind(len, |b| b == b'\n')?.map_or(0, |nl| nl + 1))
}

/// The end of an append-only log as an append needs it, read with one `pread` where its last
/// record is shorter than a chunk.
#[derive(Debug)]
pub struct Tail {
    /// The file's length.
    pub len: u64,
    /// Where its last whole line ends (see [`complete_len`]).
    pub whole: u64,
    /// Its last non-empty whole line, without its newline.
    pub last: Option<Vec<u8>>,
}

/// The end of `f` (see [`Tail`]), read backwards from its end, so that a long log costs what
/// its last line does (each byte of it looked at once: after a 15 MiB record, prepending chunk
/// after chunk took minutes).
pub fn tail(f: &File) -> io::Result<Tail> {
    let len = f.metadata()?.len();
    let mut back = Backwards::new(f);
    let whole = back.rfind(len, |b| b == b'\n')?.map_or(0, |nl| nl + 1);
    let last = match back.rfind(whole, |b| !b.is_ascii_whitespace())? {
        Some(last) => {
            let start = back.rfind(last, |b| b == b'\n')?.map_or(0, |nl| nl + 1);
            Some(back.range(start, last + 1)?)
        }
        None => None,
    };
    Ok(Tail { len, whole, last })
}

/// Drops a torn last line (see [`complete_len`]) so the next append starts a record of its
/// own. Whether one was dropped.
pub fn drop_torn(f: &File, tail: &Tail) -> io::Result<bool> {
    if tail.whole < tail.len {
        f.set_len(tail.whole)?;
        f.sync_data()?;
    }
    Ok(tail.whole < tail.len)
}

/// The last non-empty whole line of `f` (without its newline): see [`tail`].
pub fn last_line(f: &File) -> io::Result<Option<Vec<u8>>> {
    Ok(tail(f)?.last)
}

/// The bytes of `f` from `offset` on, `len` of them, which the caller knows it holds (a
/// range up to its [`complete_len`]).
pub fn read_range(f: &File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    let mut out = vec![0; usize::try_from(len).map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "a range past memory"))?];
    f.read_exact_at(&mut out, offset)?;
    Ok(out)
}

/// The whole lines of `f` from `offset` on (a torn last line left out), read at once; `None`
/// where `offset` does not start a line (it is past the end, or the byte before it is not a
/// newline).
pub fn lines_from(f: &File, offset: u64) -> io::Result<Option<Vec<u8>>> {
    let len = f.metadata()?.len();
    if offset > len {
        return Ok(None);
    }
    // The byte before `offset` with the rest: one read says where the lines start and holds them.
    let from = offset.saturating_sub(1);
    let mut bytes = read_range(f, from, len - from)?;
    if offset > 0 && bytes.first() != Some(&b'\n') {
        return Ok(None);
    }
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |nl| nl + 1);
    bytes.truncate(whole);
    if offset > 0 {
        bytes.remove(0);
    }
    Ok(Some(bytes))
}

/// A file read backwards a chunk at a time with `pread`, the last chunk read kept: the searches
/// of one [`tail`] read its last chunk once.
struct Backwards<'f> {
    f: &'f File,
    chunk: Vec<u8>,
    /// Where `chunk` starts in the file.
    at: u64,
}

impl<'f> Backwards<'f> {
    const CHUNK: u64 = 8192;

    fn new(f: &'f File) -> Self {
        Backwards { f, chunk: Vec::new(), at: 0 }
    }

    /// Where the last byte before `end` that `hit` matches is, looking at each byte once.
    fn rfind(&mut self, mut end: u64, hit: impl Fn(u8) -> bool) -> io::Result<Option<u64>> {
        while end > 0 {
            if !(self.at < end && end <= self.at + self.chunk.len() as u64) {
                let start = end.saturating_sub(Self::CHUNK);
                self.chunk.resize(usize::try_from(end - start).expect("a chunk fits in memory"), 0);
                self.f.read_exact_at(&mut self.chunk, start)?;
                self.at = start;
            }
            let within = usize::try_from(end - self.at).expect("within the chunk");
            if let Some(i) = self.chunk[..within].iter().rposition(|&b| hit(b)) {
                return Ok(Some(self.at + i as u64));
            }
            end = self.at;
        }
        Ok(None)
    }

    /// The bytes from `start` to `end`, from the chunk where it holds them.
    fn range(&self, start: u64, end: u64) -> io::Result<Vec<u8>> {
        let held = self.at + self.chunk.len() as u64;
        if self.at <= start && end <= held {
            let from = usize::try_from(start - self.at).expect("within the chunk");
            return Ok(self.chunk[from..from + usize::try_from(end - start).expect("within the chunk")].to_vec());
        }
        read_range(self.f, start, end - start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, bytes: &[u8]) -> File {
        let path = std::env::temp_dir().join(format!("workmem-fsio-{name}-{}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }

    #[test]
    fn the_last_whole_line() {
        let cases: [(&[u8], Option<&[u8]>); 6] = [
            (b"", None),
            (b"one\n", Some(b"one")),
            (b"one\ntwo\n", Some(b"two")),
            (b"one\ntwo\n\n  \n", Some(b"two")),
            (b"one\ntwo\ntorn", Some(b"two")),
            (b"  \n\n", None),
        ];
        for (i, (bytes, want)) in cases.into_iter().enumerate() {
            assert_eq!(last_line(&file(&format!("case{i}"), bytes)).unwrap().as_deref(), want, "{:?}", String::from_utf8_lossy(bytes));
        }
        let long = "x".repeat(100_000);
        assert_eq!(last_line(&file("long", format!("a\n{long}\n").as_bytes())).unwrap(), Some(long.into_bytes()));
    }

    #[test]
    fn the_whole_lines_from_a_line_start() {
        let f = file("from", b"one\ntwo\ntorn");
        let from = |offset| lines_from(&f, offset).unwrap();
        assert_eq!(from(0).as_deref(), Some(&b"one\ntwo\n"[..]));
        assert_eq!(from(4).as_deref(), Some(&b"two\n"[..]));
        assert_eq!(from(8).as_deref(), Some(&b""[..]), "the torn line is not whole");
        assert_eq!(from(2), None, "not a line's start");
        assert_eq!(from(10), None, "inside the torn line");
        assert_eq!(from(12), None, "at the end of the torn line");
        assert_eq!(from(13), None, "past the end");
    }

    /// A last line eight times as long costs about eight times as much, not sixty-four
    /// (`workmem_growth::time`, at 512 KiB and 4 MiB).
    #[test]
    fn a_long_last_line_costs_its_length() {
        let prepare = |n: usize| (file(&format!("grow{n}"), format!("first\n{}\n", "y".repeat(n)).as_bytes()), n);
        workmem_growth::time("the last line", 512 << 10, prepare, |(f, n)| {
            assert_eq!(last_line(&f).unwrap().map(|l| l.len()), Some(n));
        });
    }
}
