//! One client request, start to end, on a blocking thread: the session found and brought up to
//! date, the request built from its view and bounded, sent upstream, the answer logged and
//! relayed, workmem's own tool calls run in between.

use crate::app::App;
use crate::config::OnError;
use crate::history::History;
use crate::own::own_tool;
use crate::parts::Unread;
use crate::protocol::{Protocol, Relay, Said, Unreadable};
use crate::relay::Sink;
use crate::sessions::{Exchange, Tracked};
use crate::upstream::{Answer, SESSION_HEADER};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method};
use bytes::Bytes;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use workmem_agent::tools::ToolContext;
use workmem_agent::{context, turn};
use workmem_runtime::{HistoryMode, error_chain};
use workmem_store::{Durability, Message};

/// An error of workmem's own, kept with its sources for the proxy's log.
type Source = Box<dyn std::error::Error + Send + Sync>;

/// Why workmem could not handle a request. Only what the request itself is refused for, and the
/// upstream's failures, are told to the client as they are; a failure of workmem's own (the
/// store, the engine) may name files, and goes to the proxy's log alone.
#[derive(Debug, thiserror::Error)]
enum Failure {
    /// The client's own mistake (not JSON, not an object, a role its API does not have): a
    /// 400 in the protocol's error shape, whatever `--on-error` says, as the provider would
    /// answer; nothing is logged.
    #[error("{0}")]
    Invalid(String),
    /// The bounded request is over `--window` with all that can be compacted compacted (the
    /// client's system prompt and task alone fill it): a 400 `context_length_exceeded`, as the
    /// provider would answer a request over its window, whatever `--on-error` says; it is not
    /// sent (issue 48).
    #[error(transparent)]
    TooLong(workmem_agent::Error),
    /// A request workmem leaves to the client and the upstream by design (see
    /// [`Protocol::unproxied`]): it goes as sent, named in the answer's `x-workmem` header and
    /// the log, whatever `--on-error` says.
    #[error("{1}")]
    Unproxied(&'static str, String),
    /// The request is not one workmem takes. It can still go as it was.
    #[error(transparent)]
    Refused(Refusal),
    /// Another request of the same conversation held it past `--busy-wait` (a client's retry
    /// while its first try is still answered, or input sent twice): a 409 in the protocol's
    /// shape with `retry-after`, whatever `--on-error` says, so that one history never gets
    /// two answers; nothing is logged.
    #[error("another request of this conversation is still being answered (waited {0:?}, --busy-wait); send it again once that one has ended")]
    Busy(std::time::Duration),
    /// workmem failed before anything went upstream: the request can still go as it was.
    #[error("workmem failed before the request went upstream")]
    Before(#[source] Source),
    /// The upstream could not be reached, or broke off.
    #[error(transparent)]
    Upstream(UpstreamFailure),
    /// After the upstream answered (logging the answer, running a tool).
    #[error("workmem failed after the upstream answered")]
    After(#[source] Source),
}

/// Why workmem does not take a request it could still send as it came.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    /// Content the session cannot keep (images, Codex's `additional_tools`).
    #[error(transparent)]
    Unkept(Unread),
    #[error("the client offers a tool named {0}, as workmem does; workmem's tools are left out")]
    OwnToolName(String),
    /// The view would break tool-call pairing, which the provider refuses.
    #[error("{0}")]
    Unpaired(String),
}

/// How the upstream failed a request.
#[derive(Debug, thiserror::Error)]
enum UpstreamFailure {
    #[error("could not reach the upstream (the proxy's log says why)")]
    Unreachable,
    #[error("the upstream answered HTTP {0} to a later round")]
    LaterRound(u16),
    #[error("reading the upstream's answer (at most {0} bytes, --max-answer-bytes)")]
    Reading(u64, #[source] std::io::Error),
    #[error("the upstream's stream broke off")]
    BrokeOff(#[source] std::io::Error),
    #[error("the upstream's stream passed {0} bytes (--max-answer-bytes)")]
    TooLong(u64),
    #[error("the upstream's stream ended before its end event")]
    Unended,
    #[error("the client went away")]
    ClientGone,
    #[error(transparent)]
    Unreadable(#[from] Unreadable),
}

impl From<UpstreamFailure> for Failure {
    fn from(e: UpstreamFailure) -> Self {
        Failure::Upstream(e)
    }
}

impl From<Unreadable> for Failure {
    fn from(e: Unreadable) -> Self {
        Failure::Upstream(e.into())
    }
}

fn before(e: impl std::error::Error + Send + Sync + 'static) -> Failure {
    Failure::Before(Box::new(e))
}

fn after(e: impl std::error::Error + Send + Sync + 'static) -> Failure {
    Failure::After(Box::new(e))
}

/// What the proxy does with a route's requests.
#[derive(Clone, Copy)]
pub(crate) enum Route {
    /// Through a session: its view upstream, the answer logged.
    Proxied(&'static dyn Protocol),
    /// Counted as it would go upstream now (Anthropic's `count_tokens`); nothing is logged.
    Counted(&'static dyn Protocol),
    /// As the client sent it.
    Passthrough,
}

impl Route {
    /// The protocol whose error shape the route's client reads: its own, else Chat
    /// Completions' (OpenAI's, which most clients of other routes read).
    pub fn shape(self) -> &'static dyn Protocol {
        match self {
            Route::Proxied(p) | Route::Counted(p) => p,
            Route::Passthrough => &crate::chat::Chat,
        }
    }
}

pub(crate) fn run(app: &App, route: Route, parts: Parts, body: Bytes, mut sink: Sink) {
    let outcome = match route {
        Route::Proxied(protocol) => proxied(app, protocol, &parts, &body, &mut sink),
        Route::Counted(protocol) => counted(app, protocol, &parts, &body, &mut sink),
        Route::Passthrough => passthrough(app, &parts, body.clone(), &mut sink, None).map(drop),
    };
    let failure = match outcome {
        Ok(()) => return,
        Err(f) => f,
    };
    let reason = match &failure {
        Failure::Unproxied(reason, _) => Some(*reason),
        // Content the session cannot keep apart from the rest workmem does not take (a tool of
        // the client's named as one of workmem's).
        Failure::Refused(why) if app.config.on_error == OnError::Passthrough => Some(if matches!(why, Refusal::Unkept(_)) { "unkept" } else { "refused" }),
        Failure::Before(_) if app.config.on_error == OnError::Passthrough => Some("failed"),
        _ => None,
    };
    match reason {
        Some(reason) => {
            eprintln!("workmem proxy: {} {}: passed through as sent ({reason}): {}", parts.method, parts.uri.path(), error_chain(&failure));
            match passthrough(app, &parts, body, &mut sink, Some(reason)) {
                // Counted only where the upstream took it: a request it refused (a stranger's,
                // without a key) moves no count.
                Ok(status) if (200..300).contains(&status) => app.note_passed(reason, parts.uri.path()),
                Ok(_) => {}
                Err(e) => answer_error(&mut sink, route.shape(), &e),
            }
        }
        None => {
            eprintln!("workmem proxy: {} {}: {}", parts.method, parts.uri.path(), error_chain(&failure));
            answer_error(&mut sink, route.shape(), &failure);
        }
    }
}

fn answer_error(sink: &mut Sink, protocol: &dyn Protocol, f: &Failure) {
    let (status, code, message) = match f {
        Failure::Invalid(_) => (400, "invalid_request", f.to_string()),
        Failure::TooLong(_) => (400, "context_length_exceeded", f.to_string()),
        Failure::Busy(_) => (409, "conversation_busy", f.to_string()),
        Failure::Unproxied(..) => (502, "invalid_request", f.to_string()),
        Failure::Refused(_) => (502, "workmem_failed", f.to_string()),
        Failure::Before(_) | Failure::After(_) => (502, "workmem_failed", "workmem failed on this request; the proxy's log says why".to_string()),
        Failure::Upstream(e) => (502, "upstream_unreachable", error_chain(e)),
    };
    if status == 400 {
        sink.respond(crate::relay::error(400, protocol.error_body(400, code, &message)));
    } else if status == 409 {
        let mut busy = crate::relay::error(409, protocol.error_body(409, code, &message));
        busy.headers_mut().insert("retry-after", axum::http::HeaderValue::from_static("1"));
        sink.respond(busy);
    } else if sink.started() {
        sink.abort(message);
    } else {
        sink.respond(crate::relay::error(502, protocol.error_body(502, code, &message)));
    }
}

fn path(parts: &Parts) -> &str {
    parts.uri.path_and_query().map_or("/", |p| p.as_str())
}

/// The header that tells a client its request went upstream as it sent it, and why.
const PASSED_HEADER: &str = "x-workmem";

/// The request upstream as the client sent it; the answer back as it comes, with
/// `x-workmem: passthrough; reason=…` where workmem meant to take it and did not.
/// Gives the upstream's status.
fn passthrough(app: &App, parts: &Parts, body: Bytes, sink: &mut Sink, reason: Option<&str>) -> Result<u16, Failure> {
    let mut answer = send(app, &parts.method, path(parts), &parts.headers, &body)?;
    if let Some(value) = reason.and_then(|r| axum::http::HeaderValue::from_str(&format!("passthrough; reason={r}")).ok()) {
        answer.headers_mut().insert(PASSED_HEADER, value);
    }
    let status = answer.status().as_u16();
    relay_raw(answer, sink);
    Ok(status)
}

fn send(app: &App, method: &Method, path: &str, headers: &HeaderMap, body: &[u8]) -> Result<Answer, Failure> {
    app.upstream.send(method, path, headers, body).map_err(|e| {
        // The client is not told where the upstream is (its URL may hold a password): the log is.
        eprintln!("workmem proxy: could not reach the upstream at {}: {e}", crate::upstream::shown(&app.upstream.url(path)));
        Failure::Upstream(UpstreamFailure::Unreachable)
    })
}

/// An answer relayed byte for byte, as it arrives.
fn relay_raw(answer: Answer, sink: &mut Sink) {
    let (head, body) = answer.into_parts();
    if !sink.start(head.status.as_u16(), &head.headers) {
        return;
    }
    let mut reader = body.into_reader();
    let mut buf = vec![0; 16 << 10];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if !sink.send(Bytes::copy_from_slice(&buf[..n])) {
                    return;
                }
            }
            Err(e) => return sink.abort(format!("the upstream broke off: {e}")),
        }
    }
}

/// Every tool call answered, and every answer's call made, in the message before it: what a
/// provider refuses a request over. The first `checked` messages are the last request's, which
/// passed: the check goes on from the last of them that is not a tool result, before which
/// nothing was open, not from the first (a pass over a 10,000-message request on every request).
fn paired(messages: &[workmem_llm::Message], checked: usize) -> Result<(), String> {
    let from = messages[..checked.min(messages.len())].iter().rposition(|m| m.role != "tool").unwrap_or(0);
    let mut open: Vec<&str> = Vec::new();
    for (i, m) in messages.iter().enumerate().skip(from) {
        if m.role == "tool" {
            let id = m.tool_call_id.as_deref().unwrap_or_default();
            let Some(at) = open.iter().position(|c| *c == id) else {
                return Err(format!("message {i} answers a tool call {id:?} that no message before it made"));
            };
            open.remove(at);
            continue;
        }
        if let Some(id) = open.first() {
            return Err(format!("tool call {id:?} has no answer before message {i}"));
        }
        open = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
    }
    match open.first() {
        Some(id) => Err(format!("tool call {id:?} has no answer")),
        None => Ok(()),
    }
}

/// A client's request body as workmem reads it.
struct Parsed {
    request: Value,
    history: std::sync::Arc<History>,
    model: String,
    streamed: bool,
    /// The client's name for its session, where it gives one.
    client: Option<String>,
    /// Whose request it is ([`crate::sessions::Index::owner`]).
    owner: String,
    /// The answer it continues, where it sends only what follows one ([`Protocol::unchain`]).
    chained: Option<String>,
}

/// The headers a provider reads a key from (OpenAI's, Anthropic's, Azure's): who a request
/// is from, as far as the upstream can tell.
const CREDENTIALS: [&str; 3] = ["authorization", "x-api-key", "api-key"];

fn parse(app: &App, protocol: &dyn Protocol, parts: &Parts, body: &Bytes) -> Result<Parsed, Failure> {
    let credentials = CREDENTIALS.map(|name| parts.headers.get(name).map_or(&[][..], |v| v.as_bytes()));
    let caller = crate::history::caller(&credentials);
    let owner = app.sessions.owner(&credentials);
    let (mut request, history) = protocol.parse(body, &app.recent, caller).map_err(|e| match e {
        Unread::Unkept(_) => Failure::Refused(Refusal::Unkept(e)),
        Unread::Invalid(why) => Failure::Invalid(why),
    })?;
    if let Some((reason, why)) = protocol.unproxied(&request) {
        return Err(Failure::Unproxied(reason, why));
    }
    let chained = protocol.unchain(&mut request).map_err(Failure::Invalid)?;
    if let Some(name) = protocol.tool_names(&request).into_iter().find(|n| own_tool(n)) {
        return Err(Failure::Refused(Refusal::OwnToolName(name)));
    }
    let model = request["model"].as_str().unwrap_or_default().to_string();
    let streamed = request["stream"].as_bool().unwrap_or(false);
    let client = parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| protocol.client_session(&request, &parts.headers))
        .map(capped);
    Ok(Parsed { request, history, model, streamed, client, owner, chained })
}

/// The longest client name for a session kept as it came: it is stored in `meta.json` and
/// shown on the page.
const MAX_CLIENT: usize = 128;

/// A client's name for its session as it is kept: one over [`MAX_CLIENT`] bytes is its first
/// characters and a digest of the whole, so two long names that share their start stay two.
fn capped(name: String) -> String {
    if name.len() <= MAX_CLIENT {
        return name;
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(name.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}…{hex}", &name[..name.floor_char_boundary(MAX_CLIENT - 20)])
}

fn proxied(app: &App, protocol: &dyn Protocol, parts: &Parts, body: &Bytes, sink: &mut Sink) -> Result<(), Failure> {
    let Parsed { request, mut history, model, streamed, client, owner, chained } = parse(app, protocol, parts, body)?;
    // A request chained to an answer workmem logged is the history its client would have
    // resent: that session's view up to the answer, then what the request adds. It goes on
    // as a resent history does (the session continued where the answer was its last, a
    // branch of it where the client chains to an earlier one).
    let mut parent = None;
    if let Some(id) = &chained {
        let Some((from, prefix)) = app.sessions.chained(protocol.name(), &owner, client.as_deref(), id).map_err(before)? else {
            let why = "the request continues a response no session of this caller's logged (previous_response_id): its history is the one the provider stores";
            return Err(Failure::Unproxied("previous_response_id", why.to_string()));
        };
        history = std::sync::Arc::new(History::chained(prefix, &history));
        parent = Some(from);
    }
    // The session, held for the whole exchange; found again if another request extended it
    // between the search and the hold.
    loop {
        let (found, created) = app.sessions.find(protocol.name(), &owner, client.as_deref(), &history, &app.template, parent.as_deref()).map_err(before)?;
        // One exchange of a conversation at a time, on this replica and, on a shared store,
        // on every replica: the second waits for the first, then is matched against what the
        // first left (a resent request becomes a branch, as a retry does), or is refused.
        let started = std::time::Instant::now();
        let mut exchange = crate::locks::lock_within(&found.tracked.exchange, app.config.busy_wait).ok_or(Failure::Busy(app.config.busy_wait))?;
        let _held = match exchange.session.hold_exchange(app.config.busy_wait.saturating_sub(started.elapsed())) {
            Err(workmem_store::Error::Busy { .. }) => return Err(Failure::Busy(app.config.busy_wait)),
            held => held.map_err(before)?,
        };
        // Another replica extended the session since this one read it: its view is read again,
        // and the request found again against it.
        if !created && app.sessions.shared() && found.tracked.outdated(&exchange) {
            app.sessions.reload(&found.tracked, &mut exchange);
            continue;
        }
        if !created && !found.tracked.unchanged_since(&found) && found.tracked.new_in(&history).map(|(_, new)| new).as_ref() != Some(&found.new) {
            continue;
        }
        if created {
            eprintln!("workmem proxy: new session {} ({} client)", found.tracked.id, protocol.name());
        }
        // Let go of now, so that the client's next request, which may come before this
        // exchange ends, takes the history over rather than copying it (history::Recent).
        drop(history);
        let request = Request { protocol, parts, body: &request, model: &model, streamed };
        let result = found.tracked.append(&exchange, found.new).map_err(before).and_then(|()| converse(app, &request, &found.tracked, &mut exchange, sink));
        // A session made by this request that the upstream never accepted goes with it.
        if !found.tracked.accepted() {
            if let Err(e) = app.sessions.forget(&found.tracked, &exchange) {
                eprintln!("workmem proxy: session {}: removing it after its request was refused: {e}", found.tracked.id);
            }
            return result;
        }
        if app.sessions.shared() {
            found.tracked.note_logged(&exchange);
        }
        let warm = found.tracked.warm_bytes(&exchange);
        drop(exchange);
        app.warm.keep(&found.tracked, warm);
        return result;
    }
}

/// Anthropic's `count_tokens`: the request as the session would send it now (its view, what
/// the request brings that the log lacks, workmem's instructions, memory, tools and
/// context_meta), counted by the upstream, and nothing logged. A client counts to know how
/// full its context is, and behind workmem that is the bounded request, not the history it
/// holds. A history no session holds yet is counted as sent.
fn counted(app: &App, protocol: &dyn Protocol, parts: &Parts, body: &Bytes, sink: &mut Sink) -> Result<(), Failure> {
    let Parsed { request, history, model, client, owner, .. } = parse(app, protocol, parts, body)?;
    let Some(found) = app.sessions.lookup(protocol.name(), &owner, client.as_deref(), &history) else {
        return passthrough(app, parts, body.clone(), sink, None).map(drop);
    };
    let mut exchange = crate::locks::lock(&found.tracked.exchange);
    // What is new once the session is held: another request may have logged some of it.
    let new = if found.tracked.unchanged_since(&found) { Some(found.new) } else { found.tracked.new_in(&history).map(|(_, new)| new) };
    let Some(new) = new else {
        drop(exchange);
        return passthrough(app, parts, body.clone(), sink, None).map(drop);
    };
    let tools = protocol.tools(&request, &app.own_offered(protocol));
    let options = options(app, &model, &tools, &found.tracked);
    let mut engine = app.engine().map_err(before)?;
    let tokenizer = exchange.tokenizer.take().filter(|(m, _)| *m == model).map_or_else(|| workmem_llm::Tokenizer::for_model(&model), |(_, tok)| tok);
    let built = context::build(&exchange.session, &mut engine, &tokenizer, &options)
        .and_then(|b| Ok(b.with_pending(new, exchange.session.next_seq()?, &tokenizer)))
        .map_err(before);
    exchange.tokenizer = Some((model, tokenizer));
    app.give_back(engine);
    let mut built = built?;
    paired(&built.messages, 0).map_err(|why| Failure::Refused(Refusal::Unpaired(format!("the count would break tool-call pairing: {why}"))))?;
    let mut written = crate::written::Written::default();
    let (upstream, _) = protocol.upstream_body(&request, &mut built, &tools, &mut written);
    // The count read the session's view and counted its texts: kept warm as a request would.
    let warm = found.tracked.warm_bytes(&exchange);
    drop(exchange);
    app.warm.keep(&found.tracked, warm);
    let answer = send(app, &Method::POST, path(parts), &parts.headers, upstream)?;
    relay_raw(answer, sink);
    Ok(())
}

/// How a session's requests are built behind the proxy: the client's own system prompt and
/// tools beside workmem's, the whole history (the client sends it all), its opening pinned.
fn options(app: &App, model: &str, tools: &Value, t: &Tracked) -> context::Options {
    let mut options = context::Options::new(model, tools.clone()).with_window(app.config.window);
    options.system_prompt = String::new();
    options.history = HistoryMode::All;
    options.agents_md = false;
    options.memory_files = false;
    options.auto_compact = app.config.auto_compact;
    options.pinned = t.pinned();
    options
}

/// A client's request as an exchange reads it.
struct Request<'a> {
    protocol: &'a dyn Protocol,
    parts: &'a Parts,
    body: &'a Value,
    model: &'a str,
    streamed: bool,
}

/// The session's view upstream, the answer back, workmem's tools run in between, for as many
/// rounds as the model calls only those.
fn converse(app: &App, r: &Request, t: &Tracked, exchange: &mut Exchange, sink: &mut Sink) -> Result<(), Failure> {
    let (protocol, parts, request, model, streamed) = (r.protocol, r.parts, r.body, r.model, r.streamed);
    let tools = protocol.tools(request, &app.own_offered(protocol));
    let options = options(app, model, &tools, t);
    let mut engine = app.engine().map_err(before)?;
    let tokenizer = exchange.tokenizer.take().filter(|(m, _)| m == model).map_or_else(|| workmem_llm::Tokenizer::for_model(model), |(_, tok)| tok);

    let mut earlier: Vec<Value> = Vec::new();
    let mut relay = protocol.relay();
    let mut result = Ok(());
    for round in 1..=app.config.max_rounds {
        let id = t.id.clone();
        // Built on from the last request sent, whose body the next is written on from (written.rs).
        let carry = exchange.written.take_carry();
        let built = turn::bounded(&exchange.session, &app.runtime, &mut engine, &tokenizer, &options, None, carry, &mut |c| {
            eprintln!("workmem proxy: session {id}: compacted {} messages, {} → {} tokens", c.messages, c.tokens_before, c.tokens_after);
        });
        let mut built = match built {
            Ok(b) => b,
            // Past the first round the client may have part of its answer already: there it ends
            // as any failure after the upstream answered.
            Err(e @ workmem_agent::Error::OverWindow { .. }) if round == 1 => return Err(Failure::TooLong(e)),
            Err(e) if round == 1 => return Err(before(e)),
            Err(e) => {
                result = Err(after(e));
                break;
            }
        };
        // Where it was built on from the last request sent, that one's messages passed.
        if let Err(why) = paired(&built.messages, built.reused) {
            let why = Refusal::Unpaired(format!("the request would break tool-call pairing, so it was not sent: {why}"));
            result = Err(if round == 1 { Failure::Refused(why) } else { after(why) });
            break;
        }
        // The session's last body, dropped with this round's, once the client has its answer.
        let (upstream, _retired) = protocol.upstream_body(request, &mut built, &tools, &mut exchange.written);
        let sent = upstream.len();
        let answer = send(app, &Method::POST, path(parts), &parts.headers, upstream)?;
        exchange.sent = sent;
        if answer.status() == 200 {
            app.sessions.accept(t);
        } else {
            if sink.started() {
                result = Err(UpstreamFailure::LaterRound(answer.status().as_u16()).into());
            } else {
                relay_raw(answer, sink);
            }
            break;
        }
        let (completion, reply, answer_id) = if streamed {
            relay.next_round();
            let said = relay_stream(app, answer, relay.as_mut(), sink)?;
            (said, None, relay.answer_id())
        } else {
            let (head, body) = answer.into_parts();
            let limit = app.config.max_answer_bytes as u64;
            let text = body.into_with_config().limit(limit).read_to_string().map_err(|e| UpstreamFailure::Reading(limit, e.into_io()))?;
            let reply: Value = serde_json::from_str(&text).map_err(Unreadable::json("the upstream's answer"))?;
            let id = protocol.answer_id(&reply);
            (protocol.completion(&reply)?, Some((head, reply)), id)
        };
        // Once the model has answered, a failure of workmem's loses nothing of the answer: it is
        // logged, and the client gets what the model said. Logged before the client has it, so
        // that a proxy killed in between leaves a log the client's next request continues;
        // synced after, as the client's own messages are (see `Session::append_messages`).
        let usage = completion.0.usage;
        let recorded = record(app, t, exchange, &tokenizer, &built, completion, answer_id)
            .map_err(|f| eprintln!("workmem proxy: session {}: the answer went to the client, but: {f}", t.id))
            .ok();
        if recorded.is_some_and(|r| r.only_own) && round < app.config.max_rounds {
            if let Some((_, reply)) = reply {
                earlier.push(reply);
            }
            continue;
        }
        match reply {
            Some((mut head, reply)) => {
                let body = protocol.client_answer(reply, &earlier).to_string();
                head.headers.remove("content-length");
                let mut response = axum::response::Response::new(axum::body::Body::from(body));
                *response.status_mut() = head.status;
                for (name, value) in &head.headers {
                    response.headers_mut().append(name.clone(), value.clone());
                }
                sink.respond(response);
            }
            None => {
                for chunk in relay.end() {
                    if !sink.send(chunk) {
                        break;
                    }
                }
                sink.finish();
            }
        }
        // Once the client has its answer: the answer's record synced, which the client holds
        // meanwhile (a crash of the machine before the sync loses only what the client resends
        // with its next request), and the round counted, the session's own bookkeeping, a file
        // replaced and synced. Each sync before the answer added its time to every request.
        if recorded.is_some()
            && let Err(e) = exchange.session.sync_log()
        {
            eprintln!("workmem proxy: session {}: the answer went to the client, but syncing its log failed: {e}", t.id);
        }
        if recorded.is_some_and(|r| !r.counted)
            && let Err(e) = turn::count_round(&exchange.session, &built, usage)
        {
            eprintln!("workmem proxy: session {}: the answer went to the client, but counting its round failed: {}", t.id, workmem_runtime::error_chain(&e));
        }
        break;
    }
    exchange.tokenizer = Some((model.to_string(), tokenizer));
    app.give_back(engine);
    result
}

/// What [`record`] did with an answer.
#[derive(Clone, Copy)]
struct Recorded {
    /// It called only workmem's tools, so the model is asked again.
    only_own: bool,
    /// Its round is counted: before workmem's tools ran, as `workmem agent` counts it.
    counted: bool,
}

/// Logs the model's answer (with its opaque parts) and runs workmem's tools it called.
fn record(
    app: &App,
    t: &Tracked,
    exchange: &Exchange,
    tokenizer: &workmem_llm::Tokenizer,
    built: &context::Built,
    (completion, opaque): Said,
    response: Option<String>,
) -> Result<Recorded, Failure> {
    let calls = turn::record_reply(&exchange.session, built, &completion, opaque, response.clone(), Durability::Deferred).map_err(after)?;
    t.observe(0, &Message { tool_calls: calls.clone(), response, ..Message::new("assistant", completion.text.clone()) });
    let (mine, theirs): (Vec<_>, Vec<_>) = calls.into_iter().partition(|c| own_tool(&c.name));
    if !mine.is_empty() {
        // Calls the client never sees, so never resends: durable before they change anything.
        exchange.session.sync_log().map_err(after)?;
        turn::count_round(&exchange.session, built, completion.usage).map_err(after)?;
    }
    for call in &mine {
        let mut cx = ToolContext { session: &exchange.session, runtime: &app.runtime, tokenizer, llm: None, board: None, documents: None };
        let out = turn::run_tool(&mut cx, call).map_err(after)?;
        eprintln!("workmem proxy: session {}: ran {}: {}", t.id, call.name, if out.ok { "ok" } else { "refused" });
        t.observe(0, &Message { tool_call_id: Some(call.id.clone()), ..Message::new("tool", out.text) });
    }
    Ok(Recorded { only_own: !mine.is_empty() && theirs.is_empty(), counted: !mine.is_empty() })
}

/// A streamed answer relayed line by line through `relay`; what it said, once it ended.
fn relay_stream(app: &App, answer: Answer, relay: &mut dyn Relay, sink: &mut Sink) -> Result<Said, Failure> {
    let (head, body) = answer.into_parts();
    if !sink.start(head.status.as_u16(), &head.headers) {
        return Err(UpstreamFailure::ClientGone.into());
    }
    // The whole stream is capped, not each line alone: an event of many short lines, or a
    // stream that never ends, stops here.
    let limit = app.config.max_answer_bytes as u64;
    let mut reader = BufReader::new(body.into_reader()).take(limit + 1);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(UpstreamFailure::BrokeOff)?;
        if n == 0 {
            break;
        }
        if reader.limit() == 0 {
            return Err(UpstreamFailure::TooLong(limit).into());
        }
        if let Some(out) = relay.line(&line)?
            && !sink.send(out)
        {
            return Err(UpstreamFailure::ClientGone.into());
        }
    }
    if !relay.complete() {
        return Err(UpstreamFailure::Unended.into());
    }
    Ok(relay.completion()?)
}

#[cfg(test)]
mod tests {
    use super::paired;
    use workmem_llm::{FunctionCall, Message, ToolCall};

    fn calls(ids: &[&str]) -> Message {
        let call = |id: &&str| ToolCall { id: id.to_string(), kind: "function".into(), function: FunctionCall { name: "bash".into(), arguments: "{}".into() } };
        Message { tool_calls: ids.iter().map(call).collect(), ..Message::new("assistant", "") }
    }

    fn result(id: &str) -> Message {
        Message { tool_call_id: Some(id.into()), ..Message::new("tool", "out") }
    }

    /// Checked on from any number of a request's first messages that passed before (the last
    /// request's), a request is refused or passed, with the same reason, as checked whole:
    /// whatever follows them (an answer missing, made twice, for a call never made).
    #[test]
    fn pairing_checked_on_from_the_last_request_is_pairing_checked_whole() {
        let passed = [
            Message::new("system", "guide"),
            Message::new("user", "go"),
            calls(&["a", "b"]),
            result("b"),
            result("a"),
            Message::new("assistant", "ok"),
            calls(&["c"]),
            result("c"),
        ];
        let tails: [&[Message]; 6] = [
            &[],
            &[Message::new("user", "more")],
            &[calls(&["d"]), Message::new("user", "more")],
            &[result("c")],
            &[calls(&["e"]), result("x")],
            &[calls(&["f", "g"]), result("g")],
        ];
        for tail in tails {
            let request = [&passed[..], tail].concat();
            let whole = paired(&request, 0);
            for checked in 0..=passed.len() {
                assert_eq!(paired(&request, checked), whole, "{} messages checked before, then {tail:?}", checked);
            }
        }
        assert!(paired(&[&passed[..], &[result("c")]].concat(), passed.len()).is_err(), "an answer made twice");
    }
}

#[cfg(test)]
mod client_names {
    use super::{MAX_CLIENT, capped};

    /// A client's name for its session is kept whole up to the cap; a 3 MB one (once kept
    /// whole in meta.json and on the page) is cut, and two long ones that share their start
    /// stay two.
    #[test]
    fn a_long_client_name_is_capped_and_stays_distinct() {
        assert_eq!(capped("codex-1".into()), "codex-1");
        let long = "é".repeat(1_500_000);
        let (a, b) = (capped(format!("{long}a")), capped(format!("{long}b")));
        assert!(a.len() <= MAX_CLIENT + 20 && a != b, "{} {}", a.len(), b.len());
    }
}
