//! The task graph: `depends_on` edges, and the cycle check made when one is added.

use super::Board;

/// The cycle that `task` depending on `on` would close, as the IDs along it from `task` back
/// to `task`; `None` when there is none. Depth-first from `on` along `depends_on`.
pub(super) fn cycle_through(board: &Board, task: &str, on: &str) -> Option<Vec<String>> {
    let mut path = vec![task.to_string()];
    let mut seen = std::collections::HashSet::new();
    walk(board, on, task, &mut path, &mut seen).then_some(path)
}

fn walk<'a>(board: &'a Board, at: &'a str, target: &str, path: &mut Vec<String>, seen: &mut std::collections::HashSet<&'a str>) -> bool {
    path.push(at.to_string());
    if at == target {
        return true;
    }
    if seen.insert(at) {
        for next in board.task(at).map(|t| t.depends_on.as_slice()).unwrap_or_default() {
            if walk(board, next, target, path, seen) {
                return true;
            }
        }
    }
    path.pop();
    false
}
