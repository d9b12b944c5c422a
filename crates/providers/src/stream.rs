//! The bounded channel a provider streams through.
//!
//! Invariant: the channel holds at most [`CAPACITY`] undelivered events, so a fast provider waits
//! for a slow consumer instead of buffering without bound; dropping the [`ModelStream`] makes every
//! later [`StreamSender::send`] return `false`, which is the producer's signal to stop.

use tokio::sync::mpsc;

use crate::{ProviderError, StreamEvent};

/// Undelivered events a stream may hold.
pub(crate) const CAPACITY: usize = 64;

/// The consumer's end: what the engine reads.
#[derive(Debug)]
pub struct ModelStream {
    rx: mpsc::Receiver<Result<StreamEvent, ProviderError>>,
}

/// The producer's end: what a provider writes.
#[derive(Clone, Debug)]
pub struct StreamSender {
    tx: mpsc::Sender<Result<StreamEvent, ProviderError>>,
}

impl ModelStream {
    /// A connected pair.
    pub fn channel() -> (StreamSender, ModelStream) {
        let (tx, rx) = mpsc::channel(CAPACITY);
        (StreamSender { tx }, ModelStream { rx })
    }

    /// A stream that fails at once (a provider that cannot even start).
    pub fn failed(error: ProviderError) -> ModelStream {
        let (tx, rx) = mpsc::channel(1);
        // The fresh channel has room for this one event.
        let _ = tx.try_send(Err(error));
        ModelStream { rx }
    }

    /// The next event; `None` when the provider is done (or dropped its sender without finishing,
    /// which the engine treats as an empty turn).
    pub async fn next(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        self.rx.recv().await
    }
}

impl StreamSender {
    /// Delivers one event; `false` when the consumer is gone and the provider should stop.
    pub async fn send(&self, event: Result<StreamEvent, ProviderError>) -> bool {
        self.tx.send(event).await.is_ok()
    }

    /// Resolves when the consumer is gone: race long waits (a slow network read) against it.
    pub async fn closed(&self) {
        self.tx.closed().await;
    }
}
