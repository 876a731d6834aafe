//! One live engine (the `engine` world). Every call crosses into the sandbox.

use crate::bindings::exports::workmem::memory::{board as b, call as k, context as cx, document as d, history as hx, memory as m};
use crate::sandbox::{self, Ctx};
use crate::*;
use std::sync::Arc;
use wasmtime::Store;
use wasmtime::component::{InstancePre, ResourceAny};

/// The engine world's exports, looked up once in the engine component. The agent world's
/// bindings name them (it includes the engine world), so a value has one Rust type whether
/// it crosses into the engine component or the agent's.
pub(crate) struct EnginePre {
    pre: InstancePre<Ctx>,
    memory: m::GuestIndices,
    context: cx::GuestIndices,
    history: hx::GuestIndices,
    board: b::GuestIndices,
    document: d::GuestIndices,
    call: k::GuestIndices,
}

impl EnginePre {
    pub(crate) fn new(pre: InstancePre<Ctx>) -> wasmtime::Result<Self> {
        Ok(EnginePre {
            memory: m::GuestIndices::new(&pre)?,
            context: cx::GuestIndices::new(&pre)?,
            history: hx::GuestIndices::new(&pre)?,
            board: b::GuestIndices::new(&pre)?,
            document: d::GuestIndices::new(&pre)?,
            call: k::GuestIndices::new(&pre)?,
            pre,
        })
    }

    fn instantiate(&self, store: &mut Store<Ctx>) -> wasmtime::Result<Engine> {
        let instance = self.pre.instantiate(&mut *store)?;
        Ok(Engine {
            memory: self.memory.load(&mut *store, &instance)?,
            context: self.context.load(&mut *store, &instance)?,
            history: self.history.load(&mut *store, &instance)?,
            board: self.board.load(&mut *store, &instance)?,
            document: self.document.load(&mut *store, &instance)?,
            call: self.call.load(&mut *store, &instance)?,
        })
    }
}

/// An instantiated engine component's exports, named as `bindgen!` names a world's.
pub(crate) struct Engine {
    memory: m::Guest,
    context: cx::Guest,
    history: hx::Guest,
    board: b::Guest,
    document: d::Guest,
    call: k::Guest,
}

impl Engine {
    pub(crate) fn workmem_memory_memory(&self) -> &m::Guest {
        &self.memory
    }
    pub(crate) fn workmem_memory_context(&self) -> &cx::Guest {
        &self.context
    }
    pub(crate) fn workmem_memory_history(&self) -> &hx::Guest {
        &self.history
    }
    pub(crate) fn workmem_memory_board(&self) -> &b::Guest {
        &self.board
    }
    pub(crate) fn workmem_memory_document(&self) -> &d::Guest {
        &self.document
    }
    pub(crate) fn workmem_memory_call(&self) -> &k::Guest {
        &self.call
    }
}

/// A live instance of the engine. A call that traps or runs past its deadline returns an
/// [`Error`], and the next call starts from a fresh instance.
pub struct Instance {
    loaded: Arc<Loaded>,
    live: Option<(Store<Ctx>, Engine)>,
}

/// What every instance of the engine world is made from, shared by a runtime and its
/// instances: the wasmtime engine, the limits of each call, the component pre-instantiated.
pub(crate) struct Loaded {
    pub engine: wasmtime::Engine,
    pub ticker: Arc<sandbox::Ticker>,
    pub options: Options,
    pub engine_pre: EnginePre,
}

impl Loaded {
    /// A store for one instance, under the limits, with `capabilities` its only way out.
    pub fn store(&self, capabilities: sandbox::Capabilities) -> Store<Ctx> {
        sandbox::store(&self.engine, &self.ticker, &self.options, capabilities)
    }
}

impl Instance {
    pub(crate) fn new(loaded: Arc<Loaded>) -> Result<Self> {
        let live = Some(instantiate(&loaded)?);
        Ok(Instance { loaded, live })
    }

    pub(crate) fn call<T>(&mut self, f: impl FnOnce(&Engine, &mut Store<Ctx>) -> wasmtime::Result<T>) -> Result<T> {
        if self.live.is_none() {
            self.live = Some(instantiate(&self.loaded)?);
        }
        let (store, bindings) = self.live.as_mut().expect("set above");
        let result = sandbox::call(store, |s| f(bindings, s));
        if result.is_err() {
            self.live = None;
        }
        result
    }

    pub fn parse(&mut self, text: &str) -> Result<ParseOutcome> {
        self.call(|b, s| b.workmem_memory_memory().call_parse(s, text))
    }

    pub fn overview_template(&mut self) -> Result<String> {
        self.call(|b, s| b.workmem_memory_memory().call_overview_template(s))
    }

    pub fn assemble_context(&mut self, request: &ContextRequest) -> Result<Vec<ChatMessage>> {
        self.call(|b, s| b.workmem_memory_context().call_assemble(s, request))
    }

    /// `context.assemble-frame`: what goes before the history, and where it starts, without
    /// the history crossing into the sandbox.
    pub fn assemble_frame(&mut self, request: &FrameRequest) -> Result<Frame> {
        self.call(|b, s| b.workmem_memory_context().call_assemble_frame(s, request))
    }

    pub fn context_meta(&mut self, stats: &ContextStats) -> Result<String> {
        self.call(|b, s| b.workmem_memory_context().call_context_meta(s, stats))
    }

    /// `history.compact`: the outer `Result` is the sandbox's, the inner the engine's answer.
    pub fn compact(&mut self, view: &[history::Entry], request: &history::CompactRequest) -> Result<std::result::Result<history::Plan, history::CompactError>> {
        self.call(|b, s| b.workmem_memory_history().call_compact(s, view, request))
    }

    pub fn fallback(&mut self, view: &[history::Entry], request: &history::FallbackRequest) -> Result<Option<history::Compaction>> {
        self.call(|b, s| b.workmem_memory_history().call_fallback(s, view, request))
    }

    pub fn apply_replacements(&mut self, view: &[history::Entry], replacements: &[history::Replacement]) -> Result<Vec<history::Entry>> {
        self.call(|b, s| b.workmem_memory_history().call_apply_replacements(s, view, replacements))
    }

    /// `call.decide`: what to do before sending a request.
    pub fn decide(&mut self, request: &k::DecideRequest) -> Result<k::Decision> {
        self.call(|b, s| b.workmem_memory_call().call_decide(s, request))
    }

    /// `call.remind`: what `context_meta` says of where a session stands.
    pub fn remind(&mut self, standing: &k::Standing) -> Result<k::Reminders> {
        self.call(|b, s| b.workmem_memory_call().call_remind(s, standing))
    }

    /// `call.update-answer`: `update_memory`'s answer for an applied update, or for one
    /// refused with `errors`.
    pub fn update_answer(&mut self, applied: Option<&k::UpdateSummary>, errors: &[Diagnostic]) -> Result<String> {
        self.call(|b, s| b.workmem_memory_call().call_update_answer(s, applied, errors))
    }

    pub fn overview_maintained(&mut self, overview: &str) -> Result<bool> {
        self.call(|b, s| b.workmem_memory_context().call_overview_maintained(s, overview))
    }
}

fn instantiate(loaded: &Loaded) -> Result<(Store<Ctx>, Engine)> {
    let mut store = loaded.store(None);
    let bindings = sandbox::ticking(&mut store, |s| loaded.engine_pre.instantiate(s)).map_err(Error::Load)?;
    Ok((store, bindings))
}

/// A resource (a memory, a board) kept in an instance of its own. If a call traps, the
/// instance and the resource in it are gone: later calls return [`Error::Lost`], and the
/// caller loads it again from its store (which the failed call did not touch).
pub(crate) struct Resident {
    instance: Instance,
    handle: Option<ResourceAny>,
}

impl Resident {
    pub(crate) fn new(instance: Instance, handle: ResourceAny) -> Self {
        Resident { instance, handle: Some(handle) }
    }

    /// Makes the resource with `make` in `instance`; the inner `Err` is the guest's refusal.
    pub(crate) fn make<E>(
        mut instance: Instance,
        make: impl FnOnce(&Engine, &mut Store<Ctx>) -> wasmtime::Result<std::result::Result<ResourceAny, E>>,
    ) -> Result<std::result::Result<Self, E>> {
        let made = instance.call(make)?;
        Ok(made.map(|handle| Resident::new(instance, handle)))
    }

    pub(crate) fn call<T>(&mut self, f: impl FnOnce(&Engine, &mut Store<Ctx>, ResourceAny) -> wasmtime::Result<T>) -> Result<T> {
        let handle = self.handle.ok_or(Error::Lost)?;
        let result = self.instance.call(|b, s| f(b, s, handle));
        if result.is_err() {
            self.handle = None;
        }
        result
    }
}
