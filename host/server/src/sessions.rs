//! A session's working memory (specs 000 and 001): read it (the overview an LLM is shown,
//! and the engine's state), apply a DSL update to it (refused with line:column diagnostics,
//! nothing written), and read its update log. Routes need a token for the session, named
//! by ID (never by path).

use crate::error::ApiError;
use crate::request;
use crate::{App, State};
use axum::Router;
use axum::body::Bytes;
use axum::extract::Path;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::sync::Arc;
use workmem_agent::json as report;
use workmem_store::Session;
use workmem_store::db::{self, Access, Scope};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/sessions/{session}/memory", get(memory))
        .route("/v1/sessions/{session}/updates", post(update))
        .route("/v1/sessions/{session}/log", get(log))
        .route("/v1/sessions/{session}/page", get(page))
}

/// The session `token` was granted by ID `id`: the one directory the grant names, whatever
/// directory the server runs in, and only while it is the session granted (not one made
/// since with its ID). Anything else is forbidden, naming no path.
fn open(app: &App, grants: &mut workmem_store::db::Grants, token: &str, id: &str, access: Access) -> Result<Session, ApiError> {
    Ok(open_as(app, grants, token, id, access)?.1)
}

/// [`open`], with the token's agent.
fn open_as(app: &App, grants: &mut workmem_store::db::Grants, token: &str, id: &str, access: Access) -> Result<(String, Session), ApiError> {
    let (agent, name) = grants.authorize_session(token, id, access)?;
    let session = name.open(&app.sessions).map_err(|_| ApiError::from(db::Error::Forbidden(Scope::Session(id).to_string())))?;
    Ok((agent, session))
}

type Id = Result<Path<String>, PathRejection>;

async fn memory(axum::extract::State(app): State, p: Id, headers: HeaderMap) -> Result<Response, ApiError> {
    let token = request::bearer(&headers)?;
    let id = request::path(p)?;
    let runtime = app.slots.runtime().clone();
    let app2 = app.clone();
    let body = app
        .slots
        .run(move |s| {
            let session = open(&app2, &mut s.grants, &token, &id, Access::Read)?;
            let locked = session.lock()?;
            let state = workmem_agent::apply::load(&runtime, &session, &locked)?.save()?;
            let state: Value = serde_json::from_str(&state)
                .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "engine", format!("the engine's state is not JSON: {e}")))?;
            Ok(json!({"session": id, "overview": session.overview()?, "memory": state}))
        })
        .await?;
    Ok(Json(body).into_response())
}

async fn update(axum::extract::State(app): State, p: Id, headers: HeaderMap, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let token = request::bearer(&headers)?;
    let id = request::path(p)?;
    let text = String::from_utf8(request::text(&headers, body, app.max_body_bytes)?).map_err(|_| ApiError::bad_request("the update is not UTF-8"))?;
    let key = request::idempotency_key(&headers)?;
    let runtime = app.slots.runtime().clone();
    let app2 = app.clone();
    let applied = app
        .slots
        .run(move |s| {
            let (agent, session) = open_as(&app2, &mut s.grants, &token, &id, Access::Write)?;
            let outcome = match key {
                Some(key) => {
                    let request = db::RequestKey::new(&key, &["update", &agent, &text])?;
                    workmem_agent::apply::apply_once(&runtime, &session, &text, &request)
                }
                None => workmem_agent::apply::apply(&runtime, &session, &text).map(workmem_agent::apply::Once::Applied),
            };
            match outcome {
                Ok(workmem_agent::apply::Once::Applied(applied)) => Ok(report::applied(&applied)),
                // The update this key made: the answer it had (its warnings are not kept).
                Ok(workmem_agent::apply::Once::Before(record)) => Ok(json!({
                    "ok": true, "seq": record["seq"], "added": record["added"], "archived": record["archived"],
                    "ignored": record["ignored"], "diff": record["diff"], "diagnostics": [],
                })),
                Err(workmem_agent::Error::InvalidDsl(ds)) => {
                    let diagnostics = report::rejected(&ds)["diagnostics"].take();
                    let message = workmem_agent::Error::InvalidDsl(ds).to_string();
                    Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_dsl", message).with("diagnostics", diagnostics))
                }
                Err(e) => Err(e.into()),
            }
        })
        .await?;
    Ok(Json(applied).into_response())
}

async fn log(axum::extract::State(app): State, p: Id, headers: HeaderMap) -> Result<Response, ApiError> {
    let token = request::bearer(&headers)?;
    let id = request::path(p)?;
    let app2 = app.clone();
    let entries = app.slots.run(move |s| Ok(open(&app2, &mut s.grants, &token, &id, Access::Read)?.log()?)).await?;
    Ok(Json(entries).into_response())
}

async fn page(axum::extract::State(app): State, p: Id, headers: HeaderMap) -> Result<Response, ApiError> {
    let token = request::bearer(&headers)?;
    let id = request::path(p)?;
    let runtime = app.slots.runtime().clone();
    let app2 = app.clone();
    let title = format!("session {id}");
    let sections = app.slots.run(move |s| Ok(workmem_page::session(&runtime, &open(&app2, &mut s.grants, &token, &id, Access::Read)?)?)).await?;
    Ok(crate::view::page(&title, &sections))
}
