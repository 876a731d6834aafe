//! A session's working memory (specs 000 and 001): read it (the overview an LLM is shown,
//! and the engine's state), apply a DSL update to it (refused with line:column diagnostics,
//! nothing written), and read its update log. Routes need a token for the session, named
//! by ID (never by path: [`SessionId`]).

use crate::app::{App, State};
use crate::auth::{Authorized, SessionId};
use crate::error::ApiError;
use crate::request;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::sync::Arc;
use workmem_commit::json as report;
use workmem_store::db::{self, Access};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/sessions/{session}/memory", get(memory))
        .route("/v1/sessions/{session}/updates", post(update))
        .route("/v1/sessions/{session}/log", get(log))
        .route("/v1/sessions/{session}/page", get(page))
}

async fn memory(axum::extract::State(app): State, who: Authorized<SessionId>) -> Result<Response, ApiError> {
    let runtime = app.slots.runtime().clone();
    let body = app
        .slots
        .run_as(who, Access::Read, move |_, SessionId { session: id }, (_, session)| {
            let (mut memory, overview) = workmem_commit::committed(&runtime, &session)?;
            let state: Value = serde_json::from_str(&memory.save()?)
                .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "engine", format!("the engine's state is not JSON: {e}")))?;
            Ok(json!({"session": id, "overview": overview, "memory": state}))
        })
        .await?;
    Ok(Json(body).into_response())
}

async fn update(
    axum::extract::State(app): State,
    who: Authorized<SessionId>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let text = String::from_utf8(request::text(&headers, body, app.max_body_bytes)?).map_err(|_| ApiError::bad_request("the update is not UTF-8"))?;
    let key = request::idempotency_key(&headers)?;
    let runtime = app.slots.runtime().clone();
    let applied = app
        .slots
        .run_locked(who, move |agent, session, locked| {
            let outcome = match key {
                Some(key) => {
                    let request = db::RequestKey::new(&key, &["update", &agent, &text])?;
                    workmem_commit::apply_once(&runtime, session, locked, &text, &request)
                }
                None => workmem_commit::apply_locked(&runtime, session, locked, &text).map(workmem_commit::Once::Applied),
            };
            match outcome {
                Ok(workmem_commit::Once::Applied(applied)) => Ok(report::applied(&applied)),
                // The update this key made: the answer it had (its warnings are not kept).
                Ok(workmem_commit::Once::Before(record)) => Ok(json!({
                    "ok": true, "seq": record["seq"], "added": record["added"], "archived": record["archived"],
                    "ignored": record["ignored"], "diff": record["diff"], "diagnostics": [],
                })),
                Err(workmem_commit::Error::InvalidDsl(ds)) => {
                    let diagnostics = report::rejected(&ds)["diagnostics"].take();
                    let message = workmem_commit::Error::InvalidDsl(ds).to_string();
                    Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_dsl", message).with("diagnostics", diagnostics))
                }
                Err(e) => Err(e.into()),
            }
        })
        .await?;
    Ok(Json(applied).into_response())
}

async fn log(axum::extract::State(app): State, who: Authorized<SessionId>) -> Result<Response, ApiError> {
    let entries = app.slots.run_as(who, Access::Read, |_, _, (_, session)| Ok(session.log()?)).await?;
    Ok(Json(entries).into_response())
}

async fn page(axum::extract::State(app): State, who: Authorized<SessionId>) -> Result<Response, ApiError> {
    let runtime = app.slots.runtime().clone();
    let title = format!("session {}", who.target.session);
    let sections = app.slots.run_as(who, Access::Read, move |_, _, (_, session)| Ok(workmem_page::session(&runtime, &session)?)).await?;
    Ok(crate::view::page(&title, &sections))
}
