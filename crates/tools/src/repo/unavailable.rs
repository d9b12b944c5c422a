//! Repositories that are never there: for tests (a connector's, an MCP server's) that build a
//! [`ToolContext`](crate::ToolContext) but run no tool that keeps state.
//!
//! Invariant: every call fails as `Unavailable`, so a test that reaches one by mistake fails
//! loudly instead of passing on made-up state.

use std::sync::Arc;

use serde_json::Value;
use workmate_protocol::{AutomationId, RunId, SessionId, TenantId, UserId};

use super::{RepoError, RepoFuture, ToolRepos};
use crate::automations::{AutomationChange, AutomationDraft, AutomationRepo, ChangedBy, RunTarget};
use crate::{
    JobStatus, MemoryRecord, MemoryRepo, NewMemory, NewSkill, NewWake, SkillEntry, SkillRepo,
    SkillScope, WakeRepo,
};

/// The repositories of a context without state.
#[derive(Debug)]
struct Unavailable;

fn fail<'a, T: Send + 'a>() -> RepoFuture<'a, T> {
    Box::pin(async { Err(RepoError::Unavailable("no store in this context".into())) })
}

impl ToolRepos {
    /// Repositories whose every call fails: for a context that runs no stateful tool.
    pub fn unavailable() -> Self {
        let none = Arc::new(Unavailable);
        Self {
            memory: none.clone(),
            skills: none.clone(),
            wakes: none.clone(),
            automations: none,
        }
    }
}

impl MemoryRepo for Unavailable {
    fn saving_on<'a>(&'a self, _: &'a TenantId, _: &'a UserId) -> RepoFuture<'a, bool> {
        fail()
    }

    fn add<'a>(&'a self, _: &'a TenantId, _: &'a NewMemory) -> RepoFuture<'a, MemoryRecord> {
        fail()
    }

    fn get<'a>(&'a self, _: &'a TenantId, _: &'a str) -> RepoFuture<'a, Option<MemoryRecord>> {
        fail()
    }

    fn update<'a>(
        &'a self,
        _: &'a TenantId,
        _: &'a str,
        _: &'a str,
        _: Option<&'a str>,
    ) -> RepoFuture<'a, bool> {
        fail()
    }

    fn delete<'a>(&'a self, _: &'a TenantId, _: &'a str) -> RepoFuture<'a, bool> {
        fail()
    }
}

impl SkillRepo for Unavailable {
    fn visible<'a>(
        &'a self,
        _: &'a TenantId,
        _: &'a str,
        _: &'a str,
    ) -> RepoFuture<'a, Vec<SkillEntry>> {
        fail()
    }

    fn save<'a>(
        &'a self,
        _: &'a TenantId,
        _: SkillScope,
        _: &'a str,
        _: &'a NewSkill,
        _: &'a UserId,
    ) -> RepoFuture<'a, String> {
        fail()
    }
}

impl WakeRepo for Unavailable {
    fn now_ms(&self) -> i64 {
        0
    }

    fn job_status<'a>(
        &'a self,
        _: &'a TenantId,
        _: &'a RunId,
    ) -> RepoFuture<'a, Option<JobStatus>> {
        fail()
    }

    fn set<'a>(&'a self, _: &'a TenantId, _: &'a NewWake) -> RepoFuture<'a, String> {
        fail()
    }
}

impl AutomationRepo for Unavailable {
    fn session_place<'a>(
        &'a self,
        _: &'a TenantId,
        _: &'a SessionId,
    ) -> RepoFuture<'a, Option<RunTarget>> {
        fail()
    }

    fn create<'a>(
        &'a self,
        _: &'a TenantId,
        _: &'a UserId,
        _: Option<&'a SessionId>,
        _: AutomationDraft,
        _: &'a str,
    ) -> RepoFuture<'a, Value> {
        fail()
    }

    fn list<'a>(&'a self, _: &'a TenantId, _: u32) -> RepoFuture<'a, Vec<Value>> {
        fail()
    }

    fn change<'a>(
        &'a self,
        _: &'a TenantId,
        _: &'a AutomationId,
        _: ChangedBy<'a>,
        _: AutomationChange,
    ) -> RepoFuture<'a, Option<Value>> {
        fail()
    }

    fn delete<'a>(
        &'a self,
        _: &'a TenantId,
        _: &'a AutomationId,
        _: ChangedBy<'a>,
    ) -> RepoFuture<'a, bool> {
        fail()
    }
}
