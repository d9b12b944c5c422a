//! Changing a user's role without ever leaving a tenant with no admin.
//!
//! Invariant: a tenant that has an admin keeps at least one through [`TenantRepo::change_role`],
//! however many changes race. Each change runs in one transaction that first locks the tenant's
//! row (`FOR UPDATE` on MySQL and Postgres; SQLite's `BEGIN IMMEDIATE` locks the whole database),
//! so role changes within a tenant happen one after another, and the "is another admin left?"
//! check reads what the previous change committed. Reads inside it are locking reads, which on
//! MySQL's repeatable read see the latest committed rows rather than an older snapshot.

use workmate_protocol::{TenantId, UserId};

use super::tenants::{Role, TenantRepo};
use crate::row::{enum_col, to_word};
use crate::{Error, Result};

/// What [`TenantRepo::change_role`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoleChange {
    /// The role was changed; it was `from` before.
    Changed {
        /// The role the user held until now.
        from: Role,
    },
    /// The user already held the role; nothing was written.
    Unchanged,
    /// The user is the tenant's only admin and the change would demote them; nothing was written.
    LastAdmin,
}

impl TenantRepo<'_> {
    /// Sets the user's role in one transaction; refuses (LastAdmin, nothing written) when it would
    /// leave the tenant without an admin. Errors NotFound when the user does not exist.
    pub async fn change_role(
        &self,
        tenant: &TenantId,
        user: &UserId,
        role: Role,
    ) -> Result<RoleChange> {
        let d = self.store.dialect;
        let mut tx = self.store.begin_write().await?;
        // Serializes every role change of this tenant (see the module docs).
        let locked = d
            .locking_query("SELECT tenant_id FROM tenants WHERE tenant_id = ?")
            .bind(tenant.as_str().to_owned())
            .fetch_optional(&mut *tx)
            .await?;
        if locked.is_none() {
            return Err(Error::NotFound {
                what: format!("user {user} (tenant {tenant} does not exist)"),
            });
        }
        let row = d
            .locking_query("SELECT user_role FROM users WHERE tenant_id = ? AND user_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else {
            return Err(Error::NotFound {
                what: format!("user {user}"),
            });
        };
        let from: Role = enum_col(&row, "users", "user_role")?;
        if from == role {
            return Ok(RoleChange::Unchanged);
        }
        if from == Role::Admin {
            let others = d
                .locking_query(
                    "SELECT user_id FROM users WHERE tenant_id = ? AND user_role = ? AND user_id <> ?",
                )
                .bind(tenant.as_str().to_owned())
                .bind(to_word(&Role::Admin)?)
                .bind(user.as_str().to_owned())
                .fetch_all(&mut *tx)
                .await?;
            if others.is_empty() {
                return Ok(RoleChange::LastAdmin);
            }
        }
        d.query("UPDATE users SET user_role = ? WHERE tenant_id = ? AND user_id = ?")
            .bind(to_word(&role)?)
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.store.identities.forget_all();
        Ok(RoleChange::Changed { from })
    }
}
