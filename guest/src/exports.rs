//! The engine's functions, callable natively with the same contracts as the component's
//! exports (see `wit/`).

use crate::model::*;

pub fn parse(text: &str) -> ParseOutcome {
    crate::parse::parse(text).outcome()
}

pub fn validate(text: &str, state: &MemoryState) -> ParseOutcome {
    crate::merge::validate(text, state).outcome()
}

/// By value: the result's state is the input's, changed.
pub fn merge(state: MemoryState, updates: Vec<Update>, now: &str) -> Result<MergeOutcome, String> {
    crate::merge::merge(state, updates, now)
}

pub fn apply(state: MemoryState, text: &str, now: &str) -> ApplyOutcome {
    crate::merge::apply(state, text, now)
}

pub fn render(state: &MemoryState) -> String {
    crate::render::overview(state)
}

pub fn update_prompt(state: &MemoryState, task: &str) -> String {
    crate::prompt::update_prompt(state, task)
}

pub fn overview_template() -> String {
    crate::render::TEMPLATE.to_string()
}

pub fn assemble_context(request: ContextRequest) -> Vec<ChatMessage> {
    crate::context::assemble(request)
}

/// [`assemble_context`]'s decision without the history's content.
pub fn assemble_frame(request: FrameRequest) -> Frame {
    crate::context::frame(request)
}

pub fn context_meta(stats: ContextStats) -> String {
    crate::context::meta(stats)
}

pub fn overview_maintained(overview: &str) -> bool {
    crate::context::overview_maintained(overview)
}

pub fn empty_state() -> MemoryState {
    MemoryState::default()
}
