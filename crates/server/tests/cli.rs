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

#[test]
fn migrate_is_idempotent_on_mysql() {
    let Some(url) = fresh_database("WORKMATE_TEST_MYSQL_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    migrate_twice(dir.path(), &["--database-url", &url]);
}

#[test]
fn migrate_is_idempotent_on_postgres() {
    let Some(url) = fresh_database("WORKMATE_TEST_POSTGRES_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    migrate_twice(dir.path(), &["--database-url", &url]);
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

#[test]
fn serve_is_ready_on_mysql() {
    let Some(url) = fresh_database("WORKMATE_TEST_MYSQL_URL") else {
        return;
    };
    serve_is_ready_on(&url);
}

#[test]
fn serve_is_ready_on_postgres() {
    let Some(url) = fresh_database("WORKMATE_TEST_POSTGRES_URL") else {
        return;
    };
    serve_is_ready_on(&url);
}
