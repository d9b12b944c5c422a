//! The live, in-memory side of a session: its event fan-out and its running turn.
//!
//! Invariants: at most one turn runs per session (`try_claim` hands out the turn slot once until
//! the turn releases it); messages that arrive while a turn runs are queued as steering for that
//! turn, never dropped; no lock here is held across an `.await`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use workmate_protocol::{Actor, Event, UserId};
use workmate_store::IntakeKey;

/// Events buffered for a slow live subscriber before it is told it lagged. Kept small: the buffer
/// is allocated up front for every live session, and a lagging subscriber replays the state events
/// it missed from the store (the deltas it missed are repeated whole in `assistant_message`).
const LIVE_EVENT_BUFFER: usize = 64;

/// A message that arrived for a busy session.
#[derive(Clone, Debug)]
pub(crate) struct Steering {
    pub(crate) author: Actor,
    pub(crate) text: String,
    /// The intake row it came from, marked done when the message is stored.
    pub(crate) delivery: Option<IntakeKey>,
    /// Kept for the next turn: it came from someone else while a prompt of this one waited.
    pub(crate) deferred: bool,
}

#[derive(Debug, Default)]
struct TurnSlot {
    cancel: Option<CancellationToken>,
    steering: Vec<Steering>,
    /// Whose call a pending prompt of the running turn is about.
    waiting_for: Option<UserId>,
}

/// One session's live state.
#[derive(Debug)]
pub(crate) struct SessionRuntime {
    events: broadcast::Sender<Arc<Event>>,
    last_seq: AtomicU64,
    turn: Mutex<TurnSlot>,
    running: watch::Sender<bool>,
}

impl SessionRuntime {
    pub(crate) fn new(last_seq: u64) -> Self {
        let (events, _) = broadcast::channel(LIVE_EVENT_BUFFER);
        let (running, _) = watch::channel(false);
        Self {
            events,
            last_seq: AtomicU64::new(last_seq),
            turn: Mutex::default(),
            running,
        }
    }

    /// Live events from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.events.subscribe()
    }

    /// How many live subscribers there are.
    pub(crate) fn subscribers(&self) -> usize {
        self.events.receiver_count()
    }

    /// Sends an event to live subscribers, remembering the newest state `seq`.
    pub(crate) fn publish(&self, event: Event) {
        if event.kind.is_state() {
            self.last_seq.fetch_max(event.seq, Ordering::SeqCst);
        }
        // No subscriber is fine: the state events are in the store.
        let _ = self.events.send(Arc::new(event));
    }

    /// The newest state event's `seq`, which transport events carry.
    pub(crate) fn last_seq(&self) -> u64 {
        self.last_seq.load(Ordering::SeqCst)
    }

    /// Takes the turn slot if it is free; returns the new turn's stop token.
    pub(crate) fn try_claim(&self) -> Option<CancellationToken> {
        let mut slot = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        if slot.cancel.is_some() {
            return None;
        }
        let token = CancellationToken::new();
        slot.cancel = Some(token.clone());
        slot.steering.clear();
        slot.waiting_for = None;
        drop(slot);
        self.running.send_replace(true);
        Some(token)
    }

    /// Frees the turn slot. Steering that arrived too late for the turn is handed back so the
    /// caller can start a new turn with it.
    pub(crate) fn release(&self) -> Vec<Steering> {
        let mut slot = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        slot.cancel = None;
        slot.waiting_for = None;
        let late = std::mem::take(&mut slot.steering);
        drop(slot);
        self.running.send_replace(false);
        late
    }

    /// Queues a message for the running turn; `false` if no turn runs. While a prompt about
    /// someone's call waits, a message from anyone else (and any later one of theirs, to keep
    /// their order) is kept for the next turn.
    pub(crate) fn steer(&self, mut steering: Steering) -> bool {
        let mut slot = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        if slot.cancel.is_none() {
            return false;
        }
        let author = &steering.author.user_id;
        steering.deferred = slot.waiting_for.as_ref().is_some_and(|u| u != author)
            || slot
                .steering
                .iter()
                .any(|s| s.deferred && &s.author.user_id == author);
        slot.steering.push(steering);
        true
    }

    /// Takes the queued steering messages that may join this turn.
    pub(crate) fn take_steering(&self) -> Vec<Steering> {
        let mut slot = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        let (deferred, now) = std::mem::take(&mut slot.steering)
            .into_iter()
            .partition(|s| s.deferred);
        slot.steering = deferred;
        now
    }

    /// Records whose call a prompt of the running turn waits on (`None` once answered).
    pub(crate) fn set_waiting_for(&self, user: Option<UserId>) {
        let mut slot = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        slot.waiting_for = user;
    }

    /// Asks the running turn to stop; `false` if none runs.
    pub(crate) fn interrupt(&self) -> bool {
        let slot = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        match &slot.cancel {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Whether a turn runs.
    pub(crate) fn is_running(&self) -> bool {
        *self.running.borrow()
    }

    /// Resolves when no turn runs.
    pub(crate) async fn idle(&self) {
        let mut rx = self.running.subscribe();
        // The sender lives as long as `self`, so this only ends when the value is false.
        let _ = rx.wait_for(|running| !running).await;
    }
}
