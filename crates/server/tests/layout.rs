//! The README's layout table names every crate of the workspace, and nothing that is not one:
//! a newcomer reading it finds every crate where it is.

use std::collections::BTreeSet;

/// The paths of the workspace's members, from the root `Cargo.toml`.
fn members(manifest: &str) -> BTreeSet<String> {
    let list = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .unwrap_or_default();
    list.split(',')
        .map(|item| item.trim().trim_matches('"').to_owned())
        .filter(|item| !item.is_empty())
        .collect()
}

/// The first column of the README's `## Layout` table, trailing slashes dropped.
fn listed(readme: &str) -> BTreeSet<String> {
    let section = readme
        .split_once("## Layout")
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    let section = section.split("\n## ").next().unwrap_or_default();
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|line| line.split_once('`'))
        .map(|(path, _)| path.trim_end_matches('/').to_owned())
        .collect()
}

#[test]
fn the_readme_layout_lists_every_workspace_crate() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    let manifest = std::fs::read_to_string(format!("{root}Cargo.toml")).unwrap();
    let readme = std::fs::read_to_string(format!("{root}README.md")).unwrap();
    let members = members(&manifest);
    let listed = listed(&readme);
    assert!(members.len() > 20, "{members:?}");
    let missing: Vec<&String> = members.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "crates the README's layout does not list: {missing:?}"
    );
    // Every listed path exists.
    for path in &listed {
        assert!(
            std::path::Path::new(&format!("{root}{path}")).exists(),
            "the README's layout lists {path}, which is not in the tree"
        );
    }
}
