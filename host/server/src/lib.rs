//! `workmem serve`: context documents (spec 004), boards (spec 002) and session memory
//! (specs 000 and 001) over HTTP. Every route under `/v1` takes a bearer token granted for
//! the vault, board or session it names (`workmem doc grant`, `workmem board grant`,
//! `workmem session grant`) and acts as the token's agent (checked once, in [`auth`]); the OpenAPI document is at
//! [`OPENAPI_PATH`]. The store calls block, so they run on tokio's blocking threads in a
//! bounded number of slots ([`slots::Slots`]).

mod app;
mod auth;
mod boards;
mod changes;
mod documents;
mod error;
mod request;
mod sessions;
mod slots;
mod view;

pub use app::Config;
pub use error::ApiError;

use app::App;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use std::sync::Arc;
use workmem_runtime::Runtime;

/// The OpenAPI 3.1 document of this API, served as is.
pub const OPENAPI: &str = include_str!("../openapi.json");
/// Where the server serves [`OPENAPI`].
pub const OPENAPI_PATH: &str = "/openapi.json";

/// The API's routes over the database and sessions `config` names: opens the database
/// (migrating it) before it returns, so a bad `--db` fails here.
pub fn router(runtime: Runtime, config: &Config) -> Result<Router, ApiError> {
    let app = Arc::new(App::new(runtime, config)?);
    Ok(Router::new()
        .route(OPENAPI_PATH, axum::routing::get(openapi))
        .merge(documents::routes())
        .merge(boards::routes())
        .merge(sessions::routes())
        .merge(view::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // The limit is checked again where a body is read, so its error names the setting.
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(axum::middleware::from_fn(visible_path))
        .layer(axum::middleware::map_response(newline_after_json))
        .with_state(app))
}

/// A path whose IDs hold a control or invisible character (`%00`) is refused before any
/// route reads it: no store is asked about such an ID (PostgreSQL refused a NUL with an
/// error that cost the request's database connections).
async fn visible_path(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let path = percent_decoded(request.uri().path().as_bytes());
    if String::from_utf8_lossy(&path).chars().any(workmem_store::ids::is_hidden) {
        return error::ApiError::bad_request("the path holds a control or invisible character, which no ID may hold").into_response();
    }
    next.run(request).await
}

fn percent_decoded(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push(u8::try_from(high * 16 + low).expect("two hex digits make a byte"));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Every JSON answer ends with a newline, as a shell (`curl`) and a line reader expect.
async fn newline_after_json(response: axum::response::Response) -> axum::response::Response {
    use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
    let json = response.headers().get(CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // The API's JSON answers are written whole, never streamed: collecting one costs nothing.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let mut bytes = bytes.to_vec();
    if !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
        parts.headers.remove(CONTENT_LENGTH);
    }
    axum::response::Response::from_parts(parts, axum::body::Body::from(bytes))
}

async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI)
}

async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", format!("no route {}: see {OPENAPI_PATH}", uri.path()))
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", format!("{} does not take {method}: see {OPENAPI_PATH}", uri.path()))
}
