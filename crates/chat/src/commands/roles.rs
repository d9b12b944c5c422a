//! `/workmate role grant|revoke`: admins give and take roles from a chat.
//!
//! Invariants: only admins change roles; the last-admin rule is checked inside the same
//! transaction that writes the role (the store's `change_role`), so two concurrent revokes can
//! never leave a tenant without an admin.

use workmate_adapter::InboundUser;
use workmate_store::{Role, RoleChange, User};

use super::{Caller, Outcome, role_name};
use crate::identity::shown_name;
use crate::{Chat, ChatError, Result};

impl Chat {
    pub(super) async fn grant(&self, caller: &Caller, target: &str, role: Role) -> Result<Outcome> {
        if !caller.is_admin() {
            return Ok(Outcome::refused(format!(
                "Only admins may grant roles; you are {}.",
                role_name(caller.person.role())
            )));
        }
        let user = self.named_user(caller, target).await?;
        Ok(
            match self
                .store()
                .tenants()
                .change_role(&caller.person.tenant, &user.id, role)
                .await?
            {
                RoleChange::Unchanged => Outcome::ok(format!(
                    "{} is already {}.",
                    shown_name(&user),
                    role_name(role)
                )),
                RoleChange::LastAdmin => Outcome::refused(format!(
                    "{} is the last admin; grant admin to someone else first.",
                    shown_name(&user)
                )),
                RoleChange::Changed { .. } => {
                    Outcome::ok(format!("{} is now {}.", shown_name(&user), role_name(role)))
                }
            },
        )
    }

    pub(super) async fn revoke(
        &self,
        caller: &Caller,
        target: &str,
        role: Role,
    ) -> Result<Outcome> {
        if !caller.is_admin() {
            return Ok(Outcome::refused(format!(
                "Only admins may revoke roles; you are {}.",
                role_name(caller.person.role())
            )));
        }
        let user = self.named_user(caller, target).await?;
        if user.role != role {
            return Ok(Outcome::refused(format!(
                "{} is not {} (they are {}).",
                shown_name(&user),
                role_name(role),
                role_name(user.role)
            )));
        }
        Ok(
            match self
                .store()
                .tenants()
                .change_role(&caller.person.tenant, &user.id, Role::Member)
                .await?
            {
                RoleChange::LastAdmin => Outcome::refused(format!(
                    "{} is the last admin; a tenant always keeps one.",
                    shown_name(&user)
                )),
                RoleChange::Unchanged | RoleChange::Changed { .. } => {
                    Outcome::ok(format!("{} is now a member.", shown_name(&user)))
                }
            },
        )
    }

    /// The tenant user a command names by their platform id (made a member if new).
    async fn named_user(&self, caller: &Caller, platform_user: &str) -> Result<User> {
        let slot = self.slot(caller.surface)?;
        let who = InboundUser {
            id: platform_user.to_owned(),
            name: None,
        };
        self.user(&slot, &caller.person.tenant, &who)
            .await
            .map_err(|e| match e {
                ChatError::Store(e) => ChatError::Store(e),
                other => other,
            })
    }
}
