//! The MCP servers a tenant's admins registered, by name. The store keeps each definition as
//! JSON it does not interpret: the MCP client parses and checks it.

use sqlx::any::AnyRow;
use workmate_protocol::TenantId;

use crate::row::col;
use crate::{Dialect, NewAuditRecord, Result, Store};

/// A registered server.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerRecord {
    /// Its name, unique in the tenant.
    pub name: String,
    /// Its definition.
    pub definition: serde_json::Value,
    /// Who last changed it.
    pub updated_by: String,
    /// When.
    pub updated_at_ms: i64,
}

/// Registered MCP servers.
#[derive(Debug)]
pub struct McpServerRepo<'s> {
    store: &'s Store,
}

macro_rules! put_sql {
    () => {
        "INSERT INTO mcp_servers (tenant_id, name, definition, updated_by, updated_at_ms) VALUES (?, ?, ?, ?, ?)"
    };
}

impl<'s> McpServerRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Registers `name` with `definition`, replacing an earlier one, and stores `audit` in the
    /// same transaction; `true` when it is new.
    pub async fn put(
        &self,
        tenant: &TenantId,
        name: &str,
        definition: &serde_json::Value,
        by: &str,
        audit: &NewAuditRecord,
    ) -> Result<bool> {
        let sql = match self.store.dialect {
            Dialect::Sqlite | Dialect::Postgres => concat!(
                put_sql!(),
                " ON CONFLICT (tenant_id, name) DO UPDATE SET definition = excluded.definition, updated_by = excluded.updated_by, updated_at_ms = excluded.updated_at_ms"
            ),
            Dialect::Mysql => concat!(
                put_sql!(),
                " ON DUPLICATE KEY UPDATE definition = VALUES(definition), updated_by = VALUES(updated_by), updated_at_ms = VALUES(updated_at_ms)"
            ),
        };
        let mut tx = self.store.begin_write().await?;
        let existed = self
            .store
            .dialect
            .query("SELECT name FROM mcp_servers WHERE tenant_id = ? AND name = ?")
            .bind(tenant.as_str().to_owned())
            .bind(name.to_owned())
            .fetch_optional(&mut *tx)
            .await?
            .is_some();
        self.store
            .dialect
            .query(sql)
            .bind(tenant.as_str().to_owned())
            .bind(name.to_owned())
            .bind(definition.to_string())
            .bind(by.to_owned())
            .bind(self.store.clock_ms())
            .execute(&mut *tx)
            .await?;
        self.store
            .audit()
            .append_with(&mut *tx, tenant, audit)
            .await?;
        tx.commit().await?;
        Ok(!existed)
    }

    /// Removes `name`, storing `audit` in the same transaction when it was registered; `true`
    /// when it was.
    pub async fn remove(
        &self,
        tenant: &TenantId,
        name: &str,
        audit: &NewAuditRecord,
    ) -> Result<bool> {
        let mut tx = self.store.begin_write().await?;
        let done = self
            .store
            .dialect
            .query("DELETE FROM mcp_servers WHERE tenant_id = ? AND name = ?")
            .bind(tenant.as_str().to_owned())
            .bind(name.to_owned())
            .execute(&mut *tx)
            .await?;
        let removed = done.rows_affected() > 0;
        if removed {
            self.store
                .audit()
                .append_with(&mut *tx, tenant, audit)
                .await?;
        }
        tx.commit().await?;
        Ok(removed)
    }

    /// The tenant's servers, by name.
    pub async fn list(&self, tenant: &TenantId) -> Result<Vec<McpServerRecord>> {
        let rows = self
            .store
            .dialect
            .query("SELECT name, definition, updated_by, updated_at_ms FROM mcp_servers WHERE tenant_id = ? ORDER BY name")
            .bind(tenant.as_str().to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }
}

fn from_row(row: &AnyRow) -> Result<McpServerRecord> {
    const T: &str = "mcp_servers";
    Ok(McpServerRecord {
        name: col(row, T, "name")?,
        definition: crate::row::json_col(row, T, "definition")?,
        updated_by: col(row, T, "updated_by")?,
        updated_at_ms: col(row, T, "updated_at_ms")?,
    })
}
