//! Directory groups to roles.
//!
//! Invariant: the role is the highest one any of the person's groups grants (`admin` >
//! `approver` > `member`); no group, or no configured group, means `member`.

use std::collections::BTreeSet;

/// What a person may do, from their directory groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Talks to workmate.
    Member,
    /// May also resolve other people's approvals.
    Approver,
    /// May also change settings.
    Admin,
}

impl Role {
    /// The role's name, as the store and the API spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Member => "member",
            Self::Approver => "approver",
            Self::Admin => "admin",
        }
    }
}

/// `[auth.groups]`: which directory groups grant which role.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupRoles {
    admin: BTreeSet<String>,
    approver: BTreeSet<String>,
}

impl GroupRoles {
    /// Groups granting `admin` and groups granting `approver`.
    pub fn new(
        admin: impl IntoIterator<Item = String>,
        approver: impl IntoIterator<Item = String>,
    ) -> Self {
        Self {
            admin: admin.into_iter().collect(),
            approver: approver.into_iter().collect(),
        }
    }

    /// Whether no group grants a role (everyone is a member).
    pub fn is_empty(&self) -> bool {
        self.admin.is_empty() && self.approver.is_empty()
    }

    /// The highest role any of `groups` grants.
    pub fn role_for<'a>(&self, groups: impl IntoIterator<Item = &'a str>) -> Role {
        let mut role = Role::Member;
        for group in groups {
            if self.admin.contains(group) {
                return Role::Admin;
            }
            if self.approver.contains(group) {
                role = Role::Approver;
            }
        }
        role
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_granted_role_wins() {
        let roles = GroupRoles::new(["ops".to_owned()], ["leads".to_owned(), "ops".to_owned()]);
        assert_eq!(roles.role_for(["staff"]), Role::Member);
        assert_eq!(roles.role_for([]), Role::Member);
        assert_eq!(roles.role_for(["staff", "leads"]), Role::Approver);
        assert_eq!(roles.role_for(["leads", "ops"]), Role::Admin);
        assert_eq!(roles.role_for(["ops"]), Role::Admin);
        assert_eq!(GroupRoles::default().role_for(["ops"]), Role::Member);
        // Group names match exactly.
        assert_eq!(roles.role_for(["OPS", "lead"]), Role::Member);
    }
}
