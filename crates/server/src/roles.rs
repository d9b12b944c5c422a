//! `workmate role grant|revoke`: an operator changes someone's role from the command line, e.g.
//! to make the first admin of a Slack workspace before anyone there has talked to workmate.
//!
//! Invariants: the change is the store's [`TenantRepo::change_role`](workmate_store::TenantRepo),
//! so it never leaves a tenant without an admin, even racing another role change; every change (and
//! every refusal of the last admin's demotion) leaves an audit record with actor `operator`;
//! nothing is printed here, the one line of outcome is returned.

use serde_json::json;
use workmate_protocol::{TenantId, UserId};
use workmate_store::{NewAuditRecord, NewUser, Role, RoleChange, Store};

use crate::cli::{RoleCommand, RoleWord};
use crate::config::Config;
use crate::error::StartupError;
use crate::{data_dir, database};

/// The actor audit records name for changes made from the command line.
const OPERATOR: &str = "operator";

/// Runs `workmate role …` against the configured database (migrating it first, so this works
/// before the first `serve`) and says what happened.
pub(crate) async fn run(config: &Config, action: &RoleCommand) -> Result<String, StartupError> {
    let args = match action {
        RoleCommand::Grant(args) | RoleCommand::Revoke(args) => args,
    };
    if args.tenant.trim().is_empty() || args.user.trim().is_empty() {
        return Err(StartupError::Usage(
            "--tenant and --user must not be empty".into(),
        ));
    }
    if matches!(action, RoleCommand::Revoke(_)) && args.role == RoleWord::Member {
        return Err(StartupError::Usage(
            "only approver or admin can be revoked (revoking makes the user a member); \
             to make someone a member, use `workmate role grant --role member`"
                .into(),
        ));
    }
    data_dir::prepare(&config.server.data_dir)?;
    let store = database::open(config).await?;
    database::migrate(&store, config).await?;
    let outcome = change(&store, action).await;
    store.close().await;
    outcome
}

async fn change(store: &Store, action: &RoleCommand) -> Result<String, StartupError> {
    let (args, grant) = match action {
        RoleCommand::Grant(args) => (args, true),
        RoleCommand::Revoke(args) => (args, false),
    };
    let (tenant, user) = (
        TenantId::from(args.tenant.trim()),
        UserId::from(args.user.trim()),
    );
    let named = role_of(args.role);
    let tenants = store.tenants();
    let target = if grant {
        named
    } else {
        let current = tenants
            .get_user(&tenant, &user)
            .await
            .map_err(StartupError::Store)?
            .ok_or_else(|| {
                StartupError::Refused(format!("{user} is not a user of tenant {tenant}"))
            })?;
        if current.role != named {
            return Err(StartupError::Refused(format!(
                "{user} is not {} in tenant {tenant}; they are {}",
                article(named),
                article(current.role)
            )));
        }
        Role::Member
    };
    let created = if grant {
        ensure(store, &tenant, &user).await?
    } else {
        false
    };
    let outcome = tenants
        .change_role(&tenant, &user, target)
        .await
        .map_err(StartupError::Store)?;
    match outcome {
        RoleChange::Changed { from } => {
            audit(store, &tenant, &user, "changed", Some(from), target).await?;
            let was = if created {
                "new user".to_owned()
            } else {
                format!("was {}", article(from))
            };
            Ok(format!(
                "{user} in tenant {tenant} is now {} ({was}).\n",
                article(target)
            ))
        }
        RoleChange::Unchanged if created => {
            audit(store, &tenant, &user, "created", None, target).await?;
            Ok(format!(
                "{user} in tenant {tenant} is now {} (new user).\n",
                article(target)
            ))
        }
        RoleChange::Unchanged => Ok(format!(
            "{user} in tenant {tenant} is already {}; nothing changed.\n",
            article(target)
        )),
        RoleChange::LastAdmin => {
            audit(
                store,
                &tenant,
                &user,
                "refused_last_admin",
                Some(Role::Admin),
                target,
            )
            .await?;
            Err(StartupError::Refused(format!(
                "{user} is the last admin of tenant {tenant}, which always keeps one; \
                 grant admin to someone else first"
            )))
        }
    }
}

/// Creates the tenant and the user (a member, named by their id) when missing; `true` when the
/// user is new.
async fn ensure(store: &Store, tenant: &TenantId, user: &UserId) -> Result<bool, StartupError> {
    let tenants = store.tenants();
    tenants
        .ensure(tenant, tenant.as_str())
        .await
        .map_err(StartupError::Store)?;
    let new = NewUser {
        id: user.clone(),
        display_name: user.as_str().to_owned(),
        email: None,
        role: Role::Member,
        sso_subject: None,
    };
    let (_, created) = tenants
        .ensure_user(tenant, &new)
        .await
        .map_err(StartupError::Store)?;
    Ok(created)
}

/// Appends a `role_changed` record; `status` is `changed`, `created` (a new user given the
/// member role) or `refused_last_admin`.
async fn audit(
    store: &Store,
    tenant: &TenantId,
    user: &UserId,
    status: &str,
    from: Option<Role>,
    to: Role,
) -> Result<(), StartupError> {
    let record = NewAuditRecord {
        session_id: None,
        actor: Some(OPERATOR.into()),
        stage: "role_changed".into(),
        tool: None,
        status: Some(status.into()),
        detail: json!({
            "user": user,
            "from": from.map(word),
            "to": word(to),
            "via": "cli",
        }),
    };
    store
        .audit()
        .append(tenant, &record)
        .await
        .map_err(StartupError::Store)?;
    Ok(())
}

fn role_of(word: RoleWord) -> Role {
    match word {
        RoleWord::Admin => Role::Admin,
        RoleWord::Approver => Role::Approver,
        RoleWord::Member => Role::Member,
    }
}

fn word(role: Role) -> &'static str {
    match role {
        Role::Admin => "admin",
        Role::Approver => "approver",
        Role::Member => "member",
    }
}

fn article(role: Role) -> &'static str {
    match role {
        Role::Admin => "an admin",
        Role::Approver => "an approver",
        Role::Member => "a member",
    }
}
