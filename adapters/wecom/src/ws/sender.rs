//! Frames the chat layer sends over the long connection: replies to callbacks and proactive
//! messages, each waiting for WeCom's answer.
//!
//! Invariants: replies with one `req_id` are written one at a time, in the order the calls were
//! first polled, each only after WeCom answered the one before (WeCom requires it, and it keeps
//! an answer's `req_id` unambiguous); the per-`req_id` turn is a fair async mutex guarding no
//! data, and its entry is removed when nobody holds or waits for it. A frame waits at most
//! [`Timings::send_wait`] for a subscribed connection and is written at most once; a frame a
//! closing connection did not write goes out on the next one; every frame queued gets exactly
//! one outcome: WeCom's answer, not written, or lost after writing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{Mutex as Gate, OwnedMutexGuard, mpsc, oneshot, watch};
use tokio::time::Instant;

use super::error::SendError;
use super::{Status, Timings, frame};

/// How many frames may wait for the writer of one connection.
pub(crate) const OUTBOX: usize = 64;

/// The writer of the current connection.
pub(crate) type Outbox = mpsc::Sender<Outgoing>;

/// A frame to write, and where its outcome goes: exactly one [`Outcome`].
#[derive(Debug)]
pub(crate) struct Outgoing {
    pub(crate) req_id: String,
    pub(crate) text: String,
    pub(crate) outcome: oneshot::Sender<Outcome>,
}

/// What became of an [`Outgoing`].
#[derive(Debug)]
pub(crate) enum Outcome {
    /// WeCom answered it.
    Answered(Answer),
    /// The connection ended before writing it: here is its text back, for the next one.
    NotWritten(String),
    /// It was written, then the connection was lost before an answer.
    Lost,
}

/// WeCom's answer to a frame.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) errcode: i64,
    pub(crate) errmsg: String,
    pub(crate) body: Value,
}

/// What a [`LongConnection`](super::LongConnection) shares with its senders.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The writer of the subscribed connection; `None` while there is none.
    pub(crate) link: watch::Sender<Option<Outbox>>,
    pub(crate) status: watch::Sender<Status>,
    /// One turn per `req_id` being replied to.
    turns: Mutex<HashMap<String, Arc<Gate<()>>>>,
}

impl Shared {
    pub(crate) fn new() -> Self {
        Self {
            link: watch::Sender::new(None),
            status: watch::Sender::new(Status::Idle),
            turns: Mutex::default(),
        }
    }

    fn turns(&self) -> MutexGuard<'_, HashMap<String, Arc<Gate<()>>>> {
        self.turns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for the turn of `req_id`; turns are granted in the order they were asked for.
    async fn turn<'a>(&'a self, req_id: &'a str) -> Turn<'a> {
        let gate = Arc::clone(self.turns().entry(req_id.to_owned()).or_default());
        // Built before waiting, so a caller that gives up while waiting still cleans up.
        let mut turn = Turn {
            shared: self,
            req_id,
            gate: Some(Arc::clone(&gate)),
            held: None,
        };
        turn.held = Some(gate.lock_owned().await);
        turn
    }
}

/// The turn of one `req_id`, held while its frame is written and answered.
#[derive(Debug)]
struct Turn<'a> {
    shared: &'a Shared,
    req_id: &'a str,
    gate: Option<Arc<Gate<()>>>,
    held: Option<OwnedMutexGuard<()>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        drop(self.held.take());
        drop(self.gate.take());
        // Clones are made only under this lock: a count of one is the map's own.
        let mut turns = self.shared.turns();
        if turns
            .get(self.req_id)
            .is_some_and(|gate| Arc::strong_count(gate) == 1)
        {
            turns.remove(self.req_id);
        }
    }
}

/// WeCom's answer to a frame it accepted (`errcode` 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Ack {
    /// The frame's `req_id`.
    pub req_id: String,
    /// The answer's `body` (e.g. a media upload's `upload_id` or `media_id`); `Null` when it
    /// had none.
    pub body: Value,
}

/// Sends frames over a [`LongConnection`](super::LongConnection), whichever connection is up:
/// a clone stays valid across reconnections. Get one with
/// [`LongConnection::sender`](super::LongConnection::sender).
#[derive(Clone, Debug)]
pub struct Sender {
    shared: Arc<Shared>,
    send_wait: Duration,
    ack_timeout: Duration,
}

impl Sender {
    pub(crate) fn new(shared: Arc<Shared>, timings: &Timings) -> Self {
        Self {
            shared,
            send_wait: timings.send_wait,
            ack_timeout: timings.ack_timeout,
        }
    }

    /// Answers the callback `req_id` with `cmd` ([`RESPOND_MSG`](super::RESPOND_MSG),
    /// [`RESPOND_WELCOME`](super::RESPOND_WELCOME) or [`RESPOND_UPDATE`](super::RESPOND_UPDATE))
    /// and `body`, and waits for WeCom's answer.
    ///
    /// Replies to one `req_id` go out one at a time, in the order these calls were first
    /// polled: start them in order (a stream's snapshots) and they arrive in order.
    pub async fn respond(&self, req_id: &str, cmd: &str, body: Value) -> Result<Ack, SendError> {
        let _turn = self.shared.turn(req_id).await;
        self.request(cmd, req_id, body).await
    }

    /// Sends `cmd` (e.g. [`SEND_MSG`](super::SEND_MSG)) with `body` under a new `req_id`, and
    /// waits for WeCom's answer.
    pub async fn send(&self, cmd: &str, body: Value) -> Result<Ack, SendError> {
        let req_id = frame::new_req_id(cmd);
        self.request(cmd, &req_id, body).await
    }

    async fn request(&self, cmd: &str, req_id: &str, body: Value) -> Result<Ack, SendError> {
        let deadline = Instant::now() + self.send_wait;
        let mut text = frame::encode(cmd, req_id, Some(body));
        loop {
            let outbox = self.outbox(cmd, deadline).await?;
            let (outcome, answered) = oneshot::channel();
            let out = Outgoing {
                req_id: req_id.to_owned(),
                text,
                outcome,
            };
            match tokio::time::timeout_at(deadline, outbox.send(out)).await {
                Ok(Ok(())) => {}
                // That connection ended before taking the frame: wait for the next one.
                Ok(Err(mpsc::error::SendError(out))) => {
                    text = out.text;
                    continue;
                }
                Err(_) => return Err(self.not_connected(cmd)),
            }
            let outcome = match tokio::time::timeout(self.ack_timeout, answered).await {
                Ok(Ok(outcome)) => outcome,
                // The connection answers every frame; gone without an answer, it was lost.
                Ok(Err(_)) => Outcome::Lost,
                Err(_) => {
                    return Err(SendError::AckTimeout {
                        cmd: cmd.to_owned(),
                        req_id: req_id.to_owned(),
                        waited: self.ack_timeout,
                    });
                }
            };
            match outcome {
                Outcome::Answered(answer) if answer.errcode == 0 => {
                    return Ok(Ack {
                        req_id: req_id.to_owned(),
                        body: answer.body,
                    });
                }
                Outcome::Answered(answer) => {
                    return Err(SendError::Refused {
                        cmd: cmd.to_owned(),
                        req_id: req_id.to_owned(),
                        errcode: answer.errcode,
                        errmsg: answer.errmsg,
                    });
                }
                Outcome::Lost => {
                    return Err(SendError::Lost {
                        cmd: cmd.to_owned(),
                        req_id: req_id.to_owned(),
                    });
                }
                Outcome::NotWritten(back) => text = back,
            }
        }
    }

    /// The writer of a subscribed connection, waiting for one until `deadline`.
    async fn outbox(&self, cmd: &str, deadline: Instant) -> Result<Outbox, SendError> {
        let mut link = self.shared.link.subscribe();
        let mut status = self.shared.status.subscribe();
        let open = async {
            let link = link
                .wait_for(|link| link.as_ref().is_some_and(|tx| !tx.is_closed()))
                .await
                .ok()?;
            (*link).clone()
        };
        tokio::select! {
            open = tokio::time::timeout_at(deadline, open) => match open {
                Ok(Some(outbox)) => Ok(outbox),
                Ok(None) => Err(SendError::Stopped { cmd: cmd.to_owned() }),
                Err(_) => Err(self.not_connected(cmd)),
            },
            _ = status.wait_for(|status| *status == Status::Stopped) => {
                Err(SendError::Stopped { cmd: cmd.to_owned() })
            }
        }
    }

    fn not_connected(&self, cmd: &str) -> SendError {
        SendError::NotConnected {
            cmd: cmd.to_owned(),
            waited: self.send_wait,
            status: self.shared.status.borrow().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_turn_blocks_its_req_id_only_and_is_forgotten_once_unused() {
        let shared = Shared::new();
        let first = shared.turn("r1").await;
        // Asked for while the first is held, it waits; giving up leaves nothing behind.
        let waiting = tokio::time::timeout(Duration::ZERO, shared.turn("r1")).await;
        assert!(waiting.is_err(), "r1 is taken");
        let other = shared.turn("r2").await;
        assert_eq!(shared.turns().len(), 2);
        drop(other);
        assert_eq!(shared.turns().len(), 1);
        drop(first);
        assert!(shared.turns().is_empty());
        drop(shared.turn("r1").await);
        assert!(shared.turns().is_empty());
    }
}
