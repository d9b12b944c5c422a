//! Starting turns as tasks the hub owns.
//!
//! Invariant: the task that runs a turn releases the session's turn slot when the turn ends,
//! whatever happened; messages that arrived too late to steer it start the next turn at once, so
//! none is dropped.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tracing::{error, info};
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
        let turn_id = TurnId::new();
        let hub = self.clone();
        let (tenant, session, first) = (tenant.clone(), session.clone(), turn_id.clone());
        self.inner.tasks.spawn(async move {
            let (mut turn_id, mut cancel, mut start) = (first, cancel, start);
            loop {
                match hub
                    .run_turn(&tenant, &session, &runtime, turn_id.clone(), cancel, start)
                    .await
                {
                    Ok(()) => {}
                    Err(Error::ShuttingDown) => {
                        info!(tenant = %tenant, session = %session, "Turn left waiting on the inbox for the next start.");
                        runtime.release();
                        break;
                    }
                    Err(e) => {
                        error!(tenant = %tenant, session = %session, error = %e, "Turn failed.");
                    }
                }
                let late = runtime.release();
                let Some(next) = late_messages(late) else {
                    break;
                };
                let Some(token) = runtime.try_claim() else {
                    break;
                };
                (turn_id, cancel, start) = (TurnId::new(), token, next);
            }
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
        let record = self.load(tenant, session).await?;
        let history = self.store().messages().list(tenant, session).await?;
        let roots = self.roots(tenant, session)?;
        let emit = Emitter {
            store: self.store().clone(),
            tenant: tenant.clone(),
            session: session.clone(),
            turn: Some(turn_id),
            runtime: Arc::clone(runtime),
            clock: Arc::clone(&self.inner.deps.clock),
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
                turn(history).run(TurnStart::Resume(pending)).await?;
                history = self.store().messages().list(tenant, session).await?;
            }
            turn(history).run(start).await
        }
        .await;
        if let Err(e) = &result {
            // Tell watchers the turn is over even when the store failed mid-way.
            let _ = emit
                .state(EventKind::Error {
                    error: format!("the turn stopped on an internal error: {e}"),
                    error_type: "internal".into(),
                    raw: None,
                })
                .await;
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
        let Some(cancel) = runtime.try_claim() else {
            return Ok(false);
        };
        let history = match self.store().messages().list(tenant, session).await {
            Ok(history) => history,
            Err(e) => {
                runtime.release();
                return Err(e.into());
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

    /// The session's folders: its own workspace, created on first use.
    fn roots(&self, tenant: &TenantId, session: &SessionId) -> Result<Vec<Root>> {
        let dir = workmate_tools::session_workspace(
            &self.inner.deps.config.workspaces_dir,
            tenant,
            session,
        );
        let made = std::fs::create_dir_all(&dir).and_then(|()| dir.canonicalize());
        let path = made.map_err(|e| {
            Error::Rejected(format!(
                "cannot prepare the session workspace {}: {e}",
                Path::new(&dir).display()
            ))
        })?;
        Ok(vec![Root {
            path,
            writable: true,
        }])
    }
}

/// Messages that missed the turn become the next turn: the first as its message, the rest as
/// steering already queued behind it. Their deliveries are all marked done by that turn's first
/// write, which stores their text.
fn late_messages(mut late: Vec<crate::runtime::Steering>) -> Option<TurnStart> {
    if late.is_empty() {
        return None;
    }
    let deliveries = late.iter().filter_map(|s| s.delivery.clone()).collect();
    let first = late.remove(0);
    let text = std::iter::once(first.text)
        .chain(late.into_iter().map(|s| s.text))
        .collect::<Vec<_>>()
        .join("\n\n");
    Some(TurnStart::Message {
        author: first.author,
        content: workmate_protocol::UserContent::Text(text.clone()),
        text,
        deliveries,
    })
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
        let Some(TurnStart::Message {
            text, deliveries, ..
        }) = next
        else {
            panic!("a message turn");
        };
        assert_eq!(text, "one\n\ntwo\n\nthree");
        let ids: Vec<&str> = deliveries.iter().map(|k| k.delivery_id.as_str()).collect();
        assert_eq!(ids, vec!["Ev1", "Ev3"]);
    }
}
