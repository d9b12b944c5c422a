//! The per-message card update coalescer.
//!
//! A live turn card changes many times a second while an answer streams, and a platform takes
//! about one update per second per message (Slack `chat.update` is Tier 3; Feishu PATCH 5 QPS per
//! message). Invariants, per card:
//! - at most one call per [`ChatAdapter::min_update_interval`], measured between attempt starts
//!   (a [`Coalescer::flush`] or shutdown skips the wait once, to send a final state promptly);
//! - the latest submitted state is always sent eventually; an older state is never sent after a
//!   newer one (states are taken newest-first by one task, and a retry sends the newest state,
//!   not the one that failed);
//! - the first send announces the post ([`CardStore::intend`]), posts the card and records its
//!   message id; every later send, by this or any other process after a restart, updates that
//!   message with a version from [`CardStore::next_version`], strictly increasing;
//! - a post announced but not recorded (the attempt failed, or the process died) is finished,
//!   never repeated as a second message: the platform finds the message again, or reposts under
//!   the id it reserved and the same idempotency key (see [`crate::Posting`]).
//!
//! Shape: one tokio task per *active* card, spawned by the first [`Coalescer::submit`] and ending
//! once an interval has passed with nothing new to send. A card therefore costs nothing when idle,
//! cards never wait on each other (a card stuck in a 30 s `Retry-After` does not delay the
//! others), and the per-card ordering is simply the task's sequence. The shared map holds only the
//! latest unsent state per card, so memory is bounded by the number of active cards, whatever the
//! submit rate. No lock is held across an `.await`.
//!
//! Not covered: on a platform that can neither reserve an id nor find a post again (WeCom), a
//! post that reached the platform but was not recorded is posted again; pacing is per message,
//! not per channel.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, warn};
use workmate_cards::Card;

use crate::{
    AdapterError, CardId, CardStore, ChatAdapter, ChatTarget, Error, PostedCard, Posting, Result,
    RetryPolicy,
};

/// Paces and delivers card states for one platform.
pub struct Coalescer {
    inner: Arc<Inner>,
}

impl fmt::Debug for Coalescer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Coalescer")
            .field("platform", &self.inner.adapter.surface())
            .field("active", &self.active())
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Inner {
    adapter: Arc<dyn ChatAdapter>,
    store: Arc<dyn CardStore>,
    policy: RetryPolicy,
    slots: Mutex<HashMap<CardId, Slot>>,
    tracker: TaskTracker,
    /// No more submits; tasks stop pacing and send what they hold at once.
    stop: CancellationToken,
    /// The grace period is over: tasks stop retrying and end.
    abort: CancellationToken,
    epochs: AtomicU64,
}

/// What the map holds for an active card. Generations count submits since the task started.
#[derive(Debug)]
struct Slot {
    /// Which task owns the slot, so a dying task never removes its successor's slot.
    epoch: u64,
    target: ChatTarget,
    latest: Option<Card>,
    submitted: u64,
    delivered: u64,
    failed: Option<(u64, String)>,
    waiters: Vec<(u64, oneshot::Sender<Result<(), String>>)>,
    urgent: bool,
    wake: Arc<Notify>,
}

impl Slot {
    /// Records how a state fared and answers the flushes it satisfies.
    fn settle(&mut self, outcome: &Result<u64, (u64, String)>) {
        match outcome {
            Ok(generation) => self.delivered = self.delivered.max(*generation),
            Err((generation, reason)) => self.failed = Some((*generation, reason.clone())),
        }
        for (want, tx) in std::mem::take(&mut self.waiters) {
            match self.answer(want) {
                Some(answer) => {
                    // The flusher may have stopped waiting; nothing to do then.
                    let _ = tx.send(answer);
                }
                None => self.waiters.push((want, tx)),
            }
        }
        self.urgent = !self.waiters.is_empty();
    }

    /// The outcome for a flush of generation `want`, once it is known.
    fn answer(&self, want: u64) -> Option<Result<(), String>> {
        if self.delivered >= want {
            return Some(Ok(()));
        }
        match &self.failed {
            Some((generation, reason)) if *generation >= want => Some(Err(reason.clone())),
            _ => None,
        }
    }
}

impl Coalescer {
    /// A coalescer for `adapter`'s platform, remembering posted cards in `store`.
    pub fn new(
        adapter: Arc<dyn ChatAdapter>,
        store: Arc<dyn CardStore>,
        policy: RetryPolicy,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                adapter,
                store,
                policy,
                slots: Mutex::new(HashMap::new()),
                tracker: TaskTracker::new(),
                stop: CancellationToken::new(),
                abort: CancellationToken::new(),
                epochs: AtomicU64::new(0),
            }),
        }
    }

    /// Makes `state` the card's latest state, to be posted in `target` if the card was never
    /// posted. Returns at once; superseded unsent states are replaced, never queued. Must be
    /// called inside a tokio runtime; fails only once shutdown has begun.
    pub fn submit(&self, card: CardId, target: ChatTarget, state: Card) -> Result<()> {
        if self.inner.stop.is_cancelled() {
            return Err(Error::ShuttingDown);
        }
        let mut slots = self.inner.lock();
        if let Some(slot) = slots.get_mut(&card) {
            slot.latest = Some(state);
            slot.target = target;
            slot.submitted += 1;
            return Ok(());
        }
        let epoch = self.inner.epochs.fetch_add(1, Ordering::Relaxed);
        let wake = Arc::new(Notify::new());
        slots.insert(
            card.clone(),
            Slot {
                epoch,
                target,
                latest: Some(state),
                submitted: 1,
                delivered: 0,
                failed: None,
                waiters: Vec::new(),
                urgent: false,
                wake: wake.clone(),
            },
        );
        drop(slots);
        let owner = SlotOwner {
            inner: self.inner.clone(),
            card,
            epoch,
            retired: false,
        };
        self.inner.tracker.spawn(owner.run(wake));
        Ok(())
    }

    /// Sends the card's latest state without waiting out the interval, and returns once every
    /// state submitted before this call is delivered; an error if the newest of them was given up
    /// on. Returns at once for a card with nothing in flight.
    pub async fn flush(&self, card: &CardId) -> Result<()> {
        let answer = {
            let mut slots = self.inner.lock();
            let Some(slot) = slots.get_mut(card) else {
                return Ok(());
            };
            let want = slot.submitted;
            match slot.answer(want) {
                Some(answer) => Err(answer),
                None => {
                    let (tx, rx) = oneshot::channel();
                    slot.waiters.push((want, tx));
                    slot.urgent = true;
                    slot.wake.notify_one();
                    Ok(rx)
                }
            }
        };
        let outcome = match answer {
            Err(known) => known,
            // The task ended without answering: it was aborted at shutdown.
            Ok(rx) => rx.await.unwrap_or_else(|_| Err("shut down".to_owned())),
        };
        outcome.map_err(|reason| Error::Delivery {
            card: card.to_string(),
            reason,
        })
    }

    /// Cards with a task right now (sending, pacing or retrying).
    pub fn active(&self) -> usize {
        self.inner.lock().len()
    }

    /// Takes no more submits, sends every card's latest state at once, and waits up to `grace`
    /// for them; then stops retries, reports what was not sent, and joins every task.
    pub async fn shutdown(&self, grace: Duration) {
        self.inner.stop.cancel();
        for slot in self.inner.lock().values() {
            slot.wake.notify_one();
        }
        self.inner.tracker.close();
        if tokio::time::timeout(grace, self.inner.tracker.wait())
            .await
            .is_err()
        {
            warn!(
                platform = self.inner.adapter.surface().as_str(),
                cards = self.active(),
                "Card updates still pending after the shutdown grace; abandoning them."
            );
            self.inner.abort.cancel();
            self.inner.tracker.wait().await;
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, HashMap<CardId, Slot>> {
        // Every critical section leaves the map consistent, so a poisoned lock is still usable.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A card's task: owns its slot while it runs and removes it however it ends.
struct SlotOwner {
    inner: Arc<Inner>,
    card: CardId,
    epoch: u64,
    retired: bool,
}

/// What the task knows about the card's message on the platform.
#[derive(Default)]
struct Message {
    loaded: bool,
    posted: Option<PostedCard>,
    recorded: bool,
    /// A post announced but not known to be made (by an attempt that failed, or a process that
    /// died): what it reserved.
    announced: Option<PostedCard>,
}

type Taken = (Card, ChatTarget, u64);

impl SlotOwner {
    async fn run(mut self, wake: Arc<Notify>) {
        let interval = self.inner.adapter.min_update_interval();
        let mut message = Message::default();
        let mut next_at = Instant::now();
        loop {
            self.pace(next_at, &wake).await;
            if self.inner.abort.is_cancelled() {
                return; // Drop fails the waiters and logs what was lost.
            }
            let Some(taken) = self.take_or_retire() else {
                return;
            };
            let (started, outcome) = self.deliver(&mut message, taken).await;
            next_at = started + interval;
            if let Some(slot) = self.own_slot(&mut self.inner.lock()) {
                slot.settle(&outcome);
            }
        }
    }

    /// Waits until the next send is allowed, unless a flush or shutdown wants it now.
    async fn pace(&self, next_at: Instant, wake: &Notify) {
        loop {
            if Instant::now() >= next_at || self.inner.stop.is_cancelled() || self.urgent() {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep_until(next_at) => {}
                () = wake.notified() => {}
                () = self.inner.stop.cancelled() => {}
            }
        }
    }

    fn urgent(&self) -> bool {
        self.own_slot(&mut self.inner.lock())
            .is_some_and(|slot| slot.urgent)
    }

    fn own_slot<'g>(&self, slots: &'g mut HashMap<CardId, Slot>) -> Option<&'g mut Slot> {
        slots.get_mut(&self.card).filter(|s| s.epoch == self.epoch)
    }

    /// The latest state to send; or, with nothing new, removes the slot and ends the task (a
    /// later submit starts a fresh one). Both under one lock, so no submit falls in between.
    fn take_or_retire(&mut self) -> Option<Taken> {
        let mut slots = self.inner.lock();
        let slot = self.own_slot(&mut slots)?;
        if let Some(state) = slot.latest.take() {
            return Some((state, slot.target.clone(), slot.submitted));
        }
        slots.remove(&self.card);
        self.retired = true;
        None
    }

    /// A state submitted after the one being retried, if any.
    fn take_newer(&self) -> Option<Taken> {
        let mut slots = self.inner.lock();
        let slot = self.own_slot(&mut slots)?;
        let state = slot.latest.take()?;
        Some((state, slot.target.clone(), slot.submitted))
    }

    /// Sends one state, retrying per the policy and switching to a newer state between attempts.
    /// Returns when the last attempt started, and the generation delivered or given up on.
    async fn deliver(
        &self,
        message: &mut Message,
        (mut state, mut target, mut generation): Taken,
    ) -> (Instant, Result<u64, (u64, String)>) {
        let platform = self.inner.adapter.surface().as_str();
        let mut failures = 0;
        loop {
            let started = Instant::now();
            let error = match self.send(message, &target, &state).await {
                Ok(()) => return (started, Ok(generation)),
                Err(error) => error,
            };
            failures += 1;
            let Some(wait) = self.inner.policy.delay(failures, &error) else {
                warn!(card = %self.card, platform, failures, %error, "Card state not delivered.");
                return (started, Err((generation, error.to_string())));
            };
            debug!(card = %self.card, platform, failures, ?wait, %error, "Card send failed; retrying.");
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = self.inner.abort.cancelled() => {
                    return (started, Err((generation, "shut down while retrying".to_owned())));
                }
            }
            // Whatever arrived meanwhile supersedes the failed state; sending the old one would
            // only put a stale card on screen before the new one.
            if let Some(newer) = self.take_newer() {
                (state, target, generation) = newer;
            }
        }
    }

    /// One attempt: post the card, or update it with the next version. Store failures count as
    /// transient platform failures, since the retry is the same.
    async fn send(
        &self,
        message: &mut Message,
        target: &ChatTarget,
        state: &Card,
    ) -> Result<(), AdapterError> {
        let adapter = &self.inner.adapter;
        let store = &self.inner.store;
        let platform = adapter.surface();
        if !message.loaded {
            if let Some(stored) = store
                .get(&self.card, platform)
                .await
                .map_err(|e| transient(&e))?
            {
                if stored.confirmed {
                    message.posted = Some(stored.posted);
                    message.recorded = true;
                } else {
                    message.announced = Some(stored.posted);
                }
            }
            message.loaded = true;
        }
        let rendered = adapter.render(state);
        if message.posted.is_none() && self.post(message, target, &rendered).await? {
            return Ok(());
        }
        let Some(posted) = &message.posted else {
            return Err(AdapterError::Transient(
                "the card's message is not known".into(),
            ));
        };
        if !message.recorded {
            store
                .record(&self.card, platform, posted)
                .await
                .map_err(|e| transient(&e))?;
            message.recorded = true;
        }
        let version = store
            .next_version(&self.card, platform)
            .await
            .map_err(|e| transient(&e))?;
        adapter.update(posted, &rendered, version).await
    }

    /// Puts the card on the platform: announces the post, then makes it; or, when an earlier
    /// attempt announced one, finishes that post in the message it made (found again, or under
    /// the id it reserved) rather than making a second. `true` when the message now shows
    /// `rendered`; `false` when it shows an earlier state and still needs an update.
    async fn post(
        &self,
        message: &mut Message,
        target: &ChatTarget,
        rendered: &serde_json::Value,
    ) -> Result<bool, AdapterError> {
        let adapter = &self.inner.adapter;
        let store = &self.inner.store;
        let platform = adapter.surface();
        let key = self.card.post_key();
        let posting = match message.announced.clone() {
            Some(announced) if announced.message_id.is_empty() => {
                if let Some(found) = adapter.find_posted(target, &key).await? {
                    debug!(card = %self.card, platform = platform.as_str(), message = %found.message_id, "Found the card an earlier attempt posted.");
                    message.posted = Some(found);
                    message.recorded = false;
                    message.announced = None;
                    return Ok(false);
                }
                Posting {
                    key,
                    reserved: None,
                    again: true,
                }
            }
            Some(announced) => Posting {
                key,
                reserved: Some(announced),
                again: true,
            },
            None => {
                let reserved = adapter.reserve(target, rendered, &key).await?;
                let announced = reserved.clone().unwrap_or_else(|| PostedCard {
                    chat_id: target.chat_id.clone(),
                    message_id: String::new(),
                });
                store
                    .intend(&self.card, platform, &announced)
                    .await
                    .map_err(|e| transient(&e))?;
                message.announced = Some(announced);
                Posting {
                    key,
                    reserved,
                    again: false,
                }
            }
        };
        workmate_faults::kill_point("card.posting");
        let posted = adapter.post(target, rendered, &posting).await?;
        workmate_faults::kill_point("card.posted");
        debug!(card = %self.card, platform = platform.as_str(), message = %posted.message_id, again = posting.again, "Card posted.");
        message.announced = None;
        // Remember it before recording: if recording fails, the retry updates this message
        // instead of posting a second one.
        let posted = message.posted.insert(posted);
        store
            .record(&self.card, platform, posted)
            .await
            .map_err(|e| transient(&e))?;
        message.recorded = true;
        // A post that finished an earlier attempt's under the id it reserved shows what that
        // attempt made the card with, which may be an older state.
        Ok(!(posting.again && posting.reserved.is_some()))
    }
}

fn transient(error: &Error) -> AdapterError {
    AdapterError::Transient(format!("card store: {error}"))
}

impl Drop for SlotOwner {
    /// Ends the slot of a task that did not retire normally (aborted at shutdown, or panicked),
    /// so flushes get an answer and the next submit starts a fresh task.
    fn drop(&mut self) {
        if self.retired {
            return;
        }
        let mut slots = self.inner.lock();
        if self.own_slot(&mut slots).is_none() {
            return;
        }
        if let Some(slot) = slots.remove(&self.card) {
            if slot.latest.is_some() {
                warn!(card = %self.card, platform = self.inner.adapter.surface().as_str(), "Latest card state abandoned.");
            }
            for (_, tx) in slot.waiters {
                let _ = tx.send(Err("card task ended before delivery".to_owned()));
            }
        }
    }
}
