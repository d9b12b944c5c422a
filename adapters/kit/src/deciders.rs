//! [`Deciders`]: who may answer a parked prompt, as accounts of one platform, for a platform that
//! must bind its buttons to people when it posts the card.
//!
//! Most platforms sign what a click says, clicker included, so the chat layer learns the clicker
//! when they click. DingTalk's HTTP card callbacks sign only a timestamp: the clicker's id comes
//! in an unsigned body, so the card itself must carry, for each person who may decide, a value
//! only that person's client receives (see `workmate-dingtalk`'s `card::click_key`). The chat
//! layer, which knows sessions and roles, answers who those people are; the platform only asks.

use std::fmt;

use workmate_protocol::{InboxItemId, Surface};

use crate::{AdapterError, BoxFuture};

/// Who may answer a prompt.
pub trait Deciders: Send + Sync + fmt::Debug {
    /// The platform user ids on `surface` of everyone who may answer `item`: its session's owner
    /// first, then the tenant's approvers and admins. Empty for an unknown item. A failure to
    /// look them up is [`AdapterError::Transient`], so the post that asked is retried.
    fn deciders<'a>(
        &'a self,
        surface: Surface,
        item: &'a InboxItemId,
    ) -> BoxFuture<'a, Result<Vec<String>, AdapterError>>;
}
