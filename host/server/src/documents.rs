//! Spec 004's context documents: PutContext (a new version per put, `?expect=N` to refuse a
//! lost update), GetLatestContext, older versions, one section read or replaced, and
//! search by words over a vault's latest documents. Routes need a token for the vault.

use crate::app::{App, State};
use crate::auth::{self, Authorized, Vault};
use crate::error::ApiError;
use crate::request;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use workmem_store::db::{Access, RequestKey};
use workmem_store::documents::Version;

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/vaults/{vault}/memories/{memory}/context", get(latest).put(put))
        .route("/v1/vaults/{vault}/memories/{memory}/context/sections/{section}", get(section).put(set_section))
        .route("/v1/vaults/{vault}/memories/{memory}/versions", get(versions))
        .route("/v1/vaults/{vault}/memories/{memory}/versions/{version}", get(version))
        .route("/v1/vaults/{vault}/search", get(search))
}

#[derive(Deserialize)]
struct Expect {
    /// Store only if the latest version is still this one (0: none yet).
    expect: Option<u64>,
}

#[derive(Deserialize)]
struct SearchQuery {
    q: String,
    limit: Option<u64>,
}

/// Search results per request, at most.
const MAX_HITS: u64 = 100;

/// `{memory}` in a document's path (its vault is the [`auth::Vault`] target).
#[derive(Deserialize)]
struct MemoryId {
    memory: String,
}

/// `{memory}/.../{section}` in a section's path.
#[derive(Deserialize)]
struct SectionPath {
    memory: String,
    section: String,
}

/// `{memory}/versions/{version}` in a version's path.
#[derive(Deserialize)]
struct VersionPath {
    memory: String,
    version: String,
}

type Memory = Result<Path<MemoryId>, PathRejection>;

async fn put(
    axum::extract::State(app): State,
    who: Authorized<auth::Vault>,
    p: Memory,
    q: Result<Query<Expect>, QueryRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let memory = request::path(p)?.memory;
    let expect = request::query(q)?.expect;
    let text = request::text(&headers, body, app.max_body_bytes)?;
    let key = request::idempotency_key(&headers)?;
    let stored = app
        .slots
        .run_as(who, Access::Write, move |s, Vault { vault }, agent| {
            Ok(match key {
                Some(key) => {
                    let expected = expect.map(|e| e.to_string()).unwrap_or_default();
                    let request = RequestKey::new(&key, &["put", &agent, &expected, &String::from_utf8_lossy(&text)])?;
                    s.documents.put_once(&vault, &memory, &agent, &text, expect, &request)?
                }
                None => s.documents.put(&vault, &memory, &agent, &text, expect)?,
            })
        })
        .await?;
    Ok(created(stored))
}

/// A put's answer: the version stored, without the text the caller just sent.
fn created(stored: Version) -> Response {
    (StatusCode::CREATED, Json(Version { context: String::new(), ..stored })).into_response()
}

async fn latest(axum::extract::State(app): State, who: Authorized<auth::Vault>, p: Memory) -> Result<Response, ApiError> {
    let memory = request::path(p)?.memory;
    let found = app.slots.run_as(who, Access::Read, move |s, Vault { vault }, _| Ok(s.documents.latest(&vault, &memory)?)).await?;
    Ok(Json(found).into_response())
}

async fn versions(axum::extract::State(app): State, who: Authorized<auth::Vault>, p: Memory) -> Result<Response, ApiError> {
    let memory = request::path(p)?.memory;
    let listed = app.slots.run_as(who, Access::Read, move |s, Vault { vault }, _| Ok(s.documents.versions(&vault, &memory)?)).await?;
    Ok(Json(listed).into_response())
}

async fn version(axum::extract::State(app): State, who: Authorized<auth::Vault>, p: Result<Path<VersionPath>, PathRejection>) -> Result<Response, ApiError> {
    let VersionPath { memory, version: n } = request::path(p)?;
    let n: u64 = n.parse().map_err(|_| ApiError::bad_request(format!("{n:?} is not a version number")))?;
    let found = app.slots.run_as(who, Access::Read, move |s, Vault { vault }, _| Ok(s.documents.get(&vault, &memory, n)?)).await?;
    Ok(Json(found).into_response())
}

async fn section(axum::extract::State(app): State, who: Authorized<auth::Vault>, p: Result<Path<SectionPath>, PathRejection>) -> Result<Response, ApiError> {
    let SectionPath { memory, section: name } = request::path(p)?;
    let runtime = app.slots.runtime().clone();
    let body = app
        .slots
        .run_as(who, Access::Read, move |s, Vault { vault }, _| {
            let latest = s.documents.latest(&vault, &memory)?;
            match runtime.instance()?.document_section(&latest.context, &name)? {
                Some(body) => Ok(json!({"version": latest.version, "section": name, "body": body})),
                None => Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    "no_section",
                    format!("version {} of memory {memory} in vault {vault} has no section {name:?}", latest.version),
                )),
            }
        })
        .await?;
    Ok(Json(body).into_response())
}

async fn set_section(
    axum::extract::State(app): State,
    who: Authorized<auth::Vault>,
    p: Result<Path<SectionPath>, PathRejection>,
    q: Result<Query<Expect>, QueryRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let SectionPath { memory, section: name } = request::path(p)?;
    let expect = request::query(q)?.expect;
    let body = String::from_utf8(request::text(&headers, body, app.max_body_bytes)?).map_err(|_| ApiError::bad_request("the section's body is not UTF-8"))?;
    let runtime = app.slots.runtime().clone();
    let key = request::idempotency_key(&headers)?;
    let stored = app
        .slots
        .run_as(who, Access::Write, move |s, Vault { vault }, agent| {
            let latest = s.documents.latest(&vault, &memory)?;
            let text = runtime.instance()?.replace_document_section(&latest.context, &name, &body)?;
            // Based on the version read (or the one the caller names): a put in between is a conflict.
            let based_on = Some(expect.unwrap_or(latest.version));
            Ok(match key {
                // What the request asked, not the text it made: a retry reads a newer latest.
                Some(key) => {
                    let expected = expect.map(|e| e.to_string()).unwrap_or_default();
                    let request = RequestKey::new(&key, &["section", &agent, &expected, &name, &body])?;
                    s.documents.put_once(&vault, &memory, &agent, text.as_bytes(), based_on, &request)?
                }
                None => s.documents.put(&vault, &memory, &agent, text.as_bytes(), based_on)?,
            })
        })
        .await?;
    Ok(created(stored))
}

async fn search(axum::extract::State(app): State, who: Authorized<auth::Vault>, q: Result<Query<SearchQuery>, QueryRejection>) -> Result<Response, ApiError> {
    let SearchQuery { q, limit } = request::query(q)?;
    let limit = limit.unwrap_or(10);
    if limit > MAX_HITS {
        return Err(ApiError::bad_request(format!("limit is {limit}; at most {MAX_HITS} hits are returned per search")));
    }
    let hits = app.slots.run_as(who, Access::Read, move |s, Vault { vault }, _| Ok(s.documents.search(&vault, &q, limit)?)).await?;
    Ok(Json(hits).into_response())
}
