//! Tenants, their users, and platform identities bound to those users.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{TenantId, UserId};

use crate::row::{col, enum_col, json_col, opt_json_col, to_json, to_word};
use crate::{Result, Store};

/// Read-and-write rounds a settings update makes before giving up on a busy tenant.
const SETTINGS_ATTEMPTS: usize = 20;

/// A tenant: one company, or one isolated part of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tenant {
    /// Its id.
    pub id: TenantId,
    /// A name people recognise.
    pub name: String,
    /// Tenant-wide settings (e.g. `separation_of_duties`), as a JSON object.
    pub settings: serde_json::Value,
    /// When it was created.
    pub created_at_ms: i64,
}

/// What a user may do in a tenant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Talks to workmate; approves in their own sessions.
    Member,
    /// May also resolve other people's approvals.
    Approver,
    /// May also change tenant settings.
    Admin,
}

/// A person in a tenant.
#[derive(Clone, Debug, PartialEq)]
pub struct User {
    /// Tenant the user belongs to.
    pub tenant_id: TenantId,
    /// Their id.
    pub id: UserId,
    /// Name shown on cards.
    pub display_name: String,
    /// Email address, when known.
    pub email: Option<String>,
    /// Their role.
    pub role: Role,
    /// The single-sign-on subject they are bound to, when bound.
    pub sso_subject: Option<String>,
    /// When they were first seen.
    pub created_at_ms: i64,
    /// When they were deactivated (offboarded), if they were: every surface refuses them.
    pub disabled_at_ms: Option<i64>,
    /// The directory groups they had when they last signed in or linked their account (none
    /// for a user never bound to the directory).
    pub directory_groups: Vec<String>,
}

impl User {
    /// Whether they were deactivated.
    pub fn is_disabled(&self) -> bool {
        self.disabled_at_ms.is_some()
    }
}

/// A user to create or update.
#[derive(Clone, Debug)]
pub struct NewUser {
    /// Their id.
    pub id: UserId,
    /// Name shown on cards.
    pub display_name: String,
    /// Email address, when known.
    pub email: Option<String>,
    /// Their role.
    pub role: Role,
    /// The single-sign-on subject they are bound to, when bound.
    pub sso_subject: Option<String>,
}

/// Tenants, users and platform identities.
#[derive(Debug)]
pub struct TenantRepo<'s> {
    pub(super) store: &'s Store,
}

impl<'s> TenantRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The tenant's settings object; an empty one for a tenant without a row.
    pub async fn settings(&self, tenant: &TenantId) -> Result<serde_json::Value> {
        Ok(self
            .get(tenant)
            .await?
            .map_or_else(|| serde_json::json!({}), |t| t.settings))
    }

    /// Creates the tenant if it does not exist; returns it either way.
    pub async fn ensure(&self, tenant: &TenantId, name: &str) -> Result<Tenant> {
        let d = self.store.dialect;
        d.insert_ignoring_duplicates(
            "INSERT INTO tenants (tenant_id, name, settings_json, created_at_ms) VALUES (?, ?, ?, ?)",
            "tenant_id",
        )
        .bind(tenant.as_str().to_owned())
        .bind(name.to_owned())
        .bind("{}")
        .bind(self.store.clock_ms())
        .execute(&self.store.pool)
        .await?;
        self.store.tenants.forget(tenant);
        self.get(tenant)
            .await?
            .ok_or_else(|| crate::Error::NotFound {
                what: format!("tenant {tenant} right after creating it"),
            })
    }

    /// The tenant, if it exists.
    pub async fn get(&self, tenant: &TenantId) -> Result<Option<Tenant>> {
        let cache = &self.store.tenants;
        if let Some(cached) = cache.get(tenant) {
            return Ok(cached);
        }
        let mark = cache.mark();
        let row = self
            .store
            .dialect
            .query("SELECT tenant_id, name, settings_json, created_at_ms FROM tenants WHERE tenant_id = ?")
            .bind(tenant.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        let found = row.map(|r| tenant_from_row(&r)).transpose()?;
        cache.put(tenant, found.clone(), mark);
        Ok(found)
    }

    /// Replaces the tenant's settings object.
    pub async fn set_settings(
        &self,
        tenant: &TenantId,
        settings: &serde_json::Value,
    ) -> Result<()> {
        let done = self
            .store
            .dialect
            .query("UPDATE tenants SET settings_json = ? WHERE tenant_id = ?")
            .bind(to_json(settings)?)
            .bind(tenant.as_str().to_owned())
            .execute(&self.store.pool)
            .await?;
        self.store.tenants.forget(tenant);
        if done.rows_affected() == 0 {
            return Err(crate::Error::NotFound {
                what: format!("tenant {tenant}"),
            });
        }
        Ok(())
    }

    /// Changes the tenant's settings with `change`, applied to what is stored at that moment: the
    /// write is conditional on the stored text being the one read, so a concurrent change makes
    /// it read and apply again instead of being overwritten. `change` may refuse (its error is
    /// returned inside `Ok`, and nothing is written).
    pub async fn update_settings<E>(
        &self,
        tenant: &TenantId,
        change: impl Fn(&serde_json::Value) -> std::result::Result<serde_json::Value, E>,
    ) -> Result<std::result::Result<serde_json::Value, E>> {
        for _ in 0..SETTINGS_ATTEMPTS {
            let row = self
                .store
                .dialect
                .query("SELECT settings_json FROM tenants WHERE tenant_id = ?")
                .bind(tenant.as_str().to_owned())
                .fetch_optional(&self.store.pool)
                .await?;
            let Some(row) = row else {
                return Err(crate::Error::NotFound {
                    what: format!("tenant {tenant}"),
                });
            };
            let stored: String = col(&row, "tenants", "settings_json")?;
            let current = serde_json::from_str(&stored).unwrap_or_else(|_| serde_json::json!({}));
            let next = match change(&current) {
                Ok(next) => next,
                Err(refused) => return Ok(Err(refused)),
            };
            let text = to_json(&next)?;
            if text == stored {
                return Ok(Ok(next));
            }
            let done = self
                .store
                .dialect
                .query("UPDATE tenants SET settings_json = ? WHERE tenant_id = ? AND settings_json = ?")
                .bind(text)
                .bind(tenant.as_str().to_owned())
                .bind(stored)
                .execute(&self.store.pool)
                .await?;
            self.store.tenants.forget(tenant);
            if done.rows_affected() == 1 {
                return Ok(Ok(next));
            }
        }
        Err(crate::Error::Invalid(format!(
            "the settings of tenant {tenant} kept changing while being updated; try again"
        )))
    }

    /// Creates the user, or updates their name, email, role and SSO subject.
    pub async fn upsert_user(&self, tenant: &TenantId, user: &NewUser) -> Result<User> {
        let mut tx = self.store.pool.begin().await?;
        let d = self.store.dialect;
        d.insert_ignoring_duplicates(
            "INSERT INTO users (tenant_id, user_id, display_name, email, user_role, sso_subject, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
            "user_id",
        )
        .bind(tenant.as_str().to_owned())
        .bind(user.id.as_str().to_owned())
        .bind(user.display_name.clone())
        .bind(user.email.clone())
        .bind(to_word(&user.role)?)
        .bind(user.sso_subject.clone())
        .bind(self.store.clock_ms())
        .execute(&mut *tx)
        .await?;
        d.query("UPDATE users SET display_name = ?, email = ?, user_role = ?, sso_subject = ? WHERE tenant_id = ? AND user_id = ?")
            .bind(user.display_name.clone())
            .bind(user.email.clone())
            .bind(to_word(&user.role)?)
            .bind(user.sso_subject.clone())
            .bind(tenant.as_str().to_owned())
            .bind(user.id.as_str().to_owned())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.store.identities.forget_all();
        self.get_user(tenant, &user.id)
            .await?
            .ok_or_else(|| crate::Error::NotFound {
                what: format!("user {} right after writing it", user.id),
            })
    }

    /// Creates the user unless the tenant already has someone with that id; returns the stored
    /// user (an existing one unchanged) and whether this call created them.
    pub async fn ensure_user(&self, tenant: &TenantId, user: &NewUser) -> Result<(User, bool)> {
        // A plain insert: the primary key decides, and its violation means "already there".
        let inserted = self
            .store
            .dialect
            .query("INSERT INTO users (tenant_id, user_id, display_name, email, user_role, sso_subject, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(user.id.as_str().to_owned())
            .bind(user.display_name.clone())
            .bind(user.email.clone())
            .bind(to_word(&user.role)?)
            .bind(user.sso_subject.clone())
            .bind(self.store.clock_ms())
            .execute(&self.store.pool)
            .await;
        let created = match inserted {
            Ok(_) => {
                self.store.identities.forget_all();
                true
            }
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => false,
            Err(e) => return Err(e.into()),
        };
        let stored =
            self.get_user(tenant, &user.id)
                .await?
                .ok_or_else(|| crate::Error::NotFound {
                    what: format!("user {} right after creating it", user.id),
                })?;
        Ok((stored, created))
    }

    /// The user, if the tenant has them.
    pub async fn get_user(&self, tenant: &TenantId, user: &UserId) -> Result<Option<User>> {
        let row = self
            .store
            .dialect
            .query("SELECT tenant_id, user_id, display_name, email, user_role, sso_subject, created_at_ms, disabled_at_ms, directory_groups_json FROM users WHERE tenant_id = ? AND user_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| user_from_row(&r)).transpose()
    }

    /// The tenant's users holding `role`, by id.
    pub async fn users_with_role(&self, tenant: &TenantId, role: Role) -> Result<Vec<User>> {
        let rows = self
            .store
            .dialect
            .query("SELECT tenant_id, user_id, display_name, email, user_role, sso_subject, created_at_ms, disabled_at_ms, directory_groups_json FROM users WHERE tenant_id = ? AND user_role = ? ORDER BY user_id")
            .bind(tenant.as_str().to_owned())
            .bind(to_word(&role)?)
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(user_from_row).collect()
    }

    /// Binds a platform account (a Slack user id, a Feishu open_id, …) to a tenant user.
    /// Binding an account that is already bound keeps the first binding; returns the bound user.
    pub async fn bind_platform_identity(
        &self,
        tenant: &TenantId,
        platform: &str,
        platform_user_id: &str,
        user: &UserId,
    ) -> Result<UserId> {
        self.store
            .dialect
            .insert_ignoring_duplicates(
                "INSERT INTO platform_identities (tenant_id, platform, platform_user_id, user_id, created_at_ms) VALUES (?, ?, ?, ?, ?)",
                "user_id",
            )
            .bind(tenant.as_str().to_owned())
            .bind(platform.to_owned())
            .bind(platform_user_id.to_owned())
            .bind(user.as_str().to_owned())
            .bind(self.store.clock_ms())
            .execute(&self.store.pool)
            .await?;
        self.user_for_platform_identity(tenant, platform, platform_user_id)
            .await?
            .ok_or_else(|| crate::Error::NotFound {
                what: format!("{platform} identity {platform_user_id}"),
            })
    }

    /// The user a platform account is bound to, if it is bound to one the tenant has: one read
    /// at most, served from a cache (see `identity_cache`) that follows this process's user
    /// writes at once and other processes' within seconds.
    pub async fn user_by_platform_identity(
        &self,
        tenant: &TenantId,
        platform: &str,
        platform_user_id: &str,
    ) -> Result<Option<User>> {
        let cache = &self.store.identities;
        if let Some(user) = cache.get(tenant, platform, platform_user_id) {
            return Ok(Some(user));
        }
        let mark = cache.mark();
        let row = self
            .store
            .dialect
            .query("SELECT u.tenant_id, u.user_id, u.display_name, u.email, u.user_role, u.sso_subject, u.created_at_ms, u.disabled_at_ms, u.directory_groups_json FROM platform_identities p JOIN users u ON u.tenant_id = p.tenant_id AND u.user_id = p.user_id WHERE p.tenant_id = ? AND p.platform = ? AND p.platform_user_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(platform.to_owned())
            .bind(platform_user_id.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        let Some(user) = row.map(|r| user_from_row(&r)).transpose()? else {
            return Ok(None);
        };
        cache.put(tenant, platform, platform_user_id, user.clone(), mark);
        Ok(Some(user))
    }

    /// The tenant user a platform account is bound to.
    pub async fn user_for_platform_identity(
        &self,
        tenant: &TenantId,
        platform: &str,
        platform_user_id: &str,
    ) -> Result<Option<UserId>> {
        let row = self
            .store
            .dialect
            .query("SELECT user_id FROM platform_identities WHERE tenant_id = ? AND platform = ? AND platform_user_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(platform.to_owned())
            .bind(platform_user_id.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| col::<String>(&r, "platform_identities", "user_id").map(UserId::from))
            .transpose()
    }
}

fn tenant_from_row(row: &AnyRow) -> Result<Tenant> {
    const T: &str = "tenants";
    Ok(Tenant {
        id: TenantId::from(col::<String>(row, T, "tenant_id")?),
        name: col(row, T, "name")?,
        settings: json_col(row, T, "settings_json")?,
        created_at_ms: col(row, T, "created_at_ms")?,
    })
}

pub(crate) fn user_from_row(row: &AnyRow) -> Result<User> {
    const T: &str = "users";
    Ok(User {
        tenant_id: TenantId::from(col::<String>(row, T, "tenant_id")?),
        id: UserId::from(col::<String>(row, T, "user_id")?),
        display_name: col(row, T, "display_name")?,
        email: col(row, T, "email")?,
        role: enum_col(row, T, "user_role")?,
        sso_subject: col(row, T, "sso_subject")?,
        created_at_ms: col(row, T, "created_at_ms")?,
        disabled_at_ms: col(row, T, "disabled_at_ms")?,
        directory_groups: opt_json_col(row, T, "directory_groups_json")?.unwrap_or_default(),
    })
}
