//! The engine component inside wasmtime: compiled once, cached precompiled on disk, and
//! instantiated cheaply from an `InstancePre` for each piece of work.

use crate::error::{Error, Result};
use crate::fsio;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Store, StoreLimits, StoreLimitsBuilder};

wasmtime::component::bindgen!({
    world: "engine",
    path: "../wit",
    additional_derives: [serde::Serialize, serde::Deserialize, PartialEq],
});

/// The engine component this host was built with.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/workmem-engine.wasm"));
/// The agent world's component: the engine plus the `llm`, `store` and `clock` imports.
pub const AGENT_COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/workmem-agent.wasm"));
/// The engine's core module, with the WIT in a custom section (what Gravity reads).
pub const CORE_MODULE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/workmem-engine-core.wasm"));

/// How the runtime is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where precompiled components are kept; `None` compiles on every start.
    pub cache_dir: Option<PathBuf>,
    /// The most linear memory one instance may use. Past it, the guest's allocation fails,
    /// which is a trap, reported as [`Error::Trap`].
    pub max_memory_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { cache_dir: default_cache_dir(), max_memory_bytes: 256 << 20 }
    }
}

/// `$WORKMEM_CACHE_DIR`, else `$XDG_CACHE_HOME/workmem`, else `~/.cache/workmem`.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WORKMEM_CACHE_DIR") {
        return Some(dir.into());
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("workmem"))
}

pub struct StoreData {
    limits: StoreLimits,
}

/// A loaded, linked engine component. Cheap to share; make an [`Instance`] per task.
pub struct Runtime {
    engine: wasmtime::Engine,
    pre: EnginePre<StoreData>,
    max_memory_bytes: usize,
    /// Whether the component came from the on-disk cache rather than a fresh compile.
    pub from_cache: bool,
}

impl Runtime {
    /// Loads [`COMPONENT`].
    pub fn new(options: &Options) -> Result<Self> {
        Self::from_bytes(COMPONENT, options)
    }

    pub fn from_bytes(bytes: &[u8], options: &Options) -> Result<Self> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        // `perf` can then name the guest's functions (see README, "Profiling the engine").
        if std::env::var_os("WORKMEM_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = wasmtime::Engine::new(&config).map_err(load_error)?;
        let (component, from_cache) = load(&engine, bytes, options.cache_dir.as_deref())?;
        // The engine world imports nothing, so an empty linker is the whole sandbox.
        let linker = Linker::<StoreData>::new(&engine);
        let pre = EnginePre::new(linker.instantiate_pre(&component).map_err(load_error)?).map_err(load_error)?;
        Ok(Runtime { engine, pre, max_memory_bytes: options.max_memory_bytes, from_cache })
    }

    /// Instantiates the component from the `InstancePre` (microseconds).
    pub fn instance(&self) -> Result<Instance<'_>> {
        Ok(Instance { runtime: self, live: Some(self.instantiate()?) })
    }

    fn instantiate(&self) -> Result<(Store<StoreData>, Engine)> {
        let limits = StoreLimitsBuilder::new().memory_size(self.max_memory_bytes).instances(1).build();
        let mut store = Store::new(&self.engine, StoreData { limits });
        store.limiter(|d| &mut d.limits);
        let bindings = self.pre.instantiate(&mut store).map_err(load_error)?;
        Ok((store, bindings))
    }
}

pub(crate) fn load_error(e: wasmtime::Error) -> Error {
    Error::Load(format!("{e:#}"))
}

/// Compiles `bytes`, or loads the precompiled artifact cached for exactly this component
/// and this wasmtime build and configuration. A cache entry that fails to load is replaced.
pub(crate) fn load(engine: &wasmtime::Engine, bytes: &[u8], cache_dir: Option<&Path>) -> Result<(Component, bool)> {
    let Some(dir) = cache_dir else {
        return Ok((Component::new(engine, bytes).map_err(load_error)?, false));
    };
    let mut h = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    bytes.hash(&mut h);
    let path = dir.join(format!("engine-{:016x}.cwasm", h.finish()));
    if path.exists() {
        // SAFETY: the file is one this function wrote (atomically) for this exact
        // component and engine configuration; wasmtime re-checks version and config.
        if let Ok(c) = unsafe { Component::deserialize_file(engine, &path) } {
            return Ok((c, true));
        }
    }
    let component = Component::new(engine, bytes).map_err(load_error)?;
    // The cache is an optimization: failing to write it must not fail the caller.
    if let Ok(serialized) = component.serialize() {
        let _ = std::fs::create_dir_all(dir).and_then(|_| fsio::write_atomic(&path, &serialized));
    }
    Ok((component, false))
}

/// One live instance of the engine. Every call crosses into the sandbox; a trap is returned
/// as [`Error::Trap`] and the next call starts from a fresh instance.
pub struct Instance<'r> {
    runtime: &'r Runtime,
    live: Option<(Store<StoreData>, Engine)>,
}

impl Instance<'_> {
    fn call<T>(&mut self, f: impl FnOnce(&Engine, &mut Store<StoreData>) -> wasmtime::Result<T>) -> Result<T> {
        if self.live.is_none() {
            self.live = Some(self.runtime.instantiate()?);
        }
        let (store, bindings) = self.live.as_mut().expect("set above");
        match f(bindings, store) {
            Ok(v) => Ok(v),
            Err(e) => {
                self.live = None;
                Err(Error::Trap(format!("{e:#}")))
            }
        }
    }

    pub fn parse(&mut self, text: &str) -> Result<ParseOutcome> {
        self.call(|b, s| b.call_parse(s, text))
    }

    pub fn validate(&mut self, text: &str, state: &MemoryState) -> Result<ParseOutcome> {
        self.call(|b, s| b.call_validate(s, text, state))
    }

    /// Applies `updates` in order; `Err(Error::Rejected)` when one breaks an invariant
    /// (the guest's `err`), in which case none is applied.
    pub fn merge(&mut self, state: &MemoryState, updates: &[Update], now: &str) -> Result<MergeOutcome> {
        self.call(|b, s| b.call_merge(s, state, updates, now))?.map_err(Error::Rejected)
    }

    pub fn apply(&mut self, state: &MemoryState, text: &str, now: &str) -> Result<ApplyOutcome> {
        self.call(|b, s| b.call_apply(s, state, text, now))
    }

    pub fn render(&mut self, state: &MemoryState) -> Result<String> {
        self.call(|b, s| b.call_render(s, state))
    }

    pub fn update_prompt(&mut self, state: &MemoryState, task: &str) -> Result<String> {
        self.call(|b, s| b.call_update_prompt(s, state, task))
    }

    pub fn overview_template(&mut self) -> Result<String> {
        self.call(|b, s| b.call_overview_template(s))
    }

    pub fn empty_state(&mut self) -> Result<MemoryState> {
        self.call(|b, s| b.call_empty_state(s))
    }

    pub fn assemble_context(&mut self, request: &ContextRequest) -> Result<Vec<ChatMessage>> {
        self.call(|b, s| b.call_assemble_context(s, request))
    }

    pub fn context_meta(&mut self, stats: &ContextStats) -> Result<String> {
        self.call(|b, s| b.call_context_meta(s, *stats))
    }

    pub fn overview_maintained(&mut self, overview: &str) -> Result<bool> {
        self.call(|b, s| b.call_overview_maintained(s, overview))
    }
}
