//! The tools reach state only through their repositories: a memory repository kept in memory
//! receives what `remember` saves (the store beside it sees nothing), and a repository's failure
//! reaches the model as a plain "unavailable", never as the backend's text.

use std::sync::{Arc, Mutex};

use serde_json::json;
use workmate_protocol::{TenantId, UserId};
use workmate_tools::{MemoryRecord, MemoryRepo, NewMemory, RepoError, RepoFuture};

use crate::support::{World, err};

/// Memories in a vector; `broken` makes every call fail as the backend would.
#[derive(Debug, Default)]
struct InMemory {
    memories: Mutex<Vec<MemoryRecord>>,
    broken: bool,
}

impl InMemory {
    fn answer<'a, T: Send + 'a>(
        &'a self,
        value: impl FnOnce() -> T + Send + 'a,
    ) -> RepoFuture<'a, T> {
        Box::pin(async move {
            if self.broken {
                return Err(RepoError::Unavailable("disk on fire at /var/db".into()));
            }
            Ok(value())
        })
    }
}

impl MemoryRepo for InMemory {
    fn saving_on<'a>(&'a self, _: &'a TenantId, _: &'a UserId) -> RepoFuture<'a, bool> {
        self.answer(|| true)
    }

    fn add<'a>(&'a self, _: &'a TenantId, new: &'a NewMemory) -> RepoFuture<'a, MemoryRecord> {
        self.answer(move || {
            let mut memories = self.memories.lock().unwrap();
            let record = MemoryRecord {
                id: format!("m{}", memories.len() + 1),
                scope: new.scope,
                owner: new.owner.clone(),
                content: new.content.clone(),
            };
            memories.push(record.clone());
            record
        })
    }

    fn get<'a>(&'a self, _: &'a TenantId, id: &'a str) -> RepoFuture<'a, Option<MemoryRecord>> {
        self.answer(move || {
            let memories = self.memories.lock().unwrap();
            memories.iter().find(|m| m.id == id).cloned()
        })
    }

    fn update<'a>(
        &'a self,
        _: &'a TenantId,
        id: &'a str,
        content: &'a str,
        _: Option<&'a str>,
    ) -> RepoFuture<'a, bool> {
        self.answer(move || {
            let mut memories = self.memories.lock().unwrap();
            let found = memories.iter_mut().find(|m| m.id == id);
            found.map(|m| m.content = content.to_owned()).is_some()
        })
    }

    fn delete<'a>(&'a self, _: &'a TenantId, id: &'a str) -> RepoFuture<'a, bool> {
        self.answer(move || {
            let mut memories = self.memories.lock().unwrap();
            let before = memories.len();
            memories.retain(|m| m.id != id);
            memories.len() < before
        })
    }
}

#[tokio::test]
async fn the_memory_tools_use_only_their_repository() {
    let mut world = World::new().await;
    let repo = Arc::new(InMemory::default());
    world.ctx.repos.memory = repo.clone();

    let saved = world
        .call(
            "remember",
            json!({"content": "Ada prefers metric units.", "scope": "global"}),
        )
        .await
        .unwrap();
    assert_eq!(saved, json!({"id": "m1", "scope": "global", "saved": true}));
    assert_eq!(
        repo.memories.lock().unwrap()[0].owner,
        Some(world.ctx.user_id.clone())
    );
    let stored = world.store.memories().get(&world.ctx.tenant_id, "m1").await;
    assert_eq!(
        stored.unwrap(),
        None,
        "the store was written around the repository"
    );

    let read = world
        .call("memory_read", json!({"memory_ids": ["m1"]}))
        .await;
    assert_eq!(
        read.unwrap()["memories"][0]["content"],
        "Ada prefers metric units."
    );
    // Another person of the tenant does not see Ada's global memory, whatever the repository holds.
    let mut bob = world.ctx.clone();
    bob.user_id = UserId::from("bob");
    let read = world
        .call_with(&bob, "memory_read", json!({"memory_ids": ["m1"]}))
        .await
        .unwrap();
    assert_eq!(read, json!({"memories": [], "missing": ["m1"]}));
}

#[tokio::test]
async fn a_failing_repository_is_unavailable_to_the_model() {
    let mut world = World::new().await;
    world.ctx.repos.memory = Arc::new(InMemory {
        broken: true,
        ..InMemory::default()
    });
    let message = err(world.call("remember", json!({"content": "x"})).await);
    assert_eq!(message, "the memory store is unavailable; try again later");

    // The same call with a working repository is saved.
    world.ctx.repos.memory = Arc::new(InMemory::default());
    let saved = world
        .call("remember", json!({"content": "x"}))
        .await
        .unwrap();
    assert_eq!(saved["saved"], true);
}
