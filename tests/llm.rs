//! The LLM client and `workmem update` against a loopback server that speaks the OpenAI
//! Chat Completions protocol, streaming included.

use crate::common;
use crate::llm_server;

use common::Workspace;
use llm_server::{Reply, Server};
use std::process::Output;
use std::time::Duration;
use workmem_llm::{Client, Config, LlmError, Message};

fn config(server: &Server, stream: bool) -> Config {
    Config {
        base_url: server.url.clone(),
        api_key: Some("test-key".into()),
        model: "test-model".into(),
        stream,
        timeout: Duration::from_millis(500),
        max_retries: 2,
        backoff: Duration::from_millis(10),
        max_answer_bytes: 100_000,
    }
}

fn ask(client: &Client) -> Result<workmem_llm::Completion, LlmError> {
    client.complete(&[Message::new("user", "hello")])
}

#[test]
fn a_plain_answer_is_read_with_its_usage() {
    let server = Server::start(vec![Reply::answer("KEY_LEARNINGS:\n")]);
    let answer = ask(&Client::new(config(&server, false))).unwrap();
    assert_eq!(answer.text, "KEY_LEARNINGS:\n");
    assert_eq!(answer.usage.unwrap().total_tokens, 120);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.authorization.as_deref(), Some("Bearer test-key"));
    assert_eq!(request.body["model"], "test-model");
    assert_eq!(request.body["messages"][0]["content"], "hello");
    assert!(request.body.get("stream").is_none());
}

#[test]
fn a_stream_is_assembled_from_its_deltas() {
    let text = "CURRENT_PROGRESS:\n  In Progress:\n    - streaming, in many small pieces\n";
    let server = Server::start(vec![Reply::streamed(text)]);
    let answer = ask(&Client::new(config(&server, true))).unwrap();
    assert_eq!(answer.text, text);
    assert_eq!(answer.usage.unwrap().prompt_tokens, 100);
    let body = &server.requests()[0].body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
}

#[test]
fn rate_limits_and_server_errors_are_retried_honouring_the_hint() {
    let server = Server::start(vec![
        Reply::status(429, vec![("retry-after-ms", "300".into())]),
        Reply::status(503, vec![("Retry-After", "1".into())]),
        Reply::answer("ok"),
    ]);
    assert_eq!(ask(&Client::new(config(&server, false))).unwrap().text, "ok");
    let r = server.requests();
    assert_eq!(r.len(), 3);
    assert!(r[1].at - r[0].at >= Duration::from_millis(300), "retry-after-ms was not honoured");
    assert!(r[2].at - r[1].at >= Duration::from_secs(1), "Retry-After was not honoured");
}

#[test]
fn retries_end_with_the_last_error() {
    let server = Server::start(vec![Reply::status(500, vec![]), Reply::status(500, vec![]), Reply::status(500, vec![])]);
    match ask(&Client::new(config(&server, false))) {
        Err(LlmError::Provider(r)) if r.status == 500 => {}
        other => panic!("want HTTP 500, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 3, "one attempt and two retries");

    let limited = Server::start(vec![Reply::status(429, vec![("Retry-After", "3600".into())])]);
    match ask(&Client::new(config(&limited, false))) {
        Err(LlmError::Provider(r)) if r.rate_limited() => assert_eq!(r.retry_after, Some(Duration::from_secs(3600))),
        other => panic!("want a rate limit, got {other:?}"),
    }
    assert_eq!(limited.requests().len(), 1, "an hour's wait is not waited out");
}

#[test]
fn client_errors_are_not_retried() {
    let server = Server::start(vec![Reply::status(400, vec![]), Reply::answer("never reached")]);
    match ask(&Client::new(config(&server, false))) {
        Err(LlmError::Provider(r)) if r.status == 400 => assert_eq!((r.message.as_str(), r.code.as_deref()), ("scripted 400", Some("test"))),
        other => panic!("want HTTP 400, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

/// OpenAI's rate-limit reset headers, when it sends no `retry-after`, say how long to wait.
#[test]
fn a_rate_limit_waits_for_its_reset_header() {
    let server = Server::start(vec![
        Reply::status(429, vec![("x-ratelimit-reset-requests", "20ms".into()), ("x-ratelimit-reset-tokens", "1.2s".into())]),
        Reply::answer("ok"),
    ]);
    assert_eq!(ask(&Client::new(config(&server, false))).unwrap().text, "ok");
    let r = server.requests();
    assert!(r[1].at - r[0].at >= Duration::from_millis(1200), "the later reset was not waited for");
}

/// What a user needs from a provider's refusal, said once each: the URL, the status, the
/// provider's own code and message; under `--json` as fields. A quota or billing 429 is not
/// a rate limit: waiting does not cure it, so it is not retried.
#[test]
fn provider_errors_say_what_the_provider_said() {
    let quota = r#"{"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}"#;
    let unauthorized =
        r#"{"error": {"message": "Incorrect API key provided: sk-test.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}"#;
    let overloaded = r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
    let cases = [
        (429, quota, "insufficient_quota", "check your plan and billing details", 1),
        (401, unauthorized, "invalid_api_key", "Incorrect API key provided", 1),
        (529, overloaded, "overloaded_error", "Overloaded", 3),
    ];
    common::each(
        cases,
        |c| format!("HTTP {}", c.0),
        |(status, body, code, message, requests)| {
            let ws = Workspace::new(&format!("provider-{status}"));
            let before = ws.files();
            let script = vec![Reply::Json { status, headers: vec![], body: body.to_string() }; 3];
            let server = Server::start(script);
            let out = update(&ws, &server, &["--json", "--retries", "2"]);
            assert_eq!(out.status.code(), Some(1), "{status}");
            assert_eq!(server.requests().len(), requests, "{status}: attempts");
            let err = stderr(&out);
            let url = format!("{}/chat/completions", server.url);
            for once in [url.as_str(), &format!("HTTP {status}"), code, message] {
                assert_eq!(err.matches(once).count(), 1, "{status}: {once:?} once in {err}");
            }
            assert!(!err.contains("rate limiting"), "{status}: {err}");
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let e = &v["error"];
            assert_eq!((e["kind"].as_str(), e["status"].as_u64(), e["provider_code"].as_str()), (Some("model"), Some(u64::from(status)), Some(code)), "{v}");
            assert!(e["provider_message"].as_str().unwrap().contains(message) && e["url"] == url.as_str(), "{v}");
            assert_eq!(ws.files(), before, "{status}: the memory changed");
        },
    );
}

/// A hostile provider's error message reaches the terminal shown, not obeyed (an OSC 52
/// clipboard write in it is printed as `\u{1b}`).
#[test]
fn a_providers_words_are_shown_not_obeyed() {
    let ws = Workspace::new("provider-escape");
    let body = serde_json::json!({"error": {"message": "denied \u{1b}]52;c;cm0gLXJmIH4=\u{7}", "code": "bad"}}).to_string();
    let server = Server::start(vec![Reply::Json { status: 403, headers: vec![], body }]);
    let out = update(&ws, &server, &["--retries", "0"]);
    let err = stderr(&out);
    assert!(!err.contains('\u{1b}') && err.contains("denied \\u{1b}]52;c;"), "{err:?}");
}

/// A provider that cannot be reached is named.
#[test]
fn an_unreachable_provider_is_named() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", free.local_addr().unwrap());
    drop(free);
    let ws = Workspace::new("unreachable");
    let out = ws.cmd(Some(&url), &["update", "--session", "s", "--task", "t", "--retries", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&format!("could not reach the LLM at {url}/chat/completions")), "{}", stderr(&out));
}

#[test]
fn a_hung_connection_times_out_and_is_retried() {
    let server = Server::start(vec![Reply::Hang, Reply::answer("after the hang")]);
    assert_eq!(ask(&Client::new(config(&server, false))).unwrap().text, "after the hang");
    let r = server.requests();
    assert!(r[1].at - r[0].at >= Duration::from_millis(500));

    let hung = Server::start(vec![Reply::Hang]);
    let client = Client::new(Config { max_retries: 0, ..config(&hung, true) });
    assert!(matches!(ask(&client), Err(LlmError::Timeout(_))));
}

#[test]
fn a_stream_cut_mid_way_is_not_an_answer() {
    let server = Server::start(vec![Reply::cut("CURRENT_PROGRESS:\n  In Progress:\n    - cut here\n"); 3]);
    match ask(&Client::new(config(&server, true))) {
        Err(LlmError::Other(msg)) => assert!(msg.contains("connection") || msg.contains("[DONE]"), "{msg}"),
        other => panic!("want a broken stream, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 3, "a broken stream is retried");
}

// ---- `workmem update`, end to end --------------------------------------------------

const VALID: &str = "CURRENT_PROGRESS:\n  In Progress:\n    - Fixing the parser\nKEY_LEARNINGS:\n  ADD:\n    - because it matters: the fix is in parse.rs\n";
const INVALID: &str = "KEY_LEARNINGS:\n  ADD:\n    - no reason here\n";

fn update(ws: &Workspace, server: &Server, extra: &[&str]) -> Output {
    let mut args = vec!["update", "--session", "s", "--task", "Fix the parser", "--timeout", "0.5"];
    args.extend_from_slice(extra);
    ws.cmd(Some(&server.url), &args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn update_applies_a_streamed_answer() {
    let ws = Workspace::new("valid");
    let server = Server::start(vec![Reply::streamed(VALID)]);
    let out = update(&ws, &server, &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(ws.learnings()[0]["text"], "the fix is in parse.rs");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report["prompt_tokens"].as_u64(), report["completion_tokens"].as_u64()), (Some(100), Some(20)), "usage reaches the report");
    let request = &server.requests()[0].body;
    assert_eq!(request["messages"][0]["role"], "system");
    let prompt = request["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("## Latest task\n\nFix the parser") && prompt.contains("CURRENT_PROGRESS:"));
}

#[test]
fn update_re_prompts_with_the_diagnostics_then_applies() {
    let ws = Workspace::new("reprompt");
    let server = Server::start(vec![Reply::answer(INVALID), Reply::answer(VALID)]);
    let out = update(&ws, &server, &["--no-stream"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("applied after 2 LLM call(s)"));
    let second = &server.requests()[1].body["messages"];
    assert_eq!(second[2]["role"], "assistant");
    assert_eq!(second[2]["content"], INVALID);
    let correction = second[3]["content"].as_str().unwrap();
    assert!(correction.contains("line 3, column 7: a Key Learnings ADD bullet must start with `because <reason>:`"), "{correction}");
    assert_eq!(ws.learnings().as_array().unwrap().len(), 1);
}

#[test]
fn update_gives_up_cleanly_when_the_answers_stay_invalid() {
    let ws = Workspace::new("invalid");
    let before = ws.files();
    let server = Server::start(vec![Reply::streamed(INVALID), Reply::streamed(INVALID), Reply::streamed(INVALID), Reply::streamed(VALID)]);
    let out = update(&ws, &server, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("still invalid after 3 attempts"), "{}", stderr(&out));
    assert!(stderr(&out).contains("- line 3, column 7: a Key Learnings ADD bullet must start with"), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 3, "one call and two re-prompts");
    assert_eq!(ws.files(), before, "the memory changed");
}

#[test]
fn update_rides_out_429_and_500() {
    let ws = Workspace::new("retry");
    let server = Server::start(vec![Reply::status(429, vec![("retry-after-ms", "50".into())]), Reply::status(500, vec![]), Reply::streamed(VALID)]);
    let out = update(&ws, &server, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 3);
    assert_eq!(ws.learnings().as_array().unwrap().len(), 1);
}

#[test]
fn update_failures_leave_the_memory_unchanged() {
    let cases: [(&str, Vec<Reply>, &str); 4] = [
        ("hang", vec![Reply::Hang], "did not answer within"),
        ("cut", vec![Reply::cut(VALID)], "broke"),
        ("limited", vec![Reply::status(429, vec![])], "HTTP 429"),
        ("down", vec![Reply::status(502, vec![])], "HTTP 502"),
    ];
    common::each(
        cases,
        |c| c.0.to_string(),
        |(name, script, message)| {
            let ws = Workspace::new(name);
            let before = ws.files();
            let server = Server::start(script);
            let out = update(&ws, &server, &["--retries", "0"]);
            assert_eq!(out.status.code(), Some(1), "{name}");
            assert!(stderr(&out).contains(message), "{name}: {}", stderr(&out));
            assert!(stderr(&out).contains("nothing was applied"), "{name}: {}", stderr(&out));
            assert_eq!(ws.files(), before, "{name}: the memory changed");
        },
    );
}

#[test]
fn settings_come_from_the_config_file_when_the_environment_has_none() {
    let ws = Workspace::new("config");
    let server = Server::start(vec![Reply::answer(VALID)]);
    let config = ws.root.join("config.json");
    std::fs::write(&config, serde_json::json!({"base_url": server.url, "api_key": "from-file"}).to_string()).unwrap();
    let out = ws
        .cmd(None, &["update", "--session", "s", "--task", "t", "--no-stream"])
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env("WORKMEM_CONFIG", &config)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests()[0].authorization.as_deref(), Some("Bearer from-file"));

    std::fs::write(&config, r#"{"base_url": "http://127.0.0.1:9", "modle": "typo"}"#).unwrap();
    let out = ws.cmd(None, &["update", "--session", "s", "--task", "t"]).env("WORKMEM_CONFIG", &config).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("config.json is not valid") && err.contains("unknown field `modle`"), "{err}");
}

#[test]
fn a_trap_inside_the_sandboxed_update_writes_nothing() {
    let ws = Workspace::new("sandbox-trap");
    let before = ws.files();
    // An answer larger than the sandbox's memory: the guest's allocation fails, which traps.
    let huge = "KEY_LEARNINGS:\n  ADD:\n".to_string() + &"    - because it is big: a learning that takes up space\n".repeat(60_000);
    let server = Server::start(vec![Reply::answer(&huge)]);
    let config = Config { stream: false, max_answer_bytes: 8 << 20, ..config(&server, false) };
    let options = workmem_runtime::Options { max_memory_bytes: 2 << 20, ..common::options() };
    let runtime = workmem_runtime::Runtime::new(&options).unwrap();
    let session = workmem_store::Session::open(&ws.session).unwrap();
    match workmem_agent::update::memory_update(&runtime, &session, Client::new(config), "t", 0) {
        Err(workmem_agent::Error::Engine(workmem_runtime::Error::MemoryLimit { .. })) => {}
        other => panic!("expected a trap, got {other:?}"),
    }
    assert_eq!(ws.files(), before, "a trapped update wrote something");
}

/// Issue 9: an SSE line that never ends reached 4.7 GB before; now every answer is capped,
/// streamed or not, the error names the setting, and it is not retried.
#[test]
fn answers_past_the_cap_are_refused_whatever_their_shape() {
    let capped = |server: &Server, stream: bool| Config { timeout: Duration::from_secs(20), max_answer_bytes: 10_000, ..config(server, stream) };
    let big = "y".repeat(15_000);
    let cases = [(Reply::Endless, true), (Reply::streamed(&big), true), (Reply::answer(&big), false)];
    let shapes = ["endless", "streamed", "whole"];
    common::each(
        cases.into_iter().zip(shapes),
        |c| c.1.to_string(),
        |((reply, stream), _)| {
            let server = Server::start(vec![reply]);
            let started = std::time::Instant::now();
            let err = ask(&Client::new(capped(&server, stream))).unwrap_err();
            assert!(matches!(err, LlmError::TooLarge { limit: 10_000 }), "{err:?}");
            assert!(err.to_string().contains("$WORKMEM_MAX_ANSWER_BYTES"), "{err}");
            assert_eq!(server.requests().len(), 1, "a refused answer is not asked for again");
            assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        },
    );
    // Under the cap, the same answers are taken.
    let fits = "z".repeat(9_000);
    for (reply, stream) in [(Reply::streamed(&fits), true), (Reply::answer(&fits), false)] {
        let server = Server::start(vec![reply]);
        assert_eq!(ask(&Client::new(capped(&server, stream))).unwrap().text, fits);
    }
}

/// Our count of a request against what a provider reported for it (tests/data/provider-usage:
/// OpenAI's own published request with a tool, and recorded exchanges with tool calls and
/// results in the history, each with the `usage.prompt_tokens` its answer reported), not
/// against a copy of our formula. The tool definitions, which the provider renders in a form
/// it does not publish, are counted from their JSON: the total must never be under what was
/// reported (an undercount would let a request past the window), and is today 30% over for
/// the published request (131 for 101 on gpt-4o) and 64% for a recorded one whose one tool is
/// a strict schema (82 for 50): the JSON of a schema costs more tokens than the provider's
/// rendering of it. The provider's reported usage corrects that after the first request; the
/// test holds it under twice. Where a recorded request extends the one before it by a tool call and its result,
/// what we count for those two messages is held to what the provider charged for them: never
/// under, and within a few tokens, since no tool JSON blurs that difference.
#[test]
fn counts_hold_to_what_a_provider_reported() {
    let folder = crate::common::root().join("tests/data/provider-usage");
    let mut files: Vec<_> = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut differences = 0;
    for file in files {
        let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let mut before: Option<(Vec<Message>, serde_json::Value, serde_json::Map<String, serde_json::Value>)> = None;
        for request in fixture["requests"].as_array().unwrap() {
            let messages: Vec<Message> = serde_json::from_value(request["messages"].clone()).unwrap();
            let reported_by_model = request["prompt_tokens"].as_object().unwrap().clone();
            for (model, reported) in &reported_by_model {
                let tokenizer = workmem_llm::Tokenizer::for_model(model);
                let (chat, tools) = (tokenizer.count_chat(&messages), tokenizer.count_tools(&request["tools"]));
                let reported = reported.as_u64().unwrap() as u32;
                eprintln!("{}, {model}: messages {chat} + tools {tools} = {} counted, {reported} reported", file.display(), chat + tools);
                assert!(chat < reported, "{model}: the messages alone ({chat}) are over the reported total ({reported})");
                assert!(chat + tools >= reported, "{model}: counted {} for a request the provider counted {reported}", chat + tools);
                assert!(chat + tools < reported * 2, "{model}: counted {} for {reported}: twice or more", chat + tools);
                let Some((earlier, earlier_tools, earlier_reported)) = &before else { continue };
                let Some(charged_before) = earlier_reported.get(model).and_then(|n| n.as_u64()) else { continue };
                if earlier_tools != &request["tools"] || !messages.starts_with(earlier) {
                    continue;
                }
                let added = &messages[earlier.len()..];
                let counted: u32 = added.iter().map(|m| tokenizer.count_message(m)).sum();
                let charged = reported - charged_before as u32;
                eprintln!("{model}: {} added messages counted {counted}, charged {charged}", added.len());
                assert!(added.iter().any(|m| !m.tool_calls.is_empty()), "{}: a difference without a tool call proves nothing here", file.display());
                assert!(counted >= charged, "{model}: a tool call and its result counted {counted}, charged {charged}");
                assert!(counted <= charged + 4, "{model}: a tool call and its result counted {counted}, charged {charged}");
                differences += 1;
            }
            before = Some((messages, request["tools"].clone(), reported_by_model));
        }
    }
    assert!(differences >= 2, "the fixtures hold {differences} requests that extend another by a tool call");
}
