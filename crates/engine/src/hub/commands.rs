//! Applying a [`Command`] to a session.
//!
//! Invariants: a message for a busy session joins the running turn as steering; commands that
//! need an idle session (retry, compaction, model or persona switch) are refused while a turn runs, with a reason; every
//! change of session settings is announced by a state event. A command that came from an intake
//! row marks it done only once applied: a message in the transaction that stores it in history
//! (when its turn starts, when it is injected as steering, or in the next turn when it arrived too
//! late), any other command right after it took effect; a refused command leaves the row alone.
//! Only the session's owner or a tenant admin may message, stop, retry or reconfigure a session
//! (see `authority.rs`); anyone else is refused before anything changes.

use workmate_protocol::{
    Attachment, AttachmentKind, Command, ContentPart, EventKind, FileData, ImageUrl, NoticeKind,
    SessionId, TenantId, TurnId, UserContent,
};
use workmate_store::{IntakeKey, ResolveOutcome, SessionChange};

use super::SessionHub;
use crate::emitter::Step;
use crate::history::{ends_in_error, has_conversation, has_images};
use crate::runtime::Steering;
use crate::turn::TurnStart;
use crate::{Error, Result};

/// What a command did.
#[derive(Clone, Debug, PartialEq)]
pub enum Accepted {
    /// A turn started.
    TurnStarted(TurnId),
    /// The message joined the running turn.
    Steered,
    /// The running turn was asked to stop (or none was running).
    Interrupted {
        /// Whether a turn was running.
        was_running: bool,
    },
    /// An inbox answer was applied (or lost to an earlier one).
    Resolved(Box<ResolveOutcome>),
    /// A setting changed (or already had the value).
    Updated,
}

impl SessionHub {
    /// Applies a command from a surface to a session.
    pub async fn submit(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        command: Command,
    ) -> Result<Accepted> {
        self.submit_with(tenant, session, command, None).await
    }

    /// [`SessionHub::submit`] for a command that came from the intake row `delivery`, which is
    /// marked done once the command is applied: a user message in the same transaction that writes
    /// it to history (possibly later, when it steers a running turn; meanwhile the hub renews the
    /// row's `lease`), any other command as soon as it took effect. On an error (busy, rejected,
    /// shutting down, …) the row is left as it is, for the caller to retry or fail.
    pub async fn submit_delivery(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        command: Command,
        delivery: IntakeKey,
        lease: std::time::Duration,
    ) -> Result<Accepted> {
        if &delivery.tenant_id != tenant {
            return Err(Error::Rejected(format!(
                "delivery {} belongs to tenant {}, not {tenant}",
                delivery.delivery_id, delivery.tenant_id
            )));
        }
        let message = matches!(command, Command::UserMessage { .. });
        let accepted = self
            .submit_with(tenant, session, command, Some(delivery.clone()))
            .await?;
        if message {
            self.keep_leased(delivery, lease);
        } else {
            self.store().intake().finish(&delivery).await?;
        }
        Ok(accepted)
    }

    async fn submit_with(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        command: Command,
        delivery: Option<IntakeKey>,
    ) -> Result<Accepted> {
        if self.inner.shutdown.is_cancelled() {
            return Err(Error::ShuttingDown);
        }
        self.check_acting(tenant, session, &command).await?;
        let runtime = self.runtime(tenant, session).await?;
        match command {
            Command::UserMessage {
                author,
                text,
                attachments,
            } => {
                if text.trim().is_empty() && attachments.is_empty() {
                    return Err(Error::Rejected("the message is empty".into()));
                }
                check_attachments(&attachments)?;
                // A turn a crash cut comes first; this message then steers it.
                self.take_up_cut_turn(tenant, session, &runtime).await?;
                let steering = Steering {
                    author: author.clone(),
                    text: text.clone(),
                    delivery: delivery.clone(),
                    deferred: false,
                };
                if attachments.is_empty() && runtime.steer(steering) {
                    return Ok(Accepted::Steered);
                }
                self.hold_lease(tenant, session, &runtime).await?;
                let cancel = runtime
                    .try_claim()
                    .ok_or_else(|| Error::Busy(session.clone()))?;
                let content = content_with(text.clone(), attachments).await;
                let start = TurnStart::Message {
                    author,
                    text,
                    content,
                    deliveries: delivery.into_iter().collect(),
                };
                Ok(Accepted::TurnStarted(
                    self.spawn_turn(tenant, session, runtime, cancel, start),
                ))
            }
            Command::ResolveInbox {
                item_id,
                resolution,
                actor,
                via,
            } => {
                let item = self.store().inbox().get(tenant, &item_id).await?;
                if item.is_none_or(|item| &item.session_id != session) {
                    return Err(Error::Rejected(format!(
                        "inbox item {item_id} does not belong to session {session}"
                    )));
                }
                Ok(Accepted::Resolved(Box::new(
                    self.resolve(tenant, &item_id, &resolution, &actor, via)
                        .await?,
                )))
            }
            Command::Interrupt { .. } => Ok(Accepted::Interrupted {
                was_running: runtime.interrupt(),
            }),
            Command::SetMode { mode, actor } => {
                let record = runtime.record();
                if record.mode != mode {
                    // The mode and the event announcing it are stored together.
                    let step = Step {
                        events: vec![EventKind::ModeChanged {
                            from: record.mode,
                            to: mode,
                            by: actor,
                        }],
                        change: SessionChange {
                            mode: Some(mode),
                            ..SessionChange::default()
                        },
                        ..Step::default()
                    };
                    self.emitter(tenant, session)
                        .await?
                        .write(step)?
                        .durable()
                        .await?;
                }
                Ok(Accepted::Updated)
            }
            Command::SwitchModel { model, .. } => self.switch_model(tenant, session, model).await,
            Command::SetPersona { persona, .. } => {
                self.switch_persona(tenant, session, persona).await
            }
            Command::Retry { .. } => {
                let history = self.read_history(&runtime, tenant, session).await?;
                if !ends_in_error(&history) {
                    return Err(Error::Rejected(
                        "nothing to retry: the last turn did not fail".into(),
                    ));
                }
                self.start_idle_turn(tenant, session, runtime, TurnStart::Retry)
                    .await
            }
            Command::Compact { .. } => {
                let history = self.read_history(&runtime, tenant, session).await?;
                let view = runtime.record().compaction;
                if !crate::compaction::can_compact(&history, view.as_ref()) {
                    return Err(Error::Rejected(
                        "nothing to compact yet: the conversation has no earlier turn to summarize"
                            .into(),
                    ));
                }
                self.start_idle_turn(tenant, session, runtime, TurnStart::Compact)
                    .await
            }
            other => Err(Error::Rejected(format!(
                "command {} is not supported by this engine",
                other.name()
            ))),
        }
    }

    /// Starts `start` as a turn of an idle session this process may drive; busy otherwise.
    async fn start_idle_turn(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        runtime: std::sync::Arc<crate::runtime::SessionRuntime>,
        start: TurnStart,
    ) -> Result<Accepted> {
        self.hold_lease(tenant, session, &runtime).await?;
        let cancel = runtime
            .try_claim()
            .ok_or_else(|| Error::Busy(session.clone()))?;
        Ok(Accepted::TurnStarted(
            self.spawn_turn(tenant, session, runtime, cancel, start),
        ))
    }

    async fn switch_model(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        model: String,
    ) -> Result<Accepted> {
        let model = model.trim().to_owned();
        if model.is_empty() {
            return Err(Error::Rejected("name a model, e.g. scripted:demo".into()));
        }
        let runtime = self.runtime(tenant, session).await?;
        // Claiming the turn slot keeps a turn from starting while the model changes.
        let _slot = runtime
            .try_claim()
            .ok_or_else(|| Error::Busy(session.clone()))?;
        let result = self.apply_model(tenant, session, model).await;
        runtime.release();
        result
    }

    async fn apply_model(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        model: String,
    ) -> Result<Accepted> {
        let emit = self.emitter(tenant, session).await?;
        let history = self.read_history(&emit.runtime, tenant, session).await?;
        let record = emit.runtime.record();
        if record.model == model {
            return Ok(Accepted::Updated);
        }
        self.inner
            .deps
            .providers
            .resolve(&model)
            .map_err(|e| Error::Rejected(e.message))?;
        let mut text = format!("Model switched to {model}");
        let mut messages = Vec::new();
        if has_conversation(&history) {
            if has_images(&history) && !self.inner.deps.providers.capabilities(&model).vision {
                text.push_str(" — earlier images can't be read by this model");
            }
            messages.push(workmate_protocol::Message::Notice {
                kind: NoticeKind::ModelSwitch,
                text: Some(text.clone()),
                ts: self.inner.deps.clock.now_ms(),
            });
        }
        // The model, its notice and the event announcing it are stored together.
        let step = Step {
            messages,
            events: vec![EventKind::ModelSwitched {
                from: Some(record.model),
                to: model.clone(),
                text,
            }],
            change: SessionChange {
                model: Some(model),
                ..SessionChange::default()
            },
            ..Step::default()
        };
        emit.write(step)?.durable().await?;
        Ok(Accepted::Updated)
    }
}

/// Most attachments one message may carry.
const MAX_ATTACHMENTS: usize = 8;

/// Rejects attachments a model could not be given: too many, or data that is not what its kind
/// says.
fn check_attachments(attachments: &[Attachment]) -> Result<()> {
    if attachments.len() > MAX_ATTACHMENTS {
        return Err(Error::Rejected(format!(
            "at most {MAX_ATTACHMENTS} attachments per message; this one has {}",
            attachments.len()
        )));
    }
    for attachment in attachments {
        let ok = match attachment.kind {
            AttachmentKind::Image => {
                attachment.data.starts_with("data:image/") && attachment.data.contains(";base64,")
            }
            AttachmentKind::Pdf => attachment.data.starts_with("data:application/pdf;base64,"),
            AttachmentKind::Document => {
                attachment.data.starts_with("data:") && attachment.data.contains(";base64,")
            }
            _ => true,
        };
        if !ok {
            return Err(Error::Rejected(format!(
                "attachment {:?} is not a base64 data URL of its kind \
                 (data:image/…;base64, data:application/pdf;base64, or, for a document, \
                 data:<its type>;base64,)",
                attachment.name
            )));
        }
    }
    Ok(())
}

/// The user content of a message with attachments (a PDF's text extracted once, here).
async fn content_with(text: String, attachments: Vec<Attachment>) -> UserContent {
    if attachments.is_empty() {
        return UserContent::Text(text);
    }
    let mut parts = vec![ContentPart::Text { text }];
    for attachment in attachments {
        parts.push(match attachment.kind {
            AttachmentKind::Image => ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: attachment.data,
                },
            },
            AttachmentKind::Pdf => ContentPart::File {
                file: FileData {
                    text: crate::documents::pdf_text(attachment.data.clone()).await,
                    filename: attachment.name,
                    file_data: attachment.data,
                },
            },
            AttachmentKind::Document => ContentPart::Text {
                text: match crate::documents::office_part(attachment.name.clone(), attachment.data)
                    .await
                {
                    Some(text) => text,
                    None => format!(
                        "[Attached document {} — no text could be read from it (workmate reads \
                         Word .docx and Excel .xlsx files)]",
                        attachment.name
                    ),
                },
            },
            _ => ContentPart::Text {
                text: format!("[Attached file: {}]\n{}", attachment.name, attachment.data),
            },
        });
    }
    UserContent::Parts(parts)
}
