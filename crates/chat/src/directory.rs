//! Chat accounts and the company directory: the one-time "link your account" card, the e-mail
//! shortcut, and what an unlinked account may do where the tenant requires a link.
//!
//! Invariants, under the tenant setting `identity_binding` (see [`workmate_engine::binding`]):
//! - an account already linked, or in a tenant that does not require a link, passes unchanged;
//! - with `match: "email"`, an account whose platform profile shows the e-mail address of
//!   exactly one known directory subject is linked to it at once (audited, `via: email`);
//! - otherwise the account gets the card, privately, the first time workmate sees it (once,
//!   whichever replica sees it first), and whenever it asks with `/workmate link`;
//! - an unlinked account chats only where `unbound_may_chat` allows; elsewhere each message gets
//!   the card again instead of an answer, and only `help`, `whoami` and `link` run. Clicks go on
//!   to the engine, which refuses an unlinked account's approvals there either way; thread text
//!   that does not address workmate never brings a card.
//!
//! The link itself is made by whoever implements [`AccountLinks`] (the server: a signed,
//! expiring token for its single-sign-on pages); without one, the card says single sign-on is
//! not set up.

use std::sync::Arc;

use tracing::{info, warn};
use workmate_adapter::{Inbound, InboundKind};
use workmate_cards::{Block, Card, Inline, RichText};
use workmate_engine::binding::{BindingPolicy, MatchOn, binding_policy};
use workmate_protocol::Surface;
use workmate_store::DirectoryFacts;

use crate::account_links::{AccountLinks, LinkRequest};
use crate::commands::{ChatCommand, parse_command, thread_command};
use crate::error::Result;
use crate::handle::{Chat, Slot};
use crate::identity::Person;

/// What an unlinked account is told when nothing runs for it.
pub(crate) const LINK_FIRST: &str =
    "Link your chat account to your company account first: see the card workmate sent you.";

/// What a delivery from an unlinked account may do, and the card to show its person.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Gate {
    /// Nothing more runs: the card says why.
    pub(crate) stop: bool,
    /// The "link your account" card, to show the person privately.
    pub(crate) card: Option<Card>,
}

impl Chat {
    /// Sets what makes "link your account" URLs (the server, when single sign-on is set up).
    pub fn set_account_links(&self, links: Arc<dyn AccountLinks>) {
        if self.inner.links.set(links).is_err() {
            warn!("Account links were set twice; the first stays.");
        }
    }

    /// Applies the tenant's `identity_binding` to a delivery from `person` (see the module
    /// docs); may link the account on the spot, which updates `person`.
    pub(crate) async fn directory_gate(
        &self,
        slot: &Slot,
        person: &mut Person,
        inbound: &Inbound,
    ) -> Result<Gate> {
        if person.user.sso_subject.is_some() {
            return Ok(Gate::default());
        }
        let settings = self.store().tenants().settings(&person.tenant).await?;
        let policy = binding_policy(&settings);
        if !policy.required {
            return Ok(Gate::default());
        }
        // Text in a thread that does not address workmate is people talking among
        // themselves: no card for it (a reply token in it still meets the engine's refusal).
        if matches!(inbound.kind, InboundKind::Reply { .. }) {
            return Ok(Gate::default());
        }
        if policy.match_on == MatchOn::Email && self.link_by_email(slot, person).await? {
            return Ok(Gate::default());
        }
        let first = self
            .store()
            .bindings()
            .offer_link(&person.tenant, &person.user.id)
            .await?;
        let allowed_anyway = match &inbound.kind {
            InboundKind::Click { .. } => true,
            InboundKind::Message { text, .. } => thread_command(text)
                .and_then(|rest| parse_command(rest).ok())
                .is_some_and(|c| always_allowed(&c)),
            InboundKind::Command { text } => parse_command(text).is_ok_and(|c| always_allowed(&c)),
            InboundKind::Reply { .. } | InboundKind::Recall { .. } => true,
        };
        let card = || Some(self.link_card(person, slot.platform.surface(), Some(policy)));
        if allowed_anyway || policy.unbound_may_chat {
            return Ok(Gate {
                stop: false,
                card: if first { card() } else { None },
            });
        }
        Ok(Gate {
            stop: true,
            card: card(),
        })
    }

    /// Links `person` to the one known subject with their profile's e-mail address, if there is
    /// one; whether it did.
    async fn link_by_email(&self, slot: &Slot, person: &mut Person) -> Result<bool> {
        let Some(email) = slot.platform.profile(&person.platform_id).await.email else {
            return Ok(false);
        };
        let bindings = self.store().bindings();
        let Some(known) = bindings.subject_with_email(&email).await? else {
            return Ok(false);
        };
        let Some(subject) = known.sso_subject.clone() else {
            return Ok(false);
        };
        let facts = DirectoryFacts {
            subject,
            email: Some(email),
            groups: known.directory_groups.clone(),
            role: None,
        };
        match bindings
            .bind(&person.tenant, &person.user.id, &facts, "email")
            .await
        {
            Ok((user, _)) => {
                info!(tenant = %person.tenant, user = %user.id, "A chat account was linked by its e-mail address.");
                person.user = user;
                Ok(true)
            }
            Err(workmate_store::Error::Invalid(reason)) => {
                warn!(tenant = %person.tenant, user = %person.user.id, %reason, "A chat account could not be linked by e-mail.");
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The "link your account" card for `person` on `platform`; `policy` is the tenant's when it
    /// requires a link.
    pub(crate) fn link_card(
        &self,
        person: &Person,
        platform: Surface,
        policy: Option<BindingPolicy>,
    ) -> Card {
        let mut blocks = vec![Block::Heading {
            text: "Link your account".into(),
        }];
        if let Some(subject) = &person.user.sso_subject {
            blocks.push(text(&format!(
                "Your chat account is already linked to the company directory account \
                 `{subject}`."
            )));
            return Card { blocks };
        }
        let why = match policy {
            Some(p) if p.unbound_may_chat => {
                "This workspace links chat accounts to company accounts. Until yours is linked, \
                 you can talk to workmate but not approve anything."
            }
            Some(_) => {
                "This workspace links chat accounts to company accounts. workmate answers you \
                 once yours is linked."
            }
            None => {
                "Link your chat account to your company account, so your directory groups decide \
                 what you may approve."
            }
        };
        blocks.push(text(why));
        match self.inner.links.get() {
            Some(links) => {
                let url = links.link_url(&LinkRequest {
                    tenant: person.tenant.clone(),
                    platform,
                    platform_user: person.platform_id.clone(),
                    user: person.user.id.clone(),
                    name: person.user.display_name.clone(),
                });
                blocks.push(Block::Text(RichText(vec![Inline::Link {
                    text: "Link my account".into(),
                    url,
                }])));
                blocks.push(Block::Context(vec![Inline::Text(
                    "The link is yours alone and works for 24 hours; you sign in with your \
                     company account and confirm. Ask again any time with `/workmate link`."
                        .into(),
                )]));
            }
            None => blocks.push(Block::Context(vec![Inline::Text(
                "Single sign-on is not set up on this workmate server yet ([auth.oidc]); ask \
                 an admin."
                    .into(),
            )])),
        }
        Card { blocks }
    }
}

/// What an unlinked account may run anywhere: the commands that explain and link.
fn always_allowed(command: &ChatCommand) -> bool {
    matches!(
        command,
        ChatCommand::Help | ChatCommand::Whoami | ChatCommand::Link
    )
}

fn text(text: &str) -> Block {
    Block::Text(RichText(vec![Inline::Text(text.to_owned())]))
}
