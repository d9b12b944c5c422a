//! Starting turns as tasks the hub owns.
//!
//! Invariant: the task that runs a turn releases the session's turn slot when the turn ends,
//! whatever happened; messages that arrived too late to steer it start the next turn at once, so
//! none is dropped.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tracing::{Instrument, error, info};
use workmate_protocol::{EventKind, SessionId, TenantId, TurnId};
use workmate_tools::Root;

use super::SessionHub;
use crate::emitter::Emitter;
use crate::history::unanswered_trailing_calls;
use crate::runtime::SessionRuntime;
use crate::turn::{Turn, TurnStart};
use crate::{Error, Result};

impl SessionHub {
    /// Runs `start` as a new turn in a claimed session; returns the turn's id.
    pub(super) fn spawn_turn(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        runtime: Arc<SessionRuntime>,
        cancel: CancellationToken,
        start: TurnStart,
    ) -> TurnId {
        self.spawn_turn_as(tenant, session, runtime, cancel, TurnId::new(), start)
    }

    /// [`Self::spawn_turn`] under a given turn id (a cut turn that goes on).
    pub(super) fn spawn_turn_as(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        runtime: Arc<SessionRuntime>,
        cancel: CancellationToken,
        turn_id: TurnId,
        start: TurnStart,
    ) -> TurnId {
        let hub = self.clone();
        let lease = self.keep_lease(tenant, session, &runtime);
        let (tenant, session, first) = (tenant.clone(), session.clone(), turn_id.clone());
        // The turns join the trace of what started them (a request, a chat delivery).
        let parent = tracing::Span::current();
        self.inner.tasks.spawn(async move {
            // The lease is renewed for as long as this task drives the session.
            let _lease = lease;
            let (mut turn_id, mut cancel, mut start) = (first, cancel, start);
            loop {
                let span = tracing::info_span!(parent: &parent, "turn", turn_id = %turn_id);
                runtime.set_turn_trace(turn_id.clone(), &span);
                let ran = hub
                    .run_turn(&tenant, &session, &runtime, turn_id.clone(), cancel, start)
                    .instrument(span)
                    .await;
                match ran {
                    Ok(()) => {}
                    Err(Error::ShuttingDown) => {
                        info!(tenant = %tenant, session = %session, "Turn left open for another replica or the next start.");
                        runtime.release();
                        break;
                    }
                    Err(e) => {
                        error!(tenant = %tenant, session = %session, error = %e, "Turn failed.");
                    }
                }
                let late = runtime.release();
                let Some((next, others)) = late_messages(late) else {
                    break;
                };
                let Some(token) = runtime.try_claim() else {
                    break;
                };
                // Messages of other authors steer the new turn, each under its own name.
                for message in others {
                    runtime.steer(message);
                }
                (turn_id, cancel, start) = (TurnId::new(), token, next);
            }
            // What the turns wrote is stored before the runtime may go: a new one reads the
            // session's counters from the store.
            let _ = runtime.flushed().await;
            hub.evict_if_unused(&tenant, &session, &runtime);
        });
        turn_id
    }

    async fn run_turn(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        runtime: &Arc<SessionRuntime>,
        turn_id: TurnId,
        cancel: CancellationToken,
        start: TurnStart,
    ) -> Result<()> {
        let record = runtime.record();
        // The previous turn left its history here; otherwise it is read once its steps are
        // stored.
        let history = match runtime.take_history() {
            Some(history) => history,
            None => self.read_history(runtime, tenant, session).await?,
        };
        let roots = self.roots(tenant, session)?;
        let emit = Emitter {
            store: self.store().clone(),
            tenant: tenant.clone(),
            session: session.clone(),
            turn: Some(turn_id),
            runtime: Arc::clone(runtime),
            clock: Arc::clone(&self.inner.deps.clock),
            observer: Arc::clone(&self.inner.deps.observer),
        };
        // A history with calls left unanswered (a crash between answering and recording) is
        // repaired before anything else, so no model ever sees an orphaned call.
        let pending = unanswered_trailing_calls(&history);
        let repair =
            !pending.is_empty() && matches!(start, TurnStart::Message { .. } | TurnStart::Retry);
        let deps = &self.inner.deps;
        let turn = |history| {
            Turn::new(
                Arc::clone(deps),
                emit.clone(),
                record.clone(),
                history,
                cancel.clone(),
                roots.clone(),
            )
        };
        let result = async {
            let mut history = history;
            if repair {
                let mut repairing = turn(history);
                repairing.run(TurnStart::Resume(pending)).await?;
                history = repairing.history;
            }
            let mut turn = turn(history);
            turn.run(start).await?;
            Ok(turn.history)
        }
        .await;
        let result = match result {
            Ok(history) => {
                self.inner.hot.keep((tenant, session), runtime, history);
                Ok(())
            }
            Err(e) => Err(e),
        };
        // A turn left by a stopping process stays open: it is taken up where it goes on.
        if let Err(e) = &result
            && !matches!(e, Error::ShuttingDown)
        {
            // Tell watchers the turn is over even when the store failed mid-way: stored if the
            // session's log still takes steps, else published only.
            let error = EventKind::Error {
                error: format!("the turn stopped on an internal error: {e}"),
                error_type: "internal".into(),
                raw: None,
            };
            if emit.state(error.clone()).is_err() {
                runtime.publish(workmate_protocol::Event {
                    tenant_id: tenant.clone(),
                    session_id: session.clone(),
                    seq: runtime.last_seq() + 1,
                    turn_id: emit.turn.clone(),
                    at_ms: self.inner.deps.clock.now_ms(),
                    kind: error,
                });
            }
        }
        result
    }

    /// Starts a resume turn if the session is idle and has unanswered calls.
    pub(super) async fn resume_session(
        &self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<bool> {
        if self.inner.shutdown.is_cancelled() {
            return Err(Error::ShuttingDown);
        }
        let runtime = self.runtime(tenant, session).await?;
        // A turn a crash cut goes on under its own id (its calls resumed there).
        match self.take_up_cut_turn(tenant, session, &runtime).await {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            Err(Error::DrivenElsewhere(_)) => return Ok(false),
            Err(e) => return Err(e),
        }
        // Another process that holds the lease resumes it (or loses the lease when it died).
        match self.hold_lease(tenant, session, &runtime).await {
            Ok(_) => {}
            Err(Error::DrivenElsewhere(_)) => return Ok(false),
            Err(e) => return Err(e),
        }
        let Some(cancel) = runtime.try_claim() else {
            return Ok(false);
        };
        let history = match self.read_history(&runtime, tenant, session).await {
            Ok(history) => history,
            Err(e) => {
                runtime.release();
                return Err(e);
            }
        };
        let pending = unanswered_trailing_calls(&history);
        if pending.is_empty() {
            runtime.release();
            return Ok(false);
        }
        info!(tenant = %tenant, session = %session, calls = pending.len(), "Resuming session.");
        self.spawn_turn(tenant, session, runtime, cancel, TurnStart::Resume(pending));
        Ok(true)
    }

    /// The session's stored history, once its queued steps are stored.
    pub(super) async fn read_history(
        &self,
        runtime: &SessionRuntime,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<Vec<workmate_protocol::Message>> {
        runtime.flushed().await.map_err(Error::Log)?;
        Ok(self.store().messages().list(tenant, session).await?)
    }

    /// The session's folders: its own workspace, inside the workspaces folder (created and
    /// resolved once per process). The session's folder itself is created by the turn before
    /// its first tool call (a turn that only answers touches no disk); it is made of the
    /// resolved base and two escaped ids, so it is resolved too.
    fn roots(&self, tenant: &TenantId, session: &SessionId) -> Result<Vec<Root>> {
        let base = match self.inner.workspaces.get() {
            Some(base) => base.clone(),
            None => {
                let dir = &self.inner.deps.config.workspaces_dir;
                let made = std::fs::create_dir_all(dir).and_then(|()| dir.canonicalize());
                let base = made.map_err(|e| {
                    Error::Rejected(format!(
                        "cannot prepare the workspaces folder {}: {e}",
                        Path::new(dir).display()
                    ))
                })?;
                self.inner.workspaces.get_or_init(|| base).clone()
            }
        };
        Ok(vec![Root {
            path: workmate_tools::session_workspace(&base, tenant, session),
            writable: true,
        }])
    }
}

/// Messages that missed the turn become the next turn: the first author's leading messages as
/// its message (their deliveries marked done by that turn's first write, which stores their
/// text), the rest returned to steer it, so every message keeps its author.
fn late_messages(
    mut late: Vec<crate::runtime::Steering>,
) -> Option<(TurnStart, Vec<crate::runtime::Steering>)> {
    let first_author = late.first()?.author.user_id.clone();
    let split = late
        .iter()
        .position(|s| s.author.user_id != first_author)
        .unwrap_or(late.len());
    let others = late.split_off(split);
    let deliveries = late.iter().filter_map(|s| s.delivery.clone()).collect();
    let mut late = late.into_iter();
    let first = late.next()?;
    let text = std::iter::once(first.text)
        .chain(late.map(|s| s.text))
        .collect::<Vec<_>>()
        .join("\n\n");
    let others = others
        .into_iter()
        .map(|mut s| {
            s.deferred = false;
            s
        })
        .collect();
    Some((
        TurnStart::Message {
            author: first.author,
            content: workmate_protocol::UserContent::Text(text.clone()),
            text,
            deliveries,
        },
        others,
    ))
}

#[cfg(test)]
mod tests {
    use workmate_protocol::{Actor, TenantId};
    use workmate_store::IntakeKey;

    use super::*;
    use crate::runtime::Steering;

    fn late(text: &str, delivery: Option<&str>) -> Steering {
        Steering {
            author: Actor::new("u_alice"),
            text: text.into(),
            delivery: delivery.map(|id| IntakeKey {
                tenant_id: TenantId::from("t"),
                platform: "slack".into(),
                delivery_id: id.into(),
            }),
            deferred: false,
        }
    }

    #[test]
    fn late_messages_carry_every_delivery_into_the_next_turn() {
        assert!(late_messages(Vec::new()).is_none());
        let next = late_messages(vec![
            late("one", Some("Ev1")),
            late("two", None),
            late("three", Some("Ev3")),
        ]);
        let Some((
            TurnStart::Message {
                text, deliveries, ..
            },
            others,
        )) = next
        else {
            panic!("a message turn");
        };
        assert_eq!(text, "one\n\ntwo\n\nthree");
        let ids: Vec<&str> = deliveries.iter().map(|k| k.delivery_id.as_str()).collect();
        assert_eq!(ids, vec!["Ev1", "Ev3"]);
        assert!(others.is_empty());
    }

    #[test]
    fn late_messages_of_another_author_steer_the_next_turn_under_their_name() {
        let mut bob = late("from bob", Some("Ev2"));
        bob.author = Actor::new("u_bob");
        bob.deferred = true;
        let next = late_messages(vec![late("one", Some("Ev1")), bob, late("three", None)]);
        let Some((TurnStart::Message { text, author, .. }, others)) = next else {
            panic!("a message turn");
        };
        assert_eq!((text.as_str(), author.user_id.as_str()), ("one", "u_alice"));
        let rest: Vec<(&str, &str, bool)> = others
            .iter()
            .map(|s| (s.author.user_id.as_str(), s.text.as_str(), s.deferred))
            .collect();
        assert_eq!(
            rest,
            vec![("u_bob", "from bob", false), ("u_alice", "three", false)]
        );
    }
}
