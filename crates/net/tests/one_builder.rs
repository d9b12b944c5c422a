//! No crate but this one builds an HTTP client or a TLS client configuration: every outbound
//! request goes through `workmate_net` (a fixed destination's client, or the guarded egress), so
//! a new client cannot quietly skip the address guard.

use std::path::{Path, PathBuf};

/// What building a client of one's own looks like in the source.
const BUILDERS: [&str; 5] = [
    "Client::builder(",
    "ClientBuilder::new(",
    "ClientConfig::builder",
    "reqwest::Client::new(",
    "Client::new()",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_other_crate_builds_an_http_client() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut sources = Vec::new();
    for group in ["crates", "adapters", "cards"] {
        let Ok(crates) = std::fs::read_dir(workspace.join(group)) else {
            continue;
        };
        for krate in crates.flatten() {
            if krate.path().ends_with("net") && group == "crates" {
                continue;
            }
            rust_files(&krate.path().join("src"), &mut sources);
        }
    }
    assert!(
        sources.len() > 100,
        "found only {} source files",
        sources.len()
    );
    let mut offenders = Vec::new();
    for file in &sources {
        let text = std::fs::read_to_string(file).unwrap();
        for builder in BUILDERS {
            if text.contains(builder) {
                offenders.push(format!("{}: {builder}", file.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "HTTP clients built outside workmate-net (use workmate_net::fixed_client or an Egress):\n{}",
        offenders.join("\n")
    );
}
