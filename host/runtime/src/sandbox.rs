//! What every call into the guest runs under: a memory limit and a CPU deadline. The
//! deadline is wall time since the call began less the time spent in the host's imports, so
//! a slow model does not count against the guest. It is checked on wasmtime's epoch ticks.

use crate::error::Error;
use crate::{Options, Result};
use std::time::{Duration, Instant};
use wasmtime::{Engine, ResourceLimiter, Store, UpdateDeadline};

/// How often the epoch advances, so how late past its deadline a runaway guest is stopped.
const TICK: Duration = Duration::from_millis(5);

/// Why the epoch callback stopped a call, recognizable in the trap it raises: its CPU
/// deadline passed, or its result is no longer wanted (see [`cancellable`]).
#[derive(Debug)]
enum Stopped {
    Deadline,
    Unwanted,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stopped::Deadline => "CPU deadline exceeded",
            Stopped::Unwanted => "the call's result is no longer wanted",
        })
    }
}

impl std::error::Error for Stopped {}

thread_local! {
    /// Set while this thread runs [`cancellable`]'s work: the flag that ends its engine calls.
    static UNWANTED: std::cell::RefCell<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` on this thread so that every engine call it makes stops, failing with
/// [`Error::Cancelled`], once `unwanted` is set (checked on the epoch's ticks, as the deadline
/// is): a server whose client went away need not finish a page nobody will read.
pub fn cancellable<T>(unwanted: &std::sync::Arc<std::sync::atomic::AtomicBool>, f: impl FnOnce() -> T) -> T {
    let before = UNWANTED.with(|u| u.replace(Some(unwanted.clone())));
    let out = f();
    UNWANTED.with(|u| *u.borrow_mut() = before);
    out
}

fn is_unwanted() -> bool {
    UNWANTED.with(|u| u.borrow().as_ref().is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed)))
}

/// The memory limit, remembering when it refused to grow, or growing failed anyway: the
/// guest then aborts (a trap), and that trap is reported as what it was, not as a bug.
struct Limits {
    max_memory_bytes: usize,
    refused: bool,
    failed: Option<String>,
}

impl ResourceLimiter for Limits {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let ok = desired <= self.max_memory_bytes;
        self.refused |= !ok;
        Ok(ok)
    }

    /// Growth past the memory's type (a 32-bit memory's 4 GiB) or that the host could not
    /// back: under a limit of gigabytes, this is what an allocation too large meets.
    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.failed = Some(error.to_string());
        Ok(())
    }

    fn table_growing(&mut self, _current: usize, _desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(true)
    }
}

/// The host's capabilities in an agent-world store; `None` in the engine world's.
#[cfg(feature = "agent")]
pub(crate) type Capabilities = Option<Box<dyn crate::capabilities::Capabilities>>;
/// Only the agent world has capabilities (the `agent` feature).
#[cfg(not(feature = "agent"))]
pub(crate) type Capabilities = Option<std::convert::Infallible>;

/// A store's data: its limits, its clock, and (in the agent world) the host's capabilities.
pub(crate) struct Ctx {
    limits: Limits,
    deadline: Duration,
    started: Instant,
    in_imports: Duration,
    // Always `None` without the agent world.
    #[cfg_attr(not(feature = "agent"), allow(dead_code))]
    pub(crate) capabilities: Capabilities,
}

#[cfg(feature = "agent")]
impl Ctx {
    /// Runs an import, keeping its time off the guest's account.
    pub(crate) fn import<T>(&mut self, f: impl FnOnce(&mut dyn crate::capabilities::Capabilities) -> T) -> T {
        let start = Instant::now();
        let caps = self.capabilities.as_deref_mut().expect("only the agent world has imports, and it has capabilities");
        let out = f(caps);
        self.in_imports += start.elapsed();
        out
    }
}

pub(crate) fn store(engine: &Engine, options: &Options, capabilities: Capabilities) -> Store<Ctx> {
    let limits = Limits { max_memory_bytes: options.max_memory_bytes, refused: false, failed: None };
    let ctx = Ctx { limits, deadline: options.call_deadline, started: Instant::now(), in_imports: Duration::ZERO, capabilities };
    let mut store = Store::new(engine, ctx);
    store.limiter(|c| &mut c.limits);
    store.epoch_deadline_callback(|cx| {
        let c = cx.data();
        if c.started.elapsed().saturating_sub(c.in_imports) > c.deadline {
            return Err(Stopped::Deadline.into());
        }
        if is_unwanted() {
            return Err(Stopped::Unwanted.into());
        }
        Ok(UpdateDeadline::Continue(1))
    });
    store
}

/// Runs one call into the guest with a fresh CPU budget, and names what went wrong.
pub(crate) fn call<T>(store: &mut Store<Ctx>, f: impl FnOnce(&mut Store<Ctx>) -> wasmtime::Result<T>) -> Result<T> {
    let data = store.data_mut();
    data.started = Instant::now();
    data.in_imports = Duration::ZERO;
    data.limits.refused = false;
    data.limits.failed = None;
    let limit = data.deadline;
    store.set_epoch_deadline(1);
    f(store).map_err(|e| match e.downcast_ref::<Stopped>() {
        Some(Stopped::Deadline) => Error::Deadline { limit },
        Some(Stopped::Unwanted) => Error::Cancelled,
        None if store.data().limits.refused => Error::MemoryLimit { limit: store.data().limits.max_memory_bytes, source: e },
        None => match store.data_mut().limits.failed.take() {
            Some(why) => Error::OutOfMemory { why, limit: store.data().limits.max_memory_bytes, source: e },
            None => Error::Trap(e),
        },
    })
}

/// Advances the engine's epoch every [`TICK`] for as long as the engine lives.
pub(crate) fn start_ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("workmem-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(TICK);
            }
        })
        .expect("spawning the epoch thread");
}

#[cfg(test)]
mod tests {
    use crate::Error;

    /// A memory that cannot grow though the limit allows it (past its type's maximum, as a
    /// 32-bit memory is at 4 GiB under a limit of gigabytes) is reported as that, not as a bug
    /// in workmem. The guest's allocator meets -1 and aborts, as this module does: a memory of
    /// one page, at most two, grown by five.
    #[test]
    fn a_memory_that_cannot_grow_is_not_a_bug() {
        #[rustfmt::skip]
        const MODULE: &[u8] = &[
            0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
            0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type 0: [] -> []
            0x03, 0x02, 0x01, 0x00, // func 0: type 0
            0x05, 0x04, 0x01, 0x01, 0x01, 0x02, // memory: min 1, max 2 pages
            0x07, 0x05, 0x01, 0x01, b'f', 0x00, 0x00, // export "f" = func 0
            // i32.const 5, memory.grow, i32.const -1, i32.eq, if unreachable end
            0x0a, 0x0f, 0x01, 0x0d, 0x00, 0x41, 0x05, 0x40, 0x00, 0x41, 0x7f, 0x46, 0x04, 0x40, 0x00, 0x0b, 0x0b,
        ];
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        let engine = wasmtime::Engine::new(&config).unwrap();
        let mut store = super::store(&engine, &crate::Options::default(), None);
        let module = wasmtime::Module::new(&engine, MODULE).unwrap();
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
        let grow = instance.get_typed_func::<(), ()>(&mut store, "f").unwrap();
        let err = super::call(&mut store, |s| grow.call(s, ())).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
        assert!(!err.to_string().contains("a bug"), "{err}");
    }
}
