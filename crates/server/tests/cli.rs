//! Black-box runs of the real `workmate` binary, each in a fresh temporary working directory.

use std::path::Path;
use std::time::Duration;

use crate::support::{Server, free_port, fresh_database, http_get, listing, run};

#[test]
fn serve_with_no_configuration_creates_the_database_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    assert!(
        dir.path().join("data/workmate.db").is_file(),
        "{:?}",
        listing(dir.path())
    );
    assert_eq!(
        http_get(server.addr, "/healthz").unwrap(),
        (200, r#"{"status":"ok"}"#.into())
    );
    assert_eq!(
        http_get(server.addr, "/readyz").unwrap(),
        (200, r#"{"status":"ready"}"#.into())
    );
    let log = server.log_text();
    assert!(
        log.contains("Listening.") && log.contains(&server.addr.to_string()),
        "{log}"
    );
    assert!(log.contains("Shell sandbox: namespaces"), "{log}");
    assert!(dir.path().join("workspaces").is_dir(), "outside data/");

    let status = server.terminate(Duration::from_secs(2));
    assert_eq!(status.code(), Some(0));
}

/// Runs `workmate serve` expecting a configuration error: exit 2, one `error: ` line naming the
/// problem, and nothing new in the working directory.
fn assert_config_error(dir: &Path, args: &[&str], env: &[(&str, &str)], names: &str) {
    let before = listing(dir);
    let output = run(dir, args, env);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "exactly one line: {stderr:?}");
    assert!(stderr.starts_with("error: "), "{stderr:?}");
    assert!(stderr.contains(names), "{stderr:?} should name {names:?}");
    assert!(output.stdout.is_empty());
    assert_eq!(listing(dir), before, "{args:?} created something");
}

#[test]
fn unknown_key_in_the_file_exits_2_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        "[server]\nlisen = \"127.0.0.1:1\"\n",
    )
    .unwrap();
    assert_config_error(dir.path(), &["serve"], &[], "unknown key `server.lisen`");
}

#[test]
fn malformed_database_url_exits_2_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    assert_config_error(
        dir.path(),
        &["serve", "--database-url", "not-a-url"],
        &[],
        "invalid `database.url` (from flag --database-url)",
    );
}

#[test]
fn port_in_use_exits_2_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    assert_config_error(
        dir.path(),
        &["serve", "--listen", &addr],
        &[],
        &format!("cannot listen on {addr}: address already in use"),
    );
}

#[test]
fn unusable_data_dir_exits_2_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // Tests may run as root, whom permission bits do not stop; a path under a file stops anyone.
    std::fs::write(dir.path().join("afile"), b"not a folder").unwrap();
    let data_dir = dir.path().join("afile/data");
    let listen = format!("127.0.0.1:{}", free_port());
    assert_config_error(
        dir.path(),
        &["serve", "--data-dir", data_dir.to_str().unwrap()],
        &[("WORKMATE__SERVER__LISTEN", &listen)],
        "data directory",
    );
}

#[test]
fn config_prints_toml_with_the_password_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(
        dir.path(),
        &["config"],
        &[(
            "WORKMATE__DATABASE__URL",
            "mysql://wm:hunter2@db.internal:3306/wm",
        )],
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stdout.contains(r#"url = "mysql://wm:***@db.internal:3306/wm""#),
        "{stdout}"
    );
    assert!(
        !stdout.contains("hunter2") && !String::from_utf8_lossy(&output.stderr).contains("hunter2")
    );
    assert!(listing(dir.path()).is_empty(), "`config` creates nothing");
}

/// Runs `migrate` twice: the first run applies migrations, the second applies none.
fn migrate_twice(dir: &Path, args: &[&str]) {
    let first = run(dir, &[&["migrate"], args].concat(), &[]);
    let stdout = String::from_utf8(first.stdout).unwrap();
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let applied = stdout.lines().count();
    assert!(applied >= 1, "{stdout:?}");
    assert!(
        stdout.lines().all(|l| l.starts_with("applied ")),
        "{stdout:?}"
    );

    let second = run(dir, &[&["migrate"], args].concat(), &[]);
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(
        String::from_utf8(second.stdout).unwrap(),
        format!("schema up to date ({applied} migrations)\n")
    );
}

#[test]
fn migrate_is_idempotent_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    migrate_twice(dir.path(), &[]);
    assert!(dir.path().join("data/workmate.db").is_file());
}

workmate_test_support::needs! { [mysql]
    #[test]
    fn migrate_is_idempotent_on_mysql() {
        let url = fresh_database("WORKMATE_TEST_MYSQL_URL");
        let dir = tempfile::tempdir().unwrap();
        migrate_twice(dir.path(), &["--database-url", &url]);
    }
}

workmate_test_support::needs! { [postgres]
    #[test]
    fn migrate_is_idempotent_on_postgres() {
        let url = fresh_database("WORKMATE_TEST_POSTGRES_URL");
        let dir = tempfile::tempdir().unwrap();
        migrate_twice(dir.path(), &["--database-url", &url]);
    }
}

fn serve_is_ready_on(url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--database-url", url]);
    assert_eq!(
        http_get(server.addr, "/readyz").unwrap(),
        (200, r#"{"status":"ready"}"#.into())
    );
    assert_eq!(server.terminate(Duration::from_secs(2)).code(), Some(0));
}

workmate_test_support::needs! { [mysql]
    #[test]
    fn serve_is_ready_on_mysql() {
        let url = fresh_database("WORKMATE_TEST_MYSQL_URL");
        serve_is_ready_on(&url);
    }
}

workmate_test_support::needs! { [postgres]
    #[test]
    fn serve_is_ready_on_postgres() {
        let url = fresh_database("WORKMATE_TEST_POSTGRES_URL");
        serve_is_ready_on(&url);
    }
}

/// Runs `workmate role …` with `db` (extra flags naming the database); exit code, stdout, stderr.
fn role(dir: &Path, db: &[&str], args: &[&str]) -> (Option<i32>, String, String) {
    let output = run(dir, &[&["role"], args, db].concat(), &[]);
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// The stored user and the tenant's `role_changed` audit statuses, oldest first.
fn stored(url: &str, user: &str) -> (workmate_store::User, Vec<(String, serde_json::Value)>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = workmate_store::Store::connect(url, workmate_store::ConnectOptions::default())
            .await
            .unwrap();
        let tenant = workmate_protocol::TenantId::from("slack-T1");
        let user = store
            .tenants()
            .get_user(&tenant, &user.into())
            .await
            .unwrap()
            .unwrap();
        let mut audit: Vec<_> = store
            .audit()
            .recent(&tenant, 100)
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.stage == "role_changed")
            .inspect(|r| assert_eq!(r.actor.as_deref(), Some("operator")))
            .map(|r| (r.status.unwrap(), r.detail))
            .collect();
        audit.reverse();
        store.close().await;
        (user, audit)
    })
}

/// Grants, revokes, refuses the last admin's demotion and a role not held, on the database `db`
/// names (at `url`).
fn operator_changes_roles(db: &[&str], url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let grant = |user: &str, role_word: &str| {
        role(
            dir.path(),
            db,
            &[
                "grant", "--tenant", "slack-T1", "--user", user, "--role", role_word,
            ],
        )
    };
    let revoke = |user: &str, role_word: &str| {
        role(
            dir.path(),
            db,
            &[
                "revoke", "--tenant", "slack-T1", "--user", user, "--role", role_word,
            ],
        )
    };

    let (code, out, err) = grant("slack-U1", "admin");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "slack-U1 in tenant slack-T1 is now an admin (new user).\n"
    );
    let (user, _) = stored(url, "slack-U1");
    assert_eq!(
        (user.role, user.display_name.as_str()),
        (workmate_store::Role::Admin, "slack-U1")
    );

    let (code, out, _) = grant("slack-U1", "admin");
    assert_eq!(
        (code, out.as_str()),
        (
            Some(0),
            "slack-U1 in tenant slack-T1 is already an admin; nothing changed.\n"
        )
    );

    let (code, out, err) = revoke("slack-U1", "admin");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.is_empty());
    // Logs (e.g. a database's notices) may come first; the error is the one last line.
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: slack-U1 is the last admin of tenant slack-T1"),
        "{err}"
    );
    assert_eq!(
        stored(url, "slack-U1").0.role,
        workmate_store::Role::Admin,
        "nothing changed"
    );

    let (code, out, err) = grant("slack-U2", "admin");
    assert_eq!(
        (code, out.as_str()),
        (
            Some(0),
            "slack-U2 in tenant slack-T1 is now an admin (new user).\n"
        ),
        "{err}"
    );
    let (code, out, err) = revoke("slack-U1", "admin");
    assert_eq!(
        (code, out.as_str()),
        (
            Some(0),
            "slack-U1 in tenant slack-T1 is now a member (was an admin).\n"
        ),
        "{err}"
    );

    let (code, _, err) = revoke("slack-U1", "approver");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("slack-U1 is not an approver in tenant slack-T1; they are a member"),
        "{err}"
    );
    let (code, _, err) = revoke("slack-U9", "admin");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("slack-U9 is not a user of tenant slack-T1"),
        "{err}"
    );

    let (user, audit) = stored(url, "slack-U1");
    assert_eq!(user.role, workmate_store::Role::Member);
    let statuses: Vec<&str> = audit.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        statuses,
        ["changed", "refused_last_admin", "changed", "changed"]
    );
    assert_eq!(
        audit[3].1,
        serde_json::json!({"user": "slack-U1", "from": "admin", "to": "member", "via": "cli"})
    );
}

#[test]
fn operator_grants_and_revokes_roles_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/roles.db", dir.path().display());
    operator_changes_roles(&["--database-url", &url], &url);
}

workmate_test_support::needs! { [mysql]
    #[test]
    fn operator_grants_and_revokes_roles_on_mysql() {
        let url = fresh_database("WORKMATE_TEST_MYSQL_URL");
        operator_changes_roles(&["--database-url", &url], &url);
    }
}

workmate_test_support::needs! { [postgres]
    #[test]
    fn operator_grants_and_revokes_roles_on_postgres() {
        let url = fresh_database("WORKMATE_TEST_POSTGRES_URL");
        operator_changes_roles(&["--database-url", &url], &url);
    }
}

#[test]
fn role_words_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = role(
        dir.path(),
        &[],
        &["grant", "--tenant", "t", "--user", "u", "--role", "boss"],
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(
        err.contains("boss") && err.contains("possible values: admin, approver, member"),
        "{err}"
    );
    assert!(listing(dir.path()).is_empty(), "nothing was opened");

    let (code, _, err) = role(
        dir.path(),
        &[],
        &["revoke", "--tenant", "t", "--user", "u", "--role", "member"],
    );
    assert_eq!(code, Some(2));
    assert!(
        err.contains("only approver or admin can be revoked"),
        "{err}"
    );
    assert!(listing(dir.path()).is_empty(), "nothing was opened");
    // The allowed word works in the same directory.
    let (code, out, err) = role(
        dir.path(),
        &[],
        &[
            "grant", "--tenant", "t", "--user", "u", "--role", "approver",
        ],
    );
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "u in tenant t is now an approver (new user).\n"),
        "{err}"
    );
}

#[test]
fn doctor_reports_each_dependency_and_fails_on_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    // No database yet: the data directory does not exist, so the database line is a problem.
    let output = run(dir.path(), &["doctor"], &[]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("problem database"), "{stdout}");

    // Migrated: every line is ok, the sandbox one included (it ran `true` in it).
    assert!(run(dir.path(), &["migrate"], &[]).status.success());
    let output = run(dir.path(), &["doctor"], &[]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(lines.iter().all(|l| l.starts_with("ok ")), "{stdout}");
    assert!(lines[0].contains("schema up to date"), "{stdout}");
    assert!(
        lines[1].contains("coordinator") && lines[1].contains("in process"),
        "{stdout}"
    );
    assert!(
        lines[4].contains("sandbox") && lines[4].contains("namespaces"),
        "{stdout}"
    );

    // A coordinator's Redis that does not answer is a problem, with what to do.
    let output = run(
        dir.path(),
        &["doctor"],
        &[("WORKMATE__COORDINATOR__REDIS_URL", "redis://127.0.0.1:1")],
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("problem coordinator") && stdout.contains("redis_url"),
        "{stdout}"
    );

    let output = run(
        dir.path(),
        &["doctor"],
        &[("WORKMATE__TOOLS__SHELL_SANDBOX", "none")],
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("unsandboxed"), "{stdout}");
}

#[test]
fn bench_soak_prints_its_table_and_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(
        dir.path(),
        &[
            "bench", "soak", "--events", "20", "--warmup", "10", "--block", "10",
        ],
        &[],
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("bytes/event") && stdout.contains("(warm-up)"),
        "{stdout}"
    );
    assert!(stdout.contains("target under 200"), "{stdout}");
    assert!(
        !stdout.contains("problem:"),
        "every event was answered: {stdout}"
    );
    let rows = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(rows, 3, "the warm-up and two blocks: {stdout}");
}
