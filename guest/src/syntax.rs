//! The line grammar of the DSL, in nom. Each line is classified on its own; `parse.rs`
//! runs the state machine that gives the lines their meaning.

use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::char;
use nom::combinator::{opt, recognize, rest};
use nom::sequence::{pair, terminated};
use nom::{IResult, Parser};

use crate::scan::{CHUNK, any};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Progress,
    Learnings,
    Verbatim,
}

impl Section {
    pub fn name(self) -> &'static str {
        match self {
            Section::Progress => "CURRENT_PROGRESS",
            Section::Learnings => "KEY_LEARNINGS",
            Section::Verbatim => "VERBATIM_CONTEXT",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    Completed,
    InProgress,
    Remaining,
    Add,
    Archive,
}

impl List {
    pub fn name(self) -> &'static str {
        match self {
            List::Completed => "Completed:",
            List::InProgress => "In Progress:",
            List::Remaining => "Remaining:",
            List::Add => "ADD:",
            List::Archive => "ARCHIVE:",
        }
    }

    pub fn belongs_to(self, section: Section) -> bool {
        matches!(
            (section, self),
            (Section::Progress, List::Completed | List::InProgress | List::Remaining) | (Section::Learnings | Section::Verbatim, List::Add | List::Archive)
        )
    }
}

/// What a line is, judged from the line alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind<'a> {
    Blank,
    /// A code fence: the fence character and the length of its run.
    Fence(char, usize),
    /// A section header; `rest` is any text after its colon.
    Section(Section, &'a str),
    /// A list header inside a section; `rest` is any text after its colon.
    List(List, &'a str),
    /// A list header's name alone on its line without its colon (`In Progress`), as models
    /// write it: the header, with a warning, where its section expects that list.
    BareList(List),
    /// A bullet (`-`, `*`, `+` or `1.`); the text after the marker.
    Bullet(&'a str),
    /// `(none)` on a line of its own.
    Nothing,
    Text,
}

pub fn classify(body: &str) -> Kind<'_> {
    if body.is_empty() {
        return Kind::Blank;
    }
    if let Some((c, n)) = fence(body) {
        return Kind::Fence(c, n);
    }
    if let Ok((content, _)) = bullet_marker(body) {
        return Kind::Bullet(content.trim_start());
    }
    if is_nothing(body) {
        return Kind::Nothing;
    }
    header(body).unwrap_or(Kind::Text)
}

/// Where the first control character other than tab and the line breaks is in `text` (a line,
/// or a whole input): C0, DEL, or C1 (which UTF-8 writes as 0xC2 and 0x80-0x9F). Sixty-four
/// bytes a turn, then sixteen ([`crate::scan`]), since every update passes here and almost none
/// has one.
pub fn control_at(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let exact = |i: usize| {
        let b = bytes[i];
        (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7f || (b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)))
    };
    // One unsigned comparison per `any`, which is a few vector instructions; `b < 0x20 && b !=
    // b'\t'` in one made a chunk cost fifty. Inlined: called, it is a call per chunk.
    #[inline(always)]
    fn suspect<const N: usize>(chunk: &[u8; N]) -> bool {
        any(chunk, |b| b < 0x09)
            | any(chunk, |b| b.wrapping_sub(0x0b) < 0x02)
            | any(chunk, |b| b.wrapping_sub(0x0e) < 0x12)
            | any(chunk, |b| b == 0x7f)
            | any(chunk, |b| b == 0xc2)
    }
    let n = bytes.len();
    if n < CHUNK {
        return (0..n).find(|&i| exact(i));
    }
    // Four chunks a turn while four fit (a whole input is read here): a turn's own cost, its
    // bounds and its epoch check in a component, was as much as a chunk's test. Four with a
    // suspect byte are read again below, a chunk at a time.
    let mut i = 0;
    while let Some(block) = bytes.get(i..i + 4 * CHUNK)
        && !suspect::<{ 4 * CHUNK }>(block.try_into().expect("four chunks"))
    {
        i += 4 * CHUNK;
    }
    // The last chunk ends at the end (overlapping the one before), so that no line pays for
    // its tail a byte at a time. A chunk with a suspect byte goes to the exact check.
    let chunk = |at: usize| -> &[u8; CHUNK] { bytes[at..at + CHUNK].try_into().expect("a whole chunk") };
    while i < n {
        let start = i.min(n - CHUNK);
        if suspect(chunk(start))
            && let Some(at) = (start..start + CHUNK).find(|&at| exact(at))
        {
            return Some(at);
        }
        i += CHUNK;
    }
    None
}

/// `(none)` or `none`, as LLMs write an empty list.
// Asked of every bullet: most begin with neither, and are answered at their first byte,
// inlined, without a call.
#[inline(always)]
pub fn is_nothing(text: &str) -> bool {
    matches!(text.trim_ascii_start().as_bytes().first(), Some(b'(' | b'n' | b'N')) && spells_nothing(text)
}

/// [`is_nothing`] past its first byte.
fn spells_nothing(text: &str) -> bool {
    let t = text.trim_ascii().trim_end_matches('.');
    t.eq_ignore_ascii_case("(none)") || t.eq_ignore_ascii_case("none")
}

fn fence(body: &str) -> Option<(char, usize)> {
    let c = body.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = body.chars().take_while(|x| *x == c).count();
    let info = &body[run..];
    (run >= 3 && !info.contains(c)).then_some((c, run))
}

fn bullet_marker(input: &str) -> IResult<&str, &str> {
    alt((recognize(pair(alt((tag("-"), tag("*"), tag("+"), tag("•"))), alt((space1, end)))), recognize((digit1, alt((tag("."), tag(")"))), space1))))
        .parse(input)
}

fn end(input: &str) -> IResult<&str, &str> {
    if input.is_empty() { Ok((input, input)) } else { Err(nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Eof))) }
}

/// An ASCII keyword in any case. nom's `tag_no_case` folds full Unicode case, which the
/// DSL's keywords do not need and which costs a table walk per character.
fn keyword<'a>(kw: &'static str) -> impl Fn(&'a str) -> IResult<&'a str, &'a str> {
    move |input: &'a str| match input.get(..kw.len()) {
        Some(head) if head.eq_ignore_ascii_case(kw) => Ok((&input[kw.len()..], head)),
        _ => Err(nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Tag))),
    }
}

fn emphasis(input: &str) -> IResult<&str, Option<&str>> {
    opt(alt((tag("**"), tag("__")))).parse(input)
}

/// A header: optional markdown `#`s and bold, a known name in any case with `_`, `-` or
/// spaces between words, and usually a colon. Without a colon only a markdown header, a
/// bold one, or the canonical upper-case spelling counts, so prose is not mistaken for one.
fn header(body: &str) -> Option<Kind<'_>> {
    let parsed: IResult<&str, _> = (terminated(hashes, space0), emphasis, header_name, emphasis, opt(char(':')), emphasis, space0, rest).parse(body);
    let (_, (hashes, bold, (name, canonical), bold_close, colon, _, _, after)) = parsed.ok()?;
    let name = name.trim_ascii();
    let marked = colon.is_some() || !hashes.is_empty() || bold.is_some() || bold_close.is_some();
    let exact = name.as_bytes() == canonical;
    let list = |l: List| if marked || exact || !after.is_empty() { Kind::List(l, after) } else { Kind::BareList(l) };
    let kind = match canonical {
        b"CURRENT_PROGRESS" => Kind::Section(Section::Progress, after),
        b"KEY_LEARNINGS" => Kind::Section(Section::Learnings, after),
        b"VERBATIM_CONTEXT" => Kind::Section(Section::Verbatim, after),
        b"COMPLETED" => list(List::Completed),
        b"IN_PROGRESS" | b"INPROGRESS" => list(List::InProgress),
        b"REMAINING" => list(List::Remaining),
        b"ADD" => list(List::Add),
        b"ARCHIVE" => list(List::Archive),
        _ => return None,
    };
    (marked || exact || matches!(kind, Kind::BareList(_))).then_some(kind)
}

/// The names a header may have: its words upper-cased and joined by `_`.
const KNOWN: [&[u8]; 9] =
    [b"CURRENT_PROGRESS", b"KEY_LEARNINGS", b"VERBATIM_CONTEXT", b"COMPLETED", b"IN_PROGRESS", b"INPROGRESS", b"REMAINING", b"ADD", b"ARCHIVE"];
const LONGEST: usize = 16;

/// `SPELLS[i][s]`: the names (a bit each, by their place in [`KNOWN`]) whose `i`th byte is
/// the symbol `s` ([`symbol`]).
const SPELLS: [[u16; 27]; LONGEST] = {
    let mut table = [[0; 27]; LONGEST];
    let mut k = 0;
    while k < KNOWN.len() {
        let mut i = 0;
        while i < KNOWN[k].len() {
            table[i][symbol(KNOWN[k][i])] |= 1 << k;
            i += 1;
        }
        k += 1;
    }
    table
};

/// The names whose `i`th byte is `upper`.
fn spells(i: usize, upper: u8) -> u16 {
    SPELLS.get(i).map_or(0, |at| at[symbol(upper)])
}

/// `A`-`Z` as 0-25, `_` as 26.
const fn symbol(upper: u8) -> usize {
    if upper == b'_' { 26 } else { (upper - b'A') as usize }
}

/// A header's words (ASCII letters, `_`, `-` and spaces, at least one) and the known name
/// they spell, upper-cased and joined by `_` (`in-progress` → `IN_PROGRESS`). It fails at
/// the first letter that no known name has there: this runs on every line that is not a
/// bullet, snippet code included, which would otherwise be read to the end of its first run
/// of letters (and each byte be a loop turn, an epoch check in a component).
fn header_name(input: &str) -> IResult<&str, (&str, &'static [u8])> {
    let fail = || Err(nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::TakeWhile1)));
    let mut names: u16 = (1 << KNOWN.len()) - 1;
    // Bytes of the name spelled so far, and whether the last byte read was a letter.
    let (mut spelled, mut in_word) = (0, false);
    let mut n = 0;
    for &b in input.as_bytes() {
        let letter = b.is_ascii_alphabetic();
        if !(letter || b == b'_' || b == b'-' || b == b' ') {
            break;
        }
        n += 1;
        if !letter {
            in_word = false;
            continue;
        }
        if !in_word && spelled > 0 {
            names &= spells(spelled, b'_');
            spelled += 1;
        }
        names &= spells(spelled, b.to_ascii_uppercase());
        spelled += 1;
        in_word = true;
        if names == 0 {
            return fail();
        }
    }
    if n == 0 {
        return fail();
    }
    // Of the names spelled this far, the one that ends here.
    match KNOWN.iter().enumerate().find(|&(k, name)| names & (1 << k) != 0 && name.len() == spelled) {
        Some((_, name)) => Ok((&input[n..], (&input[..n], name))),
        None => fail(),
    }
}

fn hashes(input: &str) -> IResult<&str, &str> {
    Ok(bytes_while(input, |b| b == b'#'))
}

// nom's `space0`, `space1` and `digit1` on `&str` decode a character at a time, a loop turn
// and more per byte in a component. What the DSL's runs hold is ASCII, so these read bytes;
// they match what nom's match.

fn space0(input: &str) -> IResult<&str, &str> {
    Ok(bytes_while(input, |b| b == b' ' || b == b'\t'))
}

fn space1(input: &str) -> IResult<&str, &str> {
    at_least_one(input, |b| b == b' ' || b == b'\t', nom::error::ErrorKind::Space)
}

fn digit1(input: &str) -> IResult<&str, &str> {
    at_least_one(input, |b| b.is_ascii_digit(), nom::error::ErrorKind::Digit)
}

/// The ASCII bytes `test` takes from the start of `input`, and the rest.
fn bytes_while(input: &str, test: impl Fn(u8) -> bool) -> (&str, &str) {
    let n = input.bytes().take_while(|&b| b.is_ascii() && test(b)).count();
    (&input[n..], &input[..n])
}

fn at_least_one(input: &str, test: impl Fn(u8) -> bool, kind: nom::error::ErrorKind) -> IResult<&str, &str> {
    match bytes_while(input, test) {
        (_, "") => Err(nom::Err::Error(nom::error::Error::new(input, kind))),
        taken => Ok(taken),
    }
}

/// What went wrong inside an item, and where (a slice of the item text).
#[derive(Debug)]
pub struct ItemError<'a> {
    pub at: &'a str,
    pub message: String,
}

fn fail<'a, T>(at: &'a str, message: impl Into<String>) -> Result<T, ItemError<'a>> {
    Err(ItemError { at, message: message.into() })
}

/// `because <reason>: <rest>`: the reason runs to the first colon. Returns the reason and
/// the text after the colon, both trimmed.
pub fn because_colon<'a>(item: &'a str, what: &str) -> Result<(&'a str, &'a str), ItemError<'a>> {
    let Ok((after_kw, _)) = terminated(keyword("because"), space0).parse(item) else {
        return fail(item, format!("{what} must start with `because <reason>:`"));
    };
    // `because: <reason>: <rest>`, as models also write it: the first colon is not the end of
    // an empty reason when another follows.
    let colon = |text: &str| memchr::memchr(b':', text.as_bytes());
    let after_kw = match after_kw.strip_prefix(':') {
        Some(after) if colon(after).is_some() => after.trim_start_matches([' ', '\t']),
        _ => after_kw,
    };
    let (reason, after_reason) = after_kw.split_at(colon(after_kw).unwrap_or(after_kw.len()));
    if after_reason.is_empty() {
        return fail(after_kw, format!("{what} needs a `:` after the reason"));
    }
    let reason = reason.trim_ascii();
    if reason.is_empty() {
        return fail(after_kw, "the reason after `because` is empty");
    }
    Ok((reason, after_reason[1..].trim_ascii()))
}

/// `[KL-<n>] because <reason>`, brackets and a colon after the ID optional. Returns the
/// normalized ID (`KL-7`) and the reason.
pub fn archive_item<'a>(item: &'a str, prefix: &str) -> Result<(String, &'a str), ItemError<'a>> {
    let parsed: IResult<&str, _> = (opt(char('[')), alt((keyword("KL"), keyword("VC"))), char('-'), digit1, opt(char(']')), opt(char(':')), space0).parse(item);
    let Ok((after_id, (_, kind, _, digits, _, _, _))) = parsed else {
        return fail(item, format!("expected `{prefix}-<n> because <reason>`"));
    };
    if !kind.eq_ignore_ascii_case(prefix) {
        return fail(item, format!("this section can only archive {prefix}- IDs"));
    }
    let Ok(n) = digits.parse::<u32>() else {
        return fail(digits, format!("{prefix}-{digits} is not a valid ID"));
    };
    let Ok((reason, _)) = terminated(keyword("because"), space0).parse(after_id) else {
        return fail(after_id, format!("archiving {prefix}-{n} needs `because <reason>` after the ID"));
    };
    // `because: <reason>`, as models also write it.
    let reason = reason.strip_prefix(':').unwrap_or(reason).trim_ascii();
    if reason.is_empty() {
        return fail(after_id, "the reason after `because` is empty");
    }
    Ok((crate::ids::id(prefix, n), reason))
}

/// `<label> => <snippet start>`. Returns the trimmed label and what follows `=>`.
pub fn label_snippet(text: &str) -> Result<(&str, &str), ItemError<'_>> {
    let Some(i) = text.as_bytes().windows(2).position(|w| w == b"=>") else {
        return fail(text, "expected `<label> => <snippet>` after the reason");
    };
    let label = text[..i].trim_ascii();
    if label.is_empty() {
        return fail(text, "the label before `=>` is empty");
    }
    Ok((label, text[i + 2..].trim_ascii_start()))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The plain definition `control_at` must agree with, sixteen bytes at a time or not.
    fn naive(text: &str) -> Option<usize> {
        text.char_indices().find(|&(_, c)| !matches!(c, '\t' | '\n' | '\r') && c.is_control()).map(|(i, _)| i)
    }

    proptest! {
        #[test]
        fn byte_runs_take_what_noms_take(text in "[ \t0-9a#é\u{3000}\u{663}]{0,12}") {
            use nom::character::complete as nom_char;
            type R<'a> = nom::IResult<&'a str, &'a str>;
            prop_assert_eq!(super::space0(&text), nom_char::space0::<_, nom::error::Error<&str>>(text.as_str()) as R);
            prop_assert_eq!(super::space1(&text), nom_char::space1::<_, nom::error::Error<&str>>(text.as_str()) as R);
            prop_assert_eq!(super::digit1(&text), nom_char::digit1::<_, nom::error::Error<&str>>(text.as_str()) as R);
        }

        #[test]
        fn a_header_name_is_its_words_joined_and_known(
            input in "((?i:current|progress|in|key|learnings|add|archive|verbatim|context|completed|remaining|rem|a|x)[ _-]{0,2}){1,3}[:(x]{0,2}"
        ) {
            let spelled = |name: &str| name.split(['_', '-', ' ']).filter(|w| !w.is_empty()).collect::<Vec<_>>().join("_").to_ascii_uppercase();
            let n = input.bytes().take_while(|&b| b.is_ascii_alphabetic() || b"_- ".contains(&b)).count();
            let plain = (n > 0 && super::KNOWN.contains(&spelled(&input[..n]).as_bytes())).then(|| (&input[n..], &input[..n], spelled(&input[..n])));
            let found = super::header_name(&input).ok().map(|(rest, (name, known))| (rest, name, String::from_utf8(known.to_vec()).unwrap()));
            prop_assert_eq!(found, plain);
        }

        #[test]
        fn control_at_finds_what_a_plain_scan_finds(text in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{a0}é¢]){0,40}") {
            prop_assert_eq!(super::control_at(&text), naive(&text));
        }

        #[test]
        fn a_lone_control_character_in_a_long_text_is_found(
            text in "[a-zé \t\n\r]{0,150}", c in "[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}]", at in any::<prop::sample::Index>()
        ) {
            let mut text = text;
            let at = text.char_indices().map(|(i, _)| i).nth(at.index(text.chars().count() + 1)).unwrap_or(text.len());
            text.insert_str(at, &c);
            prop_assert_eq!(super::control_at(&text), naive(&text));
        }
    }
}
