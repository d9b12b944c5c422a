//! The intake's workers: the dispatcher that takes fresh rows from the channel and sweeps the
//! table for rows nobody runs, and the run of one row through the job path.
//!
//! Invariants: a row is run only by whoever claimed it; at most `workers` rows run at once;
//! rows still waiting in the channel at shutdown are given back; a failed row is retried with
//! a doubling pause up to its attempts, then given up and its thread told.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::broadcast::error::RecvError;
use tracing::{Instrument, debug, info, warn};
use workmate_engine::Signal;
use workmate_protocol::SessionId;
use workmate_store::{API_COMMANDS, Delivery, IntakeKey, Queue};

use super::{Handled, Jobs, millis};
use crate::error::ChatError;
use crate::handle::Chat;
use crate::queue::Queued;

/// The longest pause before a failed delivery is tried again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The pause before a delivery whose session another replica drives is tried again, and how
/// many times `max_attempts` it is tried before it is given up (about two minutes by default).
const DRIVEN_ELSEWHERE_WAIT: Duration = Duration::from_secs(1);
const DRIVEN_ELSEWHERE_ROUNDS: i64 = 25;
/// How often finished rows past their dedupe window are deleted, and how many at a time.
const PURGE_EVERY: Duration = Duration::from_secs(60);
const PURGE_BATCH: u32 = 1000;

/// One worker's view of the layer: the handle, and the job path it hands each row to.
#[derive(Clone)]
struct Workers {
    chat: Chat,
    jobs: Arc<dyn Jobs>,
}

/// Starts the dispatcher: fresh rows from the channel, and every `sweep_every` the rows nobody
/// runs (left by a restart or a dead replica, or not taken by a full channel); each row is run
/// by `jobs`.
pub(crate) fn start(chat: &Chat, jobs: Arc<dyn Jobs>) {
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
    let workers = Workers {
        chat: chat.clone(),
        jobs,
    };
    let tasks = chat.inner.tasks.clone();
    tasks.spawn(async move {
        let chat = &workers.chat;
        workers.take_back_own_rows().await;
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
                    let Some(permit) = permit(chat).await else {
                        workers.give_back(queued).await;
                        break;
                    };
                    let worker = workers.clone();
                    chat.inner.tasks.spawn(async move { worker.run_queued(queued, permit).await });
                }
                _ = sweep.tick() => workers.sweep().await,
                signal = signals.recv() => match signal {
                    Ok(Signal::DeliveryWaiting { tenant, session, platform, delivery_id })
                        if platform != API_COMMANDS =>
                    {
                        let key = IntakeKey { tenant_id: tenant, platform, delivery_id };
                        workers.take_waiting(&session, key).await;
                    }
                    Err(RecvError::Closed) => signals = chat.hub().coordinator().signals(),
                    _ => {}
                },
                _ = purge.tick() => workers.purge().await,
            }
        }
        rx.close();
        while let Ok(queued) = rx.try_recv() {
            workers.give_back(queued).await;
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

impl Workers {
    /// Gives back the rows this replica's previous life claimed before this layer was made (it
    /// was killed holding them), so the first sweep runs them now rather than after their leases
    /// lapse.
    async fn take_back_own_rows(&self) {
        match self
            .chat
            .store()
            .intake()
            .release_claims_of(Queue::Chat, self.chat.replica(), self.chat.inner.started_ms)
            .await
        {
            Ok(0) => {}
            Ok(released) => info!(
                deliveries = released,
                replica = self.chat.replica(),
                "Took back the deliveries this replica held before it restarted."
            ),
            Err(e) => {
                warn!(error = %e, "Cannot take back this replica's earlier deliveries; they run once their leases lapse.");
            }
        }
    }

    /// Claims as many unfinished rows as there are free workers, and runs them.
    async fn sweep(&self) {
        let free = self.chat.inner.intake.permits.available_permits();
        if free == 0 {
            return;
        }
        let limit = u32::try_from(free).unwrap_or(u32::MAX);
        let due = match self
            .chat
            .store()
            .intake()
            .claim_due(
                Queue::Chat,
                limit,
                self.chat.replica(),
                self.chat.lease_ms(),
            )
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
            let Some(permit) = permit(&self.chat).await else {
                return;
            };
            let worker = self.clone();
            self.chat
                .inner
                .tasks
                .spawn(async move { worker.run(delivery, permit).await });
        }
    }

    /// Runs at once a delivery that waits for the replica driving `session`, if that is this
    /// one (a turn of it runs here): a message then steers that turn, as it would have had it
    /// arrived here. Another replica's session, or a row someone took meanwhile, is left alone.
    async fn take_waiting(&self, session: &SessionId, key: IntakeKey) {
        if !self
            .chat
            .hub()
            .is_running(&key.tenant_id, session)
            .await
            .unwrap_or(false)
        {
            return;
        }
        let claimed = self
            .chat
            .store()
            .intake()
            .claim_waiting(&key, self.chat.replica(), self.chat.lease_ms())
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
        let Some(permit) = permit(&self.chat).await else {
            self.give_back_claimed(&key).await;
            return;
        };
        let worker = self.clone();
        self.chat
            .inner
            .tasks
            .spawn(async move { worker.run(delivery, permit).await });
    }

    /// Deletes finished rows whose dedupe window has passed.
    async fn purge(&self) {
        match self.chat.store().intake().purge_expired(PURGE_BATCH).await {
            Ok(0) => {}
            Ok(purged) => debug!(purged, "Expired deliveries purged."),
            Err(e) => warn!(error = %e, "Cannot purge expired deliveries."),
        }
        match self
            .chat
            .store()
            .shared_values()
            .purge_expired(PURGE_BATCH)
            .await
        {
            Ok(0) => {}
            Ok(purged) => debug!(purged, "Expired shared values purged."),
            Err(e) => warn!(error = %e, "Cannot purge expired shared values."),
        }
        let before = self.chat.store().clock_ms() - crate::recall::REMEMBERED_MS;
        if let Err(e) = self
            .chat
            .store()
            .message_sessions()
            .forget_before(before)
            .await
        {
            warn!(error = %e, "Cannot forget old messages' conversations.");
        }
    }

    /// Runs a row this process stored claimed; one that waited for half its lease is renewed
    /// first, unless someone took it over meanwhile (then it is theirs).
    async fn run_queued(self, queued: Queued, permit: OwnedSemaphorePermit) {
        let Queued { delivery, until_ms } = queued;
        let lease = self.chat.lease_ms();
        if until_ms.saturating_sub(self.chat.store().clock_ms()) < lease / 2 {
            let key = delivery.key();
            match self
                .chat
                .store()
                .intake()
                .renew_attempt(&key, 1, lease)
                .await
            {
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
        let intake = self.chat.store().intake();
        if let Err(e) = intake
            .retry_later(key, 0, "not run before the process stopped")
            .await
        {
            debug!(error = %e, delivery = %key.delivery_id, "A waiting delivery runs again once its lease lapses.");
        }
    }

    async fn run(self, delivery: Delivery, permit: OwnedSemaphorePermit) {
        let in_flight = Arc::clone(&self.chat.inner.intake.in_flight);
        in_flight.fetch_add(1, Ordering::Relaxed);
        let key = delivery.key();
        let span = tracing::info_span!("chat.job", kind = %delivery.kind);
        let parent = delivery
            .payload
            .get(crate::trace::PAYLOAD_KEY)
            .and_then(serde_json::Value::as_str);
        crate::trace::continue_trace(&span, parent);
        let outcome = self.jobs.run(&delivery).instrument(span).await;
        drop(permit);
        let intake = self.chat.store().intake();
        let recorded = match outcome {
            Ok(Handled::Done) => intake.finish(&key).await,
            // The engine keeps the row leased until it stores the message.
            Ok(Handled::ByEngine) => Ok(()),
            // Another replica drives the session (its turn runs there): this one tries again
            // soon, until that turn is over and its lease can be taken, for a few minutes.
            Err(ChatError::Engine(workmate_engine::Error::DrivenElsewhere(session)))
                if delivery.attempts
                    < self.chat.inner.config.max_attempts * DRIVEN_ELSEWHERE_ROUNDS =>
            {
                let e = workmate_engine::Error::DrivenElsewhere(session.clone());
                debug!(delivery = %key.delivery_id, error = %e, "Delivery waits for the replica that drives its session.");
                let waiting = intake
                    .retry_later(&key, millis(DRIVEN_ELSEWHERE_WAIT), &e.to_string())
                    .await;
                // The replica that drives the session takes it up at once, to steer its turn.
                self.chat
                    .hub()
                    .coordinator()
                    .signal(Signal::DeliveryWaiting {
                        tenant: key.tenant_id.clone(),
                        session,
                        platform: key.platform.clone(),
                        delivery_id: key.delivery_id.clone(),
                    });
                waiting
            }
            Err(e) if retryable(&e) && delivery.attempts < self.chat.inner.config.max_attempts => {
                let wait = backoff(self.chat.inner.config.backoff, delivery.attempts);
                debug!(delivery = %key.delivery_id, error = %e, ?wait, "Delivery will be tried again.");
                intake.retry_later(&key, millis(wait), &e.to_string()).await
            }
            Err(e) => {
                warn!(delivery = %key.delivery_id, attempts = delivery.attempts, error = %e, "Delivery given up.");
                let failed = intake.fail(&key, &e.to_string()).await;
                self.jobs.given_up(&delivery, &e).await;
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
