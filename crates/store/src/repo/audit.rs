//! Audit records: who did what, when, through which tool. Append-only; sealed into a hash chain
//! per tenant shortly after (see `audit_chain`).

use sqlx::any::AnyRow;
use workmate_protocol::{SessionId, TenantId};

use crate::row::{col, json_col, new_id, to_json};
use crate::{Result, Store};

/// An audit record to append.
#[derive(Clone, Debug, Default)]
pub struct NewAuditRecord {
    /// The session it happened in, if any.
    pub session_id: Option<SessionId>,
    /// Who acted (a user id, or `system`).
    pub actor: Option<String>,
    /// The step: `proposed`, `approval_resolved`, `approval_refused`, `finished`, …
    pub stage: String,
    /// The tool involved, if any.
    pub tool: Option<String>,
    /// The outcome, if any.
    pub status: Option<String>,
    /// Everything else. Stored redacted by the process-wide DLP rules ([`workmate_dlp::global`]):
    /// hidden fields and matches of the patterns never reach the table.
    pub detail: serde_json::Value,
}

/// A stored audit record.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditRecord {
    /// Its id (time-sortable).
    pub id: String,
    /// When it was written.
    pub at_ms: i64,
    /// The session it happened in.
    pub session_id: Option<SessionId>,
    /// Who acted.
    pub actor: Option<String>,
    /// The step.
    pub stage: String,
    /// The tool involved.
    pub tool: Option<String>,
    /// The outcome.
    pub status: Option<String>,
    /// Everything else.
    pub detail: serde_json::Value,
    /// Its place in the tenant's chain, once sealed.
    pub seq: Option<i64>,
    /// The hash of the record before it in the chain, once sealed.
    pub prev_hash: Option<String>,
    /// Its own hash, once sealed.
    pub hash: Option<String>,
}

/// Which records to list; every field narrows the list.
#[derive(Clone, Debug, Default)]
pub struct AuditQuery {
    /// Written at or after this time (Unix ms).
    pub from_ms: Option<i64>,
    /// Written before this time (Unix ms).
    pub to_ms: Option<i64>,
    /// Of this step.
    pub stage: Option<String>,
    /// By this actor.
    pub actor: Option<String>,
    /// In this session.
    pub session_id: Option<String>,
    /// About this tool.
    pub tool: Option<String>,
    /// Older than this record id (paging backwards, newest first).
    pub before: Option<String>,
}

/// Audit records.
#[derive(Debug)]
pub struct AuditRepo<'s> {
    store: &'s Store,
}

impl<'s> AuditRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    pub(super) fn store(&self) -> &'s Store {
        self.store
    }

    /// Appends a record.
    pub async fn append(&self, tenant: &TenantId, new: &NewAuditRecord) -> Result<AuditRecord> {
        self.append_with(&self.store.pool, tenant, new).await
    }

    /// Appends a record as part of the transaction `executor` belongs to.
    pub(crate) async fn append_with<'c, E>(
        &self,
        executor: E,
        tenant: &TenantId,
        new: &NewAuditRecord,
    ) -> Result<AuditRecord>
    where
        E: sqlx::Executor<'c, Database = sqlx::Any>,
    {
        let record = AuditRecord {
            id: new_id(),
            at_ms: self.store.clock_ms(),
            session_id: new.session_id.clone(),
            actor: new.actor.clone(),
            stage: new.stage.clone(),
            tool: new.tool.clone(),
            status: new.status.clone(),
            detail: workmate_dlp::global().json(&new.detail).value,
            seq: None,
            prev_hash: None,
            hash: None,
        };
        self.store
            .dialect
            .query("INSERT INTO audit_events (tenant_id, audit_id, at_ms, session_id, actor, stage, tool, status, body_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(record.id.clone())
            .bind(record.at_ms)
            .bind(record.session_id.as_ref().map(|s| s.as_str().to_owned()))
            .bind(record.actor.clone())
            .bind(record.stage.clone())
            .bind(record.tool.clone())
            .bind(record.status.clone())
            .bind(to_json(&record.detail)?)
            .execute(executor)
            .await?;
        Ok(record)
    }

    /// The tenant's newest records, newest first.
    pub async fn recent(&self, tenant: &TenantId, limit: u32) -> Result<Vec<AuditRecord>> {
        let rows = self
            .store
            .dialect
            .query("SELECT audit_id, at_ms, session_id, actor, stage, tool, status, body_json, seq, prev_hash, hash FROM audit_events WHERE tenant_id = ? ORDER BY audit_id DESC LIMIT ?")
            .bind(tenant.as_str().to_owned())
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// The tenant's records that `query` selects, newest first, at most `limit`.
    pub async fn list(
        &self,
        tenant: &TenantId,
        query: &AuditQuery,
        limit: u32,
    ) -> Result<Vec<AuditRecord>> {
        let rows = self
            .store
            .dialect
            .query("SELECT audit_id, at_ms, session_id, actor, stage, tool, status, body_json, seq, prev_hash, hash FROM audit_events WHERE tenant_id = ? AND (? IS NULL OR at_ms >= ?) AND (? IS NULL OR at_ms < ?) AND (? IS NULL OR stage = ?) AND (? IS NULL OR actor = ?) AND (? IS NULL OR session_id = ?) AND (? IS NULL OR tool = ?) AND (? IS NULL OR audit_id < ?) ORDER BY audit_id DESC LIMIT ?")
            .bind(tenant.as_str().to_owned())
            .bind(query.from_ms)
            .bind(query.from_ms)
            .bind(query.to_ms)
            .bind(query.to_ms)
            .bind(query.stage.clone())
            .bind(query.stage.clone())
            .bind(query.actor.clone())
            .bind(query.actor.clone())
            .bind(query.session_id.clone())
            .bind(query.session_id.clone())
            .bind(query.tool.clone())
            .bind(query.tool.clone())
            .bind(query.before.clone())
            .bind(query.before.clone())
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// The tenant's sealed records after place `after_seq`, in chain order, written in
    /// `[from_ms, to_ms)`, at most `limit`.
    pub async fn sealed_after(
        &self,
        tenant: &TenantId,
        after_seq: i64,
        from_ms: i64,
        to_ms: i64,
        limit: u32,
    ) -> Result<Vec<AuditRecord>> {
        let rows = self
            .store
            .dialect
            .query("SELECT audit_id, at_ms, session_id, actor, stage, tool, status, body_json, seq, prev_hash, hash FROM audit_events WHERE tenant_id = ? AND seq > ? AND at_ms >= ? AND at_ms < ? ORDER BY seq LIMIT ?")
            .bind(tenant.as_str().to_owned())
            .bind(after_seq)
            .bind(from_ms)
            .bind(to_ms)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }
}

fn from_row(row: &AnyRow) -> Result<AuditRecord> {
    const T: &str = "audit_events";
    Ok(AuditRecord {
        id: col(row, T, "audit_id")?,
        at_ms: col(row, T, "at_ms")?,
        session_id: col::<Option<String>>(row, T, "session_id")?.map(SessionId::from),
        actor: col(row, T, "actor")?,
        stage: col(row, T, "stage")?,
        tool: col(row, T, "tool")?,
        status: col(row, T, "status")?,
        detail: json_col(row, T, "body_json")?,
        seq: col(row, T, "seq")?,
        prev_hash: col(row, T, "prev_hash")?,
        hash: col(row, T, "hash")?,
    })
}
