//! The crates' modules form layers: no module reaches, through `crate::` paths, a module
//! that reaches it back. A circle means two modules that can only be understood together; a
//! new one fails here, naming it.

use crate::common;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module of the crate at `src` (a file, or a folder with its files; the crate
/// root, `lib.rs` or `main.rs`, under its own name) and the top-level modules it names; and how
/// many files were read. A module names another through `crate::`, and the root through an item
/// of its own (`crate::lock`, an item it re-exports counting as its module's); the root names a
/// module through a path (`exchange::run`), its `mod` declarations and re-exports aside.
fn modules(src: &Path) -> (BTreeMap<String, BTreeSet<String>>, usize) {
    let root = ["lib", "main"].into_iter().find(|r| src.join(format!("{r}.rs")).exists()).unwrap_or("lib");
    let root_code = std::fs::read_to_string(src.join(format!("{root}.rs"))).map(|t| without_comments(&t)).unwrap_or_default();
    let (declared, reexported) = declarations(&root_code);
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
        if (module == "lib" || module == "main") && module != root {
            // A second target's root (a binary beside a library) is a crate of its own.
            continue;
        }
        let code = without_comments(&std::fs::read_to_string(&path).unwrap());
        let mut deps: BTreeSet<String> = named(&code)
            .into_iter()
            .map(|name| match reexported.get(&name) {
                _ if declared.contains(&name) => name,
                Some(from) => from.clone(),
                // A glob re-export's (`pub use model::*`) where that module defines it.
                None => globbed(src, &reexported, &name).unwrap_or_else(|| root.to_string()),
            })
            .collect();
        if module == root {
            deps.extend(paths(&root_code, &declared));
        }
        deps.remove(&module);
        graph.entry(module).or_default().extend(deps);
    }
    let names: BTreeSet<String> = graph.keys().cloned().collect();
    graph.values_mut().for_each(|deps| deps.retain(|d| names.contains(d)));
    (graph, read)
}

fn without_comments(text: &str) -> String {
    text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// Whether `line` (its attributes and visibility aside) begins with `keyword`.
fn is(line: &str, keyword: &str) -> bool {
    let mut rest = line.trim_start();
    while let Some(attr) = rest.strip_prefix("#[") {
        rest = attr.split_once(']').map_or("", |(_, r)| r).trim_start();
    }
    for visibility in ["pub(crate) ", "pub(super) ", "pub "] {
        rest = rest.strip_prefix(visibility).unwrap_or(rest);
    }
    rest.starts_with(keyword)
}

/// A crate root's `mod` declarations and re-exports (`pub use`), each whole over its lines,
/// and the rest of its code.
fn split_root(code: &str) -> (Vec<String>, String) {
    let (mut declarations, mut rest, mut open): (Vec<String>, Vec<&str>, Option<String>) = (Vec::new(), Vec::new(), None);
    for line in code.lines() {
        let starts = is(line, "mod ") && !line.contains('{') || is(line, "use ") && line.trim_start().starts_with("pub");
        match open.as_mut() {
            Some(statement) => statement.push_str(line),
            None if starts => open = Some(line.to_string()),
            None => rest.push(line),
        }
        if open.as_ref().is_some_and(|s| s.contains(';')) {
            declarations.extend(open.take());
        }
    }
    (declarations, rest.join("\n"))
}

/// A crate root's top-level modules (`mod x;`), and the items it re-exports (`pub use x::...`)
/// by the module they come from.
fn declarations(code: &str) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let ident = |s: &str| -> String { s.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
    let mut declared = BTreeSet::new();
    let mut reexported = BTreeMap::new();
    for statement in split_root(code).0 {
        if is(&statement, "mod ") {
            declared.insert(ident(statement.rsplit_once("mod ").map_or("", |(_, m)| m)));
        } else {
            let path = statement.split_once("use ").map_or("", |(_, p)| p);
            let from = ident(path);
            for item in path.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).skip(1) {
                reexported.insert(item.to_string(), from.clone());
            }
            if path.contains('*') {
                reexported.insert(format!("*{from}"), from.clone());
            }
        }
    }
    (declared, reexported)
}

/// The module a crate root re-exports whole (`pub use model::*`, kept as `*`) that defines
/// `name`.
fn globbed(src: &Path, reexported: &BTreeMap<String, String>, name: &str) -> Option<String> {
    let defines = |code: &str| {
        ["fn", "struct", "enum", "const", "static", "type", "trait", "mod"].iter().any(|kind| {
            code.match_indices(&format!("{kind} {name}")).any(|(at, m)| !code[at + m.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        })
    };
    reexported
        .iter()
        .filter(|(item, _)| item.starts_with('*'))
        .map(|(_, from)| from)
        .find(|from| {
            [src.join(format!("{from}.rs")), src.join(from).join("mod.rs")].iter().any(|file| std::fs::read_to_string(file).is_ok_and(|code| defines(&code)))
        })
        .cloned()
}

/// The modules of `declared` a crate root names through a path (`exchange::run`, `use
/// app::App`), its `mod` declarations and re-exports aside.
fn paths(code: &str, declared: &BTreeSet<String>) -> BTreeSet<String> {
    let code = split_root(code).1;
    declared
        .iter()
        .filter(|m| {
            code.match_indices(&format!("{m}::")).any(|(at, _)| {
                let before = code[..at].chars().next_back();
                !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            })
        })
        .cloned()
        .collect()
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

/// A crate root counts as a module: a leaf that names an item of the root (`crate::helper`)
/// depends on it, and the root on the modules it calls (`a::run()`), while a re-export
/// (`crate::Thing`) counts as its module's and `mod` declarations count as nothing.
#[test]
fn the_crate_root_is_a_module_too() {
    let src = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("layering-root-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap();
    let write = |name: &str, code: &str| std::fs::write(src.join(name), code).unwrap();
    write("lib.rs", "mod a;\n#[cfg(test)]\nmod b;\nmod c;\npub use b::{Thing,\n    Other};\npub use c::*;\n\npub fn helper() {\n    a::run();\n}\n");
    write("a.rs", "use crate::helper;\npub fn run() {}\n");
    write("b.rs", "pub struct Thing;\npub struct Other;\nfn f() -> crate::Globbed { crate::Thing }\n");
    write("c.rs", "pub struct Globbed;\n");
    let (graph, read) = modules(&src);
    assert_eq!(read, 4);
    let deps = |m: &str| graph[m].iter().cloned().collect::<Vec<_>>();
    assert_eq!((deps("lib"), deps("a"), deps("b"), deps("c")), (vec!["a".to_string()], vec!["lib".to_string()], vec!["c".to_string()], vec![]));
    assert_eq!(circle(&graph), Some(vec!["a".into(), "lib".into(), "a".into()]));
    std::fs::remove_dir_all(&src).unwrap();
}
