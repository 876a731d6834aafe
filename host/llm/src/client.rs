//! An OpenAI-compatible Chat Completions client: the LLM the host grants. Streaming (SSE)
//! or not, with a deadline per attempt and retries with backoff on 429, 5xx, timeouts and
//! broken streams, honouring the provider's `retry-after-ms` / `Retry-After`.

use crate::config::Config;
use crate::error::{LlmError, Refusal, transport};
use crate::stream::ChatStream;
use crate::wire::{Completion, Message, chat_body};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

/// The longest a provider's retry hint is waited out; a longer one ends the retries.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// Cheap to clone: clones share the connection pool.
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    config: Config,
}

impl Client {
    pub fn new(config: Config) -> Self {
        let agent = crate::http_agent(ureq::Agent::config_builder().timeout_global(Some(config.timeout)).http_status_as_error(false).build());
        Client { agent, config }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// One chat completion, retried as [`Config`] says. Returns the last error once the
    /// retries are spent.
    pub fn complete(&self, messages: &[Message]) -> Result<Completion, LlmError> {
        self.complete_with_tools(messages, None)
    }

    /// The same, offering `tools` (the Chat Completions `tools` array).
    pub fn complete_with_tools(&self, messages: &[Message], tools: Option<&Value>) -> Result<Completion, LlmError> {
        let mut backoff = self.config.backoff;
        let mut attempt = 0;
        loop {
            let err = match self.attempt(messages, tools) {
                Ok(c) => return Ok(c),
                Err(e) => e,
            };
            let hint = err.retryable().filter(|hint| attempt < self.config.max_retries && hint.is_none_or(|h| h <= MAX_WAIT));
            let Some(hint) = hint else {
                return Err(err);
            };
            std::thread::sleep(hint.unwrap_or(backoff));
            backoff = backoff.saturating_mul(2);
            attempt += 1;
        }
    }

    fn attempt(&self, messages: &[Message], tools: Option<&Value>) -> Result<Completion, LlmError> {
        let mut body = chat_body(&self.config.model, messages, tools);
        if self.config.stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        let url = format!("{}/chat/completions", self.config.base_url.trim_end_matches('/'));
        let mut request = self.agent.post(&url).header("Content-Type", "application/json");
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request.send(body.to_string()).map_err(|e| self.failure(&url, e))?;
        let status = response.status().as_u16();
        if status != 200 {
            let retry_after = retry_after(response.headers());
            let text = response.body_mut().with_config().limit(64 << 10).read_to_string().unwrap_or_default();
            return Err(LlmError::Provider(Refusal::parse(&url, status, &text, retry_after)));
        }
        // Room for the JSON around an answer of the largest size taken, escapes included: the
        // cap on a whole answer, and on each line of a stream (whose answer is capped as it
        // grows; its length in all is bounded by the deadline).
        let limit = (self.config.max_answer_bytes as u64).saturating_mul(2).saturating_add(64 << 10);
        let completion = if self.config.stream {
            self.read_stream(&url, BufReader::new(response.body_mut().as_reader()), limit)?
        } else {
            let text = response.body_mut().with_config().limit(limit).read_to_string().map_err(|e| self.failure(&url, e))?;
            let v: Value = serde_json::from_str(&text).map_err(|e| transport(format!("the LLM's answer is not JSON: {e}")))?;
            Completion::from_chat(&v).map_err(transport)?
        };
        self.check_size(completion.bytes)?;
        Ok(completion)
    }

    fn check_size(&self, bytes: usize) -> Result<(), LlmError> {
        if bytes > self.config.max_answer_bytes { Err(LlmError::TooLarge { limit: self.config.max_answer_bytes }) } else { Ok(()) }
    }

    /// Server-sent events: `data: {chunk}` lines until `data: [DONE]`. A stream that ends
    /// before `[DONE]` was cut, and its partial text is not an answer.
    /// No line may pass `line_limit` bytes (a line that never ends is cut off there), and the
    /// answer is checked against its cap as it grows.
    fn read_stream(&self, url: &str, mut reader: impl BufRead, line_limit: u64) -> Result<Completion, LlmError> {
        let mut stream = ChatStream::default();
        let mut raw = Vec::new();
        loop {
            raw.clear();
            if (&mut reader).take(line_limit + 1).read_until(b'\n', &mut raw).map_err(|e| self.io_failure(url, e))? == 0 {
                break;
            }
            if raw.len() as u64 > line_limit {
                return Err(LlmError::TooLarge { limit: self.config.max_answer_bytes });
            }
            // As a whole answer's body is read: bytes that are not UTF-8 refuse the answer.
            let line = std::str::from_utf8(&raw).map_err(|e| transport(format!("a stream line is not UTF-8: {e}")))?;
            let Some(data) = line.strip_prefix("data:").map(str::trim) else { continue };
            if data == "[DONE]" {
                return stream.finish().map_err(transport);
            }
            let chunk: Value = serde_json::from_str(data).map_err(|e| transport(format!("a stream event is not JSON: {e}")))?;
            stream.push(&chunk).map_err(transport)?;
            self.check_size(stream.bytes)?;
        }
        Err(transport("the LLM's stream ended before [DONE]"))
    }

    fn failure(&self, url: &str, e: ureq::Error) -> LlmError {
        match e {
            ureq::Error::Timeout(_) => LlmError::Timeout(self.config.timeout),
            ureq::Error::BodyExceedsLimit(_) => LlmError::TooLarge { limit: self.config.max_answer_bytes },
            ureq::Error::Io(io) => self.io_failure(url, io),
            other => transport(format!("could not reach the LLM at {url}: {other}")),
        }
    }

    fn io_failure(&self, url: &str, e: std::io::Error) -> LlmError {
        // ureq reports its deadline and its body limit inside reads as an io::Error wrapping
        // its own error.
        let inner = e.get_ref().and_then(|inner| inner.downcast_ref::<ureq::Error>());
        if let Some(ureq::Error::BodyExceedsLimit(_)) = inner {
            return LlmError::TooLarge { limit: self.config.max_answer_bytes };
        }
        let timed_out = e.kind() == std::io::ErrorKind::TimedOut || inner.is_some_and(|u| matches!(u, ureq::Error::Timeout(_)));
        match e.kind() {
            _ if timed_out => LlmError::Timeout(self.config.timeout),
            std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::NotFound
            | std::io::ErrorKind::HostUnreachable
            | std::io::ErrorKind::NetworkUnreachable => transport(format!("could not reach the LLM at {url}: {e}")),
            _ => transport(format!("the connection to the LLM at {url} broke: {e}")),
        }
    }
}

/// `retry-after-ms` (OpenAI's), else `Retry-After` in seconds or as an HTTP date, else the
/// later of OpenAI's `x-ratelimit-reset-requests` and `-tokens` (`1s`, `6m0s`, `20ms`).
fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return seconds(ms / 1e3);
    }
    if let Some(value) = header("retry-after") {
        if let Ok(secs) = value.parse::<f64>() {
            return seconds(secs);
        }
        if let Ok(at) = httpdate::parse_http_date(value) {
            return Some(at.duration_since(std::time::SystemTime::now()).unwrap_or_default());
        }
    }
    ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"].into_iter().filter_map(|name| header(name).and_then(go_duration)).max()
}

/// A number of seconds a provider sent: a negative one is no wait; one no `Duration` holds
/// (`inf`, `1e30`) is a wait longer than any, which ends the retries.
fn seconds(secs: f64) -> Option<Duration> {
    if secs.is_nan() {
        return None;
    }
    Some(Duration::try_from_secs_f64(secs.max(0.0)).unwrap_or(Duration::MAX))
}

/// A duration as Go prints one (`1h2m3.5s`, `20ms`), as OpenAI's rate-limit headers carry it.
fn go_duration(text: &str) -> Option<Duration> {
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).filter(|&n| n > 0)?;
        let value: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let seconds = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += value * seconds;
        rest = &rest[unit_end..];
    }
    if total > 0.0 { seconds(total) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::MAX_SAID;
    use crate::wire::{MAX_CALL_ID_BYTES, MAX_TOOL_CALLS};

    /// A streamed call's index is the one it has or the next, and an answer keeps at most
    /// MAX_TOOL_CALLS calls, streamed or whole, counting the rest: one event cannot make 5,001
    /// calls, and 10,000 calls keep 128.
    #[test]
    fn tool_calls_per_answer_are_bounded() {
        let part = |index: u64| json!({"choices": [{"delta": {"tool_calls": [{"index": index, "id": format!("c{index}"), "function": {"name": "f", "arguments": ""}}]}}]});
        let mut stream = ChatStream::default();
        assert!(stream.push(&part(5000)).unwrap_err().contains("index 5000, past the next one (0)"));
        assert!(stream.tool_calls.is_empty());
        for i in 0..10_000 {
            stream.push(&part(i)).unwrap();
            stream.push(&part(i)).unwrap();
        }
        let got = stream.finish().unwrap();
        assert_eq!((got.tool_calls.len(), got.calls_past_cap), (MAX_TOOL_CALLS, 10_000 - MAX_TOOL_CALLS));
        assert_eq!(got.tool_calls.last().unwrap().id, format!("c{}", MAX_TOOL_CALLS - 1));
        let calls: Vec<Value> =
            (0..=MAX_TOOL_CALLS).map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "f", "arguments": "{}"}})).collect();
        let whole = Completion::from_chat(&json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": calls}}]})).unwrap();
        assert_eq!((whole.tool_calls.len(), whole.calls_past_cap), (MAX_TOOL_CALLS, 1));
    }

    /// One rule for both shapes of an answer: every byte counted (ids too), ids bounded, and
    /// no answer without a choice. A stream's ids counted nothing, and an empty stream was an
    /// empty answer while an empty body was refused.
    #[test]
    fn streamed_and_whole_answers_are_read_alike() {
        let id = "x".repeat(200);
        let call = json!({"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}});
        let whole = Completion::from_chat(&json!({"choices": [{"message": {"content": "hi", "tool_calls": [call]}}]})).unwrap();
        let mut stream = ChatStream::default();
        stream.push(&json!({"choices": [{"delta": {"content": "hi"}}]})).unwrap();
        stream.push(&json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": id, "function": {"name": "f", "arguments": "{}"}}]}}]})).unwrap();
        let streamed = stream.finish().unwrap();
        assert_eq!(streamed.bytes, 2 + 200 + 1 + 2);
        assert_eq!(streamed, whole);

        let long = "x".repeat(MAX_CALL_ID_BYTES + 1);
        let call = json!({"id": long, "type": "function", "function": {"name": "f", "arguments": "{}"}});
        assert!(Completion::from_chat(&json!({"choices": [{"message": {"tool_calls": [call]}}]})).unwrap_err().contains("more than the 256"));
        let mut stream = ChatStream::default();
        let part = json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": long}]}}]});
        assert!(stream.push(&part).unwrap_err().contains("more than the 256"));

        assert!(Completion::from_chat(&json!({"choices": []})).unwrap_err().contains("no choices[0]"));
        assert!(ChatStream::default().finish().unwrap_err().contains("no choices[0]"));
        let mut usage_only = ChatStream::default();
        usage_only.push(&json!({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})).unwrap();
        assert!(usage_only.finish().unwrap_err().contains("no choices[0]"));
    }

    /// Numbers no `Duration` holds end the retries instead of panicking.
    #[test]
    fn retry_hints_past_any_duration() {
        let hint = |name: &str, value: &str| {
            let mut headers = ureq::http::HeaderMap::new();
            headers.insert(ureq::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
            retry_after(&headers)
        };
        assert_eq!(hint("retry-after", "inf"), Some(Duration::MAX));
        assert_eq!(hint("retry-after", "1e20"), Some(Duration::MAX));
        assert_eq!(hint("retry-after-ms", "1e30"), Some(Duration::MAX));
        assert_eq!(hint("retry-after", "-5"), Some(Duration::ZERO));
        assert_eq!(hint("retry-after", "NaN"), None);
        assert_eq!(hint("x-ratelimit-reset-tokens", "99999999999999999999h"), Some(Duration::MAX));
        assert_eq!(hint("retry-after-ms", "250"), Some(Duration::from_millis(250)));
    }

    #[test]
    fn go_durations_as_openai_sends_them() {
        assert_eq!(go_duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(go_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(go_duration("1h2m3.5s"), Some(Duration::from_secs_f64(3723.5)));
        assert_eq!(go_duration("soon"), None);
        assert_eq!(go_duration("5 s"), None);
    }

    #[test]
    fn provider_errors_are_read_in_both_shapes() {
        let openai = r#"{"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}"#;
        let r = Refusal::parse("https://api.openai.com/v1/chat/completions", 429, openai, None);
        assert_eq!((r.code.as_deref(), r.rate_limited()), (Some("insufficient_quota"), false));
        assert!(r.message.starts_with("You exceeded your current quota"));
        let anthropic =
            r#"{"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}"#;
        let r = Refusal::parse("u", 429, anthropic, Some(Duration::from_secs(2)));
        assert_eq!((r.code.as_deref(), r.rate_limited()), (Some("rate_limit_error"), true));
        assert_eq!(
            r.to_string(),
            "the LLM provider at u answered HTTP 429 (rate_limit_error): Number of request tokens has exceeded your per-minute rate limit; it asked to wait 2s"
        );
        let plain = Refusal::parse("u", 502, "<html>Bad Gateway</html>", None);
        assert_eq!((plain.code, plain.message.as_str()), (None, "<html>Bad Gateway</html>"));
        // What a hostile upstream says is kept to MAX_SAID characters, code and message alike.
        let long = format!(r#"{{"error": {{"message": "{0}", "code": "{0}"}}}}"#, "x".repeat(100_000));
        let r = Refusal::parse("u", 400, &long, None);
        assert_eq!((r.message.len(), r.code.map(|c| c.len())), (MAX_SAID, Some(MAX_SAID)));
    }
}
