//! One connection, from open to lost: reads frames, pings, writes acks.
//!
//! Invariants: the first ping goes out as soon as the connection is open and then every
//! `PingInterval`, which a pong may change at any time; a connection that stays silent for
//! [`SILENT_PINGS`] ping intervals is replaced; on stop, the handlers already running get
//! [`Timings::drain`] to finish and their acks are written before the socket closes.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::time::{Instant, sleep_until};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::Timings;
use super::dial::{Link, Ws, close};
use super::dispatch::Dispatcher;
use super::endpoint::{ClientConfig, ConfigUpdate};
use super::frame::{Frame, FrameKind};

/// A connection that has not sent a frame for this many ping intervals is presumed dead.
pub const SILENT_PINGS: u32 = 3;
/// A write that takes longer than this (the peer stopped reading) has lost the connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// How a connection ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// `stop` fired; the socket is closed.
    Stopped,
    /// The socket broke or closed. `healthy`: Feishu answered on it before.
    Lost { healthy: bool },
    /// Feishu closed the connection or it went silent: the socket is still open, to be closed
    /// once its replacement is up.
    Replace { ws: Box<Ws>, healthy: bool },
}

/// Runs one connection until it ends.
pub(crate) async fn run(
    link: Link,
    dispatcher: &mut Dispatcher,
    config: &mut ClientConfig,
    timings: &Timings,
    stop: &CancellationToken,
) -> Ended {
    let Link {
        mut ws,
        service_id,
        device_id,
        ..
    } = link;
    let second = timings.config_second;
    let mut healthy = false;
    let ping_at = sleep_until(Instant::now());
    tokio::pin!(ping_at);
    let silent_at =
        sleep_until(Instant::now() + config.ping_every(second).saturating_mul(SILENT_PINGS));
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
                if let Err(error) = write(&mut ws, &Frame::ping(service_id)).await {
                    tracing::warn!(%device_id, %error, "Feishu ping failed; connection lost.");
                    return Ended::Lost { healthy };
                }
                ping_at.as_mut().reset(Instant::now() + config.ping_every(second));
            }
            () = &mut silent_at => {
                tracing::warn!(%device_id, "Feishu connection silent; replacing it.");
                return Ended::Replace { ws: Box::new(ws), healthy };
            }
            Some(ack) = dispatcher.recv_ack() => {
                if let Err(error) = write(&mut ws, &ack).await {
                    tracing::warn!(%device_id, %error, "Feishu ack failed; connection lost.");
                    return Ended::Lost { healthy };
                }
            }
            permit = Arc::clone(&slots).acquire_owned(), if slot.is_none() => slot = permit.ok(),
            message = ws.next(), if slot.is_some() => {
                let bytes = match message {
                    Some(Ok(Message::Binary(bytes))) => bytes,
                    Some(Ok(Message::Close(close))) => {
                        tracing::info!(%device_id, ?close, "Feishu closed the connection.");
                        return Ended::Replace { ws: Box::new(ws), healthy };
                    }
                    Some(Ok(Message::Text(_))) => {
                        tracing::debug!(%device_id, "Feishu text message ignored.");
                        continue;
                    }
                    Some(Ok(_)) => continue,
                    Some(Err(error)) => {
                        tracing::warn!(%device_id, %error, "Feishu connection lost.");
                        return Ended::Lost { healthy };
                    }
                    None => {
                        tracing::info!(%device_id, "Feishu connection ended.");
                        return Ended::Lost { healthy };
                    }
                };
                let frame = match Frame::decode(&bytes) {
                    Ok(frame) => frame,
                    Err(error) => {
                        tracing::warn!(%device_id, %error, "Feishu frame undecodable; ignored.");
                        continue;
                    }
                };
                healthy = true;
                let before = config.ping_interval;
                match frame.kind() {
                    Some(FrameKind::Control) => control(&frame, config, &device_id),
                    Some(FrameKind::Data) => dispatcher.dispatch(frame, &mut slot),
                    None => tracing::debug!(%device_id, method = frame.method, "Feishu frame of an unknown method ignored."),
                }
                let ping_every = config.ping_every(second);
                if config.ping_interval != before {
                    ping_at.as_mut().reset(Instant::now() + ping_every);
                }
                silent_at.as_mut().reset(Instant::now() + ping_every.saturating_mul(SILENT_PINGS));
            }
        }
    }
}

/// Writes one frame.
async fn write(ws: &mut Ws, frame: &Frame) -> Result<(), String> {
    match tokio::time::timeout(WRITE_TIMEOUT, ws.send(Message::binary(frame.encode()))).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err("the write timed out".to_owned()),
    }
}

/// A control frame: a pong may carry new timing.
fn control(frame: &Frame, config: &mut ClientConfig, device_id: &str) {
    if frame.message_type() != "pong" {
        return;
    }
    let Some(payload) = frame.payload.as_deref().filter(|p| !p.is_empty()) else {
        return;
    };
    match serde_json::from_slice::<ConfigUpdate>(payload) {
        Ok(update) => {
            config.apply(update);
            tracing::debug!(%device_id, ?config, "Feishu connection timing updated.");
        }
        Err(error) => {
            tracing::warn!(%device_id, %error, "Feishu pong with an unreadable client config.");
        }
    }
}

/// Lets running handlers finish for up to [`Timings::drain`], writing their acks.
async fn drain(ws: &mut Ws, dispatcher: &mut Dispatcher, timings: &Timings) {
    let acks = async {
        while let Some(ack) = dispatcher.next_ack().await {
            if write(ws, &ack).await.is_err() {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(timings.drain, acks).await;
}
