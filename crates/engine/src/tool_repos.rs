//! The store behind the tools' repositories: what a tool call that keeps state (memory, skills,
//! wakes, automations) reaches, wired into every `ToolContext` the engine builds.
//!
//! Invariants: each method is the store call (or the automation service call) the tool used to
//! make itself, with the same tenant scoping; automations go through the one automation service
//! (`crate::automations`), so the agent is validated and refused exactly as the API is; a store
//! failure becomes `Unavailable` (logged by the tool, never shown to the model), a refusal keeps
//! its text.

use std::sync::Arc;

use serde_json::Value;
use workmate_personas::{Personas, Skill, Skills};
use workmate_protocol::{AutomationId, RunId, SessionId, TenantId, UserId};
use workmate_store::{RunStatus, Store, WakeKind};
use workmate_tools::automations::{
    AutomationChange, AutomationDraft, AutomationRepo, ChangedBy, RunTarget,
};
use workmate_tools::{
    JobStatus, MemoryRecord, MemoryRepo, MemoryScope, NewMemory, NewSkill, NewWake, RepoError,
    RepoFuture, SkillEntry, SkillRepo, SkillScope, ToolRepos, WakeRepo, WakeTrigger,
};

use crate::automations::{self, AutomationError};

/// The tools' repositories over `store`.
pub fn tool_repos(store: &Store) -> ToolRepos {
    let repos = Arc::new(StoreRepos {
        store: store.clone(),
    });
    ToolRepos {
        memory: repos.clone(),
        skills: repos.clone(),
        wakes: repos.clone(),
        automations: repos,
    }
}

/// Every tool repository, over one store.
#[derive(Debug)]
struct StoreRepos {
    store: Store,
}

fn unavailable(error: impl std::error::Error + Send + Sync + 'static) -> RepoError {
    RepoError::Unavailable(Box::new(error))
}

fn automation_error(error: AutomationError) -> RepoError {
    match error {
        AutomationError::Invalid(why) => RepoError::Invalid(why),
        AutomationError::Forbidden(why) => RepoError::Refused(why),
        AutomationError::Store(e) => unavailable(e),
    }
}

fn memory_record(memory: workmate_store::Memory) -> MemoryRecord {
    MemoryRecord {
        id: memory.id,
        scope: match memory.scope {
            workmate_store::MemoryScope::Global => MemoryScope::Global,
            workmate_store::MemoryScope::Workspace => MemoryScope::Workspace,
        },
        owner: memory.owner,
        content: memory.content,
    }
}

impl MemoryRepo for StoreRepos {
    fn saving_on<'a>(&'a self, tenant: &'a TenantId, user: &'a UserId) -> RepoFuture<'a, bool> {
        Box::pin(async move {
            let memories = self.store.memories();
            memories.saving_on(tenant, user).await.map_err(unavailable)
        })
    }

    fn add<'a>(&'a self, tenant: &'a TenantId, new: &'a NewMemory) -> RepoFuture<'a, MemoryRecord> {
        Box::pin(async move {
            let new = workmate_store::NewMemory {
                scope: match new.scope {
                    MemoryScope::Global => workmate_store::MemoryScope::Global,
                    MemoryScope::Workspace => workmate_store::MemoryScope::Workspace,
                },
                owner: new.owner.clone(),
                workspace: new.workspace.clone(),
                key: None,
                content: new.content.clone(),
                summary: new.summary.clone(),
            };
            let memories = self.store.memories();
            let saved = memories.add(tenant, &new).await.map_err(unavailable)?;
            Ok(memory_record(saved))
        })
    }

    fn get<'a>(
        &'a self,
        tenant: &'a TenantId,
        id: &'a str,
    ) -> RepoFuture<'a, Option<MemoryRecord>> {
        Box::pin(async move {
            let memories = self.store.memories();
            let memory = memories.get(tenant, id).await.map_err(unavailable)?;
            Ok(memory.map(memory_record))
        })
    }

    fn update<'a>(
        &'a self,
        tenant: &'a TenantId,
        id: &'a str,
        content: &'a str,
        summary: Option<&'a str>,
    ) -> RepoFuture<'a, bool> {
        Box::pin(async move {
            let memories = self.store.memories();
            let updated = memories.update(tenant, id, content, summary).await;
            updated.map_err(unavailable)
        })
    }

    fn delete<'a>(&'a self, tenant: &'a TenantId, id: &'a str) -> RepoFuture<'a, bool> {
        Box::pin(async move {
            let memories = self.store.memories();
            memories.delete(tenant, id).await.map_err(unavailable)
        })
    }
}

impl SkillRepo for StoreRepos {
    fn visible<'a>(
        &'a self,
        tenant: &'a TenantId,
        persona: &'a str,
        channel: &'a str,
    ) -> RepoFuture<'a, Vec<SkillEntry>> {
        Box::pin(async move {
            let personas = Personas::new(self.store.clone());
            let persona = personas
                .resolve(tenant, persona)
                .await
                .map_err(unavailable)?;
            let skills = Skills::new(self.store.clone())
                .visible(tenant, &persona, channel)
                .await
                .map_err(unavailable)?;
            Ok(skills
                .into_iter()
                .map(|s| SkillEntry {
                    name: s.name,
                    instructions: s.instructions,
                    allowed_tools: s.allowed_tools,
                })
                .collect())
        })
    }

    fn save<'a>(
        &'a self,
        tenant: &'a TenantId,
        scope: SkillScope,
        channel: &'a str,
        skill: &'a NewSkill,
        by: &'a UserId,
    ) -> RepoFuture<'a, String> {
        Box::pin(async move {
            let skill = Skill::new(
                &skill.name,
                &skill.description,
                &skill.instructions,
                skill.allowed_tools.clone(),
            )
            .map_err(|e| RepoError::Invalid(e.to_string()))?;
            let scope = match scope {
                SkillScope::Channel => workmate_personas::SkillScope::Channel,
                SkillScope::Tenant => workmate_personas::SkillScope::Tenant,
            };
            let skills = Skills::new(self.store.clone());
            match skills.save(tenant, scope, channel, &skill, by).await {
                Ok(()) => Ok(skill.name),
                Err(e @ workmate_personas::Error::Store(_)) => Err(unavailable(e)),
                Err(other) => Err(RepoError::Refused(other.to_string())),
            }
        })
    }
}

impl WakeRepo for StoreRepos {
    fn now_ms(&self) -> i64 {
        self.store.clock_ms()
    }

    fn job_status<'a>(
        &'a self,
        tenant: &'a TenantId,
        job: &'a RunId,
    ) -> RepoFuture<'a, Option<JobStatus>> {
        Box::pin(async move {
            let automations = self.store.automations();
            let run = automations.run(tenant, job).await.map_err(unavailable)?;
            Ok(run.map(|run| match run.status {
                RunStatus::Running => JobStatus::Running,
                RunStatus::Ok => JobStatus::Ok,
                RunStatus::Error => JobStatus::Error,
                RunStatus::Skipped => JobStatus::Skipped,
            }))
        })
    }

    fn set<'a>(&'a self, tenant: &'a TenantId, wake: &'a NewWake) -> RepoFuture<'a, String> {
        Box::pin(async move {
            let (kind, fire_at_ms, job_id, event_key) = match &wake.trigger {
                WakeTrigger::Timer { fire_at_ms } => {
                    (WakeKind::Timer, Some(*fire_at_ms), None, None)
                }
                WakeTrigger::Completion { job_id } => {
                    (WakeKind::Completion, None, Some(job_id.clone()), None)
                }
                WakeTrigger::Event { key } => (WakeKind::Event, None, None, Some(key.clone())),
            };
            let new = workmate_store::NewWake {
                session_id: wake.session_id.clone(),
                kind,
                fire_at_ms,
                job_id,
                event_key,
                note: wake.note.clone(),
            };
            let saved = self.store.wakes().create(tenant, &new).await;
            Ok(saved.map_err(unavailable)?.id.into_string())
        })
    }
}

impl AutomationRepo for StoreRepos {
    fn session_place<'a>(
        &'a self,
        tenant: &'a TenantId,
        session: &'a SessionId,
    ) -> RepoFuture<'a, Option<RunTarget>> {
        Box::pin(async move {
            let sessions = self.store.sessions();
            let session = sessions.get(tenant, session).await.map_err(unavailable)?;
            Ok(session.map(|s| RunTarget {
                surface: s.key.surface,
                chat_id: s.key.chat_id,
                thread_id: s.key.thread_id,
            }))
        })
    }

    fn create<'a>(
        &'a self,
        tenant: &'a TenantId,
        owner: &'a UserId,
        origin: Option<&'a SessionId>,
        draft: AutomationDraft,
        via: &'a str,
    ) -> RepoFuture<'a, Value> {
        Box::pin(async move {
            let store = &self.store;
            let automation = automations::create(store, tenant, owner, origin, draft, via)
                .await
                .map_err(automation_error)?;
            automations::ask_for_rules(store, tenant, &automation)
                .await
                .map_err(automation_error)?;
            Ok(automations::public_view(&automation, None))
        })
    }

    fn list<'a>(&'a self, tenant: &'a TenantId, limit: u32) -> RepoFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let automations = self.store.automations();
            let listed = automations.list(tenant, limit).await.map_err(unavailable)?;
            Ok(listed
                .iter()
                .map(|a| automations::public_view(a, None))
                .collect())
        })
    }

    fn change<'a>(
        &'a self,
        tenant: &'a TenantId,
        id: &'a AutomationId,
        by: ChangedBy<'a>,
        change: AutomationChange,
    ) -> RepoFuture<'a, Option<Value>> {
        Box::pin(async move {
            let store = &self.store;
            let Some(automation) = managed(store, tenant, id, by.user).await? else {
                return Ok(None);
            };
            let updated = automations::change(store, tenant, &automation.id, by, change)
                .await
                .map_err(automation_error)?;
            Ok(updated.map(|a| automations::public_view(&a, None)))
        })
    }

    fn delete<'a>(
        &'a self,
        tenant: &'a TenantId,
        id: &'a AutomationId,
        by: ChangedBy<'a>,
    ) -> RepoFuture<'a, bool> {
        Box::pin(async move {
            let store = &self.store;
            let Some(automation) = managed(store, tenant, id, by.user).await? else {
                return Ok(false);
            };
            automations::delete(store, tenant, &automation, by)
                .await
                .map_err(automation_error)
        })
    }
}

/// The automation `id`, if the tenant has it; refused unless `user` may manage it (its owner or
/// an admin).
async fn managed(
    store: &Store,
    tenant: &TenantId,
    id: &AutomationId,
    user: &UserId,
) -> Result<Option<workmate_store::Automation>, RepoError> {
    let automation = store.automations().get(tenant, id).await;
    let Some(automation) = automation.map_err(unavailable)? else {
        return Ok(None);
    };
    automations::check_manager(store, tenant, &automation, user)
        .await
        .map_err(automation_error)?;
    Ok(Some(automation))
}
