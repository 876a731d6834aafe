//! Writes that survive a crash: whole-file replacement by temp file, fsync and rename, and
//! appends that land as one write each.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces `path` with `bytes`: readers see the old file or the new one, never a mix.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Appends one record (which must end with a newline) in a single write, then syncs.
pub fn append(path: &Path, record: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(record)?;
    f.sync_data()
}

pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// An exclusive lock on `path`, held until the returned file is dropped.
pub fn lock(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
    f.lock()?;
    Ok(f)
}

/// The last non-empty line of a file (without its newline), reading backwards from the end
/// so that a long log costs what its last line does.
pub fn last_line(path: &Path) -> io::Result<Option<Vec<u8>>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut end = f.seek(SeekFrom::End(0))?;
    let mut tail: Vec<u8> = Vec::new();
    const CHUNK: u64 = 8192;
    loop {
        let content_end = tail.iter().rposition(|b| !b.is_ascii_whitespace()).map(|i| i + 1);
        if let Some(content_end) = content_end
            && let Some(nl) = tail[..content_end].iter().rposition(|&b| b == b'\n')
        {
            return Ok(Some(tail[nl + 1..content_end].to_vec()));
        }
        if end == 0 {
            return Ok(content_end.map(|e| tail[..e].to_vec()));
        }
        let start = end.saturating_sub(CHUNK);
        let mut chunk = vec![0; usize::try_from(end - start).expect("a chunk fits in memory")];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&tail);
        tail = chunk;
        end = start;
    }
}

/// Drops bytes after the last newline: a record a crash cut short mid-append.
pub fn truncate_partial_line(path: &Path) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let len = f.seek(SeekFrom::End(0))?;
    let mut end = len;
    let mut byte = [0u8; 1];
    while end > 0 {
        f.seek(SeekFrom::Start(end - 1))?;
        f.read_exact(&mut byte)?;
        if byte[0] == b'\n' {
            break;
        }
        end -= 1;
    }
    if end < len {
        f.set_len(end)?;
        f.sync_data()?;
    }
    Ok(())
}

/// At most `len` bytes of `path` from `offset` on (none if it does not exist).
pub fn read_range(path: &Path, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    f.seek(SeekFrom::Start(offset))?;
    let mut out = Vec::new();
    f.take(len).read_to_end(&mut out)?;
    Ok(out)
}
