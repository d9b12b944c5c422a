//! Taking up turns a crash cut short: once at start-up, then at a steady pace for sessions
//! whose lease ran out because the replica that drove them died, and at once for sessions a
//! draining replica released.
//!
//! Stored API commands a crash (or a replica that died) left unfinished run again the same way:
//! this replica's own at once at start-up, after the turns it takes up, then every second.
//!
//! Invariant: a session's cards are made live (its card pump subscribed) before its turn is
//! taken up, so the turn card a person watched reaches its final state.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use tracing::warn;
use workmate_chat::Chat;
use workmate_engine::{Error, SessionHub, Signal};

use crate::metrics::Metrics;

/// How often open turns of sessions another replica lost are looked for.
pub(crate) const SWEEP_EVERY: Duration = Duration::from_secs(10);
/// How long a replica's claim on a stored API command lasts without renewal.
pub(crate) const COMMAND_LEASE: Duration = Duration::from_secs(15);
/// How often stored API commands nobody runs are looked for.
const COMMANDS_EVERY: Duration = Duration::from_secs(1);

/// Takes up every open turn this process may take now (see [`SessionHub::open_turns`]); how
/// many it took up.
pub(crate) async fn recover_open_turns(
    hub: &SessionHub,
    chat: &Chat,
    metrics: &Metrics,
    just_started: bool,
) -> usize {
    let open = match hub.open_turns(just_started).await {
        Ok(open) => open,
        Err(e) => {
            warn!(error = %e, "Cannot look for turns a restart cut short.");
            return 0;
        }
    };
    let mut taken = 0;
    for turn in open {
        if let Err(e) = chat.show_session(&turn.tenant, &turn.session).await {
            warn!(session = %turn.session, error = %e, "Cannot show a recovered turn's cards.");
        }
        match hub.recover(&turn).await {
            Ok(Some(how)) => {
                metrics.turn_recovered(how);
                taken += 1;
            }
            Ok(None) => {}
            Err(Error::ShuttingDown) => break,
            Err(e) => {
                warn!(session = %turn.session, turn = %turn.turn, error = %e, "Cannot take up a turn a restart cut short.");
            }
        }
    }
    taken
}

/// Looks for open turns every [`SWEEP_EVERY`], and at once when another replica says it
/// released a session (it drained), until `stop`.
pub(crate) fn sweep(hub: SessionHub, chat: Chat, metrics: Arc<Metrics>, stop: CancellationToken) {
    let mut signals = hub.coordinator().signals();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(SWEEP_EVERY) => {}
                signal = signals.recv() => match signal {
                    Ok(Signal::SessionReleased { .. }) | Err(RecvError::Lagged(_)) => {}
                    Ok(_) => continue,
                    Err(RecvError::Closed) => {
                        signals = hub.coordinator().signals();
                        continue;
                    }
                },
            }
            recover_open_turns(&hub, &chat, &metrics, false).await;
        }
    });
}

/// Runs this replica's stored API commands a restart left, then every [`COMMANDS_EVERY`] those
/// nobody runs, and at once those another replica says wait for a session this one drives,
/// until `stop`.
pub(crate) async fn run_stored_commands(hub: SessionHub, stop: CancellationToken) {
    let ran = hub.run_stored_commands(true, COMMAND_LEASE).await;
    if ran > 0 {
        tracing::info!(commands = ran, "Ran API commands a restart left.");
    }
    let mut signals = hub.coordinator().signals();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(COMMANDS_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = every.tick() => {}
                signal = signals.recv() => {
                    match signal {
                        Ok(Signal::DeliveryWaiting { tenant, session, platform, delivery_id })
                            if platform == workmate_store::API_COMMANDS =>
                        {
                            hub.take_waiting_command(&tenant, &session, &delivery_id, COMMAND_LEASE)
                                .await;
                        }
                        Err(RecvError::Closed) => signals = hub.coordinator().signals(),
                        _ => {}
                    }
                    continue;
                }
            }
            hub.run_stored_commands(false, COMMAND_LEASE).await;
        }
    });
}
