//! The components this crate carries, compiled by its build script for the target it is built
//! for: a process loads them ready to run, with no compiler in it and nothing written to disk.

use crate::error::{Error, Result};
use wasmtime::component::Component;

/// A component compiled ahead of time (`build.rs`), carried in LZ4's block format with its
/// size before it. The engine world's artifact is 2.3 MB as compiled and 1.2 MB so; DEFLATE
/// made it 0.83 MB, but took 7 ms to inflate it at every start, where LZ4 takes 1.6 ms.
pub(crate) struct Precompiled {
    packed: &'static [u8],
}

impl Precompiled {
    pub(crate) const fn new(packed: &'static [u8]) -> Self {
        Precompiled { packed }
    }

    /// The component, ready to instantiate in `engine` (made with [`crate::engine_config`]).
    pub(crate) fn load(&self, engine: &wasmtime::Engine) -> Result<Component> {
        // The block was written by this crate's build script, so it always unpacks; the
        // unpacked bytes are dropped once wasmtime has copied them into executable memory.
        let artifact = lz4_flex::block::decompress_size_prepended(self.packed).expect("an artifact the build script packed unpacks");
        // SAFETY: the bytes are part of this binary, as trusted as its code: the build script
        // compiled them from the components built beside it, with this crate's wasmtime and
        // engine settings. wasmtime checks its version and those settings again, and that the
        // CPU has what the code needs (x86-64-v2 on x86-64, see `build.rs`), and errs otherwise.
        #[allow(unsafe_code)]
        unsafe { Component::deserialize(engine, &artifact) }.map_err(Error::Load)
    }
}
