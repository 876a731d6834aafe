//! The page that shows a person what an agent's working memory holds: the overview, Key
//! Learnings and Verbatim Context with their IDs, the update log as diffs, the compactions
//! with what they replaced, tokens per request as a chart, a board's task graph, and what a
//! proxy passed through untouched.
//!
//! A page is one HTML document with its style inline and no script or outside resource, so
//! the file `workmem view` writes opens anywhere. `workmem serve` serves the same sections
//! ([`session`], [`board`]) as documents of their own, and [`SHELL`] with [`SHELL_SCRIPT`]
//! puts them together in a browser and keeps them current.

mod board;
mod chart;
mod graph;
mod html;
mod limits;
mod proxy;
mod session;

use html::esc;

pub use limits::{MAX_COMPACTIONS, MAX_MESSAGE_CHARS, MAX_SESSIONS, MAX_UPDATES};
use workmem_commit::Result;
use workmem_runtime::Runtime;
use workmem_store::Session;
use workmem_store::board::Boards;

/// A session's sections.
pub fn session(runtime: &Runtime, s: &Session) -> Result<String> {
    let data = session::read(runtime, s)?;
    let mut out = String::new();
    session::render(&data, &mut out);
    Ok(out)
}

/// The section of the proxy on `sessions`: what it passed through untouched (`passed`, as
/// `Sessions::passed` read it), and its sessions.
pub fn proxy(sessions: &workmem_store::Sessions, passed: workmem_store::Passed) -> Result<String> {
    let data = proxy::read(sessions, passed)?;
    let mut out = String::new();
    proxy::render(&data, &mut out);
    Ok(out)
}

/// Board `id`'s section: its task graph and tasks.
pub fn board(boards: &mut Boards, id: &str) -> Result<String> {
    let data = board::read(boards, id)?;
    let mut out = String::new();
    board::render(&data, &mut out);
    Ok(out)
}

/// A whole page of `sections`, made at `at` (RFC 3339).
pub fn document(title: &str, sections: &str, at: &str) -> String {
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"><meta name="viewport" content="width=device-width"><title>{title} · workmem</title><style>{STYLE}</style></head><body><header>workmem · {title} <small>as of {at}</small></header><main>{sections}</main></body></html>"#,
        title = esc(title),
        at = esc(at),
    )
}

/// The live page `workmem serve` serves at `/view`: no data of its own; [`SHELL_SCRIPT`]
/// fetches the sections the URL's fragment names, with the tokens it carries.
pub const SHELL: &str = concat!(
    r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>workmem</title><style>"#,
    include_str!("page.css"),
    r#"</style><script type="module" src="/view/app.js"></script></head><body><header>workmem · live <small id="status">loading…</small></header><main></main></body></html>"#
);

/// The live page's script (served at `/view/app.js`).
pub const SHELL_SCRIPT: &str = include_str!("view.js");

const STYLE: &str = include_str!("page.css");
