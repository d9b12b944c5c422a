//! `/workmate persona …` and `/workmate skills`: who answers in a thread, which persona new
//! threads of a channel start with, an admin's consent to an installed persona, and the skills a
//! thread can load.
//!
//! Invariants: switching goes through the engine (`set_persona`), so a busy session or a
//! persona nobody consented to is refused there with the reason; choosing a channel's default
//! and consenting are for admins; consent is audited by the personas registry.

use std::fmt::Write as _;

use workmate_personas::{PersonaEntry, PersonaState, Personas, Skills, channel_key};
use workmate_protocol::Command;

use super::Change;
use super::{Caller, Outcome, role_name};
use crate::{Chat, Result};

impl Chat {
    fn personas(&self) -> Personas {
        Personas::new(self.store().clone())
    }

    /// Lists the personas, or switches the caller's thread to one.
    pub(super) async fn persona(&self, caller: &Caller, id: Option<String>) -> Result<Outcome> {
        let Some(id) = id else {
            return self.persona_list(caller).await;
        };
        let actor = caller.person.actor();
        self.on_session(caller, false, |_| {
            Change::Apply(
                Command::SetPersona {
                    persona: id.clone(),
                    actor,
                },
                format!("this thread now answers as the {id} persona"),
            )
        })
        .await
    }

    async fn persona_list(&self, caller: &Caller) -> Result<Outcome> {
        let tenant = &caller.person.tenant;
        let entries = self.personas().list(tenant).await?;
        let default = self
            .personas()
            .channel_default(tenant, caller.session_surface(), &caller.chat_id)
            .await?;
        let mut text = format!(
            "Personas (new threads here start as `{default}`; `/workmate persona <id>` switches \
             a thread):"
        );
        for entry in &entries {
            let _ = write!(text, "\n{}", line(entry));
        }
        Ok(Outcome::ok(text))
    }

    /// Makes a persona the one new threads of the caller's channel start with.
    pub(super) async fn persona_default(&self, caller: &Caller, id: &str) -> Result<Outcome> {
        if !caller.is_admin() {
            return Ok(Outcome::refused(format!(
                "Only admins choose a channel's persona; you are {}.",
                role_name(caller.person.role())
            )));
        }
        let chosen = self
            .personas()
            .set_channel_default(
                &caller.person.tenant,
                caller.session_surface(),
                &caller.chat_id,
                id,
                &caller.person.user.id,
            )
            .await;
        Ok(match chosen {
            Ok(persona) => Outcome::ok(format!(
                "New threads in this channel now start as {} (`{}`); threads already running keep \
                 theirs.",
                persona.name, persona.id
            )),
            Err(workmate_personas::Error::Store(e)) => return Err(e.into()),
            Err(refused) => Outcome::refused(format!("Refused: {refused}.")),
        })
    }

    /// An admin's consent to an installed persona (or its withdrawal).
    pub(super) async fn persona_consent(
        &self,
        caller: &Caller,
        id: &str,
        enabled: bool,
    ) -> Result<Outcome> {
        if !caller.is_admin() {
            return Ok(Outcome::refused(format!(
                "Only admins consent to a persona; you are {}.",
                role_name(caller.person.role())
            )));
        }
        let decided = self
            .personas()
            .set_enabled(&caller.person.tenant, id, enabled, &caller.person.user.id)
            .await;
        Ok(match decided {
            Ok(entry) if enabled => Outcome::ok(format!(
                "{} (`{}`) is enabled: you consented to {}. Anyone can now switch a thread to it.",
                entry.name,
                entry.id,
                capabilities(&entry)
            )),
            Ok(entry) => Outcome::ok(format!(
                "{} (`{}`) is turned off: nobody can switch to it; threads using it keep it.",
                entry.name, entry.id
            )),
            Err(workmate_personas::Error::Store(e)) => return Err(e.into()),
            Err(refused) => Outcome::refused(format!("Refused: {refused}.")),
        })
    }

    /// The skills a thread here can load.
    pub(super) async fn skills(&self, caller: &Caller) -> Result<Outcome> {
        let tenant = &caller.person.tenant;
        let persona = match self.thread_session_of(caller).await? {
            Some(session) => self.personas().resolve(tenant, &session.persona).await?,
            None => {
                self.personas()
                    .for_new_session(tenant, caller.session_surface(), &caller.chat_id)
                    .await?
            }
        };
        let channel = channel_key(caller.session_surface(), &caller.chat_id);
        let skills = Skills::new(self.store().clone())
            .visible(tenant, &persona, &channel)
            .await?;
        if skills.is_empty() {
            return Ok(Outcome::ok(format!(
                "No skills here yet for the {} persona. Teach workmate a procedure and ask it to \
                 save it as a skill (you approve each save).",
                persona.id
            )));
        }
        let mut text = format!(
            "Skills workmate can load here (persona {}; it loads one when it applies):",
            persona.id
        );
        for skill in &skills {
            let _ = write!(text, "\n• `{}`: {}", skill.name, skill.description);
        }
        Ok(Outcome::ok(text))
    }
}

fn line(entry: &PersonaEntry) -> String {
    let icon = if entry.icon.is_empty() {
        "•"
    } else {
        &entry.icon
    };
    let mut line = format!("{icon} {} `{}`", entry.name, entry.id);
    if !entry.tagline.is_empty() {
        let _ = write!(line, ": {}", entry.tagline);
    }
    match entry.state {
        PersonaState::Enabled if entry.builtin => {}
        PersonaState::Enabled => line.push_str(" (installed)"),
        PersonaState::Pending => {
            let _ = write!(
                line,
                " (waiting for an admin's consent to {}: `/workmate persona consent {}`)",
                capabilities(entry),
                entry.id
            );
        }
        PersonaState::Disabled => line.push_str(" (turned off by an admin)"),
    }
    line
}

fn capabilities(entry: &PersonaEntry) -> String {
    if entry.consent.capabilities.is_empty() {
        "nothing beyond conversation".to_owned()
    } else {
        entry.consent.capabilities.join(", ")
    }
}
