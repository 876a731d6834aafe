//! How a request to the model is assembled (spec 001 US-2, US-3, US-8; spec 003 §2.3): the
//! options `agent` and `context` share.

use crate::names::Choices;
use anyhow::{Context, Result};
use std::path::PathBuf;
use workmem_runtime::HistoryMode;
use workmem_runtime::names::HISTORY_MODES;

#[derive(clap::Args)]
pub struct ContextArgs {
    /// The model (its tokenizer counts the tokens; default: $WORKMEM_MODEL, else the config
    /// file's `model`, else gpt-4o-mini)
    #[arg(long)]
    model: Option<String>,
    /// Which history goes in: auto (all until overview.md is maintained, then the active
    /// turn), all, active-turn, or last-n
    #[arg(long, value_parser = history_modes(), default_value = "auto")]
    history: HistoryMode,
    /// With --history last-n: how many messages
    #[arg(long, default_value_t = 10)]
    last_n: u32,
    /// The model's context window, in tokens
    #[arg(long, default_value_t = 128_000)]
    tokens_max: u32,
    /// Rounds without a memory update before the reminder insists (0: never)
    #[arg(long, default_value_t = workmem_agent::context::REMIND_AFTER_ROUNDS)]
    remind_after: u32,
    /// From here the reminder asks to archive: a percentage (50%) or a token count
    #[arg(long, default_value = "50%")]
    strong_reminder: String,
    /// The agent's system prompt, from a file
    #[arg(long, value_name = "FILE")]
    system: Option<PathBuf>,
    /// The fallback: before a request would reach this, the history is compacted; a
    /// percentage of --tokens-max (75%), a token count, or off
    #[arg(long, default_value = "75%")]
    compact_at: String,
    /// What the fallback compacts down to (a percentage or a token count): well under
    /// --compact-at, so the request then grows append-only, and cached, for a while
    #[arg(long, default_value = "50%")]
    compact_goal: String,
    /// Recent turns compaction keeps whole
    #[arg(long, default_value_t = workmem_agent::compact::KEEP_RECENT)]
    keep_recent: u32,
    /// Compact by the compression guide (tools from 20%, conversation from 40%, all from
    /// 60%) instead of leaving it to the model: spec 003's automatic mode
    #[arg(long)]
    auto_compact: bool,
    /// Offer workmem's own tools alone (read_history, update_memory, and compact_history
    /// without --auto-compact), as `workmem proxy` adds them beside an agent's own: no file
    /// tools, so the instructions name no folder for details
    #[arg(long)]
    own_tools: bool,
}

/// `--history`: the engine's history modes by name; `last-n` takes its count from `--last-n`.
fn history_modes() -> Choices<HistoryMode> {
    Choices::as_named(HISTORY_MODES.iter().map(|(name, mode)| (*name, *mode)).collect())
}

impl ContextArgs {
    pub fn options(&self) -> Result<workmem_agent::context::Options> {
        let model = crate::model::model(self.model.clone())?;
        let tools =
            if self.own_tools { workmem_agent::tools::openai_own(self.auto_compact) } else { workmem_agent::tools::openai_tools(false, self.auto_compact) };
        let mut o = workmem_agent::context::Options::new(&model, tools);
        o.memory_files = !self.own_tools;
        o.history = match self.history {
            HistoryMode::LastN(_) => HistoryMode::LastN(self.last_n),
            mode => mode,
        };
        o = o.with_window(self.tokens_max);
        o.compact_at = match self.compact_at.trim() {
            "off" => None,
            spec => Some(workmem_agent::context::threshold(spec, self.tokens_max)?),
        };
        o.compact_goal = workmem_agent::context::threshold(&self.compact_goal, self.tokens_max)?;
        o.keep_recent = self.keep_recent;
        o.auto_compact = self.auto_compact;
        o.remind_after_rounds = Some(self.remind_after).filter(|&n| n > 0);
        o.strong_reminder_tokens = Some(workmem_agent::context::threshold(&self.strong_reminder, self.tokens_max)?).filter(|&n| n > 0);
        if let Some(path) = &self.system {
            o.system_prompt = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        }
        Ok(o)
    }
}
