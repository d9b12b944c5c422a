//! Who a delivery is from: platform installations are tenants, platform users are tenant users.
//!
//! Invariants: an installation's tenant is `<platform>-<installation>` (Slack team `T1` is tenant
//! `slack-T1`) and is created on first sight; a platform user is bound once to a tenant user
//! (`<platform>-<user>` unless bound otherwise before) and keeps that binding; a new user is
//! named as the platform shows them, and is a member unless the operator listed them among the
//! platform's `admins`, which makes them an admin at first sight (only in the installation the
//! operator bound those admins to, when one is named).

use workmate_adapter::{Inbound, InboundUser};
use workmate_protocol::{Actor, TenantId, UserId};
use workmate_store::{NewUser, Role, User};

use crate::error::{ChatError, Result};
use crate::handle::{Chat, Slot};
use crate::tenants::tenant_of;

/// A person acting through a platform, resolved to a tenant user.
#[derive(Clone, Debug)]
pub(crate) struct Person {
    pub(crate) tenant: TenantId,
    pub(crate) user: User,
    /// Their id on the platform.
    pub(crate) platform_id: String,
}

/// How people are named in what workmate says: their display name, or their id when they
/// have none.
pub(crate) fn shown_name(user: &User) -> &str {
    Some(user.display_name.as_str())
        .filter(|name| !name.trim().is_empty())
        .unwrap_or(user.id.as_str())
}

impl Person {
    pub(crate) fn actor(&self) -> Actor {
        let mut actor = Actor::new(self.user.id.clone());
        actor.name = Some(self.user.display_name.clone());
        actor
    }

    pub(crate) fn role(&self) -> Role {
        self.user.role
    }
}

impl Chat {
    /// The tenant and user behind a delivery, created on first sight.
    pub(crate) async fn person(&self, slot: &Slot, inbound: &Inbound) -> Result<Person> {
        let tenant = tenant_of(inbound.surface, &inbound.tenant_key);
        let label = slot.platform.describe().label;
        if !self.inner.tenants.contains(&tenant) {
            self.store()
                .tenants()
                .ensure(&tenant, &format!("{label} {}", inbound.tenant_key))
                .await?;
            self.inner.tenants.insert(tenant.clone());
        }
        let user = self.user(slot, &tenant, &inbound.user).await?;
        if user.is_disabled() {
            return Err(ChatError::Deactivated(user.id));
        }
        Ok(Person {
            tenant,
            user,
            platform_id: inbound.user.id.clone(),
        })
    }

    /// The tenant user of a platform user: bound before, or `<platform>-<id>`, created now.
    /// A known sender costs no read once cached (see `TenantRepo::user_by_platform_identity`).
    pub(crate) async fn user(
        &self,
        slot: &Slot,
        tenant: &TenantId,
        who: &InboundUser,
    ) -> Result<User> {
        let tenants = self.store().tenants();
        let platform = slot.platform.surface().as_str();
        if let Some(user) = tenants
            .user_by_platform_identity(tenant, platform, &who.id)
            .await?
        {
            return Ok(user);
        }
        let id = UserId::from(format!("{platform}-{}", who.id));
        if tenants.get_user(tenant, &id).await?.is_none() {
            let name = match &who.name {
                Some(name) => Some(name.clone()),
                None => slot.platform.profile(&who.id).await.name,
            };
            let admin_here = slot.admins_in.as_ref().is_none_or(|installation| {
                *tenant == tenant_of(slot.platform.surface(), installation)
            });
            let role = if admin_here && slot.admins.contains(&who.id) {
                tracing::info!(tenant = %tenant, user = %id, "A configured admin was seen for the first time.");
                Role::Admin
            } else {
                Role::Member
            };
            let new = NewUser {
                id: id.clone(),
                display_name: name.unwrap_or_else(|| who.id.clone()),
                email: None,
                role,
                sso_subject: None,
            };
            tenants.upsert_user(tenant, &new).await?;
        }
        // The first binding is kept: a racing delivery of the same person may have made it.
        let id = tenants
            .bind_platform_identity(tenant, platform, &who.id, &id)
            .await?;
        tenants
            .get_user(tenant, &id)
            .await?
            .ok_or_else(|| workmate_store::Error::NotFound {
                what: format!("user {id} right after binding them"),
            })
            .map_err(Into::into)
    }
}
