//! The skills a session can see, and the catalog that puts them in a model's context.
//!
//! Invariants: a session sees the tenant's skills, then its persona's bundle (narrowed by the
//! manifest's `skills:` list), then its channel's; a later store overrides an earlier one of the
//! same name. Only names and descriptions reach the context; instructions arrive through
//! `load_skill`.

use std::collections::BTreeMap;

use workmate_protocol::{Surface, TenantId, UserId};
use workmate_store::{SkillRecord, Store};

pub use workmate_store::SkillScope;

use crate::persona::Persona;
use crate::skill::Skill;
use crate::{Error, Result};

/// The skills kept in the store.
#[derive(Clone, Debug)]
pub struct Skills {
    store: Store,
}

impl Skills {
    /// The skills kept in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// What a session with `persona` in `channel` (`<surface>:<chat id>`) can load, by name.
    pub async fn visible(
        &self,
        tenant: &TenantId,
        persona: &Persona,
        channel: &str,
    ) -> Result<Vec<Skill>> {
        let records = self
            .store
            .skills()
            .visible(tenant, &persona.id, channel)
            .await?;
        let mut by_name: BTreeMap<String, Skill> = BTreeMap::new();
        for record in records {
            let narrowed_out = record.scope == SkillScope::Persona
                && persona
                    .skills
                    .as_ref()
                    .is_some_and(|keep| !keep.contains(&record.name));
            if narrowed_out {
                continue;
            }
            by_name.insert(
                record.name.clone(),
                Skill {
                    name: record.name,
                    description: record.description,
                    instructions: record.instructions,
                    allowed_tools: record.allowed_tools,
                },
            );
        }
        Ok(by_name.into_values().collect())
    }

    /// Saves a skill into the tenant's store or one channel's, replacing one of the same name.
    pub async fn save(
        &self,
        tenant: &TenantId,
        scope: SkillScope,
        channel: &str,
        skill: &Skill,
        by: &UserId,
    ) -> Result<()> {
        let scope_key = match scope {
            SkillScope::Tenant => String::new(),
            SkillScope::Channel if !channel.is_empty() => channel.to_owned(),
            SkillScope::Channel => {
                return Err(Error::Refused(
                    "this session is not in a channel: save the skill with scope \"tenant\"".into(),
                ));
            }
            SkillScope::Persona => {
                return Err(Error::Refused(
                    "persona skills ship in the persona's bundle; save to \"channel\" or \"tenant\"".into(),
                ));
            }
        };
        self.store
            .skills()
            .put(
                tenant,
                &SkillRecord {
                    scope,
                    scope_key,
                    name: skill.name.clone(),
                    description: skill.description.clone(),
                    instructions: skill.instructions.clone(),
                    allowed_tools: skill.allowed_tools.clone(),
                    created_by: Some(by.clone()),
                    updated_at_ms: 0,
                },
            )
            .await?;
        Ok(())
    }
}

/// The key of a channel's skill store: `<surface>:<chat id>`.
pub fn channel_key(surface: Surface, chat_id: &str) -> String {
    format!("{}:{chat_id}", surface.as_str())
}

/// The catalog line block for a model's context, or `None` when there are no skills.
pub fn catalog(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut text = String::from(
        "Available skills — call load_skill(name) to get a skill's instructions before following it:",
    );
    for skill in skills {
        text.push_str("\n- ");
        text.push_str(&skill.name);
        text.push_str(": ");
        text.push_str(&skill.description);
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_lists_names_and_descriptions_only() {
        let skill = Skill::new("triage", "Sort incoming bugs", "1. Secret step.", vec![]).unwrap();
        let text = catalog(&[skill]).unwrap();
        assert!(text.starts_with("Available skills — call load_skill(name)"));
        assert!(text.contains("\n- triage: Sort incoming bugs"));
        assert!(!text.contains("Secret step"));
        assert_eq!(catalog(&[]), None);
    }
}
