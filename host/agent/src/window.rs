//! The history window: how much of a session's view crosses into the engine. It is chosen
//! here, before anything crosses, so that no log can grow past what the sandbox's memory
//! holds and break the session for good (issue 9: 128 tool calls writing 1 MB each made
//! every later request trap). What is left out stays in the log, where `read_history`
//! finds it; nothing so large would fit a model's window anyway.

use workmem_store::Message;

/// Overrides [`DEFAULT_MAX_BYTES`].
pub const MAX_BYTES_ENV: &str = "WORKMEM_MAX_HISTORY_BYTES";

/// 16 MiB of history: over thirty times a 128k-token window, a sixteenth of the sandbox's
/// default memory.
pub const DEFAULT_MAX_BYTES: usize = 16 << 20;

/// `$WORKMEM_MAX_HISTORY_BYTES`, else [`DEFAULT_MAX_BYTES`].
pub fn max_bytes() -> crate::Result<usize> {
    match std::env::var(MAX_BYTES_ENV) {
        Ok(v) => v.parse().map_err(|_| crate::Error::Setting { name: MAX_BYTES_ENV, value: v }),
        Err(_) => Ok(DEFAULT_MAX_BYTES),
    }
}

pub(crate) fn size(m: &Message) -> usize {
    m.content.len() + m.tool_calls.iter().map(|c| c.name.len() + c.arguments.len()).sum::<usize>()
}

/// The newest entries that fit `max_bytes`, starting where a request may start (never at a
/// tool result whose call was left out), with the current task (the last user message)
/// kept in front when it falls outside. A message larger than a quarter of `max_bytes` keeps
/// its head and tail and says where the rest is.
pub fn window(entries: Vec<(u64, Message)>, max_bytes: usize) -> Vec<(u64, Message)> {
    let entries: Vec<(u64, Message)> = entries.into_iter().map(|(seq, m)| (seq, clip(seq, m, max_bytes / 4))).collect();
    let mut total = 0;
    let mut start = entries.len();
    while start > 0 && total + size(&entries[start - 1].1) <= max_bytes {
        start -= 1;
        total += size(&entries[start].1);
    }
    if start == 0 {
        return entries;
    }
    while start < entries.len() && entries[start].1.role == "tool" {
        start += 1;
    }
    let task = entries.iter().rposition(|(_, m)| m.role == "user").filter(|&i| i < start);
    let mut entries = entries;
    let mut out: Vec<(u64, Message)> = task.map(|i| entries[i].clone()).into_iter().collect();
    out.extend(entries.drain(start..));
    out
}

fn clip(seq: u64, mut m: Message, most: usize) -> Message {
    if m.content.len() > most {
        let keep = most / 2;
        let head = m.content.floor_char_boundary(keep);
        let tail = m.content.ceil_char_boundary(m.content.len() - keep);
        let left_out = tail - head;
        m.content = format!(
            "{}\n[... {left_out} bytes of this message are left out here: too large to send; read_history with seq {seq} has it whole ...]\n{}",
            &m.content[..head],
            &m.content[tail..]
        );
    }
    for call in &mut m.tool_calls {
        if call.arguments.len() > most {
            call.arguments = serde_json::json!({"left_out_bytes": call.arguments.len(), "read_history_seq": seq}).to_string();
        }
    }
    m
}
