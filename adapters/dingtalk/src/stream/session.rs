//! One connection, from open to lost: reads frames, answers SYSTEM pings, sends WebSocket
//! pings, writes acks.
//!
//! Invariants: a WebSocket ping goes out every [`Timings::ping_every`]; a connection that
//! sends nothing (not even a pong) for [`SILENT_PINGS`] of those is given up; a SYSTEM
//! `disconnect` ends the session with the socket still open, to be closed once its successor
//! is dialed; on stop, running handlers get [`Timings::drain`] to finish and their acks are
//! written before the socket closes.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::time::{Instant, sleep_until};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::Timings;
use super::dial::{Ws, close};
use super::dispatch::Dispatcher;
use super::frame::{self, Class, Downstream};

/// A connection silent for this many ping intervals is presumed dead.
pub const SILENT_PINGS: u32 = 3;
/// A write that takes longer than this (the peer stopped reading) has lost the connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// How a connection ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// `stop` fired; the socket is closed.
    Stopped,
    /// The socket broke, closed or went silent. `healthy`: DingTalk sent a frame on it.
    Lost { healthy: bool },
    /// DingTalk asked for a new connection: this socket stays open until the new one is up.
    Replace { ws: Box<Ws> },
}

/// Runs one connection until it ends.
pub(crate) async fn run(
    mut ws: Ws,
    dispatcher: &mut Dispatcher,
    timings: &Timings,
    stop: &CancellationToken,
) -> Ended {
    let mut healthy = false;
    let ping_at = sleep_until(Instant::now() + timings.ping_every);
    tokio::pin!(ping_at);
    let silence = timings.ping_every.saturating_mul(SILENT_PINGS);
    let silent_at = sleep_until(Instant::now() + silence);
    tokio::pin!(silent_at);
    let slots = dispatcher.slots();
    let mut slot = None;
    loop {
        dispatcher.reap();
        tokio::select! {
            () = stop.cancelled() => {
                drain(&mut ws, dispatcher, timings).await;
                close(ws).await;
                return Ended::Stopped;
            }
            () = &mut ping_at => {
                if let Err(error) = send(&mut ws, Message::Ping(Vec::new().into())).await {
                    tracing::warn!(%error, "DingTalk ping failed; connection lost.");
                    return Ended::Lost { healthy };
                }
                ping_at.as_mut().reset(Instant::now() + timings.ping_every);
            }
            () = &mut silent_at => {
                tracing::warn!("DingTalk connection silent; reconnecting.");
                close(ws).await;
                return Ended::Lost { healthy };
            }
            Some(ack) = dispatcher.recv_ack() => {
                if let Err(error) = send(&mut ws, Message::text(ack)).await {
                    tracing::warn!(%error, "DingTalk ack failed; connection lost.");
                    return Ended::Lost { healthy };
                }
            }
            permit = Arc::clone(&slots).acquire_owned(), if slot.is_none() => slot = permit.ok(),
            message = ws.next(), if slot.is_some() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(frame))) => {
                        tracing::info!(?frame, "DingTalk closed the connection.");
                        return Ended::Lost { healthy };
                    }
                    Some(Ok(_)) => {
                        silent_at.as_mut().reset(Instant::now() + silence);
                        continue;
                    }
                    Some(Err(error)) => {
                        tracing::warn!(%error, "DingTalk connection lost.");
                        return Ended::Lost { healthy };
                    }
                    None => {
                        tracing::info!("DingTalk connection ended.");
                        return Ended::Lost { healthy };
                    }
                };
                healthy = true;
                silent_at.as_mut().reset(Instant::now() + silence);
                let message = match Downstream::parse(text.as_str()) {
                    Ok(message) => message,
                    Err(error) => {
                        tracing::warn!(%error, "DingTalk frame unreadable; ignored.");
                        continue;
                    }
                };
                match message.class() {
                    Class::Ping => {
                        if let Err(error) = send(&mut ws, Message::text(frame::pong(&message))).await {
                            tracing::warn!(%error, "DingTalk ping answer failed; connection lost.");
                            return Ended::Lost { healthy };
                        }
                    }
                    Class::Disconnect => {
                        tracing::info!("DingTalk asked to reconnect.");
                        return Ended::Replace { ws: Box::new(ws) };
                    }
                    Class::OtherSystem => {
                        tracing::debug!(topic = %message.headers.topic, "DingTalk system message ignored.");
                    }
                    Class::Unknown => {
                        tracing::debug!(kind = %message.kind, "DingTalk message of an unknown type ignored.");
                    }
                    Class::Handled(kind) => {
                        if let Some(permit) = slot.take() {
                            dispatcher.dispatch(kind, message, permit);
                        }
                    }
                }
            }
        }
    }
}

/// Writes one message, giving up after [`WRITE_TIMEOUT`].
async fn send(ws: &mut Ws, message: Message) -> Result<(), String> {
    match tokio::time::timeout(WRITE_TIMEOUT, ws.send(message)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err("the write timed out".to_owned()),
    }
}

/// Lets running handlers finish for up to [`Timings::drain`], writing their acks.
async fn drain(ws: &mut Ws, dispatcher: &mut Dispatcher, timings: &Timings) {
    let acks = async {
        while let Some(ack) = dispatcher.next_ack().await {
            if send(ws, Message::text(ack)).await.is_err() {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(timings.drain, acks).await;
}
