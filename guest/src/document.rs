//! Spec 004's single context document: one text per memory, with labeled sections (`#`
//! headings). The rules a store applies before keeping a version live here, so every runtime
//! and server refuses the same text with the same words: non-empty, valid UTF-8, no control
//! characters but tab and newline, no Unicode noncharacters, at most a size the host sets;
//! each refusal names its rule and, where there is one, the line and column. And the
//! sections, so a client can read or replace one without rewriting the rest.

use std::fmt;

/// Spec 004's sections, in the order a new document has them.
pub const SECTIONS: [&str; 8] = ["Description", "Active Context", "Progress", "Patterns", "Preferences", "Facts", "Timeline", "Decisions"];

/// Why a text is not a context document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentError {
    /// Nothing but whitespace.
    Empty,
    /// Longer than the host's cap (bytes).
    TooLarge { bytes: u64, limit: u64 },
    /// Not UTF-8: the first bad byte, its line and column (columns count characters).
    InvalidUtf8 { line: u32, column: u32 },
    /// A control character other than tab and newline (a carriage return included).
    ControlCharacter { line: u32, column: u32, code: u32 },
    /// A Unicode noncharacter (U+FDD0..U+FDEF, or U+xFFFE / U+xFFFF in any plane).
    Noncharacter { line: u32, column: u32, code: u32 },
}

impl fmt::Display for DocumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocumentError::Empty => f.write_str("the document is empty"),
            DocumentError::TooLarge { bytes, limit } => write!(f, "the document is {bytes} bytes, over the limit of {limit}"),
            DocumentError::InvalidUtf8 { line, column } => write!(f, "{line}:{column}: the document is not valid UTF-8"),
            DocumentError::ControlCharacter { line, column, code } => {
                write!(f, "{line}:{column}: control character U+{code:04X}; only tab and newline are allowed")
            }
            DocumentError::Noncharacter { line, column, code } => write!(f, "{line}:{column}: U+{code:04X} is a Unicode noncharacter"),
        }
    }
}

impl std::error::Error for DocumentError {}

impl DocumentError {
    /// The rule's name, as `document-error` in `wit/document.wit` names the case: what a
    /// runtime without variants (Go) matches on. The conformance case checks every runtime agrees.
    pub fn rule(&self) -> &'static str {
        match self {
            DocumentError::Empty => "empty",
            DocumentError::TooLarge { .. } => "too-large",
            DocumentError::InvalidUtf8 { .. } => "invalid-utf8",
            DocumentError::ControlCharacter { .. } => "control-character",
            DocumentError::Noncharacter { .. } => "noncharacter",
        }
    }
}

fn noncharacter(c: char) -> bool {
    let c = c as u32;
    (0xFDD0..=0xFDEF).contains(&c) || c & 0xFFFE == 0xFFFE
}

/// Line and column (1-based, columns in characters) of byte `offset` in `text`.
fn position(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
}

/// Checks `bytes` against every rule, the size cap (`limit` bytes) first.
pub fn validate(bytes: &[u8], limit: u64) -> Result<&str, DocumentError> {
    if bytes.len() as u64 > limit {
        return Err(DocumentError::TooLarge { bytes: bytes.len() as u64, limit });
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid up to there");
            let (line, column) = position(valid, valid.len());
            return Err(DocumentError::InvalidUtf8 { line, column });
        }
    };
    for (offset, c) in text.char_indices() {
        let bad = if c.is_control() && c != '\t' && c != '\n' {
            Some(true)
        } else if noncharacter(c) {
            Some(false)
        } else {
            None
        };
        if let Some(control) = bad {
            let (line, column) = position(text, offset);
            let code = c as u32;
            return Err(if control { DocumentError::ControlCharacter { line, column, code } } else { DocumentError::Noncharacter { line, column, code } });
        }
    }
    if text.trim().is_empty() {
        return Err(DocumentError::Empty);
    }
    Ok(text)
}

/// One section: its heading's name (as written), its body (the lines up to the next
/// heading), and the line its heading is on. Text before the first heading is a section with
/// an empty name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub body: String,
    pub line: u32,
}

/// A level-1 heading (`# Name`) outside a fenced code block.
fn heading(line: &str) -> Option<&str> {
    line.strip_prefix("# ").map(str::trim).filter(|name| !name.is_empty())
}

/// The document's sections, in order.
pub fn sections(text: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut fenced = false;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        match heading(line.trim_end_matches('\n')).filter(|_| !fenced) {
            Some(name) => out.push(Section { name: name.into(), body: String::new(), line: u32::try_from(n + 1).unwrap_or(u32::MAX) }),
            None => match out.last_mut() {
                Some(section) => section.body.push_str(line),
                None => out.push(Section { name: String::new(), body: line.into(), line: 1 }),
            },
        }
    }
    out
}

fn same(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// The body of section `name` (matched without regard to case), if the document has it.
pub fn section(text: &str, name: &str) -> Option<String> {
    sections(text).into_iter().find(|s| !s.name.is_empty() && same(&s.name, name)).map(|s| s.body)
}

/// `body` as a section's body that cannot change how the rest of the document parses: a line
/// that would read as a heading is kept as `\# ...` (Markdown shows it as written), and a
/// code block it leaves open is closed at its end. (A body with an open fence made every
/// later section vanish, and one with `# Facts` shadowed the real one.)
fn contained(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 8);
    let mut fenced = false;
    for line in body.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && heading(line.trim_end_matches('\n')).is_some() {
            out.push('\\');
        }
        out.push_str(line);
    }
    if fenced {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("```");
    }
    out
}

/// The document with section `name`'s body replaced by `body` (the heading and every other
/// section as they were, byte for byte). A section the document lacks is added: a standard
/// one before the first standard section that follows it in [`SECTIONS`], any other at the end.
/// The body is kept from reopening the document's structure (see [`contained`]).
pub fn replace_section(text: &str, name: &str, body: &str) -> String {
    let mut body = contained(body.trim_matches('\n'));
    body.push('\n');
    let mut parts = sections(text);
    if let Some(s) = parts.iter_mut().find(|s| !s.name.is_empty() && same(&s.name, name)) {
        // Keep the blank line that separated it from the next heading.
        s.body = if s.body.ends_with("\n\n") { format!("{body}\n") } else { body };
    } else {
        let rank = |n: &str| SECTIONS.iter().position(|s| same(s, n));
        let at = rank(name).and_then(|mine| parts.iter().position(|s| rank(&s.name).is_some_and(|theirs| theirs > mine))).unwrap_or(parts.len());
        if let Some(before) = at.checked_sub(1).and_then(|i| parts.get_mut(i))
            && !before.body.ends_with("\n\n")
        {
            if !before.body.ends_with('\n') {
                before.body.push('\n');
            }
            before.body.push('\n');
        }
        let name = SECTIONS.iter().find(|s| same(s, name)).map_or(name.trim(), |s| *s);
        let separator = if at < parts.len() { "\n" } else { "" };
        parts.insert(at, Section { name: name.into(), body: format!("{body}{separator}"), line: 0 });
    }
    parts.into_iter().map(|s| if s.name.is_empty() { s.body } else { format!("# {}\n{}", s.name, s.body) }).collect()
}

/// A new document: spec 004's sections, each with a line saying what goes in it.
pub fn template() -> String {
    const WHAT: [&str; 8] = [
        "Why this memory exists and what it covers.",
        "What we are doing now.",
        "Milestones, blockers, next actions.",
        "Approaches that work.",
        "Stable preferences of the user.",
        "Stable facts, dates, references.",
        "Important events, one line each.",
        "Key decisions and their rationale.",
    ];
    SECTIONS.iter().zip(WHAT).map(|(name, what)| format!("# {name}\n{what}\n")).collect::<Vec<_>>().join("\n")
}
