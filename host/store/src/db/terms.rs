//! The words a context document is searched by, made here rather than by each database's own
//! full-text engine: SQLite's FTS5 and PostgreSQL's `simple` configuration split and fold
//! text differently (`cafe` found `café` on SQLite only), PostgreSQL refused a 2 MB document
//! its tsvector could not hold, and FTS5 could not look a vault up first. Stored in
//! `memory_terms`, keyed by vault, then word, a search costs what its vault holds.

use super::Result;
use super::sql::{Kind, Sql};
use std::collections::BTreeMap;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// The longest word kept, in characters; a longer one is cut there (the same in a query).
pub const MAX_TERM_CHARS: usize = 64;

/// The words of `text` with how often each occurs: runs of letters and digits, folded to
/// lower case with accents removed (compatibility decomposition, combining marks dropped), so
/// `Café`, `CAFE` and `café` are one word.
pub fn terms(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let folded: String =
            word.nfkd().filter(|c| !is_combining_mark(*c)).flat_map(char::to_lowercase).filter(|c| c.is_alphanumeric()).take(MAX_TERM_CHARS).collect();
        if !folded.is_empty() {
            *out.entry(folded).or_insert(0) += 1;
        }
    }
    out
}

/// Puts `text`'s words in the search index as `memory`'s (in `vault`), in place of what its
/// previous version had: one statement each way, touching this memory's rows only.
pub(crate) fn index(db: &mut dyn Sql, vault: &str, memory: &str, text: &str) -> Result<()> {
    db.execute("DELETE FROM memory_terms WHERE vault_id = $1 AND memory_id = $2", &[vault.into(), memory.into()])?;
    let terms = serde_json::to_string(&terms(text)).expect("words and counts serialize");
    let each = match db.kind() {
        Kind::Sqlite => "SELECT $1, key, $2, value FROM json_each($3)",
        Kind::Postgres => "SELECT $1, key, $2, value::bigint FROM json_each_text($3::text::json)",
    };
    db.execute(&format!("INSERT INTO memory_terms (vault_id, term, memory_id, count) {each}"), &[vault.into(), memory.into(), terms.as_str().into()])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_fold_case_and_accents() {
        let t = terms("Café, CAFE and café: naïve ﬁle Straße x².");
        assert_eq!(t["cafe"], 3);
        assert!(t.contains_key("naive") && t.contains_key("file") && t.contains_key("straße") && t.contains_key("x2"), "{t:?}");
        assert_eq!(terms(&"é".repeat(100)).keys().next().unwrap().chars().count(), MAX_TERM_CHARS);
        assert!(terms(" \n-- ").is_empty());
    }
}
