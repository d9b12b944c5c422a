//! The personas a tenant can see: the built-ins and those it installed, and the consent gate.
//!
//! Invariants: a pending or disabled persona is never newly chosen (switching to it or making
//! it a channel's default is refused, saying what an admin must do); a session already using
//! one keeps resolving it, so a live thread does not change voice mid-conversation; an unknown
//! id resolves to the default persona. Every consent decision is audited.

use serde::Serialize;
use serde_json::json;
use workmate_protocol::{Surface, TenantId, UserId};
use workmate_store::{NewAuditRecord, NewPersona, PersonaRecord, SkillRecord, SkillScope, Store};

pub use workmate_store::PersonaState;

use crate::builtin::{DEFAULT_PERSONA, builtin, builtin_personas};
use crate::consent::{ConsentSummary, capabilities, grew};
use crate::install::{InstallPolicy, InstallSource, fetch_bundle};
use crate::persona::{Persona, parse_persona};
use crate::{Error, Result};

/// The audit stage of a consent decision.
pub const CONSENT_STAGE: &str = "persona_consent";

/// The audit stage of an install.
pub const INSTALL_STAGE: &str = "persona_installed";

/// A persona with its state, as listed.
#[derive(Clone, Debug, Serialize)]
pub struct PersonaEntry {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its icon.
    pub icon: String,
    /// Its tagline.
    pub tagline: String,
    /// Whether it can be chosen.
    pub state: PersonaState,
    /// Whether workmate ships it.
    pub builtin: bool,
    /// Who consented (or turned it off), if anyone.
    pub consented_by: Option<String>,
    /// What it asks for.
    pub consent: ConsentSummary,
    /// The persona itself (not listed over HTTP).
    #[serde(skip)]
    pub persona: Persona,
}

impl PersonaEntry {
    fn builtin(persona: &Persona) -> Self {
        Self {
            id: persona.id.clone(),
            name: persona.name.clone(),
            icon: persona.icon.clone(),
            tagline: persona.tagline.clone(),
            state: PersonaState::Enabled,
            builtin: true,
            consented_by: None,
            consent: ConsentSummary::new(persona, Vec::new(), "workmate"),
            persona: persona.clone(),
        }
    }

    fn installed(record: &PersonaRecord, persona: Persona, skills: Vec<String>) -> Self {
        let mut consent = ConsentSummary::new(&persona, skills, &record.source);
        consent.needs_consent = record.state == PersonaState::Pending;
        Self {
            id: persona.id.clone(),
            name: persona.name.clone(),
            icon: persona.icon.clone(),
            tagline: persona.tagline.clone(),
            state: record.state,
            builtin: false,
            consented_by: record.consented_by.as_ref().map(|u| u.as_str().to_owned()),
            consent,
            persona,
        }
    }
}

/// A tenant's personas, over the store.
#[derive(Clone, Debug)]
pub struct Personas {
    store: Store,
    install: InstallPolicy,
}

impl Personas {
    /// The personas kept in `store`; installing reaches only public https repositories (no
    /// folder) until [`Personas::with_install_policy`] says more.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            install: InstallPolicy::default(),
        }
    }

    /// The same, installing within the operator's `policy`.
    #[must_use]
    pub fn with_install_policy(mut self, policy: InstallPolicy) -> Self {
        self.install = policy;
        self
    }

    /// The persona a session named `id` runs with: a built-in, an installed one in any state
    /// (live sessions keep a persona that was turned off), else the default.
    pub async fn resolve(&self, tenant: &TenantId, id: &str) -> Result<Persona> {
        if let Some(persona) = builtin(id) {
            return Ok(persona.clone());
        }
        if let Some(record) = self.store.personas().get(tenant, id).await?
            && let Ok(persona) = parse_persona(&record.manifest, &record.id, false)
        {
            return Ok(persona);
        }
        Ok(default_persona())
    }

    /// The persona of `id` if it may be newly chosen; otherwise why not, and what to do.
    pub async fn usable(&self, tenant: &TenantId, id: &str) -> Result<Persona> {
        let id = id.trim();
        if let Some(persona) = builtin(id) {
            return Ok(persona.clone());
        }
        let Some(entry) = self.entry(tenant, id).await? else {
            let known: Vec<String> = self.list(tenant).await?.into_iter().map(|e| e.id).collect();
            return Err(Error::Refused(format!(
                "there is no persona {id:?}; personas here: {}",
                known.join(", ")
            )));
        };
        match entry.state {
            PersonaState::Enabled => Ok(entry.persona),
            PersonaState::Pending => Err(Error::Refused(format!(
                "the persona {id:?} is waiting for an admin's consent to what it asks for ({}); an admin approves it with `/workmate persona consent {id}`",
                entry.consent.capabilities.join(", ")
            ))),
            PersonaState::Disabled => Err(Error::Refused(format!(
                "the persona {id:?} was turned off by an admin; an admin can turn it back on with `/workmate persona consent {id}`"
            ))),
        }
    }

    /// One persona with its state.
    pub async fn entry(&self, tenant: &TenantId, id: &str) -> Result<Option<PersonaEntry>> {
        if let Some(persona) = builtin(id) {
            return Ok(Some(PersonaEntry::builtin(persona)));
        }
        let Some(record) = self.store.personas().get(tenant, id).await? else {
            return Ok(None);
        };
        self.installed_entry(tenant, &record).await.map(Some)
    }

    /// Every persona: the built-ins, then the installed ones by id.
    pub async fn list(&self, tenant: &TenantId) -> Result<Vec<PersonaEntry>> {
        let mut entries: Vec<PersonaEntry> = builtin_personas()
            .iter()
            .map(PersonaEntry::builtin)
            .collect();
        for record in self.store.personas().list(tenant).await? {
            entries.push(self.installed_entry(tenant, &record).await?);
        }
        Ok(entries)
    }

    async fn installed_entry(
        &self,
        tenant: &TenantId,
        record: &PersonaRecord,
    ) -> Result<PersonaEntry> {
        let persona = parse_persona(&record.manifest, &record.id, false)?;
        let skills = self
            .store
            .skills()
            .visible(tenant, &record.id, "")
            .await?
            .into_iter()
            .filter(|s| s.scope == SkillScope::Persona)
            .map(|s| s.name)
            .collect();
        Ok(PersonaEntry::installed(record, persona, skills))
    }

    /// Installs (or re-installs) the persona at `source`. It lands pending, unless it replaces
    /// one whose capabilities it does not grow: that one keeps its state. Returns what an admin
    /// is asked to consent to.
    pub async fn install(
        &self,
        tenant: &TenantId,
        source: &InstallSource,
        by: &UserId,
    ) -> Result<ConsentSummary> {
        let bundle = fetch_bundle(source, &self.install).await?;
        let persona = parse_persona(&bundle.manifest, &bundle.file_stem, false)
            .map_err(|e| e.in_file("manifest.md"))?;
        if builtin(&persona.id).is_some() {
            return Err(Error::Refused(format!(
                "{:?} is a built-in persona and cannot be replaced; give the manifest another `id`",
                persona.id
            )));
        }
        let asks = capabilities(&persona);
        let previous = self.store.personas().get(tenant, &persona.id).await?;
        let state = match &previous {
            Some(before) if !grew(&before.capabilities, &asks) => before.state,
            _ => PersonaState::Pending,
        };
        let shipped = shipped_skills(&persona, &bundle.skills);
        self.store
            .personas()
            .install(
                tenant,
                &NewPersona {
                    id: persona.id.clone(),
                    manifest: bundle.manifest.clone(),
                    source: bundle.source.clone(),
                    state,
                    capabilities: asks,
                    installed_by: by.clone(),
                },
                &shipped,
            )
            .await?;
        let names = shipped.into_iter().map(|s| s.name).collect();
        let mut summary = ConsentSummary::new(&persona, names, &bundle.source);
        summary.needs_consent = state == PersonaState::Pending;
        summary.replaces = previous.as_ref().map(|p| {
            parse_persona(&p.manifest, &p.id, false)
                .map(|p| p.version)
                .unwrap_or_default()
        });
        self.audit(
            tenant,
            by,
            INSTALL_STAGE,
            &persona.id,
            state,
            json!({
                "source": bundle.source,
                "capabilities": summary.capabilities,
                "replaces": summary.replaces,
            }),
        )
        .await?;
        Ok(summary)
    }

    /// An admin's consent (`enabled: true`) or its withdrawal, audited. Returns the persona as
    /// it now stands.
    pub async fn set_enabled(
        &self,
        tenant: &TenantId,
        id: &str,
        enabled: bool,
        by: &UserId,
    ) -> Result<PersonaEntry> {
        if builtin(id).is_some() {
            return Err(Error::Refused(format!(
                "{id:?} is a built-in persona: it is always enabled"
            )));
        }
        let state = if enabled {
            PersonaState::Enabled
        } else {
            PersonaState::Disabled
        };
        let Some(before) = self.store.personas().get(tenant, id).await? else {
            return Err(Error::Refused(format!(
                "there is no installed persona {id:?}; install it first"
            )));
        };
        self.store
            .personas()
            .set_state(tenant, id, state, by)
            .await?;
        self.audit(
            tenant,
            by,
            CONSENT_STAGE,
            id,
            state,
            json!({
                "previous": before.state,
                "capabilities": before.capabilities,
                "source": before.source,
            }),
        )
        .await?;
        self.entry(tenant, id)
            .await?
            .ok_or_else(|| Error::Refused(format!("the persona {id:?} was removed meanwhile")))
    }

    /// The persona new sessions in a channel start with.
    pub async fn channel_default(
        &self,
        tenant: &TenantId,
        surface: Surface,
        chat_id: &str,
    ) -> Result<String> {
        Ok(self
            .store
            .personas()
            .channel_default(tenant, surface, chat_id)
            .await?
            .unwrap_or_else(|| DEFAULT_PERSONA.to_owned()))
    }

    /// The persona a new session in a channel starts with: the channel's default while it can
    /// be chosen, else workmate's default.
    pub async fn for_new_session(
        &self,
        tenant: &TenantId,
        surface: Surface,
        chat_id: &str,
    ) -> Result<Persona> {
        let id = self.channel_default(tenant, surface, chat_id).await?;
        if id == DEFAULT_PERSONA {
            return Ok(default_persona());
        }
        match self.usable(tenant, &id).await {
            Ok(persona) => Ok(persona),
            Err(Error::Store(e)) => Err(Error::Store(e)),
            Err(_) => Ok(default_persona()),
        }
    }

    /// Makes `id` the persona new sessions in a channel start with (it must be usable).
    pub async fn set_channel_default(
        &self,
        tenant: &TenantId,
        surface: Surface,
        chat_id: &str,
        id: &str,
        by: &UserId,
    ) -> Result<Persona> {
        let persona = self.usable(tenant, id).await?;
        self.store
            .personas()
            .set_channel_default(tenant, surface, chat_id, &persona.id, by)
            .await?;
        Ok(persona)
    }

    async fn audit(
        &self,
        tenant: &TenantId,
        by: &UserId,
        stage: &str,
        id: &str,
        state: PersonaState,
        mut detail: serde_json::Value,
    ) -> Result<()> {
        detail["persona"] = json!(id);
        self.store
            .audit()
            .append(
                tenant,
                &NewAuditRecord {
                    session_id: None,
                    actor: Some(by.as_str().to_owned()),
                    stage: stage.to_owned(),
                    tool: None,
                    status: Some(
                        serde_json::to_value(state)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default(),
                    ),
                    detail,
                },
            )
            .await?;
        Ok(())
    }
}

/// The skills a bundle ships that its persona keeps (the manifest's `skills:` list narrows
/// them), as the store keeps them.
fn shipped_skills(persona: &Persona, skills: &[crate::Skill]) -> Vec<SkillRecord> {
    skills
        .iter()
        .filter(|skill| {
            persona
                .skills
                .as_ref()
                .is_none_or(|keep| keep.contains(&skill.name))
        })
        .map(|skill| SkillRecord {
            scope: SkillScope::Persona,
            scope_key: persona.id.clone(),
            name: skill.name.clone(),
            description: skill.description.clone(),
            instructions: skill.instructions.clone(),
            allowed_tools: skill.allowed_tools.clone(),
            created_by: None,
            updated_at_ms: 0,
        })
        .collect()
}

/// The default persona.
pub fn default_persona() -> Persona {
    builtin(DEFAULT_PERSONA)
        .cloned()
        .unwrap_or_else(|| Persona {
            id: DEFAULT_PERSONA.to_owned(),
            name: "Coworker".to_owned(),
            icon: String::new(),
            tagline: String::new(),
            description: String::new(),
            version: String::new(),
            instructions: "You are workmate, an AI coworker in the team's chat.".to_owned(),
            tools: crate::ToolGrant::All,
            connectors: crate::ConnectorGrant::All,
            model: None,
            recommended_models: Vec::new(),
            mode: workmate_protocol::PermissionMode::Interactive,
            skills: None,
            mcp: None,
            builtin: true,
        })
}
