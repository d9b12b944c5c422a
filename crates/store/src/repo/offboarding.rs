//! Offboarding: deactivating a user and revoking everything they hold, in one transaction.
//!
//! Invariants: either every effect is written, with its audit record, or none is; deactivating
//! again changes nothing more than the first time did (and is audited again, so the attempt
//! shows); the user's row, sessions, messages and audit trail are kept, since history still
//! names them. The effects:
//! - the user is marked deactivated (`disabled_at_ms`), so every surface refuses them;
//! - their automations are paused, and the standing rules granted to them (and any still
//!   waiting for a grant) are removed;
//! - the grants ("always allow …") of their sessions are removed, and their sessions' pending
//!   wakes are given up (a wake acts as the session's owner);
//! - every pending prompt of their sessions, or that they asked for, is resolved as dismissed
//!   ("owner offboarded"), which a waiting turn reads as a denial;
//! - the credentials they own in the vault (`secrets`) are deleted;
//! - every other account bound to the same directory subject (their chat accounts in other
//!   tenants) goes the same way, each audited in its own tenant.

use serde_json::Value;
use workmate_protocol::{InboxItemId, Resolution, SessionId, Surface, TenantId, UserId};

use crate::repo::audit::NewAuditRecord;
use crate::row::{col, to_json, to_word};
use crate::{Error, Result, Store};

/// Why prompts of an offboarded user are closed.
pub const OFFBOARDED: &str = "owner offboarded";
/// The audit stage of a deprovisioning.
pub const AUDIT_STAGE: &str = "user_deprovisioned";

/// What deprovisioning a user did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Offboarded {
    /// Whether the user was already deactivated before.
    pub already: bool,
    /// Automations paused.
    pub automations_paused: u64,
    /// Standing rules (granted or requested) removed from their automations.
    pub rules_revoked: u64,
    /// Sessions whose grants were removed.
    pub sessions_cleared: u64,
    /// Pending wakes of their sessions given up.
    pub wakes_cancelled: u64,
    /// Prompts dismissed, with their tenants and sessions.
    pub items_dismissed: Vec<(TenantId, SessionId, InboxItemId)>,
    /// Credentials deleted from the vault.
    pub credentials_revoked: u64,
    /// The other chat accounts bound to the same directory subject, deactivated with them.
    pub bound_accounts: Vec<(TenantId, UserId)>,
}

/// Offboarding.
#[derive(Debug)]
pub struct OffboardingRepo<'s> {
    store: &'s Store,
}

impl<'s> OffboardingRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Deactivates `user` of `tenant` and revokes what they hold (see the module docs), as
    /// `by`; [`Error::NotFound`] when the tenant has no such user. A user bound to a directory
    /// subject takes every chat account bound to the same subject with them, whichever tenant
    /// it is in: leaving the company ends all of them at once.
    pub async fn deprovision(
        &self,
        tenant: &TenantId,
        user: &UserId,
        by: &UserId,
    ) -> Result<Offboarded> {
        let store = self.store;
        let d = store.dialect;
        let mut tx = store.begin_write().await?;
        let found = d
            .query(
                "SELECT disabled_at_ms, sso_subject FROM users WHERE tenant_id = ? AND user_id = ?",
            )
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .fetch_optional(&mut *tx)
            .await?;
        let Some(found) = found else {
            return Err(Error::NotFound {
                what: format!("user {user} of tenant {tenant}"),
            });
        };
        let mut done = Offboarded {
            already: col::<Option<i64>>(&found, "users", "disabled_at_ms")?.is_some(),
            ..Offboarded::default()
        };
        let subject: Option<String> = col(&found, "users", "sso_subject")?;
        let mut accounts = vec![(tenant.clone(), user.clone())];
        if let Some(subject) = &subject {
            let bound = d
                .query("SELECT tenant_id, user_id FROM users WHERE sso_subject = ? ORDER BY tenant_id, user_id")
                .bind(subject.clone())
                .fetch_all(&mut *tx)
                .await?;
            for row in &bound {
                let account = (
                    TenantId::from(col::<String>(row, "users", "tenant_id")?),
                    UserId::from(col::<String>(row, "users", "user_id")?),
                );
                if account != accounts[0] {
                    done.bound_accounts.push(account.clone());
                    accounts.push(account);
                }
            }
        }
        for (account_tenant, account) in &accounts {
            let mut detail = revoke(&mut tx, store, account_tenant, account, by, &mut done).await?;
            if account_tenant != tenant || account != user {
                detail["bound_to"] = serde_json::json!({
                    "tenant": tenant, "user": user, "subject": subject,
                });
            }
            let record = NewAuditRecord {
                session_id: None,
                actor: Some(by.as_str().to_owned()),
                stage: AUDIT_STAGE.into(),
                tool: None,
                status: Some("ok".into()),
                detail,
            };
            store
                .audit()
                .append_with(&mut *tx, account_tenant, &record)
                .await?;
        }
        tx.commit().await?;
        store.identities.forget_all();
        Ok(done)
    }

    /// Lets a deactivated user in again (their revoked grants, rules and credentials stay
    /// revoked, and their automations stay paused); `false` when they were not deactivated.
    pub async fn reactivate(&self, tenant: &TenantId, user: &UserId, by: &UserId) -> Result<bool> {
        let store = self.store;
        let mut tx = store.begin_write().await?;
        let changed = store
            .dialect
            .query("UPDATE users SET disabled_at_ms = NULL WHERE tenant_id = ? AND user_id = ? AND disabled_at_ms IS NOT NULL")
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .execute(&mut *tx)
            .await?
            .rows_affected()
            == 1;
        if changed {
            let record = NewAuditRecord {
                actor: Some(by.as_str().to_owned()),
                stage: "user_reactivated".into(),
                status: Some("ok".into()),
                detail: serde_json::json!({ "user": user }),
                ..NewAuditRecord::default()
            };
            store.audit().append_with(&mut *tx, tenant, &record).await?;
        }
        tx.commit().await?;
        store.identities.forget_all();
        Ok(changed)
    }
}

/// Deactivates one account and revokes what it holds, inside `tx`; adds the counts to `done`
/// and returns them for the account's audit record.
async fn revoke(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    store: &Store,
    tenant: &TenantId,
    user: &UserId,
    by: &UserId,
    done: &mut Offboarded,
) -> Result<Value> {
    let d = store.dialect;
    let now = store.clock_ms();
    let t = tenant.as_str().to_owned();
    let u = user.as_str().to_owned();
    let deactivated = d
        .query("UPDATE users SET disabled_at_ms = ? WHERE tenant_id = ? AND user_id = ? AND disabled_at_ms IS NULL")
        .bind(now)
        .bind(t.clone())
        .bind(u.clone())
        .execute(&mut **tx)
        .await?
        .rows_affected();

    let automations = d
        .query("SELECT automation_id, enabled, settings_json FROM automations WHERE tenant_id = ? AND owner_user_id = ?")
        .bind(t.clone())
        .bind(u.clone())
        .fetch_all(&mut **tx)
        .await?;
    let (mut paused, mut rules) = (0, 0);
    for row in &automations {
        let id: String = col(row, "automations", "automation_id")?;
        let enabled: i64 = col(row, "automations", "enabled")?;
        let text: String = col(row, "automations", "settings_json")?;
        let mut settings: Value = serde_json::from_str(&text).unwrap_or_default();
        let revoked = take_rules(&mut settings);
        d.query("UPDATE automations SET enabled = 0, settings_json = ?, updated_at_ms = ? WHERE tenant_id = ? AND automation_id = ?")
            .bind(to_json(&settings)?)
            .bind(now)
            .bind(t.clone())
            .bind(id)
            .execute(&mut **tx)
            .await?;
        paused += u64::from(enabled != 0);
        rules += revoked;
    }

    let sessions = d
        .query("UPDATE sessions SET grants_json = NULL WHERE tenant_id = ? AND owner_user_id = ? AND grants_json IS NOT NULL")
        .bind(t.clone())
        .bind(u.clone())
        .execute(&mut **tx)
        .await?
        .rows_affected();

    let wakes = d
        .query("UPDATE wakes SET state = 'fired', fired_at_ms = ? WHERE tenant_id = ? AND state IN ('pending', 'due') AND session_id IN (SELECT session_id FROM sessions WHERE tenant_id = ? AND owner_user_id = ?)")
        .bind(now)
        .bind(t.clone())
        .bind(t.clone())
        .bind(u.clone())
        .execute(&mut **tx)
        .await?
        .rows_affected();

    let pending = d
        .query("SELECT item_id, session_id FROM inbox_items WHERE tenant_id = ? AND state = 'pending' AND (requested_by = ? OR session_id IN (SELECT session_id FROM sessions WHERE tenant_id = ? AND owner_user_id = ?))")
        .bind(t.clone())
        .bind(u.clone())
        .bind(t.clone())
        .bind(u.clone())
        .fetch_all(&mut **tx)
        .await?;
    let dismissed = Resolution::Dismissed {
        reason: OFFBOARDED.to_owned(),
    };
    for row in &pending {
        let item: String = col(row, "inbox_items", "item_id")?;
        let session: String = col(row, "inbox_items", "session_id")?;
        d.query("UPDATE inbox_items SET state = 'resolved', resolution_json = ?, resolved_by = ?, resolved_via = ?, resolved_at_ms = ? WHERE tenant_id = ? AND item_id = ? AND state = 'pending'")
            .bind(to_json(&dismissed)?)
            .bind(by.as_str().to_owned())
            .bind(to_word(&Surface::System)?)
            .bind(now)
            .bind(t.clone())
            .bind(item.clone())
            .execute(&mut **tx)
            .await?;
        done.items_dismissed.push((
            tenant.clone(),
            SessionId::from(session),
            InboxItemId::from(item),
        ));
    }

    let credentials = d
        .query("DELETE FROM secrets WHERE tenant_id = ? AND owner_id = ?")
        .bind(t.clone())
        .bind(u.clone())
        .execute(&mut **tx)
        .await?
        .rows_affected();

    done.automations_paused += paused;
    done.rules_revoked += rules;
    done.sessions_cleared += sessions;
    done.wakes_cancelled += wakes;
    done.credentials_revoked += credentials;
    Ok(serde_json::json!({
        "user": user,
        "already_deactivated": deactivated == 0,
        "automations_paused": paused,
        "rules_revoked": rules,
        "sessions_cleared": sessions,
        "wakes_cancelled": wakes,
        "items_dismissed": pending.len(),
        "credentials_revoked": credentials,
    }))
}

/// Removes an automation's standing rules (granted and requested) from its settings; how many.
fn take_rules(settings: &mut Value) -> u64 {
    let Some(object) = settings.as_object_mut() else {
        return 0;
    };
    let mut revoked = 0;
    for key in ["standing_rules", "requested_rules"] {
        if let Some(Value::Array(rules)) = object.get_mut(key) {
            revoked += rules.len() as u64;
            rules.clear();
        }
    }
    revoked
}
