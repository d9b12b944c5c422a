//! `workmate vault rotate|status` run as the real binary: secrets sealed under an old master key
//! are re-wrapped with the new one, after which the new key alone reads them all.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use workmate_protocol::{TenantId, UserId};
use workmate_store::{ConnectOptions, Store, Vault};
use workmate_vault::{ExposeSecret, KeyProvider, Keyring, MasterKey, SecretString};

use crate::support::{fresh_database, run};

/// base64 of 32 bytes 0x01 and of 32 bytes 0x02.
const OLD_KEY: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
const NEW_KEY: &str = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";

const SECRETS: [(&str, Option<&str>, &str, &str); 3] = [
    (
        "slack-T1",
        None,
        "platform/slack/bot_token",
        "xoxb-plaintext-one",
    ),
    (
        "slack-T1",
        Some("slack-U1"),
        "connector/github/token",
        "ghp_plaintext_two",
    ),
    (
        "feishu-T2",
        None,
        "provider/openai/api_key",
        "sk-plaintext-three",
    ),
];

fn key_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{text}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

fn ring(current: &str, previous: &[&str]) -> Arc<dyn KeyProvider> {
    let key = |text: &str| MasterKey::from_base64(&SecretString::from(text), "test").unwrap();
    Arc::new(Keyring::new(
        key(current),
        previous.iter().map(|p| key(p)).collect(),
    ))
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// Stores the test secrets sealed under `keys` (migrating the database first).
fn seed(url: &str, keys: Arc<dyn KeyProvider>) {
    block_on(async {
        let store = Store::connect(url, ConnectOptions::default())
            .await
            .unwrap();
        store.migrate().await.unwrap();
        let vault = Vault::new(store.clone(), keys);
        for (tenant, owner, name, value) in SECRETS {
            let owner = owner.map(UserId::from);
            vault
                .put(
                    &TenantId::from(tenant),
                    owner.as_ref(),
                    name,
                    &SecretString::from(value),
                )
                .await
                .unwrap();
        }
        store.close().await;
    });
}

/// Reads every test secret with `keys`; the values, or the first error's text.
fn read_all(url: &str, keys: Arc<dyn KeyProvider>) -> Result<Vec<String>, String> {
    block_on(async {
        let store = Store::connect(url, ConnectOptions::default())
            .await
            .unwrap();
        let vault = Vault::new(store.clone(), keys);
        let mut values = Vec::new();
        for (tenant, owner, name, _) in SECRETS {
            let owner = owner.map(UserId::from);
            let value = vault
                .get(&TenantId::from(tenant), owner.as_ref(), name)
                .await;
            match value {
                Ok(Some(v)) => values.push(v.expose_secret().to_owned()),
                Ok(None) => return Err(format!("{name} missing")),
                Err(e) => return Err(e.to_string()),
            }
        }
        store.close().await;
        Ok(values)
    })
}

fn audit_rows(url: &str, tenant: &str) -> Vec<serde_json::Value> {
    block_on(async {
        let store = Store::connect(url, ConnectOptions::default())
            .await
            .unwrap();
        let records = store
            .audit()
            .recent(&TenantId::from(tenant), 50)
            .await
            .unwrap();
        store.close().await;
        records
            .into_iter()
            .filter(|r| r.stage == "vault_rotated")
            .inspect(|r| assert_eq!(r.actor.as_deref(), Some("operator")))
            .map(|r| r.detail)
            .collect()
    })
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn workmate(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let output = run(dir, args, env);
    Outcome {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn no_plaintext(text: &str) {
    for (_, _, _, value) in SECRETS {
        assert!(!text.contains(value), "{text}");
    }
    assert!(!text.contains(OLD_KEY) && !text.contains(NEW_KEY), "{text}");
}

/// The whole operator story on the database at `url`.
fn rotation_story(url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys");
    std::fs::create_dir(&keys).unwrap();
    let old = key_file(&keys, "old.key", OLD_KEY);
    let new = key_file(&keys, "new.key", NEW_KEY);
    let (old_id, new_id) = (
        ring(OLD_KEY, &[]).key_id().to_owned(),
        ring(NEW_KEY, &[]).key_id().to_owned(),
    );
    seed(url, ring(OLD_KEY, &[]));
    let db = ["--database-url", url];
    let config = |current: &Path, previous: &[&Path]| {
        let list: Vec<String> = previous
            .iter()
            .map(|p| format!("{:?}", p.display().to_string()))
            .collect();
        std::fs::write(
            dir.path().join("workmate.toml"),
            format!(
                "[vault]\nkey_file = {:?}\nprevious_key_files = [{}]\n",
                current.display().to_string(),
                list.join(", ")
            ),
        )
        .unwrap();
    };

    // The new key alone cannot rotate: the old rows name a key it does not have.
    config(&new, &[]);
    let out = workmate(dir.path(), &[&["vault", "rotate"][..], &db].concat(), &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: rotation stopped") && last.contains(&old_id),
        "{}",
        out.stderr
    );
    no_plaintext(&out.stderr);

    let out = workmate(dir.path(), &[&["vault", "status"][..], &db].concat(), &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with(&format!("Current master key: {new_id}\n")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("{old_id}: 3 secrets (NOT CONFIGURED")),
        "{}",
        out.stdout
    );

    // With the old key as a previous key, everything moves, in batches of two.
    config(&new, &[&old]);
    let out = workmate(
        dir.path(),
        &[&["vault", "rotate", "--batch-size", "2"][..], &db].concat(),
        &[],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "Re-wrapped 3 secrets with master key {new_id} in 2 batches; skipped 0 secrets already on it.\n  tenant feishu-T2: 1 secret\n  tenant slack-T1: 2 secrets\n"
        )
    );
    no_plaintext(&format!("{}{}", out.stdout, out.stderr));
    assert_eq!(
        audit_rows(url, "slack-T1"),
        vec![serde_json::json!({"via": "cli", "rows": 2, "key_id": new_id, "from": [old_id]})]
    );

    // Running it again finds nothing to do.
    let out = workmate(dir.path(), &[&["vault", "rotate"][..], &db].concat(), &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "Re-wrapped 0 secrets with master key {new_id} in 0 batches; skipped 3 secrets already on it.\n"
        )
    );

    // The new key alone now reads every secret; the old key alone reads none.
    let values = read_all(url, ring(NEW_KEY, &[])).unwrap();
    assert_eq!(values, SECRETS.map(|(_, _, _, v)| v.to_owned()).to_vec());
    let err = read_all(url, ring(OLD_KEY, &[])).unwrap_err();
    assert!(err.contains(&new_id), "{err}");

    // The same key given in the environment is the same key id; status agrees.
    std::fs::remove_file(dir.path().join("workmate.toml")).unwrap();
    let out = workmate(
        dir.path(),
        &[&["vault", "status"][..], &db].concat(),
        &[("WORKMATE_VAULT_KEY", NEW_KEY)],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!("Current master key: {new_id}\n  {new_id}: 3 secrets (current)\n")
    );
}

#[test]
fn vault_rotate_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/vault.db", dir.path().display());
    rotation_story(&url);
}

workmate_test_support::needs! { [mysql]
    #[test]
    fn vault_rotate_on_mysql() {
        let url = fresh_database("WORKMATE_TEST_MYSQL_URL");
        rotation_story(&url);
    }
}

workmate_test_support::needs! { [postgres]
    #[test]
    fn vault_rotate_on_postgres() {
        let url = fresh_database("WORKMATE_TEST_POSTGRES_URL");
        rotation_story(&url);
    }
}

#[test]
fn vault_keys_must_be_usable() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/vault.db", dir.path().display());
    let db = ["--database-url", url.as_str()];

    // No key configured.
    let out = workmate(dir.path(), &[&["vault", "status"][..], &db].concat(), &[]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("no master key is configured"),
        "{}",
        out.stderr
    );

    // A key file others may read is refused, and its value is never shown.
    let open = dir.path().join("open.key");
    std::fs::write(&open, NEW_KEY).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let flag = format!("{}", open.display());
    let out = workmate(
        dir.path(),
        &[&["vault", "status"][..], &db].concat(),
        &[("WORKMATE__VAULT__KEY_FILE", flag.as_str())],
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("chmod 600") && !out.stderr.contains(NEW_KEY),
        "{}",
        out.stderr
    );

    // Once owner-only, the same file works.
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = workmate(
        dir.path(),
        &[&["vault", "status"][..], &db].concat(),
        &[("WORKMATE__VAULT__KEY_FILE", flag.as_str())],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("No secrets stored."), "{}", out.stdout);

    // A malformed key in the environment is a configuration error that does not echo it.
    let out = workmate(
        dir.path(),
        &["vault", "status"],
        &[("WORKMATE_VAULT_KEY", "c2VjcmV0LWJ1dC1zaG9ydA==")],
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("WORKMATE_VAULT_KEY")
            && !out.stderr.contains("c2VjcmV0LWJ1dC1zaG9ydA=="),
        "{}",
        out.stderr
    );
}

/// Runs `workmate args` with `input` on standard input.
fn workmate_with_input(dir: &Path, args: &[&str], input: &str) -> Outcome {
    let output = crate::support::run_with_input(dir, args, &[], input);
    Outcome {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

#[test]
fn platform_secrets_named_as_vault_references_are_read_from_the_vault_at_start() {
    const SIGNING: &str = "signing-secret-from-the-vault";
    let dir = tempfile::tempdir().unwrap();
    let key = key_file(dir.path(), "master.key", NEW_KEY);
    std::fs::write(
        dir.path().join("workmate.toml"),
        format!(
            "[vault]\nkey_file = {:?}\n\n[platforms.slack]\n\
             signing_secret = \"vault:platform/slack/signing_secret\"\n\
             bot_token = \"vault:platform/slack/bot_token\"\n\
             api_base = \"http://127.0.0.1:9\"\n",
            key.display().to_string()
        ),
    )
    .unwrap();

    // Not stored yet: the start stops, naming the setting and how to store it.
    let port = crate::support::free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let out = workmate(
        dir.path(),
        &["serve"],
        &[("WORKMATE__SERVER__LISTEN", &listen)],
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("platforms.slack.")
            && out.stderr.contains("workmate vault put platform/slack/"),
        "{}",
        out.stderr
    );

    // Stored from standard input; listed by name, never by value.
    for (name, value) in [
        ("platform/slack/signing_secret", format!("{SIGNING}\n")),
        ("platform/slack/bot_token", "xoxb-from-the-vault".to_owned()),
    ] {
        let out = workmate_with_input(dir.path(), &["vault", "put", name], &value);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        assert!(out.stdout.starts_with("Stored secret"), "{}", out.stdout);
    }
    let out = workmate_with_input(
        dir.path(),
        &["vault", "put", "platform/slack/bot_token"],
        "",
    );
    assert_eq!(out.code, Some(1), "an empty secret: {}", out.stderr);
    let out = workmate(dir.path(), &["vault", "list"], &[]);
    assert_eq!(
        out.stdout,
        "platform/slack/bot_token\nplatform/slack/signing_secret\n"
    );
    assert!(!out.stdout.contains(SIGNING) && !out.stderr.contains(SIGNING));

    // The server verifies Slack's signatures with the secret from the vault.
    let server = crate::support::Server::start(dir.path(), &[]);
    let body = r#"{"type":"url_verification","challenge":"from-the-vault","token":"t"}"#;
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string();
    let signature =
        |secret: &str| workmate_slack::sign(secret.as_bytes(), &timestamp, body.as_bytes());
    let post = |signature: &str| {
        crate::support::http_send(
            server.addr,
            "POST",
            "/v1/platforms/slack/events",
            &[
                ("X-Slack-Request-Timestamp", &timestamp),
                ("X-Slack-Signature", signature),
            ],
            Some(body),
        )
        .unwrap()
    };
    let (status, answer) = post(&signature(SIGNING));
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("from-the-vault"), "{answer}");
    let (status, _) = post(&signature("vault:platform/slack/signing_secret"));
    assert_eq!(status, 401, "the reference itself is not the secret");
    let log = server.log_text();
    assert!(log.contains("Secret read from the vault."), "{log}");
    assert!(
        !log.contains(SIGNING) && !log.contains("xoxb-from-the-vault"),
        "{log}"
    );
    server.terminate(std::time::Duration::from_secs(5));
}
