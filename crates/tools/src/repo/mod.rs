//! What tools that keep state need from storage: one narrow repository per family of tools
//! (memory, skills, wakes, automations, each trait defined next to the tools that call it), the
//! error they share, and the set a tool call carries ([`ToolRepos`]).
//!
//! Invariants: the tool contract knows no store; a tool reaches state only through the methods
//! its trait declares, with plain records; a repository's failure is typed — what the model may
//! be told (`Invalid`, `Refused`) apart from what only the log sees (`Unavailable`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::automations::AutomationRepo;
use crate::memory::MemoryRepo;
use crate::skills::SkillRepo;
use crate::wake::WakeRepo;

/// Why a repository call failed.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The request is wrong; the text says how to fix it.
    #[error("{0}")]
    Invalid(String),
    /// The caller may not do this, or it cannot be done; the text says why or who may.
    #[error("{0}")]
    Refused(String),
    /// The storage behind the repository failed: logged, never shown to the model.
    #[error(transparent)]
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

/// The future a repository call returns.
pub type RepoFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, RepoError>> + Send + 'a>>;

/// The repositories a tool call may use: the engine builds them over its store.
#[derive(Clone, Debug)]
pub struct ToolRepos {
    /// For `remember`, `memory_read`, `memory_update`, `memory_forget`.
    pub memory: Arc<dyn MemoryRepo>,
    /// For `load_skill`, `save_skill`.
    pub skills: Arc<dyn SkillRepo>,
    /// For `sleep_until`, `wake_on`, `wake_on_event`.
    pub wakes: Arc<dyn WakeRepo>,
    /// For the scheduling tools.
    pub automations: Arc<dyn AutomationRepo>,
}

#[cfg(feature = "test-support")]
mod unavailable;
