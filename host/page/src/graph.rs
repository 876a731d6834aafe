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

/// Each task's column: 0 without dependencies, else one past its deepest dependency. Set in
/// an order where every dependency comes first, so each edge is looked at once (deepening
/// every task until nothing changed took a round per task on a chain listed backwards:
/// 25.7 s for a page of 10,000 tasks). A task on a cycle (the engine refuses them) stays in
/// the column its other dependencies gave it.
fn columns(nodes: &[Node]) -> Vec<usize> {
    laid_out(nodes).0
}

/// [`columns`], and the steps it took (a dependency followed): what its test counts.
fn laid_out(nodes: &[Node]) -> (Vec<usize>, usize) {
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let deps: Vec<Vec<usize>> = nodes.iter().map(|n| n.depends_on.iter().filter_map(|d| index.get(d.as_str()).copied()).collect()).collect();
    let mut dependents = vec![Vec::new(); nodes.len()];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            dependents[d].push(i);
        }
    }
    let mut unresolved: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut ready: Vec<usize> = (0..nodes.len()).filter(|&i| unresolved[i] == 0).collect();
    let mut col = vec![0; nodes.len()];
    let mut steps = 0;
    while let Some(at) = ready.pop() {
        for &j in &dependents[at] {
            steps += 1;
            col[j] = col[j].max(col[at] + 1);
            unresolved[j] -= 1;
            if unresolved[j] == 0 {
                ready.push(j);
            }
        }
    }
    (col, steps)
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

    /// A chain listed backwards (each task depending on the next) is laid out in steps that
    /// grow with it (it deepened every task until nothing changed, quadratic on such a chain).
    /// Steps are counted, not timed (`workmem_growth::steps`).
    #[test]
    fn a_backward_chain_is_laid_out_in_linear_time() {
        workmem_growth::steps("the layout of a backward chain", 1_000, |n| {
            let ids: Vec<String> = (1..=n).map(|i| format!("T-{i}")).collect();
            let deps: Vec<Vec<String>> = (1..=n).map(|i| if i < n { vec![format!("T-{}", i + 1)] } else { vec![] }).collect();
            let nodes: Vec<Node> = ids.iter().zip(&deps).map(|(id, d)| Node { id, title: "", status: "pending", assigned_to: None, depends_on: d }).collect();
            let (col, steps) = laid_out(&nodes);
            assert_eq!((col[0], col[n - 1]), (n - 1, 0));
            steps
        });
    }
}
