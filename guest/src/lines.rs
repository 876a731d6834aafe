//! Spec 000 §6 step 1: normalization. Line endings become `\n` and trailing whitespace
//! goes, but nothing is moved, so a position in a [`Line`] is a position in the text the
//! caller gave, which is what diagnostics must point at.

/// One line of the input. `lead` is its leading whitespace exactly as written (snippets
/// keep it); `body` is the rest with trailing whitespace removed.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    pub number: u32,
    pub lead: &'a str,
    pub body: &'a str,
}

impl<'a> Line<'a> {
    /// Indentation width with a tab counted as two spaces (the DSL's unit of indentation).
    /// The lead is ASCII, so its bytes are its characters.
    pub fn indent(&self) -> usize {
        self.lead.len() + self.lead.bytes().filter(|&b| b == b'\t').count()
    }

    pub fn is_blank(&self) -> bool {
        self.body.is_empty()
    }

    /// The 1-based column of `part`, which must be a slice of `self.body`.
    pub fn column_of(&self, part: &str) -> u32 {
        let offset = (part.as_ptr() as usize).saturating_sub(self.body.as_ptr() as usize);
        let offset = offset.min(self.body.len());
        let before = self.body.get(..offset).map_or(0, |s| s.chars().count());
        to_u32(self.lead.len() + before + 1)
    }

    /// The 1-based column of the first non-blank character.
    pub fn first_column(&self) -> u32 {
        self.column_of(self.body)
    }
}

/// Splits `text` into lines, treating `\r\n` and a lone `\r` as line breaks.
pub fn split(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut number = 0u32;
    loop {
        number = number.saturating_add(1);
        let (raw, next) = match memchr::memchr2(b'\n', b'\r', rest.as_bytes()) {
            Some(i) => {
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                (&rest[..i], Some(&rest[i + skip..]))
            }
            None => (rest, None),
        };
        // ASCII whitespace only: other spaces (NBSP, ideographic) are content.
        let trimmed = raw.trim_ascii_end();
        let body = trimmed.trim_ascii_start();
        let lead = &trimmed[..trimmed.len() - body.len()];
        out.push(Line { number, lead, body });
        match next {
            Some(n) => rest = n,
            None => break,
        }
    }
    // A final newline does not start a line of its own.
    if out.len() > 1 && out.last().is_some_and(|l| l.lead.is_empty() && l.body.is_empty()) && text.ends_with(['\n', '\r']) {
        out.pop();
    }
    out
}

pub fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
