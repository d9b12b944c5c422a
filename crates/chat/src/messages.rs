//! A person's message on its way to a turn: their conversation's session, its card pump, the
//! files they shared, then the engine.
//!
//! Invariants: a recalled message is not passed on; a message for a session between turns is
//! retried briefly, then given back to the intake table rather than dropped; someone who may not
//! talk to a thread's session is told privately, once, and nothing is submitted; the intake row
//! of a submitted message is finished by the engine, with the message stored.

use std::time::Duration;

use tracing::{debug, info, warn};
use workmate_adapter::Inbound;
use workmate_protocol::Command;
use workmate_store::Delivery;

use crate::error::{ChatError, Result};
use crate::handle::{Chat, Slot};
use crate::identity::Person;
use crate::intake::Handled;
use crate::notify::{private, thread_of};
use crate::text::text_card;

/// Attempts to hand a message to a session that is between turns.
const BUSY_RETRIES: usize = 20;
/// The pause between those attempts.
const BUSY_PAUSE: Duration = Duration::from_millis(50);

/// Starts a turn with a person's message, or joins the running one.
pub(crate) async fn submit(
    chat: &Chat,
    slot: &Slot,
    person: &Person,
    inbound: &Inbound,
    delivery: &Delivery,
    text: &str,
    files: &[workmate_adapter::InboundFile],
) -> Result<Handled> {
    if text.trim().is_empty() && files.is_empty() {
        return Ok(Handled::Done);
    }
    // A message that can be recalled may have been, while this worker held it.
    if inbound.message_ref.is_some() && chat.store().intake().is_withdrawn(&delivery.key()).await? {
        info!(delivery = %delivery.delivery_id, "A recalled message is not passed on.");
        return Ok(Handled::Done);
    }
    let conversation = chat.conversation_of(slot, person, inbound).await?;
    let (session, created) = chat.open_conversation(person, &conversation.key).await?;
    if let Some(message_ref) = &inbound.message_ref {
        // So that recalling the message finds the turn it starts.
        chat.store()
            .message_sessions()
            .record(
                &person.tenant,
                inbound.surface.as_str(),
                message_ref,
                &session.id,
            )
            .await?;
    }
    if created {
        slot.pumps
            .ensure_created(&person.tenant, &session.id, conversation.target.clone())
            .await?;
    } else {
        slot.pumps
            .ensure(&person.tenant, &session.id, conversation.target.clone())
            .await?;
    }
    let fetched = crate::files::fetch(slot, files).await;
    let mut text = text.trim().to_owned();
    if text.is_empty() {
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        text = format!("(shared {})", names.join(", "));
    }
    for note in &fetched.notes {
        text.push('\n');
        text.push_str(note);
    }
    let command = Command::UserMessage {
        author: person.actor(),
        text,
        attachments: fetched.attachments,
    };
    // `Busy` only happens in the instant a turn is ending (too late to steer, not yet free).
    for _ in 0..BUSY_RETRIES {
        match chat
            .hub()
            .submit_delivery(
                &person.tenant,
                &session.id,
                command.clone(),
                delivery.key(),
                chat.inner.config.lease,
            )
            .await
        {
            Err(workmate_engine::Error::Busy(_)) => tokio::time::sleep(BUSY_PAUSE).await,
            // Anyone in the channel may write in a thread, but only its session's owner (or
            // an admin) talks to it unless it is shared; the others are told privately, once.
            Err(workmate_engine::Error::Forbidden(reason)) => {
                let why = format!(
                    "I did not pass your message on. {reason}. Start your own thread to ask \
                     me something, or ask an admin to share this one with everyone in it \
                     (`/workmate settings conversations shared`, typed in the thread)."
                );
                private(slot, &thread_of(inbound), person, &text_card(&why)).await;
                return Ok(Handled::Done);
            }
            Ok(workmate_engine::Accepted::Steered) if conversation.target.reply.is_some() => {
                // A platform that answers each message in its own reply (WeCom) would
                // leave this one empty: the answer goes to the message that started the
                // turn.
                let text = "↪️ Added to the answer in progress above.";
                let sent = workmate_adapter::with_retry(&slot.retry, || {
                    slot.platform.notice(&conversation.target, text)
                })
                .await;
                if let Err(e) = sent {
                    warn!(error = %e, "Cannot answer a message that joined a running turn.");
                }
                return Ok(Handled::ByEngine);
            }
            Ok(_) => return Ok(Handled::ByEngine),
            Err(e) => return Err(e.into()),
        }
    }
    debug!(tenant = %person.tenant, session = %session.id, "Session stayed busy; the message waits in the intake.");
    Err(ChatError::Busy(session.id))
}
