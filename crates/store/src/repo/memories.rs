//! Explicit memories: saved only by an explicit tool call or a person, never extracted.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{TenantId, UserId};

use super::opt_outs::OptOut;
use crate::row::{col, enum_col, new_id, to_word};
use crate::{Result, Store};

/// Who turned memory saving off.
const SAVING: OptOut = OptOut {
    select: "SELECT since_ms FROM memory_saving_off WHERE tenant_id = ? AND user_id = ?",
    delete: "DELETE FROM memory_saving_off WHERE tenant_id = ? AND user_id = ?",
    insert: "INSERT INTO memory_saving_off (tenant_id, user_id, since_ms) VALUES (?, ?, ?)",
};

/// Where a memory applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// Facts about a person, visible in all their sessions.
    Global,
    /// Facts about one workspace or project.
    Workspace,
}

/// A memory to save.
#[derive(Clone, Debug)]
pub struct NewMemory {
    /// Where it applies.
    pub scope: MemoryScope,
    /// Whose memory it is (global memories belong to a person).
    pub owner: Option<UserId>,
    /// The workspace it is about (workspace scope).
    pub workspace: Option<String>,
    /// An optional stable key.
    pub key: Option<String>,
    /// The remembered text.
    pub content: String,
    /// A one-line summary for index listings.
    pub summary: Option<String>,
}

/// A saved memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    /// Its id.
    pub id: String,
    /// Where it applies.
    pub scope: MemoryScope,
    /// Whose memory it is.
    pub owner: Option<UserId>,
    /// The workspace it is about.
    pub workspace: Option<String>,
    /// Its key.
    pub key: Option<String>,
    /// The remembered text.
    pub content: String,
    /// Its summary.
    pub summary: Option<String>,
    /// When it was saved.
    pub created_at_ms: i64,
    /// When it last changed.
    pub updated_at_ms: i64,
}

/// Memories.
#[derive(Debug)]
pub struct MemoryRepo<'s> {
    store: &'s Store,
}

macro_rules! select {
    ($where:literal) => {
        concat!(
            "SELECT memory_id, scope, owner_user_id, workspace, memory_key, content, summary, \
             created_at_ms, updated_at_ms FROM memories WHERE ",
            $where
        )
    };
}

impl<'s> MemoryRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Saves a memory.
    pub async fn add(&self, tenant: &TenantId, new: &NewMemory) -> Result<Memory> {
        let now = self.store.clock_ms();
        let memory = Memory {
            id: new_id(),
            scope: new.scope,
            owner: new.owner.clone(),
            workspace: new.workspace.clone(),
            key: new.key.clone(),
            content: new.content.clone(),
            summary: new.summary.clone(),
            created_at_ms: now,
            updated_at_ms: now,
        };
        self.store
            .dialect
            .query("INSERT INTO memories (tenant_id, memory_id, scope, owner_user_id, workspace, memory_key, content, summary, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(memory.id.clone())
            .bind(to_word(&memory.scope)?)
            .bind(memory.owner.as_ref().map(|u| u.as_str().to_owned()))
            .bind(memory.workspace.clone())
            .bind(memory.key.clone())
            .bind(memory.content.clone())
            .bind(memory.summary.clone())
            .bind(now)
            .bind(now)
            .execute(&self.store.pool)
            .await?;
        Ok(memory)
    }

    /// Whether `user` lets memories be saved (the default; `/workmate memory off` stops it).
    pub async fn saving_on(&self, tenant: &TenantId, user: &UserId) -> Result<bool> {
        SAVING.is_on(self.store, tenant, user).await
    }

    /// Turns memory saving on or off for `user`.
    pub async fn set_saving(&self, tenant: &TenantId, user: &UserId, on: bool) -> Result<()> {
        SAVING.set(self.store, tenant, user, on).await
    }

    /// One memory, if the tenant has it.
    pub async fn get(&self, tenant: &TenantId, id: &str) -> Result<Option<Memory>> {
        let row = self
            .store
            .dialect
            .query(select!("tenant_id = ? AND memory_id = ?"))
            .bind(tenant.as_str().to_owned())
            .bind(id.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| from_row(&r)).transpose()
    }

    /// The tenant's memories, oldest first.
    pub async fn list(&self, tenant: &TenantId) -> Result<Vec<Memory>> {
        let rows = self
            .store
            .dialect
            .query(select!("tenant_id = ? ORDER BY created_at_ms, memory_id"))
            .bind(tenant.as_str().to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// Replaces a memory's text (and its summary, when given); `false` if there is no such memory.
    pub async fn update(
        &self,
        tenant: &TenantId,
        id: &str,
        content: &str,
        summary: Option<&str>,
    ) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("UPDATE memories SET content = ?, summary = COALESCE(?, summary), updated_at_ms = ? WHERE tenant_id = ? AND memory_id = ?")
            .bind(content.to_owned())
            .bind(summary.map(str::to_owned))
            .bind(self.store.clock_ms())
            .bind(tenant.as_str().to_owned())
            .bind(id.to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Forgets a memory; `false` if there was none.
    pub async fn delete(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("DELETE FROM memories WHERE tenant_id = ? AND memory_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(id.to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}

fn from_row(row: &AnyRow) -> Result<Memory> {
    const T: &str = "memories";
    Ok(Memory {
        id: col(row, T, "memory_id")?,
        scope: enum_col(row, T, "scope")?,
        owner: col::<Option<String>>(row, T, "owner_user_id")?.map(UserId::from),
        workspace: col(row, T, "workspace")?,
        key: col(row, T, "memory_key")?,
        content: col(row, T, "content")?,
        summary: col(row, T, "summary")?,
        created_at_ms: col(row, T, "created_at_ms")?,
        updated_at_ms: col(row, T, "updated_at_ms")?,
    })
}
