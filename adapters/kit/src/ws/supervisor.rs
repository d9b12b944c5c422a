//! [`supervise`]: the reconnect loop, and the `select!` loop of one connection (stop, pings,
//! silence, acks, the platform's own frames, reading).
//!
//! Invariants: one connection at a time, except that a connection the platform asked to leave
//! stays open until its successor was dialed; the reader never dispatches while stopping; a
//! lost write ends the connection, so nothing is written twice on it.

use std::time::Duration;

use futures_util::StreamExt as _;
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::pool::Pool;
use super::socket::{Ws, close, write};
use super::{Ended, Message, Protocol, Read, Settings, Status, millis};

/// Connects, serves and reconnects until `stop` fires or the protocol gives up.
///
/// Returns `Ok(())` once stopped, with the socket closed and every handler finished or cut
/// after [`Settings::drain`], or the error [`Protocol::reconnect`] ended the run with.
pub async fn supervise<P: Protocol>(
    protocol: &mut P,
    settings: &Settings,
    status: &watch::Sender<Status<P::Error>>,
    stop: &CancellationToken,
) -> Result<(), P::Error> {
    let _stopped = MarkStopped(status);
    let mut pool = Pool::new(settings.max_in_flight, settings.max_waiting);
    let mut wait = Duration::ZERO;
    // A connection the platform asked to leave, closed once its successor is dialed.
    let mut old: Option<Ws> = None;
    let mut drained = false;
    let result = loop {
        if !wait.is_zero() {
            tracing::info!(wait_ms = millis(wait), "{} will reconnect.", P::NAME);
            tokio::select! {
                () = stop.cancelled() => break Ok(()),
                () = tokio::time::sleep(wait) => {}
            }
        }
        status.send_replace(Status::Connecting);
        let dialed = tokio::select! {
            () = stop.cancelled() => break Ok(()),
            dialed = tokio::time::timeout(settings.connect_timeout, Box::pin(protocol.dial())) => {
                dialed.unwrap_or_else(|_| Err(P::unavailable(format!(
                    "connecting took longer than {:?}", settings.connect_timeout
                ))))
            }
        };
        if let Some(ws) = old.take() {
            close(ws).await;
        }
        let ended = match dialed {
            Ok(mut ws) => {
                tracing::info!("{} open.", P::NAME);
                status.send_replace(Status::Online);
                // Boxed: the connection's `select!` is large, and so is a platform's dial.
                let ended = Box::pin(serve(protocol, &mut ws, &mut pool, settings, stop)).await;
                protocol.closed();
                match ended {
                    None => {
                        close(ws).await;
                        drained = true;
                        break Ok(());
                    }
                    Some(ended @ Ended::Moved { .. }) => {
                        tracing::info!("{} asked to reconnect.", P::NAME);
                        old = Some(ws);
                        ended
                    }
                    Some(ended) => {
                        close(ws).await;
                        ended
                    }
                }
            }
            Err(error) => Ended::Failed(error),
        };
        wait = match protocol.reconnect(&ended) {
            Ok(wait) => wait,
            Err(error) => {
                tracing::error!(%error, "{} gave up.", P::NAME);
                break Err(error);
            }
        };
        if let Some(error) = ended.error() {
            tracing::warn!(%error, wait_ms = millis(wait), "{} down.", P::NAME);
            let error = error.clone();
            status.send_replace(Status::Waiting {
                error,
                retry_in: wait,
            });
        }
    };
    if let Some(ws) = old {
        close(ws).await;
    }
    // Sends still waiting for a connection fail now instead of waiting for one that won't come.
    status.send_replace(Status::Stopped);
    pool.finish((!drained).then_some(settings.drain), P::NAME)
        .await;
    tracing::info!("{} stopped.", P::NAME);
    result
}

/// Sets the status to stopped however the supervisor ends (its future may be dropped).
struct MarkStopped<'a, E>(&'a watch::Sender<Status<E>>);

impl<E> Drop for MarkStopped<'_, E> {
    fn drop(&mut self) {
        self.0.send_if_modified(|status| {
            let changed = !matches!(status, Status::Stopped);
            *status = Status::Stopped;
            changed
        });
    }
}

/// Far enough never to come (as tokio's own far future): an unarmed timer.
const NEVER: Duration = Duration::from_secs(30 * 365 * 86_400);

/// Serves one connection until it ends; `None` when `stop` fired and the handlers drained.
async fn serve<P: Protocol>(
    protocol: &mut P,
    ws: &mut Ws,
    pool: &mut Pool,
    settings: &Settings,
    stop: &CancellationToken,
) -> Option<Ended<P::Error>> {
    let lost = |error: String, healthy| {
        Some(Ended::Lost {
            error: P::unavailable(error),
            healthy,
        })
    };
    let mut healthy = false;
    let mut every = protocol.ping_every();
    let first = if P::PING_AT_OPEN {
        Duration::ZERO
    } else {
        every.unwrap_or(NEVER)
    };
    let ping_at = sleep_until(Instant::now() + first);
    tokio::pin!(ping_at);
    let silent_at = sleep_until(Instant::now() + protocol.silence().unwrap_or(NEVER));
    tokio::pin!(silent_at);
    let mut slot = None;
    // Set once stop fired: until then handlers may still write acks and replies.
    let mut drain_until: Option<Instant> = None;
    loop {
        pool.reap();
        let draining = drain_until.is_some();
        if draining && pool.is_idle() {
            return None;
        }
        let reading = draining || slot.is_some() || !pool.holds_reader;
        let drained_at = drain_until.unwrap_or_else(Instant::now);
        let message = tokio::select! {
            () = stop.cancelled(), if !draining => {
                drain_until = Some(Instant::now() + settings.drain);
                continue;
            }
            () = sleep_until(drained_at), if draining => return None,
            _ = pool.tasks.join_next(), if draining && !pool.tasks.is_empty() => continue,
            () = &mut ping_at => {
                let ping = match protocol.ping() {
                    Ok(ping) => ping,
                    Err(reason) => return lost(reason, healthy),
                };
                if let Some(ping) = ping
                    && let Err(reason) = write(ws, ping).await
                {
                    return lost(reason, healthy);
                }
                ping_at.as_mut().reset(Instant::now() + every.unwrap_or(NEVER));
                continue;
            }
            () = &mut silent_at => return lost("the connection went silent".to_owned(), healthy),
            Some(ack) = pool.acks.recv() => Some(ack),
            Some(out) = protocol.outbound() => Some(out),
            permit = std::sync::Arc::clone(&pool.slots).acquire_owned(),
                if slot.is_none() && pool.holds_reader && !draining =>
            {
                slot = permit.ok();
                continue;
            }
            message = ws.next(), if reading => match message {
                Some(Ok(message)) => {
                    let read = match message {
                        Message::Text(_) | Message::Binary(_) => {
                            healthy = true;
                            Some(protocol.read(message))
                        }
                        Message::Close(frame) if P::MOVE_ON_CLOSE => {
                            tracing::info!(?frame, "{}: the platform closed the connection.", P::NAME);
                            return Some(Ended::Moved { healthy });
                        }
                        Message::Close(frame) => {
                            return lost(format!("the platform closed the connection ({frame:?})"), healthy);
                        }
                        _ => None,
                    };
                    let silence = protocol.silence().unwrap_or(NEVER);
                    silent_at.as_mut().reset(Instant::now() + silence);
                    match read {
                        None | Some(Read::Skip) => None,
                        Some(Read::Reply(reply)) => Some(reply),
                        Some(Read::Deliver(_)) if draining => {
                            tracing::warn!("{}: a delivery arrived while stopping; not handled.", P::NAME);
                            None
                        }
                        Some(Read::Deliver(task)) => {
                            pool.spawn(slot.take(), task, P::NAME);
                            None
                        }
                        Some(Read::Move) => return Some(Ended::Moved { healthy }),
                        Some(Read::End(error)) => return Some(Ended::Lost { error, healthy }),
                    }
                }
                Some(Err(error)) => return lost(format!("the connection failed: {error}"), healthy),
                None => return lost("the connection ended".to_owned(), healthy),
            },
        };
        if let Some(message) = message
            && let Err(reason) = write(ws, message).await
        {
            return lost(reason, healthy);
        }
        // A frame may have changed the platform's timing (Feishu's pongs).
        let now_every = protocol.ping_every();
        if now_every != every {
            every = now_every;
            ping_at
                .as_mut()
                .reset(Instant::now() + every.unwrap_or(NEVER));
        }
    }
}
