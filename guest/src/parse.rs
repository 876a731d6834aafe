//! Spec 000 §6 steps 2-5 without state: extract the sections, collect the operations and
//! check the invariants a single update must hold. A small state machine over classified
//! lines; it never stops at the first problem, so the LLM (or a person) sees them all.

use crate::limits;
use crate::lines::{self, Line};
use crate::syntax::{self, ItemError, Kind, List, Section};
use crate::{ArchiveOp, Diagnostic, ERROR, LearningAdd, LearningOps, MemoryState, ParseOutcome, Progress, Update, VerbatimAdd, VerbatimOps, WARNING};

/// At most this many diagnostics are reported for one input, the rest counted in one
/// more: ten megabytes of repeated headers must not become a million diagnostics.
pub const MAX_DIAGNOSTICS: usize = 100;

/// A parse result that keeps what `validate` needs: where each ARCHIVE bullet stood.
pub struct Parsed {
    pub update: Update,
    diagnostics: Vec<Diagnostic>,
    /// Diagnostics past [`MAX_DIAGNOSTICS`]: how many, where the first was, and whether
    /// any was an error.
    dropped: Option<(usize, (u32, u32), bool)>,
    pub learning_archive_at: Vec<(u32, u32)>,
    pub verbatim_archive_at: Vec<(u32, u32)>,
}

impl Parsed {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == ERROR) || self.dropped.is_some_and(|(_, _, error)| error)
    }

    pub fn push(&mut self, d: Diagnostic) {
        if self.diagnostics.len() < MAX_DIAGNOSTICS {
            self.diagnostics.push(d);
            return;
        }
        let (n, at, error) = self.dropped.get_or_insert((0, (d.line, d.column), false));
        *n += 1;
        *at = (*at).min((d.line, d.column));
        *error |= d.severity == ERROR;
    }

    /// The diagnostics in text order, ending with the count of those left out, if any.
    pub fn diagnostics(&mut self) -> Vec<Diagnostic> {
        let mut out = std::mem::take(&mut self.diagnostics);
        out.sort_by_key(|d| (d.line, d.column));
        if let Some((n, (line, column), error)) = self.dropped.take() {
            let severity = if error { ERROR } else { WARNING };
            out.push(diagnostic(
                severity,
                line,
                column,
                format!("{n} more problem(s) from here on are not listed (at most {MAX_DIAGNOSTICS} are reported per input)"),
            ));
        }
        out
    }

    pub fn outcome(mut self) -> ParseOutcome {
        let ok = !self.has_errors();
        let diagnostics = self.diagnostics();
        let update = if ok { self.update } else { empty_update() };
        ParseOutcome { ok, update, diagnostics }
    }
}

/// The update that changes nothing.
pub fn empty_update() -> Update {
    Update {
        progress: MemoryState::default().progress,
        learnings: LearningOps { add: Vec::new(), archive: Vec::new() },
        verbatim: VerbatimOps { add: Vec::new(), archive: Vec::new() },
    }
}

pub fn diagnostic(severity: &str, line: u32, column: u32, message: impl Into<String>) -> Diagnostic {
    Diagnostic { severity: severity.to_string(), line, column, message: message.into() }
}

pub fn parse(text: &str) -> Parsed {
    // A byte order mark some editors and tools put first is not text; columns on line 1
    // count from after it, as editors show them.
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let lines = lines::split(text);
    let kinds: Vec<Kind> = lines.iter().map(|l| syntax::classify(l.body)).collect();
    let mut m = Machine::new();
    // The whole text is read for control characters first: almost no update has one, and
    // reading a line at a time costs each line its tail. Where it has one, each line is read.
    let suspect = if syntax::control_at(text).is_some() { &lines[..] } else { &[] };
    for line in suspect {
        let lead = line.form_feed.then_some(line.lead);
        for part in lead.into_iter().chain([line.body]) {
            if let Some(i) = syntax::control_at(part) {
                let c = part[i..].chars().next().map_or(0, u32::from);
                m.error(line, &part[i..], format!("control character U+{c:04X} is not allowed here (tab and newline are the only ones)"));
            }
        }
    }

    let Some(first) = kinds.iter().position(|k| matches!(k, Kind::Section(..))) else {
        let at = lines.iter().find(|l| !l.is_blank()).map_or((1, 1), |l| (l.number, l.first_column()));
        m.error_at(at.0, at.1, "no working-memory update found: expected a CURRENT_PROGRESS:, KEY_LEARNINGS: or VERBATIM_CONTEXT: section");
        return m.finish();
    };

    let fenced = kinds[..first].iter().any(|k| matches!(k, Kind::Fence(..)));
    if let Some(l) = (0..first).find(|&i| !matches!(kinds[i], Kind::Blank | Kind::Fence(..))).map(|i| lines[i]) {
        m.warn(&l, l.body, "text before the first section header is ignored");
    }

    // structured_after[i]: does any header or bullet follow line i?
    let mut structured_after = vec![false; lines.len()];
    for i in (0..lines.len().saturating_sub(1)).rev() {
        structured_after[i] =
            structured_after[i + 1] || matches!(kinds[i + 1], Kind::Section(..) | Kind::List(..) | Kind::BareList(_) | Kind::Bullet(_) | Kind::Nothing);
    }

    let mut end = lines.len();
    if fenced && let Some(close) = (first..lines.len()).rev().find(|&i| matches!(kinds[i], Kind::Fence(..)) && !structured_after[i]) {
        end = close;
        if let Some(i) = (close + 1..lines.len()).find(|&i| !matches!(kinds[i], Kind::Blank)) {
            m.warn(&lines[i], lines[i].body, "text after the closing code fence is ignored");
        }
    }

    for i in first..end {
        let prev_blank = i > 0 && kinds[i - 1] == Kind::Blank;
        if !m.line(lines[i], kinds[i], structured_after[i], prev_blank) {
            break;
        }
    }
    m.finish()
}

/// The item a wrapped line could belong to.
#[derive(Clone, Copy, PartialEq)]
enum Last {
    Nothing,
    Progress(List, usize),
    Learning(usize),
    Other,
}

struct Snippet<'a> {
    reason: String,
    label: String,
    first: &'a str,
    lines: Vec<Line<'a>>,
    bullet_indent: usize,
    /// Byte offset of the bullet's text in its line: continuation lines are indented
    /// relative to it.
    content_offset: usize,
    fence: Option<(char, usize)>,
    fence_closed: bool,
    at: (u32, u32),
}

struct Machine<'a> {
    section: Option<Section>,
    list: Option<List>,
    skipping: bool,
    seen: Vec<Section>,
    progress: Option<(Progress, (u32, u32))>,
    /// Where an `In Progress:` header was: an empty list is reported there.
    in_progress_at: Option<(u32, u32)>,
    snippet: Option<Snippet<'a>>,
    last: Last,
    indented_body: Option<bool>,
    parsed: Parsed,
}

impl<'a> Machine<'a> {
    fn new() -> Self {
        Machine {
            section: None,
            list: None,
            skipping: false,
            seen: Vec::new(),
            progress: None,
            in_progress_at: None,
            snippet: None,
            last: Last::Nothing,
            indented_body: None,
            parsed: Parsed { update: empty_update(), diagnostics: Vec::new(), dropped: None, learning_archive_at: Vec::new(), verbatim_archive_at: Vec::new() },
        }
    }

    fn error_at(&mut self, line: u32, column: u32, message: impl Into<String>) {
        self.parsed.push(diagnostic(ERROR, line, column, message));
    }

    fn error(&mut self, line: &Line, at: &str, message: impl Into<String>) {
        self.error_at(line.number, line.column_of(at), message);
    }

    fn warn(&mut self, line: &Line, at: &str, message: impl Into<String>) {
        self.parsed.push(diagnostic(WARNING, line.number, line.column_of(at), message));
    }

    fn item_error(&mut self, line: &Line, e: ItemError) {
        self.error(line, e.at, e.message);
    }

    /// Feeds one line; returns false once the rest of the input is to be ignored.
    fn line(&mut self, line: Line<'a>, kind: Kind<'a>, structured_after: bool, prev_blank: bool) -> bool {
        if let Some(sn) = self.snippet.as_mut() {
            if let (Some((c, n)), false) = (sn.fence, sn.fence_closed) {
                match kind {
                    Kind::Fence(fc, fnum) if fc == c && fnum >= n => sn.fence_closed = true,
                    _ => sn.lines.push(line),
                }
                return true;
            }
            match kind {
                Kind::Blank if !sn.fence_closed => {
                    sn.lines.push(line);
                    return true;
                }
                Kind::Blank => return true,
                // Whether the snippet is empty so far is asked only of a fence: asked of every
                // line, it made a snippet's cost grow with the square of its lines.
                Kind::Fence(c, n) if sn.fence.is_none() && sn.first.is_empty() && sn.lines.iter().all(|l| l.is_blank()) => {
                    sn.lines.clear();
                    sn.fence = Some((c, n));
                    return true;
                }
                _ if sn.fence_closed => self.close_snippet(),
                _ if line.indent > sn.bullet_indent => {
                    sn.lines.push(line);
                    return true;
                }
                Kind::Text | Kind::Fence(..) | Kind::BareList(_) if sn.bullet_indent == 0 || structured_after => {
                    sn.lines.push(line);
                    return true;
                }
                _ => self.close_snippet(),
            }
        }

        match kind {
            Kind::Blank | Kind::Nothing => {}
            Kind::Section(s, rest) => self.section(&line, s, rest),
            Kind::List(l, rest) => {
                self.note_indent(&line);
                self.list(&line, l, rest)
            }
            Kind::BareList(l) if self.section.is_some_and(|s| l.belongs_to(s)) => {
                self.note_indent(&line);
                self.warn(&line, line.body, format!("`{}` has no colon; read as the list header `{}`", line.body.trim_end(), l.name()));
                self.list(&line, l, "")
            }
            Kind::BareList(_) => return self.text(&line, structured_after, prev_blank),
            Kind::Bullet(content) => {
                self.note_indent(&line);
                self.bullet(line, content)
            }
            Kind::Text | Kind::Fence(..) => return self.text(&line, structured_after, prev_blank),
        }
        true
    }

    fn note_indent(&mut self, line: &Line) {
        self.indented_body.get_or_insert(line.indent > 0);
    }

    fn section(&mut self, line: &Line, s: Section, rest: &str) {
        self.section = Some(s);
        self.list = None;
        self.skipping = false;
        self.last = Last::Nothing;
        if self.seen.contains(&s) {
            self.error(line, line.body, format!("{} appears more than once; write each section once", s.name()));
        }
        self.seen.push(s);
        if s == Section::Progress && self.progress.is_none() {
            self.progress = Some((MemoryState::default().progress, (line.number, line.first_column())));
        }
        if !rest.is_empty() && !syntax::is_nothing(rest) {
            self.error(line, rest, format!("write the content of {} on the lines below its header", s.name()));
        }
    }

    fn list(&mut self, line: &Line, l: List, rest: &str) {
        let s = self.section.expect("the body starts at a section header");
        self.last = Last::Nothing;
        if !l.belongs_to(s) {
            let expected = match s {
                Section::Progress => "`Completed:`, `In Progress:` or `Remaining:`",
                _ => "`ADD:` or `ARCHIVE:`",
            };
            self.error(line, line.body, format!("`{}` does not belong in {}; expected {expected}", l.name(), s.name()));
            self.list = None;
            self.skipping = true;
            return;
        }
        self.list = Some(l);
        self.skipping = false;
        if l == List::InProgress {
            self.in_progress_at = Some((line.number, line.first_column()));
        }
        if !rest.is_empty() && !syntax::is_nothing(rest) {
            self.error(line, rest, format!("put each item on its own `- ` line below `{}`", l.name()));
        }
    }

    fn bullet(&mut self, line: Line<'a>, content: &'a str) {
        if self.skipping {
            return;
        }
        let s = self.section.expect("the body starts at a section header");
        let list = match (self.list, s) {
            (Some(l), _) => l,
            (None, Section::Progress) => {
                self.error(&line, line.body, "a CURRENT_PROGRESS bullet must be inside a `Completed:`, `In Progress:` or `Remaining:` list");
                return;
            }
            (None, _) => {
                let archive = content.starts_with('[') || content.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("KL-") || p.eq_ignore_ascii_case("VC-"));
                let l = if archive { List::Archive } else { List::Add };
                self.warn(&line, line.body, format!("bullet is not under `ADD:` or `ARCHIVE:`; read as {}", l.name()));
                l
            }
        };
        self.last = Last::Other;
        if syntax::is_nothing(content) {
            return;
        }
        if content.is_empty() {
            self.error(&line, line.body, "empty bullet");
            return;
        }
        match (s, list) {
            (_, List::Completed | List::InProgress | List::Remaining) => {
                if let Err(e) = limits::line("a progress item", content) {
                    self.error(&line, content, e);
                }
                self.progress_list(list).push(content.to_string());
                self.last = Last::Progress(list, line.indent);
            }
            (Section::Learnings, List::Add) => match syntax::because_colon(content, "a Key Learnings ADD bullet") {
                Ok((_, "")) => self.error(&line, content, "the insight after the reason is empty"),
                Ok((reason, text)) => {
                    if let Err(e) = limits::line("a key learning", text).and(limits::line("a reason", reason)) {
                        self.error(&line, content, e);
                    }
                    let update = &mut self.parsed.update;
                    update.learnings.add.push(LearningAdd { reason: reason.to_string(), text: text.to_string() });
                    self.last = Last::Learning(line.indent);
                }
                Err(e) => self.item_error(&line, e),
            },
            (Section::Verbatim, List::Add) => {
                match syntax::because_colon(content, "a Verbatim Context ADD bullet").and_then(|(reason, rest)| Ok((reason, syntax::label_snippet(rest)?))) {
                    Ok((reason, (label, first))) => {
                        self.snippet = Some(Snippet {
                            reason: reason.to_string(),
                            label: label.to_string(),
                            first,
                            lines: Vec::new(),
                            bullet_indent: line.indent,
                            content_offset: line.lead.len() + (content.as_ptr() as usize - line.body.as_ptr() as usize),
                            fence: None,
                            fence_closed: false,
                            at: (line.number, line.first_column()),
                        })
                    }
                    Err(e) => self.item_error(&line, e),
                }
            }
            (_, List::Archive) => {
                let prefix = if s == Section::Learnings { "KL" } else { "VC" };
                match syntax::archive_item(content, prefix) {
                    Ok((id, reason)) => {
                        let op = ArchiveOp { id, reason: reason.to_string() };
                        let at = (line.number, line.column_of(content));
                        if let Err(e) = limits::line("a reason", reason) {
                            self.error_at(at.0, at.1, e);
                        }
                        let update = &mut self.parsed.update;
                        if s == Section::Learnings {
                            update.learnings.archive.push(op);
                            self.parsed.learning_archive_at.push(at);
                        } else {
                            update.verbatim.archive.push(op);
                            self.parsed.verbatim_archive_at.push(at);
                        }
                    }
                    Err(e) => self.item_error(&line, e),
                }
            }
            (Section::Progress, _) => unreachable!("lists are checked against their section"),
        }
    }

    /// A line that is neither header nor bullet. Returns false when it starts trailing
    /// chatter, which ends the update.
    fn text(&mut self, line: &Line, structured_after: bool, prev_blank: bool) -> bool {
        let trailing = !structured_after && (prev_blank || (line.indent == 0 && self.indented_body == Some(true)));
        if trailing {
            self.warn(line, line.body, "text after the last section is ignored");
            return false;
        }
        match self.last {
            Last::Progress(list, indent) if line.indent > indent => {
                let Some(last) = self.progress_list(list).last_mut() else { return true };
                let was = last.len();
                last.push(' ');
                last.push_str(line.body);
                // Said once, on the line that takes the item past the bound.
                if was <= limits::MAX_LINE
                    && let Err(e) = limits::line("a progress item", last)
                {
                    self.error(line, line.body, e);
                }
            }
            Last::Learning(indent) if line.indent > indent => {
                self.error(line, line.body, "a key learning must fit on one line; this line continues the insight above")
            }
            _ => self.error(line, line.body, "unexpected text: expected a `- ` bullet, a list header such as `ADD:`, or a section header"),
        }
        true
    }

    /// The Current Progress list a `Completed:`/`In Progress:`/`Remaining:` header opened.
    fn progress_list(&mut self, list: List) -> &mut Vec<String> {
        let p = &mut self.progress.as_mut().expect("set at the section header").0;
        match list {
            List::Completed => &mut p.completed,
            List::InProgress => &mut p.in_progress,
            _ => &mut p.remaining,
        }
    }

    fn close_snippet(&mut self) {
        let Some(sn) = self.snippet.take() else { return };
        let mut body = sn.lines;
        while body.last().is_some_and(|l| l.is_blank()) {
            body.pop();
        }
        // A snippet that starts on the bullet line is indented relative to the bullet's text,
        // so `def f():` there and `    return 1` below it keep their relation; one that starts
        // below the bullet (or in a fence) is dedented as a block.
        let mut prefix = common_lead(&body);
        if !sn.first.is_empty() {
            prefix = prefix.min(sn.content_offset);
        }
        let mut snippet = String::with_capacity(sn.first.len() + body.iter().map(|l| l.lead.len() + l.body.len() + 1).sum::<usize>());
        snippet.push_str(sn.first);
        for l in &body {
            if snippet.is_empty() && l.is_blank() {
                continue;
            }
            if !snippet.is_empty() {
                snippet.push('\n');
            }
            if !l.is_blank() {
                snippet.push_str(&l.lead[prefix..]);
                snippet.push_str(l.body);
            }
        }
        if snippet.is_empty() {
            self.error_at(sn.at.0, sn.at.1, "the snippet after `=>` is empty");
            return;
        }
        if let Err(e) = limits::line("a verbatim label", &sn.label).and(limits::line("a reason", &sn.reason)).and(limits::snippet(&snippet)) {
            self.error_at(sn.at.0, sn.at.1, e);
        }
        self.parsed.update.verbatim.add.push(VerbatimAdd { reason: sn.reason, label: sn.label, snippet });
    }

    fn finish(mut self) -> Parsed {
        self.close_snippet();
        if let Some((p, (line, column))) = self.progress.take() {
            match self.in_progress_at {
                _ if !p.in_progress.is_empty() => {}
                Some((line, column)) => self.error_at(line, column, "the `In Progress:` list is empty: CURRENT_PROGRESS needs at least one bullet in it"),
                None => self.error_at(line, column, "CURRENT_PROGRESS needs an `In Progress:` list with at least one bullet"),
            }
            self.parsed.update.progress = p;
        }
        self.parsed
    }
}

/// Byte length of the leading whitespace that every non-blank line shares.
fn common_lead(lines: &[Line]) -> usize {
    let mut shown = lines.iter().filter(|l| !l.is_blank());
    // Leads of spaces alone, as code is mostly indented, share the shortest of them.
    if shown.clone().all(Line::spaces_only) {
        return shown.map(|l| l.lead.len()).min().unwrap_or(0);
    }
    let Some(first) = shown.next().map(|l| l.lead) else { return 0 };
    shown.fold(first.len(), |n, l| first.bytes().zip(l.lead.bytes()).take(n).take_while(|(a, b)| a == b).count())
}
