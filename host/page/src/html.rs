//! Escaping: every string on the page comes from a session, a board or a model, so all of it
//! goes through [`esc`] (text and attribute values alike).

use std::fmt;

/// Text made safe for an HTML text node or a quoted attribute value.
pub struct Esc<'a>(pub &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..i])?;
            f.write_str(match rest.as_bytes()[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[i + 1..];
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
    fn clips_on_characters() {
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("hé", 2), "hé");
    }
}
