//! A streamed answer (server-sent `chat.completion.chunk`s) folded into one completion.

use crate::wire::{Completion, FunctionCall, MAX_TOOL_CALLS, ToolCall, Usage, check_id, function_kind};
use serde_json::Value;

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
