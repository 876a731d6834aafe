//! Context assembly through the component with the host's session, tokenizer and files.

mod common;

use std::path::{Path, PathBuf};
use workmem_agent::context::{self, Options};
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
    let options = Options { history: HistoryMode::All, ..Options::new("gpt-4o") };
    let built = context::build(&s, &mut engine, &tokenizer, &options).unwrap();
    let (request, meta) = built.messages.split_at(built.messages.len() - 1);
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let n = |text: &str| bpe.encode_with_special_tokens(text).len();
    // Each message: 3 + role + content, and each tool call 3 + name + arguments; the reply's
    // 3; the tool definitions offered, as their JSON text with 12 of framing (issue 8).
    let message = |m: &workmem_llm::Message| {
        3 + n(&m.role) + n(&m.content) + m.tool_calls.iter().map(|c| 3 + n(&c.function.name) + n(&c.function.arguments)).sum::<usize>()
    };
    let tools = 12 + n(&options.tools.to_string());
    let expected: usize = request.iter().map(message).sum::<usize>() + 3 + tools;
    assert!(request.iter().any(|m| !m.tool_calls.is_empty()));
    assert_eq!(built.stats.tokens_used as usize, expected);
    assert_eq!(built.tokens as usize, expected + message(&meta[0]), "the whole request, context_meta included");
    assert_eq!(meta[0].role, "system");
    assert!(meta[0].content.contains(&format!("\"tokens_used\": {expected},")));
    assert!(meta[0].content.contains("\"messages_in_history\": 3,"));
    assert_eq!(Tokenizer::for_model("gpt-4").encoding, "cl100k_base");
    assert_eq!(Tokenizer::for_model("gpt-4o-mini").encoding, "o200k_base");
    assert_eq!(Tokenizer::for_model("some-local-model").encoding, "o200k_base");
}

#[test]
fn the_prefix_is_byte_identical_until_what_it_holds_changes() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let (_, s) = session("prefix", &runtime);
    let tokenizer = Tokenizer::for_model("gpt-4o");
    let options = Options { history: HistoryMode::All, ..Options::new("gpt-4o") };
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
        context::build(&s, engine, &tokenizer, &Options::new("gpt-4o")).unwrap().messages.into_iter().map(|m| m.content).collect()
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
    let options = Options::new("gpt-4o");
    assert!(meta_text(&mut engine, &options).contains("Remember to update"));
    assert!(meta_text(&mut engine, &Options { strong_reminder_tokens: Some(100), ..options.clone() }).contains("Archive finished work"));
    let mut meta = s.meta().unwrap();
    meta.rounds = 7;
    std::fs::write(s.path("meta.json"), serde_json::to_vec(&meta).unwrap()).unwrap();
    assert!(meta_text(&mut engine, &options).contains("not updated working-memory/overview.md for 7 rounds"));
}
