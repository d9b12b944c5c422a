//! The intake's in-process queue: rows this process stored already claimed wait in a bounded
//! channel for a worker, and a semaphore caps how many rows run at once.
//!
//! Invariants: the channel is bounded ([`FAST_PATH`]) and a row that finds no room is stored
//! pending for the sweeper instead, so a burst is never refused; the receiver is taken once, by
//! the one dispatcher. Plain state: the layer's handle holds it, and the intake's table and
//! workers use it, without this module knowing either.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Semaphore, mpsc};
use workmate_store::Delivery;

/// Fresh rows waiting for a worker in memory; more are left to the sweeper.
const FAST_PATH: usize = 4096;

/// The intake's in-process queue, shared by whoever stores rows and the workers.
#[derive(Debug)]
pub(crate) struct Intake {
    /// Where rows stored claimed wait for a worker.
    pub(crate) tx: mpsc::Sender<Queued>,
    /// The channel's other end, taken by the one dispatcher.
    pub(crate) rx: Mutex<Option<mpsc::Receiver<Queued>>>,
    /// One per row running at once.
    pub(crate) permits: Arc<Semaphore>,
    /// Rows running in this process now.
    pub(crate) in_flight: Arc<AtomicUsize>,
}

impl Intake {
    pub(crate) fn new(workers: usize) -> Self {
        let (tx, rx) = mpsc::channel(FAST_PATH);
        Self {
            tx,
            rx: Mutex::new(Some(rx)),
            permits: Arc::new(Semaphore::new(workers.max(1))),
            in_flight: Arc::default(),
        }
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }
}

/// A row stored claimed by this process, waiting in the channel for a worker.
#[derive(Debug)]
pub(crate) struct Queued {
    pub(crate) delivery: Delivery,
    /// When its lease ends at the latest (by the store's clock).
    pub(crate) until_ms: i64,
}
