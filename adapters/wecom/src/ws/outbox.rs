//! What travels between a [`Sender`](super::Sender) and the connection that writes its frames.
//!
//! Invariant: every [`Outgoing`] gets exactly one [`Outcome`]: the answer WeCom sent, that it
//! was never written (so it can go out on the next connection unchanged), or that the
//! connection was lost after writing it.

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// How many frames may wait for the writer of one connection.
pub(crate) const OUTBOX: usize = 64;

/// The writer of the current connection.
pub(crate) type Outbox = mpsc::Sender<Outgoing>;

/// A frame to write, and where its outcome goes.
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
    /// The connection ended before writing it: here is its text back.
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
