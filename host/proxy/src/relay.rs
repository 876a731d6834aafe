//! The way back to the client: an exchange runs on a blocking thread (the store, the engine and
//! the upstream client all block) and hands the response over as it goes: its head once, then
//! its body chunk by chunk, each one passed on as soon as it is sent.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

/// Chunks in flight to a slow client before the exchange waits for it.
const BUFFERED_CHUNKS: usize = 16;

pub(crate) struct Sink {
    head: Option<oneshot::Sender<Response>>,
    body: Option<mpsc::Sender<Result<Bytes, std::io::Error>>>,
}

/// A sink for an exchange and the response it will give.
pub(crate) fn channel() -> (Sink, oneshot::Receiver<Response>) {
    let (tx, rx) = oneshot::channel();
    (Sink { head: Some(tx), body: None }, rx)
}

/// Response headers that belong to one connection, or that the proxy recomputes.
fn per_connection(name: &HeaderName) -> bool {
    matches!(name.as_str(), "connection" | "keep-alive" | "transfer-encoding" | "te" | "trailer" | "upgrade" | "content-length" | "proxy-connection")
}

impl Sink {
    /// Starts a streamed response with the upstream's status and headers. False when the
    /// client is gone.
    pub fn start(&mut self, status: u16, headers: &HeaderMap) -> bool {
        let Some(head) = self.head.take() else { return self.body.is_some() };
        let (tx, rx) = mpsc::channel(BUFFERED_CHUNKS);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|chunk| (chunk, rx)) });
        let mut response = Response::new(Body::from_stream(stream));
        *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
        for (name, value) in headers {
            if !per_connection(name) {
                response.headers_mut().append(name.clone(), value.clone());
            }
        }
        self.body = Some(tx);
        head.send(response).is_ok()
    }

    /// Sends one chunk of the body. False when the client is gone.
    pub fn send(&mut self, chunk: Bytes) -> bool {
        match &self.body {
            Some(tx) => tx.blocking_send(Ok(chunk)).is_ok(),
            None => false,
        }
    }

    /// Ends the body: the client's response is complete once what was sent is read.
    pub fn finish(&mut self) {
        self.body = None;
    }

    /// Ends the body with an error: the client sees the connection cut, not a clean end.
    pub fn abort(&mut self, why: String) {
        if let Some(tx) = self.body.take() {
            let _ = tx.blocking_send(Err(std::io::Error::other(why)));
        }
    }

    /// Answers with a whole response, when nothing has been sent yet.
    pub fn respond(&mut self, response: Response) {
        if let Some(head) = self.head.take() {
            let _ = head.send(response);
        }
    }

    pub fn started(&self) -> bool {
        self.head.is_none()
    }
}

/// A JSON error answer the proxy writes itself.
pub(crate) fn error(status: u16, body: serde_json::Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a status and a content type make a response")
}
