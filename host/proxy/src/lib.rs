//! `workmem proxy`: workmem in front of an agent that is not changed at all. The agent (Claude
//! Code on Anthropic Messages, Codex CLI on the Responses API, any Chat Completions client) is
//! pointed at the proxy as its API base URL;
//! each request it sends resends its whole history, and the proxy:
//!
//! 1. finds the client's session ([`sessions`]) and appends to `messages.jsonl` only what is new;
//! 2. sends upstream the session's view instead (compactions applied, the fallback run before
//!    every request, the working memory and `context_meta` in it), with workmem's own tools
//!    offered beside the client's ([`exchange`]);
//! 3. runs workmem's tools itself when the model calls them, so the client only ever sees its
//!    own tools, and relays everything else as the upstream sent it, streams chunk by chunk.
//!
//! If anything of workmem's fails, the request goes upstream as the client sent it
//! ([`OnError::Passthrough`]): the proxy never takes the agent down. Routes it does not know
//! pass through unchanged.

mod app;
mod chat;
mod config;
mod exchange;
mod history;
mod locks;
mod lookup;
mod messages;
mod own;
mod parts;
mod protocol;
mod relay;
mod responses;
mod seen;
mod sessions;
mod sse;
mod upstream;
mod warm;
mod written;

use app::App;
use axum::Router;
use axum::extract::{Request, State};
use axum::response::Response;
use exchange::Route;
use std::sync::Arc;
use workmem_runtime::Runtime;

pub use app::Error;
pub use config::{Config, MAX_SESSIONS, MAX_WARM_BYTES, OnError};
pub use upstream::shown as shown_url;

/// What the proxy passes through as sent, unmanaged, whatever the flags: said at its start, so
/// that a client that will not be managed is known before its first request (docs/proxy.md).
pub const UNMANAGED: [&str; 3] = [
    "Codex CLI's default model (its tools an additional_tools item of freeform custom tools): name a model whose tools are functions, such as model = \"gpt-5\" in ~/.codex/config.toml",
    "requests with images or documents",
    "Responses chains to answers the proxy did not give, and conversations the provider keeps (conversation)",
];

/// The proxy's routes: Chat Completions, Anthropic Messages and Responses are proxied through
/// workmem, Anthropic's `count_tokens` counts what workmem would send, everything else (models,
/// embeddings, ...) passes through. The sessions this proxy kept before are loaded here.
pub fn router(runtime: Runtime, config: Config) -> Result<Router, Error> {
    let app = Arc::new(App::new(runtime, config)?);
    Ok(Router::new()
        .route("/v1/chat/completions", proxied(Route::Proxied(&chat::Chat)))
        .route("/chat/completions", proxied(Route::Proxied(&chat::Chat)))
        .route("/v1/messages", proxied(Route::Proxied(&messages::Messages)))
        .route("/v1/messages/count_tokens", proxied(Route::Counted(&messages::Messages)))
        .route("/v1/responses", proxied(Route::Proxied(&responses::Responses)))
        .fallback(|s, r| handle(s, r, Route::Passthrough))
        .with_state(app))
}

/// A route of workmem's: POST handled, any other method refused with 405 in the protocol's
/// own error shape (as the provider refuses it), naming the method it takes.
fn proxied(route: Route) -> axum::routing::MethodRouter<Arc<App>> {
    axum::routing::post(move |s, r| handle(s, r, route)).fallback(move |request: Request| async move {
        let message = format!("{} is not allowed here: this route takes POST", request.method());
        let mut refused = relay::error(405, route.shape().error_body(405, "method_not_allowed", &message));
        refused.headers_mut().insert("allow", axum::http::HeaderValue::from_static("POST"));
        refused
    })
}

async fn handle(State(app): State<Arc<App>>, request: Request, route: Route) -> Response {
    let (parts, body) = request.into_parts();
    let shape = route.shape();
    // The slot first, then the body: bodies in memory, waiting or in flight, are at most
    // --slots × --max-body-bytes, however many connections queue (threat model rule 11).
    let Some(slot) = app.slot().await else {
        let message = format!("all {} of the proxy's slots stayed busy for {:?} (--slots, --slot-wait)", app.config.slots, app.config.slot_wait);
        let mut refused = relay::error(503, shape.error_body(503, "busy", &message));
        refused.headers_mut().insert("retry-after", axum::http::HeaderValue::from_static("1"));
        return refused;
    };
    let body = match axum::body::to_bytes(body, app.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => {
            if let Some(timeout) = workmem_listener::BodyTimeout::behind(&e) {
                return relay::error(408, shape.error_body(408, "request_timeout", &timeout.to_string()));
            }
            let message = format!("the request body passed {} bytes, the most the proxy reads (--max-body-bytes)", app.config.max_body_bytes);
            return relay::error(413, shape.error_body(413, "request_too_large", &message));
        }
    };
    let (sink, response) = relay::channel();
    // The slot is held until the exchange ends: a stream's last byte, not its first.
    tokio::task::spawn_blocking(move || {
        exchange::run(&app, route, parts, body, sink);
        drop(slot);
    });
    match response.await {
        Ok(r) => r,
        Err(_) => relay::error(502, shape.error_body(502, "workmem_failed", "the proxy's exchange ended without an answer")),
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol::Protocol;
    use crate::{chat::Chat, messages::Messages, responses::Responses};
    use serde_json::{Value, json};

    /// Every protocol's answer is held to the cap on calls per answer: an Anthropic answer of
    /// 129 `tool_use` blocks ran and logged every one (only Chat Completions had a cap).
    #[test]
    fn calls_per_answer_are_capped_in_every_protocol() {
        let blocks =
            |n: usize| -> Vec<Value> { (0..n).map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "read_file", "input": {}})).collect() };
        let anthropic = |n| json!({"type": "message", "role": "assistant", "content": blocks(n), "stop_reason": "tool_use"});
        assert_eq!(Messages.completion(&anthropic(128)).unwrap().0.tool_calls.len(), 128);
        assert!(Messages.completion(&anthropic(129)).unwrap_err().to_string().contains("129 tool calls, more than the 128"));
        let calls: Vec<Value> = (0..129).map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "f", "arguments": "{}"}})).collect();
        let chat = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": calls}}]});
        assert!(Chat.completion(&chat).unwrap_err().to_string().contains("129 tool calls"));
        let items: Vec<Value> = (0..129).map(|i| json!({"type": "function_call", "call_id": format!("c{i}"), "name": "f", "arguments": "{}"})).collect();
        assert!(Responses.completion(&json!({"output": items})).unwrap_err().to_string().contains("129 tool calls"));
    }
}
