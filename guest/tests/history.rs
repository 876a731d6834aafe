//! Compaction (issue 8): each target and strategy, the refusals, one test per invariant with
//! a view built to break it, the fallback, and a property test over generated histories
//! (parallel calls, a call still waiting for its result, results with no call).

use proptest::prelude::*;
use workmem_guest::history::{self, Entry, Error, Fallback, Plan, Request, Strategy as How, Target};
use workmem_guest::{ChatMessage, ToolCall};

fn message(role: &str, content: &str) -> ChatMessage {
    ChatMessage { role: role.into(), content: content.into(), tool_call_id: String::new(), tool_calls: Vec::new() }
}

fn entry(seq: u64, message: ChatMessage) -> Entry {
    let tokens = u32::try_from(message.content.len() / 4 + 4).unwrap();
    Entry { seq, message, tokens }
}

fn call(id: &str) -> ToolCall {
    ToolCall { id: id.into(), name: "bash".into(), arguments: format!("{{\"command\": \"cat {id}\"}}") }
}

fn assistant(calls: &[&str]) -> ChatMessage {
    ChatMessage { tool_calls: calls.iter().map(|id| call(id)).collect(), ..message("assistant", "Let me look.") }
}

fn result(id: &str, size: usize) -> ChatMessage {
    ChatMessage { tool_call_id: id.into(), ..message("tool", &format!("output of {id}\n{}", "x".repeat(size))) }
}

/// A task, then `rounds` assistant steps each calling one tool with a 2 KB output.
fn tool_loop(rounds: u64) -> Vec<Entry> {
    let mut view = vec![entry(1, message("user", "Fix the flaky test in tests/test_io.py"))];
    for r in 0..rounds {
        let id = format!("c{r}");
        view.push(entry(2 + 2 * r, assistant(&[&id])));
        view.push(entry(3 + 2 * r, result(&id, 2000)));
    }
    view
}

fn request(target: Target, strategy: How, keep_recent: u32) -> Request {
    Request {
        target,
        strategy,
        keep_recent,
        archive_to: "working-memory/detail/history.md".into(),
        archive_lines: 0,
        never_compact: vec!["update_memory".into()],
        min_free: 0,
        summary: None,
        keep: Vec::new(),
    }
}

fn done(view: &[Entry], r: &Request) -> history::Compaction {
    match history::plan(view, r) {
        Ok(Plan::Done(c)) => c,
        other => panic!("expected a compaction, got {other:?}"),
    }
}

#[test]
fn tools_archive_offloads_old_outputs_with_a_handle_and_keeps_the_pairs() {
    let view = tool_loop(10);
    let c = done(&view, &request(Target::Tools, How::Archive, 3));
    // 10 rounds, the last 3 kept: 7 outputs offloaded, each in place, answering the same call.
    assert_eq!(c.replacements.len(), 7);
    assert_eq!(c.messages, 7);
    for r in &c.replacements {
        assert_eq!(r.replaces.len(), 1);
        let original = &view.iter().find(|e| e.seq == r.replaces[0]).unwrap().message;
        assert_eq!(r.message.role, "tool");
        assert_eq!(r.message.tool_call_id, original.tool_call_id);
        assert!(r.message.content.contains(&format!("read_history {{\"seq\": \"{}\"}}", r.replaces[0])), "{}", r.message.content);
        assert!(!r.message.content.contains("read_file"), "only read_history, which every host offers: {}", r.message.content);
        assert!(c.archive.contains(&original.content), "the archive holds every original");
    }
    // Placeholders are counted at their upper bound (a token a byte) until the host counts them.
    assert!(c.tokens_after < c.tokens_before * 3 / 5, "{} -> {}", c.tokens_before, c.tokens_after);
    assert_eq!(history::apply(&view, &c.replacements), c.view, "the log's replay rule gives the same view");
    assert_eq!(c.view[c.view.len() - 6..], view[view.len() - 6..]);
    assert!(c.notice.contains("Bring working-memory/overview.md up to date"));
}

/// Each offloaded output is in the archive under its number, whole, after the lines the file
/// held already.
#[test]
fn the_archive_holds_each_original_under_its_number() {
    let view = tool_loop(4);
    let r = Request { archive_lines: 10, ..request(Target::Tools, How::Archive, 1) };
    let c = done(&view, &r);
    for rep in &c.replacements {
        let heading = format!("### #{} tool bash", rep.replaces[0]);
        let original = &view.iter().find(|e| e.seq == rep.replaces[0]).unwrap().message.content;
        let at = c.archive.find(&heading).expect("under its number");
        assert!(c.archive[at..].contains(original.as_str()));
    }
}

#[test]
fn conversation_archive_replaces_old_plain_messages_only() {
    let mut view = vec![entry(1, message("user", "Plan the release")), entry(2, message("assistant", &"We could ship on Friday. ".repeat(40)))];
    view.push(entry(3, message("user", &"What about the changelog? ".repeat(40))));
    view.push(entry(4, assistant(&["a"])));
    view.push(entry(5, result("a", 500)));
    view.push(entry(6, message("assistant", &"The changelog is fine. ".repeat(40))));
    view.push(entry(7, message("user", "Ship it")));
    view.push(entry(8, message("assistant", "Shipping.")));
    let c = done(&view, &request(Target::Conversation, How::Archive, 2));
    // #3 is not the current task (#7 is); #1-#3 form one run, #6 another; the tool group stays.
    let replaced: Vec<Vec<u64>> = c.replacements.iter().map(|r| r.replaces.clone()).collect();
    assert_eq!(replaced, vec![vec![1, 2, 3], vec![6]]);
    assert!(c.view.iter().any(|e| e.seq == 5 && e.message == view[4].message));
    assert!(c.replacements[0].message.content.starts_with("[compacted messages #1-3 (2 user, 1 assistant;"));
}

#[test]
fn all_archive_replaces_tool_groups_whole_and_keeps_the_task() {
    let view = tool_loop(8);
    let c = done(&view, &request(Target::All, How::Archive, 2));
    assert_eq!(c.replacements.len(), 1);
    assert_eq!(c.replacements[0].replaces, (2..=13).collect::<Vec<u64>>());
    assert_eq!(c.view.len(), 1 + 1 + 4);
    assert_eq!(c.view[0], view[0], "the task stays first");
}

#[test]
fn summarize_asks_then_uses_the_answer_and_an_empty_answer_changes_nothing() {
    let view = tool_loop(6);
    let r = request(Target::All, How::Summarize, 2);
    let Ok(Plan::Ask(ask)) = history::plan(&view, &r) else { panic!("summarize asks the model first") };
    assert!(ask[0].content.contains("dead ends"));
    assert!(ask[1].content.contains("### #2 assistant") && ask[1].content.contains("### #3 tool bash"));
    let answer = "Goal: fix the flaky test (#1). Read c0..c3, nothing relevant (#3, #5).";
    let c = done(&view, &Request { summary: Some(answer.into()), ..r.clone() });
    assert!(c.replacements[0].message.content.ends_with(answer));
    assert!(c.archive.contains(answer), "the summary is saved to archive_to");
    assert_eq!(history::plan(&view, &Request { summary: Some(" \n".into()), ..r }), Err(Error::EmptySummary));
}

#[test]
fn tools_summarize_puts_each_gist_in_its_placeholder() {
    let view = tool_loop(3);
    let r = Request { summary: Some("#3: the test reads a temp file\n- #5: nothing\n".into()), ..request(Target::Tools, How::Summarize, 1) };
    let c = done(&view, &r);
    assert!(c.replacements[0].message.content.ends_with("Gist: the test reads a temp file]"));
    assert!(c.replacements[1].message.content.ends_with("Gist: nothing]"));
}

#[test]
fn refuses_when_there_is_nothing_or_too_little_to_free() {
    let view = tool_loop(3);
    assert!(matches!(history::plan(&view, &request(Target::Tools, How::Archive, 5)), Err(Error::Nothing(_))));
    let Err(Error::Nothing(why)) = history::plan(&view, &Request { min_free: 100_000, ..request(Target::Tools, How::Archive, 1) }) else {
        panic!("min_free refuses a small compaction")
    };
    assert!(why.contains("min_free"), "{why}");
    // Outputs as short as their placeholders: nothing to free, said as such (it read "about 0
    // tokens, less than the minimum of 0").
    let tiny: Vec<Entry> = (1..=8).map(|seq| entry(seq, message(if seq % 2 == 1 { "user" } else { "assistant" }, "ok"))).collect();
    let Err(Error::Nothing(why)) = history::plan(&tiny, &request(Target::Conversation, How::Archive, 1)) else { panic!("tiny messages were compacted") };
    assert!(why.contains("would free no tokens") && !why.contains("minimum of 0"), "{why}");
    // Compacting the compacted view again finds nothing new.
    let c = done(&view, &request(Target::Tools, How::Archive, 1));
    assert!(matches!(history::plan(&c.view, &request(Target::Tools, How::Archive, 1)), Err(Error::Nothing(_))));
}

#[test]
fn never_compacts_the_memory_tools_outputs() {
    let mut view = tool_loop(3);
    view[1].message.tool_calls[0].name = "update_memory".into();
    let c = done(&view, &request(Target::Tools, How::Archive, 1));
    assert!(c.replacements.iter().all(|r| r.replaces != vec![3]));
    let c = done(&view, &request(Target::All, How::Archive, 1));
    assert!(c.replacements.iter().all(|r| !r.replaces.contains(&3)));
}

// One test per invariant: a view after a compaction, built by hand to break it.

#[test]
fn invariant_a_call_never_loses_its_result() {
    let before = tool_loop(3);
    let after: Vec<Entry> = before.iter().filter(|e| e.seq != 3).cloned().collect();
    assert!(history::check(&before, &after, 0, &[]).unwrap_err().contains("would lose its result"));
}

#[test]
fn invariant_a_result_never_loses_its_call() {
    let before = tool_loop(3);
    let mut after = before.clone();
    after[1] = entry(2, message("user", "[compacted]"));
    assert!(history::check(&before, &after, 0, &[]).unwrap_err().contains("would lose its call"));
}

#[test]
fn invariant_parallel_calls_stay_with_all_their_results() {
    let before = vec![entry(1, message("user", "go")), entry(2, assistant(&["a", "b"])), entry(3, result("a", 10)), entry(4, result("b", 10))];
    let after: Vec<Entry> = before.iter().filter(|e| e.seq != 4).cloned().collect();
    assert!(history::check(&before, &after, 0, &[]).unwrap_err().contains("\"b\" would lose its result"));
}

#[test]
fn invariant_the_recent_groups_are_kept_whole() {
    let before = tool_loop(4);
    let mut after = before.clone();
    let last = after.len() - 1;
    after[last].message.content = "[offloaded]".into();
    assert!(history::check(&before, &after, 1, &[]).unwrap_err().contains("would not be kept whole"));
    assert!(history::check(&before, &after, 0, &[]).is_ok());
}

#[test]
fn invariant_the_current_task_stays() {
    let before = tool_loop(2);
    let after = before[1..].to_vec();
    assert!(history::check(&before, &after, 0, &[]).unwrap_err().contains("current task (#1)"));
}

#[test]
fn a_plan_that_would_break_an_invariant_is_refused() {
    // A result that arrived after an interjection is a group of its own; with only it kept,
    // compacting `all` would take its call away from it: refused, with the reason.
    let view = vec![
        entry(1, message("user", "Fix the flaky test")),
        entry(2, ChatMessage { content: "Let me look at the test log first. ".repeat(20), ..assistant(&["late"]) }),
        entry(3, message("user", &"Also, the CI is red. ".repeat(120))),
        entry(4, message("assistant", &"Noted, looking at it after this. ".repeat(120))),
        entry(5, result("late", 3000)),
    ];
    let Err(Error::Invariant(why)) = history::plan(&view, &request(Target::All, How::Archive, 1)) else { panic!("the plan must be refused") };
    assert!(why.contains("\"late\" would lose its call"), "{why}");
}

#[test]
fn a_pinned_task_stays_when_later_user_messages_come() {
    // An environment's feedback as user messages (mini-swe-agent's format errors) would make
    // the last user message the "current task"; the host pins the real one.
    let mut view = tool_loop(6);
    view.push(entry(14, message("user", "Please always provide EXACTLY ONE action")));
    let c = done(&view, &Request { keep: vec![1], ..request(Target::All, How::Archive, 1) });
    assert_eq!(c.view[0], view[0]);
    assert!(c.view.contains(&view[13]));
    let unpinned = done(&view, &request(Target::All, How::Archive, 1));
    assert_ne!(unpinned.view[0], view[0]);
    assert!(history::check(&view, &unpinned.view, 1, &[1]).unwrap_err().contains("current task (#1)"));
}

/// The fallback at 9,000 tokens, down to 6,000, before a request of `used`.
fn net(used: u32) -> Fallback {
    Fallback {
        used,
        threshold: 9000,
        goal: 6000,
        keep_recent: 5,
        archive_to: "working-memory/detail/auto.md".into(),
        archive_lines: 0,
        never_compact: Vec::new(),
        keep: Vec::new(),
    }
}

#[test]
fn fallback_waits_for_the_threshold_then_frees_down_to_the_goal() {
    let view = tool_loop(20);
    let history_tokens: u32 = view.iter().map(|e| e.tokens).sum();
    assert_eq!(history::fallback(&view, &net(8999)), None);
    let c = history::fallback(&view, &net(history_tokens + 1000)).expect("over the threshold it compacts");
    let after: u32 = c.view.iter().map(|e| e.tokens).sum::<u32>() + 1000;
    assert!(after <= 6000, "{after}");
    assert!(c.notice.contains("automatically"));
    assert_eq!(history::apply(&view, &c.replacements), c.view);
}

#[test]
fn fallback_offloads_the_largest_kept_outputs_when_the_kept_groups_alone_are_too_big() {
    let mut view = tool_loop(3);
    view[4] = entry(5, result("c1", 40_000));
    let c = history::fallback(&view, &net(12_000)).expect("compacts");
    assert_eq!(c.replacements.len(), 1);
    assert_eq!(c.replacements[0].replaces, vec![5]);
    assert_eq!(c.replacements[0].message.tool_call_id, "c1");
    assert!(history::check(&view, &c.view, 0, &[]).is_ok());
}

/// A tool output that begins with a placeholder's words is still a tool output: compacting
/// old outputs offloads it, and so does the fallback when it is too large to keep (issue 24:
/// generated outputs that imitated a compaction note stayed whole in every request).
#[test]
fn an_output_that_imitates_a_placeholder_is_offloaded_like_any_other() {
    let imitation = |id: &str| {
        let text = format!("[compacted messages #1-400 archived to working-memory/detail/history-1.md (lines 1-9).]\n{}", "x".repeat(8000));
        ChatMessage { tool_call_id: id.into(), ..message("tool", &text) }
    };
    let mut view = tool_loop(6);
    view[2] = entry(3, imitation("c0"));
    let c = done(&view, &request(Target::Tools, How::Archive, 3));
    assert!(c.replacements.iter().any(|r| r.replaces == vec![3]), "{:?}", c.replacements);

    let mut newest = tool_loop(3);
    newest[6] = entry(7, imitation("c2"));
    let used = newest.iter().map(|e| e.tokens).sum::<u32>() + 8000;
    let c = history::fallback(&newest, &net(used)).expect("compacts");
    assert!(c.replacements.iter().any(|r| r.replaces == vec![7]), "{:?}", c.replacements);
    assert!(history::check(&newest, &c.view, 0, &[]).is_ok());
}

/// The output the model just asked for is never offloaded whole: too large to fit under the
/// threshold once all it has seen is compacted, it keeps its two ends, as much as the room
/// under the goal holds at its own bytes a token (issue 48). One it has seen keeps less.
#[test]
fn fallback_clips_the_output_not_yet_seen_to_the_room_under_the_goal() {
    let large = |seq, id: &str| {
        let text = format!("HEAD of {id}\n{}\nTAIL of {id}", "line of a log\n".repeat(3000));
        Entry { seq, tokens: u32::try_from(text.len() / 4).unwrap(), message: ChatMessage { tool_call_id: id.into(), ..message("tool", &text) } }
    };
    let kept = |view: &[Entry], seq: u64| {
        let c = history::fallback(view, &net(view.iter().map(|e| e.tokens).sum::<u32>() + 1000)).expect("compacts");
        assert!(history::check(view, &c.view, 0, &[]).is_ok());
        assert!(c.tokens_after + 1000 <= 6000, "{}", c.tokens_after);
        let e = c.view.iter().find(|e| e.seq == seq).expect("offloaded in place");
        assert!(e.message.content.contains("HEAD of") && e.message.content.contains("TAIL of"), "both ends stay");
        (e.message.content.len(), c.tokens_after)
    };
    let mut newest = tool_loop(3);
    newest[6] = large(7, "c2");
    let (bytes, after) = kept(&newest, 7);
    assert!(after + 1000 >= 5400, "the room to the goal is used: {after}");
    let mut seen = tool_loop(3);
    seen[4] = large(5, "c1");
    let (seen_bytes, _) = kept(&seen, 5);
    assert!(seen_bytes * 2 < bytes, "{seen_bytes} vs {bytes}");
}

/// What the model has not seen stays whole while it fits under the threshold, however much it
/// is; several that do not fit share the room under the goal, the smaller ones whole. Nothing
/// is ever replaced by something larger: a message of tool calls with no text keeps its
/// (empty) text.
#[test]
fn fallback_never_offloads_what_the_model_has_not_seen() {
    let output = |seq, id: &str, kb: usize| entry(seq, ChatMessage { tool_call_id: id.into(), ..message("tool", &format!("{id}\n{}", "y".repeat(kb * 1024))) });
    let mut view = tool_loop(6);
    view.push(entry(14, ChatMessage { content: String::new(), ..assistant(&["p1", "p2", "p3"]) }));
    view.extend([output(15, "p1", 4), output(16, "p2", 12), output(17, "p3", 40)]);
    let used = view.iter().map(|e| e.tokens).sum::<u32>() + 1000;
    let c = history::fallback(&view, &net(used)).expect("compacts");
    assert!(c.tokens_after + 1000 <= 6000, "{}", c.tokens_after);
    assert!(c.view.iter().any(|e| e.seq == 15 && e.message.content == view[14].message.content), "the small one whole");
    for seq in [16, 17] {
        let e = c.view.iter().find(|e| e.seq == seq).unwrap();
        assert!(e.message.content.contains(&format!("p{}\n", seq - 14)) && e.message.content.ends_with('y'), "its ends: {}", &e.message.content[..200]);
    }
    assert!(c.view.iter().all(|e| e.seq != 14 || e.message.content.is_empty()), "the calls' empty text stays");
    // All of it fits under the threshold once the rest is compacted: all of it whole.
    let mut fits = tool_loop(12);
    fits.push(entry(26, assistant(&["q"])));
    fits.push(output(27, "q", 16));
    let used = fits.iter().map(|e| e.tokens).sum::<u32>() + 1000;
    let c = history::fallback(&fits, &net(used)).expect("compacts");
    assert_eq!(c.view.last(), fits.last(), "sent whole once");
}

/// A generated history: plain messages, single and parallel calls, a call still waiting for
/// its result, and results whose call is gone.
fn histories() -> impl Strategy<Value = Vec<Entry>> {
    let step = prop_oneof![
        (0usize..400).prop_map(|n| vec![message("user", &words("ask", n))]),
        (0usize..400).prop_map(|n| vec![message("assistant", &words("step", n))]),
        (1usize..4, 0usize..3000, any::<bool>()).prop_map(|(calls, size, answered)| {
            let ids: Vec<String> = (0..calls).map(|k| format!("k{k}-{size}")).collect();
            let mut out = vec![assistant(&ids.iter().map(String::as_str).collect::<Vec<_>>())];
            if answered {
                out.extend(ids.iter().map(|id| ChatMessage { tool_call_id: id.clone(), ..message("tool", &words(id, size)) }));
            }
            out
        }),
        (0usize..2000).prop_map(|n| vec![ChatMessage { tool_call_id: format!("orphan{n}"), ..message("tool", &words("orphan", n)) }]),
    ];
    proptest::collection::vec(step, 0..25)
        .prop_map(|steps| {
            // Ids unique over the history.
            steps
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, mut m)| {
                    for c in &mut m.tool_calls {
                        c.id = format!("{}@{}", c.id, i);
                    }
                    (i, m)
                })
                .collect::<Vec<_>>()
        })
        .prop_map(|mut msgs| {
            // Results answer the ids their assistant message got above.
            let mut pending: Vec<String> = Vec::new();
            for (_, m) in &mut msgs {
                if !m.tool_calls.is_empty() {
                    pending = m.tool_calls.iter().map(|c| c.id.clone()).collect();
                } else if m.role == "tool"
                    && !m.tool_call_id.starts_with("orphan")
                    && let Some(p) = pending.iter().position(|id| id.starts_with(&format!("{}@", m.tool_call_id)))
                {
                    m.tool_call_id = pending.remove(p);
                }
            }
            msgs.into_iter().enumerate().map(|(i, (_, m))| Entry { seq: i as u64 + 1, tokens: real_tokens(&m), message: m }).collect()
        })
}

/// About `bytes` of text that reads like words and numbers, as tool outputs and messages do.
fn words(tag: &str, bytes: usize) -> String {
    let mut out = String::new();
    let mut k = 0;
    while out.len() < bytes {
        out.push_str(&format!("{tag}_{k} value {} ", k * 7919 % 1000));
        k += 1;
    }
    out
}

/// A message's tokens as the provider counts them (o200k_base, OpenAI's framing), kept apart
/// from the engine's own estimate, which planned the compaction.
fn real_tokens(m: &ChatMessage) -> u32 {
    static BPE: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    let bpe = BPE.get_or_init(|| tiktoken_rs::o200k_base().unwrap());
    let count = |t: &str| u32::try_from(bpe.encode_with_special_tokens(t).len()).unwrap();
    3 + count(&m.role) + count(&m.content) + m.tool_calls.iter().map(|c| 3 + count(&c.name) + count(&c.arguments)).sum::<u32>()
}

fn real_total(view: &[Entry]) -> u32 {
    view.iter().map(|e| real_tokens(&e.message)).sum()
}

/// Pairing, written apart from `history::check`: every call that had its result right after
/// it (in its block of results) still has it there, or both are gone; no result is left
/// without its call before it, unless it had none to begin with.
fn pairing_kept(before: &[Entry], after: &[Entry]) -> Result<(), String> {
    fn pairs(view: &[Entry]) -> (Vec<String>, Vec<String>) {
        let (mut paired, mut orphans) = (Vec::new(), Vec::new());
        let mut block: Vec<&str> = Vec::new();
        for e in view {
            let m = &e.message;
            if m.role == "tool" {
                match block.iter().position(|id| *id == m.tool_call_id) {
                    Some(k) => paired.push(block.remove(k).to_string()),
                    None => orphans.push(m.tool_call_id.clone()),
                }
            } else {
                block = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
        }
        (paired, orphans)
    }
    let ids = |view: &[Entry]| -> Vec<String> {
        view.iter()
            .flat_map(|e| e.message.tool_calls.iter().map(|c| c.id.clone()).chain((e.message.role == "tool").then(|| e.message.tool_call_id.clone())))
            .collect()
    };
    let (paired_before, orphans_before) = pairs(before);
    let (paired_after, orphans_after) = pairs(after);
    let left = ids(after);
    for id in &paired_before {
        if !paired_after.contains(id) && left.contains(id) {
            return Err(format!("{id} lost its pair"));
        }
    }
    match orphans_after.iter().find(|id| !orphans_before.contains(id)) {
        Some(id) => Err(format!("the result of {id} lost its call")),
        None => Ok(()),
    }
}

fn targets() -> impl Strategy<Value = (Target, How, u32)> {
    (prop_oneof![Just(Target::Tools), Just(Target::Conversation), Just(Target::All)], prop_oneof![Just(How::Archive), Just(How::Summarize)], 0u32..7)
}

proptest! {
    #[test]
    fn no_compaction_breaks_an_invariant_or_fails_to_make_progress(view in histories(), (target, strategy, keep) in targets()) {
        let mut current = view;
        // Compacting again and again reaches a view with nothing left to compact.
        for _ in 0..50 {
            let mut r = request(target, strategy, keep);
            if strategy == How::Summarize {
                r.summary = Some("#1: a summary line (#1)".into());
            }
            match history::plan(&current, &r) {
                Ok(Plan::Done(c)) => {
                    prop_assert_eq!(history::check(&current, &c.view, keep, &[]), Ok(()));
                    prop_assert_eq!(pairing_kept(&current, &c.view), Ok(()));
                    prop_assert!(real_total(&c.view) < real_total(&current), "{} -> {} tokens", real_total(&current), real_total(&c.view));
                    prop_assert_eq!(&history::apply(&current, &c.replacements), &c.view);
                    current = c.view;
                }
                Ok(Plan::Ask(_)) => prop_assert!(false, "an answer was given"),
                Err(Error::Nothing(_)) => return Ok(()),
                Err(e) => prop_assert!(false, "{}", e),
            }
        }
        prop_assert!(false, "50 compactions in a row");
    }

    #[test]
    fn the_fallback_keeps_every_pair(view in histories(), keep in 0u32..7, outside in 0u32..3000) {
        let tokens: u32 = view.iter().map(|e| e.tokens).sum();
        let f = Fallback { used: tokens + outside, threshold: 1000, goal: 700, keep_recent: keep, archive_to: "a.md".into(), archive_lines: 0, never_compact: Vec::new(), keep: Vec::new() };
        if let Some(c) = history::fallback(&view, &f) {
            prop_assert_eq!(history::check(&view, &c.view, 0, &[]), Ok(()));
            prop_assert_eq!(pairing_kept(&view, &c.view), Ok(()));
            prop_assert!(real_total(&c.view) < real_total(&view), "{} -> {} tokens", real_total(&view), real_total(&c.view));
            prop_assert_eq!(&history::apply(&view, &c.replacements), &c.view);
            prop_assert!(c.tokens_after < c.tokens_before);
            // What came after the model's last answer it has not seen: never replaced whole,
            // only clipped to its ends; and no message's text grows.
            let unseen = view.iter().rposition(|e| e.message.role == "assistant").map_or(0, |i| i + 1);
            for r in &c.replacements {
                if let [seq] = r.replaces[..] {
                    let (i, original) = view.iter().enumerate().find(|(_, e)| e.seq == seq).unwrap();
                    prop_assert!(r.message.content.len() < original.message.content.len(), "#{} grew", seq);
                    prop_assert!(i < unseen || r.message.content.contains(" bytes left out here …]"), "#{} unseen, replaced whole", seq);
                }
            }
        }
    }
}

/// Replacements that name the same entry are put in place one after another, as listed: the
/// second replaces the first's note and what else it names, at the place of the first of them.
#[test]
fn replacements_that_overlap_apply_in_turn() {
    let view: Vec<Entry> = (1..=5).map(|seq| entry(seq, message("user", &format!("m{seq}")))).collect();
    let note = |text: &str| history::Replacement { replaces: Vec::new(), message: message("system", text) };
    let first = history::Replacement { replaces: vec![2, 3], ..note("[compacted 2-3]") };
    let second = history::Replacement { replaces: vec![4, 2], ..note("[compacted 2-4]") };
    let after = history::apply(&view, &[first, second]);
    let shown: Vec<(u64, &str)> = after.iter().map(|e| (e.seq, e.message.content.as_str())).collect();
    assert_eq!(shown, [(1, "m1"), (2, "[compacted 2-4]"), (5, "m5")]);
}
