//! The crates' modules form layers: no module reaches, through `crate::` paths, a module
//! that reaches it back. A circle means two modules that can only be understood together; a
//! new one fails here, naming it.

use crate::common;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module of the crate at `src` (a file, or a folder with its files) and the
/// top-level modules it names through `crate::`; and how many files were read.
fn modules(src: &Path) -> (BTreeMap<String, BTreeSet<String>>, usize) {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut read = 0;
    let mut files = vec![src.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        read += 1;
        let first = path.strip_prefix(src).unwrap().components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let code: String = text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
        let deps = graph.entry(module.clone()).or_default();
        deps.extend(named(&code).into_iter().filter(|name| *name != module));
    }
    let names: BTreeSet<String> = graph.keys().cloned().collect();
    graph.values_mut().for_each(|deps| deps.retain(|d| names.contains(d)));
    (graph, read)
}

/// The top-level modules `code` names through `crate::`: `crate::a::f`, and each of
/// `crate::{a, b::C, c::{d, e}}`, over as many lines as it takes.
fn named(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String { s.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            out.insert(ident(rest));
            continue;
        };
        // Each item of the group at its top level; what a nested group names is inside an
        // item already named.
        let (mut depth, mut start) = (0usize, 0);
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.insert(ident(&group[start..i]));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.insert(ident(&group[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
    }
    out.retain(|name| !name.is_empty() && name != "self");
    out
}

/// A circle through `graph`, if there is one, as the modules along it.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(node: &str, graph: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            return Some(path[at..].iter().cloned().chain([node.to_string()]).collect());
        }
        if !done.insert(node.to_string()) {
            return None;
        }
        path.push(node.to_string());
        for next in &graph[node] {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_circles() {
    let root = common::root();
    let mut crates: Vec<_> = std::fs::read_dir(root.join("host")).unwrap().map(|e| e.unwrap().path().join("src")).collect();
    crates.push(root.join("guest/src"));
    for src in crates {
        let (graph, read) = modules(&src);
        assert!(read > 0, "{}: no sources read", src.display());
        if let Some(found) = circle(&graph) {
            panic!("{}: the modules {} import each other", src.display(), found.join(" -> "));
        }
    }
}

/// Every way a module is named through `crate::` counts, grouped and over lines included (a
/// grouped import once hid a circle between the proxy's protocols and their dispatch).
#[test]
fn grouped_imports_are_read() {
    let code = "use crate::a::f;\nuse crate::{b, c::D,\n    e::{g, h}, self};\nlet x = crate::i::j();";
    let names: Vec<String> = named(code).into_iter().collect();
    assert_eq!(names, ["a", "b", "c", "e", "i"]);
}

/// The check finds a circle where there is one.
#[test]
fn a_circle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")].into_iter().fold(BTreeMap::new(), |mut g, (from, to)| {
        g.entry(from.to_string()).or_default().insert(to.to_string());
        g.entry(to.to_string()).or_default();
        g
    });
    assert_eq!(circle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    let acyclic: BTreeMap<String, BTreeSet<String>> =
        [("a", ["b"].into_iter().map(String::from).collect()), ("b", BTreeSet::new())].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    assert_eq!(circle(&acyclic), None);
}
