//! What `Runtime::from_bytes` compiled, on disk, keyed by the component's bytes and wasmtime's
//! compatibility hash, so another component or wasmtime build never loads a stale one.
//!
//! An artifact is run as native code, so the rule the Python and Go packages keep too holds
//! here: one is loaded only from a directory and a file this user owns and no one else may
//! write, opened beneath a handle on that directory (so a parent swapped after the check
//! changes nothing), not through a symlink; it is written beneath the same handle through a
//! fresh name made with `O_EXCL` (a name another user pre-created, as a symlink say, is never
//! followed) and renamed into place. Each artifact ends with the SHA-256 of what precedes it:
//! one damaged on disk (bits flipped, a count changed) fails the check and is compiled over,
//! where wasmtime would have trusted it and crashed.

use crate::error::{Error, Result};
use std::path::Path;
use wasmtime::component::Component;

/// Compiles `bytes`, or loads the artifact cached for exactly this component and engine
/// configuration. A cache entry that fails to load or to check is replaced. The bool says
/// whether it came from the cache.
pub(crate) fn load(engine: &wasmtime::Engine, bytes: &[u8], dir: Option<&Path>) -> Result<(Component, bool)> {
    let compile = || Component::new(engine, bytes).map_err(Error::Load);
    #[cfg(unix)]
    if let Some(dir) = dir.and_then(|dir| private::Dir::open(dir).ok()) {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        env!("CARGO_PKG_VERSION").hash(&mut h);
        bytes.hash(&mut h);
        let name = format!("engine-{:016x}.cwasm", h.finish());
        if let Some(payload) = dir.read(&name).as_deref().and_then(checked) {
            // SAFETY: the bytes were read beneath a handle on a directory this user alone may
            // write, from a file this user alone may write, and carry the SHA-256 they were
            // written with; wasmtime checks its version and configuration again.
            #[allow(unsafe_code)]
            if let Ok(c) = unsafe { Component::deserialize(engine, payload) } {
                return Ok((c, true));
            }
        }
        let component = compile()?;
        // The cache is an optimization: failing to write it must not fail the caller.
        if let Ok(mut serialized) = component.serialize() {
            serialized.extend_from_slice(&digest(&serialized));
            let _ = dir.write(&name, &serialized);
        }
        return Ok((component, false));
    }
    // Not Unix (no owner to check) or no trusted directory: each process compiles.
    let _ = dir;
    Ok((compile()?, false))
}

#[cfg(unix)]
const DIGEST: usize = 32;

#[cfg(unix)]
fn digest(payload: &[u8]) -> [u8; DIGEST] {
    use sha2::Digest;
    sha2::Sha256::digest(payload).into()
}

/// The artifact in `stored` without its digest, if the digest matches.
#[cfg(unix)]
fn checked(stored: &[u8]) -> Option<&[u8]> {
    let (payload, sum) = stored.split_at_checked(stored.len().checked_sub(DIGEST)?)?;
    (digest(payload) == sum).then_some(payload)
}

#[cfg(unix)]
mod private {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
    use std::io::{Read, Write};
    use std::os::fd::OwnedFd;
    use std::path::Path;

    /// A directory this user owns and no one else may write, held open.
    pub(super) struct Dir(OwnedFd);

    fn ours(st: &Stat, kind: FileType) -> bool {
        FileType::from_raw_mode(st.st_mode) == kind && st.st_uid == rustix::process::geteuid().as_raw() && st.st_mode & 0o022 == 0
    }

    fn untrusted() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, "another user owns it or may write it")
    }

    impl Dir {
        /// Opens `path` (made private, 0700, where it is not there yet) if it is trusted.
        pub(super) fn open(path: &Path) -> std::io::Result<Dir> {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = match rustix::fs::open(path, flags, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) => {
                    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                        std::fs::create_dir_all(parent)?;
                    }
                    match rustix::fs::mkdir(path, Mode::RWXU) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    rustix::fs::open(path, flags, Mode::empty())?
                }
                other => other?,
            };
            if !ours(&rustix::fs::fstat(&fd)?, FileType::Directory) {
                return Err(untrusted());
            }
            Ok(Dir(fd))
        }

        /// The whole of `name` if it is a file this user alone may write.
        pub(super) fn read(&self, name: &str) -> Option<Vec<u8>> {
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&self.0, name, flags, Mode::empty()).ok()?;
            let st = rustix::fs::fstat(&fd).ok()?;
            if !ours(&st, FileType::RegularFile) {
                return None;
            }
            let mut bytes = Vec::with_capacity(usize::try_from(st.st_size).ok()?);
            std::fs::File::from(fd).read_to_end(&mut bytes).ok()?;
            Some(bytes)
        }

        /// Writes `bytes` as `name` whole: through a fresh name no one else can have made,
        /// synced, then renamed over `name`.
        pub(super) fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let (tmp, fd) = (0..16)
                .find_map(|n| {
                    let tmp = format!(".{name}.tmp-{}-{n}", std::process::id());
                    match rustix::fs::openat(&self.0, &tmp, flags, Mode::RUSR | Mode::WUSR) {
                        Err(rustix::io::Errno::EXIST) => None,
                        other => Some(other.map(|fd| (tmp, fd))),
                    }
                })
                .unwrap_or(Err(rustix::io::Errno::EXIST))?;
            let mut file = std::fs::File::from(fd);
            let written = file.write_all(bytes).and_then(|()| file.sync_all()).and_then(|()| Ok(rustix::fs::renameat(&self.0, &tmp, &self.0, name)?));
            if written.is_err() {
                let _ = rustix::fs::unlinkat(&self.0, &tmp, AtFlags::empty());
            }
            written
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::private::Dir;
    use super::{checked, digest};
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("workmem-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn set(path: &std::path::Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn only_what_no_one_else_may_write_is_read() {
        let dir = scratch("trust");
        let held = Dir::open(&dir).expect("a directory not there yet is made private");
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        set(&dir, 0o755);
        assert!(Dir::open(&dir).is_ok());
        set(&dir, 0o777);
        assert!(Dir::open(&dir).is_err(), "a directory others may write");
        set(&dir, 0o700);
        assert!(held.read("engine.cwasm").is_none(), "no artifact");
        let artifact = dir.join("engine.cwasm");
        std::fs::write(&artifact, b"x").unwrap();
        set(&artifact, 0o644);
        assert_eq!(held.read("engine.cwasm").as_deref(), Some(&b"x"[..]));
        assert!(Dir::open(&artifact).is_err(), "a file where a directory should be");
        set(&artifact, 0o664);
        assert!(held.read("engine.cwasm").is_none(), "an artifact the group may write");
        set(&artifact, 0o644);
        std::os::unix::fs::symlink(&artifact, dir.join("link.cwasm")).unwrap();
        assert!(held.read("link.cwasm").is_none(), "a symlink, even to a trusted artifact");
        let linked_dir = scratch("trust-link");
        std::os::unix::fs::symlink(&dir, &linked_dir).unwrap();
        assert!(Dir::open(&linked_dir).is_err(), "a symlink to a trusted directory");
        std::fs::remove_file(linked_dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A name pre-created by someone else (a symlink to a file it would overwrite) is never
    /// followed: the write goes through a fresh name and replaces the link itself.
    #[test]
    fn a_write_follows_no_name_made_before_it() {
        let dir = scratch("write");
        let held = Dir::open(&dir).unwrap();
        let victim = scratch("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let name = "engine-1.cwasm";
        for n in 0..3 {
            let guess = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
            std::os::unix::fs::symlink(&victim, guess).unwrap();
        }
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
        held.write(name, b"artifact").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(held.read(name).as_deref(), Some(&b"artifact"[..]));
        assert_eq!(std::fs::metadata(dir.join(name)).unwrap().permissions().mode() & 0o777, 0o600);
        for n in 3..16 {
            std::os::unix::fs::symlink(&victim, dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()))).unwrap();
        }
        assert!(held.write(name, b"other").is_err(), "every fresh name taken: no write");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        std::fs::remove_file(victim).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_artifact_fails_its_check() {
        let mut stored = b"compiled code".to_vec();
        stored.extend_from_slice(&digest(&stored));
        assert_eq!(checked(&stored), Some(&b"compiled code"[..]));
        for i in 0..stored.len() {
            let mut flipped = stored.clone();
            flipped[i] ^= 0x10;
            assert_eq!(checked(&flipped), None, "byte {i} flipped");
        }
        assert_eq!(checked(&stored[..stored.len() - 1]), None, "truncated");
        assert_eq!(checked(b"short"), None);
    }
}
