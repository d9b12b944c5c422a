//! The live, in-memory side of a session: its event fan-out, its counters and its running turn.
//!
//! Invariants: at most one turn runs per session (`try_claim` hands out the turn slot once until
//! the turn releases it); messages that arrive while a turn runs are queued as steering for that
//! turn, never dropped; the session's counters (event `seq`, message index) are handed out here,
//! under one lock that also queues the step for the store and publishes its events, so steps
//! reach the store and subscribers in `seq` order; once a step fails, the runtime is failed and
//! refuses further steps until the hub replaces it with one reloaded from the store; no lock
//! here is held across an `.await`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use workmate_protocol::Message;
use workmate_protocol::{Actor, Event, UserId};
use workmate_store::{Counters, IntakeKey, SessionRecord, StepError};

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

/// Where the session's log stands: what has been handed out, and what the store has confirmed.
#[derive(Debug)]
pub(crate) struct LogState {
    /// The counters after the newest queued step.
    pub(crate) counters: Counters,
    /// Steps queued so far (the newest one's number).
    pub(crate) queued: u64,
}

/// What the runtime keeps of the stored session, so a turn reads nothing to start.
#[derive(Debug)]
struct Cached {
    /// The session row as of the newest queued step (its counters are the log's, not these).
    record: SessionRecord,
    /// The history, while no turn holds it; `None` until first read, and after a write the
    /// cache cannot follow (the next turn reads the store).
    history: Option<Vec<Message>>,
}

/// Gives each runtime its own lineage for the store's writer.
static LINEAGES: AtomicU64 = AtomicU64::new(1);

/// One session's live state.
#[derive(Debug)]
pub(crate) struct SessionRuntime {
    /// This runtime's lineage: the writer refuses its steps once one of them failed.
    lineage: u64,
    /// The session's writer lease this process holds: its token and when it expires (ms).
    lease: Mutex<Option<(u64, i64)>>,
    cached: Mutex<Cached>,
    events: broadcast::Sender<Arc<Event>>,
    last_seq: AtomicU64,
    log: Mutex<LogState>,
    /// Why a step failed; set once, and the runtime is then replaced. Its own lock: the store
    /// may answer while the log is locked.
    failure: Mutex<Option<StepError>>,
    /// The number of the newest step the store has answered (stored or refused).
    answered: watch::Sender<u64>,
    turn: Mutex<TurnSlot>,
    running: watch::Sender<bool>,
    /// The session had a turn open when it was loaded, and none runs here: a crash may have cut
    /// it (elsewhere, or here before a restart). Taken by the first path that drives the session.
    maybe_cut: AtomicBool,
    /// The trace context of the newest turn run here, so what shows the turn (its cards, even
    /// after it ended) joins its trace. A context, not the span: holding the span would keep it
    /// open, and unexported, until the next turn.
    turn_trace: Mutex<Option<(workmate_protocol::TurnId, opentelemetry::Context)>>,
    /// Where this runtime's events also go, for other replicas' subscribers (`None` in
    /// process).
    fanout: Option<Arc<dyn workmate_coordinator::Coordinator>>,
    /// Whether a task relays other replicas' events of this session to its subscribers here.
    relaying: Mutex<bool>,
    /// When the hub last handed this runtime out (ms): an idle one is evicted.
    last_used_ms: std::sync::atomic::AtomicI64,
}

impl SessionRuntime {
    /// A runtime for a session as it is stored.
    pub(crate) fn new(
        record: SessionRecord,
        fanout: Option<Arc<dyn workmate_coordinator::Coordinator>>,
    ) -> Self {
        let (events, _) = broadcast::channel(LIVE_EVENT_BUFFER);
        let (running, _) = watch::channel(false);
        let (answered, _) = watch::channel(0);
        let counters = record.counters();
        let maybe_cut = AtomicBool::new(record.open_turn.is_some());
        Self {
            lineage: LINEAGES.fetch_add(1, Ordering::Relaxed),
            lease: Mutex::new(None),
            cached: Mutex::new(Cached {
                record,
                history: None,
            }),
            events,
            last_seq: AtomicU64::new(counters.last_seq),
            log: Mutex::new(LogState {
                counters,
                queued: 0,
            }),
            failure: Mutex::default(),
            answered,
            turn: Mutex::default(),
            running,
            maybe_cut,
            turn_trace: Mutex::default(),
            fanout,
            relaying: Mutex::new(false),
            last_used_ms: std::sync::atomic::AtomicI64::new(i64::MIN),
        }
    }

    /// Remembers the trace context of turn `turn`, the newest one run here.
    pub(crate) fn set_turn_trace(&self, turn: workmate_protocol::TurnId, span: &tracing::Span) {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        *self
            .turn_trace
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((turn, span.context()));
    }

    /// The trace context of turn `turn`, if it is the newest one run here.
    pub(crate) fn turn_trace(
        &self,
        turn: &workmate_protocol::TurnId,
    ) -> Option<opentelemetry::Context> {
        self.turn_trace
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .filter(|(id, _)| id == turn)
            .map(|(_, context)| context.clone())
    }

    /// Whether a turn a crash may have cut was open when the session was loaded; `true` once.
    pub(crate) fn take_maybe_cut(&self) -> bool {
        self.maybe_cut.swap(false, Ordering::AcqRel)
    }

    /// This runtime's lineage, carried by every step it queues.
    pub(crate) fn lineage(&self) -> u64 {
        self.lineage
    }

    /// The lease this process holds on the session, if it is still live at `now_ms`.
    pub(crate) fn lease(&self, now_ms: i64) -> Option<(u64, i64)> {
        let lease = *self.lease.lock().unwrap_or_else(|e| e.into_inner());
        lease.filter(|(_, until)| *until > now_ms)
    }

    /// Records the lease taken or renewed.
    pub(crate) fn set_lease(&self, token: u64, until_ms: i64) {
        *self.lease.lock().unwrap_or_else(|e| e.into_inner()) = Some((token, until_ms));
    }

    /// The token steps carry: the held lease's, or 0 (a session nobody ever leased).
    pub(crate) fn lease_token(&self) -> u64 {
        self.lease
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map_or(0, |(token, _)| token)
    }

    fn cached(&self) -> std::sync::MutexGuard<'_, Cached> {
        self.cached.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session as of the newest queued step.
    pub(crate) fn record(&self) -> SessionRecord {
        self.cached().record.clone()
    }

    /// Applies a change queued for the session row to the cached copy.
    pub(crate) fn update_record(&self, change: impl FnOnce(&mut SessionRecord)) {
        change(&mut self.cached().record);
    }

    /// Whether the store holds more of the session than this copy has queued (another process
    /// wrote to it since it was read).
    pub(crate) fn is_behind(&self, stored: Counters) -> bool {
        let ours = self.log().counters;
        stored.last_seq > ours.last_seq || stored.message_count > ours.message_count
    }

    /// Starts over from `record` as stored now: counters, cached row, no cached history.
    pub(crate) fn refresh(&self, record: SessionRecord) {
        let counters = record.counters();
        self.log().counters = counters;
        self.last_seq.store(counters.last_seq, Ordering::SeqCst);
        self.maybe_cut
            .store(record.open_turn.is_some(), Ordering::SeqCst);
        let mut cached = self.cached();
        cached.record = record;
        cached.history = None;
    }

    /// Takes the cached history for a turn; `None` when it must be read from the store.
    pub(crate) fn take_history(&self) -> Option<Vec<Message>> {
        self.cached().history.take()
    }

    /// Keeps a turn's history for the next turn.
    pub(crate) fn keep_history(&self, mut history: Vec<Message>) {
        history.shrink_to_fit();
        self.cached().history = Some(history);
    }

    /// Drops the cached history: a write the cache does not follow changed it.
    pub(crate) fn forget_history(&self) {
        self.cached().history = None;
    }

    /// The session's log, locked: the emitter numbers, queues and publishes a step under it.
    pub(crate) fn log(&self) -> std::sync::MutexGuard<'_, LogState> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records the store's answer for step `number`.
    pub(crate) fn answered(&self, number: u64, failure: Option<StepError>) {
        if let Some(failure) = failure {
            self.failure
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(failure);
        }
        self.answered.send_modify(|n| *n = (*n).max(number));
    }

    /// Why the session's log failed, if it did.
    pub(crate) fn failure(&self) -> Option<StepError> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether every queued step has been answered by the store.
    pub(crate) fn is_flushed(&self) -> bool {
        *self.answered.borrow() >= self.log().queued
    }

    /// Resolves once every step queued so far has been answered by the store; the error is why
    /// the session's log failed, if it did.
    pub(crate) async fn flushed(&self) -> Result<(), StepError> {
        let queued = self.log().queued;
        let mut rx = self.answered.subscribe();
        // The sender lives as long as `self`.
        let _ = rx.wait_for(|answered| *answered >= queued).await;
        self.failure().map_or(Ok(()), Err)
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
        let event = Arc::new(event);
        if let Some(fanout) = &self.fanout {
            fanout.publish_event(&event);
        }
        // No subscriber is fine: the state events are in the store.
        let _ = self.events.send(event);
    }

    /// Records a use at `now_ms`.
    pub(crate) fn touch(&self, now_ms: i64) {
        self.last_used_ms.fetch_max(now_ms, Ordering::Relaxed);
    }

    /// When the hub last handed this runtime out (ms).
    pub(crate) fn last_used_ms(&self) -> i64 {
        self.last_used_ms.load(Ordering::Relaxed)
    }

    /// Hands an event another replica published to this runtime's subscribers; it changes
    /// nothing of this runtime's own counters (this process does not drive the session).
    pub(crate) fn relay(&self, event: Arc<Event>) {
        let _ = self.events.send(event);
    }

    /// Marks the relay of other replicas' events as running; `false` when one already runs.
    pub(crate) fn start_relay(&self) -> bool {
        let mut relaying = self.relaying.lock().unwrap_or_else(|e| e.into_inner());
        !std::mem::replace(&mut *relaying, true)
    }

    /// Ends the relay if nobody subscribes any more (checked under the relay's lock, which a
    /// new subscriber takes after subscribing); whether it ended.
    pub(crate) fn stop_relay_if_unwatched(&self) -> bool {
        let mut relaying = self.relaying.lock().unwrap_or_else(|e| e.into_inner());
        if self.events.receiver_count() == 0 {
            *relaying = false;
        }
        !*relaying
    }

    /// Ends the relay whatever its subscribers (its source failed).
    pub(crate) fn stop_relay(&self) {
        *self.relaying.lock().unwrap_or_else(|e| e.into_inner()) = false;
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

    /// Whether the running turn waits on a prompt (it can be left parked at no cost).
    pub(crate) fn is_parked(&self) -> bool {
        self.turn
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting_for
            .is_some()
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
