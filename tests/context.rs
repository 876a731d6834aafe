//! Context assembly through the component with the host's session, tokenizer and files.

use crate::common;

use std::path::{Path, PathBuf};
use workmem_agent::context::{self, Options};
use workmem_agent::tools;
use workmem_llm::Tokenizer;
use workmem_runtime::HistoryMode;
use workmem_store::Message;
use workmem_store::{Session, Sessions};

fn session(name: &str, runtime: &workmem_runtime::Runtime) -> (PathBuf, Session) {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("context-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let template = runtime.instance().unwrap().overview_template().unwrap();
    let s = Sessions::new(&root.join("sessions"), &root).create(Some("s"), &template).unwrap();
    (root, s)
}

fn say(s: &Session, role: &str, content: &str) {
    s.append_message(Message::new(role, content)).unwrap();
}

#[test]
fn tokens_used_is_the_tokenizer_count_of_the_request() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let (_, s) = session("tokens", &runtime);
    say(&s, "user", "Fix the flaky test in tests/test_units.py — it fails one run in ten.");
    let call =
        workmem_store::ToolCall { id: "c1".into(), name: "read_file".into(), arguments: r#"{"path": "working-memory/detail/a-long-file-name.md"}"#.into() };
    s.append_message(Message { tool_calls: vec![call], ..Message::new("assistant", "") }).unwrap();
    s.append_message(Message { tool_call_id: Some("c1".into()), ..Message::new("tool", "its text") }).unwrap();
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let options = Options { history: HistoryMode::All, ..Options::new("gpt-4o", tools::openai_tools(false, false)) };
    let built = context::build(&s, &mut engine, &tokenizer, &options).unwrap();
    let (request, meta) = built.messages.split_at(built.messages.len() - 1);
    let expected = common::oracle_tokens(request, &options.tools) as usize;
    // The oracle itself, pinned on one small request with a tool call and a tools array,
    // piece by piece in o200k_base: user ["user"] "Fix it" ["Fix", " it"]: 3+1+2; assistant
    // ["assistant"] "" calling read_file ["read", "_file"] with {} ["{}"]: 3+1+0 + 8+2+1; the
    // reply's 3; tools [{"type":"function"}] ("[", "{\"", "type", "\":\"", "function",
    // "\"}", "]"): 12+7. 6 + 15 + 3 + 19 = 43.
    let small = [
        workmem_llm::Message::new("user", "Fix it"),
        workmem_llm::Message {
            tool_calls: vec![workmem_llm::ToolCall {
                id: "c1".into(),
                kind: "function".into(),
                function: workmem_llm::FunctionCall { name: "read_file".into(), arguments: "{}".into() },
            }],
            ..workmem_llm::Message::new("assistant", "")
        },
    ];
    assert_eq!(common::oracle_tokens(&small, &serde_json::json!([{"type": "function"}])), 43);
    assert!(request.iter().any(|m| !m.tool_calls.is_empty()));
    assert_eq!(built.stats.tokens_used as usize, expected);
    assert_eq!(built.tokens as usize, common::oracle_tokens(&built.messages, &options.tools) as usize, "the whole request, context_meta included");
    assert_eq!(meta[0].role, "system");
    assert!(meta[0].content.contains(&format!("\"tokens_used\":{expected},")));
    assert_eq!(built.stats.messages_in_history, 3);
    assert_eq!(Tokenizer::for_model("gpt-4").encoding, "cl100k_base");
    assert_eq!(Tokenizer::for_model("gpt-4o-mini").encoding, "o200k_base");
    assert_eq!(Tokenizer::for_model("some-local-model").encoding, "o200k_base");
    assert_eq!(Tokenizer::for_model("text-davinci-003").encoding, "cl100k_base", "a retired GPT-3 model's vocabulary is not carried");
}

#[test]
fn the_prefix_is_byte_identical_until_what_it_holds_changes() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let (_, s) = session("prefix", &runtime);
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let options = Options { history: HistoryMode::All, ..Options::new("gpt-4o", tools::openai_tools(false, false)) };
    let prefix = |engine: &mut workmem_runtime::Instance| {
        let built = context::build(&s, engine, &tokenizer, &options).unwrap();
        let history = s.records().unwrap().len();
        serde_json::to_string(&built.messages[..built.messages.len() - 1 - history]).unwrap()
    };
    say(&s, "user", "first");
    let first = prefix(&mut engine);
    say(&s, "assistant", "answer");
    say(&s, "user", "second");
    assert_eq!(prefix(&mut engine), first, "new history changed the prefix");
    s.memory_files().write("working-memory/overview.md", "# Working Memory\n\n## Current task\nSecond\n").unwrap();
    assert_ne!(prefix(&mut engine), first, "the prefix must carry the new working memory");
}

#[test]
fn history_is_stripped_once_the_llm_maintains_its_overview() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let (root, s) = session("strip", &runtime);
    std::fs::write(root.join("AGENTS.md"), "Always run the tests.").unwrap();
    for (role, text) in [("user", "task one"), ("assistant", "done one"), ("user", "task two"), ("assistant", "on it")] {
        say(&s, role, text);
    }
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let contents = |engine: &mut workmem_runtime::Instance| -> Vec<String> {
        context::build(&s, engine, &tokenizer, &Options::new("gpt-4o", tools::openai_tools(false, false)))
            .unwrap()
            .messages
            .into_iter()
            .map(|m| m.content)
            .collect()
    };
    let before = contents(&mut engine);
    assert_eq!(before[1], "# AGENTS.md\n\nAlways run the tests.");
    assert!(before.iter().any(|c| c == "task one"), "the template is not maintained memory: history stays");
    s.memory_files().write("working-memory/overview.md", "# Working Memory\n\n## Current task\nTask two\n").unwrap();
    let after = contents(&mut engine);
    assert!(!after.iter().any(|c| c == "task one"), "history must go once the overview is maintained");
    assert!(after.iter().any(|c| c == "task two") && after.iter().any(|c| c == "on it"), "the active turn stays");
    assert!(after[2].contains("Task two"));
    assert_eq!(s.records().unwrap().len(), 4, "messages.jsonl keeps every message");
}

/// The host splices the history after the frame the engine decides (it does not send the
/// history across and back); in every mode, with AGENTS.md, that is the request the engine's
/// `assemble` (what the other runtimes call) gives for the same inputs, counted the same.
#[test]
fn the_spliced_request_is_the_engines_assemble() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let (root, s) = session("frame", &runtime);
    std::fs::write(root.join("AGENTS.md"), "Always run the tests.").unwrap();
    say(&s, "user", "task one");
    let call = workmem_store::ToolCall { id: "c1".into(), name: "read_file".into(), arguments: "{}".into() };
    s.append_message(Message { tool_calls: vec![call], ..Message::new("assistant", "") }).unwrap();
    s.append_message(Message { tool_call_id: Some("c1".into()), ..Message::new("tool", "its text") }).unwrap();
    say(&s, "user", "task two");
    say(&s, "assistant", "on it");
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let shown = |m: &workmem_runtime::ChatMessage| {
        (
            m.role.clone(),
            m.content.clone(),
            m.tool_call_id.clone(),
            m.tool_calls.iter().map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone())).collect::<Vec<_>>(),
        )
    };
    let sent = |m: &workmem_llm::Message| {
        let calls = m.tool_calls.iter().map(|c| (c.id.clone(), c.function.name.clone(), c.function.arguments.clone())).collect::<Vec<_>>();
        (m.role.clone(), m.content.clone(), m.tool_call_id.clone(), calls)
    };
    let mut starts = Vec::new();
    for (mode, maintained) in [
        (HistoryMode::Auto, false),
        (HistoryMode::Auto, true),
        (HistoryMode::All, true),
        (HistoryMode::ActiveTurn, false),
        (HistoryMode::LastN(3), true),
        (HistoryMode::LastN(1), true),
    ] {
        let overview =
            if maintained { "# Working Memory\n\n## Current task\nTask two\n".to_string() } else { runtime.instance().unwrap().overview_template().unwrap() };
        s.memory_files().write("working-memory/overview.md", &overview).unwrap();
        let options = Options { history: mode, ..Options::new("gpt-4o", tools::openai_tools(false, false)) };
        let built = context::build(&s, &mut engine, &tokenizer, &options).unwrap();
        let request = workmem_runtime::ContextRequest {
            system_prompt: options.system_prompt.clone(),
            agents_md: Some("Always run the tests.".into()),
            overview,
            history: context::view(&s, &tokenizer).unwrap().into_iter().map(|e| e.message).collect(),
            active_turn: 3,
            history_mode: mode,
            overview_path: context::OVERVIEW_PATH.into(),
            detail_path: context::DETAIL_PATH.into(),
        };
        let assembled = engine.assemble_context(&request).unwrap();
        let (spliced, meta) = built.messages.split_at(built.messages.len() - 1);
        assert_eq!(spliced.iter().map(sent).collect::<Vec<_>>(), assembled.iter().map(shown).collect::<Vec<_>>(), "{mode:?}, maintained: {maintained}");
        let wire: Vec<workmem_llm::Message> = spliced.to_vec();
        assert_eq!(built.counted, tokenizer.count_chat(&wire) + tokenizer.count_tools(&options.tools) + tokenizer.count_message(&meta[0]), "{mode:?}");
        // Two messages before the history while the memory is the template (it is not sent).
        starts.push(spliced.len() - spliced.iter().take_while(|m| m.role == "system").count());
    }
    // Whole, the active turn, whole, the active turn, back to the call its result needs, the active turn.
    assert_eq!(starts, [5, 2, 5, 2, 4, 2], "the history each mode carried");
}

/// AGENTS.md is read as a memory file is: a symlink (to a secret outside the project), a
/// hard link, a FIFO (which would hang the read) and a file over the cap are each refused
/// with the rule, and never reach the request.
/// An `overview.md` the model wrote at 1 MB goes into a request as its head within a quarter
/// of the window, with a line saying what was left out; one that fits goes whole.
#[test]
fn the_memory_takes_at_most_its_share_of_the_window() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let (_, s) = session("memory-share", &runtime);
    say(&s, "user", "go");
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let options = Options { tokens_max: 16_000, ..Options::new("gpt-4o", tools::openai_tools(false, false)) };
    let line = "- a line the model wrote into its overview, one of many\n";
    std::fs::write(s.overview_path(), line.repeat((1 << 20) / line.len())).unwrap();
    let built = context::build(&s, &mut engine, &tokenizer, &options).unwrap();
    assert!(built.tokens < 16_000 / 2, "the request took {} tokens of a 16,000 window", built.tokens);
    let request = serde_json::to_string(&built.messages).unwrap();
    assert!(request.contains("working-memory/overview.md is 1048"), "the cut is said");
    assert!(request.matches("one of many").count() > 100, "the head is sent");
    let whole = line.repeat(50);
    std::fs::write(s.overview_path(), &whole).unwrap();
    let built = context::build(&s, &mut engine, &tokenizer, &options).unwrap();
    let request = serde_json::to_string(&built.messages).unwrap();
    assert_eq!(request.matches("one of many").count(), 50, "a memory that fits goes whole");
    assert!(!request.contains("fit this request's share"));
}

#[test]
fn agents_md_is_read_beneath_the_project_and_capped() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let (root, s) = session("agents-md", &runtime);
    say(&s, "user", "go");
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let agents = root.join("AGENTS.md");
    let secret = root.parent().unwrap().join(format!("secret-{}", std::process::id()));
    std::fs::write(&secret, "AWS_SECRET=hunter2").unwrap();
    let refused = |engine: &mut workmem_runtime::Instance, why: &str| {
        let started = std::time::Instant::now();
        let error = context::build(&s, engine, &tokenizer, &Options::new("gpt-4o", tools::openai_tools(false, false)))
            .map(|b| format!("{:?}", b.messages))
            .unwrap_err();
        let message = workmem_runtime::error_chain(&error);
        assert!(message.contains("\"AGENTS.md\" is refused") && message.contains(why), "{message}");
        assert!(!message.contains("hunter2"));
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "the read did not wait");
    };
    std::os::unix::fs::symlink(&secret, &agents).unwrap();
    refused(&mut engine, "symlink");
    std::fs::remove_file(&agents).unwrap();
    std::fs::hard_link(&secret, &agents).unwrap();
    refused(&mut engine, "hard link");
    std::fs::remove_file(&agents).unwrap();
    rustix::fs::mknodat(rustix::fs::CWD, &agents, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o644), 0).unwrap();
    refused(&mut engine, "not a regular file");
    std::fs::remove_file(&agents).unwrap();
    std::fs::write(&agents, "x".repeat(context::AGENTS_MD_MAX as usize + 1)).unwrap();
    refused(&mut engine, &format!("over {} bytes", context::AGENTS_MD_MAX));
    std::fs::write(&agents, "x".repeat(context::AGENTS_MD_MAX as usize)).unwrap();
    assert!(context::build(&s, &mut engine, &tokenizer, &Options::new("gpt-4o", tools::openai_tools(false, false))).is_ok(), "a file at the cap is read");
    std::fs::remove_file(&secret).unwrap();
}

#[test]
fn thresholds_take_percentages_or_token_counts() {
    assert_eq!(context::threshold("50%", 128_000).unwrap(), 64_000);
    assert_eq!(context::threshold(" 12.5 % ", 1_000_000).unwrap(), 125_000);
    assert_eq!(context::threshold("64000", 1_000_000).unwrap(), 64_000);
    assert!(context::threshold("150%", 1000).is_err());
    assert!(context::threshold("half", 1000).is_err());
}

#[test]
fn the_reminders_follow_rounds_and_tokens() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let (_, s) = session("remind", &runtime);
    say(&s, "user", "go");
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let meta_text =
        |engine: &mut workmem_runtime::Instance, options: &Options| context::build(&s, engine, &tokenizer, options).unwrap().messages.pop().unwrap().content;
    let options = Options::new("gpt-4o", tools::openai_tools(false, false));
    let strong = Options { strong_reminder_tokens: Some(100), ..options.clone() };
    let quiet = |text: String| text.lines().count() == 3 && text.ends_with("}\n</context_meta>");
    assert!(quiet(meta_text(&mut engine, &options)), "no update is due yet");
    assert!(quiet(meta_text(&mut engine, &strong)), "past the strong threshold, but no update is due yet");
    let mut meta = s.meta().unwrap();
    meta.rounds = 12;
    std::fs::write(s.path("meta.json"), serde_json::to_vec(&meta).unwrap()).unwrap();
    assert!(meta_text(&mut engine, &options).contains("not updated working-memory/overview.md for 12 rounds"));
    assert!(meta_text(&mut engine, &strong).contains("Archive finished work"));
}

/// Issue 9: an agent that wrote a 1 MB file at each of 128 steps left a 134 MB log, and every
/// later request trapped in the engine, for good. The history window is chosen before
/// anything crosses into the engine (a request's history no longer does; a compaction plans
/// over it), so the session keeps working whatever the log's size against the sandbox's
/// memory (here a log of 16 MB against 12 MB of sandbox memory).
#[test]
fn no_log_size_breaks_a_session() {
    let runtime = common::runtime();
    let (root, s) = session("huge-log", &runtime);
    say(&s, "user", "Write the data files.");
    let megabyte = "0123456789abcdef".repeat(1 << 16);
    for step in 0..8 {
        let call = workmem_store::ToolCall {
            id: format!("call_{step}"),
            name: "write_file".into(),
            arguments: serde_json::json!({"path": format!("data/{step}.txt"), "content": megabyte}).to_string(),
        };
        s.append_message(Message { tool_calls: vec![call], ..Message::new("assistant", "") }).unwrap();
        s.append_message(Message { tool_call_id: Some(format!("call_{step}")), ..Message::new("tool", megabyte.clone()) }).unwrap();
    }
    assert!(std::fs::metadata(s.path("messages.jsonl")).unwrap().len() > 16 << 20);
    let run = |args: &[&str], window: usize| {
        std::process::Command::new(env!("CARGO_BIN_EXE_workmem"))
            .args(args)
            .args(["--session", s.dir().to_str().unwrap(), "--json"])
            .current_dir(&root)
            .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
            .env("WORKMEM_MAX_MEMORY_BYTES", (12 << 20).to_string())
            .env("WORKMEM_MAX_HISTORY_BYTES", window.to_string())
            .output()
            .unwrap()
    };
    let context = |window: usize| run(&["context", "--history", "all"], window);
    // Without a window that fits, a compaction reaches the engine's memory limit, says so, and
    // changes nothing.
    let out = run(&["compact", "--target", "tools"], 1 << 30);
    assert_eq!(out.status.code(), Some(1));
    let err: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = err["error"]["message"].as_str().unwrap_or_default();
    assert!(err.contains("needed more than its 12582912 bytes of memory") && err.contains("$WORKMEM_MAX_MEMORY_BYTES"), "{err}");
    assert!(!err.contains("wasm backtrace") && err.lines().count() == 1, "{err}");
    assert_eq!(s.records().unwrap().len(), 17, "nothing was logged");

    let out = context(1 << 20);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let built: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let messages = built["messages"].as_array().unwrap();
    // The task stays in front; the window starts at a call, never at an orphaned result.
    let history: Vec<&serde_json::Value> = messages.iter().filter(|m| m["role"] != "system").collect();
    assert_eq!(history[0]["content"], "Write the data files.");
    assert_eq!(history[1]["role"], "assistant");
    assert_eq!(history.last().unwrap()["tool_call_id"], "call_7");
    let bytes: usize = history.iter().map(|m| m.to_string().len()).sum();
    assert!(bytes < 3 << 19, "{bytes} bytes of history crossed");
    assert!(history.iter().any(|m| m["content"].as_str().unwrap_or("").contains("read_history with seq")));
    let out = run(&["compact", "--target", "tools", "--keep-recent", "1"], 1 << 20);
    assert!(out.status.success(), "within the window it compacts: {}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_dir_all(&root);
}

/// With the whole history sent, a memory change made by the model's own tool call keeps the
/// request's prefix as it was (the history shows the call); any other change reaches the prefix.
#[test]
fn memory_changes_the_history_shows_keep_the_prefix() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let (_, s) = session("chain", &runtime);
    say(&s, "user", "go");
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let options = Options { history: HistoryMode::All, ..Options::new("gpt-4o", tools::openai_tools(false, false)) };
    let memory = |engine: &mut workmem_runtime::Instance, options: &Options| {
        let built = context::build(&s, engine, &tokenizer, options).unwrap();
        built.messages.iter().find(|m| m.content.starts_with("<working_memory")).map(|m| m.content.clone()).unwrap_or_default()
    };
    assert_eq!(memory(&mut engine, &options), "", "a memory that is still the template is not sent");
    workmem_commit::apply(&runtime, &s, "KEY_LEARNINGS:\n  ADD:\n    - because the task said so: go\n").unwrap();
    let before = memory(&mut engine, &options);
    assert!(before.contains("KL-1"), "{before}");
    let mut dsl = String::from("KEY_LEARNINGS:\n  ADD:\n    - because the tool said so: the cache keys are per vault\n");
    for k in 0..8 {
        dsl.push_str(&format!("    - because step {k} showed it: the worker pool drains its queue {k} before it stops\n"));
    }
    let call = workmem_store::ToolCall { id: "u1".into(), name: "update_memory".into(), arguments: serde_json::json!({"dsl": dsl}).to_string() };
    s.append_message(Message { tool_calls: vec![call], ..Message::new("assistant", "") }).unwrap();
    let mut cx = workmem_agent::tools::ToolContext { session: &s, runtime: &runtime, tokenizer: &tokenizer, llm: None, board: None, documents: None };
    let out = workmem_agent::tools::call(&mut cx, "update_memory", &serde_json::json!({"dsl": dsl}).to_string()).unwrap();
    assert!(out.ok && out.text.contains("KL-1"), "{}", out.text);
    s.append_message(Message { tool_call_id: Some("u1".into()), ..Message::new("tool", out.text) }).unwrap();
    assert!(s.overview().unwrap().contains("the cache keys are per vault"));
    assert_eq!(memory(&mut engine, &options), before, "the history shows the change; the cached prefix stays");
    let auto = Options { history: HistoryMode::Auto, ..options.clone() };
    assert!(memory(&mut engine, &auto).contains("the cache keys are per vault"), "where the history may be cut, the memory as it is");
    // Once a compaction takes the call out of the history, the prefix takes the change (once
    // the model has answered after it: what it has not seen yet is never compacted).
    s.append_message(Message::new("assistant", "Noted; on to the next step.")).unwrap();
    let args = workmem_agent::compact::Args { keep_recent: 0, ..Default::default() };
    let done = workmem_agent::compact::compact(&s, &runtime, &tokenizer, None, &args).unwrap();
    assert!(done.replaced.concat().len() >= 2, "{done:?}");
    assert!(memory(&mut engine, &options).contains("the cache keys are per vault"));
    // An update from outside the loop is nowhere in the history: the prefix takes it.
    workmem_commit::apply(&runtime, &s, "KEY_LEARNINGS:\n  ADD:\n    - because the CLI said so: retries are bounded\n").unwrap();
    let now = memory(&mut engine, &options);
    assert!(now.contains("retries are bounded") && now.contains("the cache keys are per vault"), "{now}");
}

/// A request built on from the last one is the request built whole, through all that moves a
/// session between requests: new messages (opaque parts among them), a memory update (the
/// part before the history changes), the rounds and the provider's correction (context_meta),
/// a compaction (the view rewritten), a handle that let go of its view; in both history modes.
/// Only where the view merely grew, and the history starts where it did, is it built on from
/// the last.
#[test]
fn a_request_built_on_from_the_last_is_the_one_built_whole() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let tokenizer = Tokenizer::for_model("gpt-4o");
    for mode in [HistoryMode::All, HistoryMode::Auto] {
        let (_, s) = session(&format!("built-on-{mode:?}"), &runtime);
        let options = Options { history: mode, ..Options::new("gpt-4o", tools::openai_tools(false, false)) };
        let mut carry = context::Carry::default();
        let step = |s: &Session, engine: &mut workmem_runtime::Instance, carry: &mut context::Carry, built_on: bool, what: &str| {
            let mut on = context::build_on(s, engine, &tokenizer, &options, std::mem::take(carry)).unwrap();
            let whole = context::build(s, engine, &tokenizer, &options).unwrap();
            assert_eq!(on.messages, whole.messages, "{mode:?}, {what}");
            assert_eq!(
                (on.tokens, on.counted, on.view.clone(), on.opaque.clone()),
                (whole.tokens, whole.counted, whole.view, whole.opaque),
                "{mode:?}, {what}"
            );
            assert_eq!(format!("{:?}", on.stats), format!("{:?}", whole.stats), "{mode:?}, {what}");
            assert_eq!(on.built_on, built_on, "{mode:?}, {what}: built on from the last request");
            let sent = on.messages.clone();
            *carry = on.carry();
            assert_eq!(carry.messages(), sent, "{mode:?}, {what}: the carry holds the request");
        };
        say(&s, "user", "Fix the flaky test in tests/test_units.py.");
        step(&s, &mut engine, &mut carry, false, "the first request");
        for i in 0..6 {
            let call = workmem_store::ToolCall { id: format!("c{i}"), name: "bash".into(), arguments: format!(r#"{{"command": "pytest -k {i}"}}"#) };
            let opaque = if i % 2 == 0 { vec![serde_json::json!({"type": "thinking", "signature": format!("s{i}")})] } else { Vec::new() };
            s.append_message(Message { tool_calls: vec![call], opaque, ..Message::new("assistant", "Running it.") }).unwrap();
            s.append_message(Message { tool_call_id: Some(format!("c{i}")), ..Message::new("tool", "x".repeat(3000)) }).unwrap();
            step(&s, &mut engine, &mut carry, true, "the history grew");
        }
        workmem_commit::apply(&runtime, &s, "KEY_LEARNINGS:\n  ADD:\n    - because the run said so: the test needs a seed\n").unwrap();
        s.update_meta(|m| {
            m.rounds += 3;
            m.token_correction = 17;
        })
        .unwrap();
        say(&s, "user", "Go on.");
        // Where the history may be cut, a new turn moves where it starts: built whole.
        step(&s, &mut engine, &mut carry, mode == HistoryMode::All, "the memory, the rounds and the correction changed");
        let args = workmem_agent::compact::Args { keep_recent: 1, ..Default::default() };
        workmem_agent::compact::compact(&s, &runtime, &tokenizer, None, &args).unwrap();
        step(&s, &mut engine, &mut carry, false, "a compaction rewrote the view");
        say(&s, "assistant", "Done compacting; going on.");
        step(&s, &mut engine, &mut carry, true, "the history grew after the compaction");
        s.release_view();
        say(&s, "user", "And now?");
        step(&s, &mut engine, &mut carry, false, "the handle let go of its view");
        say(&s, "assistant", "Now this.");
        step(&s, &mut engine, &mut carry, true, "the history grew again");
    }
}

/// The engine's definitions of workmem's own tools (what the framework adapters offer) are the
/// agent's, to the byte of their descriptions and schemas.
#[test]
fn the_engines_own_tools_are_the_agents() {
    let engine: Vec<serde_json::Value> = workmem_guest::call::own_tools()
        .into_iter()
        .map(|t| serde_json::json!({"name": t.name, "description": t.description, "parameters": serde_json::from_str::<serde_json::Value>(&t.parameters).unwrap()}))
        .collect();
    let agent: Vec<serde_json::Value> =
        tools::own(true).map(|t| serde_json::json!({"name": t.name, "description": t.description, "parameters": t.parameters()})).collect();
    assert_eq!(engine, agent);
}

/// The engine's `read_history` answer is the agent's for the same log, capped parts included.
#[test]
fn the_engines_read_history_answer_is_the_agents() {
    let runtime = common::runtime();
    let (_, s) = session("read-answer", &runtime);
    say(&s, "user", "the task");
    s.append_message(Message::new("tool", "x".repeat(100_000))).unwrap();
    let records = s.records().unwrap();
    for (spec, from) in [("1", 0), ("1-2", 0), ("1-2", 70_000), ("2", 99_000)] {
        let found: Vec<workmem_guest::history::Entry> = records
            .iter()
            .filter_map(|r| match &r.entry {
                workmem_store::Entry::Message(m) => Some(workmem_guest::history::Entry {
                    seq: r.seq,
                    message: workmem_guest::ChatMessage {
                        role: m.role.clone(),
                        content: m.content.clone(),
                        tool_call_id: String::new(),
                        tool_calls: Vec::new(),
                    },
                    tokens: 0,
                }),
                _ => None,
            })
            .filter(|e| {
                let (a, b) = workmem_guest::call::read_range(spec).unwrap();
                (a..=b).contains(&e.seq)
            })
            .collect();
        let read = workmem_store::messages::read_spec(spec, from);
        assert_eq!(workmem_guest::call::read_answer(spec, &found, from), workmem_store::messages::read_result(&records, &read, u64::MAX), "{spec} from {from}");
    }
}

/// What every runtime's tokenizer is held to (tests/data/tokens.json, read by the Python and
/// JavaScript adapters' tests too): each message's tokens in a request as the Rust host counts
/// them. `WORKMEM_BLESS=1` writes the host's counts into the file.
#[test]
fn the_shared_token_counts_are_the_hosts() {
    let path = common::root().join("tests/data/tokens.json");
    let mut data: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let mut wrong = Vec::new();
    for case in data["cases"].as_array_mut().unwrap() {
        let calls: Vec<(String, String)> =
            case["tool_calls"].as_array().unwrap().iter().map(|c| (c[0].as_str().unwrap().to_string(), c[1].as_str().unwrap().to_string())).collect();
        let n = tokenizer.count_parts(case["role"].as_str().unwrap(), case["content"].as_str().unwrap(), calls.iter().map(|(a, b)| (a.as_str(), b.as_str())));
        if case["tokens"] != n {
            wrong.push(format!("{}: {} in the file, {n} by the host", case["name"], case["tokens"]));
            case["tokens"] = n.into();
        }
    }
    if std::env::var_os("WORKMEM_BLESS").is_some() {
        std::fs::write(&path, serde_json::to_string_pretty(&data).unwrap() + "\n").unwrap();
        return;
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
