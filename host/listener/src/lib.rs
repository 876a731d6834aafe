//! Serving an axum router over TCP with every wait bounded (`workmem serve`, `workmem proxy`).
//! `axum::serve` has no timeouts and no connection cap: an idle connection, one that dribbles
//! its head or its body, each held a socket forever, a few hundred of them took the process's
//! file handles, and one half-sent request kept a server alive after SIGTERM. Here each of
//! those waits has a bound ([`Limits`]).

use axum::Router;
use axum::body::Body;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};
use tokio::time::{Instant, Sleep};

/// How long a connection may make the server wait, and how many it may hold.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The longest a connection goes without sending a whole request head. It runs from the
    /// connection's start and again after each answer, so an idle keep-alive connection is
    /// closed after it too (`--header-timeout`).
    pub header_timeout: Duration,
    /// The longest from a request's head to its body's last byte; past it the body fails
    /// with [`BodyTimeout`] (`--body-timeout`).
    pub body_timeout: Duration,
    /// Connections open at once (`--max-connections`); past it, a new one makes those with no
    /// request in flight close, and waits up to [`Limits::header_timeout`] and half a second
    /// more for room (by then each holder that never sent a whole head is closed). Never more
    /// than half the process's file descriptor limit ([`within_descriptors`]).
    pub max_connections: usize,
    /// After Ctrl-C or SIGTERM, the longest the connections in flight get to finish, streams
    /// included (`--shutdown-timeout`).
    pub shutdown_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            max_connections: 512,
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// Each time within 1 ms and a day: a deadline centuries away overflows the clock it is
    /// added to (hyper's and ours panicked), and zero would close every connection at once.
    fn clamped(self) -> Limits {
        let clamp = |d: Duration| d.clamp(Duration::from_millis(1), Duration::from_secs(86_400));
        Limits {
            header_timeout: clamp(self.header_timeout),
            body_timeout: clamp(self.body_timeout),
            shutdown_timeout: clamp(self.shutdown_timeout),
            max_connections: within_descriptors(self.max_connections, descriptor_limit()),
        }
    }
}

/// The process's soft limit on open file descriptors, if it has one.
fn descriptor_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// `max` connections, but at most half of `limit` descriptors: the other half is for what the
/// requests open (session files, the database, upstream connections). A cap above the limit
/// let idle sockets take every descriptor: `accept` then failed, and a normal request waited
/// for a stranger's idle connection to time out.
pub fn within_descriptors(max: usize, limit: Option<u64>) -> usize {
    let half = limit.map_or(usize::MAX, |l| usize::try_from(l / 2).unwrap_or(usize::MAX));
    max.min(half).max(1)
}

/// A request body did not all arrive within [`Limits::body_timeout`] of its head.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not all arrive within {} s of its head (--body-timeout)", .0.as_secs_f64())]
pub struct BodyTimeout(pub Duration);

impl BodyTimeout {
    /// The timeout behind `error`, if reading a body failed because of one: the error comes
    /// back wrapped by whatever read the body (axum's rejections, a length limit).
    pub fn behind<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a BodyTimeout> {
        let mut next = Some(error);
        while let Some(e) = next {
            if let Some(timeout) = e.downcast_ref::<BodyTimeout>() {
                return Some(timeout);
            }
            next = e.source();
        }
        None
    }
}

/// Serves `router` on `listener` within `limits` until Ctrl-C or SIGTERM, then gives the
/// connections in flight at most [`Limits::shutdown_timeout`] to finish.
pub async fn serve(listener: TcpListener, router: Router, limits: Limits) {
    serve_until(listener, router, limits, signalled()).await
}

/// [`serve`] until `stop` completes instead of a signal.
pub async fn serve_until(listener: TcpListener, router: Router, limits: Limits, stop: impl Future<Output = ()>) {
    let limits = limits.clamped();
    let max = limits.max_connections.max(1);
    let permits = Arc::new(Semaphore::new(max));
    let open = Arc::new(Open::default());
    let (stopping, _) = tokio::sync::watch::channel(false);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    tokio::pin!(stop);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                // Out of file handles (EMFILE) or the like: wait for one to close rather than
                // spin; a connection that failed on its own just goes.
                Err(e) => {
                    if !is_connection_error(&e) {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            // At the cap with a client waiting: the connections waiting for a request (idle
            // keep-alive ones, and ones that never sent a whole head) make way for it, rather
            // than keep it out until their header timeout; one still full after that is let go.
            Err(_) => {
                // A holder whose head never came is closed at its header timeout, counted from
                // its accept, which may be as late as this one's: waiting MIN_IDLE past it means
                // room made by such a close is not missed by a hair on a busy machine.
                let room = tokio::select! {
                    room = make_room(&open, &permits, limits.header_timeout + MIN_IDLE) => room,
                    () = &mut stop => break,
                };
                match room {
                    Some(permit) => permit,
                    None => continue,
                }
            }
        };
        // A stream's events go out as they come: no small write waits for an acknowledgement.
        let _ = tcp.set_nodelay(true);
        let router = router.clone();
        let body_timeout = limits.body_timeout;
        let (id, conn) = open.add();
        let watched = conn.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let request = request.map(|body| Body::new(Deadline::new(body, body_timeout)));
            let busy = Busy::enter(&conn);
            let answer = tower_service::Service::call(&mut router.clone(), request);
            async move { answer.await.map(|response| response.map(|body| Body::new(Guarded { body, _busy: busy }))) }
        });
        let connection = http.serve_connection(TokioIo::new(Watched { tcp, conn: watched.clone() }), service);
        let (open, mut stopping) = (open.clone(), stopping.subscribe());
        tokio::spawn(async move {
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                // Shed, or the server stops: the request in flight, if any, is finished first.
                () = watched.shed.notified() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
                () = stopped(&mut stopping) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            open.remove(id);
            drop(permit);
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    // Every connection gives its permit back as it ends.
    let _ = tokio::time::timeout(limits.shutdown_timeout, permits.acquire_many(u32::try_from(max).unwrap_or(u32::MAX))).await;
}

/// Once the server is stopping.
async fn stopped(stopping: &mut tokio::sync::watch::Receiver<bool>) {
    while !*stopping.borrow_and_update() {
        if stopping.changed().await.is_err() {
            return std::future::pending().await;
        }
    }
}

/// How long a connection has waited for a request, counted from when the server first read
/// from it, before it may be asked to close at the cap: one just accepted, whose head is on its
/// way, is not taken for an idle one.
const MIN_IDLE: Duration = Duration::from_millis(500);

/// Asks the connections idle for [`MIN_IDLE`] to close, again each [`MIN_IDLE`], until a
/// permit is free or `wait` has passed.
async fn make_room(open: &Open, permits: &Arc<Semaphore>, wait: Duration) -> Option<tokio::sync::OwnedSemaphorePermit> {
    let deadline = Instant::now() + wait;
    loop {
        open.shed_idle();
        let tick = deadline.saturating_duration_since(Instant::now()).min(MIN_IDLE);
        match tokio::time::timeout(tick, permits.clone().acquire_owned()).await {
            Ok(permit) => return permit.ok(),
            Err(_) if Instant::now() >= deadline => return None,
            Err(_) => {}
        }
    }
}

/// The connections open now, each with its requests in flight, so that the idle ones can be
/// asked to close.
#[derive(Default)]
struct Open {
    next: std::sync::atomic::AtomicU64,
    all: std::sync::Mutex<std::collections::HashMap<u64, Arc<Conn>>>,
}

/// One connection: its requests in flight, since when it has had none, and its signal to close.
struct Conn {
    active: AtomicUsize,
    /// Milliseconds since [`EPOCH`].
    idle_since: std::sync::atomic::AtomicU64,
    /// Whether the server has read from it yet. Until then its head may be in the socket,
    /// unread: on a loaded machine a connection was accepted, not read for half a second,
    /// taken for an idle one and closed without an answer (issue 47's slow-clients case, seen
    /// again under load).
    polled: AtomicBool,
    shed: Notify,
}

/// A connection's socket, which marks its [`Conn`] read once the server first reads from it.
struct Watched {
    tcp: tokio::net::TcpStream,
    conn: Arc<Conn>,
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut tokio::io::ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        if !self.conn.polled.swap(true, Ordering::AcqRel) {
            self.conn.idle_since.store(now_ms(), Ordering::Release);
        }
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[std::io::IoSlice<'_>]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

/// What [`Conn::idle_since`] counts from.
static EPOCH: std::sync::LazyLock<std::time::Instant> = std::sync::LazyLock::new(std::time::Instant::now);

fn now_ms() -> u64 {
    u64::try_from(EPOCH.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Open {
    /// A new connection, and its ID.
    fn add(&self) -> (u64, Arc<Conn>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn { active: AtomicUsize::new(0), idle_since: now_ms().into(), polled: AtomicBool::new(false), shed: Notify::new() });
        self.all.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id, conn.clone());
        (id, conn)
    }

    fn remove(&self, id: u64) {
        self.all.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&id);
    }

    /// Asks every connection the server has read from and that has had no request in flight
    /// for [`MIN_IDLE`] to close.
    fn shed_idle(&self) {
        let before = now_ms().saturating_sub(u64::try_from(MIN_IDLE.as_millis()).unwrap_or(0));
        for conn in self.all.lock().unwrap_or_else(std::sync::PoisonError::into_inner).values() {
            if conn.polled.load(Ordering::Acquire) && conn.active.load(Ordering::Acquire) == 0 && conn.idle_since.load(Ordering::Acquire) <= before {
                conn.shed.notify_one();
            }
        }
    }
}

/// A request in flight on its connection, from its head to its answer's last byte.
struct Busy(Arc<Conn>);

impl Busy {
    fn enter(conn: &Arc<Conn>) -> Self {
        conn.active.fetch_add(1, Ordering::AcqRel);
        Busy(conn.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.idle_since.store(now_ms(), Ordering::Release);
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body that keeps its request [`Busy`] until it is sent or dropped.
struct Guarded {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        http_body::Body::is_end_stream(&self.body)
    }

    fn size_hint(&self) -> SizeHint {
        http_body::Body::size_hint(&self.body)
    }
}

fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset)
}

/// Ctrl-C or SIGTERM.
async fn signalled() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! { _ = interrupt => {}, _ = term.recv() => {} }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

/// A request body that fails with [`BodyTimeout`] once its deadline passes.
struct Deadline {
    body: Incoming,
    deadline: Instant,
    limit: Duration,
    /// Made on the first wait only: a body that is already whole needs no timer.
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Deadline {
    fn new(body: Incoming, limit: Duration) -> Self {
        Deadline { body, deadline: Instant::now() + limit, limit, sleep: None }
    }
}

impl http_body::Body for Deadline {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let deadline = this.deadline;
        let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimeout(this.limit))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        http_body::Body::is_end_stream(&self.body)
    }

    fn size_hint(&self) -> SizeHint {
        http_body::Body::size_hint(&self.body)
    }
}

#[cfg(test)]
mod tests {
    /// The connection cap stays at half the descriptor limit, whatever `--max-connections`
    /// asks (512 against a limit of 256 left no descriptor for anything else).
    #[test]
    fn connections_stay_within_the_descriptor_limit() {
        assert_eq!(super::within_descriptors(512, Some(256)), 128);
        assert_eq!(super::within_descriptors(512, Some(65_536)), 512);
        assert_eq!(super::within_descriptors(512, None), 512);
        assert_eq!(super::within_descriptors(512, Some(1)), 1);
    }
}
