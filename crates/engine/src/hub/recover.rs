//! Taking up turns a crash cut short: at start-up, and whenever this process may take over a
//! session whose lease ran out.
//!
//! Invariants: a cut turn is taken up only under the session's lease and only when no turn of
//! the session runs in this process; whether it is still open is read again after every step
//! this process queued for the session is stored, so a turn that has just ended here is never
//! mistaken for a cut one; it goes on under its own turn id (see `turn::recover`).

use std::time::Duration;

use tracing::info;
use workmate_protocol::{SessionId, TenantId};
use workmate_store::OpenTurn;

use super::SessionHub;
use crate::runtime::SessionRuntime;
use crate::turn::{TurnStart, plan_recovery};
use crate::{Error, Result};

/// Open turns looked at per pass.
const PASS: u32 = 1_000;

impl SessionHub {
    /// Open turns this process may take up now, oldest first: right after it started, those of
    /// sessions whose lease it held before (it is the same replica, started again) and those
    /// whose lease ran out; later, only those whose lease ran out (its own running turns keep
    /// their leases renewed).
    pub async fn open_turns(&self, just_started: bool) -> Result<Vec<OpenTurn>> {
        let now = self.inner.deps.clock.now_ms();
        let turns = self.store().open_turns();
        Ok(if just_started {
            turns.takeable(&self.inner.replica, now, PASS).await?
        } else {
            turns.lapsed(now, PASS).await?
        })
    }

    /// Takes up one cut turn and finishes it by what it was doing; how (`"resumed"`,
    /// `"continued"`, `"retried"`, `"completed"` or `"ended"`), or `None` when there is nothing
    /// to take up here: another process holds the session, a turn of it runs in this one, or
    /// its turn has ended meanwhile.
    pub async fn recover(&self, open: &OpenTurn) -> Result<Option<&'static str>> {
        if self.inner.shutdown.is_cancelled() {
            return Err(Error::ShuttingDown);
        }
        let (tenant, session) = (&open.tenant, &open.session);
        let runtime = self.runtime(tenant, session).await?;
        match self.hold_lease(tenant, session, &runtime).await {
            Ok(_) => {}
            Err(Error::DrivenElsewhere(_)) => return Ok(None),
            Err(e) => return Err(e),
        }
        let Some(cancel) = runtime.try_claim() else {
            return Ok(None);
        };
        runtime.take_maybe_cut();
        let found = async {
            runtime.flushed().await.map_err(Error::Log)?;
            let Some(open) = self.store().open_turns().get(tenant, session).await? else {
                return Ok(None);
            };
            let history = self.read_history(&runtime, tenant, session).await?;
            Ok::<_, Error>(Some((open, history)))
        }
        .await;
        let (open, history) = match found {
            Ok(Some(found)) => found,
            Ok(None) => {
                runtime.release();
                return Ok(None);
            }
            Err(e) => {
                runtime.release();
                return Err(e);
            }
        };
        let now = self.inner.deps.clock.now_ms();
        let cut_ago = Duration::from_millis(u64::try_from(now - open.updated_at_ms).unwrap_or(0));
        let recovery = plan_recovery(&history, cut_ago, self.inner.deps.config.recover_within);
        let how = recovery.name();
        info!(tenant = %tenant, session = %session, turn = %open.turn, how, cut_secs = cut_ago.as_secs(), "Taking up a turn a restart cut short.");
        runtime.keep_history(history);
        self.spawn_turn_as(
            tenant,
            session,
            runtime,
            cancel,
            open.turn,
            TurnStart::Recover(recovery),
        );
        Ok(Some(how))
    }

    /// Before this process drives a session it just loaded with a turn open (it took the
    /// session over from a process that died, or the sweep has not come by yet): takes that
    /// turn up first; whether it did. What the caller does next then joins that turn.
    pub(super) async fn take_up_cut_turn(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        runtime: &SessionRuntime,
    ) -> Result<bool> {
        if !runtime.take_maybe_cut() {
            return Ok(false);
        }
        let Some(open) = self.store().open_turns().get(tenant, session).await? else {
            return Ok(false);
        };
        Ok(self.recover(&open).await?.is_some())
    }
}
