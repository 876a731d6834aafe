//! Spec 004's context document in the engine: validation and sections, on any [`Instance`].

use crate::*;

pub use crate::bindings::exports::workmem::memory::document::{DocumentError, Offense, Oversize, Section};

impl Instance {
    /// Checks a document's bytes against every rule; the inner `Err` is the rule it breaks.
    pub fn validate_document(&mut self, text: &[u8], max_bytes: u64) -> Result<std::result::Result<(), DocumentError>> {
        self.call(|b, s| b.workmem_memory_document().call_validate(s, text, max_bytes))
    }

    /// The engine's sentence for a document error, line:column included.
    pub fn describe_document_error(&mut self, error: &DocumentError) -> Result<String> {
        self.call(|b, s| b.workmem_memory_document().call_describe(s, *error))
    }

    /// The rule `error` broke, as `document-error` names its case (`empty`, `too-large`, ...).
    pub fn document_error_rule(&mut self, error: &DocumentError) -> Result<String> {
        self.call(|b, s| b.workmem_memory_document().call_rule(s, *error))
    }

    pub fn document_sections(&mut self, text: &str) -> Result<Vec<Section>> {
        self.call(|b, s| b.workmem_memory_document().call_sections(s, text))
    }

    pub fn document_section(&mut self, text: &str, name: &str) -> Result<Option<String>> {
        self.call(|b, s| b.workmem_memory_document().call_get_section(s, text, name))
    }

    pub fn replace_document_section(&mut self, text: &str, name: &str, body: &str) -> Result<String> {
        self.call(|b, s| b.workmem_memory_document().call_replace_section(s, text, name, body))
    }

    pub fn document_template(&mut self) -> Result<String> {
        self.call(|b, s| b.workmem_memory_document().call_template(s))
    }
}
