//! The layout's one rule that a compiler does not check: within each crate (the host and every
//! plugin), modules import one way only. A module that imports another which imports it back
//! (through `crate::` or `super::` paths, directly or around a circle) is a failure that names
//! the circle.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every `src/` directory of the repository's crates.
fn crates() -> Vec<PathBuf> {
    let top = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs = vec![top.join("host/src")];
    let plugins = std::fs::read_dir(top.join("plugins")).unwrap();
    let mut plugins: Vec<PathBuf> = plugins
        .map(|entry| entry.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    plugins.sort();
    dirs.extend(plugins);
    dirs
}

/// The crate's modules by path (`acp::gate`; the crate root is left out: it declares them all),
/// with their source text.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            if !parts.is_empty() {
                found.insert(parts.join("::"), std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    found
}

/// The modules `name`'s text names through `crate::...` or `super::...` paths: the longest
/// prefix of each path that is a module.
fn imports(name: &str, text: &str, modules: &BTreeMap<String, String>) -> Vec<String> {
    let here: Vec<&str> = name.split("::").collect();
    let mut out = Vec::new();
    for (at, _) in text
        .match_indices("crate::")
        .chain(text.match_indices("super::"))
    {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at..];
        let words: Vec<&str> = rest
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .next()
            .unwrap_or_default()
            .split("::")
            .filter(|w| !w.is_empty())
            .collect();
        let mut path: Vec<&str> = match words.first() {
            Some(&"crate") => Vec::new(),
            _ => here[..here.len() - 1].to_vec(),
        };
        path.extend(&words[1..]);
        let target = (1..=path.len())
            .rev()
            .map(|k| path[..k].join("::"))
            .find(|candidate| modules.contains_key(candidate) && candidate != name);
        if let Some(target) = target
            && !out.contains(&target)
        {
            out.push(target);
        }
    }
    out
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, Vec<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a str) {
            let at = self.index.len();
            self.index.insert(node, at);
            self.low.insert(node, at);
            self.stack.push(node);
            for next in &self.graph[node] {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.stack.contains(&next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    component.push(top.to_owned());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found.sort();
    walk.found
}

#[test]
fn no_crate_has_modules_that_import_each_other() {
    let mut failures = Vec::new();
    for src in crates() {
        let modules = modules(&src);
        let graph: BTreeMap<String, Vec<String>> = modules
            .iter()
            .map(|(name, text)| (name.clone(), imports(name, text, &modules)))
            .collect();
        for circle in circles(&graph) {
            failures.push(format!("{}: {}", src.display(), circle.join(" -> ")));
        }
    }
    assert!(
        failures.is_empty(),
        "modules that import each other (give the shared part a module both use):\n{}",
        failures.join("\n")
    );
}

#[test]
fn a_circle_is_found_and_named() {
    let modules: BTreeMap<String, String> = [
        ("config", "use crate::rules::Rule;"),
        ("rules", "use crate::config::Config;"),
        ("leaf", "use crate::config;"),
        ("a::b", "use super::c::X;"),
        ("a::c", "fn f() { crate::a::b::y() }"),
    ]
    .into_iter()
    .map(|(name, text)| (name.to_owned(), text.to_owned()))
    .collect();
    let graph = modules
        .iter()
        .map(|(name, text)| (name.clone(), imports(name, text, &modules)))
        .collect();
    assert_eq!(
        circles(&graph),
        vec![
            vec!["a::b".to_owned(), "a::c".to_owned()],
            vec!["config".to_owned(), "rules".to_owned()],
        ]
    );
}
