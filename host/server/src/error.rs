//! Every failure as the API answers it: an HTTP status and `{"error": {"code", "message"}}`,
//! the code stable for scripts to match on and the message a sentence for people. Some
//! carry more (`current_version`, `current_revision`, `diagnostics`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use workmem_store::db;

const RETRY_AFTER: &str = "retry_after";

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Fields beside `code` and `message` in the error object.
    pub extra: Map<String, Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into(), extra: Map::new() }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// A failure of the server, not of the request: logged, under an ID the answer names. A
    /// busy session is not one.
    pub fn is_internal(&self) -> bool {
        self.status == StatusCode::INTERNAL_SERVER_ERROR
    }

    /// Tells the client when to try again, in seconds: `retry_after` in the error and the
    /// `retry-after` header.
    pub fn retry_after(self, seconds: u32) -> Self {
        self.with(RETRY_AFTER, seconds)
    }
}

impl From<db::Error> for ApiError {
    fn from(e: db::Error) -> Self {
        use db::Error as E;
        let status = match &e {
            E::NoBoard(_) | E::NoGrant(_) | E::NoDocument { .. } | E::NoVersion { .. } => StatusCode::NOT_FOUND,
            E::Exists(_) | E::Conflict { .. } | E::VersionConflict { .. } => StatusCode::CONFLICT,
            E::Refused { .. } | E::InvalidDocument { .. } | E::InvalidId(_) | E::KeyReused(_) | E::KeyPastRetention { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            E::BadKey(_) => StatusCode::BAD_REQUEST,
            E::Forbidden(_) | E::OwnerOnly(_) | E::Expired { .. } | E::ReadOnly(_) => StatusCode::FORBIDDEN,
            E::Open { .. } | E::Db(_) | E::Schema(_) | E::NewerSchema { .. } | E::Log { .. } | E::Engine(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let error = ApiError::new(status, e.code(), workmem_runtime::error_chain(&e));
        match e {
            E::Conflict { current, .. } => error.with("current_revision", current),
            E::VersionConflict { current, .. } => error.with("current_version", current),
            E::Refused { rule, .. } | E::InvalidDocument { rule, .. } => error.with("rule", rule),
            _ => error,
        }
    }
}

impl From<workmem_store::Error> for ApiError {
    fn from(e: workmem_store::Error) -> Self {
        use workmem_store::Error as E;
        let (status, code) = match &e {
            E::NotASession { .. } => (StatusCode::NOT_FOUND, "no_session"),
            E::BadId(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            E::Ambiguous { .. } => (StatusCode::CONFLICT, "ambiguous_session"),
            E::Busy { .. } => (StatusCode::SERVICE_UNAVAILABLE, "busy"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "session_store"),
        };
        match e {
            // Its message names the session's directory, which is the operator's to know.
            E::Busy { waited, .. } => {
                ApiError::new(status, code, format!("the session is busy: another writer held it for {} ms", waited.as_millis())).retry_after(1)
            }
            e => ApiError::new(status, code, workmem_runtime::error_chain(&e)),
        }
    }
}

impl From<workmem_commit::Error> for ApiError {
    fn from(e: workmem_commit::Error) -> Self {
        match e {
            workmem_commit::Error::Store(e) => e.into(),
            workmem_commit::Error::Db(e) => e.into(),
            other => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "engine", workmem_runtime::error_chain(&other)),
        }
    }
}

impl From<workmem_runtime::Error> for ApiError {
    fn from(e: workmem_runtime::Error) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "engine", workmem_runtime::error_chain(&e))
    }
}

/// A server failure's number, unique in this process: the answer names it, the log has the
/// detail.
fn next_request_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!("{}-{}", std::process::id(), NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

impl IntoResponse for ApiError {
    fn into_response(mut self) -> Response {
        if self.is_internal() {
            // What failed inside (a path, the database's address, the engine's trap and wasm
            // backtrace) is the operator's to read, not the client's: the log gets it under
            // an ID the answer names.
            let id = next_request_id();
            // Escaped: the detail may carry a client's or a model's text, and this is a log.
            eprintln!("workmem serve: request {id} failed ({}): {}", self.code, self.message.escape_debug());
            self.message = format!("the server failed to do this; its log has the detail under request {id}");
            self.extra.insert("request_id".into(), id.into());
        }
        let retry_after = self.extra.get(RETRY_AFTER).and_then(Value::as_u64);
        let mut error = Map::new();
        error.insert("code".into(), self.code.into());
        error.insert("message".into(), self.message.into());
        error.extend(self.extra);
        let mut response = (self.status, axum::Json(json!({ "error": error }))).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
