//! Spec 004's context document: every validation rule refused by name with its position, and
//! sections read and replaced without touching the rest.

use workmem_guest::document::{self, DocumentError, SECTIONS};

const LIMIT: u64 = 1024;

#[test]
fn each_rule_is_refused_by_name_and_position() {
    assert_eq!(document::validate(b"# Facts\n- CEO = Bob\n", LIMIT), Ok("# Facts\n- CEO = Bob\n"));
    assert_eq!(document::validate(b"  \n\t\n", LIMIT), Err(DocumentError::Empty));
    assert_eq!(document::validate(&[b'a'; 1025], LIMIT), Err(DocumentError::TooLarge { bytes: 1025, limit: 1024 }));
    assert_eq!(document::validate(b"ok\n\xc3\xa9t\xff\xfe", LIMIT), Err(DocumentError::InvalidUtf8 { line: 2, column: 3 }));
    assert_eq!(
        document::validate("# Facts\n- tab\tok, bell \u{7} not".as_bytes(), LIMIT),
        Err(DocumentError::ControlCharacter { line: 2, column: 16, code: 7 })
    );
    assert_eq!(document::validate(b"windows\r\nline", LIMIT), Err(DocumentError::ControlCharacter { line: 1, column: 8, code: 13 }));
    assert_eq!(document::validate("é\u{FDD0}".as_bytes(), LIMIT), Err(DocumentError::Noncharacter { line: 1, column: 2, code: 0xFDD0 }));
    assert_eq!(document::validate("x\u{10FFFF}".as_bytes(), LIMIT), Err(DocumentError::Noncharacter { line: 1, column: 2, code: 0x10FFFF }));
    assert_eq!(document::validate("\u{85}".as_bytes(), LIMIT), Err(DocumentError::ControlCharacter { line: 1, column: 1, code: 0x85 }));
    assert_eq!(
        DocumentError::ControlCharacter { line: 2, column: 20, code: 7 }.to_string(),
        "2:20: control character U+0007; only tab and newline are allowed"
    );
    assert_eq!(DocumentError::TooLarge { bytes: 1025, limit: 1024 }.to_string(), "the document is 1025 bytes, over the limit of 1024");
}

const DOC: &str = "Preamble.\n\n# Description\nA memory.\n\n# Progress\n- shipped\n```\n# not a heading\n```\n\n# Facts\n- CEO = Bob\n";

#[test]
fn sections_are_read_by_heading_outside_code() {
    let names: Vec<(String, u32)> = document::sections(DOC).into_iter().map(|s| (s.name, s.line)).collect();
    assert_eq!(names, [("".into(), 1), ("Description".into(), 3), ("Progress".into(), 6), ("Facts".into(), 12)]);
    assert_eq!(document::section(DOC, "progress").as_deref(), Some("- shipped\n```\n# not a heading\n```\n\n"));
    assert_eq!(document::section(DOC, "Timeline"), None);
    let joined: String = document::sections(DOC).into_iter().map(|s| if s.name.is_empty() { s.body } else { format!("# {}\n{}", s.name, s.body) }).collect();
    assert_eq!(joined, DOC, "sections put back together are the document");
}

#[test]
fn replacing_a_section_leaves_the_rest_byte_for_byte() {
    let replaced = document::replace_section(DOC, "PROGRESS", "- shipped\n- next: auth hotfix");
    assert_eq!(replaced, DOC.replace("- shipped\n```\n# not a heading\n```\n", "- shipped\n- next: auth hotfix\n"));
    // Missing standard sections go where spec 004 orders them; others at the end.
    let with_patterns = document::replace_section(DOC, "patterns", "- retry once");
    assert!(with_patterns.contains("```\n\n# Patterns\n- retry once\n\n# Facts\n"), "{with_patterns}");
    let with_other = document::replace_section(DOC, "Glossary", "JWT: a token");
    assert!(with_other.ends_with("- CEO = Bob\n\n# Glossary\nJWT: a token\n"), "{with_other}");
    assert_eq!(document::replace_section(&with_other, "glossary", "JWT: a token"), with_other, "idempotent");
    let first = document::replace_section("", "Decisions", "- JWT");
    assert_eq!(first, "# Decisions\n- JWT\n");
}

#[test]
fn the_template_has_spec_004s_sections_in_order() {
    let t = document::template();
    assert_eq!(document::sections(&t).into_iter().map(|s| s.name).collect::<Vec<_>>(), SECTIONS);
    assert!(document::validate(t.as_bytes(), LIMIT).is_ok());
}
