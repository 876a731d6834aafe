//! The workmem engine. Everything here is pure: text and state in, text and state out.
//! The same code is the `engine` component (wasm32-unknown-unknown, no imports) and a
//! native library, so tests and benchmarks can hold one against the other.

#[cfg(not(feature = "agent"))]
wit_bindgen::generate!({
    world: "engine",
    path: "../wit",
    additional_derives: [PartialEq, Eq],
});

// The agent world includes the engine's, so the same types and exports come out of it, with
// serde for reading and writing the session's state.json.
#[cfg(feature = "agent")]
wit_bindgen::generate!({
    world: "agent",
    path: "../wit",
    additional_derives: [PartialEq, Eq, serde::Serialize, serde::Deserialize],
});

#[cfg(feature = "agent")]
mod workflow;

mod context;
mod lines;
mod merge;
mod parse;
mod prompt;
mod render;
mod syntax;

pub use exports::*;

/// The two values of `diagnostic.severity`.
pub const ERROR: &str = "error";
pub const WARNING: &str = "warning";

/// The engine's functions, callable natively with the same contracts as the component's
/// exports (see `wit/engine.wit`).
mod exports {
    use super::*;

    pub fn parse(text: &str) -> ParseOutcome {
        crate::parse::parse(text).outcome()
    }

    pub fn validate(text: &str, state: &MemoryState) -> ParseOutcome {
        crate::merge::validate(text, state).outcome()
    }

    /// By value, like the component's export: the result's state is the input's, changed.
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

    pub fn context_meta(stats: ContextStats) -> String {
        crate::context::meta(stats)
    }

    pub fn overview_maintained(overview: &str) -> bool {
        crate::context::overview_maintained(overview)
    }

    pub fn empty_state() -> MemoryState {
        MemoryState {
            progress: Progress { completed: Vec::new(), in_progress: Vec::new(), remaining: Vec::new() },
            learnings: Vec::new(),
            verbatim: Vec::new(),
            next_learning: 1,
            next_verbatim: 1,
        }
    }
}

/// The component's export table: a thin shim over [`exports`].
#[cfg(target_arch = "wasm32")]
struct Component;

#[cfg(target_arch = "wasm32")]
impl Guest for Component {
    fn parse(text: String) -> ParseOutcome {
        exports::parse(&text)
    }
    fn validate(text: String, state: MemoryState) -> ParseOutcome {
        exports::validate(&text, &state)
    }
    fn merge(state: MemoryState, updates: Vec<Update>, now: String) -> Result<MergeOutcome, String> {
        exports::merge(state, updates, &now)
    }
    fn apply(state: MemoryState, text: String, now: String) -> ApplyOutcome {
        exports::apply(state, &text, &now)
    }
    fn render(state: MemoryState) -> String {
        exports::render(&state)
    }
    fn update_prompt(state: MemoryState, task: String) -> String {
        exports::update_prompt(&state, &task)
    }
    fn overview_template() -> String {
        exports::overview_template()
    }
    fn empty_state() -> MemoryState {
        exports::empty_state()
    }
    fn assemble_context(request: ContextRequest) -> Vec<ChatMessage> {
        exports::assemble_context(request)
    }
    fn context_meta(stats: ContextStats) -> String {
        exports::context_meta(stats)
    }
    fn overview_maintained(overview: String) -> bool {
        exports::overview_maintained(&overview)
    }
    #[cfg(feature = "agent")]
    fn memory_update(task: String, max_reprompts: u32) -> Result<MemoryUpdateReport, String> {
        workflow::memory_update(&task, max_reprompts)
    }
}

#[cfg(target_arch = "wasm32")]
export!(Component);
