//! The one job path behind every stored delivery: identity, session, card pump, then what the
//! delivery asks for — a `/workmate` command, a reply token, a click, or a user message.
//!
//! Invariants: a job runs after the platform was acknowledged, so it reports failures to the
//! person in their thread, never to the platform's request; a deactivated account gets only a
//! private word why nothing runs; text that quotes a reply token answers the item through the
//! engine's authority checks, and text without one is an ordinary message (see `messages`).
//! The intake's workers reach this path only through [`DeliveryJobs`], its `Jobs` trait.

use tracing::{info, warn};
use workmate_adapter::{BoxFuture, CommandReply, Inbound, InboundKind};
use workmate_engine::parse_reply;
use workmate_store::Delivery;

use crate::commands::{self, COMMAND_WORD, Caller, thread_command};
use crate::error::{ChatError, Result};
use crate::handle::Chat;
use crate::intake::{Handled, Jobs};
use crate::notify::{private, thread_of};
use crate::text::text_card;

/// Reads a stored delivery and runs it.
async fn handle(chat: &Chat, delivery: &Delivery) -> Result<Handled> {
    let inbound: Inbound = serde_json::from_value(delivery.payload.clone())
        .map_err(|e| ChatError::Unreadable(e.to_string()))?;
    let slot = chat.slot(inbound.surface)?;
    let target = thread_of(&inbound);
    let mut person = match chat.person(&slot, &inbound).await {
        Err(ChatError::Deactivated(user)) => {
            info!(user = %user, "A deactivated user wrote; nothing runs.");
            let card = text_card(crate::error::DEACTIVATED);
            let sent = workmate_adapter::with_retry(&slot.retry, || {
                slot.platform
                    .private_notice(&target, &inbound.user.id, &card)
            })
            .await;
            if let Err(e) = sent {
                warn!(error = %e, "Cannot tell a deactivated user why nothing runs.");
            }
            return Ok(Handled::Done);
        }
        other => other?,
    };
    let gate = chat.directory_gate(&slot, &mut person, &inbound).await?;
    if let Some(card) = &gate.card {
        private(&slot, &target, &person, card).await;
    }
    if gate.stop {
        return Ok(Handled::Done);
    }
    match &inbound.kind {
        InboundKind::Message { text, files } => {
            if let Some(command) = thread_command(text) {
                let conversation = chat.conversation_of(&slot, &person, &inbound).await?;
                let caller = Caller::new(&person, &inbound).in_conversation(&conversation);
                let reply = commands::run(chat, &caller, command).await?;
                private(&slot, &target, &person, &reply.card_or_text()).await;
                return Ok(Handled::Done);
            }
            if parse_reply(text).is_some() {
                chat.answer_reply(&slot, &person, &target, text).await?;
                return Ok(Handled::Done);
            }
            crate::messages::submit(chat, &slot, &person, &inbound, delivery, text, files).await
        }
        InboundKind::Reply { text } => {
            if parse_reply(text).is_some() {
                chat.answer_reply(&slot, &person, &target, text).await?;
            }
            Ok(Handled::Done)
        }
        InboundKind::Click { action } => {
            chat.click(&slot, &person, &target, action).await?;
            Ok(Handled::Done)
        }
        // Acted on as it arrived (see `crate::recall`); never stored for a worker.
        InboundKind::Recall { .. } => Ok(Handled::Done),
        InboundKind::Command { text } => {
            // A slash command runs while its request waits; finding one here means the process
            // stopped mid-way. Its caller saw an error, so it is not applied again behind their
            // back.
            info!(delivery = %delivery.delivery_id, "A slash command cut short by a restart; not run again.");
            let why = format!(
                "Your command `{COMMAND_WORD} {}` was cut short by a restart and may not have \
                 been applied. Check, and send it again if needed.",
                text.trim()
            );
            private(&slot, &target, &person, &text_card(&why)).await;
            Ok(Handled::Done)
        }
    }
}

/// Runs a native slash command now (see [`Chat::command`]).
pub(crate) async fn slash_command(chat: &Chat, inbound: Inbound) -> CommandReply {
    match run_slash_command(chat, &inbound).await {
        Ok(reply) => reply,
        Err(ChatError::Deactivated(_)) => CommandReply {
            text: crate::error::DEACTIVATED.to_owned(),
            card: None,
        },
        Err(e) => {
            warn!(error = %e, "A slash command failed.");
            CommandReply {
                text: format!("workmate could not run that command: {e}"),
                card: None,
            }
        }
    }
}

async fn run_slash_command(chat: &Chat, inbound: &Inbound) -> Result<CommandReply> {
    let InboundKind::Command { text } = &inbound.kind else {
        return Err(ChatError::Unreadable("not a slash command".into()));
    };
    if chat.inner.stop.is_cancelled() {
        return Err(ChatError::ShuttingDown);
    }
    // Stored already claimed, so no worker runs it while its request waits for the reply.
    let Some(key) = crate::intake::table::accept_claimed(chat, inbound).await? else {
        return Ok(CommandReply {
            text: "This command was delivered twice; it was applied once, and not again.".into(),
            card: None,
        });
    };
    let intake = chat.store().intake();
    let outcome = async {
        let slot = chat.slot(inbound.surface)?;
        let mut person = chat.person(&slot, inbound).await?;
        let gate = chat.directory_gate(&slot, &mut person, inbound).await?;
        if gate.stop {
            let card = gate.card.unwrap_or_default();
            return Ok(commands::Outcome::refused(crate::directory::LINK_FIRST).with_card(card));
        }
        if let Some(card) = &gate.card {
            private(&slot, &thread_of(inbound), &person, card).await;
        }
        let caller = Caller::new(&person, inbound);
        commands::run(chat, &caller, text).await
    }
    .await;
    match &outcome {
        Ok(_) => intake.finish(&key).await?,
        Err(e) => intake.fail(&key, &e.to_string()).await?,
    }
    let reply = outcome?;
    Ok(CommandReply {
        card: reply.card.clone(),
        text: reply.text,
    })
}

/// Tells a thread that a message was given up, so nobody waits for an answer that will not come.
async fn tell_not_taken(chat: &Chat, delivery: &Delivery, error: &ChatError) {
    let Ok(inbound) = serde_json::from_value::<Inbound>(delivery.payload.clone()) else {
        return;
    };
    let Ok(slot) = chat.slot(inbound.surface) else {
        return;
    };
    let what = match inbound.kind {
        InboundKind::Message { .. } | InboundKind::Reply { .. } => "this message",
        InboundKind::Click { .. } => "this click",
        InboundKind::Command { .. } => "this command",
        InboundKind::Recall { .. } => "this recall",
    };
    let text = format!(
        "⚠️ workmate could not take {what} ({}). Please send it again in a moment.",
        error.for_people()
    );
    let target = thread_of(&inbound);
    let sent =
        workmate_adapter::with_retry(&slot.retry, || slot.platform.notice(&target, &text)).await;
    if let Err(e) = sent {
        warn!(error = %e, "Cannot tell a thread its message was not taken.");
    }
}

/// The job path as the intake's workers see it.
#[derive(Clone, Debug)]
pub(crate) struct DeliveryJobs(pub(crate) Chat);

impl Jobs for DeliveryJobs {
    fn run<'a>(&'a self, delivery: &'a Delivery) -> BoxFuture<'a, Result<Handled>> {
        Box::pin(handle(&self.0, delivery))
    }

    fn given_up<'a>(&'a self, delivery: &'a Delivery, error: &'a ChatError) -> BoxFuture<'a, ()> {
        Box::pin(tell_not_taken(&self.0, delivery, error))
    }
}
