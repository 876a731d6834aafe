//! The one rule every ID a caller names follows in the stores (a board, a vault, a memory, an
//! agent): IDs travel into URLs, file names, terminals and pages, so none may hold what would
//! make it a path, hide it or rewrite the screen it is printed on. Session IDs, which are
//! directory names, keep a narrower alphabet of their own (see `session`).

/// The most bytes an ID may hold: a key every store indexes, carried by PostgreSQL's NOTIFY
/// (whose payload must stay under 8,000 bytes).
pub const MAX_ID: usize = 256;

/// Whether `c` changes how text around it is shown without showing itself: controls (which a
/// terminal obeys: ESC, BEL, ...), bidirectional overrides and isolates (which reorder what
/// follows), zero-width characters, the byte order mark, Unicode's tag characters (which
/// carry invisible text) and combining overlays (canonical combining class 1: a long stroke
/// after each letter draws a line through it, text that looks struck out).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
        || is_overlay(c)
}

/// The combining overlays: every character of canonical combining class 1 (Unicode 16).
fn is_overlay(c: char) -> bool {
    matches!(
        c,
        '\u{0334}'..='\u{0338}'
            | '\u{1cd4}'
            | '\u{1ce2}'..='\u{1ce8}'
            | '\u{20d2}'..='\u{20d3}'
            | '\u{20d8}'..='\u{20da}'
            | '\u{20e5}'..='\u{20e6}'
            | '\u{20ea}'..='\u{20eb}'
            | '\u{10a39}'
            | '\u{16af0}'..='\u{16af4}'
            | '\u{1bc9e}'
            | '\u{1d167}'..='\u{1d169}'
    )
}

/// `Ok` when `id` may name a `what` ("board", "vault", ...); else the sentence that says why.
pub fn check(what: &str, id: &str) -> Result<(), String> {
    let ok = !id.trim().is_empty() && id.len() <= MAX_ID && !id.chars().any(|c| is_hidden(c) || c == '/' || c == '\\') && id != "." && id != "..";
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the {what} ID {id:?} is refused: an ID is 1 to {MAX_ID} bytes, not blank, `.` or `..`, without `/`, `\\` or control and invisible characters"
        ))
    }
}
