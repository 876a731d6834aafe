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
    /// Indentation width with a tab counted as two spaces (the DSL's unit of indentation).
    pub indent: usize,
    /// Whether the lead holds a form feed, the one control character it can hold.
    pub form_feed: bool,
}

impl<'a> Line<'a> {
    /// Whether the lead is spaces alone.
    pub fn spaces_only(&self) -> bool {
        self.indent == self.lead.len() && !self.form_feed
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
        let (n, tabs, form_feed) = lead(trimmed.as_bytes());
        let (lead, body) = trimmed.split_at(n);
        out.push(Line { number, lead, body, indent: n + tabs, form_feed });
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

/// The length of the ASCII whitespace `line` begins with, the tabs in it, and whether it holds
/// a form feed. Read once per line, where every use of the lead used to read it again; spaces
/// eight at a time, since code in a snippet is indented by runs of them and each byte would be
/// a loop turn (and an epoch check, in a component).
fn lead(line: &[u8]) -> (usize, usize, bool) {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    let mut n = 0;
    while let Some(word) = line.get(n..n + 8) {
        // The first byte that is not a space is the lowest non-zero byte of the difference.
        let other = u64::from_le_bytes(word.try_into().expect("eight bytes")) ^ SPACES;
        n += other.trailing_zeros() as usize / 8;
        if other != 0 {
            break;
        }
    }
    let (mut tabs, mut form_feed) = (0, false);
    while let Some(&b) = line.get(n) {
        match b {
            b' ' => {}
            b'\t' => tabs += 1,
            0x0c => form_feed = true,
            // `\n` and `\r` end a line before it gets here.
            _ => break,
        }
        n += 1;
    }
    (n, tabs, form_feed)
}

pub fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_lead_is_what_trimming_takes(line in "( {0,17}[\t\u{c}]?){0,3}[a é\t\u{c}]{0,6}") {
            let body = line.trim_ascii_start();
            let lead = &line[..line.len() - body.len()];
            let tabs = lead.bytes().filter(|&b| b == b'\t').count();
            prop_assert_eq!(super::lead(line.as_bytes()), (lead.len(), tabs, lead.contains('\u{c}')));
        }
    }
}
