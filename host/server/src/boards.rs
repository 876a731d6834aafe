//! Spec 002's boards: the head, ops in the log's JSON (`?expect=REVISION` to refuse a stale
//! write), views by name, a task's brief, and the change feed (waiting up to a bound for
//! the next event). Routes need a token for the board; ops are the token's agent's.

use crate::app::{App, State};
use crate::auth::{self, Authorized};
use crate::error::ApiError;
use crate::request;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use workmem_runtime::board::View;
use workmem_store::board::Event;
use workmem_store::db::{Access, RequestKey};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/boards/{board}", get(head))
        .route("/v1/boards/{board}/ops", post(apply))
        .route("/v1/boards/{board}/views/{view}", get(view))
        .route("/v1/boards/{board}/tasks/{task}/brief", get(brief))
        .route("/v1/boards/{board}/events", get(events))
        .route("/v1/boards/{board}/page", get(page))
}

/// The longest a change-feed request waits for an event (`wait_ms`); it holds no slot
/// while it waits (see `changes`).
const MAX_WAIT: Duration = Duration::from_secs(10);
/// Events per change-feed response, at most.
const MAX_EVENTS: u64 = 1000;

#[derive(Deserialize)]
struct Expect {
    expect: Option<u64>,
}

#[derive(Deserialize)]
struct ViewQuery {
    task: Option<String>,
    before: Option<String>,
}

#[derive(Deserialize)]
struct Feed {
    after: Option<u64>,
    limit: Option<u64>,
    wait_ms: Option<u64>,
}

/// `{view}` in a view's path.
#[derive(Deserialize)]
struct ViewName {
    view: String,
}

/// `{task}` in a brief's path.
#[derive(Deserialize)]
struct TaskId {
    task: String,
}

/// An event as the API returns it: the engine's record as JSON, not as text.
fn event(e: Event) -> Value {
    let record: Value = serde_json::from_str(&e.event).unwrap_or(Value::String(e.event));
    json!({"revision": e.revision, "actor": e.actor, "at": e.at, "event": record})
}

async fn head(axum::extract::State(app): State, who: Authorized<auth::Board>) -> Result<Response, ApiError> {
    let head = app.slots.run_as(who, Access::Read, |s, t, _| Ok(s.boards.head(&t.board)?)).await?;
    Ok(Json(head).into_response())
}

async fn apply(
    axum::extract::State(app): State,
    who: Authorized<auth::Board>,
    q: Result<Query<Expect>, QueryRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let expect = request::query(q)?.expect;
    let op = request::json(&headers, body, app.max_body_bytes)?;
    let key = request::idempotency_key(&headers)?;
    let applied = app
        .slots
        .run_as(who, Access::Write, move |s, t, agent| {
            let board = t.board;
            let e = match key {
                Some(key) => {
                    let expected = expect.map(|e| e.to_string()).unwrap_or_default();
                    let request = RequestKey::new(&key, &["board op", &agent, &expected, &op])?;
                    s.boards.apply_json_once(&board, expect, &agent, &op, &request)?
                }
                None => s.boards.apply_json(&board, expect, &agent, &op)?,
            };
            Ok(json!({"board": board, "revision": e.revision, "event": event(e)["event"]}))
        })
        .await?;
    Ok(Json(applied).into_response())
}

/// The view `name` names, its argument from the query (`?before=` for stale claims,
/// `?task=` for a task's context).
fn named_view(name: &str, q: ViewQuery) -> Result<View, ApiError> {
    let mut v = View::named(name, Some(String::new())).map_err(|e| ApiError::new(StatusCode::NOT_FOUND, "no_view", e.to_string()))?;
    let needs = |what: &str, v: Option<String>| v.ok_or_else(|| ApiError::bad_request(format!("the {name} view needs ?{what}=")));
    match &mut v {
        View::Stale(before) => *before = needs("before", q.before)?,
        View::ContextForTask(task) => *task = needs("task", q.task)?,
        _ => {}
    }
    Ok(v)
}

async fn view(
    axum::extract::State(app): State,
    who: Authorized<auth::Board>,
    p: Result<Path<ViewName>, PathRejection>,
    q: Result<Query<ViewQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let v = named_view(&request::path(p)?.view, request::query(q)?)?;
    let rendered = app.slots.run_as(who, Access::Read, move |s, t, _| Ok(s.boards.view(&t.board, &v)?)).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], rendered).into_response())
}

async fn brief(axum::extract::State(app): State, who: Authorized<auth::Board>, p: Result<Path<TaskId>, PathRejection>) -> Result<Response, ApiError> {
    let task = request::path(p)?.task;
    let text = app.slots.run_as(who, Access::Read, move |s, t, _| Ok(s.boards.brief(&t.board, &task)?)).await?;
    Ok(([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], text).into_response())
}

async fn events(axum::extract::State(app): State, who: Authorized<auth::Board>, q: Result<Query<Feed>, QueryRejection>) -> Result<Response, ApiError> {
    let Feed { after, limit, wait_ms } = request::query(q)?;
    let (after, limit, wait) = (after.unwrap_or(0), limit.unwrap_or(100), Duration::from_millis(wait_ms.unwrap_or(0)));
    if limit == 0 || limit > MAX_EVENTS {
        return Err(ApiError::bad_request(format!("limit is {limit}; it must be 1 to {MAX_EVENTS}")));
    }
    if wait > MAX_WAIT {
        return Err(ApiError::bad_request(format!("wait_ms is {}; a request waits at most {} ms", wait.as_millis(), MAX_WAIT.as_millis())));
    }
    let deadline = tokio::time::Instant::now() + wait;
    let mut changes = app.changes.subscribe(&who.target.board);
    loop {
        // Marked seen before the read, so a change during it wakes the wait below at once.
        changes.borrow_and_update();
        let events = app
            .slots
            .run_as(who.clone(), Access::Read, move |s, t, _| Ok(s.boards.events(&t.board, after, limit)?.into_iter().map(event).collect::<Vec<_>>()))
            .await?;
        if !events.is_empty() || tokio::time::Instant::now() >= deadline {
            return Ok(Json(events).into_response());
        }
        // Without its watcher (it cannot stop while the server runs) the wait runs out.
        if let Ok(Err(_)) = tokio::time::timeout_at(deadline, changes.changed()).await {
            tokio::time::sleep_until(deadline).await;
        }
    }
}

async fn page(axum::extract::State(app): State, who: Authorized<auth::Board>) -> Result<Response, ApiError> {
    let title = format!("board {}", who.target.board);
    let sections = app.slots.run_as(who, Access::Read, |s, t, _| Ok(workmem_page::board(&mut s.boards, &t.board)?)).await?;
    Ok(crate::view::page(&title, &sections))
}
