//! Escaping: every string on the page comes from a session, a board or a model, so all of it
//! goes through [`esc`] (text and attribute values alike). The page exists so a person sees
//! what the model keeps, so what would not show as itself shows as its code point instead:
//! a tag character that carries invisible text, a bidirectional override that reorders
//! what follows (`hs.ti_etucexe` read as `execute_it.sh`), a zero-width character or a
//! control.

use std::fmt;

/// Text made safe for an HTML text node or a quoted attribute value, hidden characters shown
/// as `⟨U+202E⟩` (newlines and tabs stay: they are how text is laid out).
pub struct Esc<'a>(pub &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let special = |c: char| matches!(c, '&' | '<' | '>' | '"' | '\'') || (workmem_store::ids::is_hidden(c) && c != '\n' && c != '\t');
        let mut rest = self.0;
        while let Some(i) = rest.find(special) {
            f.write_str(&rest[..i])?;
            let c = rest[i..].chars().next().expect("found at i");
            match c {
                '&' => f.write_str("&amp;")?,
                '<' => f.write_str("&lt;")?,
                '>' => f.write_str("&gt;")?,
                '"' => f.write_str("&quot;")?,
                '\'' => f.write_str("&#39;")?,
                hidden => write!(f, "⟨U+{:04X}⟩", u32::from(hidden))?,
            }
            rest = &rest[i + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

pub fn esc(s: &str) -> Esc<'_> {
    Esc(s)
}

/// At most `max` characters of `s`, with an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(esc(r#"<img src=x onerror="a('&')">"#).to_string(), "&lt;img src=x onerror=&quot;a(&#39;&amp;&#39;)&quot;&gt;");
        assert_eq!(esc("plain").to_string(), "plain");
    }

    #[test]
    fn shows_hidden_characters() {
        assert_eq!(esc("\u{202e}hs.ti_etucexe").to_string(), "⟨U+202E⟩hs.ti_etucexe");
        assert_eq!(esc("a\u{e0049}\u{200b}b\u{1b}[2J").to_string(), "a⟨U+E0049⟩⟨U+200B⟩b⟨U+001B⟩[2J");
        assert_eq!(esc("line\n\tindented").to_string(), "line\n\tindented");
        // A live learning written to look struck out, as an archived one shows.
        assert_eq!(esc("o\u{336}k\u{20d2}").to_string(), "o⟨U+0336⟩k⟨U+20D2⟩");
        assert_eq!(esc("caf\u{301}").to_string(), "caf\u{301}", "other combining marks are text");
    }

    #[test]
    fn clips_on_characters() {
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("hé", 2), "hé");
    }
}
