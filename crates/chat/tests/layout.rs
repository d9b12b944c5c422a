//! The chat crate's module layout: no import circle spans more than two files.
//!
//! A file depends on another when it names it — `crate::x::…`, `super::…`, or a child module in
//! a `use` — outside comments and `#[cfg(test)]` items; a name the crate root (or any module)
//! re-exports counts as the file that defines it, so `crate::Chat` is `handle.rs`. The shared
//! handle and plain types are leaves, the features depend on them, and the composition root
//! (`layer.rs`) depends on the features: a circle of three or more files means a feature
//! reached back into another, and this test names it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path from the crate root (`["commands", "parse"]`), and its file's.
type Module = Vec<String>;
type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn no_import_circle_spans_more_than_two_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = Vec::new();
    read_tree(&src, &src, &mut sources);
    let graph = graph(&sources);
    // The graph is read, not empty: the composition root depends on the job path, and the
    // shared handle on no feature.
    assert!(graph["layer.rs"].contains("jobs.rs"), "{graph:#?}");
    assert!(!graph["handle.rs"].contains("jobs.rs"), "{graph:#?}");
    let circles: Vec<_> = circles(&graph)
        .into_iter()
        .filter(|c| c.len() > 2)
        .collect();
    assert!(
        circles.is_empty(),
        "import circles of more than two files in the chat crate: {circles:?}"
    );
}

#[test]
fn a_circle_through_a_re_export_is_found_and_tests_and_comments_are_not_followed() {
    let sources = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\npub use a::Thing;\n"),
        ("a.rs", "use crate::b::Bee;\npub struct Thing;\n"),
        (
            "b/mod.rs",
            "mod inner;\nuse crate::{c::See, b::Bee as B};\n// crate::a\n",
        ),
        ("b/inner.rs", "use super::super::c;\n"),
        (
            "c.rs",
            "fn f() -> crate::Thing { crate::Thing }\n#[cfg(test)]\nmod tests { use crate::b; }\n",
        ),
    ];
    let sources: Vec<_> = sources
        .iter()
        .map(|(p, s)| ((*p).to_owned(), (*s).to_owned()))
        .collect();
    let graph = graph(&sources);
    assert_eq!(graph["c.rs"], BTreeSet::from(["a.rs".to_owned()]));
    assert_eq!(graph["b/inner.rs"], BTreeSet::from(["c.rs".to_owned()]));
    assert_eq!(
        circles(&graph),
        vec![vec!["a.rs".to_owned(), "b/mod.rs".into(), "c.rs".into()]]
    );
}

fn read_tree(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            read_tree(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy();
            let rel = rel.replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

fn module_of(file: &str) -> Module {
    let mut parts: Module = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Each file and the files it depends on.
fn graph(sources: &[(String, String)]) -> Graph {
    let files: BTreeMap<Module, &str> = sources
        .iter()
        .map(|(file, _)| (module_of(file), file.as_str()))
        .collect();
    let code: BTreeMap<Module, String> = sources
        .iter()
        .map(|(file, text)| (module_of(file), strip(text)))
        .collect();
    // Names each module re-exports, and the paths they come from.
    let mut exported: BTreeMap<Module, BTreeMap<String, String>> = BTreeMap::new();
    for (module, text) in &code {
        for (statement, public) in uses(text).0 {
            for path in expand(&statement).filter(|_| public) {
                let name = path.rsplit("::").next().unwrap_or_default().to_owned();
                exported
                    .entry(module.clone())
                    .or_default()
                    .insert(name, path);
            }
        }
    }
    let resolver = Resolver {
        files: &files,
        exported: &exported,
    };
    let mut graph = Graph::new();
    for (module, text) in &code {
        let (statements, rest) = uses(text);
        let mut paths: Vec<String> = statements.iter().flat_map(|(s, _)| expand(s)).collect();
        paths.extend(rooted_paths(&rest));
        let deps = paths
            .iter()
            .filter_map(|path| resolver.resolve(module, path, 0))
            .filter(|dep| dep != module)
            .map(|dep| files[&dep].to_owned())
            .collect();
        graph.insert(files[module].to_owned(), deps);
    }
    graph
}

struct Resolver<'a> {
    files: &'a BTreeMap<Module, &'a str>,
    exported: &'a BTreeMap<Module, BTreeMap<String, String>>,
}

impl Resolver<'_> {
    /// The module file `path`, named inside `module`, leads to; `None` outside the crate.
    fn resolve(&self, module: &Module, path: &str, depth: usize) -> Option<Module> {
        let segments: Vec<&str> = path.split("::").map(str::trim).collect();
        let (mut current, rest) = match segments[0] {
            "crate" => (Vec::new(), &segments[1..]),
            "super" | "self" => {
                let mut base = module.clone();
                let mut at = 0;
                while let Some(&word @ ("super" | "self")) = segments.get(at) {
                    if word == "super" {
                        base.pop();
                    }
                    at += 1;
                }
                (base, &segments[at..])
            }
            child
                if self
                    .files
                    .contains_key(&[module.clone(), vec![child.into()]].concat()) =>
            {
                (module.clone(), &segments[..])
            }
            _ => return None,
        };
        for (at, segment) in rest.iter().enumerate() {
            let next = [current.clone(), vec![(*segment).to_owned()]].concat();
            if self.files.contains_key(&next) {
                current = next;
                continue;
            }
            let source = self
                .exported
                .get(&current)
                .and_then(|names| names.get(*segment));
            if let Some(source) = source.filter(|_| depth < 8) {
                let onward = [vec![source.as_str()], rest[at + 1..].to_vec()]
                    .concat()
                    .join("::");
                if let Some(found) = self.resolve(&current, &onward, depth + 1) {
                    return Some(found);
                }
            }
            break;
        }
        Some(current)
    }
}

/// `text` without line comments and without `#[cfg(test)]` items.
fn strip(text: &str) -> String {
    let text: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let end = match (item.find(';'), item.find('{')) {
            (Some(semi), Some(open)) if semi < open => semi + 1,
            (_, Some(open)) => open + closing(&item[open..]),
            (Some(semi), None) => semi + 1,
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The length of the braced block `block` starts with.
fn closing(block: &str) -> usize {
    let mut depth = 0;
    for (at, c) in block.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 1 => return at + 1,
            '}' => depth -= 1,
            _ => {}
        }
    }
    block.len()
}

/// The `use` statements of `text` (each with whether it re-exports), and the text without them.
/// A statement starts a line, as rustfmt leaves it, so prose in a string is not one.
fn uses(text: &str) -> (Vec<(String, bool)>, String) {
    let mut statements = Vec::new();
    let mut rest = String::new();
    let mut open: Option<(String, bool)> = None;
    for line in text.lines() {
        if open.is_none() {
            let trimmed = line.trim_start();
            let (public, body) = match trimmed.strip_prefix("pub") {
                // `pub use`, `pub(crate) use`, `pub(super) use`
                Some(after) => match after.strip_prefix('(') {
                    Some(scoped) => (true, scoped.split_once(')').map_or("", |(_, r)| r)),
                    None => (true, after),
                },
                None => (false, trimmed),
            };
            let Some(statement) = body.trim_start().strip_prefix("use ") else {
                rest.push_str(line);
                rest.push('\n');
                continue;
            };
            open = Some((statement.to_owned(), public));
        } else if let Some((statement, _)) = &mut open {
            statement.push(' ');
            statement.push_str(line.trim());
        }
        if let Some((statement, public)) = open.take_if(|(s, _)| s.contains(';')) {
            let end = statement.find(';').unwrap_or(statement.len());
            statements.push((statement[..end].to_owned(), public));
        }
    }
    (statements, rest)
}

/// The paths one `use` statement names: `a::{b, c::{d as e}}` is `a::b` and `a::c::d`.
fn expand(statement: &str) -> impl Iterator<Item = String> {
    let statement = statement.trim();
    let Some(open) = statement.find('{') else {
        let path = statement.split(" as ").next().unwrap_or_default().trim();
        return vec![path.to_owned()].into_iter();
    };
    let prefix = &statement[..open];
    let inner = &statement[open + 1..statement.rfind('}').unwrap_or(statement.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .flat_map(|part| {
            expand(part)
                .map(|p| format!("{prefix}{p}"))
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// Paths in code (not in `use`) that start at the crate root or the parent module.
fn rooted_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for root in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(root) {
            let at = from + found;
            from = at + root.len();
            if code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            let len = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(code.len() - at);
            paths.push(code[at..at + len].trim_end_matches(':').to_owned());
        }
    }
    paths
}

/// The strongly connected components of more than one file, each sorted, in file order.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(file) = todo.pop() {
            for dep in graph.get(&file).into_iter().flatten() {
                if seen.insert(dep.clone()) {
                    todo.push(dep.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|file| (file, reach(file))).collect();
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for (file, from_file) in &reached {
        let circle: Vec<String> = from_file
            .iter()
            .filter(|other| reached.get(other).is_some_and(|back| back.contains(*file)))
            .cloned()
            .collect();
        if circle.len() > 1 {
            found.insert(circle);
        }
    }
    found.into_iter().collect()
}
