//! One subscribed connection, from open to lost: reads frames, writes the senders' frames,
//! pings, and matches WeCom's answers to what was written.
//!
//! Invariants: one task owns the socket, so frames go out in the order they were queued; an
//! answer goes to the frame written with its `req_id`; a ping goes out every
//! [`Timings::ping_every`] and when [`MISSED_PINGS`] in a row are unanswered the link is dead;
//! `disconnected_event` ends the connection as replaced; on stop, running handlers get
//! [`Timings::drain`] with the connection still open to write their last replies; when it ends,
//! every queued or written frame gets its outcome.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::Timings;
use super::dial::{Ws, close};
use super::dispatch::Dispatcher;
use super::frame::{self, Inbound, PING};
use super::outbox::{Answer, Outcome, Outgoing};

/// Pings in a row left unanswered after which the connection is presumed dead.
pub const MISSED_PINGS: u32 = 2;
/// A write that takes longer than this (the peer stopped reading) has lost the connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Written frames whose answer may still come; past it, the ones nobody waits for are dropped.
const PENDING_SWEEP: usize = 1024;

/// How a connection ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// `stop` fired.
    Stopped,
    /// WeCom sent `disconnected_event`.
    Replaced,
    /// The socket broke, closed or went silent. `healthy`: WeCom sent something after the
    /// subscription.
    Lost { reason: String, healthy: bool },
}

/// Runs one subscribed connection until it ends, then closes it.
pub(crate) async fn run(
    mut ws: Ws,
    mut outbox: mpsc::Receiver<Outgoing>,
    dispatcher: &mut Dispatcher,
    timings: &Timings,
    stop: &CancellationToken,
) -> Ended {
    let mut session = Session::default();
    let ended = session
        .serve(&mut ws, &mut outbox, dispatcher, timings, stop)
        .await;
    outbox.close();
    while let Ok(out) = outbox.try_recv() {
        let _ = out.outcome.send(Outcome::NotWritten(out.text));
    }
    for (_, outcome) in session.pending.drain() {
        let _ = outcome.send(Outcome::Lost);
    }
    close(ws).await;
    ended
}

#[derive(Debug, Default)]
struct Session {
    /// Written frames waiting for their answer, by `req_id`.
    pending: HashMap<String, oneshot::Sender<Outcome>>,
    /// The latest pings' `req_id`s.
    pings: VecDeque<String>,
    /// Pings in a row not answered.
    unanswered: u32,
    /// WeCom sent something since the subscription.
    healthy: bool,
}

impl Session {
    async fn serve(
        &mut self,
        ws: &mut Ws,
        outbox: &mut mpsc::Receiver<Outgoing>,
        dispatcher: &mut Dispatcher,
        timings: &Timings,
        stop: &CancellationToken,
    ) -> Ended {
        let ping_at = sleep_until(Instant::now() + timings.ping_every);
        tokio::pin!(ping_at);
        // Set once stop fired: until then handlers may still reply.
        let mut drain_until: Option<Instant> = None;
        loop {
            dispatcher.reap();
            let draining = drain_until.is_some();
            if draining && dispatcher.is_idle() {
                return Ended::Stopped;
            }
            let drained_at = drain_until.unwrap_or_else(Instant::now);
            tokio::select! {
                () = stop.cancelled(), if !draining => {
                    drain_until = Some(Instant::now() + timings.drain);
                }
                () = sleep_until(drained_at), if draining => return Ended::Stopped,
                () = dispatcher.join_next(), if draining => {}
                () = &mut ping_at => {
                    if let Err(reason) = self.ping(ws).await {
                        return self.lost(reason);
                    }
                    ping_at.as_mut().reset(Instant::now() + timings.ping_every);
                }
                Some(out) = outbox.recv() => {
                    if let Err(reason) = self.write_out(ws, out).await {
                        return self.lost(reason);
                    }
                }
                message = ws.next() => {
                    let text = match message {
                        Some(Ok(Message::Text(text))) => text,
                        Some(Ok(Message::Close(close))) => {
                            return self.lost(format!("WeCom closed the connection ({close:?})"));
                        }
                        Some(Ok(_)) => continue,
                        Some(Err(error)) => {
                            return self.lost(format!("the connection failed: {error}"));
                        }
                        None => return self.lost("the connection ended".to_owned()),
                    };
                    if let Some(ended) = self.read(&text, dispatcher, draining) {
                        return ended;
                    }
                }
            }
        }
    }

    fn lost(&self, reason: String) -> Ended {
        Ended::Lost {
            reason,
            healthy: self.healthy,
        }
    }

    /// Writes a ping, unless the last ones went unanswered.
    async fn ping(&mut self, ws: &mut Ws) -> Result<(), String> {
        if self.unanswered >= MISSED_PINGS {
            return Err(format!(
                "{MISSED_PINGS} pings in a row were not answered; the link is dead"
            ));
        }
        let req_id = frame::new_req_id(PING);
        write(ws, frame::encode(PING, &req_id, None)).await?;
        self.pings.push_back(req_id);
        if self.pings.len() > MISSED_PINGS as usize + 1 {
            self.pings.pop_front();
        }
        self.unanswered += 1;
        Ok(())
    }

    /// Writes a sender's frame and keeps it until its answer.
    async fn write_out(&mut self, ws: &mut Ws, out: Outgoing) -> Result<(), String> {
        let Outgoing {
            req_id,
            text,
            outcome,
        } = out;
        if outcome.is_closed() {
            // Its sender gave up waiting before it was written.
            return Ok(());
        }
        if let Err(reason) = write(ws, text).await {
            let _ = outcome.send(Outcome::Lost);
            return Err(reason);
        }
        if self.pending.len() >= PENDING_SWEEP {
            self.pending.retain(|_, waiting| !waiting.is_closed());
        }
        // An older frame with this req_id whose answer never came is given up: its sender
        // timed out, which is what let this one go.
        self.pending.insert(req_id, outcome);
        Ok(())
    }

    /// Takes one text frame: a callback, or an answer.
    fn read(&mut self, text: &str, dispatcher: &mut Dispatcher, draining: bool) -> Option<Ended> {
        let mut frame = match Inbound::parse(text) {
            Ok(frame) => frame,
            Err(error) => {
                tracing::warn!(%error, "WeCom frame unreadable; ignored.");
                return None;
            }
        };
        self.healthy = true;
        let req_id = std::mem::take(&mut frame.headers.req_id);
        if frame.is_disconnected_event() {
            return Some(Ended::Replaced);
        }
        if frame.is_callback() {
            if draining {
                tracing::warn!(
                    cmd = %frame.cmd, %req_id,
                    "WeCom callback arrived while stopping; not handled."
                );
            } else {
                dispatcher.dispatch(frame.cmd, req_id, frame.body);
            }
            return None;
        }
        let errcode = frame.errcode.unwrap_or(0);
        if let Some(outcome) = self.pending.remove(&req_id) {
            let answer = Answer {
                errcode,
                errmsg: frame.errmsg,
                body: frame.body,
            };
            let _ = outcome.send(Outcome::Answered(answer));
        } else if self.pings.contains(&req_id) {
            self.unanswered = 0;
            if errcode != 0 {
                tracing::warn!(
                    errcode, errmsg = %frame.errmsg,
                    "WeCom answered a ping with an error."
                );
            }
        } else {
            tracing::debug!(
                cmd = %frame.cmd, %req_id, errcode,
                "WeCom frame matching nothing sent; ignored."
            );
        }
        None
    }
}

/// Writes one text frame.
async fn write(ws: &mut Ws, text: String) -> Result<(), String> {
    match tokio::time::timeout(WRITE_TIMEOUT, ws.send(Message::text(text))).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(format!("a write failed: {error}")),
        Err(_) => Err(format!("a write took longer than {WRITE_TIMEOUT:?}")),
    }
}
