//! Long-lived connection modes: Slack Socket Mode, the Feishu long connection, DingTalk Stream
//! and the WeCom smart-robot WebSocket. Each is a [`Client`], for which the kit implements the
//! chat layer's [`Connection`].
//!
//! Invariants: a connection acknowledges a delivery to its platform only after the
//! [`InboundSink`] said it is durable ([`Taken::Stored`] or [`Taken::Duplicate`]); one the sink
//! could not take is left unacknowledged, so the platform delivers it again; a connection is
//! held under one lease per platform app (`<surface>:<app id>`), so replicas sharing a database
//! open it once between them.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use workmate_cards::Card;
use workmate_protocol::Surface;

use crate::{BoxFuture, Inbound};

/// What the sink did with a delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// Stored: it will run, exactly once, even across a crash. Acknowledge it.
    Stored,
    /// Seen before: acknowledge it and do nothing.
    Duplicate,
}

/// The sink could not store a delivery (the database is down, or the service is stopping):
/// leave it unacknowledged so the platform delivers it again.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the delivery was not stored: {0}")]
pub struct NotTaken(pub String);

/// The reply to a native slash command, shown to its caller only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandReply {
    /// The reply as plain text (the fallback where a card cannot be shown).
    pub text: String,
    /// The reply as a card, when it has buttons.
    pub card: Option<Card>,
}

/// How a click's immediate answer is shown to the person who clicked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToastKind {
    /// Neutral news ("Stopping…").
    Info,
    /// The click did what it said ("Approved").
    Success,
    /// The click changed nothing, and why is not an error ("Already approved by Ana").
    Warning,
    /// The click was refused ("Only approvers may answer this").
    Error,
}

/// The answer to a card click that a platform shows at once, in the click's own response
/// (Feishu and DingTalk card callbacks, WeCom template-card events): a toast for the clicker
/// and, when the card changed, the card as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClickReply {
    /// How the toast looks.
    pub kind: ToastKind,
    /// What the toast says.
    pub toast: String,
    /// The clicked card as it is after the click, when the click changed it (or, for a refused
    /// click, as it is, so a platform that can show one person their own copy shows the refusal
    /// on it: see [`ClickReply::refused_card`]); `None` leaves the card as it is.
    pub card: Option<Card>,
}

impl ClickReply {
    /// For a refused click whose card is known: the card as only the clicker should see it,
    /// the refusal as its last line. WeCom and DingTalk show no toast, but can answer a click
    /// with a card for the clicker alone.
    pub fn refused_card(&self) -> Option<Card> {
        if self.kind != ToastKind::Error {
            return None;
        }
        let mut card = self.card.clone()?;
        card.blocks.push(workmate_cards::Block::Context(vec![
            workmate_cards::Inline::Text(format!("⛔ {}", self.toast)),
        ]));
        Some(card)
    }

    /// A click stored to run later: nothing to show yet but that it arrived.
    pub fn received() -> Self {
        Self {
            kind: ToastKind::Info,
            toast: "Received.".into(),
            card: None,
        }
    }
}

/// Where a connection hands what it receives: the chat layer.
pub trait InboundSink: Send + Sync + Debug {
    /// Stores a message, click or reply durably; it runs later.
    fn deliver(&self, inbound: Inbound) -> BoxFuture<'_, Result<Taken, NotTaken>>;

    /// Runs a native slash command now; its reply travels back with the acknowledgement.
    fn command(&self, inbound: Inbound) -> BoxFuture<'_, CommandReply>;

    /// Runs a card click now, for a platform whose click response shows its outcome (a toast
    /// and the updated card). A click delivered again is not applied twice. By default the click
    /// is only stored, to run later.
    fn click(&self, inbound: Inbound) -> BoxFuture<'_, Result<ClickReply, NotTaken>> {
        Box::pin(async move {
            self.deliver(inbound).await?;
            Ok(ClickReply::received())
        })
    }
}

/// A long-lived connection to a platform, held by one task until cancelled.
pub trait Connection: Send + Sync + Debug {
    /// The platform it connects to.
    fn surface(&self) -> Surface;

    /// The name of the lease a process must hold to open it: one per platform app, so that
    /// replicas sharing a database open it once between them.
    fn lease_name(&self) -> String {
        self.surface().as_str().to_owned()
    }

    /// Connects, reconnects with backoff when dropped, and hands every delivery to `sink`, until
    /// `stop` is cancelled.
    fn run(
        self: Arc<Self>,
        sink: Arc<dyn InboundSink>,
        stop: CancellationToken,
    ) -> BoxFuture<'static, ()>;
}

/// A platform's long connection in the few lines that differ between platforms; the kit
/// implements [`Connection`] for it.
pub trait Client: Send + Sync + Debug + 'static {
    /// The platform it connects to.
    const SURFACE: Surface;

    /// The app (or bot) it connects as, when each app has its own connection; `None`: one
    /// connection per platform.
    fn app_id(&self) -> Option<&str>;

    /// Runs the platform's client with a handler feeding `sink`, until `stop` is cancelled;
    /// `Err` when it gave up.
    fn serve(
        self: Arc<Self>,
        sink: Arc<dyn InboundSink>,
        stop: CancellationToken,
    ) -> impl Future<Output = Result<(), String>> + Send;
}

impl<C: Client> Connection for C {
    fn surface(&self) -> Surface {
        C::SURFACE
    }

    fn lease_name(&self) -> String {
        let surface = C::SURFACE.as_str();
        self.app_id()
            .map_or_else(|| surface.to_owned(), |id| format!("{surface}:{id}"))
    }

    fn run(
        self: Arc<Self>,
        sink: Arc<dyn InboundSink>,
        stop: CancellationToken,
    ) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            if let Err(error) = self.serve(sink, stop).await {
                let surface = C::SURFACE.as_str();
                tracing::error!(%surface, %error, "The long connection stopped.");
            }
        })
    }
}
