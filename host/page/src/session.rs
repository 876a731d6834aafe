//! A session's sections: its memory (overview, progress, Key Learnings and Verbatim Context
//! with their IDs, archived ones included), tokens per request, the update log as diffs,
//! and every compaction with what it replaced.

use crate::chart::{self, Request};
use crate::html::{clip, esc};
use crate::limits::{MAX_COMPACTIONS, MAX_MESSAGE_CHARS, MAX_UPDATES};
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt::Write;
use workmem_commit::Result;
use workmem_runtime::{Runtime, Snapshot};
use workmem_store::{Compaction, Entry, LogRecord, Message, Meta, Session};

/// One record of the update log, as the engine writes it (the fields the page shows).
#[derive(Deserialize)]
struct Update {
    seq: u32,
    at: String,
    #[serde(default)]
    added: Vec<String>,
    #[serde(default)]
    archived: Vec<String>,
    #[serde(default)]
    diff: String,
}

/// Everything the sections show, read under the session's lock so the memory, its log and
/// its overview agree.
pub struct Data {
    meta: Meta,
    overview: String,
    memory: Snapshot,
    updates: Vec<serde_json::Value>,
    records: Vec<LogRecord>,
}

pub fn read(runtime: &Runtime, session: &Session) -> Result<Data> {
    let (mut memory, overview) = workmem_commit::committed(runtime, session)?;
    Ok(Data { meta: session.meta()?, overview, memory: memory.snapshot()?, updates: session.log()?, records: session.records()? })
}

pub fn render(d: &Data, out: &mut String) {
    let m = &d.meta;
    let _ = write!(
        out,
        r#"<section id="session"><h1>Session <code>{id}</code></h1><p class="meta">{cwd} · created {created} · {updates} updates · {rounds} requests · last change {updated}</p></section>"#,
        id = esc(&m.id),
        cwd = esc(&m.cwd),
        created = esc(&m.created_at),
        updates = m.updates,
        rounds = m.rounds,
        updated = esc(&m.updated_at),
    );
    let _ = write!(out, r#"<section id="overview"><h2>Overview <small>working-memory/overview.md</small></h2><pre>{}</pre></section>"#, esc(&d.overview));
    memory(&d.memory, out);
    tokens(&d.records, out);
    updates(&d.updates, out);
    compactions(&d.records, out);
}

fn memory(s: &Snapshot, out: &mut String) {
    out.push_str(r#"<section id="progress"><h2>Current Progress</h2>"#);
    match &s.progress {
        None => out.push_str("<p class=\"none\">Not written yet.</p>"),
        Some(p) => {
            for (name, items) in [("Completed", &p.completed), ("In Progress", &p.in_progress), ("Remaining", &p.remaining)] {
                let _ = write!(out, "<h3>{name}</h3><ul>");
                if items.is_empty() {
                    out.push_str(r#"<li class="none">none</li>"#);
                }
                for item in items {
                    let _ = write!(out, "<li>{}</li>", esc(item));
                }
                out.push_str("</ul>");
            }
        }
    }
    out.push_str("</section>");
    let learnings =
        s.learnings.iter().map(|l| Row { id: &l.id, body: esc(&l.text).to_string(), reason: &l.reason, added_at: &l.added_at, archived: l.archived.as_ref() });
    entries(out, "learnings", "Key Learnings", "Learning", learnings);
    let verbatim = s.verbatim.iter().map(|v| Row {
        id: &v.id,
        body: format!("<b>{}</b><pre>{}</pre>", esc(&v.label), esc(&v.snippet)),
        reason: &v.reason,
        added_at: &v.added_at,
        archived: v.archived.as_ref(),
    });
    entries(out, "verbatim", "Verbatim Context", "Snippet", verbatim);
}

/// A Key Learning or a Verbatim Context entry as a row; `body` is HTML already escaped.
struct Row<'a> {
    id: &'a str,
    body: String,
    reason: &'a str,
    added_at: &'a str,
    archived: Option<&'a workmem_runtime::Archival>,
}

fn entries<'a>(out: &mut String, section: &str, heading: &str, column: &str, rows: impl Iterator<Item = Row<'a>>) {
    let _ = write!(out, r#"<section id="{section}"><h2>{heading}</h2><table><tr><th>ID</th><th>{column}</th><th>Because</th><th>Added</th></tr>"#);
    for e in rows {
        let (class, note) = archived(e.archived);
        let _ = write!(
            out,
            r#"<tr id="{id}"{class}><td><code>{id}</code></td><td>{body}{note}</td><td>{reason}</td><td>{at}</td></tr>"#,
            id = esc(e.id),
            body = e.body,
            reason = esc(e.reason),
            at = esc(e.added_at),
        );
    }
    out.push_str("</table></section>");
}

fn archived(a: Option<&workmem_runtime::Archival>) -> (&'static str, String) {
    match a {
        Some(a) => (r#" class="archived""#, format!(r#" <em class="note">archived {}: {}</em>"#, esc(&a.at), esc(&a.reason))),
        None => ("", String::new()),
    }
}

fn tokens(records: &[LogRecord], out: &mut String) {
    let mut requests = Vec::new();
    let mut compactions_after = Vec::new();
    for r in records {
        match (&r.entry, r.usage) {
            (_, Some(u)) => requests.push(Request { seq: r.seq, tokens: u.prompt() }),
            (Entry::Compaction(_), None) => compactions_after.push(requests.len()),
            _ => {}
        }
    }
    out.push_str(r#"<section id="tokens"><h2>Tokens per request</h2>"#);
    if requests.is_empty() {
        out.push_str(r#"<p class="none">No requests recorded (an agent's requests are logged with their tokens).</p></section>"#);
        return;
    }
    let largest = requests.iter().map(|r| r.tokens).max().unwrap_or(0);
    let _ = write!(
        out,
        "<p>{} requests · largest {largest} tokens · last {} tokens · {} compactions</p>",
        requests.len(),
        requests.last().map_or(0, |r| r.tokens),
        compactions_after.len()
    );
    out.push_str(&chart::tokens_per_request(&requests, &compactions_after));
    out.push_str("</section>");
}

fn updates(log: &[serde_json::Value], out: &mut String) {
    let _ = write!(out, r#"<section id="updates"><h2>Updates <small>{} in the log</small></h2>"#, log.len());
    if log.len() > MAX_UPDATES {
        let _ = write!(out, r#"<p class="none">The {} earlier updates are not shown (`workmem log` prints them all).</p>"#, log.len() - MAX_UPDATES);
    }
    for value in log.iter().rev().take(MAX_UPDATES).rev() {
        let Ok(u) = Update::deserialize(value) else { continue };
        let _ = write!(out, r#"<article class="update" id="update-{seq}"><h3>Update {seq} <small>{at}</small></h3>"#, seq = u.seq, at = esc(&u.at));
        ids("added", &u.added, out);
        ids("archived", &u.archived, out);
        out.push_str(r#"<pre class="diff">"#);
        for line in u.diff.lines() {
            let class = match line.trim_start().chars().next() {
                Some('+') => "add",
                Some('-') => "del",
                Some('~') => "mod",
                _ => "ctx",
            };
            // Each span is a block: a newline here would double the lines.
            let _ = write!(out, r#"<span class="{class}">{}</span>"#, esc(line));
        }
        out.push_str("</pre></article>");
    }
    out.push_str("</section>");
}

fn ids(what: &str, ids: &[String], out: &mut String) {
    if !ids.is_empty() {
        let _ = write!(out, "<p>{what}: ");
        for id in ids {
            let _ = write!(out, "<code>{}</code> ", esc(id));
        }
        out.push_str("</p>");
    }
}

fn compactions(records: &[LogRecord], out: &mut String) {
    let originals: HashMap<u64, &Message> = records
        .iter()
        .filter_map(|r| match &r.entry {
            Entry::Message(m) => Some((r.seq, m)),
            Entry::Compaction(_) | Entry::Withdrawal(_) => None,
        })
        .collect();
    let all: Vec<(&LogRecord, &Compaction)> = records
        .iter()
        .filter_map(|r| match &r.entry {
            Entry::Compaction(c) => Some((r, c)),
            Entry::Message(_) | Entry::Withdrawal(_) => None,
        })
        .collect();
    let _ = write!(out, r#"<section id="compactions"><h2>Compactions <small>{}</small></h2>"#, all.len());
    if all.is_empty() {
        out.push_str(r#"<p class="none">The history has not been compacted.</p>"#);
    }
    if all.len() > MAX_COMPACTIONS {
        let _ = write!(out, r#"<p class="none">The {} earlier compactions are not shown.</p>"#, all.len() - MAX_COMPACTIONS);
    }
    for (r, c) in all.iter().skip(all.len().saturating_sub(MAX_COMPACTIONS)) {
        let _ = write!(
            out,
            r#"<article class="compaction" id="compaction-{seq}"><h3>#{seq} {target} by {strategy} <small>{at} · round {round}</small></h3><p>{before} → {after} tokens</p>"#,
            seq = r.seq,
            target = esc(&c.target),
            strategy = esc(&c.strategy),
            at = esc(&r.at),
            round = c.round,
            before = c.tokens_before,
            after = c.tokens_after,
        );
        if let Some(a) = &c.archive {
            let _ = write!(out, "<p>Originals archived to <code>{}</code></p>", esc(a));
        }
        for rep in &c.replacements {
            let _ = write!(
                out,
                r#"<details><summary>{} message(s) replaced by: {}</summary><ol class="replaced">"#,
                rep.replaces.len(),
                esc(&clip(&rep.message.content, 160))
            );
            for seq in &rep.replaces {
                match originals.get(seq) {
                    Some(m) => {
                        let _ = write!(out, r#"<li><b>#{seq} {}</b><pre>{}</pre></li>"#, esc(&m.role), esc(&clip(&m.content, MAX_MESSAGE_CHARS)));
                    }
                    None => {
                        let _ = write!(out, "<li><b>#{seq}</b> (not in the log)</li>");
                    }
                }
            }
            let _ = write!(out, r#"</ol><p>In their place:</p><pre>{}</pre></details>"#, esc(&clip(&rep.message.content, MAX_MESSAGE_CHARS)));
        }
        out.push_str("</article>");
    }
    out.push_str("</section>");
}
