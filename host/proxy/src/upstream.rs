//! The provider behind the proxy. The client's key and headers go upstream unchanged, but for
//! those that belong to one connection, the body's length (the proxy may have rewritten the
//! body) and `accept-encoding` (the proxy reads what comes back, so it asks for it plain).

use axum::http::{HeaderMap, HeaderName, Method};
use std::time::Duration;

/// The header a client may name its session with; it does not go upstream.
pub(crate) const SESSION_HEADER: &str = "x-workmem-session";

pub(crate) struct Upstream {
    agent: ureq::Agent,
    base: String,
}

pub(crate) type Answer = ureq::http::Response<ureq::Body>;

fn kept(name: &HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "host"
            | "content-length"
            | "connection"
            | "keep-alive"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
            | "proxy-connection"
            | "proxy-authorization"
            | "accept-encoding"
            | SESSION_HEADER
    )
}

/// `url` as it may be shown (in the log, at start): a password in it as `***`. No answer to a
/// client names the upstream at all.
pub fn shown(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(name, _)| name);
            format!("{scheme}://{user}:***@{host}{path}")
        }
        None => url.to_string(),
    }
}

impl Upstream {
    pub fn new(base: &str, timeout: Duration) -> Self {
        let agent = workmem_llm::http_agent(ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).max_redirects(0).build());
        Upstream { agent, base: base.trim_end_matches('/').to_string() }
    }

    /// Where a client's `path_and_query` goes: after the base URL, without doubling a `/v1`
    /// both end and start with.
    pub fn url(&self, path_and_query: &str) -> String {
        match (self.base.strip_suffix("/v1"), path_and_query.strip_prefix("/v1")) {
            (Some(_), Some(rest)) if rest.is_empty() || rest.starts_with(['/', '?']) => format!("{}{rest}", self.base),
            _ => format!("{}{path_and_query}", self.base),
        }
    }

    /// Sends one request; any status is an answer (the client gets it as it is).
    pub fn send(&self, method: &Method, path_and_query: &str, headers: &HeaderMap, body: &[u8]) -> Result<Answer, ureq::Error> {
        let mut request = ureq::http::Request::builder().method(method.clone()).uri(self.url(path_and_query));
        for (name, value) in headers {
            if kept(name) {
                request = request.header(name, value);
            }
        }
        let request = request.body(body).map_err(ureq::Error::from)?;
        self.agent.run(request)
    }
}

#[cfg(test)]
mod tests {
    /// A password in the upstream's URL is never shown; a URL without one is shown as it is.
    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(super::shown("http://user:p%40ss@host:8/v1?k=a@b"), "http://user:***@host:8/v1?k=a@b");
        assert_eq!(super::shown("https://token@host"), "https://token:***@host");
        assert_eq!(super::shown("https://api.openai.com/v1"), "https://api.openai.com/v1");
    }
}
