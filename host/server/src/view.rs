//! The page for people (workmem-page), live: `/view` is a page with no data of its own whose
//! script fetches the sections the URL's fragment names (`/v1/sessions/{id}/page`,
//! `/v1/boards/{board}/page`, each with its token) and keeps them current.

use crate::app::App;
use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;

pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/view", get(shell)).route("/view/app.js", get(script))
}

/// What a page may load: its own script and the API, nothing from elsewhere, no inline script.
const POLICY: &str =
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; frame-ancestors 'none'";

async fn shell() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_SECURITY_POLICY, POLICY)], workmem_page::SHELL).into_response()
}

async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], workmem_page::SHELL_SCRIPT).into_response()
}

/// One section as a whole page (what `workmem view` would write for it), never cached.
pub fn page(title: &str, sections: &str) -> Response {
    let html = workmem_page::document(title, sections, &workmem_store::now());
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-store"), (header::CONTENT_SECURITY_POLICY, POLICY)], html).into_response()
}
