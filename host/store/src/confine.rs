//! Paths an LLM or a user names, resolved beneath a directory with directory handles. A name
//! is relative, made only of plain components (no `..`, no root, no NUL, no backslash); it
//! is opened one component at a time from a handle on the directory, each with `O_NOFOLLOW`,
//! so there is no moment between a check and an open that a swapped-in symlink could use:
//! a symlink anywhere on the way is refused, inside the directory or out. The memory file
//! tools (spec 001 US-4b, US-6, US-7) add the rule that names start with `working-memory/`;
//! the session store reads and writes its own files the same way.

use crate::fsio;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The part of a session the LLM may read and write.
pub const MEMORY_DIR: &str = "working-memory";

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    #[error("{0:?} is refused: paths must be relative to the session directory, without `..`")]
    Escapes(String),
    #[error("{0:?} is refused: memory files live under working-memory/ (overview.md, detail/, archive/)")]
    OutsideMemory(String),
    #[error("{0:?} is refused: a name that starts with `.` and holds `.tmp-` is kept for workmem's temporary files")]
    Reserved(String),
    #[error("{0:?} is refused: it goes through a symlink, and symlinks are not followed")]
    Symlink(String),
    #[error("{0:?} is refused: it is not a regular file")]
    NotAFile(String),
    #[error("{0:?} is refused: it has another name (a hard link) that may lie outside")]
    HardLink(String),
    #[error("{name:?} is refused: it is over {limit} bytes, the most a file read here may hold")]
    TooLarge { name: String, limit: u64 },
    #[error("{name:?}: {message}")]
    Io { name: String, kind: std::io::ErrorKind, message: String },
}

impl PathError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, PathError::Io { kind: std::io::ErrorKind::NotFound, .. })
    }

    pub fn is_already_exists(&self) -> bool {
        matches!(self, PathError::Io { kind: std::io::ErrorKind::AlreadyExists, .. })
    }
}

/// How [`Confined::open`] opens a file.
#[derive(Debug, Clone, Copy)]
pub enum Access {
    Read,
    /// Append (and read, so a torn last line can be found and dropped), creating the file
    /// and its folders.
    Append,
    /// Write a file made by this open, refused (`AlreadyExists`) when the name is taken.
    CreateNew,
}

/// The most [`Confined::read`] reads of one file.
pub const MAX_READ: u64 = 1 << 20;

/// A directory that names are confined to.
#[derive(Debug, Clone)]
pub struct Confined {
    root: PathBuf,
    /// Files whose content a stranger may have placed (a model's, a project's): a file with
    /// a second name is refused, since that name may be anywhere, outside included.
    untrusted: bool,
    /// The root, opened once (on first use, or given): every later step starts from this
    /// handle, so the root's path swapped for a symlink afterwards leads nowhere new.
    handle: Arc<OnceLock<OwnedFd>>,
}

impl Confined {
    pub fn new(root: &Path) -> Self {
        Confined { root: root.to_path_buf(), untrusted: false, handle: Arc::default() }
    }

    /// A directory whose files a model or a project put there: as [`Confined::new`], and a
    /// file that is a hard link is refused too. (The session store's own files may be hard
    /// linked by a backup tool, so they are not held to this.)
    pub fn untrusted(root: &Path) -> Self {
        Confined { untrusted: true, ..Confined::new(root) }
    }

    /// The directory `handle` (opened beneath a handle of the caller's), shown as `root`.
    pub fn at_handle(root: &Path, handle: OwnedFd) -> Self {
        Confined { root: root.to_path_buf(), untrusted: false, handle: Arc::new(OnceLock::from(handle)) }
    }

    /// The same directory, through the same handle, held to the untrusted rules.
    pub fn as_untrusted(&self) -> Self {
        Confined { untrusted: true, ..self.clone() }
    }

    /// A handle on the root itself. The root is the caller's, so it may be reached through
    /// a symlink when it is first opened; nothing beneath it may, and it is not opened again.
    fn root_handle(&self, name: &str) -> Result<BorrowedFd<'_>, PathError> {
        if let Some(fd) = self.handle.get() {
            return Ok(fd.as_fd());
        }
        let fd = rustix::fs::open(&self.root, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).map_err(|e| io(name, e.into()))?;
        // Another thread may have opened it first: either handle is the root.
        let _ = self.handle.set(fd);
        Ok(self.handle.get().expect("set just now").as_fd())
    }

    /// The folder `name` beneath the root, as a confined directory of its own (opened now,
    /// with no symlink on the way).
    pub fn subdir(&self, name: &str) -> Result<Confined, PathError> {
        Ok(Confined { untrusted: self.untrusted, ..Confined::at_handle(&self.root.join(name), self.folder(name)?) })
    }

    /// The folder holding `name`'s last component (opened, created when `create`), and
    /// that component.
    fn parent<'a>(&self, name: &'a str, create: bool) -> Result<(Dir<'_>, &'a OsStr), PathError> {
        let parts = components(name)?;
        let (last, folders) = parts.split_last().expect("components are never empty");
        let mut dir = Dir::Root(self.root_handle(name)?);
        for part in folders {
            dir = Dir::Below(open_folder(dir.as_fd(), part, create).map_err(|e| classify(dir.as_fd(), part, name, e))?);
        }
        Ok((dir, last))
    }

    /// The folder `name` itself.
    fn folder(&self, name: &str) -> Result<OwnedFd, PathError> {
        let (dir, last) = self.parent(name, false)?;
        open_folder(dir.as_fd(), last, false).map_err(|e| classify(dir.as_fd(), last, name, e))
    }

    /// Opens the regular file `name`; a symlink, a folder, a FIFO or a device is refused
    /// (a FIFO would block the reader forever).
    pub fn open(&self, name: &str, access: Access) -> Result<File, PathError> {
        Ok(self.open_sized(name, access)?.0)
    }

    /// [`Confined::open`], and the file's size when it was opened.
    fn open_sized(&self, name: &str, access: Access) -> Result<(File, u64), PathError> {
        let (dir, last) = self.parent(name, !matches!(access, Access::Read))?;
        let flags = OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let flags = match access {
            Access::Read => flags | OFlags::RDONLY,
            Access::Append => flags | OFlags::RDWR | OFlags::APPEND | OFlags::CREATE,
            Access::CreateNew => flags | OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
        };
        let fd = rustix::fs::openat(dir.as_fd(), last, flags, Mode::from_raw_mode(0o644)).map_err(|e| classify(dir.as_fd(), last, name, e))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| io(name, e.into()))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(PathError::NotAFile(name.to_string()));
        }
        if self.untrusted && stat.st_nlink > 1 {
            return Err(PathError::HardLink(name.to_string()));
        }
        // Regular files ignore O_NONBLOCK; clear it anyway so the handle behaves as usual
        // (F_SETFL takes the status flags it was opened with, less that one).
        rustix::fs::fcntl_setfl(&fd, flags - OFlags::NONBLOCK).map_err(|e| io(name, e.into()))?;
        Ok((File::from(fd), u64::try_from(stat.st_size).unwrap_or(0)))
    }

    fn read_bytes(&self, name: &str, limit: u64) -> Result<Vec<u8>, PathError> {
        use std::io::Read;
        let (file, size) = self.open_sized(name, Access::Read)?;
        // Room for what its size says, so that a small file is one read, not a read per
        // doubling of the buffer; one byte past the limit tells a file at it from one over
        // it, whatever its size says.
        let mut out = Vec::with_capacity(usize::try_from(size.min(limit).saturating_add(1)).unwrap_or(0));
        file.take(limit.saturating_add(1)).read_to_end(&mut out).map_err(|e| io(name, e))?;
        if out.len() as u64 > limit {
            return Err(PathError::TooLarge { name: name.to_string(), limit });
        }
        Ok(out)
    }

    /// The text of file `name`: at most [`MAX_READ`] bytes where it is untrusted (the
    /// session store's own files are as large as their sessions made them).
    pub fn read(&self, name: &str) -> Result<String, PathError> {
        self.read_at_most(name, if self.untrusted { MAX_READ } else { u64::MAX })
    }

    /// The text of file `name`, refused when over `limit` bytes or not UTF-8.
    pub fn read_at_most(&self, name: &str, limit: u64) -> Result<String, PathError> {
        String::from_utf8(self.read_bytes(name, limit)?).map_err(|_| PathError::Io {
            name: name.to_string(),
            kind: std::io::ErrorKind::InvalidData,
            message: "is not UTF-8 text".into(),
        })
    }

    /// Replaces the file atomically, creating its folders (all beneath the root). A symlink
    /// in its place is refused like any other (were one swapped in after this check, the
    /// rename would replace the link itself, never what it points to).
    pub fn write(&self, name: &str, content: &[u8]) -> Result<(), PathError> {
        self.write_mode(name, content, 0o644)
    }

    /// [`Confined::write`] for a secret: the file is readable by its owner alone.
    pub fn write_private(&self, name: &str, content: &[u8]) -> Result<(), PathError> {
        self.write_mode(name, content, 0o600)
    }

    fn write_mode(&self, name: &str, content: &[u8], mode: u32) -> Result<(), PathError> {
        let (dir, last) = self.parent(name, true)?;
        if rustix::fs::statat(dir.as_fd(), last, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink) {
            return Err(PathError::Symlink(name.to_string()));
        }
        fsio::write_atomic_mode_at(dir.as_fd(), last, content, mode).map_err(|e| io(name, e))
    }

    /// Removes the file `name`; one that is not there is not an error.
    pub fn remove(&self, name: &str) -> Result<(), PathError> {
        let (dir, last) = match self.parent(name, false) {
            Err(e) if e.is_not_found() => return Ok(()),
            other => other?,
        };
        match rustix::fs::unlinkat(dir.as_fd(), last, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => rustix::fs::fsync(dir.as_fd()).map_err(|e| io(name, e.into())),
            Err(e) => Err(classify(dir.as_fd(), last, name, e)),
        }
    }

    /// [`Confined::remove`] without waiting for the disk: for a file whose removal need not
    /// survive a crash.
    pub fn remove_unsynced(&self, name: &str) -> Result<(), PathError> {
        let (dir, last) = self.parent(name, false)?;
        match rustix::fs::unlinkat(dir.as_fd(), last, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(classify(dir.as_fd(), last, name, e)),
        }
    }

    /// A file at the root holding `content`, made now under a temporary name beside `name`'s
    /// (so that no listing shows it, and the first lock after its process is gone sweeps it),
    /// to be linked as `name` whenever `name` is free: see [`Spare::link_as`].
    pub fn spare(&self, name: &str, content: &[u8]) -> Result<Spare, PathError> {
        let [last] = components(name)?[..] else { return Err(PathError::Escapes(name.to_string())) };
        let spare = fsio::make_temp_at(self.root_handle(name)?, last, content).map_err(|e| io(name, e))?;
        Ok(Spare { files: self.clone(), name: spare })
    }

    /// Gives the file `from` at the root the second name `to`: refused (`AlreadyExists`) when
    /// `to` is taken, `NotFound` when `from` is not there.
    pub fn link(&self, from: &str, to: &str) -> Result<(), PathError> {
        let ([from_last], [to_last]) = (&components(from)?[..], &components(to)?[..]) else { return Err(PathError::Escapes(to.to_string())) };
        let root = self.root_handle(to)?;
        rustix::fs::linkat(root, *from_last, root, *to_last, AtFlags::empty()).map_err(|e| io(to, e.into()))
    }

    /// Makes the folder `name` (and those above it).
    pub fn create_dir_all(&self, name: &str) -> Result<(), PathError> {
        let (dir, last) = self.parent(name, true)?;
        open_folder(dir.as_fd(), last, true).map(drop).map_err(|e| classify(dir.as_fd(), last, name, e))
    }

    /// Removes the temporary files a dead writer left in folder `name` (`.` for the root),
    /// reached like any other; a folder that is not there has none.
    pub fn sweep_temps(&self, name: &str) -> Result<(), PathError> {
        let dir = match if name == "." { self.root_handle(name).map(Dir::Root) } else { self.folder(name).map(Dir::Below) } {
            Err(e) if e.is_not_found() => return Ok(()),
            other => other?,
        };
        fsio::sweep_temps(dir.as_fd()).map_err(|e| io(name, e))
    }

    /// The regular files under folder `name`, as names that `read` accepts, sorted. Symlinks
    /// are skipped, not followed, and so are a crash's leftover temporary files. A folder is
    /// open only while it is read (the folders still to read are kept by name, each opened
    /// beneath the root when its turn comes): a tree of 1,100 folders held 1,100 handles and
    /// failed under the common limit of 1,024 open files.
    pub fn list(&self, name: &str) -> Result<Vec<String>, PathError> {
        let mut out = Vec::new();
        let prefix = components(name)?.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>().join("/");
        let mut stack = vec![prefix.clone()];
        while let Some(at) = stack.pop() {
            let dir = match self.folder(&at) {
                // A folder below `name` removed, or swapped for a symlink or a file, while we looked.
                Err(PathError::Symlink(_) | PathError::Io { kind: std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory, .. }) if at != prefix => {
                    continue;
                }
                other => other?,
            };
            let entries = rustix::fs::Dir::read_from(&dir).map_err(|e| io(name, e.into()))?;
            for entry in entries {
                let entry = entry.map_err(|e| io(name, e.into()))?;
                let file = OsStr::from_bytes(entry.file_name().to_bytes());
                if file == "." || file == ".." || fsio::is_temp(file) {
                    continue;
                }
                let rel = format!("{at}/{}", file.to_string_lossy());
                let stat = match rustix::fs::statat(dir.as_fd(), file, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) => stat,
                    Err(Errno::NOENT) => continue, // removed while we looked
                    Err(e) => return Err(io(&rel, e.into())),
                };
                match FileType::from_raw_mode(stat.st_mode) {
                    FileType::Directory => stack.push(rel),
                    FileType::RegularFile => out.push(rel),
                    _ => {}
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

/// A folder a name is opened in: the root, through the handle the [`Confined`] keeps (not
/// duplicated for each open), or one opened beneath it.
enum Dir<'r> {
    Root(BorrowedFd<'r>),
    Below(OwnedFd),
}

impl AsFd for Dir<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Dir::Root(fd) => *fd,
            Dir::Below(fd) => fd.as_fd(),
        }
    }
}

/// The plain components of a name, or why it is refused.
fn components(name: &str) -> Result<Vec<&OsStr>, PathError> {
    let escapes = || PathError::Escapes(name.to_string());
    if name.is_empty() || name.contains('\0') || name.contains('\\') {
        return Err(escapes());
    }
    let mut parts = Vec::new();
    for component in Path::new(name).components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return Err(escapes()),
        }
    }
    if parts.is_empty() {
        return Err(escapes());
    }
    // A writer's temporary files are swept as a dead writer's leftovers: a file of the
    // caller's by such a name would be deleted after its write was reported done.
    if parts.iter().any(|p| fsio::is_temp(p)) {
        return Err(PathError::Reserved(name.to_string()));
    }
    Ok(parts)
}

/// Opens the folder `part` beneath `dir` without following a symlink, making it first
/// when `create`.
fn open_folder(dir: BorrowedFd<'_>, part: &OsStr, create: bool) -> Result<OwnedFd, Errno> {
    let open = || rustix::fs::openat(dir, part, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty());
    match open() {
        Err(Errno::NOENT) if create => match rustix::fs::mkdirat(dir, part, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => open(),
            Err(e) => Err(e),
        },
        other => other,
    }
}

/// A failed open, named: a symlink where one was met (`O_NOFOLLOW` answers `ELOOP`, or
/// `ENOTDIR` when a folder was asked for), else the I/O error.
fn classify(dir: BorrowedFd<'_>, part: &OsStr, name: &str, e: Errno) -> PathError {
    if matches!(e, Errno::LOOP | Errno::NOTDIR)
        && rustix::fs::statat(dir, part, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink)
    {
        return PathError::Symlink(name.to_string());
    }
    io(name, e.into())
}

fn io(name: &str, e: std::io::Error) -> PathError {
    PathError::Io { name: name.to_string(), kind: e.kind(), message: e.to_string() }
}

/// A file of this process's at a confined root, under a temporary name ([`Confined::spare`]):
/// removed when dropped.
#[derive(Debug)]
pub struct Spare {
    files: Confined,
    name: String,
}

impl Spare {
    /// Gives it the second name `name` at the root, refused (`AlreadyExists`) when `name` is
    /// taken, as a file made with `O_EXCL` would be; `NotFound` when the spare itself is gone
    /// (swept, or its folder replaced). Its content is whole the moment the name appears, where
    /// a file made and then written is empty for a moment.
    pub fn link_as(&self, name: &str) -> Result<(), PathError> {
        let [last] = components(name)?[..] else { return Err(PathError::Escapes(name.to_string())) };
        let root = self.files.root_handle(name)?;
        rustix::fs::linkat(root, self.name.as_str(), root, last, AtFlags::empty()).map_err(|e| io(name, e.into()))
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        if let Ok(root) = self.files.root_handle(&self.name) {
            let _ = rustix::fs::unlinkat(root, self.name.as_str(), AtFlags::empty());
        }
    }
}

/// The memory files the LLM reads and writes (`working-memory/overview.md`, `detail/`,
/// `archive/`): every name is checked and confined there (by
/// [`memory_name`] first, in every session store).
pub trait MemoryFileStore {
    fn read(&self, name: &str) -> Result<String, PathError>;
    fn write(&self, name: &str, content: &str) -> Result<(), PathError>;
    /// The files under `name` (`working-memory` for all of them).
    fn list(&self, name: &str) -> Result<Vec<String>, PathError>;
}

/// Whether `name` is a memory file's: under `working-memory/` (what every store's
/// [`MemoryFileStore`] checks first; a directory then opens it beneath its handle).
pub fn memory_name(name: &str) -> Result<(), PathError> {
    let first = Path::new(name).components().find(|c| *c != Component::CurDir);
    match first {
        Some(Component::Normal(part)) if part == MEMORY_DIR => Ok(()),
        Some(Component::Normal(_)) => Err(PathError::OutsideMemory(name.to_string())),
        _ => Err(PathError::Escapes(name.to_string())),
    }
}

/// The memory file tools: `Confined` to the session directory, and only `working-memory/`.
#[derive(Debug, Clone)]
pub struct MemoryFiles {
    session: Confined,
}

impl MemoryFiles {
    pub fn new(session_dir: &Path) -> Self {
        MemoryFiles { session: Confined::untrusted(session_dir) }
    }

    /// The memory files of the session directory `session` already has open.
    pub fn within(session: &Confined) -> Self {
        MemoryFiles { session: session.as_untrusted() }
    }
}

/// A session directory's memory files, the directory store's [`MemoryFileStore`].
impl MemoryFileStore for MemoryFiles {
    fn read(&self, name: &str) -> Result<String, PathError> {
        memory_name(name)?;
        self.session.read(name)
    }

    fn write(&self, name: &str, content: &str) -> Result<(), PathError> {
        memory_name(name)?;
        self.session.write(name, content.as_bytes())
    }

    fn list(&self, name: &str) -> Result<Vec<String>, PathError> {
        memory_name(name)?;
        self.session.list(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::process::{Resource, getrlimit, setrlimit};

    /// 1,100 folders list under a limit of 256 open files: one folder is open at a time.
    #[test]
    fn a_wide_tree_lists_under_a_low_open_files_limit() {
        let dir = std::env::temp_dir().join(format!("workmem-confine-wide-{}", std::process::id()));
        for i in 0..1100 {
            let folder = dir.join(format!("working-memory/detail/f{i}"));
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("notes.md"), "x").unwrap();
        }
        let before = getrlimit(Resource::Nofile);
        setrlimit(Resource::Nofile, rustix::process::Rlimit { current: Some(256), maximum: before.maximum }).unwrap();
        let listed = MemoryFiles::new(&dir).list(MEMORY_DIR);
        setrlimit(Resource::Nofile, before).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(listed.unwrap().len(), 1100);
    }
}
