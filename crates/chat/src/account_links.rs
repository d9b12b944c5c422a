//! What the server implements to make "link your account" URLs, and the account a link is for.
//!
//! Invariant: plain types and one trait, so the layer's handle can hold the server's
//! implementation without depending on the directory feature that uses it.

use std::fmt;

use workmate_protocol::{Surface, TenantId, UserId};

/// The chat account a link is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkRequest {
    /// The account's tenant.
    pub tenant: TenantId,
    /// The platform it is on.
    pub platform: Surface,
    /// The platform's id of the person.
    pub platform_user: String,
    /// The workmate user of the account.
    pub user: UserId,
    /// The name the platform shows for them.
    pub name: String,
}

/// Makes "link your account" URLs: where the person signs in and confirms the link.
pub trait AccountLinks: Send + Sync + fmt::Debug {
    /// A URL, valid for a limited time, at which `account`'s person links it.
    fn link_url(&self, account: &LinkRequest) -> String;
}
