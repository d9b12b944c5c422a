//! The credential vault: per-tenant and per-user secrets, sealed before they reach the database.
//!
//! Invariants: the database only ever sees sealed rows (see `workmate_vault`); a secret is
//! returned only as a [`SecretString`] and never appears in a log line, an error or a `Debug`
//! output of this module; listing returns names, never values. [`Vault::rotate`] re-wraps data
//! keys in batches, one transaction each, skipping rows already on the current key, so it can be
//! stopped at any point and run again.

use std::fmt;
use std::sync::Arc;

use tracing::info;
use workmate_protocol::{TenantId, UserId};
use workmate_vault::{ExposeSecret, KeyProvider, SecretName, SecretRef, SecretString};

use crate::repo::secrets::SealedRow;
use crate::{Error, NewAuditRecord, Result, Store};

/// The largest secret the vault keeps, in bytes (a token or key, not a document).
pub const MAX_SECRET_BYTES: usize = 16 * 1024;

/// The store's secrets, sealed and opened with one key provider.
#[derive(Clone)]
pub struct Vault {
    store: Store,
    keys: Arc<dyn KeyProvider>,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vault")
            .field("key_id", &self.keys.key_id())
            .finish_non_exhaustive()
    }
}

/// What [`Vault::rotate`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RotationReport {
    /// The key every data key is now wrapped with.
    pub key_id: String,
    /// Rows re-wrapped by this run, per tenant (tenants with none are left out).
    pub rewrapped: Vec<(TenantId, u64)>,
    /// Rows that were already on `key_id` when the run started.
    pub skipped: u64,
    /// Transactions committed.
    pub batches: u64,
}

impl RotationReport {
    /// Rows re-wrapped in all tenants.
    pub fn total_rewrapped(&self) -> u64 {
        self.rewrapped.iter().map(|(_, n)| n).sum()
    }
}

/// Which master keys wrap the stored secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VaultStatus {
    /// The key new secrets are wrapped with.
    pub key_id: String,
    /// Per key id: rows, and whether the configured keys can open them.
    pub keys: Vec<KeyUse>,
}

/// One key id's share of the stored secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyUse {
    /// The key id.
    pub key_id: String,
    /// Secrets whose data key it wraps.
    pub rows: u64,
    /// Whether the configured keys include it.
    pub available: bool,
}

/// `name` checked, or the store's error for it.
fn parse_name(name: &str) -> Result<SecretName> {
    SecretName::parse(name).map_err(|e| Error::Invalid(e.to_string()))
}

fn check_owner(owner: Option<&UserId>) -> Result<()> {
    match owner {
        Some(user) if user.as_str().is_empty() => Err(Error::Invalid(
            "a secret's owner id must not be empty".into(),
        )),
        _ => Ok(()),
    }
}

fn describe(tenant: &TenantId, owner: Option<&UserId>, name: &SecretName) -> String {
    match owner {
        Some(user) => format!("{name} of user {user} in tenant {tenant}"),
        None => format!("{name} of tenant {tenant}"),
    }
}

fn place<'a>(
    tenant: &'a TenantId,
    owner: Option<&'a UserId>,
    name: &'a SecretName,
) -> SecretRef<'a> {
    SecretRef {
        tenant: tenant.as_str(),
        owner: owner.map(UserId::as_str),
        name,
    }
}

impl Vault {
    /// A vault over `store`'s `secrets` table, sealing with `keys`' current master key.
    pub fn new(store: Store, keys: Arc<dyn KeyProvider>) -> Self {
        Self { store, keys }
    }

    /// Stores `secret` as `name` of the tenant (`owner: None`) or of one of its users, replacing
    /// any previous value; `true` when it is new.
    pub async fn put(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
        name: &str,
        secret: &SecretString,
    ) -> Result<bool> {
        let name = parse_name(name)?;
        check_owner(owner)?;
        if secret.expose_secret().len() > MAX_SECRET_BYTES {
            return Err(Error::Invalid(format!(
                "secret {name} is longer than {MAX_SECRET_BYTES} bytes"
            )));
        }
        let sealed = workmate_vault::seal(self.keys.as_ref(), &place(tenant, owner, &name), secret)
            .map_err(|source| Error::Secret {
                what: describe(tenant, owner, &name),
                source,
            })?;
        let created = self
            .store
            .secrets()
            .put(tenant, owner, &name, &sealed)
            .await?;
        info!(tenant = %tenant, owner = owner.map(UserId::as_str), name = %name, key_id = %sealed.key_id, created, "Secret stored.");
        Ok(created)
    }

    /// The secret's value, if stored. Fails when the row does not open (another key, altered,
    /// or moved from another tenant, owner or name).
    pub async fn get(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
        name: &str,
    ) -> Result<Option<SecretString>> {
        let name = parse_name(name)?;
        check_owner(owner)?;
        let Some(sealed) = self.store.secrets().get(tenant, owner, &name).await? else {
            return Ok(None);
        };
        workmate_vault::open(self.keys.as_ref(), &place(tenant, owner, &name), &sealed)
            .map(Some)
            .map_err(|source| Error::Secret {
                what: describe(tenant, owner, &name),
                source,
            })
    }

    /// Removes a secret; `true` when there was one.
    pub async fn delete(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
        name: &str,
    ) -> Result<bool> {
        let name = parse_name(name)?;
        check_owner(owner)?;
        let deleted = self.store.secrets().delete(tenant, owner, &name).await?;
        info!(tenant = %tenant, owner = owner.map(UserId::as_str), name = %name, deleted, "Secret deleted.");
        Ok(deleted)
    }

    /// The names (never the values) of the tenant's secrets for `owner`, or its tenant-wide ones.
    pub async fn list_names(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
    ) -> Result<Vec<SecretName>> {
        check_owner(owner)?;
        self.store.secrets().list_names(tenant, owner).await
    }

    /// Re-wraps every data key not on the current master key with it, `batch` rows per
    /// transaction. Rows already on it are skipped, so a second run (or a run after an
    /// interruption) does only what is left. Fails, keeping the batches already committed, when
    /// a row names a key the provider does not hold or does not open. Each batch stores, in its
    /// own transaction, a `vault_rotated` audit record for its tenant naming `actor` and
    /// carrying `detail`'s fields beside `rows`, `key_id` and `from` (the key ids it left).
    pub async fn rotate(
        &self,
        batch: u64,
        actor: &str,
        detail: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<RotationReport> {
        let batch = batch.max(1);
        let current = self.keys.key_id().to_owned();
        let repo = self.store.secrets();
        let skipped = repo
            .count_by_key()
            .await?
            .into_iter()
            .find(|(id, _)| *id == current)
            .map_or(0, |(_, n)| n);
        let mut report = RotationReport {
            key_id: current.clone(),
            skipped,
            ..RotationReport::default()
        };
        for tenant in repo.tenants_not_on(&current).await? {
            let mut done = 0;
            loop {
                let rewrap = |row: &SealedRow| {
                    let here = place(&tenant, row.owner.as_ref(), &row.name);
                    let rewrapped = workmate_vault::rewrap(self.keys.as_ref(), &here, &row.sealed)
                        .map_err(|source| Error::Secret {
                            what: describe(&tenant, row.owner.as_ref(), &row.name),
                            source,
                        })?;
                    // The batch only holds rows on other keys, so there is always a new wrap.
                    rewrapped.ok_or_else(|| Error::Invalid("row already on the current key".into()))
                };
                let audit = |rows: u64, from: Vec<String>| {
                    let mut body = detail.clone();
                    body.insert("rows".into(), rows.into());
                    body.insert("key_id".into(), current.clone().into());
                    body.insert("from".into(), from.into());
                    NewAuditRecord {
                        session_id: None,
                        actor: Some(actor.to_owned()),
                        stage: "vault_rotated".into(),
                        tool: None,
                        status: Some("rewrapped".into()),
                        detail: serde_json::Value::Object(body),
                    }
                };
                let changed = repo
                    .rewrap_batch(&tenant, &current, batch, rewrap, audit)
                    .await?;
                if changed == 0 {
                    break;
                }
                done += changed;
                report.batches += 1;
                info!(tenant = %tenant, rows = changed, key_id = %current, "Secrets re-wrapped.");
            }
            if done > 0 {
                report.rewrapped.push((tenant, done));
            }
        }
        Ok(report)
    }

    /// Which keys wrap the stored secrets, and whether each is available.
    pub async fn status(&self) -> Result<VaultStatus> {
        let keys = self
            .store
            .secrets()
            .count_by_key()
            .await?
            .into_iter()
            .map(|(key_id, rows)| KeyUse {
                available: self.keys.has_key(&key_id),
                key_id,
                rows,
            })
            .collect();
        Ok(VaultStatus {
            key_id: self.keys.key_id().to_owned(),
            keys,
        })
    }
}
