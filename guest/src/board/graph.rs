//! The task graph: `depends_on` edges, and the cycle check made when one is added.

use super::Board;

/// The cycle that `task` depending on `on` would close, as the IDs along it from `task` back
/// to `task`; `None` when there is none. Depth-first from `on` along `depends_on`, with a
/// stack of its own: a chain of thousands of tasks overflowed the engine's call stack when
/// the walk recursed.
pub(super) fn cycle_through(board: &Board, task: &str, on: &str) -> Option<Vec<String>> {
    let cycle = |path: &[(&str, usize)]| {
        let mut ids = vec![task.to_string()];
        ids.extend(path.iter().map(|(id, _)| id.to_string()));
        ids.push(task.to_string());
        ids
    };
    if on == task {
        return Some(vec![task.to_string(), task.to_string()]);
    }
    let depends_on = |id: &str| board.task(id).map(|t| t.depends_on.as_slice()).unwrap_or_default();
    let mut seen = std::collections::HashSet::from([on]);
    // The path from `on`, each with the index of the next dependency to follow from it.
    let mut path: Vec<(&str, usize)> = vec![(on, 0)];
    while let Some(&(at, next)) = path.last() {
        let Some(dependency) = depends_on(at).get(next) else {
            path.pop();
            continue;
        };
        if let Some(top) = path.last_mut() {
            top.1 += 1;
        }
        if dependency == task {
            return Some(cycle(&path));
        }
        if seen.insert(dependency.as_str()) {
            path.push((dependency, 0));
        }
    }
    None
}
