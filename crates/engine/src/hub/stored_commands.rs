//! Commands sent to the HTTP API, stored before they are acknowledged, like chat deliveries.
//!
//! Invariants:
//! - a command is written to the intake table (claimed by this replica) before it is applied,
//!   so a caller who got an answer never loses the command to a crash: a user message marks its
//!   row done in the transaction that stores it in history (see `commands.rs`), any other
//!   command right after it took effect;
//! - a row a crash left unfinished is run again by [`SessionHub::run_stored_commands`] (at once
//!   by the same replica when it restarts, else by any replica once its lease lapses), and since
//!   the row is finished with the message, a message is stored exactly once;
//! - an `Idempotency-Key` names the row: a request repeated with the same key (per tenant and
//!   caller, for [`KEY_WINDOW`]) finds the row and changes nothing;
//! - a command the engine refuses (forbidden, invalid) fails its row with the reason the caller
//!   is given, and never runs behind their back; one that cannot run yet (another replica drives
//!   the session, the process is stopping) waits in its row and runs as soon as it can; the
//!   replica that drives the session is told through the coordinator and takes it up at once,
//!   so a message steers the turn it runs there.

use std::time::Duration;

use tracing::{debug, info, warn};
use workmate_protocol::{Command, SessionId, TenantId};
use workmate_store::{API_COMMANDS, Delivery, IntakeKey, NewDelivery, Queue};

use super::SessionHub;
use super::commands::Accepted;
use crate::Signal;
use crate::{Error, Result};

/// How long an `Idempotency-Key` is remembered.
pub const KEY_WINDOW: Duration = Duration::from_secs(24 * 3600);
/// The pause before a command that could not run yet is tried again.
const WAIT: Duration = Duration::from_secs(1);
/// How many times a command that cannot run yet is tried before it is given up (about two
/// minutes at [`WAIT`]).
const MAX_ATTEMPTS: i64 = 120;
/// Rows claimed per sweep.
const SWEEP_BATCH: u32 = 64;

/// What became of a command sent to the API.
#[derive(Clone, Debug, PartialEq)]
pub enum Submitted {
    /// It was stored and applied.
    Applied(Accepted),
    /// It was stored and waits to run (another replica drives the session, or this one is
    /// stopping); it runs as soon as it can.
    Queued,
    /// A command with the same idempotency key was received before: nothing was done.
    Duplicate,
}

/// The stored form of a command: its session and itself.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    session_id: SessionId,
    command: Command,
}

impl SessionHub {
    /// Stores `command` for `session`, then applies it. `idempotency_key`, already scoped to
    /// the caller, names the row; without one the command is stored under a fresh id. `lease`
    /// is how long this replica's claim on the row lasts without renewal.
    pub async fn submit_stored(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        command: Command,
        idempotency_key: Option<&str>,
        lease: Duration,
    ) -> Result<Submitted> {
        if self.inner.shutdown.is_cancelled() {
            return Err(Error::ShuttingDown);
        }
        let delivery_id = idempotency_key.map_or_else(
            || format!("once:{}", uuid::Uuid::now_v7()),
            |key| format!("key:{key}"),
        );
        let payload = serde_json::to_value(Stored {
            session_id: session.clone(),
            command: command.clone(),
        })
        .map_err(|e| Error::Rejected(format!("the command cannot be stored: {e}")))?;
        let new = NewDelivery {
            platform: API_COMMANDS.to_owned(),
            delivery_id,
            kind: "command".to_owned(),
            payload,
            ttl_ms: millis(KEY_WINDOW),
        };
        let key = IntakeKey {
            tenant_id: tenant.clone(),
            platform: new.platform.clone(),
            delivery_id: new.delivery_id.clone(),
        };
        let intake = self.store().intake();
        if !intake
            .accept_claimed(tenant, &new, &self.inner.replica, millis(lease))
            .await?
        {
            debug!(delivery = %key.delivery_id, "Command repeated under its idempotency key; not applied again.");
            return Ok(Submitted::Duplicate);
        }
        workmate_faults::kill_point("api_command.stored");
        match self
            .submit_delivery(tenant, session, command, key.clone(), lease)
            .await
        {
            Ok(accepted) => {
                workmate_faults::kill_point("api_command.applied");
                Ok(Submitted::Applied(accepted))
            }
            Err(e) if can_wait(&e) => {
                intake
                    .retry_later(&key, millis(WAIT), &e.to_string())
                    .await?;
                self.tell_driver(&e, &key);
                Ok(Submitted::Queued)
            }
            Err(e) => {
                // The caller is told why; the command must not run later behind their back.
                if let Err(failed) = intake.fail(&key, &e.to_string()).await {
                    warn!(delivery = %key.delivery_id, error = %failed, "Cannot record a refused command; it is tried again once its lease lapses.");
                }
                Err(e)
            }
        }
    }

    /// Runs the stored API commands nobody runs: at start-up (with `just_started`, this
    /// replica's own rows at once, whatever their leases say), then those of replicas that died
    /// and those that waited. How many were run.
    pub async fn run_stored_commands(&self, just_started: bool, lease: Duration) -> usize {
        let intake = self.store().intake();
        if just_started {
            match intake
                .release_claims_of(
                    Queue::ApiCommands,
                    &self.inner.replica,
                    self.inner.started_ms,
                )
                .await
            {
                Ok(0) => {}
                Ok(released) => {
                    info!(
                        commands = released,
                        "Took back the API commands this replica held before it restarted."
                    );
                }
                Err(e) => {
                    warn!(error = %e, "Cannot take back this replica's earlier API commands.");
                }
            }
        }
        let due = match intake
            .claim_due(
                Queue::ApiCommands,
                SWEEP_BATCH,
                &self.inner.replica,
                millis(lease),
            )
            .await
        {
            Ok(due) => due,
            Err(e) => {
                warn!(error = %e, "Cannot look for stored API commands.");
                return 0;
            }
        };
        let count = due.len();
        for delivery in due {
            self.run_stored(delivery, lease).await;
        }
        count
    }

    /// Runs one claimed row and records how it went.
    async fn run_stored(&self, delivery: Delivery, lease: Duration) {
        let key = delivery.key();
        let intake = self.store().intake();
        let stored: Stored = match serde_json::from_value(delivery.payload.clone()) {
            Ok(stored) => stored,
            Err(e) => {
                let why = format!("the stored command cannot be read: {e}");
                if let Err(e) = intake.fail(&key, &why).await {
                    warn!(delivery = %key.delivery_id, error = %e, "Cannot fail an unreadable command.");
                }
                return;
            }
        };
        let ran = self
            .submit_delivery(
                &key.tenant_id,
                &stored.session_id,
                stored.command,
                key.clone(),
                lease,
            )
            .await;
        let recorded = match ran {
            Ok(_) => {
                debug!(delivery = %key.delivery_id, "Stored API command applied.");
                Ok(())
            }
            Err(e) if can_wait(&e) && delivery.attempts < MAX_ATTEMPTS => {
                let waiting = intake.retry_later(&key, millis(WAIT), &e.to_string()).await;
                self.tell_driver(&e, &key);
                waiting
            }
            Err(e) => {
                warn!(delivery = %key.delivery_id, session = %stored.session_id, error = %e, "Stored API command given up.");
                intake.fail(&key, &e.to_string()).await
            }
        };
        if let Err(e) = recorded {
            warn!(delivery = %key.delivery_id, error = %e, "Cannot record a stored command's outcome; it runs again once its lease lapses.");
        }
    }

    /// When `error` says another replica drives the session, tells it (through the
    /// coordinator) that `key` waits for it, so it takes the command up at once.
    fn tell_driver(&self, error: &Error, key: &IntakeKey) {
        if let Error::DrivenElsewhere(session) = error {
            self.inner.deps.coordinator.signal(Signal::DeliveryWaiting {
                tenant: key.tenant_id.clone(),
                session: session.clone(),
                platform: key.platform.clone(),
                delivery_id: key.delivery_id.clone(),
            });
        }
    }

    /// Runs at once a stored API command that waits for the replica driving `session`, if that
    /// is this one (a turn of it runs here): a message then steers that turn. Another
    /// replica's session, or a row someone took meanwhile, is left alone.
    pub async fn take_waiting_command(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        delivery_id: &str,
        lease: Duration,
    ) {
        if !self.is_running(tenant, session).await.unwrap_or(false) {
            return;
        }
        let key = IntakeKey {
            tenant_id: tenant.clone(),
            platform: API_COMMANDS.to_owned(),
            delivery_id: delivery_id.to_owned(),
        };
        let claimed = self
            .store()
            .intake()
            .claim_waiting(&key, &self.inner.replica, millis(lease))
            .await;
        match claimed {
            Ok(Some(delivery)) => self.run_stored(delivery, lease).await,
            Ok(None) => {}
            Err(e) => {
                warn!(delivery = %key.delivery_id, error = %e, "Cannot take up an API command that waits for this replica; it runs at its retry.");
            }
        }
    }

    /// Keeps `delivery`'s row leased while its message waits to be stored (it steers a running
    /// turn at the turn's next step), until the row is finished or this process stops; if the
    /// process stops first, the lease lapses and the message runs again.
    pub(crate) fn keep_leased(&self, delivery: IntakeKey, lease: Duration) {
        let hub = self.clone();
        self.inner.tasks.spawn(async move {
            let every = lease / 3;
            loop {
                tokio::select! {
                    () = hub.inner.shutdown.cancelled() => return,
                    () = tokio::time::sleep(every) => {}
                }
                match hub.store().intake().renew(&delivery, millis(lease)).await {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(e) => {
                        warn!(delivery = %delivery.delivery_id, error = %e, "Cannot renew a delivery's lease.");
                    }
                }
            }
        });
    }
}

/// Whether a command that failed with `error` may succeed later without anyone's help.
fn can_wait(error: &Error) -> bool {
    matches!(
        error,
        Error::DrivenElsewhere(_) | Error::Busy(_) | Error::ShuttingDown | Error::Store(_)
    )
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
