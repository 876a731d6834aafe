//! What every call into the guest runs under: a memory limit and a CPU deadline. The
//! deadline is wall time since the call began less the time spent in the host's imports, so
//! a slow model does not count against the guest. It is checked on wasmtime's epoch ticks.

use crate::error::Error;
use crate::{Options, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// Its engine's ticker, kept ticking while this store runs guest code.
    ticker: Arc<Ticker>,
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

pub(crate) fn store(engine: &Engine, ticker: &Arc<Ticker>, options: &Options, capabilities: Capabilities) -> Store<Ctx> {
    let limits = Limits { max_memory_bytes: options.max_memory_bytes, refused: false, failed: None };
    let ctx = Ctx { limits, deadline: options.call_deadline, started: Instant::now(), in_imports: Duration::ZERO, ticker: ticker.clone(), capabilities };
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
    ticking(store, f).map_err(|e| match e.downcast_ref::<Stopped>() {
        Some(Stopped::Deadline) => Error::Deadline { limit },
        Some(Stopped::Unwanted) => Error::Cancelled,
        None if store.data().limits.refused => Error::MemoryLimit { limit: store.data().limits.max_memory_bytes, source: e },
        None => match store.data_mut().limits.failed.take() {
            Some(why) => Error::OutOfMemory { why, limit: store.data().limits.max_memory_bytes, source: e },
            None => Error::Trap(e),
        },
    })
}

/// Runs guest code in `store` (a call, an instantiation) with its engine's epoch ticking.
pub(crate) fn ticking<T>(store: &mut Store<Ctx>, f: impl FnOnce(&mut Store<Ctx>) -> T) -> T {
    let _ticking = Ticking::new(store.data().ticker.clone());
    f(store)
}

/// Advances an engine's epoch every [`TICK`] while guest code of that engine runs, on a thread
/// of its own that sleeps otherwise: a proxy or a server waiting for its next request does not
/// wake 200 times a second, and a call shorter than a tick meets no epoch check's callback.
pub(crate) struct Ticker {
    /// How many stores run guest code now; shared with the thread, which ends once it is gone.
    running: Arc<AtomicUsize>,
    thread: std::thread::Thread,
}

impl Ticker {
    /// A ticker for `engine`, whose thread ends with the ticker or the engine.
    pub(crate) fn start(engine: &Engine) -> Arc<Ticker> {
        let weak = engine.weak();
        Ticker::advancing(move || weak.upgrade().map(|engine| engine.increment_epoch()).is_some())
    }

    /// A ticker that calls `advance` on each tick until it answers false.
    fn advancing(advance: impl Fn() -> bool + Send + 'static) -> Arc<Ticker> {
        let running = Arc::new(AtomicUsize::new(0));
        let seen = Arc::downgrade(&running);
        let thread = std::thread::Builder::new()
            .name("workmem-epoch".into())
            .spawn(move || {
                while let Some(running) = seen.upgrade() {
                    let idle = running.load(Ordering::Acquire) == 0;
                    drop(running);
                    if idle {
                        // Woken by the next `Ticking` (a wake that came first is not lost:
                        // `park` returns at once), or by the ticker's drop.
                        std::thread::park();
                        continue;
                    }
                    std::thread::sleep(TICK);
                    if !advance() {
                        return;
                    }
                }
            })
            .expect("spawning the epoch thread");
        Arc::new(Ticker { running, thread: thread.thread().clone() })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        // The count let go of first, then the thread woken: it finds the count gone and ends.
        drop(std::mem::replace(&mut self.running, Arc::new(AtomicUsize::new(0))));
        self.thread.unpark();
    }
}

/// Guest code running: the ticker ticks until the last one ends.
struct Ticking(Arc<Ticker>);

impl Ticking {
    fn new(ticker: Arc<Ticker>) -> Self {
        if ticker.running.fetch_add(1, Ordering::AcqRel) == 0 {
            ticker.thread.unpark();
        }
        Ticking(ticker)
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::{Ticker, Ticking};
    use crate::Error;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// The epoch advances while guest code runs, and not between calls (a proxy waiting for its
    /// next request slept through 200 ticks a second before); the thread ends with its ticker.
    #[test]
    fn the_epoch_ticks_only_while_guest_code_runs() {
        let ticks = Arc::new(AtomicUsize::new(0));
        let (alive, ended) = std::sync::mpsc::channel::<()>();
        let counted = ticks.clone();
        let ticker = Ticker::advancing(move || {
            let _ = &alive;
            counted.fetch_add(1, Ordering::Relaxed);
            true
        });
        let ticks_over = |ms| {
            let before = ticks.load(Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(ms));
            ticks.load(Ordering::Relaxed) - before
        };
        assert_eq!(ticks_over(60), 0, "no guest code: no tick");
        let running = Ticking::new(ticker.clone());
        assert!(ticks_over(60) >= 1, "guest code running: ticks");
        drop(running);
        // The tick under way when the call ended may still come.
        std::thread::sleep(super::TICK * 4);
        assert_eq!(ticks_over(60), 0, "the call ended: no tick");
        drop(ticker);
        let end = ended.recv_timeout(Duration::from_secs(10));
        assert_eq!(end, Err(std::sync::mpsc::RecvTimeoutError::Disconnected), "the thread ends with its ticker");
    }

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
        let mut store = super::store(&engine, &super::Ticker::start(&engine), &crate::Options::default(), None);
        let module = wasmtime::Module::new(&engine, MODULE).unwrap();
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
        let grow = instance.get_typed_func::<(), ()>(&mut store, "f").unwrap();
        let err = super::call(&mut store, |s| grow.call(s, ())).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
        assert!(!err.to_string().contains("a bug"), "{err}");
    }
}
