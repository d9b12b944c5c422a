//! Sealed secrets: the `secrets` table, with no key material and no plaintext in sight.
//!
//! Invariants: every statement but the operator's key inventory ([`SecretRepo::count_by_key`],
//! [`SecretRepo::tenants_not_on`]) names the tenant; a tenant-wide secret is stored with owner
//! `''`, which no user id can be (the vault refuses an empty one); re-wrapping a row is
//! conditional on the key id it was read with, so a secret replaced meanwhile is not clobbered.

use sqlx::Row;
use sqlx::any::AnyRow;
use workmate_protocol::{TenantId, UserId};
use workmate_vault::{Sealed, SecretName};

use crate::row::{col, to_i64};
use crate::{Error, NewAuditRecord, Result, Store};

const TABLE: &str = "secrets";

/// The owner column's value: `''` for tenant-wide.
fn owner_col(owner: Option<&UserId>) -> String {
    owner.map(|u| u.as_str().to_owned()).unwrap_or_default()
}

/// A sealed row read for re-wrapping.
#[derive(Debug)]
pub(crate) struct SealedRow {
    pub(crate) owner: Option<UserId>,
    pub(crate) name: SecretName,
    pub(crate) sealed: Sealed,
}

fn sealed_of(row: &AnyRow) -> Result<Sealed> {
    Ok(Sealed {
        key_id: col(row, TABLE, "key_id")?,
        wrapped_key: col(row, TABLE, "wrapped_key")?,
        nonce: col(row, TABLE, "nonce")?,
        ciphertext: col(row, TABLE, "ciphertext")?,
    })
}

fn name_of(row: &AnyRow) -> Result<SecretName> {
    let name: String = col(row, TABLE, "name")?;
    SecretName::parse(&name).map_err(|e| Error::corrupt(TABLE, e))
}

/// The `secrets` table.
#[derive(Debug)]
pub struct SecretRepo<'s> {
    store: &'s Store,
}

impl<'s> SecretRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Stores a sealed secret, replacing the one of the same tenant, owner and name; `true` when
    /// it is new.
    pub async fn put(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
        name: &SecretName,
        sealed: &Sealed,
    ) -> Result<bool> {
        let d = self.store.dialect;
        let now = self.store.clock_ms();
        let mut tx = self.store.begin_write().await?;
        let existed = d
            .locking_query("SELECT created_at_ms FROM secrets WHERE tenant_id = ? AND owner_id = ? AND name = ?")
            .bind(tenant.as_str().to_owned())
            .bind(owner_col(owner))
            .bind(name.as_str().to_owned())
            .fetch_optional(&mut *tx)
            .await?
            .is_some();
        // Insert if missing (a racing put may insert first: then it is ignored), then write the
        // value either way, so the last put wins whatever the interleaving. MySQL's affected-row
        // counts for ignored duplicates differ from the others', so none is relied on.
        d.insert_ignoring_duplicates(
            "INSERT INTO secrets (tenant_id, owner_id, name, key_id, wrapped_key, nonce, ciphertext, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            "name",
        )
        .bind(tenant.as_str().to_owned())
        .bind(owner_col(owner))
        .bind(name.as_str().to_owned())
        .bind(sealed.key_id.clone())
        .bind(sealed.wrapped_key.clone())
        .bind(sealed.nonce.clone())
        .bind(sealed.ciphertext.clone())
        .bind(now)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        d.query("UPDATE secrets SET key_id = ?, wrapped_key = ?, nonce = ?, ciphertext = ?, updated_at_ms = ? WHERE tenant_id = ? AND owner_id = ? AND name = ?")
            .bind(sealed.key_id.clone())
            .bind(sealed.wrapped_key.clone())
            .bind(sealed.nonce.clone())
            .bind(sealed.ciphertext.clone())
            .bind(now)
            .bind(tenant.as_str().to_owned())
            .bind(owner_col(owner))
            .bind(name.as_str().to_owned())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(!existed)
    }

    /// The sealed secret, if stored.
    pub async fn get(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
        name: &SecretName,
    ) -> Result<Option<Sealed>> {
        let row = self
            .store
            .dialect
            .query("SELECT key_id, wrapped_key, nonce, ciphertext FROM secrets WHERE tenant_id = ? AND owner_id = ? AND name = ?")
            .bind(tenant.as_str().to_owned())
            .bind(owner_col(owner))
            .bind(name.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.as_ref().map(sealed_of).transpose()
    }

    /// Removes a secret; `true` when there was one.
    pub async fn delete(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
        name: &SecretName,
    ) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("DELETE FROM secrets WHERE tenant_id = ? AND owner_id = ? AND name = ?")
            .bind(tenant.as_str().to_owned())
            .bind(owner_col(owner))
            .bind(name.as_str().to_owned())
            .execute(&self.store.writes)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// The names of the tenant's secrets for `owner` (tenant-wide ones for `None`), sorted.
    pub async fn list_names(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
    ) -> Result<Vec<SecretName>> {
        let rows = self
            .store
            .dialect
            .query("SELECT name FROM secrets WHERE tenant_id = ? AND owner_id = ? ORDER BY name")
            .bind(tenant.as_str().to_owned())
            .bind(owner_col(owner))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(name_of).collect()
    }

    /// How many secrets each master key wraps, over every tenant (the operator's inventory).
    pub async fn count_by_key(&self) -> Result<Vec<(String, u64)>> {
        let rows = self
            .store
            .dialect
            .query("SELECT key_id, COUNT(*) AS n FROM secrets GROUP BY key_id ORDER BY key_id")
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter()
            .map(|row| {
                let n: i64 = row.try_get("n")?;
                Ok((
                    col(row, TABLE, "key_id")?,
                    u64::try_from(n).unwrap_or_default(),
                ))
            })
            .collect()
    }

    /// Tenants holding secrets wrapped by another key than `key_id` (the rotation's work list).
    pub(crate) async fn tenants_not_on(&self, key_id: &str) -> Result<Vec<TenantId>> {
        let rows = self
            .store
            .dialect
            .query("SELECT DISTINCT tenant_id FROM secrets WHERE key_id <> ? ORDER BY tenant_id")
            .bind(key_id.to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter()
            .map(|row| col::<String>(row, TABLE, "tenant_id").map(TenantId::from))
            .collect()
    }

    /// Re-wraps up to `limit` of the tenant's secrets not wrapped by `key_id`, in one
    /// transaction that locks them; `rewrap` turns a row's sealed value into its re-wrapped one,
    /// and `audit` (given the rows changed and the key ids they left) makes the record stored in
    /// the same transaction. Returns how many rows it changed (0: none left).
    pub(crate) async fn rewrap_batch(
        &self,
        tenant: &TenantId,
        key_id: &str,
        limit: u64,
        mut rewrap: impl FnMut(&SealedRow) -> Result<Sealed>,
        audit: impl FnOnce(u64, Vec<String>) -> NewAuditRecord,
    ) -> Result<u64> {
        let d = self.store.dialect;
        let mut tx = self.store.begin_write().await?;
        let rows = d
            .locking_query("SELECT owner_id, name, key_id, wrapped_key, nonce, ciphertext FROM secrets WHERE tenant_id = ? AND key_id <> ? ORDER BY owner_id, name LIMIT ?")
            .bind(tenant.as_str().to_owned())
            .bind(key_id.to_owned())
            .bind(to_i64(limit))
            .fetch_all(&mut *tx)
            .await?;
        let mut changed = 0;
        let mut from: Vec<String> = Vec::new();
        for row in &rows {
            let owner: String = col(row, TABLE, "owner_id")?;
            let found = SealedRow {
                owner: (!owner.is_empty()).then(|| UserId::from(owner)),
                name: name_of(row)?,
                sealed: sealed_of(row)?,
            };
            let new = rewrap(&found)?;
            if !from.contains(&found.sealed.key_id) {
                from.push(found.sealed.key_id.clone());
            }
            let done = d
                .query("UPDATE secrets SET key_id = ?, wrapped_key = ? WHERE tenant_id = ? AND owner_id = ? AND name = ? AND key_id = ?")
                .bind(new.key_id)
                .bind(new.wrapped_key)
                .bind(tenant.as_str().to_owned())
                .bind(owner_col(found.owner.as_ref()))
                .bind(found.name.as_str().to_owned())
                .bind(found.sealed.key_id.clone())
                .execute(&mut *tx)
                .await?;
            changed += done.rows_affected();
        }
        if changed > 0 {
            from.sort();
            self.store
                .audit()
                .append_with(&mut *tx, tenant, &audit(changed, from))
                .await?;
        }
        tx.commit().await?;
        Ok(changed)
    }
}
