//! `/workmate connectors …`: what the caller has connected, and connecting or disconnecting a
//! connector. Connecting answers with a private card holding a link to workmate's own connect
//! page (a form, or the other system's sign-in), so no credential is ever typed into a chat.
//! Only admins connect or disconnect for the whole tenant (`team`); both are audited.

use serde_json::json;
use workmate_cards::{Block, Card, Inline, RichText};
use workmate_connectors::{AuthKind, ConnectorSource, Descriptor, Owner};
use workmate_store::NewAuditRecord;

use super::{Caller, ConnectorsAction, Outcome, role_name};
use crate::connect_links::{ConnectLink, ConnectRequest};
use crate::{Chat, Result};

impl Chat {
    /// Runs one `/workmate connectors` action.
    pub(super) async fn connectors_command(
        &self,
        caller: &Caller,
        action: ConnectorsAction,
    ) -> Result<Outcome> {
        let Some(connectors) = self.inner.connectors.get() else {
            return Ok(Outcome::refused(
                "Connectors are off on this workmate: they keep people's credentials in the \
                 vault, and no vault master key is configured ([vault] key_file); ask an admin.",
            ));
        };
        let team = matches!(
            action,
            ConnectorsAction::Connect { team: true, .. }
                | ConnectorsAction::Disconnect { team: true, .. }
        );
        if team && !caller.is_admin() {
            return Ok(Outcome::refused(format!(
                "Only admins connect or disconnect a connector for everyone; you are {}. Leave \
                 out `team` to connect your own account.",
                role_name(caller.person.role())
            )));
        }
        if team && !caller.direct && matches!(action, ConnectorsAction::Connect { .. }) {
            return Ok(Outcome::refused(
                "A link that connects an account for everyone is only given in a direct message \
                 with me: ask there.",
            ));
        }
        match action {
            ConnectorsAction::List => self.list_connectors(connectors, caller).await,
            ConnectorsAction::Connect { name, team } => {
                let Some(descriptor) = connectors.descriptor(&name) else {
                    return Ok(unknown(connectors, &name));
                };
                Ok(self.connect_card(caller, descriptor, team))
            }
            ConnectorsAction::Disconnect { name, team } => {
                let Some(descriptor) = connectors.descriptor(&name) else {
                    return Ok(unknown(connectors, &name));
                };
                let person = &caller.person;
                let owner = (!team).then_some(&person.user.id);
                let removed = match connectors.disconnect(&person.tenant, owner, &name).await {
                    Ok(removed) => removed,
                    Err(e) => return Ok(Outcome::refused(format!("Nothing changed: {e}."))),
                };
                let whose = if team { "the team's" } else { "your" };
                if !removed {
                    return Ok(Outcome::refused(format!(
                        "{} has no {whose} credentials to remove (see /workmate connectors).",
                        descriptor.title
                    )));
                }
                let record = NewAuditRecord {
                    session_id: None,
                    actor: Some(person.user.id.as_str().to_owned()),
                    stage: "connector_disconnected".into(),
                    tool: None,
                    status: Some("ok".into()),
                    detail: json!({"connector": name, "team": team}),
                };
                self.store().audit().append(&person.tenant, &record).await?;
                Ok(Outcome::ok(format!(
                    "{} is disconnected: {whose} credentials are removed, from the next turn on.",
                    descriptor.title
                )))
            }
        }
    }

    async fn list_connectors(
        &self,
        connectors: &ConnectorSource,
        caller: &Caller,
    ) -> Result<Outcome> {
        let person = &caller.person;
        let status = match connectors.status(&person.tenant, &person.user.id).await {
            Ok(status) => status,
            Err(e) => return Ok(Outcome::refused(format!("Try again in a moment: {e}."))),
        };
        let mut text = String::from("Connectors:");
        let mut blocks = vec![Block::Heading {
            text: "Connectors".into(),
        }];
        for entry in &status {
            let d = &entry.descriptor;
            let state = match entry.connected {
                Some(Owner::User) => "connected (your account)",
                Some(Owner::Tenant) => "connected (the team's account)",
                None => "not connected",
            };
            text.push_str(&format!("\n• {} (`{}`): {state}", d.title, d.name));
            let mut line = vec![
                Inline::Bold(d.title.to_owned()),
                Inline::Text(" ".into()),
                Inline::Code(d.name.to_owned()),
                Inline::Text(format!(": {state}. ")),
            ];
            if let Some(link) = self.connect_link(caller, d, false) {
                let verb = if entry.connected == Some(Owner::User) {
                    "Reconnect"
                } else {
                    "Connect"
                };
                line.push(Inline::Link {
                    text: verb.into(),
                    url: link.url,
                });
                line.push(Inline::Text(" (code ".into()));
                line.push(Inline::Code(link.code));
                line.push(Inline::Text(")".into()));
            }
            blocks.push(Block::Text(RichText(line)));
        }
        let valid = self
            .inner
            .connect_links
            .get()
            .map_or("a while", |l| l.valid_for());
        blocks.push(Block::Context(vec![Inline::Text(format!(
            "The links are yours alone, work once and for {valid}; the page asks for the code \
             beside the link. Your own account wins over the team's. `/workmate connectors \
             disconnect <name>` removes yours."
        ))]));
        Ok(Outcome::ok(text).with_card(Card { blocks }))
    }

    /// The private card with the link that connects `descriptor`.
    fn connect_card(&self, caller: &Caller, descriptor: &Descriptor, team: bool) -> Outcome {
        let Some(link) = self.connect_link(caller, descriptor, team) else {
            return Outcome::refused(
                "Connecting is not set up on this workmate (no connect pages); ask an admin.",
            );
        };
        let whom = if team {
            "for everyone in this workspace (people who connect their own account use theirs)"
        } else {
            "as you"
        };
        let how = match descriptor.auth {
            AuthKind::Oauth => "You sign in at the other system, or paste a token there.",
            AuthKind::Token | AuthKind::ApiToken => {
                "The form asks for the token; it is stored encrypted and never shown again."
            }
        };
        let asks: Vec<String> = descriptor
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.label.to_owned())
            .collect();
        let valid = self
            .inner
            .connect_links
            .get()
            .map_or("a while", |l| l.valid_for());
        let mut blocks = vec![
            Block::Heading {
                text: format!("Connect {}", descriptor.title),
            },
            Block::Text(RichText(vec![Inline::Text(format!(
                "workmate will use {} {whom}. {how}",
                descriptor.title
            ))])),
        ];
        if !asks.is_empty() {
            blocks.push(Block::Fields(vec![("It asks for".into(), asks.join(", "))]));
        }
        blocks.push(Block::Text(RichText(vec![Inline::Link {
            text: format!("Connect {}", descriptor.title),
            url: link.url,
        }])));
        blocks.push(Block::Fields(vec![("Confirmation code".into(), link.code)]));
        blocks.push(Block::Context(vec![Inline::Text(format!(
            "The link is yours alone and works once, for {valid}; the page asks for the code. \
             Never paste a token into a chat."
        ))]));
        Outcome::ok(format!(
            "Open the link on the card to connect {}.",
            descriptor.title
        ))
        .with_card(Card { blocks })
    }

    fn connect_link(
        &self,
        caller: &Caller,
        descriptor: &Descriptor,
        team: bool,
    ) -> Option<ConnectLink> {
        let links = self.inner.connect_links.get()?;
        let person = &caller.person;
        Some(links.connect_link(&ConnectRequest {
            tenant: person.tenant.clone(),
            user: person.user.id.clone(),
            name: person.user.display_name.clone(),
            connector: descriptor.name.to_owned(),
            team,
        }))
    }
}

fn unknown(connectors: &ConnectorSource, name: &str) -> Outcome {
    let names: Vec<&str> = connectors.descriptors().iter().map(|d| d.name).collect();
    Outcome::refused(format!(
        "There is no connector `{name}`; there are {}.",
        names.join(", ")
    ))
}
