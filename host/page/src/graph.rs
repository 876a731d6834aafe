//! A board's task graph as SVG: tasks in columns by how deep their dependencies go, each a
//! box coloured by its status, with an arrow from every dependency to what waits on it.

use crate::html::{clip, esc};
use std::collections::HashMap;
use std::fmt::Write;

pub struct Node<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub status: &'a str,
    pub assigned_to: Option<&'a str>,
    pub depends_on: &'a [String],
}

const BOX_W: f64 = 210.0;
const BOX_H: f64 = 54.0;
const GAP_X: f64 = 56.0;
const GAP_Y: f64 = 16.0;
const PAD: f64 = 10.0;

/// Each task's column: 0 without dependencies, else one past its deepest dependency. The
/// engine refuses cycles; a board that had one anyway stops deepening after `len` rounds.
fn columns(nodes: &[Node]) -> Vec<usize> {
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut col = vec![0; nodes.len()];
    for _ in 0..nodes.len() {
        let mut changed = false;
        for (i, n) in nodes.iter().enumerate() {
            let want = n.depends_on.iter().filter_map(|d| index.get(d.as_str())).map(|&d| col[d] + 1).max().unwrap_or(0);
            if want > col[i] {
                col[i] = want.min(nodes.len());
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    col
}

pub fn task_graph(nodes: &[Node]) -> String {
    let col = columns(nodes);
    let mut row = vec![0usize; nodes.len()];
    let mut rows_in: HashMap<usize, usize> = HashMap::new();
    for (i, &c) in col.iter().enumerate() {
        let r = rows_in.entry(c).or_default();
        row[i] = *r;
        *r += 1;
    }
    let at = |i: usize| (PAD + col[i] as f64 * (BOX_W + GAP_X), PAD + row[i] as f64 * (BOX_H + GAP_Y));
    let width = PAD * 2.0 + (col.iter().max().map_or(0, |c| c + 1)) as f64 * (BOX_W + GAP_X) - GAP_X;
    let height = PAD * 2.0 + rows_in.values().max().copied().unwrap_or(0) as f64 * (BOX_H + GAP_Y) - GAP_Y;
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="graph" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="task graph"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>"#
    );
    for (i, n) in nodes.iter().enumerate() {
        for d in n.depends_on.iter().filter_map(|d| index.get(d.as_str())) {
            let ((x0, y0), (x1, y1)) = (at(*d), at(i));
            let (x0, y0, x1, y1) = (x0 + BOX_W, y0 + BOX_H / 2.0, x1, y1 + BOX_H / 2.0);
            let mid = (x0 + x1) / 2.0;
            let _ = write!(svg, r#"<path class="edge" d="M {x0} {y0} C {mid} {y0}, {mid} {y1}, {x1} {y1}" marker-end="url(#arrow)"/>"#);
        }
    }
    for (i, n) in nodes.iter().enumerate() {
        let (x, y) = at(i);
        let who = n.assigned_to.map(|a| format!(" · {a}")).unwrap_or_default();
        let _ = write!(
            svg,
            r#"<g class="task {status}" data-task="{id}"><title>{id}: {title}</title><rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6"/><text x="{tx}" y="{ty1}" class="name">{id} {short}</text><text x="{tx}" y="{ty2}" class="status">{status_text}{who}</text></g>"#,
            status = esc(n.status),
            id = esc(n.id),
            title = esc(n.title),
            short = esc(&clip(n.title, 22)),
            status_text = esc(&n.status.replace('_', " ")),
            who = esc(&clip(&who, 20)),
            tx = x + 10.0,
            ty1 = y + 22.0,
            ty2 = y + 42.0,
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_sits_right_of_its_deepest_dependency() {
        let deps = |d: &[&str]| d.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (none, one, two, both) = (deps(&[]), deps(&["T-1"]), deps(&["T-2"]), deps(&["T-1", "T-3"]));
        let node = |id, depends_on| Node { id, title: "", status: "pending", assigned_to: None, depends_on };
        let nodes = [node("T-1", &none), node("T-2", &one), node("T-3", &two), node("T-4", &both)];
        assert_eq!(columns(&nodes), [0, 1, 2, 3]);
        // A cycle (which the engine refuses) still ends.
        let (a, b) = (deps(&["T-2"]), deps(&["T-1"]));
        let cyclic = [node("T-1", &a), node("T-2", &b)];
        assert!(columns(&cyclic).iter().all(|&c| c <= 2));
    }
}
