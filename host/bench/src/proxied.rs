//! The workmem policy through `workmem proxy` (issue 26): the trajectory's agent is a Chat
//! Completions client that knows nothing of workmem. Before each recorded step it sends its
//! whole history, as such a client does, to a real proxy on loopback; the proxy's upstream is
//! a scripted model on loopback that answers with the recorded step (with the stand-in's memory
//! updates beside it when `context_meta` asks) and hands every request it receives to the
//! meter, which counts them as it counts every other policy's.

use crate::policy::{self, Run, violations};
use crate::standin::StandIn;
use crate::{MODEL, facts, meter, readback};
use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use workmem_agent::compact;
use workmem_llm::{Message as Wire, Tokenizer};
use workmem_runtime::Runtime;
use workmem_store::{Entry, Message, Session, Sessions};

/// The scripted model's side: the step it gives next and what it has been sent.
struct Script {
    answer: Message,
    /// Whether this step's memory update was given already (a step that calls no tool of the
    /// client's is asked again by the proxy once the update has run, and has nothing to add).
    updated: bool,
    stand_in: StandIn,
    updates: u32,
    sessions: Sessions,
    /// The proxy's one session, once its first request made it.
    session: Option<Session>,
    received: Vec<Value>,
}

type Shared = Arc<Mutex<Script>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Script> {
    s.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Script {
    /// The proxy's one session (it made it on the first request), found once.
    fn session(&mut self) -> Result<Session> {
        if self.session.is_none() {
            let mut all = self.sessions.list()?;
            ensure!(all.len() == 1, "the proxy kept {} sessions of one trajectory, not one", all.len());
            self.session = Some(all.remove(0).0);
        }
        Ok(self.session.clone().expect("set above"))
    }
}

/// One upstream request: recorded and answered.
fn answer(script: &Shared, body: Value) -> Result<Value> {
    let mut s = lock(script);
    let context_meta = body["messages"].as_array().and_then(|m| m.last()).and_then(|m| m["content"].as_str()).unwrap_or_default().to_string();
    s.received.push(body);
    // Asked again after a round that called only `update_memory`: the step was said whole
    // in that round, beside the call, and the client gets the two rounds' texts as one.
    let mut reply = if s.updated { Message::new("assistant", "") } else { s.answer.clone() };
    if !s.updated && s.stand_in.asked(&context_meta) {
        let memory = s.session()?.overview()?;
        let dsl = s.stand_in.update(&memory);
        s.updates += 1;
        s.updated = true;
        let id = format!("call_workmem_update_{}", s.updates);
        reply.tool_calls.push(workmem_store::ToolCall { id, name: workmem_agent::tools::UPDATE_MEMORY.into(), arguments: json!({"dsl": dsl}).to_string() });
    }
    let wire = policy::wire(&reply);
    let finish = if wire.tool_calls.is_empty() { "stop" } else { "tool_calls" };
    Ok(json!({
        "id": format!("chatcmpl-replay-{}", s.received.len()),
        "object": "chat.completion",
        "model": MODEL,
        "choices": [{"index": 0, "message": wire, "finish_reason": finish}],
    }))
}

/// The scripted model, served on loopback.
async fn upstream(script: Shared) -> Result<String> {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let script = script.clone();
            async move {
                match answer(&script, body) {
                    Ok(v) => (axum::http::StatusCode::OK, axum::Json(v)),
                    Err(e) => (axum::http::StatusCode::INTERNAL_SERVER_ERROR, axum::Json(json!({"error": {"message": format!("{e:#}")}}))),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(url)
}

async fn proxy(runtime: Runtime, sessions: Sessions, upstream: String, window: u32) -> Result<String> {
    let config = workmem_proxy::Config {
        upstream,
        sessions,
        window,
        // As the workmem policy: the compression guide followed by the host.
        auto_compact: true,
        on_error: workmem_proxy::OnError::Fail,
        max_body_bytes: 64 << 20,
        max_answer_bytes: 16 << 20,
        max_rounds: 8,
        timeout: std::time::Duration::from_secs(60),
        slots: 1,
        slot_wait: std::time::Duration::from_secs(60),
        busy_wait: std::time::Duration::from_secs(60),
        max_warm_bytes: workmem_proxy::MAX_WARM_BYTES,
        max_sessions: workmem_proxy::MAX_SESSIONS,
    };
    let router = workmem_proxy::router(runtime, config)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(url)
}

/// The calls of `m` as `(id, name)`, to compare what the client got with what was recorded.
fn calls(m: &Value) -> Vec<(String, String)> {
    m["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| (c["id"].as_str().unwrap_or_default().to_string(), c["function"]["name"].as_str().unwrap_or_default().to_string()))
        .collect()
}

/// Replays `messages` through a proxy with a window of `window` tokens (see the module's doc).
pub fn replay<'a>(
    system: &str,
    history: &[Message],
    window: u32,
    runtime: &Runtime,
    tokenizer: &'a Tokenizer,
    scratch: &Path,
    requests: Option<&'a mut dyn Write>,
) -> Result<Run> {
    let needs = facts::needed(system, history);
    let mut meter = meter::Meter::new(tokenizer, window, requests);
    let mut answered: HashSet<String> = history.iter().filter_map(|m| m.tool_call_id.clone()).collect();

    let sessions = Sessions::new(scratch, scratch);
    let script: Shared = Arc::new(Mutex::new(Script {
        answer: Message::new("assistant", ""),
        updated: false,
        stand_in: StandIn::default(),
        updates: 0,
        sessions: sessions.clone(),
        session: None,
        received: Vec::new(),
    }));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().context("starting the replay's servers")?;
    let url = rt.block_on(async {
        let upstream = upstream(script.clone()).await?;
        proxy(runtime.clone(), sessions.clone(), upstream, window).await
    })?;
    let client: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();

    let mut seen = 0;
    for (i, recorded) in history.iter().enumerate().filter(|(_, m)| m.role == "assistant") {
        {
            let mut s = lock(&script);
            for m in &history[seen..i] {
                if m.role != "assistant" {
                    s.stand_in.saw(m);
                }
            }
            s.answer = recorded.clone();
            s.updated = false;
        }
        seen = i;
        let opening = (!system.is_empty()).then(|| Wire::new("system", system));
        let wire: Vec<Wire> = opening.into_iter().chain(history[..i].iter().map(policy::wire)).collect();
        let mut response = client
            .post(format!("{url}/v1/chat/completions"))
            .header("content-type", "application/json")
            .send(json!({"model": MODEL, "messages": wire}).to_string())
            .with_context(|| format!("sending step {i} to the proxy"))?;
        let status = response.status();
        let text = response.body_mut().read_to_string().with_context(|| format!("reading the proxy's answer to step {i}"))?;
        let got: Value = serde_json::from_str(&text).with_context(|| format!("the proxy's answer to step {i} is not JSON: {text}"))?;
        // Over the window with all that can be compacted compacted: not sent, as a request of
        // the other policies' over the window is unsendable.
        if status == 400 && got["error"]["code"] == "context_length_exceeded" {
            meter.unsent(&needs[i]);
            lock(&script).received.clear();
            continue;
        }
        if status != 200 {
            bail!("the proxy answered step {i} with HTTP {status}: {got}");
        }
        let message = &got["choices"][0]["message"];
        let expected = policy::wire(recorded);
        ensure!(
            message["content"].as_str().unwrap_or_default() == expected.content
                && calls(message) == expected.tool_calls.iter().map(|c| (c.id.clone(), c.function.name.clone())).collect::<Vec<_>>(),
            "the client got {message} for step {i}, not the recorded step"
        );
        let mut s = lock(&script);
        let session = s.session()?;
        let updated = s.updated;
        s.stand_in.saw(recorded);
        for (round, body) in std::mem::take(&mut s.received).into_iter().enumerate() {
            let request: Vec<Wire> = serde_json::from_value(body["messages"].clone()).context("the upstream's request has no messages")?;
            answered.extend(request.iter().filter_map(|m| m.tool_call_id.clone()));
            meter.run.violations += violations(&request, &answered, history);
            let sent = meter.send(&request, body.get("tools"))?;
            // The recorded step needs its facts in the request that asked for it.
            if round == 0 {
                meter.outputs(&history[..i], &request, sent);
                if updated {
                    meter.update(sent);
                }
                meter.facts(&needs[i], &request, sent, |source| {
                    let text = match seq_of(&session, &history[source])? {
                        Some(seq) => compact::read_history(&session, &seq.to_string()).map_err(workmem_agent::Error::Compact)?,
                        None => history[source].content.clone(),
                    };
                    Ok(tokenizer.count(&text))
                })?;
            }
        }
    }
    let mut s = lock(&script);
    let session = s.session()?;
    meter.run.memory_updates = s.updates;
    let applied = session.log()?.len();
    meter.run.updates_refused = s.updates.saturating_sub(u32::try_from(applied).unwrap_or(u32::MAX));
    meter.run.compactions = u32::try_from(session.records()?.iter().filter(|r| matches!(r.entry, Entry::Compaction(_))).count()).unwrap_or(u32::MAX);
    let read = readback::check(&session)?;
    meter.run.read_back = read.checked;
    meter.run.read_back_ok = read.ok;
    Ok(meter.run)
}

/// Where the proxy logged `m`: a tool output by its call's ID, anything else by role and text.
fn seq_of(session: &Session, m: &Message) -> workmem_agent::Result<Option<u64>> {
    Ok(session.records()?.iter().find_map(|r| match &r.entry {
        Entry::Message(logged) if logged.role == m.role && logged.tool_call_id == m.tool_call_id && logged.content == m.content => Some(r.seq),
        _ => None,
    }))
}
