//! A board's section: its goal and status, the task graph, and the tasks as a table (what
//! the graph draws, as text).

use crate::graph::{self, Node};
use crate::html::esc;
use serde::Deserialize;
use std::fmt::Write;
use workmem_commit::Result;
use workmem_store::board::Boards;

/// The fields of the engine's serialized board the page shows.
#[derive(Deserialize)]
pub struct Data {
    id: String,
    name: String,
    goal: String,
    status: String,
    revision: u64,
    tasks: Vec<Task>,
}

#[derive(Deserialize)]
struct Task {
    id: String,
    title: String,
    status: String,
    assigned_to: Option<String>,
    depends_on: Vec<String>,
}

pub fn read(boards: &mut Boards, id: &str) -> Result<Data> {
    let state = boards.state(id)?;
    Ok(serde_json::from_str(&state).map_err(|e| workmem_store::board::Error::Schema(format!("board {id}'s state: {e}")))?)
}

pub fn render(b: &Data, out: &mut String) {
    let _ = write!(
        out,
        r#"<section id="board" data-board="{id}"><h2>Board {name} <small><code>{id}</code> · {status} · revision {revision}</small></h2><p>{goal}</p>"#,
        id = esc(&b.id),
        name = esc(&b.name),
        status = esc(&b.status),
        revision = b.revision,
        goal = esc(&b.goal),
    );
    if b.tasks.is_empty() {
        out.push_str(r#"<p class="none">No tasks yet.</p></section>"#);
        return;
    }
    let nodes: Vec<Node> = b
        .tasks
        .iter()
        .map(|t| Node { id: &t.id, title: &t.title, status: &t.status, assigned_to: t.assigned_to.as_deref(), depends_on: &t.depends_on })
        .collect();
    let _ = write!(out, r#"<div class="graph-box">{}</div>"#, graph::task_graph(&nodes));
    out.push_str(r#"<table class="tasks"><tr><th>ID</th><th>Task</th><th>Status</th><th>Depends on</th><th>Assigned to</th></tr>"#);
    for t in &b.tasks {
        let _ = write!(
            out,
            r#"<tr><td><code>{id}</code></td><td>{title}</td><td><span class="status {status}">{status_text}</span></td><td>{deps}</td><td>{who}</td></tr>"#,
            id = esc(&t.id),
            title = esc(&t.title),
            status = esc(&t.status),
            status_text = esc(&t.status.replace('_', " ")),
            deps = esc(&t.depends_on.join(", ")),
            who = esc(t.assigned_to.as_deref().unwrap_or("")),
        );
    }
    out.push_str("</table></section>");
}
