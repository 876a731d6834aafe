//! The task graph: `depends_on` edges, the cycle check made when one is added, and what
//! each task inherits from the tasks upstream of it.

use super::{Board, TaskStatus};
use std::collections::BTreeSet;

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

/// For each task (by index), the failed or cancelled tasks upstream of it, directly or not.
/// Each task's set is its dependencies' sets and the dead ones among them, built once, in an
/// order where every dependency comes first: walking every task's ancestors anew was cubic
/// on a chain (3,000 tasks passed the engine's 10 s).
pub(super) fn dead_upstream(board: &Board) -> Vec<BTreeSet<usize>> {
    let deps: Vec<Vec<usize>> = board.tasks.iter().map(|t| t.depends_on.iter().filter_map(|d| board.index(d)).collect()).collect();
    let dead = |i: usize| matches!(board.tasks[i].status, TaskStatus::Failed | TaskStatus::Cancelled);
    let mut dependents = vec![Vec::new(); deps.len()];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            dependents[d].push(i);
        }
    }
    let mut unresolved: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut ready: Vec<usize> = (0..deps.len()).filter(|&i| unresolved[i] == 0).collect();
    // A task on a cycle (the board refuses them) is never ready and keeps an empty set.
    let mut sets = vec![BTreeSet::new(); deps.len()];
    while let Some(at) = ready.pop() {
        let mut set = BTreeSet::new();
        for &d in &deps[at] {
            if dead(d) {
                set.insert(d);
            }
            set.extend(sets[d].iter().copied());
        }
        sets[at] = set;
        for &j in &dependents[at] {
            unresolved[j] -= 1;
            if unresolved[j] == 0 {
                ready.push(j);
            }
        }
    }
    sets
}
