//! The loaded engine, what an embedder starts from.

use crate::error::{Error, Result};
use crate::instance::{EnginePre, Instance, Loaded};
use crate::memory::Memory;
use crate::options::Options;
#[cfg(feature = "agent")]
use crate::{agent::AgentInstance, bindings, capabilities::Capabilities};
use crate::{board, engine_config, sandbox};
use std::sync::Arc;
#[cfg(feature = "agent")]
use std::sync::OnceLock;
#[cfg(feature = "agent")]
use wasmtime::component::HasSelf;
use wasmtime::component::{Component, Linker};

/// The loaded engine: one wasmtime engine and configuration for every world, each world
/// loaded on first use. Clone it freely; clones share everything.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    loaded: Arc<Loaded>,
    #[cfg(feature = "agent")]
    agent_pre: OnceLock<bindings::AgentPre<sandbox::Ctx>>,
    #[cfg(feature = "compiler")]
    from_cache: bool,
}

impl Runtime {
    /// Loads [`COMPONENT`](crate::COMPONENT), compiled when this crate was built.
    pub fn new(options: &Options) -> Result<Self> {
        let engine = engine()?;
        let component = crate::ENGINE_ARTIFACT.load(&engine)?;
        Ok(Runtime { inner: Arc::new(Self::link(engine, component, options)?) })
    }

    /// Loads an engine-world component from its bytes: compiled, or loaded from the compile
    /// cache ([`Options::cache_dir`]).
    #[cfg(feature = "compiler")]
    pub fn from_bytes(bytes: &[u8], options: &Options) -> Result<Self> {
        let engine = engine()?;
        let (component, from_cache) = crate::cache::load(&engine, bytes, options.cache_dir.as_deref())?;
        let inner = Inner { from_cache, ..Self::link(engine, component, options)? };
        Ok(Runtime { inner: Arc::new(inner) })
    }

    fn link(engine: wasmtime::Engine, component: Component, options: &Options) -> Result<Inner> {
        let ticker = sandbox::Ticker::start(&engine);
        // The engine world imports nothing, so an empty linker is the whole sandbox.
        let linker = Linker::<sandbox::Ctx>::new(&engine);
        let engine_pre = EnginePre::new(linker.instantiate_pre(&component).map_err(Error::Load)?).map_err(Error::Load)?;
        Ok(Inner {
            loaded: Arc::new(Loaded { engine, ticker, options: options.clone(), engine_pre }),
            #[cfg(feature = "agent")]
            agent_pre: OnceLock::new(),
            #[cfg(feature = "compiler")]
            from_cache: false,
        })
    }

    /// Whether [`Runtime::from_bytes`] found its component compiled in the cache.
    #[cfg(feature = "compiler")]
    pub fn from_cache(&self) -> bool {
        self.inner.from_cache
    }

    pub fn options(&self) -> &Options {
        &self.inner.loaded.options
    }

    /// A live engine, instantiated from the `InstancePre` (microseconds). It owns a handle
    /// to the runtime, so it can be kept anywhere, and moved to another thread.
    pub fn instance(&self) -> Result<Instance> {
        Instance::new(self.inner.loaded.clone())
    }

    /// The memory of a new session, in an instance of its own.
    pub fn new_memory(&self) -> Result<Memory> {
        Memory::new(self.instance()?)
    }

    /// A new, active task board (spec 002), in an instance of its own. The inner `Err` names
    /// an empty required field.
    pub fn create_board(
        &self,
        id: &str,
        name: &str,
        goal: &str,
        constraints: &[String],
        memory_core_refs: &[String],
        now: &str,
    ) -> Result<std::result::Result<board::Board, board::BoardError>> {
        board::Board::create(self.instance()?, id, name, goal, constraints, memory_core_refs, now)
    }

    /// A board from its serialized form (`Board::save`), in an instance of its own.
    /// The engine's sentence for a board error (when no board is at hand to ask).
    pub fn describe_board_error(&self, error: &board::BoardError) -> Result<String> {
        self.instance()?.call(|b, s| b.workmem_memory_board().call_describe(s, error))
    }

    /// The rule `error` broke, as `board-error` names its case (`waiting`, `cycle`, ...): what
    /// JS and Python read from the variant's tag, and Go from the error's text.
    pub fn board_error_rule(&self, error: &board::BoardError) -> Result<String> {
        self.instance()?.call(|b, s| b.workmem_memory_board().call_rule(s, error))
    }

    pub fn load_board(&self, state: &str) -> Result<std::result::Result<board::Board, String>> {
        board::Board::load(self.instance()?, state)
    }

    /// A memory from its serialized form (`state.json`), in an instance of its own. The inner
    /// `Err` says why the text is not a serialized memory.
    pub fn load_memory(&self, state: &str) -> Result<std::result::Result<Memory, String>> {
        Memory::load(self.instance()?, state)
    }

    /// The agent world, with `capabilities` as its only way out (see [`Capabilities`]).
    #[cfg(feature = "agent")]
    pub fn agent(&self, capabilities: Box<dyn Capabilities>) -> Result<AgentInstance> {
        let pre = match self.inner.agent_pre.get() {
            Some(pre) => pre,
            None => {
                let loaded = &self.inner.loaded;
                let component = crate::AGENT_ARTIFACT.load(&loaded.engine)?;
                let mut linker = Linker::<sandbox::Ctx>::new(&loaded.engine);
                bindings::Agent::add_to_linker::<sandbox::Ctx, HasSelf<sandbox::Ctx>>(&mut linker, |c| c).map_err(Error::Load)?;
                let pre = bindings::AgentPre::new(linker.instantiate_pre(&component).map_err(Error::Load)?).map_err(Error::Load)?;
                self.inner.agent_pre.get_or_init(|| pre)
            }
        };
        AgentInstance::new(&self.inner.loaded, pre, capabilities)
    }
}

/// An engine with this crate's settings, ticking for the CPU deadline.
fn engine() -> Result<wasmtime::Engine> {
    let mut config = wasmtime::Config::new();
    engine_config::configure(&mut config);
    // `perf` can then name the guest's functions (see docs/performance.md, "Profiling the engine").
    if std::env::var_os("WORKMEM_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    wasmtime::Engine::new(&config).map_err(Error::Load)
}
