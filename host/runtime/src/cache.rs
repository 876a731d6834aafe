//! What `Runtime::from_bytes` compiled, on disk, keyed by the component's bytes and wasmtime's
//! compatibility hash, so another component or wasmtime build never loads a stale one. An
//! artifact is run as native code, so one another user could have placed is never loaded: the
//! directory and the artifact must be this user's, writable by no one else, and not symlinks
//! (the rule the Python and Go packages keep too).

use crate::error::{Error, Result};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::Path;
use wasmtime::component::Component;

/// Compiles `bytes`, or loads the artifact cached for exactly this component and engine
/// configuration. A cache entry that fails to load is replaced. The bool says whether it
/// came from the cache.
pub(crate) fn load(engine: &wasmtime::Engine, bytes: &[u8], dir: Option<&Path>) -> Result<(Component, bool)> {
    let compile = || Component::new(engine, bytes).map_err(Error::Load);
    let Some(dir) = dir else {
        return Ok((compile()?, false));
    };
    let mut h = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    bytes.hash(&mut h);
    let path = dir.join(format!("engine-{:016x}.cwasm", h.finish()));
    if !trusted(dir, Kind::Dir) {
        return Ok((compile()?, false));
    }
    if trusted(&path, Kind::File) {
        // SAFETY: the file is this user's and no one else's to write, in a directory no one else
        // may write, named for this exact component and engine configuration; wasmtime checks
        // its version and configuration again.
        #[allow(unsafe_code)]
        if let Ok(c) = unsafe { Component::deserialize_file(engine, &path) } {
            return Ok((c, true));
        }
    }
    let component = compile()?;
    // The cache is an optimization: failing to write it must not fail the caller.
    if let Ok(serialized) = component.serialize() {
        let _ = create_private(dir).and_then(|()| write_atomic(&path, &serialized));
    }
    Ok((component, false))
}

#[derive(PartialEq)]
enum Kind {
    Dir,
    File,
}

/// Whether `path` is this user's, writable by no one else, and of its kind (not a symlink). A
/// directory not there yet is trusted: it is made private. Where an owner cannot be read (not
/// Unix), nothing is, and each process compiles.
#[cfg(unix)]
fn trusted(path: &Path, kind: Kind) -> bool {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) => {
            let kind_ok = if kind == Kind::Dir { m.is_dir() } else { m.is_file() };
            kind_ok && m.uid() == rustix::process::geteuid().as_raw() && m.mode() & 0o022 == 0
        }
        Err(e) => kind == Kind::Dir && e.kind() == std::io::ErrorKind::NotFound,
    }
}

#[cfg(not(unix))]
fn trusted(_: &Path, _: Kind) -> bool {
    false
}

fn create_private(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::{Kind, create_private, trusted};
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_what_no_one_else_may_write_is_trusted() {
        let dir = std::env::temp_dir().join(format!("workmem-cache-trust-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(trusted(&dir, Kind::Dir), "a directory not there yet is made private");
        create_private(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        let set = |path: &std::path::Path, mode| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        set(&dir, 0o755);
        assert!(trusted(&dir, Kind::Dir));
        set(&dir, 0o777);
        assert!(!trusted(&dir, Kind::Dir), "a directory others may write");
        set(&dir, 0o700);
        let artifact = dir.join("engine.cwasm");
        assert!(!trusted(&artifact, Kind::File), "no artifact");
        std::fs::write(&artifact, b"x").unwrap();
        set(&artifact, 0o644);
        assert!(trusted(&artifact, Kind::File));
        assert!(!trusted(&artifact, Kind::Dir), "a file where a directory should be");
        set(&artifact, 0o664);
        assert!(!trusted(&artifact, Kind::File), "an artifact the group may write");
        let link = dir.join("link.cwasm");
        set(&artifact, 0o644);
        std::os::unix::fs::symlink(&artifact, &link).unwrap();
        assert!(!trusted(&link, Kind::File), "a symlink, even to a trusted artifact");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
