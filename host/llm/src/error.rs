//! How a model call fails: the provider's refusal (with its retry hint), a timeout, an answer
//! too large, a broken transport; and which of them are worth another attempt.

use crate::config::MAX_ANSWER_ENV;
use serde_json::Value;
use std::time::Duration;

#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    #[error("the LLM did not answer within {0:?}")]
    Timeout(Duration),
    /// The provider answered with an error status.
    #[error("{0}")]
    Provider(Refusal),
    #[error("the LLM's answer passed {limit} bytes, the most taken (raise it with ${MAX_ANSWER_ENV})")]
    TooLarge { limit: usize },
    #[error("{0}")]
    Other(String),
}

/// What a provider said when it refused a request: the status, and its own code and message
/// where its error body has them (OpenAI's `{"error": {message, type, code}}`, Anthropic's
/// `{"type": "error", "error": {type, message}}`), else the start of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub url: String,
    pub status: u16,
    /// OpenAI's `code`, else its `type`; Anthropic's `type`.
    pub code: Option<String>,
    pub message: String,
    /// How long the provider asked to wait before trying again, from its headers.
    pub retry_after: Option<Duration>,
}

/// The most characters of a provider's error message, or code, that a [`Refusal`] keeps.
pub(crate) const MAX_SAID: usize = 500;

/// Codes of a 429 that waiting does not cure: the account is out of quota or credit.
const NOT_RETRIED: [&str; 4] = ["insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "access_terminated"];

impl Refusal {
    pub(crate) fn parse(url: &str, status: u16, body: &str, retry_after: Option<Duration>) -> Self {
        let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let error = &v["error"];
        // A provider's words, at most so many characters: they go into messages and logs.
        let text = |v: &Value| v.as_str().map(str::trim).filter(|s| !s.is_empty()).map(|s| s.chars().take(MAX_SAID).collect::<String>());
        let message = text(&error["message"])
            .or_else(|| text(error))
            .or_else(|| text(&v["message"]))
            .or_else(|| text(&v["detail"]))
            .unwrap_or_else(|| body.trim().chars().take(MAX_SAID).collect());
        let code = text(&error["code"]).or_else(|| text(&error["type"]));
        Refusal { url: url.to_string(), status, code, message, retry_after }
    }

    /// A rate limit that waiting cures (a quota or billing refusal is not one).
    pub fn rate_limited(&self) -> bool {
        self.status == 429 && !self.code.as_deref().is_some_and(|c| NOT_RETRIED.contains(&c))
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the LLM provider at {} answered HTTP {}", self.url, self.status)?;
        if let Some(code) = &self.code {
            write!(f, " ({code})")?;
        }
        write!(f, ": {}", self.message)?;
        if self.rate_limited() {
            write!(f, "{}", retry_hint(&self.retry_after))?;
        }
        Ok(())
    }
}

fn retry_hint(d: &Option<Duration>) -> String {
    d.map(|d| format!("; it asked to wait {d:?}")).unwrap_or_default()
}

impl LlmError {
    /// Worth another attempt: rate limits, server errors, timeouts, broken connections.
    pub(crate) fn retryable(&self) -> Option<Option<Duration>> {
        match self {
            LlmError::Provider(r) if r.rate_limited() || r.status >= 500 => Some(r.retry_after),
            LlmError::Timeout(_) | LlmError::Other(_) => Some(None),
            LlmError::Provider(_) | LlmError::TooLarge { .. } => None,
        }
    }
}

/// A failure that is not the provider's answer: no retry hint, retryable as a transport fault.
pub(crate) fn transport(what: impl std::fmt::Display) -> LlmError {
    LlmError::Other(what.to_string())
}
