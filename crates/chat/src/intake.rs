//! Durable intake: deliveries are stored before they are acknowledged, and workers drain the
//! table.
//!
//! Invariants:
//! - [`accept`] returns [`Taken::Stored`] only after the row is committed; a redelivery of the
//!   same (tenant, platform, delivery id) within the platform's window is [`Taken::Duplicate`].
//! - The table is the queue. A fresh row that finds room in the in-process channel is stored
//!   already claimed (running, first attempt, leased) and handed to the workers with its
//!   content, so running it reads and writes nothing more; otherwise it is stored pending and
//!   the sweeper finds it. A burst is never refused while the database takes writes.
//! - A row is run by whoever claims it (a conditional update with a lease, or the insert that
//!   claims it), so two workers or two replicas never run it at once; a worker that dies loses
//!   its lease and the row runs again. A claimed row that waited in the channel for half its
//!   lease renews it first, on condition that it is still on its first attempt (nobody took it
//!   over), and is dropped otherwise; rows still waiting at shutdown are given back. A claim
//!   names the replica that holds it and when it claimed it, and a replica that starts gives
//!   back at once whatever its name claimed before it was made (its killed predecessor's rows),
//!   before its first sweep.
//! - A message's row is finished by the engine, in the transaction that stores the message, so
//!   a crash in between runs it again rather than losing it or running it twice. While the
//!   message waits to join a running turn, its lease is renewed.
//! - Finished rows stay for their platform's dedupe window, then are purged in bounded batches.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tracing::Instrument;

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tracing::{debug, info, warn};
use workmate_adapter::{Inbound, Taken};
use workmate_engine::Signal;
use workmate_protocol::SessionId;
use workmate_store::{API_COMMANDS, Delivery, IntakeKey, NewDelivery, Queue};

use crate::identity::tenant_of;
use crate::jobs::{self, Handled};
use crate::{Chat, ChatError, Result};

/// Fresh rows waiting for a worker in memory; more are left to the sweeper.
const FAST_PATH: usize = 4096;
/// The longest pause before a failed delivery is tried again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The pause before a delivery whose session another replica drives is tried again, and how
/// many times `max_attempts` it is tried before it is given up (about two minutes by default).
const DRIVEN_ELSEWHERE_WAIT: Duration = Duration::from_secs(1);
const DRIVEN_ELSEWHERE_ROUNDS: i64 = 25;
/// How often finished rows past their dedupe window are deleted, and how many at a time.
const PURGE_EVERY: Duration = Duration::from_secs(60);
const PURGE_BATCH: u32 = 1000;

/// The workers' shared state.
#[derive(Debug)]
pub(crate) struct Intake {
    tx: mpsc::Sender<Queued>,
    rx: Mutex<Option<mpsc::Receiver<Queued>>>,
    permits: Arc<Semaphore>,
    in_flight: Arc<AtomicUsize>,
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
    delivery: Delivery,
    /// When its lease ends at the latest (by the store's clock).
    until_ms: i64,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Stores `inbound` for the workers; see [`Chat::accept`]. A recall is acted on at once
/// instead (see [`crate::recall`]): it must reach a message before a worker takes it.
pub(crate) async fn accept(chat: &Chat, inbound: &Inbound) -> Result<Taken> {
    if let Some(message_ref) = crate::recall::recalled(inbound) {
        return chat.recall(inbound, message_ref).await;
    }
    // A full channel only means the row is stored pending, and the sweeper takes it a moment
    // later.
    let place = chat.inner.intake.tx.clone().try_reserve_owned().ok();
    let lease = place.as_ref().map(|_| chat.lease_ms());
    let Some(delivery) = store(chat, inbound, lease).await? else {
        return Ok(Taken::Duplicate);
    };
    if let (Some(place), Some(lease)) = (place, lease) {
        let until_ms = delivery.received_at_ms.saturating_add(lease);
        place.send(Queued { delivery, until_ms });
    }
    Ok(Taken::Stored)
}

/// Stores `inbound` already claimed by the caller, who runs it now (a slash command, whose
/// reply is its request's response); `None` for a delivery seen before.
pub(crate) async fn accept_claimed(chat: &Chat, inbound: &Inbound) -> Result<Option<IntakeKey>> {
    let stored = store(chat, inbound, Some(chat.lease_ms())).await?;
    Ok(stored.map(|delivery| delivery.key()))
}

/// Writes the intake row; returns it as its first claim leaves it, or `None` when the delivery
/// was seen before.
async fn store(chat: &Chat, inbound: &Inbound, claimed: Option<i64>) -> Result<Option<Delivery>> {
    if chat.inner.stop.is_cancelled() {
        return Err(ChatError::ShuttingDown);
    }
    if inbound.delivery_id.is_empty() {
        return Err(ChatError::Unreadable(
            "the delivery carries no id to deduplicate it on".into(),
        ));
    }
    let tenant = tenant_of(inbound.surface, &inbound.tenant_key);
    // A redelivery another replica (or this one) already stored is known to the shared
    // coordinator: acknowledged without a database round trip. Unknown goes to the table.
    let coordinator = chat.hub().coordinator();
    let dedupe_key = coordinator.is_shared().then(|| {
        format!(
            "{tenant}:{}:{}",
            inbound.surface.as_str(),
            inbound.delivery_id
        )
    });
    if let Some(key) = &dedupe_key
        && coordinator.seen(key).await
    {
        debug!(delivery = %inbound.delivery_id, "Delivery seen before (coordinator); acknowledged, not applied.");
        return Ok(None);
    }
    if let Some(limit) = chat.inner.config.deliveries_per_minute {
        let key = format!("deliveries:{tenant}:{}", inbound.surface.as_str());
        let now = chat.store().clock_ms();
        if let Some(retry_after) = coordinator.try_acquire(&key, limit, now).await {
            return Err(ChatError::OverLimit { limit, retry_after });
        }
    }
    let mut payload =
        serde_json::to_value(inbound).map_err(|e| ChatError::Unreadable(e.to_string()))?;
    if let (Some(parent), Some(fields)) =
        (crate::trace::current_traceparent(), payload.as_object_mut())
    {
        fields.insert(crate::trace::PAYLOAD_KEY.into(), parent.into());
    }
    let new = NewDelivery {
        platform: inbound.surface.as_str().to_owned(),
        delivery_id: inbound.delivery_id.clone(),
        kind: inbound.kind.word().to_owned(),
        payload,
        ttl_ms: millis(chat.dedupe_window(inbound.surface)),
    };
    let intake = chat.store().intake();
    let received_at_ms = chat.store().clock_ms();
    let new_row = match claimed {
        None => intake.accept(&tenant, &new).await?,
        Some(lease) => {
            intake
                .accept_claimed(&tenant, &new, chat.replica(), lease)
                .await?
        }
    };
    // Durable now (stored, or stored before): remembered for the platform's window, off the
    // acknowledgement's path.
    if let Some(key) = dedupe_key {
        let coordinator = std::sync::Arc::clone(coordinator);
        let ttl = chat.dedupe_window(inbound.surface);
        tokio::spawn(async move { coordinator.remember(&key, ttl).await });
    }
    if !new_row {
        debug!(delivery = %inbound.delivery_id, "Delivery seen before; acknowledged, not applied.");
        return Ok(None);
    }
    Ok(Some(Delivery::fresh(&tenant, new, received_at_ms)))
}

/// Starts the dispatcher: fresh rows from the channel, and every `sweep_every` the rows nobody
/// runs (left by a restart or a dead replica, or not taken by a full channel).
pub(crate) fn start(chat: &Chat) {
    let Some(mut rx) = chat
        .inner
        .intake
        .rx
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    else {
        return;
    };
    let chat = chat.clone();
    let tasks = chat.inner.tasks.clone();
    tasks.spawn(async move {
        chat.take_back_own_rows().await;
        let mut signals = chat.hub().coordinator().signals();
        let mut sweep = tokio::time::interval(chat.inner.config.sweep_every);
        sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut purge = tokio::time::interval(PURGE_EVERY);
        purge.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let stop = chat.inner.stop.clone();
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                queued = rx.recv() => {
                    let Some(queued) = queued else { break };
                    let Some(permit) = permit(&chat).await else {
                        chat.give_back(queued).await;
                        break;
                    };
                    let worker = chat.clone();
                    chat.inner.tasks.spawn(async move { worker.run_queued(queued, permit).await });
                }
                _ = sweep.tick() => chat.sweep().await,
                signal = signals.recv() => match signal {
                    Ok(Signal::DeliveryWaiting { tenant, session, platform, delivery_id })
                        if platform != API_COMMANDS =>
                    {
                        let key = IntakeKey { tenant_id: tenant, platform, delivery_id };
                        chat.take_waiting(&session, key).await;
                    }
                    Err(RecvError::Closed) => signals = chat.hub().coordinator().signals(),
                    _ => {}
                },
                _ = purge.tick() => chat.purge().await,
            }
        }
        rx.close();
        while let Ok(queued) = rx.try_recv() {
            chat.give_back(queued).await;
        }
        debug!("Intake dispatcher stopped.");
    });
}

async fn permit(chat: &Chat) -> Option<OwnedSemaphorePermit> {
    let permits = Arc::clone(&chat.inner.intake.permits);
    tokio::select! {
        permit = permits.acquire_owned() => permit.ok(),
        () = chat.inner.stop.cancelled() => None,
    }
}

impl Chat {
    pub(crate) fn lease_ms(&self) -> i64 {
        millis(self.inner.config.lease)
    }

    /// This process's replica name, which its intake claims carry.
    fn replica(&self) -> &str {
        &self.inner.hub.config().replica
    }

    /// Gives back the rows this replica's previous life claimed before this layer was made (it
    /// was killed holding them), so the first sweep runs them now rather than after their leases
    /// lapse.
    async fn take_back_own_rows(&self) {
        match self
            .store()
            .intake()
            .release_claims_of(Queue::Chat, self.replica(), self.inner.started_ms)
            .await
        {
            Ok(0) => {}
            Ok(released) => info!(
                deliveries = released,
                replica = self.replica(),
                "Took back the deliveries this replica held before it restarted."
            ),
            Err(e) => {
                warn!(error = %e, "Cannot take back this replica's earlier deliveries; they run once their leases lapse.");
            }
        }
    }

    /// Claims as many unfinished rows as there are free workers, and runs them.
    async fn sweep(&self) {
        let free = self.inner.intake.permits.available_permits();
        if free == 0 {
            return;
        }
        let limit = u32::try_from(free).unwrap_or(u32::MAX);
        let due = match self
            .store()
            .intake()
            .claim_due(Queue::Chat, limit, self.replica(), self.lease_ms())
            .await
        {
            Ok(due) => due,
            Err(e) => {
                warn!(error = %e, "Cannot sweep the intake table.");
                return;
            }
        };
        if !due.is_empty() {
            info!(
                deliveries = due.len(),
                "Running deliveries nobody was running."
            );
        }
        for delivery in due {
            let Some(permit) = permit(self).await else {
                return;
            };
            let worker = self.clone();
            self.inner
                .tasks
                .spawn(async move { worker.run(delivery, permit).await });
        }
    }

    /// Runs at once a delivery that waits for the replica driving `session`, if that is this
    /// one (a turn of it runs here): a message then steers that turn, as it would have had it
    /// arrived here. Another replica's session, or a row someone took meanwhile, is left alone.
    async fn take_waiting(&self, session: &SessionId, key: IntakeKey) {
        if !self
            .hub()
            .is_running(&key.tenant_id, session)
            .await
            .unwrap_or(false)
        {
            return;
        }
        let claimed = self
            .store()
            .intake()
            .claim_waiting(&key, self.replica(), self.lease_ms())
            .await;
        let delivery = match claimed {
            Ok(Some(delivery)) => delivery,
            Ok(None) => return,
            Err(e) => {
                warn!(delivery = %key.delivery_id, error = %e, "Cannot take up a delivery that waits for this replica; it runs at its retry.");
                return;
            }
        };
        debug!(delivery = %key.delivery_id, "Took up a delivery another replica could not run: its session runs here.");
        let Some(permit) = permit(self).await else {
            self.give_back_claimed(&key).await;
            return;
        };
        let worker = self.clone();
        self.inner
            .tasks
            .spawn(async move { worker.run(delivery, permit).await });
    }

    /// Deletes finished rows whose dedupe window has passed.
    async fn purge(&self) {
        match self.store().intake().purge_expired(PURGE_BATCH).await {
            Ok(0) => {}
            Ok(purged) => debug!(purged, "Expired deliveries purged."),
            Err(e) => warn!(error = %e, "Cannot purge expired deliveries."),
        }
        match self
            .store()
            .shared_values()
            .purge_expired(PURGE_BATCH)
            .await
        {
            Ok(0) => {}
            Ok(purged) => debug!(purged, "Expired shared values purged."),
            Err(e) => warn!(error = %e, "Cannot purge expired shared values."),
        }
        let before = self.store().clock_ms() - crate::recall::REMEMBERED_MS;
        if let Err(e) = self.store().message_sessions().forget_before(before).await {
            warn!(error = %e, "Cannot forget old messages' conversations.");
        }
    }

    /// Runs a row this process stored claimed; one that waited for half its lease is renewed
    /// first, unless someone took it over meanwhile (then it is theirs).
    async fn run_queued(self, queued: Queued, permit: OwnedSemaphorePermit) {
        let Queued { delivery, until_ms } = queued;
        let lease = self.lease_ms();
        if until_ms.saturating_sub(self.store().clock_ms()) < lease / 2 {
            let key = delivery.key();
            match self.store().intake().renew_attempt(&key, 1, lease).await {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    warn!(error = %e, delivery = %key.delivery_id, "Cannot renew a waiting delivery's lease; it runs again once the lease lapses.");
                    return;
                }
            }
        }
        self.run(delivery, permit).await;
    }

    /// Gives a row that waited in the channel back to the table at shutdown, so the next start
    /// (or another replica) runs it at once rather than after its lease.
    async fn give_back(&self, queued: Queued) {
        self.give_back_claimed(&queued.delivery.key()).await;
    }

    /// Puts a claimed row back, due at once.
    async fn give_back_claimed(&self, key: &IntakeKey) {
        let intake = self.store().intake();
        if let Err(e) = intake
            .retry_later(key, 0, "not run before the process stopped")
            .await
        {
            debug!(error = %e, delivery = %key.delivery_id, "A waiting delivery runs again once its lease lapses.");
        }
    }

    async fn run(self, delivery: Delivery, permit: OwnedSemaphorePermit) {
        let in_flight = Arc::clone(&self.inner.intake.in_flight);
        in_flight.fetch_add(1, Ordering::Relaxed);
        let key = delivery.key();
        let span = tracing::info_span!("chat.job", kind = %delivery.kind);
        let parent = delivery
            .payload
            .get(crate::trace::PAYLOAD_KEY)
            .and_then(serde_json::Value::as_str);
        crate::trace::continue_trace(&span, parent);
        let outcome = jobs::handle(&self, &delivery).instrument(span).await;
        drop(permit);
        let intake = self.store().intake();
        let recorded = match outcome {
            Ok(Handled::Done) => intake.finish(&key).await,
            // The engine keeps the row leased until it stores the message.
            Ok(Handled::ByEngine) => Ok(()),
            // Another replica drives the session (its turn runs there): this one tries again
            // soon, until that turn is over and its lease can be taken, for a few minutes.
            Err(ChatError::Engine(workmate_engine::Error::DrivenElsewhere(session)))
                if delivery.attempts < self.inner.config.max_attempts * DRIVEN_ELSEWHERE_ROUNDS =>
            {
                let e = workmate_engine::Error::DrivenElsewhere(session.clone());
                debug!(delivery = %key.delivery_id, error = %e, "Delivery waits for the replica that drives its session.");
                let waiting = intake
                    .retry_later(&key, millis(DRIVEN_ELSEWHERE_WAIT), &e.to_string())
                    .await;
                // The replica that drives the session takes it up at once, to steer its turn.
                self.hub().coordinator().signal(Signal::DeliveryWaiting {
                    tenant: key.tenant_id.clone(),
                    session,
                    platform: key.platform.clone(),
                    delivery_id: key.delivery_id.clone(),
                });
                waiting
            }
            Err(e) if retryable(&e) && delivery.attempts < self.inner.config.max_attempts => {
                let wait = backoff(self.inner.config.backoff, delivery.attempts);
                debug!(delivery = %key.delivery_id, error = %e, ?wait, "Delivery will be tried again.");
                intake.retry_later(&key, millis(wait), &e.to_string()).await
            }
            Err(e) => {
                warn!(delivery = %key.delivery_id, attempts = delivery.attempts, error = %e, "Delivery given up.");
                let failed = intake.fail(&key, &e.to_string()).await;
                jobs::tell_not_taken(&self, &delivery, &e).await;
                failed
            }
        };
        if let Err(e) = recorded {
            warn!(delivery = %key.delivery_id, error = %e, "Cannot record a delivery's outcome; its lease will lapse and it runs again.");
        }
        in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether another attempt may succeed.
fn retryable(error: &ChatError) -> bool {
    match error {
        ChatError::Store(_) | ChatError::Busy(_) | ChatError::ShuttingDown => true,
        ChatError::Engine(e) => matches!(
            e,
            workmate_engine::Error::Busy(_)
                | workmate_engine::Error::ShuttingDown
                | workmate_engine::Error::Store(_)
        ),
        ChatError::Platform(e) => !matches!(e, workmate_adapter::AdapterError::Rejected(_)),
        ChatError::Cards(_) => true,
        ChatError::OverLimit { .. } => true,
        ChatError::Automation(_)
        | ChatError::Unreadable(_)
        | ChatError::NoPlatform(_)
        | ChatError::Deactivated(_) => false,
    }
}

/// `first`, doubling with each attempt, at most [`MAX_BACKOFF`].
fn backoff(first: Duration, attempts: i64) -> Duration {
    let doublings = u32::try_from(attempts.saturating_sub(1).clamp(0, 5)).unwrap_or(5);
    first.saturating_mul(1 << doublings).min(MAX_BACKOFF)
}
