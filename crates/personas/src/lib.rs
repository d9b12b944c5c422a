//! Personas and skills (behaviour spec §10.2–10.4).
//!
//! A **persona** is who answers in a thread: its instructions (the system prompt), the tool groups
//! and connectors it may use, its default model and mode. It is a markdown file with YAML front
//! matter; workmate ships some ([`builtin`]), and admins install more from a folder or a git URL.
//! An installed persona lands **pending**: nobody can use it until an admin consents to what it
//! asks for, and the consent is audited ([`Personas`]).
//!
//! A **skill** is a procedure taught once (a `SKILL.md`): only its name and description go into
//! a model's context, in the [`catalog`]; the model loads the instructions when they apply.
//! Skills are kept per tenant, per channel and per persona bundle ([`Skills`]).

mod builtin;
mod consent;
mod front_matter;
mod git;
mod install;
mod persona;
mod registry;
mod skill;
mod skills;

pub use builtin::{DEFAULT_PERSONA, builtin_personas};
pub use consent::ConsentSummary;
pub use git::{CLONE_TIMEOUT, GitSandbox, SandboxedCommand};
pub use install::{InstallPolicy, InstallSource, Installed, fetch_bundle};
pub use persona::{ConnectorGrant, Persona, TOOL_GROUPS, ToolGrant, parse_persona};
pub use registry::{
    CONSENT_STAGE, INSTALL_STAGE, PersonaEntry, PersonaState, Personas, default_persona,
};
pub use skill::{Skill, parse_skill, valid_skill_name};
pub use skills::{SkillScope, Skills, catalog, channel_key};

/// Why a manifest or a `SKILL.md` was refused: what is wrong, in words that say what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ManifestError {
    message: String,
}

impl ManifestError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    pub(crate) fn field(key: &str, rule: &str) -> Self {
        Self::new(format!("field `{key}` {rule}"))
    }

    /// The same error, said of a file.
    pub(crate) fn in_file(self, file: &str) -> Self {
        Self::new(format!("{file}: {}", self.message))
    }
}

/// What a persona or skill operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A manifest or skill is malformed.
    #[error("{0}")]
    Manifest(#[from] ManifestError),
    /// The request cannot be met (unknown persona, a built-in that cannot be changed, …).
    #[error("{0}")]
    Refused(String),
    /// Reading a bundle failed (a folder that cannot be read, a clone that failed).
    #[error("{0}")]
    Fetch(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] workmate_store::Error),
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
