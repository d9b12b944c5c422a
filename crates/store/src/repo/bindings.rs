//! Chat accounts bound to directory subjects: a platform user's tenant user carries the
//! single-sign-on subject it was linked to, the directory groups last seen for it, and when the
//! one-time "link your account" card was shown.
//!
//! Invariants: an account is bound to one subject at most, and a binding is never silently
//! moved to another subject (linking an account bound to someone else is refused); a subject
//! may hold several accounts (one per platform and tenant); a deactivated account cannot be
//! bound; each new binding is audited in the account's tenant (`identity_bound`); the "link your
//! account" card is offered once per account, whichever process sees the account first.

use workmate_protocol::{TenantId, UserId};

use crate::repo::audit::NewAuditRecord;
use crate::repo::tenants::user_from_row;
use crate::row::{col, to_json, to_word};
use crate::{Error, Result, Role, Store, User};

/// The audit stage of a new binding.
pub const BOUND_STAGE: &str = "identity_bound";

/// What the directory says about a person, as of their sign-in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirectoryFacts {
    /// The provider's subject.
    pub subject: String,
    /// Their e-mail address, when the provider gave one.
    pub email: Option<String>,
    /// Their directory groups.
    pub groups: Vec<String>,
    /// The role their groups give them in the account's tenant; `None` keeps the account's role
    /// (no group mapping applies there).
    pub role: Option<Role>,
}

/// Bindings of chat accounts to directory subjects.
#[derive(Debug)]
pub struct BindingRepo<'s> {
    store: &'s Store,
}

impl<'s> BindingRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Binds `user` of `tenant` to `facts.subject` (or brings a binding to the same subject up
    /// to date: e-mail, groups, role), as reached through `via` (`link`, `email`, `sign_in`).
    /// Returns the account and whether this call bound it. Refused when the account is bound
    /// to another subject or was deactivated; [`Error::NotFound`] when there is no such user.
    pub async fn bind(
        &self,
        tenant: &TenantId,
        user: &UserId,
        facts: &DirectoryFacts,
        via: &str,
    ) -> Result<(User, bool)> {
        let store = self.store;
        let d = store.dialect;
        let mut tx = store.begin_write().await?;
        let found = d
            .query(
                "SELECT sso_subject, disabled_at_ms FROM users WHERE tenant_id = ? AND user_id = ?",
            )
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| Error::NotFound {
                what: format!("user {user} of tenant {tenant}"),
            })?;
        let current: Option<String> = col(&found, "users", "sso_subject")?;
        if col::<Option<i64>>(&found, "users", "disabled_at_ms")?.is_some() {
            return Err(Error::Invalid(format!(
                "{user} was deactivated and cannot be linked"
            )));
        }
        if current.as_deref().is_some_and(|s| s != facts.subject) {
            return Err(Error::Invalid(format!(
                "{user} is already linked to another directory account; a tenant admin must \
                 unlink it before it can be linked again"
            )));
        }
        let role = facts.role.as_ref().map(to_word).transpose()?;
        d.query("UPDATE users SET sso_subject = ?, email = COALESCE(?, email), directory_groups_json = ?, user_role = COALESCE(?, user_role) WHERE tenant_id = ? AND user_id = ?")
            .bind(facts.subject.clone())
            .bind(facts.email.clone())
            .bind(to_json(&facts.groups)?)
            .bind(role)
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .execute(&mut *tx)
            .await?;
        let new = current.is_none();
        if new {
            let record = NewAuditRecord {
                actor: Some(user.as_str().to_owned()),
                stage: BOUND_STAGE.into(),
                status: Some("ok".into()),
                detail: serde_json::json!({
                    "user": user, "subject": facts.subject, "via": via, "role": facts.role,
                }),
                ..NewAuditRecord::default()
            };
            store.audit().append_with(&mut *tx, tenant, &record).await?;
        }
        tx.commit().await?;
        store.identities.forget_all();
        let user = store
            .tenants()
            .get_user(tenant, user)
            .await?
            .ok_or_else(|| Error::NotFound {
                what: format!("user {user} right after linking it"),
            })?;
        Ok((user, new))
    }

    /// Every account bound to `subject`, in every tenant.
    pub async fn bound_to(&self, subject: &str) -> Result<Vec<User>> {
        let rows = self
            .store
            .dialect
            .query("SELECT tenant_id, user_id, display_name, email, user_role, sso_subject, created_at_ms, disabled_at_ms, directory_groups_json FROM users WHERE sso_subject = ? ORDER BY tenant_id, user_id")
            .bind(subject.to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(user_from_row).collect()
    }

    /// The one directory subject known for `email` (from an earlier sign-in or link), with one
    /// of its accounts; `None` when no subject or more than one has that address.
    pub async fn subject_with_email(&self, email: &str) -> Result<Option<User>> {
        let rows = self
            .store
            .dialect
            .query("SELECT tenant_id, user_id, display_name, email, user_role, sso_subject, created_at_ms, disabled_at_ms, directory_groups_json FROM users WHERE sso_subject IS NOT NULL AND LOWER(email) = ? ORDER BY tenant_id, user_id")
            .bind(email.trim().to_lowercase())
            .fetch_all(&self.store.pool)
            .await?;
        let users: Vec<User> = rows.iter().map(user_from_row).collect::<Result<_>>()?;
        let first = users.first().and_then(|u| u.sso_subject.clone());
        if users.iter().any(|u| u.sso_subject != first) {
            return Ok(None);
        }
        Ok(users.into_iter().next())
    }

    /// Marks the "link your account" card as shown to `user`; `true` only for the call that
    /// marked it (the card is shown once).
    pub async fn offer_link(&self, tenant: &TenantId, user: &UserId) -> Result<bool> {
        let changed = self
            .store
            .dialect
            .query("UPDATE users SET link_offered_at_ms = ? WHERE tenant_id = ? AND user_id = ? AND link_offered_at_ms IS NULL")
            .bind(self.store.clock_ms())
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .execute(&self.store.pool)
            .await?
            .rows_affected();
        Ok(changed == 1)
    }

    /// Whether the "link your account" card was shown to `user`.
    pub async fn link_offered(&self, tenant: &TenantId, user: &UserId) -> Result<bool> {
        let row = self
            .store
            .dialect
            .query("SELECT link_offered_at_ms FROM users WHERE tenant_id = ? AND user_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        Ok(row
            .map(|r| col::<Option<i64>>(&r, "users", "link_offered_at_ms"))
            .transpose()?
            .flatten()
            .is_some())
    }
}
