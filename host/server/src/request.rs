//! What a request carries, checked: its body as text or JSON, its path and query (its
//! token: `auth`). Each refusal is an [`ApiError`] that says what was wrong.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode, header};
use workmem_listener::BodyTimeout;

/// The body as read, or why it could not be: one larger than `--max-body-bytes` is 413, one
/// still arriving at `--body-timeout` 408.
fn bytes(body: Result<Bytes, BytesRejection>, max: usize) -> Result<Bytes, ApiError> {
    body.map_err(|e| match e.status() {
        _ if let Some(timeout) = BodyTimeout::behind(&e) => ApiError::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", timeout.to_string()),
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is larger than the server's limit of {max} bytes (--max-body-bytes)"),
        ),
        status => ApiError::new(status, "bad_request", format!("the request body could not be read: {}", e.body_text())),
    })
}

fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
}

/// A text body's bytes as sent (the engine checks they are UTF-8): `text/plain` (or no
/// content type at all), or `application/json` holding one string.
pub fn text(headers: &HeaderMap, body: Result<Bytes, BytesRejection>, max: usize) -> Result<Vec<u8>, ApiError> {
    let body = bytes(body, max)?;
    match media_type(headers).as_deref() {
        None | Some("text/plain") => Ok(body.to_vec()),
        Some("application/json") => match serde_json::from_slice::<serde_json::Value>(&body) {
            Ok(serde_json::Value::String(s)) => Ok(s.into_bytes()),
            Ok(_) => Err(ApiError::bad_request("a JSON body here must be one string: the document's text")),
            Err(e) => Err(ApiError::bad_request(format!("the body is not JSON: {e}"))),
        },
        Some(other) => Err(unsupported(other, "text/plain or application/json (a JSON string)")),
    }
}

/// A JSON body's text (the engine parses it): `application/json` only.
pub fn json(headers: &HeaderMap, body: Result<Bytes, BytesRejection>, max: usize) -> Result<String, ApiError> {
    let body = bytes(body, max)?;
    match media_type(headers).as_deref() {
        Some("application/json") => String::from_utf8(body.to_vec()).map_err(|e| ApiError::bad_request(format!("the body is not UTF-8: {e}"))),
        other => Err(unsupported(other.unwrap_or("no content type"), "application/json")),
    }
}

fn unsupported(got: &str, want: &str) -> ApiError {
    ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", format!("the body is {got}; this route takes {want}"))
}

pub fn path<T>(p: Result<Path<T>, PathRejection>) -> Result<T, ApiError> {
    p.map(|Path(t)| t).map_err(|e| ApiError::bad_request(format!("the path is not valid: {}", e.body_text())))
}

pub fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(t)| t).map_err(|e| ApiError::bad_request(format!("the query is not valid: {}", e.body_text())))
}

/// The request's `Idempotency-Key`, if it sent one: a retry with the same key gets the first
/// outcome of its write (see `workmem_store::db::RequestKey`).
pub fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    match headers.get("idempotency-key") {
        None => Ok(None),
        Some(v) => v.to_str().map(|k| Some(k.to_string())).map_err(|_| ApiError::bad_request("the Idempotency-Key header is not visible ASCII")),
    }
}
