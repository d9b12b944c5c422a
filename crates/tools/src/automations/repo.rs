//! What the scheduling tools need from storage: the automation service, seen from a tool call.
//!
//! Invariants: every call goes through the same service the HTTP API uses, so the agent is
//! validated and refused exactly as the API is; `change` and `delete` refuse unless `by` may
//! manage the automation (its owner or an admin), checked before anything else about the
//! request; automations come back as the API shows them (`public_view`).

use std::fmt;

use serde_json::Value;
use workmate_protocol::{AutomationId, SessionId, TenantId, UserId};

use super::{AutomationChange, AutomationDraft, ChangedBy, RunTarget};
use crate::RepoFuture;

/// The automation service as the agent's scheduling tools use it.
pub trait AutomationRepo: Send + Sync + fmt::Debug {
    /// Where the session `session` of `tenant` lives (its surface, chat and thread), if it is
    /// stored.
    fn session_place<'a>(
        &'a self,
        tenant: &'a TenantId,
        session: &'a SessionId,
    ) -> RepoFuture<'a, Option<RunTarget>>;

    /// Validates and stores a new automation owned by `owner`, created from `origin` through
    /// `via`, and parks the standing rules it asks for for an approver; its view.
    fn create<'a>(
        &'a self,
        tenant: &'a TenantId,
        owner: &'a UserId,
        origin: Option<&'a SessionId>,
        draft: AutomationDraft,
        via: &'a str,
    ) -> RepoFuture<'a, Value>;

    /// Views of at most `limit` of the tenant's automations.
    fn list<'a>(&'a self, tenant: &'a TenantId, limit: u32) -> RepoFuture<'a, Vec<Value>>;

    /// Applies `change` as `by`; its view after, or `None` if the tenant has no such automation.
    fn change<'a>(
        &'a self,
        tenant: &'a TenantId,
        id: &'a AutomationId,
        by: ChangedBy<'a>,
        change: AutomationChange,
    ) -> RepoFuture<'a, Option<Value>>;

    /// Deletes an automation and its run history as `by`; `false` if the tenant has no such one.
    fn delete<'a>(
        &'a self,
        tenant: &'a TenantId,
        id: &'a AutomationId,
        by: ChangedBy<'a>,
    ) -> RepoFuture<'a, bool>;
}
