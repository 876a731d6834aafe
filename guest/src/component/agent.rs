//! The agent world's workflows: the engine's own update run and compaction, driven with the
//! granted model, session store and clock.

use super::exports::workmem::memory::history as hx;
use super::exports::workmem::memory::workflows as wf;
use super::workmem::memory::{clock, llm, session_store};
use super::{Component, applied, diagnostics};
use crate::memory::Wants;

impl wf::Guest for Component {
    fn memory_update(task: String, max_reprompts: u32) -> Result<wf::UpdateReport, wf::UpdateError> {
        let store_error = |e: session_store::StoreError| match e {
            session_store::StoreError::Refused(why) | session_store::StoreError::Other(why) => wf::UpdateError::Store(why),
        };
        let mut memory = match session_store::load_memory().map_err(store_error)? {
            Some(state) => crate::Memory::load(&state).map_err(wf::UpdateError::Store)?,
            None => crate::Memory::new(),
        };
        let mut run = crate::UpdateRun::new(&memory, &task, max_reprompts);
        let (mut prompt_tokens, mut completion_tokens) = (0u32, 0u32);
        loop {
            let messages: Vec<llm::Message> = run.request().iter().map(|m| llm::Message { role: m.role.clone(), content: m.content.clone() }).collect();
            let completion = llm::complete(&messages).map_err(|e| wf::UpdateError::Model(model_error(e)))?;
            if let Some(u) = completion.usage {
                prompt_tokens = prompt_tokens.saturating_add(u.prompt_tokens);
                completion_tokens = completion_tokens.saturating_add(u.completion_tokens);
            }
            match run.answer(&mut memory, &completion.text, &clock::now(), Wants { overview: true, state: true }) {
                crate::Step::Retry(_) => continue,
                crate::Step::GaveUp(ds) => {
                    return Err(wf::UpdateError::Invalid(wf::InvalidAnswers { attempts: run.attempts(), diagnostics: diagnostics(ds) }));
                }
                crate::Step::Applied(a) => {
                    let commit = session_store::Commit {
                        seq: a.seq,
                        log_entry: a.log_entry.clone(),
                        state: a.state.clone().unwrap_or_default(),
                        overview: a.overview.clone().unwrap_or_default(),
                    };
                    session_store::commit_update(&commit).map_err(store_error)?;
                    return Ok(wf::UpdateReport { attempts: run.attempts(), prompt_tokens, completion_tokens, applied: applied(a) });
                }
            }
        }
    }

    fn compact_history(view: Vec<hx::Entry>, mut request: hx::CompactRequest) -> Result<hx::Compaction, wf::CompactFailure> {
        loop {
            match <Component as hx::Guest>::compact(view.clone(), request.clone()).map_err(wf::CompactFailure::Refused)? {
                hx::Plan::Done(c) => return Ok(c),
                // The engine asks once; asking again would mean it ignored the answer.
                hx::Plan::Ask(_) if request.summary.is_some() => {
                    return Err(wf::CompactFailure::Refused(hx::CompactError::Nothing("the engine asked for a second summary".into())));
                }
                hx::Plan::Ask(messages) => {
                    let messages: Vec<llm::Message> = messages.into_iter().map(|m| llm::Message { role: m.role, content: m.content }).collect();
                    let completion = llm::complete(&messages).map_err(|e| wf::CompactFailure::Model(model_error(e)))?;
                    request.summary = Some(completion.text);
                }
            }
        }
    }
}

fn model_error(e: llm::LlmError) -> String {
    match e {
        llm::LlmError::Timeout(why) => format!("the model did not answer in time: {why}"),
        llm::LlmError::RateLimited(why) => format!("the provider is rate limiting requests (HTTP 429): {why}"),
        llm::LlmError::HttpStatus((status, why)) => format!("the provider answered HTTP {status}: {why}"),
        llm::LlmError::Other(why) => why,
    }
}
