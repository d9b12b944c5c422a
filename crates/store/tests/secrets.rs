//! The credential vault on every backend: sealed rows, per-tenant and per-user scopes, refusals
//! of moved rows, and rotation that is resumable and idempotent.

use std::sync::Arc;

use sqlx::{AnyConnection, Connection, Row};
use workmate_protocol::{TenantId, UserId};
use workmate_store::{Error, KeyUse, Vault};
use workmate_vault::{ExposeSecret, KeyProvider, Keyring, MasterKey, SecretString};

const TOKEN: &str = "xoxb-1234-plaintext-that-must-never-leak";

/// The same key every time for one `seed`, so several keyrings can share it.
fn key(seed: u8) -> MasterKey {
    MasterKey::from_bytes([seed; 32], format!("test key {seed}"))
}

fn ring(current: u8, previous: &[u8]) -> Arc<dyn KeyProvider> {
    Arc::new(Keyring::new(
        key(current),
        previous.iter().map(|s| key(*s)).collect(),
    ))
}

fn tenant(prefix: &str) -> TenantId {
    TenantId::from(format!("{prefix}-{}", uuid::Uuid::now_v7().simple()))
}

fn secret(text: &str) -> SecretString {
    SecretString::from(text)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

backend_matrix! {
    async fn secrets_are_stored_sealed_per_tenant_and_per_user(ctx: Ctx) {
        let vault = Vault::new(ctx.store.clone(), ring(1, &[]));
        let (t1, t2) = (tenant("acme"), tenant("globex"));
        let alice = UserId::from("slack-U1");

        assert!(vault.put(&t1, None, "platform/slack/bot_token", &secret(TOKEN)).await.unwrap(), "new");
        assert!(vault.put(&t1, Some(&alice), "connector/github/token", &secret("ghp_alice")).await.unwrap());
        assert!(vault.put(&t1, None, "provider/openai/api_key", &secret("sk-tenant")).await.unwrap());

        let got = vault.get(&t1, None, "platform/slack/bot_token").await.unwrap().unwrap();
        assert_eq!(got.expose_secret(), TOKEN);
        assert_eq!(
            vault.get(&t1, Some(&alice), "connector/github/token").await.unwrap().unwrap().expose_secret(),
            "ghp_alice"
        );
        // Scopes are separate: the user's secret is not the tenant's, and another tenant sees none.
        assert!(vault.get(&t1, None, "connector/github/token").await.unwrap().is_none());
        assert!(vault.get(&t1, Some(&UserId::from("slack-U2")), "connector/github/token").await.unwrap().is_none());
        assert!(vault.get(&t2, None, "platform/slack/bot_token").await.unwrap().is_none());
        assert!(vault.list_names(&t2, None).await.unwrap().is_empty());

        let names: Vec<String> = vault.list_names(&t1, None).await.unwrap().iter().map(|n| n.to_string()).collect();
        assert_eq!(names, ["platform/slack/bot_token", "provider/openai/api_key"]);
        let mine: Vec<String> = vault.list_names(&t1, Some(&alice)).await.unwrap().iter().map(|n| n.to_string()).collect();
        assert_eq!(mine, ["connector/github/token"]);

        // Replacing keeps one row with the new value.
        assert!(!vault.put(&t1, None, "platform/slack/bot_token", &secret("xoxb-new")).await.unwrap(), "replaced");
        assert_eq!(vault.get(&t1, None, "platform/slack/bot_token").await.unwrap().unwrap().expose_secret(), "xoxb-new");
        assert!(vault.put(&t1, None, "platform/slack/bot_token", &secret(TOKEN)).await.is_ok());

        // No column of any stored row holds the plaintext.
        let mut conn = AnyConnection::connect(&ctx.url).await.unwrap();
        let rows = sqlx::query("SELECT tenant_id, owner_id, name, key_id, wrapped_key, nonce, ciphertext FROM secrets")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert_eq!(rows.len(), 3);
        for row in &rows {
            for column in ["tenant_id", "owner_id", "name", "key_id"] {
                let text: String = row.try_get(column).unwrap();
                assert!(!text.contains(TOKEN) && !text.contains("ghp_alice"));
            }
            for column in ["wrapped_key", "nonce", "ciphertext"] {
                let bytes: Vec<u8> = row.try_get(column).unwrap();
                assert!(!bytes.is_empty());
                assert!(!contains(&bytes, TOKEN.as_bytes()) && !contains(&bytes, b"ghp_alice"), "{column}");
            }
        }
        conn.close().await.unwrap();

        assert!(vault.delete(&t1, None, "platform/slack/bot_token").await.unwrap());
        assert!(!vault.delete(&t1, None, "platform/slack/bot_token").await.unwrap());
        assert!(vault.get(&t1, None, "platform/slack/bot_token").await.unwrap().is_none());
        assert_eq!(vault.list_names(&t1, None).await.unwrap().len(), 1);
    }

    async fn a_row_copied_elsewhere_does_not_open_and_errors_carry_no_secret(ctx: Ctx) {
        let vault = Vault::new(ctx.store.clone(), ring(1, &[]));
        let (t1, t2) = (tenant("acme"), tenant("globex"));
        let alice = UserId::from("u-alice");
        vault.put(&t1, Some(&alice), "connector/github/token", &secret(TOKEN)).await.unwrap();
        let name = workmate_vault::SecretName::parse("connector/github/token").unwrap();
        let sealed = ctx.store.secrets().get(&t1, Some(&alice), &name).await.unwrap().unwrap();
        assert!(!format!("{sealed:?}").contains(TOKEN));

        // The same bytes stored for another tenant, another owner, tenant-wide, another name.
        let other_name = workmate_vault::SecretName::parse("connector/jira/token").unwrap();
        let bob = UserId::from("u-bob");
        let repo = ctx.store.secrets();
        repo.put(&t2, Some(&alice), &name, &sealed).await.unwrap();
        repo.put(&t1, Some(&bob), &name, &sealed).await.unwrap();
        repo.put(&t1, None, &name, &sealed).await.unwrap();
        repo.put(&t1, Some(&alice), &other_name, &sealed).await.unwrap();
        for (tenant, owner, name) in [
            (&t2, Some(&alice), "connector/github/token"),
            (&t1, Some(&bob), "connector/github/token"),
            (&t1, None, "connector/github/token"),
            (&t1, Some(&alice), "connector/jira/token"),
        ] {
            let err = vault.get(tenant, owner, name).await.unwrap_err();
            assert!(matches!(err, Error::Secret { .. }), "{err:?}");
            let text = format!("{err} {err:?}");
            assert!(text.contains("does not decrypt") && !text.contains(TOKEN), "{text}");
        }
        // The original still opens.
        assert_eq!(vault.get(&t1, Some(&alice), "connector/github/token").await.unwrap().unwrap().expose_secret(), TOKEN);

        // Another master key cannot open it; the message names the key, not the secret.
        let stranger = Vault::new(ctx.store.clone(), ring(9, &[]));
        let err = stranger.get(&t1, Some(&alice), "connector/github/token").await.unwrap_err();
        let text = format!("{err} {err:?} {stranger:?}");
        assert!(text.contains(&key(1).id().to_owned()) && !text.contains(TOKEN), "{text}");

        // Bad names and owners are refused before anything is written.
        assert!(matches!(vault.put(&t1, None, "Bad Name", &secret(TOKEN)).await, Err(Error::Invalid(_))));
        assert!(matches!(vault.put(&t1, Some(&UserId::from("")), "a/b", &secret(TOKEN)).await, Err(Error::Invalid(_))));
        let huge = "x".repeat(workmate_store::MAX_SECRET_BYTES + 1);
        let err = vault.put(&t1, None, "a/b", &secret(&huge)).await.unwrap_err();
        assert!(!err.to_string().contains(&huge[..64]));
        let names = vault.list_names(&t1, None).await.unwrap();
        assert_eq!(names.len(), 1, "only the copy made above: {names:?}");
        assert_eq!(names[0].as_str(), "connector/github/token");
    }

    async fn rotation_rewraps_in_batches_and_is_resumable_and_idempotent(ctx: Ctx) {
        let (t1, t2) = (tenant("acme"), tenant("globex"));
        let alice = UserId::from("u-alice");
        // Five rows under key 1, two under key 2 (a key rotated away from earlier).
        let on_1 = Vault::new(ctx.store.clone(), ring(1, &[]));
        for i in 0..4 {
            on_1.put(&t1, None, &format!("connector/c{i}/token"), &secret(&format!("v1-{i}"))).await.unwrap();
        }
        on_1.put(&t2, Some(&alice), "provider/openai/api_key", &secret("v1-alice")).await.unwrap();
        let on_2 = Vault::new(ctx.store.clone(), ring(2, &[]));
        on_2.put(&t2, None, "platform/slack/bot_token", &secret("v2-a")).await.unwrap();
        on_2.put(&t2, None, "platform/slack/app_token", &secret("v2-b")).await.unwrap();

        // Rotating to key 3 with only key 1 available: t1's rows move, then the run stops at
        // the first row on key 2, having committed what it did.
        let partial = Vault::new(ctx.store.clone(), ring(3, &[1]));
        let err = partial.rotate(2, "operator", &serde_json::Map::new()).await.unwrap_err();
        assert!(err.to_string().contains(key(2).id()), "{err}");
        let status = partial.status().await.unwrap();
        assert_eq!(status.key_id, key(3).id());
        let rows_on = |id: &str| status.keys.iter().find(|k| k.key_id == id).map_or(0, |k: &KeyUse| k.rows);
        assert_eq!(rows_on(key(3).id()), 4, "{status:?}");
        assert_eq!(rows_on(key(2).id()), 2);
        assert!(status.keys.iter().any(|k| k.key_id == key(2).id() && !k.available));

        // With both old keys the rest moves; rows already on key 3 are skipped.
        let full = Vault::new(ctx.store.clone(), ring(3, &[1, 2]));
        let report = full.rotate(2, "operator", &serde_json::Map::new()).await.unwrap();
        assert_eq!(report.key_id, key(3).id());
        assert_eq!(report.skipped, 4);
        assert_eq!(report.total_rewrapped(), 3);
        assert_eq!(report.rewrapped, vec![(t2.clone(), 3)]);
        assert_eq!(report.batches, 2, "3 rows in batches of 2");
        // Each batch left an audit record in its tenant, naming the keys its rows left.
        let audit: Vec<serde_json::Value> = ctx.store.audit().recent(&t2, 10).await.unwrap()
            .into_iter()
            .filter(|r| r.stage == "vault_rotated" && r.actor.as_deref() == Some("operator"))
            .map(|r| r.detail)
            .collect();
        // Batches follow (owner, name): t2's two tenant-wide rows on key 2, then Alice's on key 1.
        assert_eq!(audit, vec![
            serde_json::json!({"rows": 1, "key_id": key(3).id(), "from": [key(1).id()]}),
            serde_json::json!({"rows": 2, "key_id": key(3).id(), "from": [key(2).id()]}),
        ], "newest first");

        // A second run has nothing to do.
        let again = full.rotate(2, "operator", &serde_json::Map::new()).await.unwrap();
        assert_eq!((again.total_rewrapped(), again.skipped, again.batches), (0, 7, 0));

        // Key 3 alone now opens everything; the old keys alone open nothing.
        let only_new = Vault::new(ctx.store.clone(), ring(3, &[]));
        let status = only_new.status().await.unwrap();
        assert_eq!(status.keys, vec![KeyUse { key_id: key(3).id().to_owned(), rows: 7, available: true }]);
        for i in 0..4 {
            let got = only_new.get(&t1, None, &format!("connector/c{i}/token")).await.unwrap().unwrap();
            assert_eq!(got.expose_secret(), format!("v1-{i}"));
        }
        assert_eq!(only_new.get(&t2, Some(&alice), "provider/openai/api_key").await.unwrap().unwrap().expose_secret(), "v1-alice");
        assert_eq!(only_new.get(&t2, None, "platform/slack/app_token").await.unwrap().unwrap().expose_secret(), "v2-b");
        assert!(on_1.get(&t1, None, "connector/c0/token").await.is_err());
    }

    async fn two_rotations_at_once_rewrap_each_row_once(ctx: Ctx) {
        let t = tenant("acme");
        let old = Vault::new(ctx.store.clone(), ring(1, &[]));
        for i in 0..12 {
            old.put(&t, None, &format!("connector/c{i:02}/token"), &secret(&format!("v{i}"))).await.unwrap();
        }
        let rotate = |vault: Vault| tokio::spawn(async move {
            vault.rotate(3, "operator", &serde_json::Map::new()).await
        });
        let new = Vault::new(ctx.store.clone(), ring(2, &[1]));
        let (a, b) = (rotate(new.clone()), rotate(new.clone()));
        let (a, b) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
        assert_eq!(a.total_rewrapped() + b.total_rewrapped(), 12, "{a:?} {b:?}");

        let audited: u64 = ctx.store.audit().recent(&t, 100).await.unwrap()
            .into_iter()
            .filter(|r| r.stage == "vault_rotated")
            .map(|r| r.detail["rows"].as_u64().unwrap())
            .sum();
        assert_eq!(audited, 12, "each row re-wrapped and audited once");
        let only_new = Vault::new(ctx.store.clone(), ring(2, &[]));
        for i in 0..12 {
            let got = only_new.get(&t, None, &format!("connector/c{i:02}/token")).await.unwrap().unwrap();
            assert_eq!(got.expose_secret(), format!("v{i}"));
        }
    }
}
