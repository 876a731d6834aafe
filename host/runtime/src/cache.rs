//! Precompiled components on disk, keyed by the component's bytes and wasmtime's
//! compatibility hash, so another component or wasmtime build never loads a stale one.

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
    let Some(dir) = dir else {
        return Ok((Component::new(engine, bytes).map_err(Error::Load)?, false));
    };
    let mut h = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    bytes.hash(&mut h);
    let path = dir.join(format!("engine-{:016x}.cwasm", h.finish()));
    if path.exists() {
        // SAFETY: the file is one this function wrote (atomically) for this exact component
        // and engine configuration; wasmtime re-checks version and configuration.
        #[allow(unsafe_code)]
        if let Ok(c) = unsafe { Component::deserialize_file(engine, &path) } {
            return Ok((c, true));
        }
    }
    let component = Component::new(engine, bytes).map_err(Error::Load)?;
    // The cache is an optimization: failing to write it must not fail the caller.
    if let Ok(serialized) = component.serialize() {
        let _ = std::fs::create_dir_all(dir).and_then(|()| write_atomic(&path, &serialized));
    }
    Ok((component, false))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}
