//! Subscribing: one pub/sub connection per replica, to the signals channel and to every session
//! this replica has subscribers for, connected again (with every subscription) when it drops.
//!
//! Invariants: a message from this replica itself is ignored; a session nobody here listens to
//! any more is unsubscribed within [`PRUNE_EVERY`]; the first connection is made before
//! [`run`] returns, so a replica that cannot subscribe fails at start.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::{PubSubSink, PubSubStream};
use tokio_util::sync::CancellationToken;
use workmate_protocol::Event;

use super::{Incoming, Shared, timed};
use crate::{Result, Signal};

/// How often sessions without a subscriber here are unsubscribed.
const PRUNE_EVERY: Duration = Duration::from_secs(10);
/// The pause before connecting again, doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Opens the first pub/sub connection, then keeps one open in the background until `stop`.
pub(super) async fn run(shared: Arc<Shared>, stop: CancellationToken) -> Result<()> {
    let stream = open(&shared).await?;
    tokio::spawn(async move {
        let mut stream = Some(stream);
        let mut backoff = FIRST_BACKOFF;
        loop {
            if let Some(open) = stream.take() {
                backoff = FIRST_BACKOFF;
                read(&shared, open, &stop).await;
                *shared.sink.lock().unwrap_or_else(PoisonError::into_inner) = None;
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
            match open(&shared).await {
                Ok(open) => {
                    tracing::info!("The Redis coordinator's subscriptions are back.");
                    stream = Some(open);
                }
                Err(e) => {
                    tracing::debug!(error = %e, ?backoff, "The Redis coordinator cannot subscribe yet.");
                    shared.warn("subscribe to other replicas' events", &e);
                }
            }
        }
    });
    Ok(())
}

/// Connects, subscribes to the signals and to every session in the map, and publishes the sink.
async fn open(shared: &Shared) -> Result<PubSubStream> {
    let pubsub = timed(shared.client.get_async_pubsub()).await?;
    let (mut sink, stream) = pubsub.split();
    let mut channels = vec![shared.signals_channel()];
    channels.extend(
        shared
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned(),
    );
    timed(sink.subscribe(&channels)).await?;
    *shared.sink.lock().unwrap_or_else(PoisonError::into_inner) = Some(sink);
    Ok(stream)
}

/// Routes messages until the connection drops or `stop`.
async fn read(shared: &Shared, mut stream: PubSubStream, stop: &CancellationToken) {
    let signals = shared.signals_channel();
    let mut prune = tokio::time::interval(PRUNE_EVERY);
    loop {
        let message = tokio::select! {
            () = stop.cancelled() => return,
            _ = prune.tick() => {
                prune_sessions(shared).await;
                continue;
            }
            message = stream.next() => message,
        };
        let Some(message) = message else {
            tracing::warn!("The Redis coordinator's subscriptions dropped; connecting again.");
            return;
        };
        let channel = message.get_channel_name();
        let payload = message.get_payload_bytes();
        if channel == signals {
            if let Ok(incoming) = serde_json::from_slice::<Incoming<Signal>>(payload)
                && incoming.origin != shared.replica
            {
                let _ = shared.signals.send(incoming.body);
            }
            continue;
        }
        let sender = shared
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(channel)
            .cloned();
        let Some(sender) = sender else { continue };
        match serde_json::from_slice::<Incoming<Event>>(payload) {
            Ok(incoming) if incoming.origin != shared.replica => {
                shared.received.fetch_add(1, Ordering::Relaxed);
                let _ = sender.send(Arc::new(incoming.body));
            }
            Ok(_) => {}
            Err(e) => {
                tracing::debug!(channel, error = %e, "An event from another replica is unreadable; skipped.");
            }
        }
    }
}

/// Unsubscribes from sessions nobody here listens to any more.
async fn prune_sessions(shared: &Shared) {
    let idle: Vec<String> = {
        let mut sessions = shared
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let idle: Vec<String> = sessions
            .iter()
            .filter(|(_, sender)| sender.receiver_count() == 0)
            .map(|(channel, _)| channel.clone())
            .collect();
        for channel in &idle {
            sessions.remove(channel);
        }
        idle
    };
    if idle.is_empty() {
        return;
    }
    let sink: Option<PubSubSink> = shared
        .sink
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if let Some(mut sink) = sink
        && let Err(e) = timed(sink.unsubscribe(&idle)).await
    {
        shared.warn("unsubscribe from idle sessions", &e);
    }
}
