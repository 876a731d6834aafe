//! The database handles the server works with, in a fixed number of slots: each request
//! takes one, runs its blocking store calls on tokio's blocking threads, and gives it back.
//! The slot count bounds both the database connections and the engine instances in use.
//! Handlers reach a slot only through [`Slots::run_as`], which checks the request's grant.

use crate::auth::{Authorized, SessionId, Target};
use crate::error::ApiError;
use axum::http::StatusCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;
use workmem_runtime::Runtime;
use workmem_store::board::{self, Boards};
use workmem_store::db::{Access, Grants};
use workmem_store::documents::{self, Documents};
use workmem_store::{Locked, Session, Sessions};

/// One slot's handles: a connection each for boards, documents and grants.
pub struct Stores {
    pub boards: Boards,
    pub documents: Documents,
    pub grants: Grants,
}

impl Stores {
    fn healthy(&mut self) -> bool {
        self.boards.healthy() && self.documents.healthy() && self.grants.healthy()
    }

    fn open(db: &str, runtime: &Runtime, documents: &documents::Config) -> Result<Self, ApiError> {
        Ok(Stores {
            boards: Boards::open(db, runtime.clone(), board::Config::default())?,
            documents: Documents::open(db, runtime.clone(), documents.clone())?,
            grants: Grants::open(db)?,
        })
    }
}

pub struct Slots {
    db: String,
    runtime: Runtime,
    documents: documents::Config,
    /// Where a session grant's name is opened.
    sessions: Sessions,
    idle: Mutex<Vec<Stores>>,
    permits: Arc<Semaphore>,
}

impl Slots {
    /// Opens one slot now, so a database that cannot be opened fails the start.
    pub fn new(db: &str, runtime: Runtime, documents: documents::Config, sessions: Sessions, count: usize) -> Result<Self, ApiError> {
        let first = Stores::open(db, &runtime, &documents)?;
        Ok(Slots { db: db.into(), runtime, documents, sessions, idle: Mutex::new(vec![first]), permits: Arc::new(Semaphore::new(count.max(1))) })
    }

    /// Runs `f` with a slot's stores on a blocking thread once `who`'s token holds a grant
    /// for its target with `access`; `f` gets the target and what the grant gives.
    pub async fn run_as<T: Target, R: Send + 'static>(
        self: &Arc<Self>,
        who: Authorized<T>,
        access: Access,
        f: impl FnOnce(&mut Stores, T, T::Grant) -> Result<R, ApiError> + Send + 'static,
    ) -> Result<R, ApiError> {
        let slots = self.clone();
        self.run(move |stores| {
            let grant = who.target.authorize(&mut stores.grants, &slots.sessions, who.token(), access)?;
            f(stores, who.target, grant)
        })
        .await
    }

    /// Runs `f` as a session's writer, holding its lock. The grant is checked in a slot; the
    /// lock is then waited for outside the slots (at most
    /// [`SESSION_LOCK_WAIT`](crate::auth::SESSION_LOCK_WAIT), then 503 `busy`), and `f` runs
    /// in a slot with it held: writers queued behind one slow writer hold no slot, so other
    /// targets are served meanwhile. The grant is checked again once the lock is held: a token
    /// revoked (or expired) while its write waited writes nothing. `f` gets the token's agent.
    pub async fn run_locked<R: Send + 'static>(
        self: &Arc<Self>,
        who: Authorized<SessionId>,
        f: impl FnOnce(String, &Session, &Locked) -> Result<R, ApiError> + Send + 'static,
    ) -> Result<R, ApiError> {
        let again = who.clone();
        let (agent, session) = self.run_as(who, Access::Write, |_, _, grant| Ok(grant)).await?;
        let (session, locked) = tokio::task::spawn_blocking(move || session.lock().map(|locked| (session, locked))).await.map_err(worker_failed)??;
        let slots = self.clone();
        self.run(move |stores| {
            again.target.authorize(&mut stores.grants, &slots.sessions, again.token(), Access::Write)?;
            f(agent, &session, &locked)
        })
        .await
    }

    /// Runs `f` with a slot's stores on a blocking thread. A slot whose call failed inside
    /// the server is dropped when its engine failed or a connection no longer answers, and a
    /// new one opened when next needed.
    async fn run<T: Send + 'static>(self: &Arc<Self>, f: impl FnOnce(&mut Stores) -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting_down", "the server is shutting down"))?;
        let slots = self.clone();
        // Set when this future is dropped, as it is when the client goes away: the work's
        // engine calls then stop (an abandoned page render kept its slot for seconds).
        let unwanted = Arc::new(AtomicBool::new(false));
        let _dropped = SetOnDrop(unwanted.clone());
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            if unwanted.load(Ordering::Relaxed) {
                return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "gone", "the client went away"));
            }
            let idle = slots.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let mut stores = match idle {
                Some(s) => s,
                None => Stores::open(&slots.db, &slots.runtime, &slots.documents)?,
            };
            let result = workmem_runtime::cancellable(&unwanted, || f(&mut stores));
            // A request's failure is not its handles': a statement that failed on a healthy
            // connection keeps it (each discarded slot reopened three connections); an engine
            // that failed, or a connection that no longer answers, is not reused.
            let reusable = match &result {
                Err(e) if e.is_internal() => e.code != "engine" && stores.healthy(),
                _ => true,
            };
            if reusable {
                slots.idle.lock().unwrap_or_else(|p| p.into_inner()).push(stores);
            }
            result
        })
        .await
        .map_err(worker_failed)?
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }
}

fn worker_failed(e: tokio::task::JoinError) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("the request's worker failed: {e}"))
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
