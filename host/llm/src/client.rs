//! An OpenAI-compatible Chat Completions client: the LLM the host grants. Streaming (SSE)
//! or not, with a deadline per attempt and retries with backoff on 429, 5xx, timeouts and
//! broken streams, honouring the provider's `retry-after-ms` / `Retry-After`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

/// The default model when neither `WORKMEM_MODEL` nor the caller names one.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// The longest a provider's retry hint is waited out; a longer one ends the retries.
const MAX_WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub struct Config {
    /// Up to and including `/v1`, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub stream: bool,
    /// Deadline for one attempt, from sending the request to the last byte.
    pub timeout: Duration,
    /// Further attempts after the first fails with something worth retrying.
    pub max_retries: u32,
    /// First backoff when the provider gives no retry hint; doubled on every retry.
    pub backoff: Duration,
    /// The largest answer taken (its text and tool-call arguments, in bytes); a longer one is
    /// [`LlmError::TooLarge`], and what arrives past it is not read.
    pub max_answer_bytes: usize,
}

/// Overrides [`Config::max_answer_bytes`].
pub const MAX_ANSWER_ENV: &str = "WORKMEM_MAX_ANSWER_BYTES";

/// Seconds one attempt may take, unless a caller says otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// Further attempts after a failure worth retrying, unless a caller says otherwise.
pub const DEFAULT_RETRIES: u32 = 3;

/// 1 MiB: sixty times a long real answer, and far below what would hurt the host.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 1 << 20;

/// The optional config file: `{"base_url": ..., "api_key": ..., "model": ...}`, any of them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
}

impl Config {
    /// `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `WORKMEM_MODEL`, else the config file
    /// (`$WORKMEM_CONFIG`, else `~/.config/workmem/config.json`, if it exists), else the
    /// defaults (`https://api.openai.com/v1`, no key, [`DEFAULT_MODEL`]); streaming, 120 s per
    /// attempt, 3 retries, answers up to `$WORKMEM_MAX_ANSWER_BYTES` (default 1 MiB).
    pub fn load() -> Result<Self, ConfigError> {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let path = var("WORKMEM_CONFIG").map(std::path::PathBuf::from).or_else(|| {
            let base = var("XDG_CONFIG_HOME").map(std::path::PathBuf::from).or_else(|| var("HOME").map(|h| std::path::Path::new(&h).join(".config")))?;
            Some(base.join("workmem").join("config.json"))
        });
        let file = match path {
            Some(path) if path.exists() => {
                let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read { path: path.clone(), source })?;
                serde_json::from_str(&text).map_err(|source| ConfigError::Invalid { path, source })?
            }
            _ => File::default(),
        };
        let max_answer_bytes = match var(MAX_ANSWER_ENV) {
            Some(v) => v.parse().map_err(|_| ConfigError::Setting { name: MAX_ANSWER_ENV, value: v })?,
            None => DEFAULT_MAX_ANSWER_BYTES,
        };
        Ok(Config {
            max_answer_bytes,
            base_url: var("OPENAI_BASE_URL").or(file.base_url).unwrap_or_else(|| "https://api.openai.com/v1".into()),
            api_key: var("OPENAI_API_KEY").or(file.api_key),
            model: var("WORKMEM_MODEL").or(file.model).unwrap_or_else(|| DEFAULT_MODEL.into()),
            stream: true,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            max_retries: DEFAULT_RETRIES,
            backoff: Duration::from_millis(500),
        })
    }
}

/// The config file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading the LLM config file {}", path.display())]
    Read { path: std::path::PathBuf, source: std::io::Error },
    #[error("the LLM config file {} is not valid: it takes {{\"base_url\", \"api_key\", \"model\"}}", path.display())]
    Invalid { path: std::path::PathBuf, source: serde_json::Error },
    #[error("${name} is {value:?}: it takes a number of bytes")]
    Setting { name: &'static str, value: String },
}

/// The body of a Chat Completions request, streaming aside: what `workmem context --json`
/// prints and `workmem-replay --requests` writes are this, so they are what is sent.
pub fn chat_body(model: &str, messages: &[Message], tools: Option<&Value>) -> Value {
    let mut body = json!({"model": model, "messages": messages});
    if let Some(tools) = tools.filter(|t| t.as_array().is_some_and(|a| !a.is_empty())) {
        body["tools"] = tools.clone();
    }
    body
}

/// A chat message in OpenAI's wire shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Message { role: role.into(), content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// The arguments as the model wrote them: JSON text, not yet checked (empty when the
    /// provider sent none, which the tools read as no arguments).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub arguments: String,
}

fn function_kind() -> String {
    "function".to_string()
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// Token counts as the provider reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    /// The tools the model asked to call, in order: the first [`MAX_TOOL_CALLS`].
    pub tool_calls: Vec<ToolCall>,
    /// How many calls the answer made past [`MAX_TOOL_CALLS`]: counted, never kept, so none
    /// of them runs (the agent refuses the answer's calls to the model, naming the cap).
    pub calls_past_cap: usize,
    /// `None` when the provider did not report usage.
    pub usage: Option<Usage>,
    /// Every byte the answer carried in its text and calls (ids, names and arguments, those
    /// past the cap included), as [`Completion::from_chat`] and [`ChatStream`] count it: what
    /// the client's answer cap is held to. A completion built elsewhere (the proxy's other
    /// protocols, whose answers its own byte cap bounds) leaves it 0.
    pub bytes: usize,
}

impl Completion {
    /// A (non-streamed) `chat.completion` body's first choice; the error says what is missing.
    pub fn from_chat(v: &Value) -> Result<Completion, String> {
        let message = &v["choices"][0]["message"];
        if !message.is_object() {
            return Err("the LLM's answer has no choices[0].message".into());
        }
        let mut tool_calls: Vec<ToolCall> = match &message["tool_calls"] {
            Value::Null => Vec::new(),
            calls => serde_json::from_value(calls.clone()).map_err(|e| format!("the LLM's tool calls are malformed: {e}"))?,
        };
        let text = message["content"].as_str().unwrap_or_default().to_string();
        let mut bytes = text.len();
        for call in &tool_calls {
            check_id(&call.id)?;
            bytes += call.id.len() + call.function.name.len() + call.function.arguments.len();
        }
        let calls_past_cap = tool_calls.len().saturating_sub(MAX_TOOL_CALLS);
        tool_calls.truncate(MAX_TOOL_CALLS);
        Ok(Completion { text, tool_calls, calls_past_cap, usage: serde_json::from_value(v["usage"].clone()).ok(), bytes })
    }
}

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
const MAX_SAID: usize = 500;

/// Codes of a 429 that waiting does not cure: the account is out of quota or credit.
const NOT_RETRIED: [&str; 4] = ["insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "access_terminated"];

impl Refusal {
    fn parse(url: &str, status: u16, body: &str, retry_after: Option<Duration>) -> Self {
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
    fn retryable(&self) -> Option<Option<Duration>> {
        match self {
            LlmError::Provider(r) if r.rate_limited() || r.status >= 500 => Some(r.retry_after),
            LlmError::Timeout(_) | LlmError::Other(_) => Some(None),
            LlmError::Provider(_) | LlmError::TooLarge { .. } => None,
        }
    }
}

/// A failure that is not the provider's answer: no retry hint, retryable as a transport fault.
fn transport(what: impl std::fmt::Display) -> LlmError {
    LlmError::Other(what.to_string())
}

/// Cheap to clone: clones share the connection pool.
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    config: Config,
}

impl Client {
    pub fn new(config: Config) -> Self {
        let agent = ureq::Agent::config_builder().timeout_global(Some(config.timeout)).http_status_as_error(false).build().into();
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

/// The most tool calls one answer may make: far more than any real turn, few enough that
/// running and logging them stays cheap. An answer making more keeps these and counts the rest.
pub const MAX_TOOL_CALLS: usize = 128;

/// The longest tool call id taken: providers' are tens of bytes, and an id is sent back with
/// every later request that holds its call.
pub const MAX_CALL_ID_BYTES: usize = 256;

fn check_id(id: &str) -> Result<(), String> {
    if id.len() > MAX_CALL_ID_BYTES {
        return Err(format!("a tool call's id is {} bytes long, more than the {MAX_CALL_ID_BYTES} an id may have", id.len()));
    }
    Ok(())
}

/// A streamed chat completion as its chunks arrive: the text, the tool calls (the first piece
/// of each names it, later ones extend its arguments) and the usage, if reported. It is read
/// by the rules a whole answer is: the same caps, and no answer without a choice.
#[derive(Debug, Clone, Default)]
pub struct ChatStream {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    /// Calls begun, those past [`MAX_TOOL_CALLS`] included (they are counted, not kept).
    calls: usize,
    /// Every byte of text, ids, names and arguments received.
    pub bytes: usize,
    /// Whether any chunk carried `choices[0]`: a stream of none (`choices: []` alone, or only
    /// `[DONE]`) is no answer, as a whole body without `choices[0].message` is not.
    chose: bool,
}

impl ChatStream {
    /// Folds in one `chat.completion.chunk`. A tool call's `index` is the one it has or the
    /// next: one that skips ahead (index 5,000 in a first chunk would make 5,001 calls) is
    /// refused, and calls past [`MAX_TOOL_CALLS`] are counted and their pieces dropped.
    pub fn push(&mut self, chunk: &Value) -> Result<(), String> {
        let choice = &chunk["choices"][0];
        self.chose |= choice.is_object();
        let delta = &choice["delta"];
        if let Some(piece) = delta["content"].as_str() {
            self.bytes += piece.len();
            self.text.push_str(piece);
        }
        for part in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = usize::try_from(part["index"].as_u64().unwrap_or(0)).unwrap_or(usize::MAX);
            if index > self.calls {
                return Err(format!("a streamed tool call has index {index}, past the next one ({})", self.calls));
            }
            if index == self.calls {
                self.calls += 1;
                if index < MAX_TOOL_CALLS {
                    self.tool_calls.push(ToolCall { id: String::new(), kind: function_kind(), function: FunctionCall::default() });
                }
            }
            let (id, name, args) = (part["id"].as_str(), part["function"]["name"].as_str(), part["function"]["arguments"].as_str());
            self.bytes += [id, name, args].iter().flatten().map(|s| s.len()).sum::<usize>();
            id.map(check_id).transpose()?;
            let Some(call) = self.tool_calls.get_mut(index) else { continue };
            if let Some(id) = id {
                call.id = id.to_string();
            }
            if let Some(name) = name {
                call.function.name.push_str(name);
            }
            if let Some(args) = args {
                call.function.arguments.push_str(args);
            }
        }
        if let Ok(u) = serde_json::from_value::<Usage>(chunk["usage"].clone()) {
            self.usage = Some(u);
        }
        Ok(())
    }

    /// The answer the stream made; an error if it never carried a choice.
    pub fn finish(self) -> Result<Completion, String> {
        if !self.chose {
            return Err("the LLM's stream has no choices[0].delta".into());
        }
        let calls_past_cap = self.calls.saturating_sub(MAX_TOOL_CALLS);
        Ok(Completion { text: self.text, tool_calls: self.tool_calls, calls_past_cap, usage: self.usage, bytes: self.bytes })
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
