//! The audit trail's hash chain, per tenant: sealing appended records in order, and checking
//! that nothing was edited, removed or reordered since.
//!
//! A record is appended unsealed (inside whatever transaction made the change it records, so
//! appending never waits on or conflicts with other writers); [`AuditRepo::seal`] then gives each
//! tenant's unsealed records, in id order, the next places in the tenant's chain (`seq` from 1):
//! `hash = SHA-256(prev_hash, tenant, seq, and every stored column)`, each part length-prefixed,
//! with the stored JSON text as written. The head row keeps the last place and hash.
//!
//! Invariants: sealing holds the tenant's head row locked for the whole batch, so two processes
//! never give out the same place; a sealed record's place and hashes are written once (`WHERE seq
//! IS NULL`); [`AuditRepo::verify`] reads only, and reports every break it finds: a changed
//! record (its hash no longer matches), a missing one (a gap in `seq`, or a record that does not
//! name the one before it), and a missing newest record (the head is ahead of the last record).

use sha2::{Digest, Sha256};
use sqlx::any::AnyRow;
use workmate_protocol::TenantId;

use super::audit::AuditRepo;
use crate::Result;
use crate::row::col;

/// The `prev_hash` of a tenant's first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Rows read per page while verifying.
const VERIFY_PAGE: i64 = 1_000;

/// A place where the chain does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainBreak {
    /// The place of the record where it shows.
    pub seq: i64,
    /// That record's id (empty when the break is at the head).
    pub audit_id: String,
    /// What is wrong, for a person.
    pub reason: String,
}

/// What checking a tenant's chain found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChainReport {
    /// Sealed records read.
    pub records: u64,
    /// The head's place (0 when nothing was sealed yet).
    pub head_seq: i64,
    /// Records appended but not sealed yet (not covered by the check).
    pub unsealed: u64,
    /// Every break found, in chain order.
    pub breaks: Vec<ChainBreak>,
}

impl ChainReport {
    /// Whether the chain holds.
    pub fn is_intact(&self) -> bool {
        self.breaks.is_empty()
    }
}

/// One stored record, as the hash covers it.
struct Stored {
    audit_id: String,
    at_ms: i64,
    session_id: Option<String>,
    actor: Option<String>,
    stage: String,
    tool: Option<String>,
    status: Option<String>,
    body_json: String,
}

impl Stored {
    fn read(row: &AnyRow) -> Result<Self> {
        const T: &str = "audit_events";
        Ok(Self {
            audit_id: col(row, T, "audit_id")?,
            at_ms: col(row, T, "at_ms")?,
            session_id: col(row, T, "session_id")?,
            actor: col(row, T, "actor")?,
            stage: col(row, T, "stage")?,
            tool: col(row, T, "tool")?,
            status: col(row, T, "status")?,
            body_json: col(row, T, "body_json")?,
        })
    }

    /// The record's hash at `seq` after `prev`.
    fn hash(&self, prev: &str, tenant: &TenantId, seq: i64) -> String {
        let mut hasher = Sha256::new();
        let mut part = |value: Option<&str>| match value {
            None => hasher.update([0u8]),
            Some(text) => {
                hasher.update([1u8]);
                hasher.update((text.len() as u64).to_be_bytes());
                hasher.update(text.as_bytes());
            }
        };
        part(Some(prev));
        part(Some(tenant.as_str()));
        part(Some(&seq.to_string()));
        part(Some(&self.audit_id));
        part(Some(&self.at_ms.to_string()));
        part(self.session_id.as_deref());
        part(self.actor.as_deref());
        part(Some(&self.stage));
        part(self.tool.as_deref());
        part(self.status.as_deref());
        part(Some(&self.body_json));
        hex::encode(hasher.finalize())
    }
}

impl AuditRepo<'_> {
    /// Seals up to `batch` unsealed records of every tenant that has some; how many it sealed.
    pub async fn seal(&self, batch: u32) -> Result<u64> {
        let store = self.store();
        let rows = store
            .dialect
            .query("SELECT DISTINCT tenant_id FROM audit_events WHERE seq IS NULL")
            .fetch_all(&store.pool)
            .await?;
        let mut sealed = 0;
        for row in &rows {
            let tenant = TenantId::from(col::<String>(row, "audit_events", "tenant_id")?);
            sealed += self.seal_tenant(&tenant, batch).await?;
        }
        Ok(sealed)
    }

    /// Seals up to `batch` of `tenant`'s unsealed records, oldest id first.
    pub async fn seal_tenant(&self, tenant: &TenantId, batch: u32) -> Result<u64> {
        let store = self.store();
        let d = store.dialect;
        let t = tenant.as_str().to_owned();
        let now = store.clock_ms();
        let mut tx = store.begin_write().await?;
        d.insert_ignoring_duplicates(
            "INSERT INTO audit_chain_heads (tenant_id, seq, hash, sealed_at_ms) VALUES (?, ?, ?, ?)",
            "tenant_id",
        )
        .bind(t.clone())
        .bind(0_i64)
        .bind(GENESIS)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let head = d
            .locking_query("SELECT seq, hash FROM audit_chain_heads WHERE tenant_id = ?")
            .bind(t.clone())
            .fetch_one(&mut *tx)
            .await?;
        let mut seq: i64 = col(&head, "audit_chain_heads", "seq")?;
        let mut prev: String = col(&head, "audit_chain_heads", "hash")?;
        let rows = d
            .query("SELECT audit_id, at_ms, session_id, actor, stage, tool, status, body_json FROM audit_events WHERE tenant_id = ? AND seq IS NULL ORDER BY audit_id LIMIT ?")
            .bind(t.clone())
            .bind(i64::from(batch))
            .fetch_all(&mut *tx)
            .await?;
        for row in &rows {
            let record = Stored::read(row)?;
            seq += 1;
            let hash = record.hash(&prev, tenant, seq);
            d.query("UPDATE audit_events SET seq = ?, prev_hash = ?, hash = ? WHERE tenant_id = ? AND audit_id = ? AND seq IS NULL")
                .bind(seq)
                .bind(prev.clone())
                .bind(hash.clone())
                .bind(t.clone())
                .bind(record.audit_id.clone())
                .execute(&mut *tx)
                .await?;
            prev = hash;
        }
        if !rows.is_empty() {
            d.query("UPDATE audit_chain_heads SET seq = ?, hash = ?, sealed_at_ms = ? WHERE tenant_id = ?")
                .bind(seq)
                .bind(prev)
                .bind(now)
                .bind(t)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(rows.len() as u64)
    }

    /// Checks `tenant`'s chain from its first record to its head.
    pub async fn verify(&self, tenant: &TenantId) -> Result<ChainReport> {
        let store = self.store();
        let d = store.dialect;
        let t = tenant.as_str().to_owned();
        let mut report = ChainReport::default();
        let (mut expected, mut prev) = (1_i64, GENESIS.to_owned());
        let mut last: Option<(i64, String)> = None;
        loop {
            let rows = d
                .query("SELECT audit_id, at_ms, session_id, actor, stage, tool, status, body_json, seq, prev_hash, hash FROM audit_events WHERE tenant_id = ? AND seq >= ? ORDER BY seq LIMIT ?")
                .bind(t.clone())
                .bind(expected)
                .bind(VERIFY_PAGE)
                .fetch_all(&store.pool)
                .await?;
            let full = rows.len() as i64 == VERIFY_PAGE;
            for row in &rows {
                let record = Stored::read(row)?;
                let seq: i64 = col(row, "audit_events", "seq")?;
                let stored_prev: String = col(row, "audit_events", "prev_hash")?;
                let stored_hash: String = col(row, "audit_events", "hash")?;
                let mut brk = |reason: String| {
                    report.breaks.push(ChainBreak {
                        seq,
                        audit_id: record.audit_id.clone(),
                        reason,
                    });
                };
                if seq != expected {
                    brk(format!(
                        "records {expected} to {} are missing (deleted?)",
                        seq - 1
                    ));
                } else if stored_prev != prev {
                    brk(
                        "it does not follow the record before it (one was removed or \
                         replaced)"
                            .into(),
                    );
                }
                if record.hash(&stored_prev, tenant, seq) != stored_hash {
                    brk("it was changed after it was sealed (its hash does not match)".into());
                }
                report.records += 1;
                expected = seq + 1;
                prev = stored_hash.clone();
                last = Some((seq, stored_hash));
            }
            if !full {
                break;
            }
        }
        let head = d
            .query("SELECT seq, hash FROM audit_chain_heads WHERE tenant_id = ?")
            .bind(t.clone())
            .fetch_optional(&store.pool)
            .await?;
        if let Some(head) = head {
            let head_seq: i64 = col(&head, "audit_chain_heads", "seq")?;
            let head_hash: String = col(&head, "audit_chain_heads", "hash")?;
            report.head_seq = head_seq;
            let (last_seq, last_hash) = last.clone().unwrap_or((0, GENESIS.to_owned()));
            if head_seq != last_seq || head_hash != last_hash {
                report.breaks.push(ChainBreak {
                    seq: head_seq,
                    audit_id: String::new(),
                    reason: format!(
                        "the chain's head is record {head_seq}, but the last record found is \
                         {last_seq} (the newest records were removed or changed)"
                    ),
                });
            }
        }
        let unsealed = d
            .query("SELECT COUNT(*) AS n FROM audit_events WHERE tenant_id = ? AND seq IS NULL")
            .bind(t)
            .fetch_one(&store.pool)
            .await?;
        report.unsealed = u64::try_from(col::<i64>(&unsealed, "audit_events", "n")?).unwrap_or(0);
        Ok(report)
    }

    /// Every tenant that has audit records, by id.
    pub async fn tenants(&self) -> Result<Vec<TenantId>> {
        let store = self.store();
        let rows = store
            .dialect
            .query("SELECT DISTINCT tenant_id FROM audit_events ORDER BY tenant_id")
            .fetch_all(&store.pool)
            .await?;
        rows.iter()
            .map(|r| col::<String>(r, "audit_events", "tenant_id").map(TenantId::from))
            .collect()
    }
}
