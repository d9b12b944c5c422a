//! `workmate vault rotate|status`: the operator's view of the credential vault.
//!
//! Invariants: no secret value is read or printed here (rotation re-wraps data keys only, and
//! status counts rows); every batch a rotation commits leaves an audit record in its tenant with
//! actor `operator` (written by the store in the batch's transaction); nothing is printed here,
//! the outcome is returned as text.

use std::sync::Arc;

use workmate_store::{RotationReport, Store, Vault, VaultStatus};
use workmate_vault::KeyProvider;

use std::io::Read;

use secrecy::SecretString;
use workmate_protocol::{TenantId, UserId};

use crate::cli::{SecretPlace, VaultCommand};
use crate::config::{Config, VAULT_KEY_ENV};
use crate::error::StartupError;
use crate::{data_dir, database};

/// Runs `workmate vault …` against the configured database (migrating it first) and says what
/// happened.
pub(crate) async fn run(config: &Config, action: VaultCommand) -> Result<String, StartupError> {
    let keys: Arc<dyn KeyProvider> = match config.vault.keyring() {
        Ok(Some(ring)) => Arc::new(ring),
        Ok(None) => {
            return Err(StartupError::VaultKeys(format!(
                "no master key is configured; set [vault] key_file / WORKMATE__VAULT__KEY_FILE \
                 to a file holding 32 random bytes in base64 (mode 600), or put the key in \
                 {VAULT_KEY_ENV}"
            )));
        }
        Err(e) => return Err(StartupError::VaultKeys(e.to_string())),
    };
    data_dir::prepare(&config.server.data_dir)?;
    let store = database::open(config).await?;
    database::migrate(&store, config).await?;
    let vault = Vault::new(store.clone(), keys);
    let outcome = match action {
        VaultCommand::Rotate { batch_size } => rotate(&vault, batch_size).await,
        VaultCommand::Status => vault
            .status()
            .await
            .map(|s| describe_status(&s))
            .map_err(StartupError::Store),
        VaultCommand::Put(place) => put(&store, &vault, &place).await,
        VaultCommand::List { tenant, user } => list(&vault, &tenant, user.as_deref()).await,
        VaultCommand::Delete(place) => {
            let owner = place.user.as_deref().map(UserId::from);
            vault
                .delete(
                    &TenantId::from(place.tenant.as_str()),
                    owner.as_ref(),
                    &place.name,
                )
                .await
                .map(|deleted| {
                    if deleted {
                        format!("Deleted secret {}.", place.name)
                    } else {
                        format!("There was no secret {}; nothing deleted.", place.name)
                    }
                })
                .map_err(refused)
        }
    };
    store.close().await;
    outcome
}

/// A store error as the operator's to fix (a bad name, a value too long) or the store's.
fn refused(error: workmate_store::Error) -> StartupError {
    match error {
        workmate_store::Error::Invalid(reason) => StartupError::Refused(reason),
        other => StartupError::Store(other),
    }
}

/// Reads the secret from standard input (one trailing newline dropped) and stores it.
async fn put(store: &Store, vault: &Vault, place: &SecretPlace) -> Result<String, StartupError> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| {
        StartupError::Refused(format!("cannot read the secret from standard input: {e}"))
    })?;
    let value = text.strip_suffix('\n').unwrap_or(&text);
    let value = value.strip_suffix('\r').unwrap_or(value);
    if value.is_empty() {
        return Err(StartupError::Refused(
            "the secret is empty; pipe its value in, e.g. `workmate vault put NAME < file`".into(),
        ));
    }
    let secret = SecretString::from(value.to_owned());
    let tenant = TenantId::from(place.tenant.as_str());
    store
        .tenants()
        .ensure(&tenant, tenant.as_str())
        .await
        .map_err(StartupError::Store)?;
    let owner = place.user.as_deref().map(UserId::from);
    let created = vault
        .put(&tenant, owner.as_ref(), &place.name, &secret)
        .await
        .map_err(refused)?;
    let verb = if created { "Stored" } else { "Replaced" };
    Ok(format!(
        "{verb} secret {} of tenant {}.",
        place.name, place.tenant
    ))
}

async fn list(vault: &Vault, tenant: &str, user: Option<&str>) -> Result<String, StartupError> {
    let owner = user.map(UserId::from);
    let names = vault
        .list_names(&TenantId::from(tenant), owner.as_ref())
        .await
        .map_err(refused)?;
    if names.is_empty() {
        return Ok("No secrets.".into());
    }
    Ok(names.iter().map(|n| format!("{n}\n")).collect())
}

/// The actor audit records name for rotations run from the command line.
const OPERATOR: &str = "operator";

async fn rotate(vault: &Vault, batch: u64) -> Result<String, StartupError> {
    let mut via = serde_json::Map::new();
    via.insert("via".into(), "cli".into());
    let report = vault
        .rotate(batch, OPERATOR, &via)
        .await
        .map_err(|e| match e {
            workmate_store::Error::Secret { .. } => StartupError::Refused(format!(
                "rotation stopped: {e}; the batches before it are kept, so add the missing key \
                 to [vault] previous_key_files and run `workmate vault rotate` again \
                 (`workmate vault status` shows what is left)"
            )),
            other => StartupError::Store(other),
        })?;
    Ok(describe_rotation(&report))
}

fn secrets(n: u64) -> String {
    if n == 1 {
        "1 secret".to_owned()
    } else {
        format!("{n} secrets")
    }
}

fn describe_rotation(report: &RotationReport) -> String {
    let mut out = format!(
        "Re-wrapped {} with master key {} in {} batch{}; skipped {} already on it.\n",
        secrets(report.total_rewrapped()),
        report.key_id,
        report.batches,
        if report.batches == 1 { "" } else { "es" },
        secrets(report.skipped),
    );
    for (tenant, rows) in &report.rewrapped {
        out.push_str(&format!("  tenant {tenant}: {}\n", secrets(*rows)));
    }
    out
}

fn describe_status(status: &VaultStatus) -> String {
    let mut out = format!("Current master key: {}\n", status.key_id);
    if status.keys.is_empty() {
        out.push_str("No secrets stored.\n");
    }
    for key in &status.keys {
        let note = if key.key_id == status.key_id {
            "current"
        } else if key.available {
            "previous key, configured; `workmate vault rotate` moves these to the current key"
        } else {
            "NOT CONFIGURED: these cannot be read; add the key to [vault] previous_key_files"
        };
        out.push_str(&format!(
            "  {}: {} ({note})\n",
            key.key_id,
            secrets(key.rows)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use workmate_protocol::TenantId;
    use workmate_store::KeyUse;

    #[test]
    fn reports_read_as_sentences() {
        let report = RotationReport {
            key_id: "k1-new".into(),
            rewrapped: vec![(TenantId::from("t1"), 3), (TenantId::from("t2"), 1)],
            skipped: 1,
            batches: 2,
        };
        assert_eq!(
            describe_rotation(&report),
            "Re-wrapped 4 secrets with master key k1-new in 2 batches; skipped 1 secret already on it.\n  tenant t1: 3 secrets\n  tenant t2: 1 secret\n"
        );
        let status = VaultStatus {
            key_id: "k1-new".into(),
            keys: vec![
                KeyUse {
                    key_id: "k1-gone".into(),
                    rows: 2,
                    available: false,
                },
                KeyUse {
                    key_id: "k1-new".into(),
                    rows: 5,
                    available: true,
                },
            ],
        };
        let text = describe_status(&status);
        assert!(text.starts_with("Current master key: k1-new\n"), "{text}");
        assert!(
            text.contains("k1-gone: 2 secrets (NOT CONFIGURED"),
            "{text}"
        );
        assert!(text.contains("k1-new: 5 secrets (current)"), "{text}");
    }
}
