//! Who may see a session, and the inbox items parked in it: one rule for every surface (the
//! HTTP API, chat commands), so a surface cannot show more than another.
//!
//! Invariant: a member sees only the sessions they own and the inbox items of those sessions;
//! approvers and admins see every session (and item) of their tenant. The rule never crosses
//! tenants: callers apply it to rows already read within the viewer's tenant, which every
//! repository query guarantees.

use workmate_protocol::UserId;

use crate::repo::tenants::{Role, User};

/// Which sessions of the tenant a viewer sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sight {
    /// Every session of the tenant (approvers and admins).
    Tenant,
    /// Only the sessions this user owns (members).
    OwnSessions(UserId),
}

impl Sight {
    /// What `viewer` sees, by their role.
    pub fn of(viewer: &User) -> Self {
        match viewer.role {
            Role::Member => Self::OwnSessions(viewer.id.clone()),
            Role::Approver | Role::Admin => Self::Tenant,
        }
    }

    /// Whether a session owned by `session_owner` (and its inbox items) is visible.
    pub fn allows(&self, session_owner: &UserId) -> bool {
        match self {
            Self::Tenant => true,
            Self::OwnSessions(me) => me == session_owner,
        }
    }

    /// The owner to filter listings by (`SessionRepo::list_visible`, `InboxFilter::owner`);
    /// `None` when everything is visible.
    pub fn owner(&self) -> Option<&UserId> {
        match self {
            Self::Tenant => None,
            Self::OwnSessions(me) => Some(me),
        }
    }
}

/// Whether `viewer` may see a session owned by `session_owner`, and the inbox items parked in it.
pub fn can_see(viewer: &User, session_owner: &UserId) -> bool {
    Sight::of(viewer).allows(session_owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: &str, role: Role) -> User {
        User {
            tenant_id: "t".into(),
            id: id.into(),
            display_name: id.into(),
            email: None,
            role,
            sso_subject: None,
            created_at_ms: 0,
            disabled_at_ms: None,
            directory_groups: Vec::new(),
        }
    }

    #[test]
    fn members_see_their_own_sessions_only_and_approvers_and_admins_see_all() {
        let (alice, bob) = (UserId::from("alice"), UserId::from("bob"));
        let member = user("alice", Role::Member);
        assert!(can_see(&member, &alice));
        assert!(!can_see(&member, &bob));
        assert_eq!(Sight::of(&member).owner(), Some(&alice));
        for role in [Role::Approver, Role::Admin] {
            let viewer = user("carol", role);
            assert!(can_see(&viewer, &alice) && can_see(&viewer, &bob));
            assert_eq!(Sight::of(&viewer).owner(), None);
        }
    }
}
