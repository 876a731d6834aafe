//! A proxy's section: the requests `workmem proxy` passed through untouched, by reason (a
//! request workmem meant to keep and did not is never silent), and the sessions it keeps.

use crate::html::{clip, esc};
use std::fmt::Write;
use workmem_commit::Result;
use workmem_store::{Passed, Proxied, Sessions};

/// What the section shows, read from the sessions' directory.
pub struct Data {
    dir: String,
    passed: Passed,
    /// Each proxied session's ID, when it was made and what the proxy knows of its client.
    sessions: Vec<(String, String, Proxied)>,
}

pub fn read(sessions: &Sessions, passed: Passed) -> Result<Data> {
    let listed = sessions.list()?.into_iter().filter_map(|(_, meta)| Some((meta.id, meta.created_at, meta.proxied?))).collect();
    Ok(Data { dir: sessions.dir().display().to_string(), passed, sessions: listed })
}

/// What each reason means, for a person who did not read the proxy's docs.
fn why(reason: &str) -> &'static str {
    match reason {
        "unkept" => "content a session cannot keep (images, files, Codex's additional_tools)",
        "refused" => "a request workmem does not take (a client tool named as one of workmem's)",
        "failed" => "workmem failed on it and --on-error passthrough sent it as it was",
        "previous_response_id" => "a Responses chain to an answer no session of the caller's logged, which the provider keeps",
        "conversation" => "a Responses conversation the provider keeps",
        _ => "",
    }
}

pub fn render(d: &Data, out: &mut String) {
    let p = &d.passed;
    let _ = write!(
        out,
        r#"<section id="proxy"><h1>Proxy</h1><p class="meta">{dir} · {n} proxied sessions · {total} requests passed through untouched</p>"#,
        dir = esc(&d.dir),
        n = d.sessions.len(),
        total = p.total(),
    );
    out.push_str(r#"<h2>Passed through untouched</h2>"#);
    if p.by_reason.is_empty() {
        out.push_str(r#"<p class="none">None: every request it meant to keep went through a session.</p>"#);
    } else {
        out.push_str("<table><tr><th>Reason</th><th>Requests</th><th>What it means</th></tr>");
        for (reason, count) in &p.by_reason {
            let _ = write!(out, "<tr><td><code>{}</code></td><td>{count}</td><td>{}</td></tr>", esc(reason), why(reason));
        }
        out.push_str("</table>");
        if let Some(last) = &p.last {
            let _ = write!(out, r#"<p class="meta">The latest: {} on <code>{}</code> ({})</p>"#, esc(&last.at), esc(&last.path), esc(&last.reason));
        }
    }
    let _ = write!(out, "<h2>Sessions <small>{}</small></h2>", d.sessions.len());
    out.push_str("<table><tr><th>ID</th><th>Made</th><th>Protocol</th><th>Client's name</th><th>Branch of</th></tr>");
    // The latest first: the one a person looks for is most often the one just made.
    for (id, made, proxied) in d.sessions.iter().rev().take(crate::limits::MAX_SESSIONS) {
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(id),
            esc(made),
            esc(&proxied.protocol),
            // A client's name, as an older proxy kept it whole (3 MB, once): shown in part.
            esc(&clip(proxied.client.as_deref().unwrap_or(""), 128)),
            esc(&match (&proxied.branch_of, &proxied.branched) {
                (Some(of), Some(why)) => format!("{of} ({why})"),
                (of, _) => of.clone().unwrap_or_default(),
            }),
        );
    }
    out.push_str("</table></section>");
}
