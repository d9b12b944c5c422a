//! Finding 10 of the second review, persona installs: `git clone` of a URL a tenant admin names
//! ran as the server's user, beside the data folder and the server's keys. It now runs in the
//! exec sandbox (`[tools] shell_sandbox`), whose only writable view of the host is a fresh work
//! folder; what the sandbox shows a clone is in `crates/tools/tests/sandbox.rs`.

use std::path::Path;
use std::sync::Arc;

use workmate_personas::{InstallPolicy, InstallSource, Personas};
use workmate_protocol::{TenantId, UserId};
use workmate_store::{ConnectOptions, Store};
use workmate_tools::{Sandbox, ShellSandbox};

const MANIFEST: &str = "---\nid: oncall\nname: On-call helper\ntools: [files]\n---\nYou keep the on-call rotation calm.\n";

/// A git repository holding one persona, in a folder the sandbox user can read.
fn repository(dir: &Path) -> String {
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(repo.join("manifest.md"), MANIFEST).unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &["commit", "-qm", "persona"],
    ] {
        let done = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(done.status.success(), "{done:?}");
    }
    // Readable by the sandbox user, as an operator's persona folder would be.
    let done = std::process::Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(&repo)
        .output()
        .unwrap();
    assert!(done.status.success());
    format!("file://{}", repo.display())
}

async fn personas(dir: &Path, sandbox: ShellSandbox) -> Personas {
    let url = format!("sqlite://{}", dir.join("test.db").display());
    let store = Store::connect(&url, ConnectOptions::default())
        .await
        .unwrap();
    store.migrate().await.unwrap();
    Personas::new(store).with_install_policy(InstallPolicy {
        folder_roots: vec![dir.to_owned()],
        sandbox: Some(Arc::new(sandbox)),
        ..InstallPolicy::default()
    })
}

#[tokio::test]
async fn a_persona_clone_goes_through_the_exec_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let url = repository(dir.path());
    let tenant = TenantId::from("acme");
    let admin = UserId::from("u_admin");

    // A sandbox that cannot start: the clone is refused, it never runs around it.
    let broken = ShellSandbox::Namespaces(Sandbox {
        program: "/nonexistent/bwrap".into(),
        ..Sandbox::default()
    });
    let refused = personas(dir.path(), broken)
        .await
        .install(&tenant, &InstallSource::Git(url.clone()), &admin)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("in the sandbox"), "{refused}");

    // The legitimate path: the operator's sandbox clones it.
    let installed = personas(dir.path(), ShellSandbox::default())
        .await
        .install(&tenant, &InstallSource::Git(url.clone()), &admin)
        .await
        .unwrap();
    assert_eq!(installed.id, "oncall");
}
