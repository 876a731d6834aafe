//! The `document` interface: spec 004's context document (`crate::document`), its types
//! mapped to the WIT's.

use super::Component;
use super::exports::workmem::memory::document as wit;
use crate::document as d;

fn error(e: d::DocumentError) -> wit::DocumentError {
    let at = |line, column, code| wit::Offense { line, column, code };
    match e {
        d::DocumentError::Empty => wit::DocumentError::Empty,
        d::DocumentError::TooLarge { bytes, limit } => wit::DocumentError::TooLarge(wit::Oversize { bytes, limit }),
        d::DocumentError::InvalidUtf8 { line, column } => wit::DocumentError::InvalidUtf8(at(line, column, 0)),
        d::DocumentError::ControlCharacter { line, column, code } => wit::DocumentError::ControlCharacter(at(line, column, code)),
        d::DocumentError::Noncharacter { line, column, code } => wit::DocumentError::Noncharacter(at(line, column, code)),
    }
}

fn to_error(e: wit::DocumentError) -> d::DocumentError {
    match e {
        wit::DocumentError::Empty => d::DocumentError::Empty,
        wit::DocumentError::TooLarge(o) => d::DocumentError::TooLarge { bytes: o.bytes, limit: o.limit },
        wit::DocumentError::InvalidUtf8(o) => d::DocumentError::InvalidUtf8 { line: o.line, column: o.column },
        wit::DocumentError::ControlCharacter(o) => d::DocumentError::ControlCharacter { line: o.line, column: o.column, code: o.code },
        wit::DocumentError::Noncharacter(o) => d::DocumentError::Noncharacter { line: o.line, column: o.column, code: o.code },
    }
}

impl wit::Guest for Component {
    fn validate(text: Vec<u8>, max_bytes: u64) -> Result<(), wit::DocumentError> {
        d::validate(&text, max_bytes).map(drop).map_err(error)
    }

    fn describe(e: wit::DocumentError) -> String {
        to_error(e).to_string()
    }

    fn rule(e: wit::DocumentError) -> String {
        to_error(e).rule().to_string()
    }

    fn sections(text: String) -> Vec<wit::Section> {
        d::sections(&text).into_iter().map(|s| wit::Section { name: s.name, body: s.body, line: s.line }).collect()
    }

    fn get_section(text: String, name: String) -> Option<String> {
        d::section(&text, &name)
    }

    fn replace_section(text: String, name: String, body: String) -> String {
        d::replace_section(&text, &name, &body)
    }

    fn template() -> String {
        d::template()
    }
}
