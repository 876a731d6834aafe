//! The workmem engine component in wasmtime: what an embedder depends on, and nothing else.
//!
//! One [`Runtime`] per process: it compiles each world once (or loads it precompiled from the
//! on-disk cache), is cheap to clone and can be shared across threads. An [`Instance`] is one
//! live engine, made in microseconds from an `InstancePre`. Every call into the guest runs
//! under a memory limit and a CPU deadline; a guest that traps or runs past its deadline is
//! reported as an [`Error`], and the next call starts from a fresh instance.
//!
//! A [`Memory`] lives inside its own instance: it is loaded once, and an update carries the
//! DSL in and the outcome out, never the whole memory both ways.
//!
//! ```no_run
//! use workmem_runtime::{Options, Runtime, Wants};
//! let runtime = Runtime::new(&Options::default())?;
//! let mut memory = runtime.new_memory()?;
//! let text = "CURRENT_PROGRESS:\n  In Progress:\n    - Reading the code\n";
//! let applied = memory.apply(text, &workmem_runtime::now(), Wants { overview: true, state: true })?;
//! assert!(applied.is_ok());
//! # Ok::<(), workmem_runtime::Error>(())
//! ```

#[cfg(feature = "agent")]
mod agent;
pub mod board;
mod cache;
#[cfg(feature = "agent")]
mod capabilities;
pub mod document;
mod error;
mod instance;
mod memory;
pub mod names;
mod sandbox;

#[cfg(feature = "agent")]
pub use agent::AgentInstance;
/// Compaction's types (the `history` interface).
pub use bindings::exports::workmem::memory::call::{CompactionMark, DecideRequest, Decision, Reminders, Standing, ToolsCompaction, UpdateSummary};
pub use bindings::exports::workmem::memory::context::{ChatMessage, ContextRequest, ContextStats, Frame, FrameRequest, HistoryMode, ToolCall};
pub use bindings::exports::workmem::memory::history;
pub use bindings::exports::workmem::memory::memory::{
    Applied, Archival, ArchiveOp, Diagnostic, Learning, LearningAdd, LearningOps, Message, ParseOutcome, Progress, Severity, Snapshot, Update, UpdateStep,
    VerbatimAdd, VerbatimEntry, VerbatimOps, Wants,
};
#[cfg(feature = "agent")]
pub use bindings::exports::workmem::memory::workflows::{CompactFailure, InvalidAnswers, UpdateError, UpdateReport};
#[cfg(feature = "agent")]
pub use capabilities::{Capabilities, clock, llm, session_store};
pub use error::{Error, Result, error_chain};
pub use instance::Instance;
pub use memory::{Memory, UpdateRun};
pub use sandbox::cancellable;

use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(feature = "agent")]
use std::sync::OnceLock;
use std::time::Duration;
use wasmtime::Config;
#[cfg(feature = "agent")]
use wasmtime::component::HasSelf;
use wasmtime::component::Linker;

/// The agent world's bindings, the only ones: it includes the engine world, so the engine
/// component's exports are found through the same interfaces (see [`instance::EnginePre`])
/// and each WIT type exists once in Rust, whichever component a value crosses.
mod bindings {
    wasmtime::component::bindgen!({
        world: "agent",
        path: "wit",
        additional_derives: [PartialEq],
    });
}

use instance::EnginePre;

/// The engine component this runtime was built with.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/workmem-engine.wasm"));
/// The agent world's component: the engine plus the `llm`, `store` and `clock` imports.
#[cfg(feature = "agent")]
pub const AGENT_COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/workmem-agent.wasm"));
/// The `engine-go` world's core module, with the WIT in a custom section (what Gravity reads).
#[cfg(feature = "go-core")]
pub const GO_CORE_MODULE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/workmem-engine-go-core.wasm"));

/// How the runtime is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where precompiled components are kept; `None` compiles on every start.
    pub cache_dir: Option<PathBuf>,
    /// The most linear memory one instance may use. Past it, the guest's allocation fails,
    /// which is a trap, reported as [`Error::MemoryLimit`].
    pub max_memory_bytes: usize,
    /// The most CPU time one call may spend inside the guest (time spent in the host's
    /// imports, such as waiting for the model, does not count). Past it the call ends with
    /// [`Error::Deadline`].
    pub call_deadline: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options { cache_dir: default_cache_dir(), max_memory_bytes: 256 << 20, call_deadline: Duration::from_secs(10) }
    }
}

/// Overrides [`Options::max_memory_bytes`] in [`Options::from_env`].
pub const MAX_MEMORY_ENV: &str = "WORKMEM_MAX_MEMORY_BYTES";
/// Overrides [`Options::call_deadline`] in [`Options::from_env`], in seconds.
pub const DEADLINE_ENV: &str = "WORKMEM_CALL_DEADLINE_SECS";

impl Options {
    /// The defaults, with `$WORKMEM_MAX_MEMORY_BYTES` and `$WORKMEM_CALL_DEADLINE_SECS`
    /// where they are set. Errors: a value that is not a number, naming the variable.
    pub fn from_env() -> std::result::Result<Self, String> {
        let mut options = Options::default();
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        if let Some(v) = var(MAX_MEMORY_ENV) {
            options.max_memory_bytes = v.parse().map_err(|_| format!("${MAX_MEMORY_ENV} is {v:?}: it takes a number of bytes"))?;
        }
        if let Some(v) = var(DEADLINE_ENV) {
            options.call_deadline = v
                .parse::<f64>()
                .ok()
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .ok_or_else(|| format!("${DEADLINE_ENV} is {v:?}: it takes a number of seconds"))?;
        }
        Ok(options)
    }
}

/// `$WORKMEM_CACHE_DIR`, else `$XDG_CACHE_HOME/workmem`, else `~/.cache/workmem`.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WORKMEM_CACHE_DIR") {
        return Some(dir.into());
    }
    let base = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("workmem"))
}

/// The current time as RFC 3339 UTC, second precision: what the engine stores as timestamps.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// The loaded engine: one wasmtime engine and configuration for every world, each world
/// compiled on first use. Clone it freely; clones share everything.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    engine: wasmtime::Engine,
    options: Options,
    engine_pre: EnginePre,
    #[cfg(feature = "agent")]
    agent_pre: OnceLock<bindings::AgentPre<sandbox::Ctx>>,
    from_cache: bool,
}

impl Runtime {
    /// Loads [`COMPONENT`].
    pub fn new(options: &Options) -> Result<Self> {
        Self::from_bytes(COMPONENT, options)
    }

    /// Loads an engine-world component from its bytes.
    pub fn from_bytes(bytes: &[u8], options: &Options) -> Result<Self> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        // `perf` can then name the guest's functions (see docs/performance.md, "Profiling the engine").
        if std::env::var_os("WORKMEM_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = wasmtime::Engine::new(&config).map_err(Error::Load)?;
        sandbox::start_ticker(&engine);
        let (component, from_cache) = cache::load(&engine, bytes, options.cache_dir.as_deref())?;
        // The engine world imports nothing, so an empty linker is the whole sandbox.
        let linker = Linker::<sandbox::Ctx>::new(&engine);
        let engine_pre = EnginePre::new(linker.instantiate_pre(&component).map_err(Error::Load)?).map_err(Error::Load)?;
        let inner = Inner {
            engine,
            options: options.clone(),
            engine_pre,
            #[cfg(feature = "agent")]
            agent_pre: OnceLock::new(),
            from_cache,
        };
        Ok(Runtime { inner: Arc::new(inner) })
    }

    /// Whether the engine component came from the on-disk cache rather than a fresh compile.
    pub fn from_cache(&self) -> bool {
        self.inner.from_cache
    }

    pub fn options(&self) -> &Options {
        &self.inner.options
    }

    /// A live engine, instantiated from the `InstancePre` (microseconds). It owns a handle
    /// to the runtime, so it can be kept anywhere, and moved to another thread.
    pub fn instance(&self) -> Result<Instance> {
        Instance::new(self.clone())
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
                let (component, _) = cache::load(&self.inner.engine, AGENT_COMPONENT, self.inner.options.cache_dir.as_deref())?;
                let mut linker = Linker::<sandbox::Ctx>::new(&self.inner.engine);
                bindings::Agent::add_to_linker::<sandbox::Ctx, HasSelf<sandbox::Ctx>>(&mut linker, |c| c).map_err(Error::Load)?;
                let pre = bindings::AgentPre::new(linker.instantiate_pre(&component).map_err(Error::Load)?).map_err(Error::Load)?;
                self.inner.agent_pre.get_or_init(|| pre)
            }
        };
        AgentInstance::new(self, pre, capabilities)
    }

    fn store(&self, capabilities: sandbox::Capabilities) -> wasmtime::Store<sandbox::Ctx> {
        sandbox::store(&self.inner.engine, &self.inner.options, capabilities)
    }
}
